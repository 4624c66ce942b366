"""The pytest plugin, run in pytester sessions with --strict-markers and warnings as errors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytest.importorskip("array_api_strict", reason="the plugin tests run on array-api-strict")

# In-process pytester runs drop the modules they imported afterwards, and NumPy's extension
# modules cannot be loaded twice in one process: import what the inner runs use up front.
import array_api_compat.numpy  # noqa: E402, F401

import diffcheck.api  # noqa: E402, F401

# Once the lead adds the pytest11 entry point, pytest loads the plugin by itself; loading it
# a second time with -p would be a registration error, so add -p only while it is absent.
_INSTALLED = any(ep.value == "diffcheck.pytest_plugin" for ep in entry_points(group="pytest11"))
_LOAD = [] if _INSTALLED else ["-p", "diffcheck.pytest_plugin"]

# Warnings are errors in the inner runs too, except pytest's note that a module imported by
# the outer session cannot be assertion-rewritten again (it depends on how diffcheck is
# installed, not on the plugin).
_INI = """
[pytest]
addopts = --strict-markers -ra -p no:cacheprovider -p no:hypothesispytest
filterwarnings =
    error
    ignore::pytest.PytestAssertRewriteWarning
"""


def _run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makeini(_INI)
    pytester.makepyfile(test_backends=textwrap.dedent(source))
    return pytester.runpytest(*_LOAD, *args)


def test_a_backend_that_matches_passes_and_an_unavailable_one_is_skipped_with_its_reason(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
        import numpy as np

        def test_exp(diffcheck_compare):
            x = np.linspace(-2, 2, 64, dtype=np.float32)
            verdict = diffcheck_compare(lambda xp, x: xp.exp(x), x, max_nmse=1e-7)
            assert verdict.passed
        """,
        "--diffcheck-backends=array_api_strict,array_api_strict:gpu",
        "-v",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*test_exp?array_api_strict? PASSED*",
            "*test_exp?array_api_strict:gpu? SKIPPED*",
            "SKIPPED*diffcheck backend array_api_strict:gpu is unavailable: "
            "array_api_strict has no device 'gpu'*",
        ]
    )


def test_a_divergence_fails_with_the_readable_verdict(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
        import numpy as np

        def off_on_candidate(xp, x):
            return xp.exp(x) * (1.01 if "strict" in xp.__name__ else 1.0)

        def test_exp(diffcheck_compare):
            diffcheck_compare(off_on_candidate, np.linspace(-2, 2, 64, dtype=np.float32), segments=4)
        """,
        "--diffcheck-backends=array_api_strict",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: diffcheck: array_api_strict (f32) does not match reference numpy",
            "E*FAILED  nmse * >= tolerance 1e-07 (*x of tolerance), n=64",
            "E*first failing segment: segment0 [[]0:16[]]",
            "E*segment3*FAIL*",
        ]
    )


def test_the_marker_parametrizes_and_sets_precision(pytester: pytest.Pytester) -> None:
    result = _run(
        pytester,
        """
        import numpy as np
        import pytest

        @pytest.mark.diffcheck(backends=["array_api_strict", "torch:cpu"], precision="f16")
        def test_square(diffcheck_compare, diffcheck_backend):
            x = np.linspace(-2, 2, 64, dtype=np.float32)
            verdict = diffcheck_compare(lambda xp, x: x * x, x)
            assert verdict.tolerance == 1e-6
            assert diffcheck_backend.spec == "torch:cpu"
        """,
        "-v",
    )
    # array_api_strict stores no float16: skipped with that reason; torch:cpu runs at f16
    # (numpy:cpu would be the reference's own backend, which a check refuses).
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*array_api_strict: it does not execute precision f16 (it executes: f32)*"]
    )


def test_the_option_narrows_a_marker_and_an_empty_selection_is_a_visible_skip(
    pytester: pytest.Pytester,
) -> None:
    result = _run(
        pytester,
        """
        import pytest

        @pytest.mark.diffcheck(backends=["array_api_strict", "numpy:cpu"])
        def test_narrowed(diffcheck_backend):
            assert diffcheck_backend.spec == "numpy:cpu"

        @pytest.mark.diffcheck(backends=["array_api_strict"])
        def test_nothing_selected(diffcheck_backend):
            raise AssertionError("must not run")
        """,
        "--diffcheck-backends=numpy:cpu",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*none of its backends (array_api_strict) is in --diffcheck-backends=numpy:cpu"]
    )


def test_default_backends_are_those_available_here_and_the_rest_are_named_once(
    pytester: pytest.Pytester,
) -> None:
    from diffcheck.testing import default_backends

    every = default_backends()  # names only: this process imports no backend library
    # In a subprocess, which probes them: an in-process run cannot import a backend's
    # extension modules a second time.
    pytester.makeini(_INI)
    pytester.makepyfile(test_backends="def test_names(diffcheck_backend):\n    pass\n")
    result = pytester.runpytest_subprocess(*_LOAD, "-q")
    out = result.stdout.str()
    line = next(line for line in out.splitlines() if "ran on every backend available here" in line)
    ran = line.split("available here (")[1].split(")")[0].split(", ")
    left = [name for name in every if name not in ran]
    assert "array_api_strict" in ran  # installed here: this module skips without it
    assert set(ran) <= set(every)
    assert left  # this machine lacks some (mlx:gpu off a GPU, metal off macOS)
    result.assert_outcomes(passed=len(ran))
    for name in left:  # not a skip line each: one summary line with the reason
        assert f"test_names[{name}]" not in out
        assert f"{name} (" in line
    assert "SKIPPED" not in out


@pytest.mark.parametrize("given", ["--diffcheck-backends=", "--diffcheck-backends=,,,"])
def test_an_option_naming_no_backend_is_a_usage_error(
    pytester: pytest.Pytester, given: str
) -> None:
    result = _run(pytester, "def test_x(diffcheck_backend): pass\n", given)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--diffcheck-backends=* names no backend; name one or more*"])


def _run_with_ini(pytester: pytest.Pytester, line: str, *args: str) -> pytest.RunResult:
    pytester.makeini(_INI + line + "\n")
    pytester.makepyfile(test_backends="def test_names(diffcheck_backend):\n    pass\n")
    return pytester.runpytest(*_LOAD, "--collect-only", "-q", *args)


def test_the_ini_option_chooses_the_backends_and_the_command_line_overrides_it(
    pytester: pytest.Pytester,
) -> None:
    result = _run_with_ini(pytester, "diffcheck_backends = array_api_strict, numpy:cpu")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*test_names?array_api_strict?", "*test_names?numpy:cpu?"])
    assert "mlx" not in result.stdout.str()
    result = _run_with_ini(
        pytester, "diffcheck_backends = array_api_strict", "--diffcheck-backends=numpy:cpu"
    )
    result.stdout.fnmatch_lines(["*test_names?numpy:cpu?"])
    assert "array_api_strict" not in result.stdout.str()


@pytest.mark.parametrize(("line", "said"), [(",,", "names no backend"), ("nope:x", "'nope:x'")])
def test_a_bad_ini_option_is_a_usage_error(pytester: pytest.Pytester, line: str, said: str) -> None:
    result = _run_with_ini(pytester, f"diffcheck_backends = {line}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*ini option diffcheck_backends*{said}*"])


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            """
            import pytest

            @pytest.mark.diffcheck(backends=["array_api_strict"])
            def test_forgot_the_fixture():
                pass
            """,
            "*is marked @pytest.mark.diffcheck but requests neither diffcheck_backend nor "
            "diffcheck_compare*",
        ),
        (
            """
            import pytest

            @pytest.mark.diffcheck("array_api_strict")
            def test_positional(diffcheck_backend):
                pass
            """,
            "*@pytest.mark.diffcheck takes only keyword arguments*",
        ),
        (
            """
            import pytest

            @pytest.mark.diffcheck(backends="array_api_strict")
            def test_a_string(diffcheck_backend):
                pass
            """,
            "*backends=...) must be a list of names, got 'array_api_strict'*",
        ),
    ],
    ids=["no-fixture", "positional", "string"],
)
def test_a_misused_marker_is_a_collection_error(
    pytester: pytest.Pytester, source: str, message: str
) -> None:
    result = _run(pytester, source)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])


def test_an_unknown_backend_in_the_option_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "def test_x(): pass\n", "--diffcheck-backends=nope:cpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--diffcheck-backends names 'nope:cpu'*diffcheck backends*"])


def test_the_marker_is_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makeini(_INI)
    result = pytester.runpytest(*_LOAD, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.diffcheck(backends=None, reference=None*"])


def test_the_plugin_loads_through_a_pytest11_entry_point(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bare distribution whose only content is the entry point the lead adds to pyproject
    # (`[project.entry-points.pytest11] diffcheck = "diffcheck.pytest_plugin"`). If diffcheck
    # itself registers it too, pytest loads the first and skips the same name after it.
    site = tmp_path / "site"
    info = site / "diffcheck_plugin_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: diffcheck-plugin-probe\nVersion: 0\n"
    )
    (info / "entry_points.txt").write_text("[pytest11]\ndiffcheck = diffcheck.pytest_plugin\n")
    pytester.makeini(_INI)
    pytester.makepyfile(
        test_loaded="""
        import pytest

        @pytest.mark.diffcheck(backends=["array_api_strict"])
        def test_runs_on_the_marked_backend(diffcheck_backend):
            assert diffcheck_backend.spec == "array_api_strict"
        """
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), *sys.path]))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)


def test_importing_the_plugin_imports_no_backend() -> None:
    code = (
        "import sys, diffcheck.pytest_plugin;"
        "loaded = [m for m in ('torch', 'mlx', 'wgpu', 'array_api_strict') if m in sys.modules];"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_installed_libraries_are_found_without_importing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    from diffcheck.testing import installed_libraries

    real = importlib.util.find_spec
    present = {"torch", "jax"}

    def find_spec(name: str, *args: object) -> object:
        if name in {"torch", "jax", "cupy", "dask", "sparse", "ndonnx", "array_api_strict"}:
            return object() if name in present else None
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert installed_libraries() == ["torch", "jax"]
    assert installed_libraries(reference="torch:cpu") == ["jax"]


def test_a_backend_without_an_array_api_namespace_skips_diffcheck_compare_with_its_reason(
    pytester: pytest.Pytester,
) -> None:
    from diffcheck.adapters import resolve

    probe = resolve("wgpu:opengl").probe()
    if probe.status != "available":
        pytest.skip(f"wgpu:opengl is not available here: {probe.reason}")
    result = _run(
        pytester,
        """
        import numpy as np

        def test_exp(diffcheck_compare):
            diffcheck_compare(lambda xp, x: xp.exp(x), np.ones(8, np.float32))
        """,
        "--diffcheck-backends=wgpu:opengl,array_api_strict",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["SKIPPED*diffcheck backend wgpu:opengl cannot run this test: *no Array API namespace*"]
    )


_PLANTED = """
import numpy as np
import array_api_strict

def softmax(xp, x):
    scaled = x * 2.0
    e = xp.exp(scaled)  # the planted call
    return e / xp.sum(e)

def test_softmax(diffcheck_compare, monkeypatch):
    real = array_api_strict.exp
    monkeypatch.setattr(array_api_strict, "exp", lambda x: real(x) + 0.5)  # a wrong exp
    diffcheck_compare(softmax, np.linspace(-2, 2, 64, dtype=np.float32))
"""


def test_the_locate_option_names_the_first_wrong_call_in_the_failure(
    pytester: pytest.Pytester,
) -> None:
    result = _run(pytester, _PLANTED, "--diffcheck-backends=array_api_strict", "--diffcheck-locate")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: diffcheck: array_api_strict (f32) does not match reference numpy",
            "E*FAILED  nmse *",
            "E*located: array_api_strict vs numpy at f32 (reference float32; candidate float32): 4 calls*",
            "E*first wrong call: #1 exp at test_backends.py:6",
            "E*2 later call(s) only inherit the divergence",
        ]
    )


def test_without_the_locate_option_a_failure_runs_no_locate(pytester: pytest.Pytester) -> None:
    result = _run(pytester, _PLANTED, "--diffcheck-backends=array_api_strict")
    result.assert_outcomes(failed=1)
    assert "first wrong call" not in result.stdout.str()
    assert "located:" not in result.stdout.str()
