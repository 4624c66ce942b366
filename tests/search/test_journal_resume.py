"""Issue 34 T1 and L4, issue 33's search resume: the journal is checked against its run.

``fuzz --api --resume`` on a journal with a repeated entry wrote ``findings.json`` with the
duplicates (10^5 copies claimed 100,011 findings), then raised ``ValueError`` in
``search/page.py``; an edited journal resumed into ``complete: true`` with findings dropped;
entries were copied unchecked. Each edit below, and generated ones, is now one ConfigError
line naming the journal line, and nothing is written; a line a kill cut short still resumes.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from diffcheck.errors import ConfigError
from diffcheck.search import search_api
from diffcheck.search.output import JOURNAL
from value_fakes import FaultyAdapter

OPTIONS: dict[str, Any] = {"functions": ["exp", "sin", "abs"], "examples": 15, "seed": 2}

Lines = list[dict[str, Any]]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished search of three functions; the first (exp) has two findings."""
    out = tmp_path_factory.mktemp("journal") / "out"
    search_api(FaultyAdapter("ulp3"), out=out, **OPTIONS)
    records = _lines(out)
    assert [r["run"]["function"] for r in records] == OPTIONS["functions"]
    assert len(records[0]["entries"]) == 2
    return out


def _lines(out: Path) -> Lines:
    return [json.loads(line) for line in (out / JOURNAL).read_text().splitlines()[1:]]


def _copy(finished: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(finished, out)
    (out / "findings.json").unlink()
    (out / "index.html").unlink()
    return out


def _write(out: Path, records: Lines, tail: str = "") -> None:
    header = (out / JOURNAL).read_text().splitlines()[0]
    lines = [header, *(json.dumps(r) for r in records)]
    (out / JOURNAL).write_text("\n".join(lines) + "\n" + tail)


def _duplicate_entry(r: Lines) -> None:
    r[0]["entries"].append(r[0]["entries"][0])
    r[0]["fragments"].append(r[0]["fragments"][0])
    r[0]["run"]["findings"] += 1


def _many_copies(r: Lines) -> None:
    entry, piece = r[0]["entries"][0], r[0]["fragments"][0]
    r[0]["entries"] += [entry] * 10_000
    r[0]["fragments"] += [piece] * 10_000
    r[0]["run"]["findings"] += 10_000


def _drop_entry(r: Lines) -> None:
    r[0]["entries"].pop()
    r[0]["fragments"].pop()


def _set(where: Callable[[Lines], dict[str, Any]], key: str, value: Any) -> Callable[[Lines], None]:
    return lambda r: where(r).__setitem__(key, value)


EDITS: dict[str, Callable[[Lines], None]] = {
    "a repeated entry": _duplicate_entry,
    "10,000 copies of an entry": _many_copies,
    "an entry dropped": _drop_entry,
    "a fragment dropped": lambda r: r[0]["fragments"].pop(),
    "a repeated line": lambda r: r.insert(1, copy.deepcopy(r[0])),
    "lines swapped": lambda r: r.reverse(),
    "a function not searched": _set(lambda r: r[2]["run"], "function", "tan"),
    "an entry of another function": _set(lambda r: r[0]["entries"][0], "function", "sin"),
    "a bundle outside bundles/": _set(lambda r: r[0]["entries"][0], "bundle", "../../x.json"),
    "a bundle renumbered": lambda r: r[0]["entries"][1].update(
        bundle=r[0]["entries"][1]["bundle"].replace("bundles/0", "bundles/9", 1)
    ),
    "an entry moved to another function": lambda r: (
        r[1]["entries"].append(r[0]["entries"].pop()),
        r[1]["fragments"].append(r[0]["fragments"].pop()),
        r[0]["run"].update(findings=1),
        r[1]["run"].update(findings=1),
    ),
    "a count edited": lambda r: r[2]["run"].update(findings=3),
    "an unknown key": lambda r: r[0]["run"].update(extra=1),
    "a count as text": lambda r: r[0]["run"].update(findings=str(r[0]["run"]["findings"])),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_journal_is_refused_in_one_line_and_nothing_is_written(
    finished: Path, tmp_path: Path, edit: str
) -> None:
    out = _copy(finished, tmp_path)
    records = _lines(out)
    EDITS[edit](records)
    _write(out, records)
    before = sorted(p.name for p in (out / "bundles").iterdir())
    with pytest.raises(ConfigError, match="the journal is not the run it claims to be") as raised:
        search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)
    assert "\n" not in str(raised.value)
    assert len(str(raised.value)) < 1000
    assert not (out / "findings.json").exists()
    assert not (out / "index.html").exists()
    assert sorted(p.name for p in (out / "bundles").iterdir()) == before


def test_a_missing_bundle_is_refused(finished: Path, tmp_path: Path) -> None:
    out = _copy(finished, tmp_path)
    (out / _lines(out)[0]["entries"][1]["bundle"]).unlink()
    with pytest.raises(ConfigError, match="is not there"):
        search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)


def test_a_broken_line_before_the_last_is_refused(finished: Path, tmp_path: Path) -> None:
    out = _copy(finished, tmp_path)
    text = (out / JOURNAL).read_text().splitlines()
    text[2] = text[2][:40]
    (out / JOURNAL).write_text("\n".join(text) + "\n")
    with pytest.raises(ConfigError, match="line 3: not a record"):
        search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)


def test_the_cut_last_line_resumes_and_is_dropped_from_the_journal(
    finished: Path, tmp_path: Path
) -> None:
    out = _copy(finished, tmp_path)
    records = _lines(out)
    cut = json.dumps(records[2])[:30]
    _write(out, records[:2], tail=cut)  # a kill while the last line was written
    result = search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)
    assert result.document.complete
    assert result.document.resumed_functions == 2
    again = _lines(out)  # the cut text is gone, the new line stands alone
    assert [r["run"]["function"] for r in again] == [r["run"]["function"] for r in records]
    assert again[:2] == records[:2]
    expected = json.loads((finished / "findings.json").read_text())["findings"]
    assert [f.model_dump(mode="json") for f in result.document.findings] == expected


def test_the_cli_says_it_in_one_line(finished: Path, tmp_path: Path) -> None:
    from hostile._harness import assert_refused, cli

    out = _copy(finished, tmp_path)
    records = _lines(out)
    _duplicate_entry(records)
    _write(out, records)
    argv = ["fuzz", "--api", "--require-backend", "array_api_strict", "--out", str(out)]
    argv += ["--resume", "--functions", "exp,sin,abs", "--examples", "15", "--seed", "2"]
    code, _, err = cli(argv)
    assert_refused(code, err)


_PATHS: list[tuple[Any, ...]] = [
    ("run", "function"),
    ("run", "findings"),
    ("run", "examples"),
    ("entries", 0, "function"),
    ("entries", 1, "bundle"),
    ("entries", 0, "kind"),
    ("entries", 1, "dtype"),
    ("fragments",),
    ("entries",),
]
_VALUES: list[Any] = ["exp", "sin", "abs", "tan", "", "../x", "\x1b[2J", -1, 0, 1, 2, 10**6]
_VALUES += [None, [], {}, True, 1.5]


@pytest.mark.parametrize("case", range(40))
def test_any_edited_record_is_refused_or_is_the_run(
    finished: Path, tmp_path: Path, case: int
) -> None:
    # Seeded draws (the search inside runs Hypothesis itself, which cannot nest in @given).
    rng = random.Random(case)
    out = _copy(finished, tmp_path)
    records = _lines(out)
    original = copy.deepcopy(records)
    for _ in range(rng.randint(1, 2)):
        path = rng.choice(_PATHS)
        target: Any = records[0 if path[0] == "entries" and len(path) > 1 else rng.randint(0, 2)]
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = rng.choice(_VALUES)
    _write(out, records)
    try:
        result = search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)
    except ConfigError as error:
        refused = str(error)
    else:
        refused = ""
    if refused:
        assert "\n" not in refused
        assert not (out / "findings.json").exists()
        return
    # Accepted: then the edit changed nothing that is evidence, and the totals are true.
    assert [r["entries"] for r in records] == [r["entries"] for r in original]
    assert [r["run"]["function"] for r in records] == OPTIONS["functions"]
    assert result.document.counts.findings == len(result.document.findings) == 2


def test_a_last_record_without_its_newline_resumes_on_a_line_of_its_own(
    finished: Path, tmp_path: Path
) -> None:
    out = _copy(finished, tmp_path)
    records = _lines(out)
    header = (out / JOURNAL).read_text().splitlines()[0]
    text = "\n".join([header, *(json.dumps(r) for r in records[:2])])  # no final newline
    (out / JOURNAL).write_text(text)
    result = search_api(FaultyAdapter("ulp3"), out=out, resume=True, **OPTIONS)
    assert result.document.resumed_functions == 2
    again = _lines(out)
    assert [r["run"]["function"] for r in again] == OPTIONS["functions"]
    assert again[:2] == records[:2]
