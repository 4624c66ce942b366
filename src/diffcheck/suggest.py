"""The nearest known name to a misspelt one, for error messages that say the next step."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "nearest"]

#: difflib's similarity ratio a name must reach to be suggested. Options are compared
#: without their ``--`` and need more: short names share letters by chance (``--bogus``
#: is not a misspelt ``--base``).
NAME_CUTOFF = 0.6
OPTION_CUTOFF = 0.75


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word``, or None when none is close enough."""
    choices = sorted(set(choices))
    if word.startswith("--"):
        bare = {choice.removeprefix("--"): choice for choice in choices}
        close = difflib.get_close_matches(word[2:], list(bare), n=1, cutoff=OPTION_CUTOFF)
        return bare[close[0]] if close else None
    close = difflib.get_close_matches(word, choices, n=1, cutoff=NAME_CUTOFF)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean "gemm"?)`` for the nearest choice, or an empty string: in
    parentheses, so the clause after it (``; 'diffcheck ops' lists every op``) reads on."""
    found = nearest(word, choices)
    return f' (did you mean "{found}"?)' if found is not None and found != word else ""
