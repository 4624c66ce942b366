"""Every code block in README.md, CONTRIBUTING.md and docs/*.md runs, so the documentation stays true.

Every fenced ``python`` or ``sh`` block is directly preceded by a marker line:

* ``<!-- run -->`` or ``<!-- run requires=module[,module...] -->``: it runs (skipped, with
  the reason, where a required module is not installed);
* ``<!-- skip: REASON -->``: it cannot run in a test (hardware, minutes of work, a
  placeholder to fill in); the test is skipped with that reason, so it stays visible.

A block without a marker fails :func:`test_every_code_block_is_run_or_skipped_with_a_reason`.
A ``text`` block directly preceded by ``<!-- output -->`` is what the run block before it
prints: its lines must equal the printed lines, where a line ``...`` stands for any lines.
Each block runs alone, in a fresh namespace, in a temporary working directory holding an
empty ``reports/`` (as the repository does: examples write their outputs there) and the
repository's ``matrices/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_MARKER = re.compile(r"<!--\s*run(?:\s+requires=(?P<requires>[\w.,]+))?\s*-->")
_SKIP = re.compile(r"<!--\s*skip:\s*(?P<reason>.+?)\s*-->")
_OUTPUT = "<!-- output -->"
_CODE = ("```python", "```sh")


@dataclass(frozen=True)
class Example:
    """One runnable block: where it is, what it needs, and its code."""

    path: Path
    line: int
    requires: tuple[str, ...]
    code: str
    language: str = "python"
    #: Why it is not run (``<!-- skip: ... -->``); None for a block that runs.
    skip: str | None = None
    #: The lines it must print (``<!-- output -->``); None when the doc shows none.
    expected: tuple[str, ...] | None = None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def extract(text: str, path: Path) -> list[Example]:
    """The marked blocks of one markdown text, each with the output the doc shows for it.

    Raises
    ------
    ValueError
        When a marker is not directly followed by a python or sh fence (a typo would
        otherwise silently turn an example into an illustration), an output marker does not
        follow a run block, or a fence is never closed.
    """
    lines = text.splitlines()
    examples: list[Example] = []
    in_fence = False
    for index, line in enumerate(lines):
        if line.strip().startswith("```"):
            in_fence = not in_fence  # a marker shown inside a code block is not a marker
            continue
        if in_fence:
            continue
        fence = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if line.strip() == _OUTPUT:
            _attach_output(examples, lines, index, fence, path)
            continue
        match = _MARKER.fullmatch(line.strip())
        skipped = _SKIP.fullmatch(line.strip())
        if match is None and skipped is None:
            continue
        if fence not in _CODE:
            raise ValueError(
                f"{path}:{index + 1}: a run marker must be directly followed by ```python "
                f"or ```sh, not {fence!r}"
            )
        end = _closing(lines, index + 2, path)
        requires = tuple(filter(None, ((match and match["requires"]) or "").split(",")))
        code = "\n".join(lines[index + 2 : end])
        reason = skipped["reason"] if skipped else None
        examples.append(Example(path, index + 3, requires, code, fence.removeprefix("```"), reason))
    return examples


def _closing(lines: list[str], start: int, path: Path) -> int:
    try:
        return lines.index("```", start)
    except ValueError:
        raise ValueError(f"{path}:{start}: the block is never closed") from None


def _attach_output(
    examples: list[Example], lines: list[str], index: int, fence: str, path: Path
) -> None:
    """Give the last run block the ``text`` block after an output marker as its output."""
    if fence != "```text" or not examples or examples[-1].skip is not None:
        raise ValueError(
            f"{path}:{index + 1}: an output marker must follow a run block and be directly "
            "followed by ```text"
        )
    end = _closing(lines, index + 2, path)
    shown = tuple(line.rstrip() for line in lines[index + 2 : end])
    examples[-1] = dataclasses.replace(examples[-1], expected=shown)


def unmarked_blocks(text: str, path: Path) -> list[str]:
    """``path:line`` of every python or sh fence with no run or skip marker before it."""
    lines = text.splitlines()
    found = []
    in_fence = False
    for index, line in enumerate(lines):
        if not line.strip().startswith("```"):
            continue
        if not in_fence and line.strip() in _CODE:
            before = lines[index - 1].strip() if index else ""
            if _MARKER.fullmatch(before) is None and _SKIP.fullmatch(before) is None:
                found.append(f"{path.relative_to(ROOT)}:{index + 1}")
        in_fence = not in_fence
    return found


def matches(printed: list[str], expected: tuple[str, ...]) -> bool:
    """Whether ``printed`` lines equal ``expected``, a ``...`` line standing for any lines."""
    printed = [line.rstrip() for line in printed]
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in printed)) is not None


def _documents() -> list[Path]:
    top = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    return [p for p in [*top, *sorted((ROOT / "docs").glob("*.md"))] if p.exists()]


EXAMPLES = [example for path in _documents() for example in extract(path.read_text(), path)]


def run_example(example: Example) -> None:
    """Execute ``example``: Python compiled under its file and line, shell through bash -e;
    then compare what it printed with the output the doc shows, if any."""
    if example.skip is not None:
        pytest.skip(f"{example.id}: {example.skip}")
    for module in example.requires:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{example.id} needs {module}, which is not installed")
    if example.language == "sh":
        printed = _run_shell(example)
    else:
        code = compile("\n" * (example.line - 1) + example.code, str(example.path), "exec")
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(code, {"__name__": "__docs_example__"})
        printed = buffer.getvalue()
    if example.expected is not None:
        assert matches(printed.splitlines(), example.expected), (
            f"{example.id} printed\n{printed}\nbut the doc shows\n" + "\n".join(example.expected)
        )


def _run_shell(example: Example) -> str:
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
    return completed.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.id for example in EXAMPLES])
def test_documented_example_runs(
    example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    # The matrices a reader's checkout has (the README sweeps matrices/quick.toml).
    (tmp_path / "matrices").symlink_to(ROOT / "matrices")
    run_example(example)


def test_every_code_block_is_run_or_skipped_with_a_reason() -> None:
    unmarked = [where for path in _documents() for where in unmarked_blocks(path.read_text(), path)]
    assert unmarked == [], "mark each with <!-- run --> or <!-- skip: why -->"


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


def test_the_gpu_evidence_states_the_checks_gpu_toml_expands_to() -> None:
    import tomllib

    from diffcheck.sweep.matrix import parse_matrix
    from diffcheck.sweep.plan import plan_matrix

    matrix = tomllib.loads((ROOT / "matrices" / "gpu.toml").read_text())
    expands_to = len(plan_matrix(parse_matrix(matrix)).checks)
    text = (ROOT / "docs" / "gpu-evidence.md").read_text()
    assert f"expands to {expands_to} checks" in text


@pytest.mark.parametrize(
    ("printed", "expected", "equal"),
    [
        (["a", "b"], ("a", "b"), True),
        (["a", "b", "c"], ("a", "...", "c"), True),
        (["a", "c"], ("a", "...", "c"), True),
        (["a", "b", "c"], ("a", "..."), True),
        (["a", "b"], ("a", "c"), False),  # a drifted line
        (["a"], ("a", "b"), False),  # a line the doc shows but nothing prints
        (["a", "x 1.5"], ("a", "x 1.50"), False),
    ],
)
def test_printed_output_is_compared_line_by_line(
    printed: list[str], expected: tuple[str, ...], equal: bool
) -> None:
    assert matches(printed, expected) is equal


def test_a_drifted_output_fails_the_example(tmp_path: Path) -> None:
    text = "<!-- run -->\n```python\nprint('new figure 2')\n```\n\n<!-- output -->\n```text\nnew figure 1\n```\n"
    (example,) = extract(text, ROOT / "sample.md")
    assert example.expected == ("new figure 1",)
    with pytest.raises(AssertionError, match="but the doc shows"):
        run_example(example)


def test_an_unmarked_block_is_found_and_a_skipped_one_skips_with_its_reason() -> None:
    text = "```python\nx = 1\n```\n\n<!-- skip: needs a GPU -->\n```sh\nnvidia-smi\n```\n"
    assert unmarked_blocks(text, ROOT / "sample.md") == ["sample.md:1"]
    (skipped,) = extract(text, ROOT / "sample.md")
    with pytest.raises(pytest.skip.Exception, match="needs a GPU"):
        run_example(skipped)


def test_an_output_marker_without_a_run_block_before_it_is_an_error() -> None:
    with pytest.raises(ValueError, match="output marker"):
        extract("<!-- output -->\n```text\nx\n```\n", ROOT / "sample.md")


@pytest.mark.skipif(
    importlib.util.find_spec("mlx") is None or importlib.util.find_spec("wgpu") is None,
    reason="docs/matrix.md's small example sweeps mlx:cpu and wgpu, and one is not installed",
)
@pytest.mark.timeout(600)
def test_the_matrix_docs_small_example_sweeps_as_written(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "matrix.md").read_text()
    section = text[text.index("## A small example") :]
    start = section.index("```toml\n") + len("```toml\n")
    (tmp_path / "small.toml").write_text(section[start : section.index("\n```", start)])
    completed = subprocess.run(
        [sys.executable, "-m", "diffcheck", "sweep", "small.toml", "--out", "out", "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
