"""The memory budget counts what a run holds per segment (one per attention head).

A 200,000-head attention was estimated at 21 MiB and peaked at 1.17 GB: the estimate
counted elements only, while a run holds a verdict, records and their JSON text per segment.
The per-segment figure is re-measured here on a real run (peak RSS in a fresh process, over
what it held before the run) and the estimate must cover it without being far above it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from diffcheck.config import make_check
from diffcheck.errors import ConfigError
from diffcheck.ops.attention import Attention
from diffcheck.report.limits import RUN_BYTES_PER_SEGMENT
from diffcheck.runner.budget import BYTES_PER_SEGMENT, check_budget, estimate_memory

CANDIDATE = "array_api_strict"


def _attention(heads: int) -> object:
    return make_check(
        CANDIDATE, "attention", tokens=1, kv_len=1, heads=heads, kv_heads=1, head_dim=1
    )


def test_segments_are_counted_not_built(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*args: object) -> None:
        raise AssertionError("the estimate built the segments")

    monkeypatch.setattr(Attention, "segments", never)
    estimate = estimate_memory(_attention(2_000_000_000))
    assert estimate.segments == 2_000_000_000 * BYTES_PER_SEGMENT


def test_the_issues_many_head_attention_is_refused_under_a_budget_it_exceeds() -> None:
    # 200,000 heads peaked at 1.17 GB; its old estimate (21 MiB) fit a 100 MiB budget.
    with pytest.raises(ConfigError, match=r"over the budget of 100.0 MiB") as refused:
        check_budget(_attention(200_000), max_memory=100 * 1024**2)
    assert "segments 1.1 GiB" in str(refused.value)
    assert check_budget(_attention(4), max_memory=100 * 1024**2).segments == 4 * BYTES_PER_SEGMENT


def test_a_check_without_segments_counts_none() -> None:
    assert estimate_memory(make_check(CANDIDATE, "gemm", m=64, n=64, k=64)).segments == 0
    rms = make_check(CANDIDATE, "add-rms-norm", tokens=2, dim=8)
    assert estimate_memory(rms).segments == 2 * BYTES_PER_SEGMENT


def test_the_read_limit_assumes_no_more_segments_than_the_budget_admits() -> None:
    # report.limits bounds a report's segments by budget // RUN_BYTES_PER_SEGMENT.
    assert BYTES_PER_SEGMENT >= RUN_BYTES_PER_SEGMENT


_MEASURE = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    from diffcheck.config import make_check
    from diffcheck.differ._measure import load_kernel
    from diffcheck.runner import run_check

    def attention(heads):
        return make_check(
            "array_api_strict", "attention",
            tokens=1, kv_len=1, heads=heads, kv_heads=1, head_dim=1,
        )

    def status_kib(field):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise SystemExit(f"no {field} in /proc/self/status")

    print(load_kernel(), file=sys.stderr)  # loaded once per process, not a cost of the check
    with tempfile.TemporaryDirectory() as directory:
        run_check(attention(2), Path(directory) / "warm.json")  # lazy imports, first calls
        # The high-water mark from here on: compiling the kernel (a cold numba cache) can
        # peak far above what the process holds after it.
        Path("/proc/self/clear_refs").write_text("5")
        before = status_kib("VmRSS")
        document = run_check(attention(int(sys.argv[1])), Path(directory) / "r.json")
        peak = status_kib("VmHWM")
    print(json.dumps({"peak": (peak - before) * 1024, "status": document.result.status}))
    """
)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="Linux peak RSS reset")
def test_a_real_many_head_run_peaks_within_its_estimate() -> None:
    heads = 10_000
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(heads)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    kernel = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "None"
    assert measured["status"] == "passed"
    estimate = estimate_memory(_attention(heads)).total
    peak = measured["peak"]
    assert peak > heads * 1024, peak  # the run did hold per-segment memory
    assert estimate >= peak, (estimate, peak, f"differ kernel failure: {kernel}")
    assert estimate < 4 * peak, (estimate, peak)
