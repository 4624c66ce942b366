"""Testing tools for backend authors: the adapter conformance suite and wrong-output wrappers.

``from diffcheck.testing import conformance_suite`` and, in a test module,
``TestConformance = conformance_suite("mybackend:cpu")`` runs the whole adapter contract
against a backend (or subclass ``ConformanceTests`` and set ``backends``, to override a
test); cases that match a known divergence the adapter declares are strict xfails that expect
exactly :class:`~diffcheck.adapters.KnownDivergenceFailure`. This
package imports pytest; the core never imports it.
"""

from __future__ import annotations

from ._backends import default_backends, installed_libraries, registered_backends
from ._perturb import PERTURBATIONS, Perturbation, WrappedAdapter, perturb, unavailable
from .conformance import CONTRACT_CASES, ConformanceTests, OpCase, conformance_suite, op_cases

__all__ = [
    "CONTRACT_CASES",
    "PERTURBATIONS",
    "ConformanceTests",
    "OpCase",
    "Perturbation",
    "WrappedAdapter",
    "conformance_suite",
    "default_backends",
    "installed_libraries",
    "op_cases",
    "perturb",
    "registered_backends",
    "unavailable",
]
