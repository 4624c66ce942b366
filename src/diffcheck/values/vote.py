"""The last resort of blame: further backends vote, and the vote is recorded as such.

A vote is not evidence about the truth (several backends can share one upstream library's
bug), so blame asks only when the standard's rules and the oracle cannot decide, and says
who voted which way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .compare import compare_values
from .model import Blame, ValueVerdict

__all__ = ["vote"]


def vote(
    function: str,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    reference: Any,
    candidate: Any,
    verdict: ValueVerdict,
    voters: Sequence[tuple[str, Callable[..., Any]]],
) -> Blame | None:
    """Ask each voter for its result and side with the majority; None when none voted.

    A voter agrees with a side when its result passes :func:`compare_values` against that
    side under the verdict's bound; one that raises or agrees with both or neither abstains.
    """
    with_ref, with_cand, silent = [], [], []
    for name, call in voters:
        try:
            result = call(*args, **kwargs)
        except Exception as error:  # a voter that cannot answer abstains, with its reason
            silent.append(f"{name} abstains ({type(error).__name__}: {error})")
            continue
        agree_ref = compare_values(reference, result, function=function, bound=verdict.bound)
        agree_cand = compare_values(candidate, result, function=function, bound=verdict.bound)
        if agree_ref.passed and not agree_cand.passed:
            with_ref.append(name)
        elif agree_cand.passed and not agree_ref.passed:
            with_cand.append(name)
        else:
            silent.append(f"{name} sides with neither")
    tally = (
        f"with the reference: {', '.join(with_ref) or 'none'}; with the candidate: "
        f"{', '.join(with_cand) or 'none'}"
    )
    if silent:
        tally += f"; {', '.join(silent)}"
    if len(with_ref) > len(with_cand):
        return Blame(
            "candidate",
            f"no independent rule decides; vote of further backends (last resort): {tally}",
            "vote",
        )
    if len(with_cand) > len(with_ref):
        return Blame(
            "reference",
            f"no independent rule decides; vote of further backends (last resort): {tally}",
            "vote",
        )
    if voters:
        return Blame(
            "undecided", f"no rule or oracle decides and the vote is tied: {tally}", "none"
        )
    return None
