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
