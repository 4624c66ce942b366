"""Property tests: any matrix text or structure is a plan or one ConfigError line, and any
``sweep`` argument list is a one-line error or a clean usage, never a traceback, never a file.

Cases tried per run (bounded so the suite stays fast): 150 TOML texts, 150 matrix structures,
150 argument lists.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from diffcheck.cli import main  # noqa: E402
from diffcheck.errors import ConfigError  # noqa: E402
from diffcheck.sweep.matrix import MatrixFile, load_matrix, parse_matrix  # noqa: E402
from diffcheck.sweep.plan import plan_matrix  # noqa: E402

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["f32", "f16", "bf16", "numpy", "array_api_strict", "mlx:cpu", "nope"]),
)
KEYS = st.sampled_from(
    [
        "schema_version",
        "description",
        "defaults",
        "pairs",
        "ops",
        "seeds",
        "precisions",
        "max_nmse",
        "tolerances",
        "timeout_s",
        "reference",
        "candidate",
        "required",
        "gemm",
        "rms-norm",
        "silu-mul",
        "context-lifecycle",
        "shapes",
        "m",
        "n",
        "k",
        "tokens",
        "dim",
        "eps",
        "f32",
        "f16",
        "bf16",
        "bogus",
    ]
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


def _valid_core() -> st.SearchStrategy[dict[str, Any]]:
    """Documents close to valid, so the planner is reached, not only the schema."""
    shape = st.fixed_dictionaries(
        {"m": st.integers(-1, 6), "n": st.integers(0, 5), "k": st.integers(1, 5)},
        optional={"seeds": st.lists(st.integers(-1, 2**64), min_size=0, max_size=3)},
    )
    return st.fixed_dictionaries(
        {
            "schema_version": st.sampled_from([1, 1, 1, 2, True]),
            "pairs": st.lists(
                st.fixed_dictionaries(
                    {"candidate": st.sampled_from(["array_api_strict", "numpy", "nope", ""])},
                    optional={"reference": st.sampled_from(["numpy", "array_api_strict"])},
                ),
                min_size=0,
                max_size=2,
            ),
            "ops": st.fixed_dictionaries(
                {"gemm": st.fixed_dictionaries({"shapes": st.lists(shape, min_size=0, max_size=3)})}
            ),
        },
        optional={"defaults": st.dictionaries(KEYS, VALUES, max_size=2)},
    )


def _plan_or_one_line(build: Any) -> None:
    """``build`` gives a matrix that plans, or raises one ConfigError line naming the matrix."""
    message = None
    try:
        matrix = build()
        assert isinstance(matrix, MatrixFile)
        plan = plan_matrix(matrix, source="matrix m.toml")
        assert plan.checks
    except ConfigError as error:
        message = str(error)
    if message is not None:
        assert message.startswith("matrix "), message
        assert "\n" not in message, message


@SETTINGS
@given(st.text(max_size=300))
def test_any_toml_text_is_a_plan_or_one_line(text: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "m.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _plan_or_one_line(lambda: load_matrix(path))


@SETTINGS
@given(st.one_of(st.dictionaries(KEYS, VALUES, max_size=5), _valid_core()))
def test_any_matrix_structure_is_a_plan_or_one_line(data: dict[str, Any]) -> None:
    _plan_or_one_line(lambda: parse_matrix(data, source="matrix m.toml"))


OPTIONS = [
    "--out",
    "--jobs",
    "--timeout",
    "--resume",
    "--executor",
    "--scheduler",
    "--quiet",
    "--only-available",
    "--strict-known",
    "--isolation",
    "--worker-checks",
    "--max-checks",
    "--bogus",
    "-h",
]
ARGUMENTS = st.lists(
    st.one_of(
        st.sampled_from(OPTIONS),
        st.sampled_from(["0", "-1", "1", "nan", "inf", "1e9", "local", "dask", "warm", "cold"]),
        st.text(max_size=8).filter(lambda t: "\x00" not in t),
    ),
    max_size=6,
)


@SETTINGS
@given(ARGUMENTS, st.sampled_from(["missing", "bad"]))
def test_any_sweep_argument_list_is_one_line_or_usage(arguments: list[str], matrix: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "m.toml"
        if matrix == "bad":
            path.write_text("schema_version = 1\n")  # valid TOML, never a valid matrix
        out, err = io.StringIO(), io.StringIO()
        # Relative --out values land in the temporary directory, never the checkout.
        with (
            contextlib.chdir(root),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            try:
                code = main(["sweep", str(path), *arguments])
            except SystemExit as exit_:
                code = int(exit_.code or 0)
        if code == 0:
            assert "-h" in arguments
            assert out.getvalue().startswith("usage: diffcheck sweep")
            return
        assert code == 1
        assert err.getvalue().count("\n") == 1, err.getvalue()
        assert "Traceback" not in err.getvalue()
        assert sorted(p.name for p in root.iterdir()) == (["m.toml"] if matrix == "bad" else [])
