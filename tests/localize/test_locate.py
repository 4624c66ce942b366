"""diffcheck.locate names the first wrong call of a program; the calls after it inherit."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

import diffcheck
import localize_programs as programs
from diffcheck.localize import Localization, locate
from localize_fakes import BuggyAdapter

RNG = np.random.default_rng(0)


def _planted_line(fn: Any, bug: str) -> int:
    """The line of ``fn`` marked ``# planted: BUG``."""
    lines, start = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if f"# planted: {bug}" in line:
            return start + offset
    raise AssertionError(f"{fn.__name__} marks no call with {bug}")


CASES = {
    "exp-f16": (programs.softmax_naive, (RNG.standard_normal((4, 16)).astype(np.float32) * 6,)),
    "sqrt-ulp": (
        programs.rms_norm_then_scale,
        (
            RNG.standard_normal((4, 16)).astype(np.float32),
            RNG.standard_normal(16).astype(np.float32),
        ),
    ),
    "matmul-square-transpose": (
        programs.two_layer_mlp,
        (
            RNG.standard_normal((4, 16)).astype(np.float32),
            RNG.standard_normal((16, 16)).astype(np.float32),
            RNG.standard_normal((16, 4)).astype(np.float32),
        ),
    ),
    "var-axis": (programs.layer_norm, (RNG.standard_normal((16, 16)).astype(np.float32),)),
    "multiply-f32": (programs.scaled_energy, (RNG.standard_normal(64), RNG.standard_normal(64))),
}


@pytest.mark.parametrize("bug", sorted(CASES))
def test_each_planted_bug_is_located_at_its_call_and_the_rest_inherit(bug: str) -> None:
    fn, args = CASES[bug]
    result = locate(fn, *args, candidate=BuggyAdapter(bug))
    assert not result.passed
    assert not result
    first = result.first_wrong
    assert first is not None
    assert first.site == f"{programs.__file__}:{_planted_line(fn, bug)}"
    assert first.function == bug.split("-")[0]
    assert not first.local.passed
    wrong = [c.index for c in result.calls if c.status == "wrong"]
    assert wrong == [first.index], result.table()
    later = [c for c in result.calls if c.index > first.index]
    assert any(c.status == "inherits" for c in later), result.table()
    assert all(c.status == "ok" for c in result.calls if c.index < first.index)
    assert f"first wrong call: #{first.index} {first.function}" in str(result)


@pytest.mark.parametrize("bug", sorted(CASES))
def test_the_same_programs_pass_on_a_backend_without_the_bug(bug: str) -> None:
    fn, args = CASES[bug]
    result = locate(fn, *args, candidate=BuggyAdapter("none"))
    assert result.passed, str(result)
    assert result.first_wrong is None
    assert {c.status for c in result.calls} == {"ok"}
    assert len(result.calls) == result.total_calls > 1


def test_a_program_that_is_never_called_through_the_namespace_records_nothing() -> None:
    result = locate(lambda xp, x: x, np.ones(4, np.float32), candidate=BuggyAdapter("none"))
    assert result.total_calls == 0
    assert result.passed


def test_a_real_divergence_mlx_computes_float64_exp_at_float32() -> None:
    pytest.importorskip("mlx.core", reason="MLX is not installed here")
    x = RNG.standard_normal((4, 8))
    result = locate(programs.twenty_calls_with_exp, x, candidate="mlx:cpu")
    assert result.total_calls == 20
    first = result.first_wrong
    assert first is not None, result.table()
    assert first.function == "exp"
    line = next(
        n
        for n, text in enumerate(inspect.getsourcelines(programs.twenty_calls_with_exp)[0])
        if "the real divergence" in text
    )
    assert first.site.endswith(
        f":{inspect.getsourcelines(programs.twenty_calls_with_exp)[1] + line}"
    )
    assert first.output_dtypes == ("float64",)
    assert [c.index for c in result.calls if c.status == "wrong"] == [first.index]


def test_paths_that_split_on_a_value_are_reported_where_they_split() -> None:
    x = np.linspace(1.0, 4.0, 64, dtype=np.float32)
    true_total = float(np.sum(np.sqrt(x)))
    program = programs.branching(true_total * (1 + 5e-5))  # the sqrt-ulp bug crosses it
    result = locate(program, x, candidate=BuggyAdapter("sqrt-ulp"))
    split = result.path_split
    assert split is not None
    assert split.reference is not None
    assert split.candidate is not None
    assert (split.reference[0], split.candidate[0]) == ("exp", "log")
    assert "different paths" in str(result)
    assert not result
    # Calls after the split are not compared as if they were the same call.
    assert all(c.index < split.index for c in result.calls)


def test_a_small_memory_budget_runs_again_per_window_with_the_same_answer() -> None:
    fn, args = CASES["sqrt-ulp"]
    whole = locate(fn, *args, candidate=BuggyAdapter("sqrt-ulp"))
    windowed = locate(fn, *args, candidate=BuggyAdapter("sqrt-ulp"), max_memory=1200)
    assert whole.passes == 1
    assert windowed.passes > 1
    assert windowed.peak_stored_bytes < whole.peak_stored_bytes
    assert [(c.function, c.status) for c in windowed.calls] == [
        (c.function, c.status) for c in whole.calls
    ]
    assert windowed.first_wrong == whole.first_wrong


def test_reduced_precision_candidates_are_judged_in_their_own_dtype() -> None:
    pytest.importorskip("mlx.core", reason="MLX is not installed here")
    fn, args = CASES["matmul-square-transpose"]
    for precision in ("f16", "bf16"):
        result = locate(fn, *args, candidate="mlx:cpu", precision=precision)
        assert result.passed, result.table()
        assert (
            result.calls[0].candidate_input_dtypes[0]
            == {"f16": "float16", "bf16": "bfloat16"}[precision]
        )


def test_a_caller_bound_replaces_the_values_model_bound() -> None:
    fn, args = CASES["sqrt-ulp"]
    loose = locate(fn, *args, candidate=BuggyAdapter("sqrt-ulp"), nmse_bounds={"sqrt": 1e-6})
    assert all(c.function != "sqrt" or c.status != "wrong" for c in loose.calls)


def test_misuse_is_refused() -> None:
    with pytest.raises(diffcheck.ConfigError, match="precision"):
        locate(programs.layer_norm, np.ones((2, 2)), candidate=BuggyAdapter("none"), precision="f8")
    with pytest.raises(diffcheck.ConfigError, match="max_memory"):
        locate(programs.layer_norm, np.ones((2, 2)), candidate=BuggyAdapter("none"), max_memory=0)


def test_the_result_renders_as_text_rich_and_html() -> None:
    fn, args = CASES["var-axis"]
    result = locate(fn, *args, candidate=BuggyAdapter("var-axis"))
    assert isinstance(result, Localization)
    page = result.to_html()
    assert page.startswith("<!doctype html>")
    assert "<svg" in page
    assert page.count("<tr class=") == len(result.calls)
    assert 'class="wrong"' in page
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(result)
    assert "var" in console.export_text()


def test_a_precision_the_candidate_lacks_is_refused_before_anything_runs() -> None:
    class NoBfloat16(BuggyAdapter):
        def capabilities(self) -> Any:
            from diffcheck.adapters import Capabilities

            return Capabilities(precisions=("f32", "f16"))

    ran: list[str] = []

    def program(xp: Any, x: Any) -> Any:
        ran.append(xp.__name__)
        return xp.exp(x)

    with pytest.raises(diffcheck.BackendError, match="does not execute precision bf16"):
        locate(program, np.ones(4, np.float32), candidate=NoBfloat16("none"), precision="bf16")
    assert ran == []


def test_the_first_wrong_call_is_saved_as_a_bundle_that_replays(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mlx.core", reason="MLX is not installed here")
    from diffcheck.cli import main

    x = RNG.standard_normal((4, 8))
    result = locate(programs.twenty_calls_with_exp, x, candidate="mlx:cpu")
    assert result.bundle_note == "bundled"
    path = result.save_bundle(tmp_path / "exp.json")
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "REPRODUCES: exp [value]" in out
    with pytest.raises(diffcheck.ConfigError, match="cannot create"):
        result.save_bundle(path)  # never over an existing file


def test_a_bundle_exists_only_for_a_wrong_call_of_the_standard() -> None:

    def program(xp: Any, x: Any) -> Any:
        return xp.sum(x[1:] * 2.0)

    passing = locate(program, np.arange(8.0), candidate=BuggyAdapter("none"))
    assert passing.bundle is None
    assert passing.bundle_note == "no wrong call"
    with pytest.raises(diffcheck.ConfigError, match="no bundle to save: no wrong call"):
        passing.save_bundle("never-written.json")
    fn, args = CASES["var-axis"]
    located = locate(fn, *args, candidate=BuggyAdapter("var-axis"))
    assert located.first_wrong is not None
    assert located.bundle is not None, located.bundle_note
    assert located.bundle.function == "var"


@pytest.mark.parametrize(
    ("name", "via", "args", "why"),
    [
        ("__getitem__", "array", (np.ones(3), slice(1, None)), "index, attribute or method"),
        ("reshape", "array", (np.ones(4), (2, 2)), "index, attribute or method"),
        ("__loader__.set_data", "namespace", (np.ones(3),), "not a function of the standard"),
        ("softmax", "namespace", (np.ones(3),), "not a function of the standard"),
        ("exp", "namespace", ((np.ones(3, np.float32), "bfloat16"),), "bfloat16 input"),
        ("exp", "namespace", (object(),), "positional argument of type object"),
    ],
)
def test_calls_a_bundle_cannot_hold_say_why(name: str, via: str, args: Any, why: str) -> None:
    from diffcheck.adapters import resolve
    from diffcheck.localize._bundle import bundle_for_call

    bundle, note = bundle_for_call(name, via, args, {}, resolve("numpy"), BuggyAdapter("none"))
    assert bundle is None
    assert why in note


@pytest.mark.parametrize("bug", sorted(CASES))
def test_inputs_moved_together_give_the_answer_of_inputs_moved_one_by_one(
    bug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from diffcheck.localize._judge import Comparer

    fn, args = CASES[bug]
    together = locate(fn, *args, candidate=BuggyAdapter(bug))
    monkeypatch.setattr(Comparer, "prefetch", lambda self, hosts: None)
    alone = locate(fn, *args, candidate=BuggyAdapter(bug))
    assert together.first_wrong is not None
    assert repr(together.calls) == repr(alone.calls)  # repr: NaN figures compare equal


@pytest.mark.parametrize("bug", sorted(CASES))
def test_a_cpu_adapter_judges_as_a_device_adapter_does(bug: str) -> None:
    # Named for the CPU, a candidate's window comes home array by array and its re-runs'
    # inputs move one by one (no prefetch, no join): the same figures, the same first call.
    fn, args = CASES[bug]
    device = locate(fn, *args, candidate=BuggyAdapter(bug))
    cpu = locate(fn, *args, candidate=BuggyAdapter(bug, device="cpu"))
    assert device.first_wrong is not None
    assert cpu.first_wrong is not None
    assert cpu.first_wrong.index == device.first_wrong.index
    assert repr(cpu.calls) == repr(device.calls)


def test_a_prefetched_input_holds_its_own_values_at_an_aligned_offset() -> None:
    from diffcheck.adapters import resolve
    from diffcheck.localize._judge import Comparer

    comparer = Comparer(resolve("numpy"), {})
    hosts = [np.arange(n, dtype=np.float32).reshape(-1, 1) + n for n in (3, 70, 1)]
    comparer.prefetch(hosts)
    moved = [comparer._moved[id(host)][1] for host in hosts]
    for host, view in zip(hosts, moved, strict=True):
        assert view.shape == host.shape
        assert np.array_equal(view, host)
        # Every view starts a multiple of 256 bytes after the first, as fresh arrays would.
        assert (view.ctypes.data - moved[0].ctypes.data) % 256 == 0
    assert moved[1].ctypes.data != moved[0].ctypes.data


@pytest.mark.parametrize("max_memory", [1 << 30, 300])  # one window; several
def test_each_call_carries_the_digest_of_the_reference_output(max_memory: int) -> None:
    # A digest is taken only for a call stored in its window: every call still has its own.
    import hashlib

    from diffcheck.localize._proxy import Recorder, RecordingNamespace

    x = RNG.standard_normal((4, 16)).astype(np.float32)
    outputs: list[list[Any]] = []
    recorder = Recorder(lambda call: outputs.append(call.outputs))
    with recorder.running():
        programs.twenty_calls_with_exp(RecordingNamespace(np, recorder), recorder.wrap(x))
    wanted = []
    for arrays in outputs:
        h = hashlib.sha256()
        for array in arrays:
            h.update(np.ascontiguousarray(array).tobytes())
        wanted.append(h.hexdigest()[:16])
    found = locate(
        programs.twenty_calls_with_exp, x, candidate=BuggyAdapter("none"), max_memory=max_memory
    )
    assert (found.passes > 1) == (max_memory < 1 << 30)
    assert [c.reference_digest for c in found.calls] == wanted


def _strided_outputs(xp: Any, x: Any) -> Any:
    t = xp.permute_dims(x, (1, 0))  # a NumPy view: not C-contiguous
    every_other = t[:, ::2]
    total = xp.sum(every_other)  # 0-d
    positive = every_other > 0  # bool
    return xp.where(positive, every_other, total)


def test_a_digest_reads_a_strided_a_0d_and_a_bool_output_in_c_order() -> None:
    import hashlib

    x = RNG.standard_normal((4, 6)).astype(np.float32)
    t = x.T
    every_other = t[:, ::2]
    total = np.sum(every_other)
    positive = every_other > 0
    outputs = [t, every_other, np.asarray(total), positive, np.where(positive, every_other, total)]
    wanted = [hashlib.sha256(np.ascontiguousarray(o).tobytes()).hexdigest()[:16] for o in outputs]
    found = locate(_strided_outputs, x, candidate=BuggyAdapter("none"))
    assert [c.function for c in found.calls] == [
        "permute_dims",
        "__getitem__",
        "sum",
        "greater",
        "where",
    ]
    assert [c.reference_digest for c in found.calls] == wanted
