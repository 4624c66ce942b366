"""Every runnable example in README.md, CONTRIBUTING.md and docs/*.md runs, so the documentation stays true.

A runnable example is a fenced ``python`` block whose fence is directly preceded by a line
``<!-- run -->`` or ``<!-- run requires=module[,module...] -->`` (skipped, with the reason,
where a required module is not installed). Each block runs alone, in a fresh namespace, in a
temporary working directory.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(r"<!--\s*run(?:\s+requires=(?P<requires>[\w.,]+))?\s*-->")


@dataclass(frozen=True)
class Example:
    """One runnable block: where it is, what it needs, and its code."""

    path: Path
    line: int
    requires: tuple[str, ...]
    code: str
    language: str = "python"

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def extract(text: str, path: Path) -> list[Example]:
    """The runnable blocks of one markdown text.

    Raises
    ------
    ValueError
        When a marker is not directly followed by a python fence (a typo would otherwise
        silently turn an example into an illustration), or a fence is never closed.
    """
    lines = text.splitlines()
    examples = []
    in_fence = False
    for index, line in enumerate(lines):
        if line.strip().startswith("```"):
            in_fence = not in_fence  # a marker shown inside a code block is not a marker
            continue
        match = None if in_fence else _MARKER.fullmatch(line.strip())
        if match is None:
            continue
        fence = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if fence not in ("```python", "```sh"):
            raise ValueError(
                f"{path}:{index + 1}: a run marker must be directly followed by ```python "
                f"or ```sh, not {fence!r}"
            )
        try:
            end = lines.index("```", index + 2)
        except ValueError:
            raise ValueError(f"{path}:{index + 2}: the python block is never closed") from None
        requires = tuple(filter(None, (match["requires"] or "").split(",")))
        code = "\n".join(lines[index + 2 : end])
        examples.append(Example(path, index + 3, requires, code, fence.removeprefix("```")))
    return examples


def _documents() -> list[Path]:
    top = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    return [p for p in [*top, *sorted((ROOT / "docs").glob("*.md"))] if p.exists()]


EXAMPLES = [example for path in _documents() for example in extract(path.read_text(), path)]


def run_example(example: Example) -> None:
    """Execute ``example``: Python compiled under its file and line, shell through bash -e."""
    for module in example.requires:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{example.id} needs {module}, which is not installed")
    if example.language == "sh":
        _run_shell(example)
        return
    code = compile("\n" * (example.line - 1) + example.code, str(example.path), "exec")
    exec(code, {"__name__": "__docs_example__"})


def _run_shell(example: Example) -> None:
    """Run a shell block with ``bash -e``: every command in it must succeed, as written."""
    # The commands a reader types (diffcheck, python) are the ones of this interpreter.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    completed = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", example.code],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path},
    )
    assert completed.returncode == 0, (
        f"{example.id}: exit {completed.returncode}\n{completed.stdout}\n{completed.stderr}"
    )


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.id for example in EXAMPLES])
def test_documented_example_runs(
    example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run_example(example)


def test_docs_have_runnable_examples() -> None:
    # docs/api.md carries the Python API's examples; losing them all is a regression.
    assert any(example.path.name == "api.md" for example in EXAMPLES)
    # The README's research-script example is the first thing a newcomer copies.
    assert any(example.path.name == "README.md" for example in EXAMPLES)


_SAMPLE = """\
Intro.

<!-- run -->
```python
x = 1
assert x == 1
```

```python
raise AssertionError("an illustration is never run")
```

```text
<!-- run -->
```

<!-- run requires=no_such_module_for_diffcheck -->
```python
raise AssertionError("skipped: its module is missing")
```

<!-- run -->
```python
assert 1 + 1 == 3, "a wrong example"
```
"""


def test_only_marked_blocks_are_extracted_with_their_requirements() -> None:
    examples = extract(_SAMPLE, ROOT / "sample.md")
    assert [(e.line, e.requires) for e in examples] == [
        (5, ()),
        (19, ("no_such_module_for_diffcheck",)),
        (24, ()),
    ]
    assert examples[0].code == "x = 1\nassert x == 1"


def test_a_wrong_example_fails_at_its_own_line(tmp_path: Path) -> None:
    wrong = extract(_SAMPLE, tmp_path / "sample.md")[-1]
    with pytest.raises(AssertionError, match="a wrong example") as caught:
        run_example(wrong)
    assert caught.traceback[-1].lineno + 1 == wrong.line


def test_a_block_whose_module_is_missing_is_skipped() -> None:
    missing = extract(_SAMPLE, ROOT / "sample.md")[1]
    with pytest.raises(pytest.skip.Exception, match="needs no_such_module_for_diffcheck"):
        run_example(missing)


@pytest.mark.parametrize(
    "text",
    [
        "<!-- run -->\nsome prose\n",
        "<!-- run -->\n```bash\nls\n```\n",
        "<!-- run -->\n```python\nx\n",
    ],
    ids=["no-fence", "wrong-language", "unclosed"],
)
def test_a_misplaced_marker_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"sample\.md"):
        extract(text, ROOT / "sample.md")


def test_a_shell_block_runs_every_command_and_fails_on_the_first_error(tmp_path: Path) -> None:
    text = "<!-- run -->\n```sh\necho ok > made.txt\nfalse\necho never > never.txt\n```\n"
    (example,) = extract(text, ROOT / "sample.md")
    assert example.language == "sh"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        with pytest.raises(AssertionError, match="exit 1"):
            run_example(example)
    assert (tmp_path / "made.txt").exists()
    assert not (tmp_path / "never.txt").exists()
