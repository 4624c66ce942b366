"""Issue 34 U2 and L5, and the pair names of a matrix (S1's rule).

10^6 empty tables (9.9 MB) took 1.34 GB in tomllib before the one-line error, since the
pre-scan counted key/value pairs only; ``schema_version = 1.0`` was accepted (``m = 4.0`` was
refused); a pair's backend names became folder names through a replacement that let
different names share one folder.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from diffcheck.errors import ConfigError
from diffcheck.sweep.matrix import load_matrix

from ._harness import assert_refused, cli

_ROOT = Path(__file__).resolve().parents[2]
_HEAD = 'schema_version = 1\n[[pairs]]\ncandidate = "array_api_strict"\n'
_GEMM = "[[ops.gemm.shapes]]\nm = 2\nn = 2\nk = 2\n"


@pytest.mark.parametrize(
    "filler",
    [
        lambda n: "".join(f"[t{i}]\n" for i in range(n)),
        lambda n: "".join(f"[[a.t{i % 7}]]\n" for i in range(n)),
        lambda n: "x = [" + "{}," * n + "]\n",
        lambda n: "x = [" + "[]," * n + "]\n",
    ],
    ids=["headers", "array-tables", "inline-tables", "empty-arrays"],
)
def test_many_tables_or_arrays_are_refused_before_the_parser(
    tmp_path: Path, filler: object
) -> None:
    path = tmp_path / "m.toml"
    data = (_HEAD + _GEMM + filler(10**6)).encode()  # type: ignore[operator]
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match=r"over the .* a matrix may hold"):
            load_matrix(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The file, its text and the blanked copy: no per-table object is ever built.
    assert peak < 4 * len(data) + (1 << 20), (peak, len(data))


def test_the_shipped_matrices_are_under_every_bound() -> None:
    for path in sorted((_ROOT / "matrices").glob("*.toml")):
        load_matrix(path)


@pytest.mark.parametrize("version", ["1.0", "true", '"1"', "1e0", "[1]"])
def test_a_schema_version_that_only_equals_one_is_refused(tmp_path: Path, version: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(_HEAD.replace("schema_version = 1", f"schema_version = {version}") + _GEMM)
    with pytest.raises(ConfigError, match="schema_version"):
        load_matrix(path)
    code, _, err = cli(["sweep", str(path), "--out", str(tmp_path / "out")])
    assert_refused(code, err)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../up", "a/b", "mlx\x1b[2J", "mlx:cpu:0", "..", "x" * 70])
@pytest.mark.parametrize("side", ["candidate", "reference"])
def test_a_pair_naming_no_backend_is_refused_at_the_matrix(
    tmp_path: Path, name: str, side: str
) -> None:
    path = tmp_path / "m.toml"
    escaped = name.replace("\x1b", "\\u001b")
    path.write_text(
        f'schema_version = 1\n[[pairs]]\ncandidate = "array_api_strict"\n{side} = "{escaped}"\n'
        + _GEMM
        if side == "reference"
        else f'schema_version = 1\n[[pairs]]\ncandidate = "{escaped}"\n' + _GEMM
    )
    with pytest.raises(ConfigError, match=f"pairs.0.{side}: .*rename it"):
        load_matrix(path)
