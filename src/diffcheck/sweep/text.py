"""Text from a matrix or a report, made safe for the sweep's XML and HTML outputs.

Names and descriptions come from the matrix and reasons from reports: any of them may hold
control characters. XML 1.0 cannot carry most of them at all (a parser rejects the whole
``junit.xml``), and raw in HTML they hide or garble text. :func:`printable` spells each one
as a visible escape (``\\x07``, ``\\ufffe``), keeping newlines and tabs; :func:`html_text`
adds HTML escaping on top.
"""

from __future__ import annotations

import html
import re

__all__ = ["html_text", "printable"]

# C0 controls but tab and newline, DEL and C1 controls, surrogates, and U+FFFE/U+FFFF.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character (but tab and newline) spelled as an escape."""
    return _UNPRINTABLE.sub(_spell, text)


def html_text(text: str, quote: bool = True) -> str:
    """``text`` escaped for HTML content and attributes, control characters made visible."""
    return html.escape(printable(text), quote=quote)
