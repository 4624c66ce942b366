"""Small real runs whose pages the browser checks open: a sweep and an API search.

The sweep runs every op on array-api-strict in real worker processes, one of them killed
(the worker's test-only fault hook) and one pair with no adapter (not_run), so the page has
every status, every op's mark and a long reason. The sweep honours the fault hook only
under pytest (``PYTEST_CURRENT_TEST``). The API search runs a NumPy backend with
faults injected in its own namespace, in the real worker process: an undeclared crash and
NaN finding (new), a signed-zero finding it declares (known), and a declared divergence it
never shows.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np

from diffcheck.adapters import KnownApiDivergence
from diffcheck.adapters.api_inputs import NAN_INPUT, ZERO_RESULT
from diffcheck.cli import main
from diffcheck.search import search_api
from diffcheck.sweep.worker import FAULT_ENV
from value_fakes import FaultyAdapter, FaultyNamespace

STRICT = "numpy-vs-array_api_strict"
KILLED = f"{STRICT}/gemm/gemm-64x33x35-f32-s7"

#: Every built-in op at one or two shapes, on array-api-strict and on a backend not here.
SWEEP_MATRIX = """
schema_version = 1
description = "every op at a small shape, one worker killed, one pair not available"

[defaults]
precisions = ["f32"]

[[pairs]]
candidate = "array_api_strict"

[[pairs]]
candidate = "no_such_backend_with_a_rather_long_name"

[ops.gemm]
shapes = [{ m = 64, n = 32, k = 32 }, { m = 64, n = 33, k = 35, seeds = [7] }]

[ops.rms-norm]
shapes = [{ tokens = 3, dim = 33, eps = 1e-5, seeds = [9] }]

[ops.silu-mul]
shapes = [{ tokens = 3, intermediate = 257, seeds = [7] }]

[ops.context-lifecycle]
shapes = [{ tokens = 3, intermediate = 33, k = 35 }]

[ops.softmax]
shapes = [{ tokens = 3, dim = 33, causal = true, temperature = 0.5, seeds = [7] }]

# A tolerance no float32 layer norm meets: a measured failure with its long reason.
[ops.layer-norm]
shapes = [{ tokens = 3, dim = 257, eps = 1e-6, seeds = [9], max_nmse = 1e-30 }]

[ops.rope]
shapes = [{ tokens = 3, heads = 3, head_dim = 34, layout = "interleaved", offset = 4093 }]

[ops.attention]
shapes = [{ tokens = 5, kv_len = 3, heads = 6, kv_heads = 3, head_dim = 33, causal = false }]

[ops.add-rms-norm]
shapes = [{ tokens = 3, dim = 33, eps = 1e-5, seeds = [9] }]
"""


def sweep_page(directory: Path) -> Path:
    """Run the sweep above into ``directory``/out; its ``index.html``."""
    matrix = directory / "matrix.toml"
    matrix.write_text(SWEEP_MATRIX)
    out = directory / "out"
    previous = os.environ.get(FAULT_ENV)
    os.environ[FAULT_ENV] = f"{KILLED}:kill"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["sweep", str(matrix), "--out", str(out), "--jobs", "2", "--quiet"])
    finally:
        if previous is None:
            del os.environ[FAULT_ENV]
        else:
            os.environ[FAULT_ENV] = previous
    return out / "index.html"


class _PageNamespace(FaultyNamespace):
    """NumPy with three faults: log1p NaN below 0, multiply's lost zero sign, and an exp that
    kills its process once (the marker file makes it once)."""

    def __init__(self, marker: str) -> None:
        super().__init__("nan")
        self.marker = marker
        self.signed = FaultyNamespace("signed-zero")

    def multiply(self, x1: Any, x2: Any, /) -> Any:
        return self.signed.multiply(x1, x2)

    def exp(self, x: Any, /) -> Any:
        values = np.asarray(x)
        if values.size and values.dtype.kind == "f" and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGFPE)
        return super().exp(x)


class PageBackend(FaultyAdapter):
    """The faults above, multiply's declared known (and a declaration no finding meets)."""

    def __init__(self, marker: str) -> None:
        super().__init__("nan")
        self.marker = marker
        self._namespace = _PageNamespace(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.marker,))

    @property
    def spec(self) -> str:
        return "faulty[page]"

    def known_api_divergences(self) -> tuple[KnownApiDivergence, ...]:
        return (
            KnownApiDivergence(
                function="multiply",
                kind="signed-zero",
                covers=ZERO_RESULT,
                reason="a zero product carries no sign on this backend, whatever the factors' "
                "signs say (the standard asks for the sign of a product of signed zeros)",
                upstream="https://example.org/issues/1",
            ),
            KnownApiDivergence(
                function="log1p", kind="value", covers=NAN_INPUT, reason="never seen here"
            ),
        )


def search_page(directory: Path) -> Path:
    """Search exp, log1p and multiply on :class:`PageBackend` into ``directory``/out."""
    out = directory / "out"
    search_api(
        PageBackend(str(directory / "crashed")),
        functions=["exp", "log1p", "multiply"],
        examples=20,
        seed=3,
        out=out,
    )
    return out / "index.html"
