"""Issue 18 item 6: a matrix key the TOML parser would spend minutes on is refused first.

A 120 KB matrix with one dotted key of 60,000 parts took 38 s and 2.9 GB in ``tomllib``;
the pre-scan refuses it (and any key over 16 parts, any matrix over 100,000 pairs) in
linear time, while every shipped matrix and dots inside strings and comments pass.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diffcheck.errors import ConfigError
from diffcheck.sweep import matrix_scan
from diffcheck.sweep.matrix import load_matrix
from diffcheck.sweep.matrix_scan import MAX_ASSIGNMENTS, MAX_KEY_PARTS, check_matrix_text

from ._harness import assert_refused, cli

_ROOT = Path(__file__).resolve().parents[2]


def test_a_key_of_60000_parts_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("schema_version = 1\n" + "a" + ".a" * 60_000 + " = 1\n")
    started = time.perf_counter()
    with pytest.raises(ConfigError, match=r"line 2 has a dotted key .* of 60001 parts"):
        load_matrix(path)
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize(
    "key",
    [
        "a" + ".b" * MAX_KEY_PARTS,
        '"q"' + '."q"' * MAX_KEY_PARTS,
        "'l'" + " . 'l'" * MAX_KEY_PARTS,
        "[" + ".".join(["t"] * (MAX_KEY_PARTS + 1)) + "]",
        "[[" + ".".join(["t"] * (MAX_KEY_PARTS + 1)) + "]]",
        "x = {" + ".".join(["t"] * (MAX_KEY_PARTS + 1)) + " = 1}",
    ],
)
def test_one_part_over_the_bound_in_any_key_form_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match=f"of {MAX_KEY_PARTS + 1} parts"):
        check_matrix_text(f"{key} = 1\n" if "=" not in key and "[" not in key else key, "m")


def test_keys_at_the_bound_and_dots_in_strings_and_comments_pass() -> None:
    text = (
        ".".join(["k"] * MAX_KEY_PARTS)
        + " = 1\n"
        + 'description = "'
        + "a." * 5000
        + '"\n'
        + "notes = '''\n"
        + "x." * 5000
        + "\n'''\n"
        + "# "
        + "c." * 5000
        + "\n"
        + "eps = 1.5e-6\n"
    )
    check_matrix_text(text, "m")


def test_more_pairs_than_the_bound_are_refused_and_the_bound_passes() -> None:
    check_matrix_text("k=1\n" * MAX_ASSIGNMENTS, "m")
    with pytest.raises(ConfigError, match=f"over the {MAX_ASSIGNMENTS}"):
        check_matrix_text("k=1\n" * (MAX_ASSIGNMENTS + 1), "m")


@pytest.mark.parametrize("name", ["default.toml", "gpu.toml"])
def test_the_shipped_matrices_pass_the_scan(name: str) -> None:
    path = _ROOT / "matrices" / name
    check_matrix_text(path.read_text(), name)


def test_sweep_says_it_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x" + ".x" * 20_000 + " = 1\n")
    code, _, err = cli(["sweep", str(path), "--out", str(tmp_path / "out")])
    assert_refused(code, err)
    assert "parts" in err
    assert not (tmp_path / "out").exists()


_PART = st.one_of(
    st.from_regex(r"[A-Za-z0-9_-]{1,6}", fullmatch=True),
    st.from_regex(r'"[a-z. =#]{0,6}"', fullmatch=True),
    st.from_regex(r"'[a-z. =#]{0,6}'", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_PART, min_size=1, max_size=2 * MAX_KEY_PARTS), spaced=st.booleans())
def test_a_dotted_key_is_refused_exactly_when_over_the_bound(
    parts: list[str], spaced: bool
) -> None:
    key = (" . " if spaced else ".").join(parts)
    text = f"{key} = 1\n"
    if len(parts) > MAX_KEY_PARTS:
        with pytest.raises(ConfigError, match=f"of {len(parts)} parts"):
            check_matrix_text(text, "m")
    else:
        check_matrix_text(text, "m")


def test_a_long_run_without_a_dot_is_scanned_in_linear_time() -> None:
    # Tried from every character, 16,000 digits took 10 s and a 16 MiB matrix hours.
    text = "schema_version = 1\n[[pairs]]\nreference = " + "9" * (1 << 20) + "\n"
    started = time.perf_counter()
    check_matrix_text(text, "matrix m")
    assert time.perf_counter() - started < 2


_OLD_DOTTED = r"[\w+-]+(?:[ \t]*\.[ \t]*[\w+-]+)+"  # before the run-start lookbehind


@settings(max_examples=300)
@given(st.text(alphabet="ab9_+-. \t\n=", max_size=60))
def test_the_run_start_rule_finds_what_matching_anywhere_found(text: str) -> None:
    old = [m.group() for m in re.finditer(_OLD_DOTTED, text)]
    assert [m.group() for m in matrix_scan._DOTTED.finditer(text)] == old
