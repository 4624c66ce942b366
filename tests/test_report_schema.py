"""The checked-in JSON Schema says something: every field, its type, bounds and classification.

A report consumer in another language validates against reports/schema/v<N>.json; a genuine
report of every op validates, and a wrong type, a missing field or an extra field does not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from diffcheck.config import make_check
from diffcheck.ops import OPS
from diffcheck.report.models import MODELS, SCHEMA_VERSION
from diffcheck.runner import run_check
from forgery import as_v1, as_v2, as_v3

SCHEMA_DIR = Path(__file__).parents[1] / "reports" / "schema"
CLASSES = ("Derived: ", "Bound: ", "Claimed: ")


def _schema(version: int) -> dict[str, Any]:
    return dict(json.loads((SCHEMA_DIR / f"v{version}.json").read_text()))


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One genuine v3 report of every op (array_api_strict against NumPy), and a not_run."""
    directory = tmp_path_factory.mktemp("schema")
    reports = {}
    for name in [*OPS, "not-run"]:
        check = make_check(
            "cupy" if name == "not-run" else "array_api_strict",
            "gemm" if name == "not-run" else name,
        )
        path = directory / f"{name}.json"
        run_check(check, path)
        reports[name] = json.loads(path.read_text())
    return reports


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_the_schema_names_every_field_with_its_type_and_classification(version: int) -> None:
    schema = _schema(version)
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(MODELS[version].model_fields)
    definitions = [schema, *schema["$defs"].values()]
    described = 0
    for definition in definitions:
        for name, field in definition.get("properties", {}).items():
            assert field.get("description", "").startswith(CLASSES), (definition["title"], name)
            typed = field.keys() & {"type", "anyOf", "oneOf", "$ref", "const", "enum"}
            assert typed, (definition["title"], name)
            described += 1
    assert described > 100


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_genuine_report_of_every_op_validates(
    genuine: dict[str, dict[str, Any]], version: int
) -> None:
    schema = _schema(version)
    for name, data in genuine.items():
        document = {4: data, 3: as_v3(data), 2: as_v2(data), 1: as_v1(data)}[version]
        jsonschema.validate(document, schema)
        assert name == "not-run" or data["result"]["status"] == "passed", name


def _wrong_type(data: dict[str, Any]) -> None:
    data["config"]["seed"] = True


def _wrong_float(data: dict[str, Any]) -> None:
    data["result"]["metrics"]["nmse"] = "0.5"


def _missing(data: dict[str, Any]) -> None:
    del data["environment"]["platform"]


def _missing_top(data: dict[str, Any]) -> None:
    del data["coverage"]


def _extra(data: dict[str, Any]) -> None:
    data["result"]["verified_by"] = "a reviewer"


def _extra_config(data: dict[str, Any]) -> None:
    data["config"]["trusted"] = True


def _bad_digest(data: dict[str, Any]) -> None:
    data["result"]["actual"]["sha256"] = "XYZ"


def _missing_computed_by(data: dict[str, Any]) -> None:
    del data["computed_by"]


def _bad_probe_bits(data: dict[str, Any]) -> None:
    data["computed_by"]["probe"]["candidate_sum_bits"] = "0x1234"


def _extra_fingerprint(data: dict[str, Any]) -> None:
    data["computed_by"]["candidate"]["independent"] = True


@pytest.mark.parametrize(
    "edit",
    [
        _wrong_type,
        _wrong_float,
        _missing,
        _missing_top,
        _extra,
        _extra_config,
        _bad_digest,
        _missing_computed_by,
        _bad_probe_bits,
        _extra_fingerprint,
    ],
)
def test_a_wrong_type_missing_or_extra_field_does_not_validate(
    genuine: dict[str, dict[str, Any]], edit: Any
) -> None:
    data = json.loads(json.dumps(genuine["gemm"]))
    jsonschema.validate(data, _schema(SCHEMA_VERSION))
    edit(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema(SCHEMA_VERSION))


def test_non_finite_metrics_validate_as_their_json_strings(
    genuine: dict[str, dict[str, Any]],
) -> None:
    data = json.loads(json.dumps(genuine["gemm"]))
    data["result"]["metrics"]["nmse"] = "Infinity"
    jsonschema.validate(data, _schema(SCHEMA_VERSION))
