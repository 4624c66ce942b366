"""A sweep never counts NumPy under another namespace as a pass (issue 33).

The example plugin computes through a namespace of its own but returns NumPy's arrays and
sums as NumPy does: its report's pair is one library, so its row is failed and the sweep
exits nonzero, as its replay says NOT INDEPENDENT.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sweep_helpers import SweepRun, write_matrix

from diffcheck.cli import main

EXAMPLE = """
schema_version = 1
[[pairs]]
candidate = "example:cpu"
[ops.gemm]
shapes = [{ m = 1, n = 3, k = 5 }]
"""


def test_numpy_inside_the_example_plugin_is_not_counted_passed(
    tmp_path: Path, sweep_cli: Callable[..., SweepRun]
) -> None:
    run = sweep_cli(write_matrix(tmp_path, EXAMPLE), tmp_path / "out")
    assert run.code == 1
    (row,) = run.rows().values()
    assert row["status"] == "passed"  # the numbers agree: it is NumPy
    assert row["not_independent"] is not None
    assert row["not_independent"].startswith("NOT INDEPENDENT: both sides returned numpy arrays")
    assert run.summary["counts"]["passed"] == 0
    assert main(["replay", str(run.directory)]) == 0  # the views agree with the report
    assert main(["replay", "--require-pass", str(run.directory)]) == 1
