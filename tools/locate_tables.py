"""The transformer block's located per-call tables and every figure, for before/after checks.

Runs ``diffcheck.locate`` on ``bench/locate_transformer.py``'s block at f32, f16 and bf16
candidate precision and prints each per-call table, then every call's carried and local
figures exactly (``repr``: NMSE, max |diff|, worst index, values around it, status). Two
versions of the code give byte-identical output when they judge alike::

    python tools/locate_tables.py torch:cpu > after.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import locate_transformer

import diffcheck


def main() -> None:
    candidate = sys.argv[1] if len(sys.argv) > 1 else "mlx:cpu"
    values = locate_transformer.inputs()
    for precision in ("f32", "f16", "bf16"):
        block = locate_transformer.block
        print(f"--- {precision} ---")
        try:
            result = diffcheck.locate(block, *values, candidate=candidate, precision=precision)
        except diffcheck.BackendError as error:  # a precision the candidate does not execute
            print(f"not run: {error}")
            continue
        print(result)
        for call in result.calls:
            print(call.index, call.function, call.status, repr(call.carried), repr(call.local))
        windowed = diffcheck.locate(
            block, *values, candidate=candidate, precision=precision, max_memory=64 * 1024
        )
        same = [(c.status, c.carried, c.local) for c in windowed.calls] == [
            (c.status, c.carried, c.local) for c in result.calls
        ]
        print(f"windowed ({windowed.passes} runs): {'same figures' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
