"""The checked-in sweep schemas match the models, and the default matrix matches its schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from diffcheck.sweep.schema import SCHEMA_FILES, schema_texts, write_schemas

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES.values()))
def test_checked_in_schema_has_not_drifted(name: str) -> None:
    checked_in = ROOT / "reports" / "schema" / name
    assert checked_in.read_text() == schema_texts()[name], (
        f"{checked_in} is stale; regenerate it with: python -m diffcheck.sweep.schema reports/schema"
    )


def test_write_schemas_writes_both(tmp_path: Path) -> None:
    written = write_schemas(tmp_path)
    assert sorted(p.name for p in written) == sorted(SCHEMA_FILES.values())
    assert all(json.loads(p.read_text())["$schema"].endswith("2020-12/schema") for p in written)


def test_the_default_matrix_validates_against_the_matrix_schema() -> None:
    import jsonschema

    schema = json.loads((ROOT / "reports" / "schema" / SCHEMA_FILES["matrix"]).read_text())
    matrix = tomllib.loads((ROOT / "matrices" / "default.toml").read_text())
    jsonschema.validate(matrix, schema)
    matrix["ops"]["gemm"]["shapes"][0]["mm"] = 1
    with pytest.raises(jsonschema.ValidationError, match="'mm' was unexpected"):
        jsonschema.validate(matrix, schema)
