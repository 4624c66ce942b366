"""The diffcheck pytest plugin: run a test once per backend and compare it with the reference.

Registered through the ``pytest11`` entry point, so installing diffcheck enables it. It adds

``diffcheck_backend`` (fixture)
    The candidate backend's adapter. A test that requests it (directly or through
    ``diffcheck_compare``) runs once per backend: those named by
    ``--diffcheck-backends=mlx:cpu,wgpu,...``, else by the ini option ``diffcheck_backends``
    (``diffcheck_backends = ["mlx:cpu", "torch:cpu"]`` in ``[tool.pytest.ini_options]``),
    else every backend available here among the registered adapters' device variants and the
    installed array-api-compat libraries (torch, jax...), except the reference's; the
    terminal summary names those left out and why. A named backend that cannot run here is
    skipped with its probe's reason (visible in ``-ra``), never silently; a probe that
    errors fails. ``--diffcheck-backends=`` naming nothing is a usage error. ``diffcheck_compare`` on a
    backend without an Array API namespace (``wgpu:opengl`` runs hand-written kernels only)
    skips with that reason.
``diffcheck_compare`` (fixture)
    ``diffcheck_compare(fn, *inputs, max_nmse=1e-7)`` runs ``fn(xp, *arrays)`` on the
    reference and on ``diffcheck_backend`` (see :func:`diffcheck.compare`) and raises an
    AssertionError whose message is the readable verdict when they diverge. It returns the
    verdict when they agree.
``--diffcheck-locate`` (option)
    When a ``diffcheck_compare`` fails, also run :func:`diffcheck.locate` on the same
    function and inputs, so the failure output names the first wrong Array API call inside
    it (function, ``file:line``, both errors). Passing comparisons do not pay for it.
``@pytest.mark.diffcheck(backends=[...], reference=..., precision=...)``
    Runs the test on those backends (still narrowed by ``--diffcheck-backends`` when that
    is given) and sets ``diffcheck_compare``'s reference and default precision.

Nothing here imports diffcheck's core until a test uses it, so the plugin costs nothing in
a test run that does not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import pytest

from .text import one_line

if TYPE_CHECKING:
    from .adapters import Adapter, Probe
    from .api import Segments
    from .differ import Verdict
    from .precision import PrecisionName

__all__ = [
    "DiffcheckCompare",
    "assert_verdict",
    "diffcheck_backend",
    "diffcheck_compare",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "pytest_terminal_summary",
]

_MARKER: Final = "diffcheck"
_MARKER_KEYS: Final = frozenset({"backends", "reference", "precision"})
_FIXTURE: Final = "diffcheck_backend"
_ADAPTERS = pytest.StashKey[dict[str, "tuple[Adapter | None, Probe | None, str | None]"]]()
_DEFAULTS = pytest.StashKey[list[str]]()
_LEFT_OUT = pytest.StashKey[list[str]]()
_INI: Final = "diffcheck_backends"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--diffcheck-backends``, ``--diffcheck-reference`` and ``--diffcheck-locate``."""
    group = parser.getgroup("diffcheck", "differential numerical testing of array backends")
    group.addoption(
        "--diffcheck-backends",
        metavar="LIST",
        default=None,
        help="comma-separated candidate backends (e.g. mlx:cpu,wgpu,torch:cpu); default: the "
        "ini option diffcheck_backends, else every backend available here except the reference",
    )
    parser.addini(
        "diffcheck_backends",
        type="linelist",
        help="candidate backends for diffcheck_backend and diffcheck_compare (a list, or names "
        "separated by commas); --diffcheck-backends overrides it",
    )
    group.addoption(
        "--diffcheck-reference",
        metavar="BACKEND",
        default="numpy",
        help="the backend diffcheck_compare trusts (default: numpy)",
    )
    group.addoption(
        "--diffcheck-locate",
        action="store_true",
        default=False,
        help="when diffcheck_compare fails, name the first wrong Array API call inside the "
        "compared function (runs diffcheck.locate on failures only)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (the repo runs --strict-markers) and check the option's names."""
    config.addinivalue_line(
        "markers",
        "diffcheck(backends=None, reference=None, precision=None): run the test once per "
        "named backend through the diffcheck_backend fixture; reference and precision set "
        "diffcheck_compare's defaults",
    )
    config.stash[_ADAPTERS] = {}
    from .adapters import parse_backend
    from .errors import ConfigError

    # Both options are checked here, once, so a wrong name is a usage error line, never a
    # collection traceback (the reference would otherwise be blamed as a "required backend").
    reference = str(config.getoption("diffcheck_reference", "numpy"))
    try:
        parse_backend(reference)
    except ConfigError:
        raise pytest.UsageError(
            one_line(
                f"--diffcheck-reference={reference!r} is not a backend this diffcheck knows "
                "(the reference, not a candidate); run 'diffcheck backends' for the names"
            )
        ) from None
    where, given = _given(config)
    names = _option_backends(config)
    if given and not names:
        # An empty list would skip every diffcheck test: a typo, never what was meant.
        raise pytest.UsageError(
            one_line(
                f"{where}={', '.join(given)!r} names no backend; name one or more "
                "(mlx:cpu,torch:cpu: 'diffcheck backends' lists them) or leave it out to run "
                "on every backend available here"
            )
        )
    for name in names or []:
        try:
            parse_backend(name)
        except ConfigError as error:
            raise pytest.UsageError(
                one_line(f"{where} names {name!r}: {error}; run 'diffcheck backends'")
            ) from None


def _given(config: pytest.Config) -> tuple[str, list[str]]:
    """Where the backends were named (the option, else the ini option) and what it says."""
    text = config.getoption("diffcheck_backends", None)
    if text is not None:
        return "--diffcheck-backends", [str(text)]
    return "ini option diffcheck_backends", [str(line) for line in config.getini(_INI)]


def _option_backends(config: pytest.Config) -> list[str] | None:
    """The named backends, from the option or else the ini option; None when neither names any."""
    _, given = _given(config)
    if not given:
        return None
    return [name.strip() for text in given for name in text.split(",") if name.strip()]


def _default_backends(config: pytest.Config) -> list[str]:
    """Every backend available here (probed once, at the first test that needs one): a test
    is not fanned out into a skip per adapter that cannot run on this machine."""
    if _DEFAULTS not in config.stash:
        from .testing._backends import default_backends

        reference = str(config.getoption("diffcheck_reference"))
        kept, left = [], []
        for name in default_backends(reference=reference):
            adapter, probe, _ = _probed(config, name)
            if adapter is not None and probe is not None and probe.status == "unavailable":
                left.append(f"{name} ({probe.reason})")
            else:  # available, or broken: a broken adapter fails where it is used
                kept.append(name)
        config.stash[_DEFAULTS] = kept
        config.stash[_LEFT_OUT] = left
    return config.stash[_DEFAULTS]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Name the backends a default selection left out, once, with why."""
    left: list[str] = config.stash.get(_LEFT_OUT, [])
    if left:
        kept: list[str] = config.stash[_DEFAULTS]
        terminalreporter.write_line(
            one_line(
                f"diffcheck: ran on every backend available here "
                f"({', '.join(kept) or 'none'}); not available: "
                f"{'; '.join(left)}. Choose with diffcheck_backends in [tool.pytest.ini_options] "
                "or --diffcheck-backends"
            )
        )


def _marker_kwargs(definition: Any) -> dict[str, Any]:
    marker = definition.get_closest_marker(_MARKER)
    if marker is None:
        return {}
    if marker.args or not set(marker.kwargs) <= _MARKER_KEYS:
        raise pytest.Collector.CollectError(
            f"@pytest.mark.diffcheck takes only keyword arguments "
            f"{sorted(_MARKER_KEYS)}; got args {marker.args} and kwargs {sorted(marker.kwargs)}"
        )
    return dict(marker.kwargs)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every test that uses ``diffcheck_backend`` over the selected backends."""
    kwargs = _marker_kwargs(metafunc.definition)
    if _FIXTURE not in metafunc.fixturenames:
        if metafunc.definition.get_closest_marker(_MARKER) is not None:
            raise pytest.Collector.CollectError(
                f"{metafunc.definition.nodeid} is marked @pytest.mark.diffcheck but requests "
                "neither diffcheck_backend nor diffcheck_compare, so it has no backend to run on"
            )
        return
    selected = _option_backends(metafunc.config)
    wanted = kwargs.get("backends")
    if wanted is not None:
        if isinstance(wanted, str) or not all(isinstance(name, str) for name in wanted):
            raise pytest.Collector.CollectError(
                f"@pytest.mark.diffcheck(backends=...) must be a list of names, got {wanted!r}"
            )
        names = [name for name in wanted if selected is None or name in selected]
        why = (
            f"none of its backends ({', '.join(wanted)}) is in "
            f"{_given(metafunc.config)[0]}={','.join(selected or [])}"
        )
    else:
        names = selected if selected is not None else _default_backends(metafunc.config)
        why = (
            "no candidate backend is available here besides the reference; install an "
            "adapter ('diffcheck backends' says how) or name one with --diffcheck-backends"
        )
    if names:
        metafunc.parametrize(_FIXTURE, names, ids=names, indirect=True)
    else:
        # An empty selection is reported as a skip with the reason, never dropped silently.
        metafunc.parametrize(
            _FIXTURE,
            [pytest.param(None, marks=pytest.mark.skip(reason=why), id="no-backend")],
            indirect=True,
        )


def _probed(config: pytest.Config, name: str) -> tuple[Adapter | None, Probe | None, str | None]:
    """The adapter for ``name`` and its probe, once per session; or why it cannot load."""
    cache = config.stash[_ADAPTERS]
    if name not in cache:
        from .adapters import resolve
        from .errors import DiffcheckError

        try:
            adapter = resolve(name)
        except DiffcheckError as error:
            cache[name] = (None, None, str(error))
        else:
            cache[name] = (adapter, adapter.probe(), None)
    return cache[name]


def _adapter(config: pytest.Config, name: str) -> Adapter:
    """The adapter for ``name``, probed once per session; skip or fail when it cannot run."""
    __tracebackhide__ = True
    adapter_or_none, probe, problem = _probed(config, name)
    if adapter_or_none is None or probe is None:
        pytest.fail(f"diffcheck backend {name}: {problem}", pytrace=False)
    if probe.status == "unavailable":
        pytest.skip(f"diffcheck backend {name} is unavailable: {probe.reason}")
    if probe.status == "error":
        pytest.fail(
            f"diffcheck backend {name}: availability query failed: {probe.reason}", pytrace=False
        )
    return adapter_or_none


@pytest.fixture
def diffcheck_backend(request: pytest.FixtureRequest) -> Adapter:
    """The candidate backend's adapter (``.spec`` is its name, ``.namespace()`` its ``xp``).

    Parametrized by the plugin over the selected backends; skipped with the probe's reason
    where the backend cannot run.
    """
    name = getattr(request, "param", None)
    if not isinstance(name, str):
        pytest.fail(
            "diffcheck_backend was not parametrized; is the diffcheck plugin's "
            "pytest_generate_tests overridden?",
            pytrace=False,
        )
    return _adapter(request.config, name)


def assert_verdict(verdict: Verdict, *, context: str = "") -> Verdict:
    """Return ``verdict`` when it passed; otherwise raise an AssertionError that shows it.

    Parameters
    ----------
    verdict
        A verdict from :func:`diffcheck.diff` or :func:`diffcheck.compare`.
    context
        A first line for the message (which backends, which precision).

    Raises
    ------
    AssertionError
        With the readable verdict (status, NMSE against the tolerance, where the largest
        difference is, each segment and the reason) as its message.
    """
    __tracebackhide__ = True
    if not bool(verdict):  # a pass of one library on both sides is no pass (bool(verdict))
        raise AssertionError(f"{context}\n{verdict}" if context else str(verdict))
    return verdict


class DiffcheckCompare:
    """What the ``diffcheck_compare`` fixture returns: :func:`diffcheck.compare`, bound to
    the test's candidate, reference and default precision, asserting the verdict."""

    def __init__(
        self,
        candidate: Adapter,
        *,
        reference: str,
        precision: PrecisionName,
        locate: bool = False,
    ) -> None:
        self.candidate = candidate
        self.reference = reference
        self.precision: PrecisionName = precision
        #: Whether a failure also names the first wrong call (``--diffcheck-locate``).
        self.locate = locate

    def __call__(
        self,
        fn: Callable[..., Any],
        *inputs: Any,
        max_nmse: float | None = None,
        precision: PrecisionName | None = None,
        segments: Segments | None = None,
        locate: bool | None = None,
    ) -> Verdict:
        """Compare ``fn(xp, *arrays)`` on the candidate with the reference; assert a pass.

        A candidate that does not execute ``precision`` is skipped with the reason. With
        ``locate`` (by default ``--diffcheck-locate``), a failure's message also names the
        first wrong call inside ``fn`` (see ``compare(..., locate=True)``).
        """
        __tracebackhide__ = True
        from .api import compare
        from .errors import BackendError

        chosen: PrecisionName = precision or self.precision
        try:
            verdict = compare(
                fn,
                *inputs,
                reference=self.reference,
                candidate=self.candidate,
                max_nmse=max_nmse,
                precision=chosen,
                segments=segments,
                locate=self.locate if locate is None else locate,
            )
        except BackendError as error:
            pytest.skip(f"diffcheck backend {error.adapter}: {error.reason}")
        return assert_verdict(
            verdict,
            context=f"diffcheck: {self.candidate.spec} ({chosen}) does not match "
            f"reference {self.reference}",
        )


@pytest.fixture
def diffcheck_compare(
    request: pytest.FixtureRequest, diffcheck_backend: Adapter
) -> DiffcheckCompare:
    """``diffcheck_compare(fn, *inputs, max_nmse=..., precision=..., segments=...)``.

    Runs ``fn(xp, *arrays)`` on the reference and on this test's ``diffcheck_backend`` and
    fails the test with the readable verdict when they diverge.
    """
    kwargs = _marker_kwargs(request.node)
    reference = kwargs.get("reference") or request.config.getoption("diffcheck_reference")
    try:
        diffcheck_backend.namespace()
    except TypeError as error:  # the protocol's way to say "no Array API namespace here"
        pytest.skip(f"diffcheck backend {diffcheck_backend.spec} cannot run this test: {error}")
    return DiffcheckCompare(
        diffcheck_backend,
        reference=str(reference),
        precision=kwargs.get("precision") or "f32",
        locate=bool(request.config.getoption("diffcheck_locate", False)),
    )
