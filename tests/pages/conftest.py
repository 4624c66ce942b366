"""The browser the page checks drive, and the pages of two small real runs.

The browser checks need Playwright (the ``pages`` extra) and Chromium (a system package).
Where either is missing they skip, saying that ``nox -s pages`` runs them; under that
session (``DIFFCHECK_PAGES_REQUIRED=1``) a missing browser is a failure, never a skip.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from page_runs import search_page, sweep_page

#: Chromium's flags for a headless run with no network, profile sync or updates.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
REQUIRED_ENV = "DIFFCHECK_PAGES_REQUIRED"
CHROMIUM_ENV = "DIFFCHECK_CHROMIUM"


def chromium_path() -> str | None:
    """``$DIFFCHECK_CHROMIUM``, else Debian's /usr/bin/chromium, else one on PATH."""
    for candidate in (
        os.environ.get(CHROMIUM_ENV),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _missing() -> str | None:
    """Why the browser checks cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return (
            "the browser checks of the HTML pages need Playwright and Chromium: they run in "
            "`nox -s pages` (playwright is not installed here)"
        )
    if chromium_path() is None:
        return (
            "the browser checks of the HTML pages need Chromium: install it "
            "(`apt-get install -y chromium`, root) and run `nox -s pages`"
        )
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (skips, or fails under nox -s pages)."""
    reason = _missing()
    if reason is not None:
        if os.environ.get(REQUIRED_ENV):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), args=list(CHROMIUM_ARGS)
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def sweep_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index.html of a real sweep: every op, every status (page_runs.py)."""
    return sweep_page(tmp_path_factory.mktemp("sweep-page"))


@pytest.fixture(scope="session")
def search_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index.html of a real API search: new and known findings, a crash (page_runs.py)."""
    return search_page(tmp_path_factory.mktemp("search-page"))


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: ``$DIFFCHECK_PAGES_SHOTS`` (nox -s pages keeps them), else tmp."""
    chosen = os.environ.get("DIFFCHECK_PAGES_SHOTS")
    if chosen:
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    return tmp_path_factory.mktemp("shots")
