"""Print the measurements behind the precision floor's multiple (docs/precision-floor.md).

For every op and shape of a matrix (default: matrices/default.toml), every candidate named on
the command line and every precision it runs, the candidate's NMSE against the float64 truth
in units of its floor; then the same for planted downgrades (tests/floor/downgrades.py, on
torch). Prints, per candidate and precision, the worst honest ratio and where it was, and per
downgrade the smallest ratio. Run with the test environment's Python:

    python tools/floor_table.py mlx:cpu torch:cpu array_api_strict wgpu
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from diffcheck.adapters import resolve  # noqa: E402
from diffcheck.config import make_check  # noqa: E402
from diffcheck.report.arrays import decode_output  # noqa: E402
from diffcheck.report.floor_check import check_floor  # noqa: E402
from diffcheck.runner import run_check  # noqa: E402


def _shapes(matrix: Path) -> list[tuple[str, dict[str, Any]]]:
    ops = tomllib.loads(matrix.read_text())["ops"]
    return [
        (op, {k: v for k, v in shape.items() if k != "seeds"})
        for op, table in ops.items()
        for shape in table["shapes"]
    ]


def _ratio(check: Any, document: Any) -> float | None:
    """The candidate's NMSE in units of the floor of both honest orders (a verdict takes
    the in-order twin only where the pairwise floor alone fails it)."""
    result = document.result
    if result is None or result.floor is None or result.actual is None:
        return None
    chains = check.op.name == "context-lifecycle" and document.submission_phases is None
    both = check_floor(check, chains, decode_output(result.actual, "actual"), in_order=True)
    return None if both is None else float(both.candidate_nmse / both.floor_nmse)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=["mlx:cpu", "torch:cpu", "array_api_strict"])
    parser.add_argument("--matrix", type=Path, default=ROOT / "matrices" / "default.toml")
    parser.add_argument(
        "--torch-tf32",
        action="store_true",
        help="let torch's CUDA matmuls use TF32 (torch.backends.cuda.matmul.allow_tf32)",
    )
    parser.add_argument(
        "--no-downgrades", action="store_true", help="skip the planted downgrades on torch"
    )
    options = parser.parse_args()
    if options.torch_tf32:
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
    shapes = _shapes(options.matrix)
    print("| candidate | precision | checks | failed | worst ratio | where | failures named as |")
    print("|---|---|---|---|---|---|---|")
    for backend in options.backends:
        adapter = resolve(backend)
        if adapter.probe().status != "available":
            print(f"| {backend} | - | not available: {adapter.probe().reason} | | |")
            continue
        for precision in adapter.capabilities().precisions:
            seen: list[tuple[float, str]] = []
            failed: dict[str, int] = defaultdict(int)
            for op, params in shapes:
                check = make_check(backend, op, precision=precision, seed=42, **params)
                document = run_check(check, candidate=adapter)
                result = document.result
                ratio = _ratio(check, document)
                if ratio is not None:
                    seen.append((ratio, f"{op} {params}"))
                floor = None if result is None else result.floor
                if floor is not None and floor.status == "failed":
                    failed[f"{op}: {floor.match}"] += 1
            if not seen:
                print(f"| {backend} | {precision} | 0 | | | | |")
                continue
            worst = max(seen)
            named = ", ".join(f"{n} ({c})" for n, c in sorted(failed.items()))
            print(
                f"| {backend} | {precision} | {len(seen)} | {sum(failed.values())} | "
                f"{worst[0]:.3g} | {worst[1]} | {named} |"
            )
    if options.no_downgrades:
        return 0
    from floor.downgrades import DOWNGRADES, DowngradedTorch

    print()
    print("| downgrade (torch, f32 check) | checks | smallest ratio | where | named as |")
    print("|---|---|---|---|---|")
    for kind in DOWNGRADES:
        seen = []
        names: dict[str, int] = defaultdict(int)
        for op, params in shapes:
            check = make_check("torch:cpu", op, seed=42, **params)
            document = run_check(check, candidate=DowngradedTorch(kind))
            result = document.result
            honest = run_check(check).result
            ratio = _ratio(check, document)
            if ratio is None or result.floor.candidate_nmse == honest.floor.candidate_nmse:
                continue  # the downgrade does not touch this op (no matmul, no exp)
            seen.append((ratio, f"{op} {params}"))
            names[str(result.floor.match)] += 1
        least = min(seen)
        named = ", ".join(f"{n} ({c})" for n, c in sorted(names.items()))
        print(f"| {kind} | {len(seen)} | {least[0]:.3g} | {least[1]} | {named} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
