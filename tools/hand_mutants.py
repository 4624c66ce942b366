"""Apply the hand-written mutants of tests/hand_mutants.toml one at a time; each must be killed.

mutmut's operators change one token; some false passes need a change no operator makes (a
one-element gap left between judged ranges, an input dtype no longer looked at, an allowance
made wider). Each entry names a file under src/, an exact text that occurs in it once, its
replacement, and the tests that must notice. A mutant runs in a copy of src/ (the tree is
never edited) with those tests; it is killed when they fail (pytest exit 1). The same tests
must pass on the unmutated copy first, so a failure that was already there kills nothing.
An entry whose text is no longer found, or whose run cannot collect (exit 2-5), fails the
session like a survivor: the mutant no longer tests what it says.

Usage: ``python tools/hand_mutants.py [NAME ...]`` (default: every entry).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tests" / "hand_mutants.toml"


def _pytest(src: Path, tests: list[str]) -> int:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(ROOT / "tests")]))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", *tests]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False).returncode


def _copy(into: Path) -> Path:
    src = into / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
    return src


def run(name: str, entry: dict[str, object]) -> str:
    """``killed``, ``SURVIVED`` or what broke, for one mutant."""
    path, old, new = str(entry["file"]), str(entry["old"]), str(entry["new"])
    tests = [str(t) for t in entry["tests"]]  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory(prefix="hand-mutant-") as scratch:
        src = _copy(Path(scratch))
        target = src.parent / path
        text = target.read_text()
        if text.count(old) != 1:
            return f"BROKEN: the text to mutate occurs {text.count(old)} times in {path}"
        if (code := _pytest(src, tests)) != 0:
            return f"BROKEN: the tests fail (exit {code}) before the mutant is applied"
        target.write_text(text.replace(old, new))
        code = _pytest(src, tests)
    if code == 1:
        return "killed"
    return "SURVIVED" if code == 0 else f"BROKEN: pytest exit {code} on the mutant"


def main(names: list[str]) -> int:
    entries: dict[str, dict[str, object]] = tomllib.loads(LIST.read_text())["mutant"]
    chosen = names or list(entries)
    unknown = [n for n in chosen if n not in entries]
    if unknown:
        print(f"no hand mutant named {', '.join(unknown)} in {LIST.name}", file=sys.stderr)
        return 2
    results = {name: run(name, entries[name]) for name in chosen}
    for name, result in results.items():
        print(f"  {result:<9} {name}: {entries[name]['why']}")
    killed = sum(r == "killed" for r in results.values())
    print(f"hand mutants: {len(results)} run, {killed} killed, {len(results) - killed} not killed")
    return 0 if killed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
