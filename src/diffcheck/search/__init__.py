"""The API search: every function of the Array API standard, drawn, compared, shrunk, replayed.

``diffcheck fuzz --require-backend mlx:cpu --api`` (or :func:`search_api`) draws each
function's arguments from Hypothesis' Array API strategies (every dtype both backends
hold, broadcasting shapes, 0-d and empty arrays, edge values), judges every example with
the value model (:mod:`diffcheck.values`), shrinks each divergence to a minimal example
(one finding per function, kind and input dtype) and writes it as a replay bundle
(``diffcheck replay BUNDLE``), with ``findings.json`` and ``index.html`` beside them.

One job per module: :mod:`.arrays` (dtypes, edge values, array strategies),
:mod:`.recipes` and :mod:`.coupled` (how to draw a call), :mod:`.table` (per function:
its recipe, or why it is skipped), :mod:`.runner` (the Hypothesis loop), :mod:`.bundle`
(the bundle format and its checked reader), :mod:`.record` (findings to bundles),
:mod:`.replay` with :mod:`.bundle_memory` (the replay's memory, bounded before any call),
:mod:`.stored` (the verdict re-derived from the stored outputs) and :mod:`.recompute` (the
NumPy side recomputed), :mod:`.findings` (the findings.json model), :mod:`.output` and :mod:`.page`
(the directory and its page), :mod:`.api` (:func:`search_api`).
"""

from __future__ import annotations

from .api import DEFAULT_API_EXAMPLES, DEFAULT_TIME_BUDGET_S, SearchResult, search_api

__all__ = ["DEFAULT_API_EXAMPLES", "DEFAULT_TIME_BUDGET_S", "SearchResult", "search_api"]
