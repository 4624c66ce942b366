"""Known divergences of whole API functions: data an adapter declares about its namespace.

The API search (``diffcheck fuzz --api``) finds divergences per function, kind and input
dtype. A backend known to diverge on some of them, for a reason outside diffcheck, lists
them from :meth:`Adapter.known_api_divergences
<diffcheck.adapters.Adapter.known_api_divergences>`: the function, the one failure kind it
excuses, the input dtypes it applies to (its condition), why, and where it is tracked
upstream. A matching finding is still listed, marked ``known``; a declared entry that the
search met no finding for is listed as no longer reproducing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..values.model import FAILURE_KINDS
from ..values.spec import STANDARD_DTYPES, is_standard_name

__all__ = ["KnownApiDivergence", "matching_api_divergence"]

#: What ``upstream`` says when no upstream report is known.
NONE_KNOWN = "none known"


@dataclass(frozen=True, kw_only=True)
class KnownApiDivergence:
    """One known divergence of an API function on a backend.

    Parameters
    ----------
    function
        The standard's name (``cumulative_sum``, ``linalg.vecdot``).
    kind
        The failure kind it excuses (``missing``, ``dtype``, ``value``...); only that kind.
    dtypes
        Its condition: the input dtypes it applies to (a finding matches when every one of
        its input dtypes is listed); empty for every dtype.
    reason
        One line: what diverges and why.
    upstream
        Where it is tracked (a URL or an issue reference), or ``"none known"``.

    Raises
    ------
    ValueError
        One line: an unknown function, kind or dtype, or a reason/upstream that is not one
        line of text.
    """

    function: str
    kind: str
    dtypes: tuple[str, ...] = ()
    reason: str
    upstream: str = NONE_KNOWN

    def __post_init__(self) -> None:
        if not isinstance(self.function, str) or not is_standard_name(self.function):
            raise ValueError(f"function={self.function!r}, but it must be a standard function")
        if self.kind not in FAILURE_KINDS:
            raise ValueError(
                f"kind={self.kind!r}, but it must be one of {', '.join(FAILURE_KINDS)}"
            )
        if isinstance(self.dtypes, str):  # type: ignore[unreachable]  # callers are untyped
            raise ValueError(f"dtypes={self.dtypes!r}, but it must be a tuple of dtype names")
        object.__setattr__(self, "dtypes", tuple(self.dtypes))
        unknown = [d for d in self.dtypes if d not in (*STANDARD_DTYPES, "float16")]
        if unknown:
            raise ValueError(f"dtypes {unknown}, but each must be a standard dtype name")
        for name in ("reason", "upstream"):
            text = getattr(self, name)
            if not isinstance(text, str) or not text.strip() or len(text.splitlines()) != 1:
                raise ValueError(f"{name}={text!r}, but it must be one non-empty line of text")

    def matches(self, function: str, kind: str, dtype: str) -> bool:
        """Whether a finding of ``function``, ``kind`` and input ``dtype`` (comma-joined) is this."""
        if function != self.function or kind != self.kind:
            return False
        if not self.dtypes:
            return True
        found = [d for d in dtype.split(",") if d and d != "none"]
        return bool(found) and all(d in self.dtypes for d in found)

    @property
    def condition(self) -> str:
        """The condition in words: ``dtypes float32, float64`` or ``every dtype``."""
        return f"dtypes {', '.join(self.dtypes)}" if self.dtypes else "every dtype"


def matching_api_divergence(
    divergences: Iterable[KnownApiDivergence], function: str, kind: str, dtype: str
) -> KnownApiDivergence | None:
    """The first declared divergence that matches the finding, if any."""
    return next((d for d in divergences if d.matches(function, kind, dtype)), None)
