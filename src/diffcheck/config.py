"""One check's configuration: which op, shape, precision, seed, tolerance and backends.

A :class:`Check` is validated completely when it is made (names, limits, tolerance), so an
invalid configuration is rejected before any report file exists or anything is allocated.
Its :meth:`Check.record` is the report's ``config`` object: the reference tool's flattened
shape (``require_backend``, ``op``, the op's own params, then ``seed`` and ``max_nmse``)
with ``precision`` added before ``seed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from ._numbers import U64_MAX, parse_f32, rust_display
from .adapters import parse_backend, same_backend
from .differ import Segment
from .errors import ConfigError
from .ops import OPS, ContextLifecycle, ContextLifecycleParams, Op, OpParams, get_op
from .ops.lifecycle import CHAIN_COVERAGE
from .precision import PrecisionName

__all__ = [
    "LIFECYCLE_MAX_NMSE",
    "AnyCheckConfig",
    "Check",
    "config_model",
    "coverage_of",
    "make_check",
    "segments_of",
]

DEFAULT_SEED = 42
DEFAULT_REFERENCE = "numpy"
#: The contract's ``MAX_SUBMISSION_NMSE``: the lifecycle at f32 needs 0 < max_nmse <= this.
LIFECYCLE_MAX_NMSE = 1e-7


class _ConfigBase(BaseModel):
    # Strict, like the op params it repeats: a report's "m": "4" or 4.0 is not a shape.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


# How replay treats every config field (docs/evidence.md): the check is defined by them.
_BOUND = (
    "Bound: part of the check's definition; replay regenerates the inputs and recomputes "
    "the reference from it. "
)


@cache
def config_model(op_name: str) -> type[_ConfigBase]:
    """The report ``config`` model of one op: its params flattened between op and seed."""
    op = OPS[op_name]
    fields: dict[str, Any] = {
        "require_backend": (
            str,
            Field(description=_BOUND + "The candidate backend that had to run."),
        ),
        "op": (Literal[op.name], Field(description=_BOUND + "The operation's CLI token.")),
    }
    for name, info in op.params_model.model_fields.items():
        described = FieldInfo.merge_field_infos(info, description=_BOUND + (info.description or ""))
        fields[name] = (info.annotation, described)
    fields["precision"] = (
        PrecisionName,
        Field(description=_BOUND + "Storage precision the candidate executes with."),
    )
    fields["seed"] = (int, Field(ge=0, le=U64_MAX, description=_BOUND + "Input seed (u64)."))
    fields["max_nmse"] = (
        float,
        Field(description=_BOUND + "NMSE tolerance; a check passes only below it."),
    )
    model: type[_ConfigBase] = create_model(
        f"{op.__class__.__name__}Config", __base__=_ConfigBase, **fields
    )
    return model


if TYPE_CHECKING:
    AnyCheckConfig = _ConfigBase
else:
    #: Any op's config, discriminated by ``op``.
    AnyCheckConfig = Annotated[
        Union[tuple(config_model(name) for name in OPS)],  # noqa: UP007
        Field(discriminator="op"),
    ]


@dataclass(frozen=True)
class Check:
    """A validated check, ready to run."""

    require_backend: str
    op: Op[Any]
    params: OpParams
    reference: str = DEFAULT_REFERENCE
    precision: PrecisionName = "f32"
    seed: int = DEFAULT_SEED
    max_nmse: float = 1e-7
    #: The candidate may be the reference's own backend (a self-test, recorded in the report).
    allow_self_test: bool = False

    @property
    def expected_elements(self) -> int:
        return self.op.validate(self.params)

    @property
    def output_shape(self) -> tuple[int, int]:
        return self.op.output_shape(self.params)

    def record(self) -> _ConfigBase:
        """The report's ``config`` object."""
        return config_model(self.op.name).model_validate(
            {
                "require_backend": self.require_backend,
                "op": self.op.name,
                **self.params.model_dump(),
                "precision": self.precision,
                "seed": self.seed,
                "max_nmse": self.max_nmse,
            }
        )


def segments_of(check: Check, chains: bool) -> list[Segment]:
    """The segments the check's output is judged by (the lifecycle's depend on ``chains``:
    whether the candidate ran its four chains independently)."""
    if isinstance(check.op, ContextLifecycle):
        assert isinstance(check.params, ContextLifecycleParams)
        return check.op.segments(check.params, independent_chains=chains)
    return check.op.segments(check.params)


def coverage_of(check: Check, chains: bool) -> str:
    """What a pass of the check covers, as the report's ``coverage`` says it."""
    text = CHAIN_COVERAGE if chains else check.op.coverage
    if check.allow_self_test:
        text += (
            f" SELF-TEST: the candidate {check.require_backend} is the reference "
            f"{check.reference}'s own backend (allowed explicitly); a pass is evidence about "
            "the machinery, never about the backend."
        )
    return text


def _check_tolerance(max_nmse: float, op: Op[Any], precision: str) -> None:
    if not math.isfinite(max_nmse) or max_nmse <= 0.0:
        raise ConfigError("--max-nmse must be finite and strictly positive")
    if op.name == "context-lifecycle" and precision == "f32" and max_nmse > LIFECYCLE_MAX_NMSE:
        raise ConfigError(
            f"--max-nmse {rust_display(max_nmse)} is above the lifecycle's limit: "
            f"{op.name} at f32 requires 0 < max_nmse <= {rust_display(LIFECYCLE_MAX_NMSE)}"
        )


def _f32_params(op: Op[Any], params: OpParams) -> OpParams:
    """``params`` with every float field rounded to the nearest f32, as ``--eps`` is parsed.

    The kernels take these values as f32, so the report records that value whichever way it
    was given (the default, ``--eps 1e-6``, or a Python float): one check, one config.
    """
    rounded = {}
    for name, value in params.model_dump().items():
        if isinstance(value, float):
            as_f32 = parse_f32(repr(value))
            if as_f32 is not None and as_f32 != value:
                rounded[name] = as_f32
    return op.params(**(params.model_dump() | rounded)) if rounded else params


def _check_backends(require_backend: str, reference: str, allow_self_test: bool) -> None:
    parse_backend(require_backend)
    try:
        parse_backend(reference)
    except ConfigError:
        raise ConfigError(f'unsupported reference backend "{reference}"') from None
    if allow_self_test:
        return
    if reference == require_backend or same_backend(require_backend, reference):
        raise ConfigError(
            f'--require-backend "{require_backend}" and --reference "{reference}" are the same '
            "backend; a backend cannot vouch for itself (name another backend, or pass "
            "--allow-self-test for a self-test)"
        )


def make_check(
    require_backend: str,
    op: str,
    *,
    reference: str = DEFAULT_REFERENCE,
    precision: str = "f32",
    seed: int = DEFAULT_SEED,
    max_nmse: float | None = None,
    allow_self_test: bool = False,
    **params: Any,
) -> Check:
    """Validate everything about one check before anything runs.

    Parameters
    ----------
    require_backend
        The candidate (``mlx``, ``mlx:gpu``, ``wgpu``, ``torch:cpu``...). It never falls back.
    op
        An op's CLI token or alias (``rms-norm``, ``gemm``, ``silu-mul``, ``context-lifecycle``).
    reference
        The backend whose output is trusted (NumPy by default). It must not be the candidate's
        own backend (:func:`~diffcheck.adapters.same_backend`: by adapter identity, not by name).
    precision
        The candidate's storage precision (``f32``, ``f16`` or ``bf16``).
    seed
        The u64 input seed.
    max_nmse
        The tolerance; by default the op's own for the precision, which is the precision's
        bucket (f32 1e-7, f16 1e-6, bf16 1e-4) unless the op says why it must differ.
        The lifecycle at f32 requires ``0 < max_nmse <= 1e-7`` (the contract's rule).
    allow_self_test
        Let the candidate be the reference's own backend: a self-test of the machinery,
        recorded in the report's coverage; it is never evidence about the backend.
    **params
        The op's own parameters (for ``gemm``: ``m``, ``n``, ``k``); defaults fill the rest.
        Float parameters (``eps``) are rounded to f32, as the CLI parses them.

    Raises
    ------
    ConfigError
        With a one-line message naming the first problem found.
    """
    for name, value in (("require_backend", require_backend), ("op", op), ("reference", reference)):
        if not isinstance(value, str):
            raise ConfigError(f"{name} {value!r} is not a name; give it as a string")
    if not isinstance(allow_self_test, bool):
        raise ConfigError(f"allow_self_test {allow_self_test!r} must be True or False")
    operation = get_op(op)
    _check_backends(require_backend, reference, allow_self_test)
    if precision not in ("f32", "f16", "bf16"):
        raise ConfigError(f'unsupported precision "{precision}"; it must be f32, f16 or bf16')
    unknown = sorted(set(params) - set(operation.options))
    if unknown:
        raise ConfigError(f"option --{unknown[0]} does not apply to the selected operator")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed {seed!r} is not an integer; it must be a u64")
    if max_nmse is not None and (
        isinstance(max_nmse, bool) or not isinstance(max_nmse, int | float)
    ):
        raise ConfigError(f"max_nmse {max_nmse!r} is not a number")
    if not 0 <= seed <= U64_MAX:
        raise ConfigError(f"seed {seed} is outside the u64 range")
    tolerance = (
        operation.default_max_nmse(precision)  # type: ignore[arg-type]
        if max_nmse is None
        else float(max_nmse)
    )
    _check_tolerance(tolerance, operation, precision)
    try:
        op_params = _f32_params(operation, operation.params(**params))
    except ValidationError as error:
        first = error.errors()[0]
        raise ConfigError(f"invalid value for --{first['loc'][0]}: {first['msg']}") from None
    operation.validate(op_params)
    return Check(
        require_backend=require_backend,
        op=operation,
        params=op_params,
        reference=reference,
        precision=precision,  # type: ignore[arg-type]
        seed=seed,
        max_nmse=tolerance,
        allow_self_test=allow_self_test,
    )
