"""Reduce a located divergence to the fewest calls that still diverge, and write it as a script.

:func:`reduce` locates the first wrong call of a program (or, when every call is right on the
reference's inputs, the first call whose carried error breaks its bound), records the
program's prefix up to that call on the reference, and tries programs of growing size: the
call alone on the reference's exact inputs of that call, then with the calls that produced
its inputs, one producer level more each time. The first that still diverges on the
candidate, judged by the script's own check (:mod:`._repro_check`), is the reduction; its
inputs are the reference's values where the reduced program starts.

:meth:`Reduction.write` writes it as a standalone script importing only NumPy and the two
namespaces, with its inputs stored beside it (``.npz``). The script exits 1 when the
divergence reproduces and says how far apart the two sides are, 0 when it does not.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import Adapter
from ..errors import ConfigError
from ..values.bounds import bound_for
from ..values.call import _to_device, host_inputs
from ..values.dtypes import dtype_name
from ..values.spec import is_standard_name
from ._proxy import RawCall, Recorder, RecordingNamespace, is_array
from ._repro_script import Recorded, Writer, script_text, shown_site
from ._result import Localization, LocatedCall

__all__ = ["ReducedCall", "Reduction", "reduce_on"]


class _Stop(Exception):
    """Ends the reference's recorded run at the target call."""


@dataclass(frozen=True)
class ReducedCall:
    """One call of the reduced program: its index in the original program and its site."""

    index: int
    function: str
    site: str


@dataclass(frozen=True)
class Reduction:
    """The smallest program found that still diverges, ready to be written as a script."""

    located: Localization
    #: The call reduced to: the first wrong call, else the first whose carried error breaks.
    target: LocatedCall
    #: Calls of the original program up to and including the target (the prefix kept).
    prefix: int
    calls: tuple[ReducedCall, ...]
    #: The script's own check on the reduced program: how far apart the two sides are.
    detail: str
    script: str = field(repr=False)
    inputs: dict[str, Any] = field(repr=False)
    #: For an elementwise call: the elements kept (those beyond the bound) and of how many.
    elements: tuple[int, int] | None = None

    def write(self, path: str | Path) -> Path:
        """Write the script at ``path`` and its inputs beside it (same name, ``.npz``).

        Raises
        ------
        ConfigError
            When either file exists already (a repro is never overwritten).
        """
        script = Path(path)
        stored = script.with_suffix(".npz")
        for target in (script, stored):
            if target.exists():
                raise ConfigError(
                    f"{target} exists already; pass a new path (a repro is never overwritten)"
                )
        with stored.open("xb") as handle:
            np.savez(handle, **self.inputs)
        with script.open("x", encoding="utf-8") as handle:
            handle.write(self.script)
        return script

    def __str__(self) -> str:
        names = ", ".join(f"#{c.index} {c.function}" for c in self.calls)
        on = f" on {self.elements[0]} of {self.elements[1]} elements" if self.elements else ""
        return (
            f"{self.located.candidate} vs {self.located.reference}: #{self.target.index} "
            f"{self.target.function} reduced from a prefix of {self.prefix} calls to "
            f"{len(self.calls)} ({names}){on}; {self.detail}"
        )


def _record(fn: Callable[..., Any], hosts: list[Any], reference: Adapter, stop: int) -> Recorded:
    recorded = Recorded()

    def observe(call: RawCall) -> None:
        recorded.calls.append(call)
        for position, array in enumerate(call.outputs):
            recorded.producers[id(array)] = (call.index, position)
            recorded.keep.append(array)
        if call.index >= stop:
            raise _Stop

    recorder = Recorder(observe)
    xp = reference.namespace()
    with reference.computing(), recorder.running():
        raw = [_to_device(reference, xp, h) for h in hosts]
        recorded.keep.extend(raw)
        with contextlib.suppress(_Stop):
            fn(RecordingNamespace(xp, recorder), *[recorder.wrap(a) for a in raw])
    return recorded


def _producers(call: RawCall, recorded: Recorded) -> set[int]:
    found: set[int] = set()

    def walk(value: Any) -> None:
        if is_array(value):
            hit = recorded.producers.get(id(value))
            if hit is not None:
                found.add(hit[0])
        elif isinstance(value, tuple | list):
            for item in value:
                walk(item)

    walk(call.args)
    walk(tuple(call.kwargs.values()))
    return found


def _module(adapter: Adapter) -> str:
    name = getattr(adapter.namespace(), "__name__", None)
    if not isinstance(name, str) or sys.modules.get(name) is not adapter.namespace():
        raise ConfigError(
            f"{adapter.spec}'s namespace is not an importable module; a repro script imports "
            "both namespaces by name (use a backend whose namespace is a module)"
        )
    return name


def _bound(call: RawCall) -> dict[str, Any]:
    """The bound the script holds the target's first output to."""
    output = call.outputs[0]
    arrays = [a for a in call.args if is_array(a)]
    reduced = max(1, int(arrays[0].size) // max(1, int(output.size))) if arrays else 1
    function = call.name if call.via != "array" and is_standard_name(call.name) else None
    found = bound_for(function, dtype_name(output.dtype), reduced=reduced)
    return {"kind": found.kind, "ulps": found.ulps, "nmse": found.nmse, "atol": found.atol}


def _run(
    script: str, inputs: dict[str, Any], reference: Adapter, candidate: Adapter
) -> tuple[bool, str]:
    """The script's own verdict on its program, run on both adapters' namespaces."""
    scope: dict[str, Any] = {"__name__": "diffcheck_repro"}
    exec(compile(script, "<repro>", "exec"), scope)  # the very text that will be written
    with reference.computing():
        expected = scope["program"](reference.namespace(), inputs)
    with candidate.computing():
        try:
            got = scope["program"](candidate.namespace(), inputs)
            verdict: tuple[bool, str] = scope["compare"](expected, got)
        except Exception as error:  # the candidate refusing the call is a divergence too
            return True, f"the candidate raised {type(error).__name__}: {error}"
    return verdict


def _header(target: LocatedCall, lines: str, located: Localization) -> str:
    return (
        f"A divergence of {located.candidate} from {located.reference}: {target.function} "
        f"(call #{target.index} at {shown_site(target.site)}), reduced from the first {lines}."
        "\n\nRun it as it is: exit status 1 when it reproduces, 0 when it does not. Its "
        "inputs are the .npz file of the same name beside it; each library runs on its "
        "default device."
    )


def _fewer_elements(
    script: str,
    inputs: dict[str, Any],
    bound: dict[str, Any],
    reference: Adapter,
    candidate: Adapter,
) -> tuple[dict[str, Any], tuple[int, int]] | None:
    """For an elementwise program (a ULP bound, every input the output's shape): the inputs
    at the elements beyond the bound alone, when those still diverge; else None."""
    if bound["kind"] != "ulp":
        return None
    scope: dict[str, Any] = {"__name__": "diffcheck_repro"}
    exec(compile(script, "<repro>", "exec"), scope)
    with reference.computing():
        expected = scope["to_host"](scope["program"](reference.namespace(), inputs))
    with candidate.computing():
        got = scope["to_host"](scope["program"](candidate.namespace(), inputs))
    if (
        expected.shape != got.shape
        or expected.dtype != got.dtype
        or expected.dtype.kind != "f"
        or expected.ndim == 0
        or any(np.shape(v) != expected.shape for v in inputs.values())
        or np.isnan(expected).any()
        or np.isnan(got).any()
    ):
        return None
    beyond = scope["ulp_gap"](expected, got) > bound["ulps"]
    if beyond.all() or not beyond.any():
        return None
    fewer = {key: np.ascontiguousarray(value[beyond]) for key, value in inputs.items()}
    diverges, _ = _run(script, fewer, reference, candidate)
    return (fewer, (int(beyond.sum()), int(expected.size))) if diverges else None


def reduce_on(
    fn: Callable[..., Any],
    inputs: tuple[Any, ...],
    reference: Adapter,
    candidate: Adapter,
    located: Localization,
) -> Reduction:
    """Reduce ``located``'s divergence (see the module docstring)."""
    target = located.first_wrong or located.first_drift
    if target is None:
        split = located.path_split
        where = (
            f"; the two sides took different paths at call {split.index}, which a script of "
            "the calls cannot reproduce"
            if split is not None
            else ""
        )
        raise ConfigError(
            f"no call of the program diverges on {candidate.spec}{where}; there is nothing "
            "to reduce"
        )
    if located.precision != "f32":
        raise ConfigError(
            f'precision "{located.precision}": a repro script runs the inputs in their own '
            'dtypes; reduce at precision="f32" with inputs cast as you need them'
        )
    modules = (_module(reference), _module(candidate))
    recorded = _record(fn, host_inputs(inputs), reference, target.index)
    calls = recorded.calls
    if len(calls) <= target.index or (calls[target.index].name, calls[target.index].site) != (
        target.function,
        target.site,
    ):
        raise ConfigError(
            "the program made other calls when run again; reduce needs a deterministic program"
        )
    last = calls[target.index]
    bound = _bound(last)
    kept, frozen, tried, why = {target.index}, set(), [], ""
    while True:
        writer = Writer(reference, recorded, kept)
        failed = [i for i in sorted(kept) if not writer.call(calls[i])]
        if target.index in failed:
            raise ConfigError(
                f"#{target.index} {target.function} at {target.site} cannot be written as a "
                "script (an argument that is neither an array, a literal nor a dtype)"
            )
        if failed:  # a producer that cannot be written: its outputs are stored instead
            kept -= set(failed)
            frozen |= set(failed)
            continue
        lines = f"{target.index + 1} calls of the program to {len(kept)}"
        script = script_text(writer, last, bound, _header(target, lines, located), modules)
        diverges, why = _run(script, writer.inputs, reference, candidate)
        if diverges:
            stored, elements = writer.inputs, None
            fewer = _fewer_elements(script, stored, bound, reference, candidate)
            if fewer is not None:
                stored, elements = fewer
                lines += f", on the {elements[0]} of its {elements[1]} elements beyond the bound"
                script = script_text(writer, last, bound, _header(target, lines, located), modules)
                diverges, why = _run(script, stored, reference, candidate)
                assert diverges  # _fewer_elements kept these because they diverge
            return Reduction(
                located,
                target,
                target.index + 1,
                tuple(ReducedCall(i, calls[i].name, calls[i].site) for i in sorted(kept)),
                why,
                script,
                stored,
                elements,
            )
        tried.append(len(kept))
        grow = set().union(*(_producers(calls[i], recorded) for i in kept)) - kept - frozen
        if not grow:
            raise ConfigError(
                f"#{target.index} {target.function} does not diverge when run alone or with "
                f"the calls that feed it ({', '.join(map(str, tried))} calls tried; last: {why})"
            )
        kept |= grow
