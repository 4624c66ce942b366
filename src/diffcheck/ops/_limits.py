"""Shape limits shared by the ops: 64-bit overflow and the kernels' signed 32-bit indexing."""

from __future__ import annotations

import math

from .._numbers import I32_MAX, I64_MAX, U64_MAX
from ..errors import ConfigError

__all__ = [
    "F32_MAX",
    "ceil_to",
    "check_buffer",
    "check_gemm",
    "check_matrix",
    "check_positive_f32",
    "check_rows",
    "check_silu_mul",
    "checked_mul",
    "require",
]

#: The largest finite float32; a larger float parameter would be infinite in a kernel.
F32_MAX = 3.4028234663852886e38


def require(condition: bool, message: str) -> None:
    """Raise a ConfigError with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ConfigError(message)


def checked_mul(a: int, b: int, message: str) -> int:
    """``a * b`` as a u64, or a ConfigError with ``message`` when it overflows."""
    product = a * b
    require(product <= U64_MAX, message)
    return product


def ceil_to(value: int, step: int) -> int:
    """``value`` rounded up to a multiple of ``step`` (exact integers, no overflow)."""
    return -(-value // step) * step


def check_matrix(label: str, rows: int, cols: int) -> None:
    """The GEMM limits for one f32 matrix operand (the reference tool's order and text)."""
    elements = checked_mul(rows, cols, f"GEMM {label} element count overflows usize")
    size = checked_mul(elements, 4, f"GEMM {label} f32 byte size overflows usize")
    require(
        size <= I64_MAX and elements <= I32_MAX,
        f"GEMM {label} exceeds host or signed kernel indexing range",
    )


def check_gemm(m: int, n: int, k: int) -> int:
    """Validate a GEMM C[m,n] = A[m,k]·B[n,k]ᵀ and return m·n."""
    require(m != 0 and n != 0 and k != 0, "GEMM m, n and k must be nonzero")
    for label, rows, cols in (("A", m, k), ("B", n, k), ("output", m, n)):
        check_matrix(label, rows, cols)
    # The tiled kernels add tile offsets before their bounds checks (M tile 64, N and K 32).
    for label, value, tile in (("m", m, 64), ("n", n, 32), ("k", k, 32)):
        require(
            ceil_to(value, tile) <= I32_MAX,
            f"GEMM {label} tile exceeds signed kernel indexing range",
        )
    return m * n


def check_silu_mul(tokens: int, intermediate: int) -> int:
    """Validate a split SiLU-mul over [tokens, 2·intermediate] and return tokens·intermediate."""
    require(tokens != 0 and intermediate != 0, "SiLU Mul tokens and intermediate must be nonzero")
    output = checked_mul(tokens, intermediate, "SiLU Mul output element count overflows usize")
    inputs = checked_mul(output, 2, "SiLU Mul gate/up element count overflows usize")
    size = checked_mul(inputs, 4, "SiLU Mul f32 input byte size overflows usize")
    require(
        size <= I64_MAX and inputs <= I32_MAX,
        "SiLU Mul input exceeds host or signed kernel indexing range",
    )
    return output


def check_buffer(label: str, elements: int, what: str = "shape") -> None:
    """One f32 buffer of ``elements``: u64 byte size, host range and signed 32-bit indexing."""
    size = checked_mul(elements, 4, f"{label} f32 buffer byte size overflows usize")
    require(size <= I64_MAX, f"{label} f32 buffer exceeds the host allocation address range")
    require(
        elements <= I32_MAX, f"{label} {what} exceeds the kernels' signed 32-bit indexing range"
    )


def check_rows(label: str, rows: int, cols: int, names: str = "tokens and dim") -> int:
    """Validate a row-wise op over [rows, cols] (rms-norm's limits) and return rows·cols.

    The row loop of a kernel steps by a block width (at least 32, up to 1024) before its
    bounds check, so ``cols - 1`` plus that step must stay within signed 32-bit indexing.
    """
    require(rows != 0 and cols != 0, f"{label} {names} must be nonzero")
    first, second = names.split(" and ")
    elements = checked_mul(rows, cols, f"{label} {first} * {second} overflows usize")
    check_buffer(label, elements)
    step = max(32, ceil_to(min(cols, 1024), 32))
    require(
        (cols - 1) + step <= I32_MAX,
        f"{label} shape exceeds the kernels' signed 32-bit indexing range",
    )
    return elements


def check_positive_f32(label: str, name: str, value: float, *, above: float = 0.0) -> None:
    """``value`` must be a finite f32 greater than ``above`` (the one-line message says so)."""
    bound = "positive" if above == 0.0 else f"greater than {above:g}"
    require(
        math.isfinite(value) and value > above and abs(value) <= F32_MAX,
        f"{label} {name} must be a finite f32 {bound}, not {value!r}",
    )
