"""tools/mutants_verdict.py judges a leg by its own modules, and the list of equivalent
mutants names only modules the committed ``nox -s mutants`` mutates.

A leg narrows ``only_mutate``: the other modules' entries in tests/mutants_equivalent.toml are
outside it, not stale. That is safe only while every entry's module is in the committed
``only_mutate``, so that a full run judges each entry; the second test keeps it so.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _verdict() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutants_verdict", ROOT / "tools" / "mutants_verdict.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_entry_is_stale_only_for_a_module_this_run_mutated() -> None:
    verdict = _verdict()
    status_of = {
        "diffcheck.sweep.known.x_a__mutmut_1": "survived",
        "diffcheck.sweep.known.x_a__mutmut_2": "killed",
        "diffcheck.sweep.known.x_a__mutmut_3": "not checked",
        "diffcheck.sweep.known.xǁKǁm__mutmut_1": "no tests",
    }
    explained = dict.fromkeys(
        [
            "diffcheck.sweep.known.x_a__mutmut_1",  # survived: confirmed
            "diffcheck.sweep.known.x_a__mutmut_2",  # killed now: stale
            "diffcheck.sweep.known.x_a__mutmut_3",  # not checked (a glob leg): neither
            "diffcheck.sweep.known.xǁKǁm__mutmut_1",  # reached by no test: stale
            "diffcheck.sweep.known.x_gone__mutmut_9",  # no such mutant in its module: stale
            "diffcheck.differ.judge.x_f__mutmut_4",  # a module this leg did not mutate
        ],
        "a reason",
    )
    stale, outside = verdict.stale_entries(status_of, explained)
    assert stale == [
        "diffcheck.sweep.known.x_a__mutmut_2",
        "diffcheck.sweep.known.x_gone__mutmut_9",
        "diffcheck.sweep.known.xǁKǁm__mutmut_1",
    ]
    assert outside == ["diffcheck.differ.judge.x_f__mutmut_4"]
    assert verdict.module_of("diffcheck.sweep.known.xǁKǁm__mutmut_1") == "sweep.known"


def test_every_equivalent_entry_names_a_module_the_committed_session_mutates() -> None:
    verdict = _verdict()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    mutated = {
        path.removeprefix("src/diffcheck/").removesuffix(".py").replace("/", ".")
        for path in config["only_mutate"]
    }
    entries = tomllib.loads((ROOT / "tests" / "mutants_equivalent.toml").read_text())["equivalent"]
    assert entries
    outside = sorted(name for name in entries if verdict.module_of(name) not in mutated)
    assert not outside, f"entries of modules no full run mutates: {outside}"
