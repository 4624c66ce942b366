"""The sweep's JSON Schemas (matrix v1, summary v1), generated and checked in.

``python -m diffcheck.sweep.schema [DIR]`` writes ``matrix-v1.json`` and ``summary-v1.json``
into DIR (default ``reports/schema``); a test regenerates them and fails on drift.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import write_replacing
from .matrix import MATRIX_SCHEMA_VERSION, MatrixFile, ops_table_model
from .summary import SUMMARY_SCHEMA_VERSION, SweepSummary

__all__ = ["SCHEMA_FILES", "matrix_schema", "schema_texts", "summary_schema", "write_schemas"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: File name of each schema under reports/schema/.
SCHEMA_FILES = {
    "matrix": f"matrix-v{MATRIX_SCHEMA_VERSION}.json",
    "summary": f"summary-v{SUMMARY_SCHEMA_VERSION}.json",
}


def matrix_schema() -> dict[str, Any]:
    """The JSON Schema of a matrix file (keys as written in TOML, e.g. ``rms-norm``)."""
    # The checked-in schema describes diffcheck's own ops, whatever plugins are installed
    # where it is generated; a plugin op's table is validated by diffcheck at load time.
    from pydantic import Field, create_model

    from ..ops import OPS
    from ..ops._registry import CORE_PACKAGE

    core = tuple(name for name in OPS if OPS.source(name).package == CORE_PACKAGE)
    field = MatrixFile.model_fields["ops"]
    model = create_model(
        "MatrixFile",
        __base__=MatrixFile,
        __doc__=MatrixFile.__doc__,
        ops=(ops_table_model(core), Field(description=field.description)),
    )
    schema = model.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = _DRAFT
    schema["$id"] = f"https://diffcheck.dev/schema/matrix/v{MATRIX_SCHEMA_VERSION}.json"
    return schema


def summary_schema() -> dict[str, Any]:
    """The JSON Schema of ``summary.json`` (serialization mode)."""
    schema = SweepSummary.model_json_schema(mode="serialization")
    schema["$schema"] = _DRAFT
    schema["$id"] = f"https://diffcheck.dev/schema/summary/v{SUMMARY_SCHEMA_VERSION}.json"
    return schema


def schema_texts() -> dict[str, str]:
    """File name -> text, as the checked-in files hold them."""
    return {
        SCHEMA_FILES["matrix"]: json.dumps(matrix_schema(), indent=2, sort_keys=True) + "\n",
        SCHEMA_FILES["summary"]: json.dumps(summary_schema(), indent=2, sort_keys=True) + "\n",
    }


def write_schemas(directory: Path) -> list[Path]:
    """Write both schemas into ``directory`` (replacing, never following, a symlink)."""
    written = []
    for name, text in schema_texts().items():
        path = Path(directory) / name
        write_replacing(path, text.encode())
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate the schema files (``python -m diffcheck.sweep.schema [DIR]``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for path in write_schemas(Path(args[0] if args else "reports/schema")):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
