"""Issue 18 items 3, 4 and 5: a report's claims are bounded by its bytes before anything is built.

- item 3: a 3 KB attention report whose config claims 2e9 heads (one stored element) is
  refused before replay builds a segment per head;
- item 4: an ``environment`` (or any object) with very many keys, or a huge text, is refused
  while the JSON is decoded, in bounded memory;
- item 5: a MemoryError while reading or anywhere in a command is one line naming the file
  or the command and the limit.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from diffcheck.errors import ReportError
from diffcheck.report.models import MODELS
from diffcheck.report.read import (
    MAX_KEYS,
    MAX_TEXT_CHARS,
    MAX_UNSTORED_ELEMENTS,
    load_json,
    parse_report,
)

from ._harness import assert_refused, cli


def _attention(report_texts: dict[str, bytes], heads: int) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(report_texts["attention"])
    document["config"]["heads"] = heads
    document["output_shape"] = [heads, 1]
    document["expected_output_elements"] = heads
    return document


@pytest.mark.parametrize("heads", [MAX_UNSTORED_ELEMENTS + 2, 2 * 10**9, 2**30])
def test_a_config_claiming_far_more_elements_than_stored_is_refused_before_replay(
    tmp_path: Path, report_texts: dict[str, bytes], heads: int
) -> None:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(_attention(report_texts, heads)))
    assert path.stat().st_size < 4096
    started = time.perf_counter()
    code, out, err = cli(["replay", str(path)])
    assert time.perf_counter() - started < 10
    assert_refused(code, err)
    assert f"deriving {heads} output elements" in err
    assert "at most 1 " in err
    assert out == ""


@pytest.mark.parametrize("heads", [2, 1000, MAX_UNSTORED_ELEMENTS])
def test_a_claim_within_the_bound_is_left_to_replay_which_disagrees(
    tmp_path: Path, report_texts: dict[str, bytes], heads: int
) -> None:
    # A failed check can store a short output; replay judges it and names the edit.
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(_attention(report_texts, heads)))
    code, _, err = cli(["replay", str(path)])
    assert code == 1
    assert "DISAGREES" in err
    assert_refused(code, err)


def test_the_same_report_with_its_true_size_still_replays(
    tmp_path: Path, report_texts: dict[str, bytes]
) -> None:
    path = tmp_path / "true.json"
    path.write_bytes(report_texts["attention"])
    code, out, err = cli(["replay", str(path)])
    assert (code, err) == (0, "")
    assert "agrees: passed" in out


def test_a_smaller_claim_is_left_to_replay_which_disagrees(
    tmp_path: Path, report_texts: dict[str, bytes]
) -> None:
    # Deriving fewer elements than stored cannot make replay build more than the file holds.
    document: dict[str, Any] = json.loads(report_texts["gemm"])
    document["config"]["m"] = 1
    path = tmp_path / "smaller.json"
    path.write_text(json.dumps(document))
    code, _, err = cli(["replay", str(path)])
    assert code == 1
    assert "DISAGREES" in err


@pytest.mark.parametrize("where", ["environment", "config", "result", "top"])
@pytest.mark.parametrize("extra", [MAX_KEYS + 1, 200_000])
def test_an_object_with_too_many_keys_is_refused_while_decoding(
    tmp_path: Path, report_json: dict[str, Any], where: str, extra: int
) -> None:
    target = report_json if where == "top" else report_json[where]
    target.update({f"k{i}": i for i in range(extra)})
    path = tmp_path / "keys.json"
    path.write_text(json.dumps(report_json))
    code, _, err = cli(["replay", str(path)])
    assert_refused(code, err)
    assert f"over the {MAX_KEYS} any report object has" in err


def test_many_keys_are_refused_in_memory_bounded_by_the_input(report_json: dict[str, Any]) -> None:
    report_json["environment"].update({f"key{i:07d}": "v" for i in range(300_000)})
    data = json.dumps(report_json).encode()
    tracemalloc.start()
    try:
        with pytest.raises(ReportError, match="keys"):
            parse_report(data, "many-keys.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The decoder's pairs list and the text: a few times the input, never pydantic's
    # one-error-per-key (about 60 times it).
    assert peak < 12 * len(data) + (8 << 20), (peak, len(data))


@pytest.mark.parametrize("field", ["python", "platform", "reference_detail"])
def test_a_text_over_the_bound_is_refused(report_json: dict[str, Any], field: str) -> None:
    report_json["environment"][field] = "x" * (MAX_TEXT_CHARS + 1)
    with pytest.raises(ReportError, match=f"the text of '{field}'"):
        parse_report(json.dumps(report_json).encode(), "long.json")


def test_a_text_at_the_bound_and_a_long_base64_are_read(report_json: dict[str, Any]) -> None:
    report_json["environment"]["reference_detail"] = "x" * MAX_TEXT_CHARS
    parse_report(json.dumps(report_json).encode(), "at-bound.json")
    value = load_json(json.dumps({"base64": "A" * (MAX_TEXT_CHARS + 4)}).encode(), "b64")
    assert len(value["base64"]) == MAX_TEXT_CHARS + 4


def test_a_key_longer_than_any_field_name_is_refused(report_json: dict[str, Any]) -> None:
    report_json["environment"]["k" * 1000] = 1
    with pytest.raises(ReportError, match="key is 1000 characters"):
        parse_report(json.dumps(report_json).encode(), "key.json")


def test_a_memory_error_while_decoding_names_the_file_and_the_limit(
    tmp_path: Path, report_texts: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(report_texts["gemm"])

    def exhausted(*args: object, **kwargs: object) -> object:
        raise MemoryError

    monkeypatch.setattr("diffcheck.report.read.json.loads", exhausted)
    code, _, err = cli(["replay", str(path)])
    assert_refused(code, err)
    assert str(path) in err
    assert "ran out of memory" in err
    assert "read limit" in err


def test_a_memory_error_anywhere_in_a_command_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from diffcheck.cli import commands

    def exhausted(argv: object) -> int:
        raise MemoryError

    monkeypatch.setattr(commands, "ops", exhausted)
    code, _, err = cli(["ops", "--x\nname"])
    assert_refused(code, err)
    assert "out of memory running" in err
    assert "limit" in err


@pytest.mark.parametrize(
    "where", [(), ("environment",), ("result",), ("result", "reference"), ("result", "metrics")]
)
def test_an_unknown_key_is_named_before_validation(
    report_json: dict[str, Any], where: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = report_json
    for key in where:
        target = target[key]
    target["surplus"] = 1
    # Validation must not even start: the pre-pass names the key.
    monkeypatch.setattr(MODELS[2], "model_validate", lambda *a, **k: pytest.fail("validated"))
    with pytest.raises(ReportError, match=rf"at {'.'.join([*where, 'surplus'])}: an unknown key"):
        parse_report(json.dumps(report_json).encode(), "surplus.json")


def test_a_bundle_array_of_more_than_a_mebibyte_is_read(tmp_path: Path) -> None:
    # Bundles (up to 64 MiB) keep their arrays' base64 under "data", read by the same decoder.
    text = "A" * (MAX_TEXT_CHARS + 4)
    value = load_json(json.dumps({"array": {"data": text}}).encode(), "bundle")
    assert value["array"]["data"] == text
