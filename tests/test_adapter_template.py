"""The guide's recipe for a new adapter: a copy of adapters/example renamed throughout, with
no __pycache__ carried over, that imports and registers under the new name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _recipe() -> str:
    """The guide's shell block that copies and renames the example, without its pip line."""
    text = (ROOT / "docs" / "guide.md").read_text()
    block = text.split("tests/test_adapter_template.py runs it on a copy -->\n```sh\n")[1]
    lines = block.split("\n```")[0].splitlines()
    assert lines[-1].startswith("pip install -e"), "the recipe ends by installing the copy"
    return "\n".join(lines[:-1])


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout's adapters/example, with the __pycache__ a test run leaves behind."""
    example = tmp_path / "adapters" / "example"
    for name in subprocess.run(
        ["git", "ls-files", "adapters/example"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    cache = example / "src" / "diffcheck_example" / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-311.pyc").write_bytes(b"stale")
    return tmp_path


def test_the_recipe_renames_everything_and_leaves_no_cache(checkout: Path) -> None:
    if shutil.which("perl") is None:
        pytest.skip("the recipe uses perl, which is not installed here")
    subprocess.run(["bash", "-e", "-c", _recipe()], cwd=checkout, check=True)
    new = checkout / "adapters" / "mybackend"
    files = [p for p in new.rglob("*") if p.is_file()]
    assert not list(new.rglob("__pycache__"))
    leftovers = [
        str(p.relative_to(new))
        for p in files
        if p.name != "README.md" and ("example" in p.read_text() or "Example" in p.read_text())
    ]
    assert leftovers == []
    project = tomllib.loads((new / "pyproject.toml").read_text())["project"]
    assert project["name"] == "diffcheck-mybackend"
    assert project["entry-points"]["diffcheck.adapters"] == {
        "mybackend": "diffcheck_mybackend:MyBackendAdapter"
    }
    assert (
        'conformance_suite("mybackend:cpu")' in (new / "tests" / "test_conformance.py").read_text()
    )
    code = (
        "import sys; sys.path.insert(0, 'src');"
        "from diffcheck_mybackend import MyBackendAdapter as A;"
        "assert A.name == 'mybackend' and A.devices == ('cpu',), (A.name, A.devices)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=new, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
