"""Report write and replay against ``numpy.save`` / ``numpy.load`` of the same arrays.

For float32 outputs of 10^3 to 10^7 elements (a reference and a slightly perturbed copy),
median times over REPEATS runs, all in this one run:
- ``write``: a final v2 report of both outputs from the arrays: encoding them (base64 with
  sizes and SHA-256), building the document and writing it with the report writer (a
  temporary, fsync, rename), against ``numpy.save`` of both arrays to two files, with and
  without an fsync of each (the writer always fsyncs, so both peers are shown);
- ``replay``: reading the report back (bounded read, schema validation, size and digest
  checks) and re-deriving its verdict, against ``numpy.load`` of both files;
- ``size``: the report's bytes on disk against the raw bytes of both outputs;
- ``floor``: what any writer of this format pays, each part timed alone: SHA-256 of both
  outputs plus writing and fsyncing one file of the report's size (``fl/save`` is that
  against plain numpy.save; above 3 the 3x target cannot be met without dropping a digest
  or the fsync).
It checks the targets at 10^6 elements: size <= 1.5x raw, write <= 3x numpy.save. The
writer fsyncs every record (a report is durable once written); numpy.save does not, so
the write ratio is judged against both plain numpy.save and numpy.save with an fsync.

Usage: python bench/report_io.py [MAX_ELEMENTS] [REPEATS]  (default 10^7, 11)
"""

from __future__ import annotations

import base64
import hashlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from diffcheck.config import make_check
from diffcheck.differ import compare_outputs
from diffcheck.report import ReportWriter, load_report, replay
from diffcheck.runner.records import completed_document, initial_document, result_record


def medians_ms(
    actions: dict[str, Callable[[int], None]],
    repeats: int,
    tidy: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Median milliseconds of each action, run interleaved so noise falls on all alike.

    ``tidy(index)`` runs untimed after each action: it removes what that run wrote (all but
    the first run's files), so no action pays for the page cache and writeback of files
    left by earlier ones (measured: kept files made later writes up to 2x slower, unevenly).
    """
    times: dict[str, list[float]] = {name: [] for name in actions}
    for index in range(repeats):
        for name, action in actions.items():
            started = time.perf_counter()
            action(index)
            times[name].append((time.perf_counter() - started) * 1000.0)
            if tidy is not None:
                tidy(index)
    return {name: statistics.median(values) for name, values in times.items()}


def save_both(directory: Path, arrays: tuple[np.ndarray, np.ndarray], fsync: bool) -> None:
    for name, values in zip(("reference", "actual"), arrays, strict=True):
        with open(directory / f"{name}.npy", "wb") as handle:
            np.save(handle, values)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())


def floor_ms(root: Path, arrays: tuple[np.ndarray, np.ndarray], repeats: int) -> dict[str, float]:
    """What the writer cannot avoid: SHA-256 of both outputs, and writing and fsyncing a file
    of the report's size (base64 of both), each on its own."""
    text = b"".join(base64.b64encode(a.tobytes()) for a in arrays)

    def digest(_: int) -> None:
        for values in arrays:
            hashlib.sha256(memoryview(values).cast("B")).digest()

    def durable(index: int) -> None:
        path = root / f"floor-{index}.bin"
        with open(path, "wb") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        path.unlink()

    return medians_ms({"sha256": digest, "write+fsync": durable}, repeats)


def measure(n: int, root: Path, repeats: int) -> dict[str, float]:
    """Every figure of one row: medians in milliseconds, and the size ratio."""
    # A check whose configured shape has n elements: gemm 1 x n x 1.
    check = make_check("array_api_strict", "gemm", m=1, n=n, k=1)
    rng = np.random.default_rng(n)
    reference = rng.standard_normal(n).astype(np.float32)
    actual = (reference * (1 + 1e-7 * rng.standard_normal(n))).astype(np.float32)
    verdict = compare_outputs(reference, actual, check.max_nmse, ulp_dtype="f32")
    initial = initial_document(check)

    def write(index: int) -> None:
        result = result_record(
            check,
            verdict.status,
            verdict.reason,
            reference=reference,
            actual=actual,
            verdict=verdict,
        )
        final = completed_document(
            initial, result, 1.0, executed_precision=initial.configured_precision
        )
        ReportWriter(root / f"r{n}-{index}.json").write(final)

    def save(index: int, fsync: bool) -> None:
        directory = root / f"npy{n}-{fsync}-{index}"
        directory.mkdir()
        save_both(directory, (reference, actual), fsync)

    def tidy(index: int) -> None:
        if index == 0:
            return  # the first run's files are replayed and loaded below
        (root / f"r{n}-{index}.json").unlink(missing_ok=True)
        for fsync in (False, True):
            directory = root / f"npy{n}-{fsync}-{index}"
            if directory.is_dir():
                for child in directory.iterdir():
                    child.unlink()
                directory.rmdir()

    figures = medians_ms(
        {"write": write, "save": lambda i: save(i, False), "save+fsync": lambda i: save(i, True)},
        repeats,
        tidy,
    )
    figures |= floor_ms(root, (reference, actual), repeats)
    report, npy = root / f"r{n}-0.json", root / f"npy{n}-False-0"

    def replay_once(_: int) -> None:
        outcome = replay(load_report(report))
        assert outcome.agrees, outcome.disagreements

    def load_once(_: int) -> None:
        np.load(npy / "reference.npy")
        np.load(npy / "actual.npy")

    figures |= medians_ms({"replay": replay_once, "load": load_once}, repeats)
    figures["size"] = report.stat().st_size / (reference.nbytes + actual.nbytes)
    return figures


def _empty(root: Path) -> None:
    for path in root.iterdir():  # keep the scratch space small between rows
        if path.is_dir():
            for child in path.iterdir():
                child.unlink()
            path.rmdir()
        else:
            path.unlink()


def main() -> int:
    largest = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    print(
        f"{'elements':>9} {'write':>9} {'np.save':>9} {'+fsync':>9} {'w/save':>7} {'w/save+f':>8} "
        f"{'replay':>9} {'np.load':>9} {'r/load':>7} {'size/raw':>8} {'floor':>9} {'fl/save':>7}"
    )
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        n = 10**3
        while n <= largest:
            f = measure(n, root, repeats)
            floor = f["sha256"] + f["write+fsync"]
            print(
                f"{n:>9.0e} {f['write']:>7.2f}ms {f['save']:>7.2f}ms {f['save+fsync']:>7.2f}ms "
                f"{f['write'] / f['save']:>7.2f} {f['write'] / f['save+fsync']:>8.2f} "
                f"{f['replay']:>7.2f}ms {f['load']:>7.2f}ms {f['replay'] / f['load']:>7.2f} "
                f"{f['size']:>8.3f} {floor:>7.2f}ms {floor / f['save']:>7.2f}"
            )
            if n == 10**6:
                if f["size"] > 1.5:
                    failures.append(f"10^6: report is {f['size']:.2f}x the raw bytes (> 1.5x)")
                for peer in ("save", "save+fsync"):
                    if f["write"] > 3 * f[peer]:
                        failures.append(
                            f"10^6: writing takes {f['write'] / f[peer]:.2f}x numpy.{peer} (> 3x)"
                        )
                print(
                    f"  at 10^6 the writer takes {f['write'] / floor:.2f}x its floor; the floor "
                    f"alone is {floor / f['save']:.2f}x numpy.save"
                    + (
                        " (over 3x: out of reach while reports are hashed and fsynced)"
                        if floor > 3 * f["save"]
                        else ""
                    )
                )
            _empty(root)
            n *= 10
    for failure in failures:
        print(f"TARGET MISSED: {failure}")
    if not failures:
        print(
            "targets met at 10^6: size <= 1.5x raw, write <= 3x numpy.save (with and without fsync)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
