"""What every operation provides: params, validation, shape, inputs and an Array-API definition."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from ..differ import Segment
from ..precision import PrecisionName, default_max_nmse

if TYPE_CHECKING:
    from ..launch import RawLaunch
    from .space import OpSpace

__all__ = ["HostInputs", "Op", "OpParams"]

HostInputs = dict[str, npt.NDArray[np.float32]]


class OpParams(BaseModel):
    """Base of every op's parameters: immutable, unknown keys rejected, types strict.

    Strict: ``"2112"``, ``2112.0`` and ``True`` are not element counts (lax pydantic would
    read them as 2112, 2112 and 1); an int is still a float parameter's value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


P = TypeVar("P", bound=OpParams)


class Op(abc.ABC, Generic[P]):
    """One operation, defined once and run by every backend through its namespace ``xp``.

    Subclasses set the class attributes and implement validation, inputs and ``compute``.
    ``compute`` receives arrays already in the executing backend's storage dtype and the
    dtype to accumulate in; it returns the output in the storage dtype.
    """

    #: The CLI token (``--op``) and the ``config.op`` value.
    name: ClassVar[str]
    #: Other CLI tokens accepted for this op (kept for the reference tool's spelling).
    aliases: ClassVar[tuple[str, ...]] = ()
    #: The ``result.op`` value.
    report_name: ClassVar[str]
    #: What this op exercises; written to the report's ``execution_path``.
    execution_path: ClassVar[str]
    #: What a passing check covers and what it does not; written to ``coverage``.
    coverage: ClassVar[str] = (
        "Only the selected operation, shape and storage precision on the named backend; "
        "excludes other shapes, precisions, fused production paths and performance claims."
    )
    #: The parameters model; its field names are the op's CLI options.
    params_model: ClassVar[type[OpParams]]
    #: Accumulate in float64 on a reference that supports it (the reference tool's CPU GEMM).
    wide_reference_accumulation: ClassVar[bool] = False
    #: Names of the segments judged on their own (wire names), or empty for none.
    segment_names: ClassVar[tuple[str, ...]] = ()
    #: Message labels of those segments, in the same order.
    segment_labels: ClassVar[tuple[str, ...]] = ()
    #: Default NMSE tolerances of this op where they must differ from the precision's bucket
    #: (:data:`diffcheck.precision.DEFAULT_MAX_NMSE`); each one says why in its op's module.
    tolerances: ClassVar[Mapping[PrecisionName, float]] = {}

    def default_max_nmse(self, precision: PrecisionName) -> float:
        """The tolerance a check of this op uses at ``precision`` when none is given."""
        return self.tolerances.get(precision) or default_max_nmse(precision)

    def params(self, **values: Any) -> P:
        """Build this op's params from keyword values (defaults for the rest)."""
        return self.params_model(**values)  # type: ignore[return-value]

    def parse_option(self, name: str, text: str) -> int | float | bool | str | None:
        """One CLI value of param ``name`` by the field's type; None when the text is not one.

        Integers parse as u64 and floats as the nearest f32 (the reference tool's rules),
        flags as ``true`` or ``false``; text choices pass through to the params model, whose
        validation names the allowed values.
        """
        from .._numbers import parse_f32, parse_u64

        annotation = self.params_model.model_fields[name].annotation
        if annotation is bool:
            return {"true": True, "false": False}.get(text.lower())
        if annotation is int:
            return parse_u64(text)
        if annotation is float:
            return parse_f32(text)
        return text

    @property
    def options(self) -> tuple[str, ...]:
        """The CLI option names (without ``--``) that apply to this op."""
        return tuple(self.params_model.model_fields)

    @abc.abstractmethod
    def validate(self, params: P) -> int:
        """Check the shape limits before anything is allocated; return the output element count.

        Raises
        ------
        ConfigError
            With the reference tool's message for the first violated limit.
        """

    @abc.abstractmethod
    def output_shape(self, params: P) -> tuple[int, int]:
        """The 2-D shape the output is bound to."""

    @abc.abstractmethod
    def inputs(self, params: P, seed: int) -> HostInputs:
        """The seeded float32 host inputs, by name, in the order ``compute`` takes them."""

    @abc.abstractmethod
    def compute(self, xp: Any, arrays: dict[str, Any], params: P, *, accumulate: Any) -> Any:
        """The definition, written against the Array API namespace ``xp``."""

    def fuzz_space(self) -> OpSpace | None:
        """Where ``diffcheck fuzz --op`` draws this op's params from; None when it has none.

        An op overrides it with an :class:`~diffcheck.ops.space.OpSpace` over its dimensions,
        the tiles of its kernels (:mod:`diffcheck.launch`) marking the edges worth drawing.
        """
        return None

    def raw_launch(self, params: P, limit: int) -> RawLaunch | None:
        """What runs this op on a raw-GPU backend (wgpu, Metal); None when it has no kernels.

        The raw-GPU adapters run an op only through this hook: its buffers, kernel dispatches
        (each a :class:`~diffcheck.launch.Launch` of a registered
        :class:`~diffcheck.launch.Kernel`) and copies, and the buffer read back. An op plugin
        registers its kernels, with their WGSL and MSL sources, in :mod:`diffcheck.launch`;
        an adapter with no source in its language for one of them does not run the op.

        Parameters
        ----------
        params
            Already validated.
        limit
            The device's most workgroups per grid dimension (pass it to
            :func:`~diffcheck.launch.split_grid` or the ``plan_*`` functions).
        """
        return None

    def segment_count(self, params: P) -> int:
        """How many segments :meth:`segments` returns, without building them.

        The memory budget counts a run's per-segment objects from this before anything is
        built; an op with many segments (one per head) overrides it.
        """
        return len(self.segments(params))

    def segments(self, params: P) -> list[Segment]:
        """The segments of the flattened output that are judged on their own."""
        if not self.segment_names:
            return []
        rows, cols = self.output_shape(params)
        size = rows * cols // len(self.segment_names)
        return [
            Segment(name, i * size, (i + 1) * size, self.segment_labels[i])
            for i, name in enumerate(self.segment_names)
        ]
