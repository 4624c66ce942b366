"""Issue 34 U4: a report's arrays and objects are counted in its bytes before it is decoded.

A report of 10^7 empty lists in ``config`` (30 MB) took 800 MB before the schema refused it:
an empty list costs the decoder 64 bytes for its 3 bytes of text. Every reader of reports
(replay, show, upgrade, resume, the sweep summary and bundles, all through ``load_json``)
now refuses more than a fixed number plus one per 64 bytes, holding little more than the
file while it does.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from diffcheck.errors import ReportError
from diffcheck.report.read import BYTES_PER_CONTAINER, MAX_FIXED_CONTAINERS, load_json

from ._harness import assert_refused, cli


def _filled(report_json: dict[str, Any], filler: str, count: int) -> bytes:
    text = json.dumps({**report_json, "config": {**report_json["config"], "x": None}})
    return text.replace('"x": null', f'"x": [{",".join([filler] * count)}]').encode()


@pytest.mark.parametrize("filler", ["[]", "{}", "[[]]", '{"a":[]}'])
def test_many_empty_containers_are_refused_before_decoding(
    report_json: dict[str, Any], filler: str
) -> None:
    data = _filled(report_json, filler, 10**6)
    tracemalloc.start()
    try:
        with pytest.raises(ReportError, match=r"holds .* arrays and objects in .* refused before"):
            load_json(data, "r.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20), peak  # nothing of the file's size is built


def test_the_cli_says_it_in_one_line(tmp_path: Path, report_json: dict[str, Any]) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(_filled(report_json, "[]", 10**7))  # the 30 MB file
    for argv in (["replay", str(path)], ["show", str(path)]):
        code, _, err = cli(argv)
        assert_refused(code, err)
        assert "arrays and objects" in err


def test_a_report_at_the_bound_still_decodes(report_json: dict[str, Any]) -> None:
    base = len(json.dumps(report_json))
    # Lists of 64-byte texts: one container per 64 bytes and more is allowed.
    filler = "[" + json.dumps("a" * (BYTES_PER_CONTAINER - 4)) + "]"
    data = _filled(report_json, filler, MAX_FIXED_CONTAINERS + base // BYTES_PER_CONTAINER)
    assert isinstance(load_json(data, "r.json"), dict)


@pytest.mark.parametrize(
    ("filler", "what"),
    [('"abcdef"', "texts"), ('"ab"', "values"), ("1000", "values"), ("0.5", "values")],
)
def test_dense_texts_and_numbers_are_refused_before_decoding(
    report_json: dict[str, Any], filler: str, what: str
) -> None:
    # Within the container bound, bare texts held 12 and numbers 7 times their bytes.
    data = _filled(report_json, filler, 10**6)
    tracemalloc.start()
    try:
        with pytest.raises(ReportError, match=f"holds .* {what} in .* refused before"):
            load_json(data, "r.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (1 << 20), peak


def test_every_version_of_a_written_report_is_under_the_bounds(
    report_texts: dict[str, bytes],
) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from forgery import as_v1, as_v2

    for text in report_texts.values():
        document = json.loads(text)
        for version in (document, as_v2(document), as_v1(document)):
            load_json(json.dumps(version, indent=2).encode(), "r.json")
