"""Editing report JSON the way a forger would: outputs decoded and re-encoded consistently.

A forged v2 output keeps its sizes and SHA-256 consistent with the edited bytes, so a test
shows that replay catches the edit from the values, not from a stale digest.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt

from diffcheck.report import ReportDocument
from diffcheck.report.arrays import decode_output, encode_output
from diffcheck.report.models import OutputArray, OutputBits
from diffcheck.report.read import parse_report


def document(data: dict[str, Any]) -> ReportDocument:
    """``data`` validated as the report of its schema version."""
    return parse_report(json.dumps(data).encode(), "forged")


def output(data: dict[str, Any], which: str) -> npt.NDArray[np.float32]:
    """A copy of the stored ``reference`` or ``actual`` output of report JSON ``data``."""
    record = data["result"][which]
    model = OutputBits if "f32_bits" in record else OutputArray
    return decode_output(model.model_validate(record), which).copy()


def set_output(data: dict[str, Any], which: str, values: npt.ArrayLike) -> None:
    """Store ``values`` as the ``reference`` or ``actual`` output, consistently encoded."""
    record = data["result"][which]
    if "f32_bits" in record:
        array = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        record["f32_bits"] = array.view(np.uint32).tolist()
    else:
        data["result"][which] = encode_output(values).model_dump()
