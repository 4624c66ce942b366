"""Issue 18 item 19: no lax coercion at any boundary, and the field is named in the error.

``"2112"`` and ``2112.0`` as element counts, ``m = "4"`` and ``4.0`` in matrices, ``m=True``
in the API were read as numbers. Op params, report configs and matrix tables are strict
pydantic models now: for every op and every integer parameter, a string, a float or a
boolean holding a valid value is refused with the parameter's name, while the int passes.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.config import make_check
from diffcheck.errors import ConfigError, ReportError
from diffcheck.ops import OPS
from diffcheck.report.read import parse_report
from diffcheck.sweep.matrix import parse_matrix

_INT_FIELDS = sorted(
    (op.name, name, info.default)
    for op in OPS.values()
    for name, info in op.params_model.model_fields.items()
    if info.annotation is int and isinstance(info.default, int)
)


def _disguised(value: int) -> st.SearchStrategy[object]:
    return st.sampled_from([str(value), float(value), f"{value}.0", bool(value % 2), [value]])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), case=st.sampled_from(_INT_FIELDS))
def test_a_disguised_integer_is_refused_by_the_api_naming_the_field(
    data: st.DataObject, case: tuple[str, str, int]
) -> None:
    op, name, default = case
    value = data.draw(_disguised(default))
    disguised: dict[str, Any] = {name: value}
    with pytest.raises(ConfigError, match=f"--{name}"):
        make_check("array_api_strict", op, **disguised)
    plain: dict[str, Any] = {name: default}
    make_check("array_api_strict", op, **plain)  # the int itself passes


_MATRIX: dict[str, Any] = {
    "schema_version": 1,
    "pairs": [{"reference": "numpy", "candidate": "array_api_strict"}],
    "ops": {},
}


@settings(max_examples=200, deadline=None)
@given(data=st.data(), case=st.sampled_from(_INT_FIELDS))
def test_a_disguised_integer_in_a_matrix_is_refused_naming_its_key(
    data: st.DataObject, case: tuple[str, str, int]
) -> None:
    op, name, default = case
    value = data.draw(_disguised(default))
    matrix = copy.deepcopy(_MATRIX)
    matrix["ops"][op] = {"shapes": [{name: value}]}
    with pytest.raises(ConfigError, match=f"ops.{op}.shapes.0"):
        parse_matrix(matrix)
    matrix["ops"][op] = {"shapes": [{name: default}]}
    parse_matrix(matrix)


@pytest.mark.parametrize("value", ["2", 2.0, True, None, "2.0"])
@pytest.mark.parametrize("field", ["m", "n", "k", "seed"])
def test_a_disguised_integer_in_a_report_config_is_refused_naming_it(
    report_json: dict[str, Any], field: str, value: object
) -> None:
    report_json["config"][field] = value
    with pytest.raises(ReportError, match=rf"config\.gemm\.{field}"):
        parse_report(json.dumps(report_json).encode(), "typed.json")


def test_a_float_parameter_still_takes_an_integer() -> None:
    check = make_check("array_api_strict", "rms-norm", eps=1)
    assert check.params.eps == 1.0  # type: ignore[attr-defined]


def _typed_leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every int, bool and str leaf of a JSON document, with its path."""
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _typed_leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _typed_leaves(item, (*path, i))]
    return [(path, value)] if isinstance(value, int | str) else []


def _wrong_types(value: object) -> list[object]:
    if isinstance(value, bool):
        return [int(value), str(value).lower()]
    if isinstance(value, int):
        return [str(value), float(value), value == 1, [value]]
    return [len(str(value)), True, [value]]


def _bundle() -> dict[str, Any]:
    import numpy as np

    from bundle_docs import document

    doc = document(
        "clip",
        [np.asarray([0.5, 1.0, 2.0], dtype=np.float32)],
        {"min": 0.75, "max": 1},
        reference=np.asarray([0.75, 1.0, 1.0], dtype=np.float32),
        candidate=np.asarray([0.75, 1.0, 1.0], dtype=np.float32),
    )
    doc["call"]["sequence"] = False
    doc["outputs"]["reference"]["several"] = False
    return doc


_BUNDLE_CASES = [
    (path, wrong) for path, value in _typed_leaves(_bundle()) for wrong in _wrong_types(value)
]


@pytest.mark.parametrize(("path", "wrong"), _BUNDLE_CASES, ids=lambda case: repr(case)[:60])
def test_a_wrongly_typed_bundle_field_is_refused(path: tuple[Any, ...], wrong: object) -> None:
    from diffcheck.errors import BundleError
    from diffcheck.search.bundle import bundle_from

    bundle = _bundle()
    bundle_from(copy.deepcopy(bundle), where="b.json")  # the genuine bundle reads
    parent = bundle
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = wrong
    with pytest.raises(BundleError, match=r"b\.json"):
        bundle_from(bundle, where="b.json")


def test_bundle_version_true_is_refused() -> None:
    from diffcheck.errors import BundleError
    from diffcheck.search.bundle import bundle_from

    bundle = _bundle()
    bundle["bundle_version"] = True
    with pytest.raises(BundleError, match="bundle_version True"):
        bundle_from(bundle, where="b.json")


@pytest.mark.parametrize("value", [True, 2.0, "2"])
def test_a_disguised_result_schema_version_is_refused(
    report_json: dict[str, Any], value: object
) -> None:
    report_json["result"]["schema_version"] = value
    with pytest.raises(ReportError, match=r"result\.schema_version"):
        parse_report(json.dumps(report_json).encode(), "typed.json")
