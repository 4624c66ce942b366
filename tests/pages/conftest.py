"""The browser the page checks drive, and the pages of two small real runs.

The browser checks need Playwright (the ``pages`` extra) and Chromium (a system package).
Where either is missing they skip, saying that ``nox -s pages`` runs them; under that
session (``DIFFCHECK_PAGES_REQUIRED=1``) a missing browser is a failure, never a skip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from page_browser import CHROMIUM_ARGS, REQUIRED_ENV, chromium_path, missing_browser
from page_runs import search_page, sweep_page


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium driven by Playwright (skips, or fails under nox -s pages)."""
    reason = missing_browser()
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
