"""tools/audit_findings.py: each path of its verdict, on findings the search itself wrote.

A search of a planted fault (``value_fakes.FaultyNamespace``) writes a real findings
directory; the audit calls the planted namespace directly. Where a finding must be false,
or a blame wrong, undecided or open, the test edits findings.json the way a faulty search
would have written it, or hands the audit a correct namespace for the candidate.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import array_api_compat.numpy as np_xp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.search import search_api
from diffcheck.search.recipes import Example
from value_fakes import FaultyAdapter, FaultyNamespace

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location(
        "audit_findings", ROOT / "tools/audit_findings.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["audit_findings"] = module
    spec.loader.exec_module(module)
    return module


audit_findings = _tool()


def _search(tmp_path: Path, fault: str, function: str) -> Path:
    out = tmp_path / fault
    search_api(FaultyAdapter(fault), functions=[function], examples=20, seed=3, out=out,
               isolate=False, budget_s=None)  # fmt: skip
    return out


def _edit(directory: Path, function: str, failure: str, /, **fields: str) -> None:
    path = directory / "findings.json"
    document = json.loads(path.read_text())
    for entry in document["findings"]:
        if (entry["function"], entry["kind"]) == (function, failure):
            entry.update(fields)
    path.write_text(json.dumps(document))


def _row(directory: Path, function: str, kind: str, namespaces: dict[str, Any]) -> dict[str, Any]:
    rows = audit_findings.audit(directory, namespaces)
    found = [r for r in rows if (r["function"], r["kind"]) == (function, kind)]
    assert len(found) == 1, rows
    return dict(found[0])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("audit")
    return {
        "ulp3": _search(base, "ulp3", "exp"),
        "raises": _search(base, "raises", "atan2"),
        "missing": _search(base, "missing", "hypot"),
    }


def _copy(source: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(source, tmp_path / source.name))


def test_a_finding_still_differing_is_true_and_its_blame_checked(runs: dict[str, Path]) -> None:
    row = _row(runs["ulp3"], "exp", "value", {"faulty[ulp3]": FaultyNamespace("ulp3")})
    assert (row["true"], row["blame_check"]) == ("true", "right"), row
    assert row["note"] == "audit: wrong sides ['candidate']"


def test_a_finding_both_libraries_agree_on_is_false(runs: dict[str, Path]) -> None:
    rows = audit_findings.audit(runs["ulp3"], {"faulty[ulp3]": np_xp})  # a correct candidate
    value = [r for r in rows if r["kind"] == "value"]
    assert [r["true"] for r in value] == ["false"]
    assert value[0]["blame_check"] == "unchecked"  # nothing to blame where nothing differs
    counts = audit_findings.counts(rows)
    assert counts["false"] >= 1, counts
    assert counts["right_percent"] < 100, counts
    raised = _row(runs["raises"], "atan2", "raises", {"faulty[raises]": np_xp})
    assert raised["true"] == "false", raised


@pytest.mark.parametrize("blamed", ["reference", "both"])
def test_a_blame_naming_another_side_is_wrong(
    runs: dict[str, Path], tmp_path: Path, blamed: str
) -> None:
    directory = _copy(runs["ulp3"], tmp_path)
    _edit(directory, "exp", "value", blame=blamed)
    row = _row(directory, "exp", "value", {"faulty[ulp3]": FaultyNamespace("ulp3")})
    assert row["blame_check"] == "wrong", row
    assert audit_findings.counts([row])["right_percent"] == 0.0


@pytest.mark.parametrize("evidence", ["none", "standard-rule"])
def test_no_side_named_where_the_audit_finds_one_wrong_is_undecided(
    runs: dict[str, Path], tmp_path: Path, evidence: str
) -> None:
    directory = _copy(runs["ulp3"], tmp_path)
    _edit(directory, "exp", "value", blame="undecided", blame_evidence=evidence)
    row = _row(directory, "exp", "value", {"faulty[ulp3]": FaultyNamespace("ulp3")})
    assert row["blame_check"] == "undecided", row
    counts = audit_findings.counts([row])
    assert (counts["undecided"], counts["right_percent"]) == (1, 0.0), counts


def test_no_side_named_because_the_standard_leaves_it_open_is_open(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    namespaces = {"faulty[raises]": FaultyNamespace("raises")}
    assert _row(runs["raises"], "atan2", "raises", namespaces)["blame_check"] == "unchecked"
    directory = _copy(runs["raises"], tmp_path)
    _edit(directory, "atan2", "raises", blame="undecided", blame_evidence="standard-rule",
          blame_why="the standard gives no result here")  # fmt: skip
    row = _row(directory, "atan2", "raises", namespaces)
    assert (row["true"], row["blame_check"]) == ("true", "open"), row
    assert row["note"] == "the standard gives no result here"
    assert audit_findings.counts([row])["right_percent"] == 100.0
    _edit(directory, "atan2", "raises", blame_evidence="none")  # silence with no rule said
    assert _row(directory, "atan2", "raises", namespaces)["blame_check"] == "undecided"


def test_a_missing_function_is_blamed_on_the_side_lacking_it(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    namespaces = {"faulty[missing]": FaultyNamespace("missing")}
    row = _row(runs["missing"], "hypot", "missing", namespaces)
    assert (row["true"], row["blame_check"]) == ("true", "right"), row
    directory = _copy(runs["missing"], tmp_path)
    _edit(directory, "hypot", "missing", blame="reference")
    assert _row(directory, "hypot", "missing", namespaces)["blame_check"] == "wrong"


def test_crash_and_hang_findings_are_kept_as_recorded(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    directory = _copy(runs["raises"], tmp_path)
    _edit(directory, "atan2", "raises", kind="crash")
    row = _row(directory, "atan2", "crash", {"faulty[raises]": np_xp})  # not called again
    assert (row["true"], row["blame_check"]) == ("crash", "unchecked"), row


def test_the_command_refuses_a_directory_without_findings_and_an_existing_output(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert audit_findings.main([str(tmp_path)]) == 1
    taken = tmp_path / "taken.json"
    taken.write_text("{}")
    assert audit_findings.main([str(runs["missing"]), "--json", str(taken)]) == 1
    assert taken.read_text() == "{}"  # never overwritten
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2, lines
    assert all(line.startswith("audit_findings: ") for line in lines), lines


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["float32", "float64"]), st.floats(min_value=0, exclude_min=True))
def test_the_audits_rounding_is_ieee_sqrt(dtype: str, x: float) -> None:
    import mpmath

    with np.errstate(over="ignore", under="ignore"):
        value = np.asarray(x).astype(dtype)
    if not np.isfinite(value) or value == 0:
        return
    with mpmath.workprec(1024):
        truth = mpmath.sqrt(mpmath.mpf(float(value)))
    assert audit_findings._nearest(truth, dtype) == float(np.sqrt(value))


def _wrong(function: str, args: list[Any], ref: Any, cand: Any, kind: str, bound: str) -> Any:
    example = Example(args=tuple(np.asarray(a) for a in args))
    return audit_findings._wrong_side(
        function, example, np.asarray(ref), np.asarray(cand), 0.5, kind, bound
    )


def test_the_audits_own_truths_decide_the_classes_the_search_once_left_open() -> None:
    rounded = "IEEE 754 basic operation, correctly rounded in float64: 0 ULP"
    below_one = 1 - 2.0**-53
    assert _wrong("sqrt", [[below_one]], [below_one], [1.0], "value", rounded) == {"candidate"}
    x, y = np.asarray([complex(2.2e-308, 2.2e-308)]), np.asarray([complex(2.2e-308, math.inf)])
    right, bad = [complex(0.0, -math.inf)], [complex(math.nan, -math.inf)]
    assert _wrong("subtract", [x, y], right, bad, "nan", rounded) == {"candidate"}
    z = [complex(2.2e-308, 0.0)]
    assert _wrong("negative", [z], [complex(-2.2e-308, -0.0)], [complex(-2.2e-308, 0.0)],
                  "signed-zero", "exact") == {"candidate"}  # fmt: skip
    big, tiny = np.asarray([6.58e27], np.float32), np.asarray([-2.57e-31], np.float32)
    required = np.asarray([float(big[0]) % float(tiny[0])], np.float32)
    assert _wrong("remainder", [big, tiny], required, np.asarray([np.nan], np.float32), "nan",
                  rounded) == {"candidate"}  # fmt: skip


def test_a_complex_bound_relative_to_the_magnitude_lets_a_tiny_component_be_zero() -> None:
    x1 = [complex(-0.0, -1.1364357504719176e-308)]
    x2 = [complex(1.5e-323, 2.3750990419082604e-252)]
    ref, cand = [complex(-4.7847930988126474e-57, 0.0)], [complex(-4.7847930988126474e-57, -0.0)]
    relative = "within 4 ULP of float64, componentwise or relative to |z|"
    assert _wrong("divide", [x1, x2], ref, cand, "signed-zero", relative) == set()
    componentwise = "within 4 ULP of float64, componentwise"
    assert _wrong("divide", [x1, x2], ref, cand, "signed-zero", componentwise) == {
        "reference",
        "candidate",
    }


def test_the_audits_rounding_of_subnormals_is_to_the_nearest_even_step() -> None:
    import mpmath

    with mpmath.workprec(2048):
        tie64 = mpmath.ldexp(3, -1075)  # 1.5 steps of 2**-1074: ties to 2 steps
        tie32 = mpmath.ldexp(5, -150)  # 2.5 steps of 2**-149: ties to 2 steps
        above = mpmath.ldexp(3, -1075) + mpmath.ldexp(1, -1200)
    assert audit_findings._nearest(tie64, "float64") == 2 * 2.0**-1074
    assert audit_findings._nearest(tie32, "float32") == 2 * 2.0**-149
    assert audit_findings._nearest(above, "float64") == 2 * 2.0**-1074
    assert audit_findings._nearest(-tie64, "float64") == -2 * 2.0**-1074


def test_a_zero_of_either_sign_stands_for_a_tiny_truth_unless_correctly_rounded() -> None:
    """exp(-800) is 3.7e-348, below float64's least subnormal: an approximation within an
    ULP may be a zero of either sign (the search leaves it open); a correctly rounded
    product keeps the truth's sign."""
    approximate = "elementwise, each side within 1 ULP of the true value: within 2 ULP of float64"
    assert _wrong("exp", [[-800.0]], [0.0], [-0.0], "signed-zero", approximate) == set()
    assert _wrong("exp", [[-800.0]], [-0.0], [0.0], "signed-zero", approximate) == set()
    rounded = "IEEE 754 basic operation, correctly rounded in float64: 0 ULP"
    x, y = [-5e-324], [1e-19]
    assert _wrong("multiply", [x, y], [-0.0], [0.0], "signed-zero", rounded) == {"candidate"}
