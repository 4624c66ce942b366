"""Number parsing and printing with the reference tool's exact rules.

The contract parses integers with Rust's ``u64::from_str`` (optional ``+``, ASCII digits,
nothing else) and floats with Rust's float parser, and prints floats with Rust's
``Display`` (never an exponent). These helpers keep messages and limits identical.
"""

from __future__ import annotations

import math
import re
import struct

__all__ = [
    "I32_MAX",
    "I64_MAX",
    "U64_MAX",
    "f64_bits",
    "f64_from_bits",
    "parse_f32",
    "parse_f64",
    "parse_u64",
    "rust_display",
    "short_float",
]

U64_MAX = 2**64 - 1
I64_MAX = 2**63 - 1
I32_MAX = 2**31 - 1

_UNSIGNED = re.compile(r"\+?[0-9]+")
# Rust's float grammar: sign, digits with an optional point (at least one digit), optional
# exponent; or inf / infinity / nan in any case. No whitespace, no hex, no underscores.
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPECIAL = {"inf": math.inf, "infinity": math.inf, "nan": math.nan}


def parse_u64(text: str) -> int | None:
    """Parse like Rust ``u64::from_str``; None when the text is not a u64."""
    if not _UNSIGNED.fullmatch(text):
        return None
    # More than 20 significant digits is past u64 whatever they are; checking the length
    # first also keeps int() clear of Python's 4300-digit conversion limit.
    if len(text.lstrip("+").lstrip("0")) > 20:
        return None
    value = int(text.lstrip("+"))
    return value if value <= U64_MAX else None


def parse_f64(text: str) -> float | None:
    """Parse like Rust ``f64::from_str``; None when the text is not a float."""
    sign = -1.0 if text.startswith("-") else 1.0
    body = text[1:] if text[:1] in "+-" else text
    special = _SPECIAL.get(body.lower())
    if special is not None:
        return math.copysign(special, sign) if not math.isnan(special) else special
    if not _FLOAT.fullmatch(text):
        return None
    return float(text)


def parse_f32(text: str) -> float | None:
    """Parse like Rust ``f32::from_str``: the nearest f32, returned as the exact double."""
    value = parse_f64(text)
    if value is None:
        return None
    # Rounding through a double first can differ from direct decimal->f32 rounding only in
    # double-rounding corner cases, far below any tolerance or epsilon used here.
    try:
        return float(struct.unpack("<f", struct.pack("<f", value))[0])
    except OverflowError:
        return math.copysign(math.inf, value)


def f64_bits(value: float) -> int:
    """The raw IEEE-754 bits of a double, as an unsigned integer."""
    return int.from_bytes(struct.pack("<d", value), "little")


def f64_from_bits(bits: int) -> float:
    """The double whose raw IEEE-754 bits are ``bits``."""
    return float(struct.unpack("<d", bits.to_bytes(8, "little"))[0])


def rust_display(value: float) -> str:
    """Format a double as Rust's ``Display`` does: shortest round-trip digits, no exponent."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    digits, _, exponent = repr(abs(value)).partition("e")
    mantissa, _, fraction = digits.partition(".")
    fraction = "" if fraction == "0" else fraction
    shift = int(exponent) if exponent else 0
    whole = mantissa + fraction
    point = len(mantissa) + shift
    if point <= 0:
        text = "0." + "0" * -point + whole
    elif point >= len(whole):
        text = whole + "0" * (point - len(whole))
    else:
        text = whole[:point] + "." + whole[point:]
    text = text.lstrip("0") or "0"
    if text.startswith("."):
        text = "0" + text
    return sign + text


def short_float(value: float) -> str:
    """Three significant digits for a person: ``1.67e-13``, ``5.2e+05``, ``1000``, ``inf``."""
    if math.isnan(value):
        return "NaN"
    return f"{value:.3g}"
