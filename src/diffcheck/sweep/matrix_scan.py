"""A cheap pre-scan of a matrix's TOML text, bounding what the TOML parser would spend.

``tomllib`` spends time quadratic in the parts of one dotted key (a 120 KB line
``a.a.a...`` of 60,000 parts took 38 s and 2.9 GB) and linear time per key/value pair
(about 20 us each). A matrix needs neither: its deepest legal key is
``ops.<op>.shapes`` (plus a tolerance or two), and a large sweep lists a few thousand
shapes. :func:`check_matrix_text` refuses, in one line and in time linear in the text, a
dotted key of more than :data:`MAX_KEY_PARTS` parts, more than :data:`MAX_ASSIGNMENTS`
key/value pairs, more than :data:`MAX_TABLES` tables (a header line ``[t]`` or ``[[t]]``, or
an inline ``{}``: tomllib keeps about 1.3 KB for each, so 10^6 empty tables in a 9.9 MB file
took 1.34 GB) or more than :data:`MAX_ITEMS` array and table openings, values and commas
together (``x = [[],[],...]`` is one pair), before the parser sees the text.

Strings and comments are blanked first (a dot or ``=`` inside them is not a key's), each
string becoming one placeholder character, so a quoted key part still counts as one part.
"""

from __future__ import annotations

import re
from typing import Final

from ..errors import ConfigError

__all__ = ["MAX_ASSIGNMENTS", "MAX_ITEMS", "MAX_KEY_PARTS", "MAX_TABLES", "check_matrix_text"]

#: The most parts one dotted key or table header may have (a matrix uses at most 4).
MAX_KEY_PARTS: Final = 16
#: The most ``key = value`` pairs one matrix may hold (10,000 shapes of 10 parameters).
MAX_ASSIGNMENTS: Final = 100_000
#: The most tables (headers and inline tables) one matrix may hold (10,000 shapes, each a
#: ``[[ops.<op>.shapes]]`` table, with room to spare).
MAX_TABLES: Final = 20_000
#: The most pairs, array or table openings and commas together (each one object at most).
MAX_ITEMS: Final = 400_000

# Multi-line strings first, then one-line basic strings (with escapes), literal strings and
# comments. Each alternative is linear: the lazy multi-line forms stop at the first closer.
_STRINGS_AND_COMMENTS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
# Runs of bare parts (or blanked strings, "s") joined by dots; part and separator classes
# are disjoint. A match starts only where a run starts (the lookbehind): tried at every
# character, a run of n word characters with no dot after it cost n^2 steps (16,000 digits
# took 10 s; a 16 MiB matrix of them, hours). A match from inside a run would be a
# suffix of the one from its start, so no match is lost.
# A table header: a line whose first non-blank character is "[" (``[t]`` and ``[[t]]``).
_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_DOTTED = re.compile(r"(?<![\w+-])[\w+-]+(?:[ \t]*\.[ \t]*[\w+-]+)+")


def check_matrix_text(text: str, source: str) -> None:
    """Refuse a matrix text whose keys would cost the TOML parser more than any matrix needs.

    Raises
    ------
    ConfigError
        One line naming ``source``, the bound and the line where it was passed.
    """
    blank = _STRINGS_AND_COMMENTS.sub(_placeholder, text)
    assignments = blank.count("=")
    if assignments > MAX_ASSIGNMENTS:
        raise ConfigError(
            f"{source}: {assignments} key/value pairs, over the {MAX_ASSIGNMENTS} a matrix may "
            "hold; split it into several matrices"
        )
    tables = sum(1 for _ in _HEADER.finditer(blank)) + blank.count("{")
    if tables > MAX_TABLES:
        raise ConfigError(
            f"{source}: {tables} tables, over the {MAX_TABLES} a matrix may hold; split it into "
            "several matrices"
        )
    items = assignments + blank.count("[") + blank.count("{") + blank.count(",")
    if items > MAX_ITEMS:
        raise ConfigError(
            f"{source}: {items} keys, values, arrays and tables, over the {MAX_ITEMS} a matrix "
            "may hold; split it into several matrices"
        )
    for match in _DOTTED.finditer(blank):
        parts = match.group().count(".") + 1
        if parts > MAX_KEY_PARTS:
            line = blank.count("\n", 0, match.start()) + 1
            raise ConfigError(
                f"{source}: line {line} has a dotted key (or number run) of {parts} parts, over "
                f"the {MAX_KEY_PARTS} a matrix key may have"
            )


def _placeholder(match: re.Match[str]) -> str:
    # A string keeps its line breaks (so line numbers stay true) and becomes one part "s";
    # a comment becomes nothing.
    found = match.group()
    if found.startswith("#"):
        return ""
    return "s" + "\n" * found.count("\n")
