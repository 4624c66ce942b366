"""Where the browser checks find Playwright and Chromium, and why they cannot run when not."""

from __future__ import annotations

import importlib.util
import os
import shutil

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


def missing_browser() -> str | None:
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
