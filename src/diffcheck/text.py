"""Text from a matrix, a report or a backend, made safe for where it is shown.

Names and descriptions come from matrices, reasons and keys from reports and bundles: any
of them may hold control characters. XML 1.0 cannot carry most of them at all (a parser
rejects the whole ``junit.xml``), raw in HTML they hide or garble text, and a line break in
an error message breaks the promise of one line. :func:`printable` spells each one as a
visible escape (``\\x07``, ``\\ufffe``), keeping newlines and tabs; :func:`html_text` adds
HTML escaping on top; :func:`one_line` spells newlines, tabs and line separators too.

Figures too: a stored reason keeps the contract's exact digits, which replay re-derives;
:func:`rounded` shows it to a person at three significant digits
(:func:`diffcheck._numbers.short_float`), and :func:`ulps` a ULP count.

Names are stricter than texts: an op, a backend, a bundle's function, a pair becomes a
folder or file name in a sweep's output and is printed bare in tables, so :func:`check_name`
is the one rule every such name meets where it enters (a plugin's op, a matrix, a report, a
bundle): letters, digits and ``_ . + -``, starting with a letter or digit, at most
:data:`MAX_NAME_CHARS` characters; a backend is one such name or two joined by ``:``. No
name that passes can hold a path separator, ``..`` as a whole part, a control character or
markup.
"""

from __future__ import annotations

import html
import re

from ._numbers import short_float

__all__ = [
    "MAX_NAME_CHARS",
    "check_name",
    "html_text",
    "is_name",
    "one_line",
    "printable",
    "rounded",
    "ulps",
]

#: The longest name (an op, a backend part, a function) any folder or table is made from.
MAX_NAME_CHARS = 64
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.+-]{{0,{MAX_NAME_CHARS - 1}}}")
_BACKEND = re.compile(rf"{_NAME.pattern}(?::{_NAME.pattern})?")

# C0 controls but tab and newline, DEL and C1 controls, surrogates, and U+FFFE/U+FFFF.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
# The same, with tab, newline and the Unicode line and paragraph separators.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character (but tab and newline) spelled as an escape."""
    return _UNPRINTABLE.sub(_spell, text)


def one_line(text: str) -> str:
    """``text`` with every control character and line break spelled as an escape."""
    return _NOT_ONE_LINE.sub(_spell, text)


def html_text(text: str, quote: bool = True) -> str:
    """``text`` escaped for HTML content and attributes, control characters made visible."""
    return html.escape(printable(text), quote=quote)


#: A decimal with five or more digits after the point (``0.0000000000001666267867029068``):
#: Rust's ``Display``, which the contract's reasons use, never writes an exponent.
_LONG_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d{5,}(?:[eE][-+]?\d+)?(?![\w.])")


def rounded(text: str) -> str:
    """``text`` (a stored reason) with each long decimal at three significant digits.

    A person is shown ``NMSE 1.67e-13 is not below tolerance 1e-15``; the report keeps
    ``NMSE 0.0000000000001666267867029068 ...``. Short numbers and integers (indices,
    element counts) are left as they are.
    """
    return _LONG_DECIMAL.sub(lambda match: short_float(float(match.group())), text)


def ulps(count: int) -> str:
    """A ULP count as a person reads it: exact up to a million, then three significant
    digits (``4.61e+18``: a float64 pair across zero counts every double between them)."""
    return str(count) if count < 1_000_000 else short_float(float(count))


def is_name(text: object, *, backend: bool = False) -> bool:
    """True when ``text`` is a name :func:`check_name` accepts."""
    pattern = _BACKEND if backend else _NAME
    return isinstance(text, str) and pattern.fullmatch(text) is not None


def check_name(kind: str, text: object, where: str = "", *, backend: bool = False) -> str:
    """``text`` when it may become a path part and be printed bare, else one ValueError line.

    ``kind`` says what the name is (``op``, ``backend``, ``function``); ``where`` where it was
    found. ``backend`` allows one ``:`` between two names (``mlx:gpu``). The error is a
    ValueError so that callers raise their own kind (ConfigError, ReportError) from it.
    """
    if is_name(text, backend=backend):
        assert isinstance(text, str)
        return text
    shown = one_line(repr(text)[:80]) if isinstance(text, str) else type(text).__name__
    form = "NAME or NAME:NAME" if backend else "a name"
    at = f"{where}: " if where else ""
    raise ValueError(
        f"{at}{kind} {shown} is not {form} (letters, digits and _ . + -, starting with a "
        f"letter or digit, at most {MAX_NAME_CHARS} characters each); rename it"
    )
