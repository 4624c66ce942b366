"""Known divergences of whole API functions: data an adapter declares about its namespace.

The API search (``diffcheck fuzz --api``) finds divergences per function, kind and input
dtype. A backend known to diverge on some of them, for a reason outside diffcheck, lists
them from :meth:`Adapter.known_api_divergences
<diffcheck.adapters.Adapter.known_api_divergences>`: the function, the one failure kind it
excuses, the input dtypes it applies to, the inputs it covers (an
:class:`~diffcheck.adapters.api_inputs.InputClass`: shift counts at or past the width, an
empty reduction...), why, and where it is tracked upstream. A finding outside the class is
new, whatever its function, kind and dtype. A matching finding is still listed, marked ``known``; a declared entry that the
search met no finding for is listed as no longer reproducing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..values.model import FAILURE_KINDS
from ..values.spec import STANDARD_DTYPES, is_standard_name
from .api_inputs import ApiCase, InputClass

__all__ = ["KnownApiDivergence", "matching_api_divergence"]

#: Kinds about element values: their declarations must cover elements, not whole calls.
ELEMENT_KINDS = frozenset({"value", "nan", "inf", "signed-zero"})

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
    covers
        The inputs it covers: a finding matches only when the class holds for its call
        (for a value, NaN, infinity or signed-zero kind, at every failing element).
    reason
        One line: what diverges and why.
    upstream
        Where it is tracked (a URL or an issue reference), or ``"none known"``.

    Raises
    ------
    ValueError
        One line: an unknown function, kind or dtype, ``covers`` that is not an
        :class:`InputClass` (or a whole-function class for an element kind), or a
        reason/upstream that is not one line of text.
    """

    function: str
    kind: str
    dtypes: tuple[str, ...] = ()
    covers: InputClass
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
        if not isinstance(self.covers, InputClass):
            raise ValueError(f"covers={self.covers!r}, but it must be an InputClass")
        if self.kind in ELEMENT_KINDS and not self.covers.elementwise:
            raise ValueError(
                f"covers={self.covers.description!r} is a whole-function class, but a "
                f"{self.kind} divergence must say which elements it covers"
            )
        for name in ("reason", "upstream"):
            text = getattr(self, name)
            if not isinstance(text, str) or not text.strip() or len(text.splitlines()) != 1:
                raise ValueError(f"{name}={text!r}, but it must be one non-empty line of text")

    def matches(self, function: str, kind: str, dtype: str, case: ApiCase) -> bool:
        """Whether a finding of ``function``, ``kind``, input ``dtype`` (comma-joined) and
        call ``case`` is this: all four must fit, the call inside :attr:`covers`."""
        if function != self.function or kind != self.kind:
            return False
        if self.dtypes:
            found = [d for d in dtype.split(",") if d and d != "none"]
            if not found or not all(d in self.dtypes for d in found):
                return False
        return self.covers.covers(case)

    @property
    def condition(self) -> str:
        """The condition in words: ``dtypes float32, float64; <the input class>``."""
        dtypes = f"dtypes {', '.join(self.dtypes)}" if self.dtypes else "every dtype"
        return f"{dtypes}; {self.covers.description}"


def matching_api_divergence(
    divergences: Iterable[KnownApiDivergence],
    function: str,
    kind: str,
    dtype: str,
    *,
    case: ApiCase,
) -> KnownApiDivergence | None:
    """The first declared divergence that matches the finding and covers its call, if any."""
    return next((d for d in divergences if d.matches(function, kind, dtype, case)), None)
