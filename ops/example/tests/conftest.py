"""Fail every test here with the fix, not a lookup error, when the package is not installed."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution

import pytest


@pytest.fixture(autouse=True)
def _installed() -> None:
    try:
        distribution("diffcheck-example-ops")
    except PackageNotFoundError:
        pytest.fail(
            "diffcheck-example-ops is not installed, so its entry point is not registered: "
            "pip install -e ops/example (nox -s tests installs it)",
            pytrace=False,
        )
