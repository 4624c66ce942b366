"""The sweep's views: JUnit XML, the self-contained HTML page (rendered in headless Chromium)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sweep_helpers import FAULTS, HEALTHY, SweepRun


def test_junit_xml_has_one_testcase_per_check(fault_sweep: SweepRun) -> None:
    root = ET.parse(fault_sweep.directory / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("12", "4", "6")
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == {"numpy -> array_api_strict", "numpy -> no_such_backend"}
    strict = suites["numpy -> array_api_strict"]
    assert (strict.get("tests"), strict.get("failures"), strict.get("skipped")) == ("6", "4", "0")
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert len(cases) == 12
    killed = cases["numpy-vs-array_api_strict/gemm/gemm-64x33x35-f32-s7"]
    failure = killed.find("failure")
    assert failure is not None
    assert failure.get("message") == "worker killed by signal SIGKILL (9)"
    for check_id in HEALTHY:
        assert cases[check_id].find("failure") is None
        assert cases[check_id].find("skipped") is None
    skipped = [case for case in cases.values() if case.find("skipped") is not None]
    assert len(skipped) == 6
    assert all(
        'unsupported required backend "no_such_backend"'
        in (case.find("skipped").get("message") or "")  # type: ignore[union-attr]
        for case in skipped
    )


class _Scan(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.rows: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("href", "src") and v]
        if tag == "tr" and (values.get("class") or "").startswith("check "):
            self.rows.append(values)


def test_the_page_is_self_contained(fault_sweep: SweepRun) -> None:
    scan = _Scan()
    scan.feed((fault_sweep.directory / "index.html").read_text())
    assert "script" not in scan.tags
    assert "link" not in scan.tags
    assert scan.tags.count("svg") >= 1 + 12 + 1  # overview, one strip per check, a phase chart
    # Every link is relative and points at a report that exists beside the page.
    assert scan.urls
    for url in scan.urls:
        assert "://" not in url
        if not url.startswith("#"):
            assert (fault_sweep.directory / url).is_file()
    assert len(scan.rows) == 12
    statuses = [row["data-status"] for row in scan.rows]
    assert statuses.count("failed") == len(FAULTS)


def _chromium() -> str | None:
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _png_pixels(path: Path) -> tuple[int, int, bytes]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


def _chromium_args(binary: str, profile: Path) -> list[str]:
    return [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]


def test_the_page_renders_in_headless_chromium(fault_sweep: SweepRun, tmp_path: Path) -> None:
    binary = _chromium()
    if binary is None:
        pytest.skip("chromium is not installed (CI installs it with apt-get install chromium)")
    url = (fault_sweep.directory / "index.html").as_uri()
    args = _chromium_args(binary, tmp_path / "profile")
    for window in (1280, 1920):  # a laptop and a desktop screen
        shot = tmp_path / f"shot-{window}.png"
        subprocess.run(
            [*args, f"--screenshot={shot}", f"--window-size={window},2000", url],
            capture_output=True,
            timeout=120,
            check=True,
        )
        width, height, pixels = _png_pixels(shot)
        assert (width, height) == (window, 2000)
        assert shot.stat().st_size > 20_000
        assert len(set(pixels)) > 50  # text, badges and plots, not a blank page
    dom = subprocess.run(
        [*args, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert dom.count('<tr class="check status-') == 12
    assert dom.count('data-status="failed"') == 4
    assert "worker killed by signal SIGKILL (9)" in dom
    assert "Sweep failed: 4 checks failed" in dom
