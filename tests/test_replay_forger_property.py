"""The careful forger, as a property: no consistent edit of any field replays as agreeing.

For every field of genuine v1, v2 and v3 reports (every op, a failing report, a self-test, a
lifecycle on a backend with command contexts and one without, a not_run record), a draw
edits one field or one output, then re-stamps what any forger can (digests, counts, status,
reason, metrics and segment records, from the edited bits). Replay must then say ``agrees``
only when the edited document is semantically the same evidence: equal to the original
in every field but the claimed ones, the outputs compared bit for bit.

What replay without ``--rerun`` cannot know is the candidate's testimony (its output bits
and the storage it reports): an edit of those is allowed to agree only when re-running the
candidate says its stored bits do not reproduce. An edit of the check (its ``config``) that
leaves the recomputed reference bit-exact is allowed to agree only when the candidate, re-run
under the edited check, reproduces its stored bits: then the document is true of that check. A result without the candidate's output
(not_run, a candidate that raised) keeps a reason nothing can re-derive; replay says so in a
note, and the property treats that reason as claimed. In v3's ``computed_by``, the
reference's module and array type are bound (replay recomputes the reference), the
candidate's are its testimony (bound by re-running it), and versions, BLAS and the probe's
sums are claimed.
"""

from __future__ import annotations

import functools
import json
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diffcheck import ReportError
from diffcheck.config import make_check
from diffcheck.ops import OPS
from diffcheck.report import replay
from diffcheck.runner import run_check
from fakes import FakeAdapter, named_for
from forgery import as_v1, as_v2, document, output, restamp, set_output

#: Fake candidates are named as what they are (tests/conftest.py registers them).
pytestmark = pytest.mark.usefixtures("fake_backends")

#: Draws per schema version; three versions make the CI run's total (2,100).
CASES = int(os.environ.get("DIFFCHECK_FORGER_CASES", "700"))

CLAIMED = (
    ("environment",),
    ("execution_path",),
    ("configured_precision", "kernel_entrypoint"),
    ("executed_precision", "kernel_entrypoint"),
    ("started_at",),
    ("finished_at",),
    ("execution_elapsed_ms",),
    ("computed_by", "reference", "version"),
    ("computed_by", "reference", "blas"),
    ("computed_by", "candidate", "version"),
    ("computed_by", "candidate", "blas"),
    ("computed_by", "probe"),
)
#: Fields a forger writes directly; re-stamping them would undo the edit.
STAMPED = ("status", "reason", "metrics", "segments", "submission_metrics")
#: The candidate's testimony: bound only by re-running it.
TESTIMONY = (("result", "actual"), ("executed_precision",), ("computed_by", "candidate"))
#: The check the candidate ran: an edit of it that the recomputed reference does not notice
#: (an ``eps`` 0.1% larger, say) is a true report of the edited check when the candidate,
#: re-run under it, gives the stored bits again; only re-running it can tell.
RERUN_BOUND = (("config",),)

# Small shapes: a draw replays in milliseconds.
SMALL: dict[str, dict[str, Any]] = {
    "rms-norm": {"tokens": 2, "dim": 8},
    "gemm": {"m": 3, "n": 4, "k": 5},
    "silu-mul": {"tokens": 2, "intermediate": 8},
    "context-lifecycle": {"tokens": 1, "intermediate": 2, "k": 3},
    "softmax": {"tokens": 2, "dim": 8},
    "layer-norm": {"tokens": 2, "dim": 8},
    "add-rms-norm": {"tokens": 2, "dim": 8},
    "rope": {"tokens": 2, "heads": 1, "head_dim": 8},
    "attention": {"tokens": 2, "kv_len": 4, "heads": 2, "kv_heads": 1, "head_dim": 8},
    "gelu": {"tokens": 2, "dim": 8},
}


def _genuine(directory: Path) -> dict[str, dict[str, Any]]:
    cases: dict[str, tuple[Any, dict[str, Any]]] = {
        op: (make_check("array_api_strict", op, **SMALL.get(op, {})), {}) for op in OPS
    }
    lifecycle = SMALL["context-lifecycle"]
    cases |= {
        "failed-gemm": (
            make_check("array_api_strict", "gemm", m=4, n=8, k=6),
            {"candidate": FakeAdapter("scale_segment")},
        ),
        "lifecycle-contexts": (
            make_check("array_api_strict", "context-lifecycle", **lifecycle),
            {"candidate": FakeAdapter()},
        ),
        "lifecycle-contexts-failed": (
            make_check("array_api_strict", "context-lifecycle", **lifecycle),
            {"candidate": FakeAdapter("scale_segment")},
        ),
        "self-test": (make_check("numpy:cpu", "gemm", m=2, n=3, k=4, allow_self_test=True), {}),
        "not-run": (make_check("cupy", "gemm", m=2, n=3, k=4), {}),
    }
    reports = {}
    for name, (check, kwargs) in cases.items():
        path = directory / f"{name}.json"
        run_check(named_for(check, kwargs.get("candidate")), path, **kwargs)
        data = json.loads(path.read_text())
        assert replay(document(data)).agrees, name
        reports[name] = data
        reports[f"{name} (v2)"] = as_v2(data)
        reports[f"{name} (v1)"] = as_v1(data)
    assert "submission_phases" not in reports["context-lifecycle"]  # four chains
    assert "submission_phases" in reports["lifecycle-contexts"]
    return reports


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list) and path[-1:] != ("f32_bits",):
        return [path] + [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*path, i))]
    if path[-1:] == ("base64",):
        return []
    return [path]


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(data, path[:-1])[path[-1]] = value


def _replacements(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value, 1, "true"]
    if isinstance(value, int):
        return [value + 1, value - 1, value * 2, 0, value + 1000, True, float(value) + 0.5]
    if isinstance(value, float):
        return [value * 2, value / 2, -value, value + abs(value) * 1e-3 + 1e-30, "NaN", 0.0]
    if isinstance(value, str):
        tokens = ["passed", "failed", "not_run", "numpy", "torch:cpu", "f16", "bf16", "f32", ""]
        return [value + "x", *(t for t in tokens if t != value)]
    if isinstance(value, list):
        return [value[:-1], value + value[-1:], list(reversed(value))] if value else [[0]]
    return [0, "x", 1.0, True, []]


OUTPUT_EDITS = ("nudge", "copy-other", "scale", "equal-values", "truncate", "zero")


def _edit_output(data: dict[str, Any], which: str, how: str, index: int, ulps: int) -> None:
    values = output(data, which)
    other = output(data, "actual" if which == "reference" else "reference")
    if values.size == 0:
        return
    index %= values.size
    if how == "nudge":
        values.view(np.int32)[index] += ulps
    elif how == "copy-other":
        values = other
    elif how == "scale":
        values = values * np.float32(1.5)
    elif how == "equal-values":
        values = np.linspace(-1, 1, values.size, dtype=np.float32)
        set_output(data, "actual" if which == "reference" else "reference", values)
    elif how == "truncate":
        values = values[:-1]
    else:
        values[index] = 0.0
    set_output(data, which, values)


def _canonical(data: dict[str, Any]) -> dict[str, Any]:
    """What the document says as evidence: the validated model less its claimed fields."""
    dumped: dict[str, Any] = document(data).model_dump()
    for path in CLAIMED:
        parent: Any = dumped
        for key in path[:-1]:  # a claimed field the document's version or result lacks
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    result = dumped["result"]
    if result is not None:
        for which in ("reference", "actual"):
            if result[which] is not None:
                result[which] = output(data, which).view(np.uint32).tolist()
        if result["actual"] is None:  # nothing was compared: the reason is the runner's word
            result.pop("reason")
            result.pop("status")
    return dumped


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        # tighter than replay's allowance for a stored figure (report.figures.sum_allowance)
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-14)
    return type(a) is type(b) and a == b


def _reproduced(checked: list[str]) -> bool:
    bit_exact = checked[:1] == ["reference recomputed from config: bit-exact"]
    return bit_exact and any("stored bits reproduce bit-exact" in line for line in checked)


def _check(
    original: dict[str, Any],
    data: dict[str, Any],
    outcome: Any,
    testimony: bool,
    rerun_bound: bool = False,
) -> None:
    if outcome is None or not outcome.agrees:
        return  # refused or disagrees
    if testimony:
        # Re-run, the candidate must reproduce its stored bits (or they disagree): an edit of
        # its testimony that agrees is the same evidence, or a declared non-determinism.
        assert not any("do not reproduce" in line for line in outcome.checked) or any(
            "declared non-deterministic" in line for line in outcome.checked
        ), outcome.checked
    if rerun_bound and _reproduced(outcome.checked):
        # Both sides of the edited check were run again and gave the stored bits: the edited
        # document is true evidence about the check it names.
        return
    if data["result"]["actual"] is None:
        # Nothing was compared: replay may agree that the record is well-formed, and must
        # say it is no evidence about the backend and never a pass.
        assert not outcome.passed
        assert any("not evidence" in n or "cannot be re-derived" in n for n in outcome.notes)
        return
    forged, honest = _canonical(data), _canonical(original)
    if any("within 1 ULP" in line for line in outcome.checked):
        # The stated bound: a reference within 1 float32 ULP of the recomputation is the
        # world's reference; the figures measured against it move with it, the verdict not.
        for document_ in (forged, honest):
            document_["result"]["reference"] = None
            document_["result"]["metrics"] = None
            document_.pop("segments", None)
            document_.pop("submission_metrics", None)
    if forged["reference_backend"] != honest["reference_backend"]:
        # The reference is bound by its bits: another backend whose recomputation gives
        # these same bits (NumPy and torch both accumulate in float64) is the same reference.
        assert outcome.checked[0].startswith("reference recomputed from config")
        forged["reference_backend"] = honest["reference_backend"]
    assert _same(forged, honest), (outcome.checked, outcome.notes)


@functools.cache
def _reports() -> dict[str, dict[str, Any]]:
    """The genuine reports, built once per module run (a strategy draws from them)."""
    with tempfile.TemporaryDirectory() as directory:  # only their JSON is kept
        return _genuine(Path(directory))


@pytest.fixture(scope="module")
def genuine() -> dict[str, dict[str, Any]]:
    return _reports()


@dataclass(frozen=True)
class Forgery:
    """One consistent edit of one genuine report."""

    name: str
    path: tuple[Any, ...] | None = None
    value: Any = None
    output: tuple[str, str, int, int] | None = None

    @property
    def testimony(self) -> bool:
        """Whether it edits what only the candidate can vouch for (replayed with --rerun)."""
        if self.output is not None:
            which, how = self.output[:2]
            return which == "actual" or how in ("copy-other", "equal-values")
        assert self.path is not None
        return any(self.path[: len(prefix)] == prefix for prefix in TESTIMONY)

    @property
    def rerun_bound(self) -> bool:
        """Whether it edits the check itself (replayed with --rerun: see RERUN_BOUND)."""
        return self.path is not None and any(
            self.path[: len(prefix)] == prefix for prefix in RERUN_BOUND
        )

    def apply(self, doc: dict[str, Any]) -> None:
        if self.output is not None:
            _edit_output(doc, *self.output)
            restamp(doc)
            return
        assert self.path is not None
        _set(doc, self.path, self.value)
        stamped = (self.path[:1] == ("result",) and self.path[1:2] and self.path[1] in STAMPED) or (
            self.path[:1] in (("segments",), ("submission_metrics",))
        )
        if not stamped:
            restamp(doc)


@st.composite
def forgeries(draw: st.DrawFn, version: int) -> Forgery:
    suffix = {1: " (v1)", 2: " (v2)"}.get(version)
    names = sorted(
        n
        for n in _reports()
        if (n.endswith(suffix) if suffix else not n.endswith((" (v1)", " (v2)")))
    )
    name = draw(st.sampled_from(names))
    original = _reports()[name]
    outputs = [w for w in ("reference", "actual") if original["result"][w] is not None]
    if outputs and draw(st.booleans()) is True:
        which = draw(st.sampled_from(outputs))
        how = draw(st.sampled_from(OUTPUT_EDITS))
        index = draw(st.integers(0, 1 << 20))
        ulps = draw(st.sampled_from([2, 3, 100, 1 << 20]))
        return Forgery(name, output=(which, how, index, ulps))
    path = draw(st.sampled_from(_leaves(original)))
    return Forgery(name, path, draw(st.sampled_from(_replacements(_get(original, path)))))


def _check_forgery(forgery: Forgery) -> None:
    original = _reports()[forgery.name]
    data = json.loads(json.dumps(original))
    try:
        forgery.apply(data)
        forged = document(data)
    except ReportError:
        return  # refused when read
    rerun = forgery.testimony or forgery.rerun_bound
    outcome = replay(forged, rerun=rerun)
    _check(original, data, outcome, forgery.testimony, forgery.rerun_bound)


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forgery=forgeries(3))
def test_no_consistent_forgery_of_a_v3_field_replays_as_agreeing(forgery: Forgery) -> None:
    _check_forgery(forgery)


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forgery=forgeries(2))
def test_no_consistent_forgery_of_a_v2_field_replays_as_agreeing(forgery: Forgery) -> None:
    _check_forgery(forgery)


@settings(max_examples=CASES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forgery=forgeries(1))
def test_no_consistent_forgery_of_a_v1_field_replays_as_agreeing(forgery: Forgery) -> None:
    _check_forgery(forgery)


def test_every_op_replays_with_its_reference_recomputed(
    genuine: dict[str, dict[str, Any]],
) -> None:
    for name, data in genuine.items():
        outcome = replay(document(data))
        assert outcome.agrees, (name, outcome.disagreements)
        if data["result"]["reference"] is not None:
            assert outcome.checked[0].startswith("reference recomputed from config"), name
        assert outcome.self_test == name.startswith("self-test"), name


# -- the candidate's side: a report renamed to another backend --------------------------------

#: Names a forger relabels a genuine report with: absent here, another library here, another
#: device of the same library, a fake under another fault, and the real name's variants.
RENAMES = (
    "metal",
    "mlx:gpu",
    "mlx:cpu",
    "mlx",
    "torch:cpu",
    "wgpu",
    "example:cpu",
    "array_api_strict",
    "fake",
    "fakescalesegment",
    "fakechains",
    "cupy",
)


def _same_adapter(first: str, second: str) -> bool:
    """Whether two names resolve to one adapter class and identity (a true alias)."""
    from diffcheck.adapters import resolve

    a, b = resolve(first), resolve(second)
    return type(a) is type(b) and a.identity() == b.identity()


@st.composite
def renames(draw: st.DrawFn) -> tuple[str, str, bool]:
    names = sorted(
        n
        for n in _reports()
        if not n.endswith((" (v1)", " (v2)")) and _reports()[n]["result"]["actual"] is not None
    )
    return draw(st.sampled_from(names)), draw(st.sampled_from(RENAMES)), draw(st.booleans())


@settings(max_examples=max(60, CASES // 5), deadline=None)
@given(rename=renames())
def test_no_renamed_candidate_replays_as_a_pass_of_the_new_name(
    rename: tuple[str, str, bool],
) -> None:
    from diffcheck.adapters import resolve

    name, target, copy_library = rename
    original = _reports()[name]
    source = original["config"]["require_backend"]
    data = json.loads(json.dumps(original))
    data["config"]["require_backend"] = data["result"]["backend"] = target
    candidate = (data.get("computed_by") or {}).get("candidate")
    if copy_library and candidate is not None:
        library = resolve(target).identity()[0]
        candidate |= {"namespace": library, "module": library.split(".")[0]}
    try:
        forged = document(data)
    except ReportError:
        return
    outcome = replay(forged)
    if not outcome.agrees or _same_adapter(source, target):
        return
    # Agreeing under another name is allowed only as that name's word, said beside it ...
    claimed = dict(outcome.claims)
    assert "result.backend" in claimed or "result.backend device" in claimed, outcome.claims
    # ... and --rerun, which runs the named backend here, refuses it unless it reproduces
    # the stored output bit for bit (then the name computed it).
    again = replay(forged, rerun=True)
    assert not again.agrees or any("reproduce bit-exact" in c for c in again.checked), again.checked
