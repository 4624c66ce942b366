"""Measure ``mlx:gpu`` against the NumPy reference on every op, contract shape and precision.

Run it where MLX has a GPU (the CUDA build on Linux, ``pip install -e 'adapters/mlx[cuda]'``;
Metal on macOS)::

    python adapters/mlx/gpu_proof.py [--backend mlx:gpu] [--seed 20240607]

It prints the probe, then one line per case (op, shape, precision, status, NMSE, tolerance,
executed storage, wall time, and the reason when a case did not pass), then a count. It is a
measurement, so it exits 0 whatever the verdicts; it exits 2 only when the backend cannot
run at all, with the probe's reason on stderr. It uses diffcheck, MLX and NumPy only.
"""

from __future__ import annotations

import argparse
import sys
import time

from diffcheck.adapters import Adapter, resolve
from diffcheck.differ import diff
from diffcheck.ops import get_op
from diffcheck.ops.samples import CONTRACT_CASES
from diffcheck.precision import PRECISIONS, PrecisionName, default_max_nmse

__all__ = ["main", "measure"]

_HEADER = ("op", "shape", "prec", "status", "nmse", "tolerance", "storage", "ms", "reason")
_WIDTHS = (18, 10, 5, 7, 12, 10, 10, 8, 0)


def _row(cells: tuple[str, ...]) -> str:
    return "  ".join(c.ljust(w) if w else c for c, w in zip(cells, _WIDTHS, strict=True)).rstrip()


def measure(
    candidate: Adapter,
    reference: Adapter,
    name: str,
    values: dict[str, int],
    precision: PrecisionName,
    seed: int,
) -> tuple[str, ...]:
    """One case's printed cells; an exception is a case with status ``error``, not a crash."""
    shape = "x".join(str(v) for v in values.values())
    tolerance = default_max_nmse(precision)
    cells: tuple[str, ...] = (name, shape, precision)
    try:
        op = get_op(name)
        params = op.params(**values)
        inputs = op.inputs(params, seed)
        ref = reference.execute(op, params, inputs, "f32", role="reference")
        start = time.perf_counter()
        execution = candidate.execute(op, params, inputs, precision)
        elapsed = (time.perf_counter() - start) * 1e3
        verdict = diff(
            ref.output,
            execution.output,
            max_nmse=tolerance,
            expected_elements=op.validate(params),
            segments=op.segments(params) or None,
        )
    except Exception as error:  # a measurement records a broken case and goes on
        reason = f"{type(error).__name__}: {error}".replace("\n", " ")
        return (*cells, "error", "-", f"{tolerance:g}", "-", "-", reason)
    nmse = f"{verdict.metrics.nmse:.3e}" if verdict.metrics else "-"
    storage = f"{execution.input_storage}->{execution.output_storage}"
    return (
        *cells,
        verdict.status,
        nmse,
        f"{tolerance:g}",
        storage,
        f"{elapsed:.2f}",
        verdict.reason or "",
    )


def main(argv: list[str] | None = None) -> int:
    """Print the measurement; 0 once it ran, 2 when the backend cannot run here."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", default="mlx:gpu", help="the candidate (default mlx:gpu)")
    parser.add_argument("--seed", type=int, default=20240607, help="the input seed")
    args = parser.parse_args(argv)

    candidate = resolve(args.backend)
    probe = candidate.probe()
    print(f"{candidate.spec}: {probe.status}; {probe.detail}")
    if not probe.is_available:
        print(f"{candidate.spec} cannot run here: {probe.reason}", file=sys.stderr)
        return 2
    for note in candidate.capabilities().notes:
        print(f"note: {note}")
    reference = resolve("numpy")

    print(_row(_HEADER))
    counts: dict[str, int] = {"passed": 0, "failed": 0, "error": 0}
    for case in CONTRACT_CASES:
        name, values = case.op, case.values
        for precision in PRECISIONS:
            cells = measure(candidate, reference, name, values, precision, args.seed)
            counts[cells[3]] += 1
            print(_row(cells), flush=True)
    print(
        f"{candidate.spec}: {sum(counts.values())} cases: {counts['passed']} passed, "
        f"{counts['failed']} failed, {counts['error']} errors"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
