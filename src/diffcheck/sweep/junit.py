"""JUnit XML of a sweep: one testsuite per backend pair, one testcase per check.

A failed check is a ``<failure>`` with its reason, and so is a check that passed with both
sides from one library (``type="not_independent"``: never a pass); a not_run check is
``<skipped>`` with its reason (CI dashboards show both without failing on skips; the sweep's
exit status is what fails a required pair). A failure with a known divergence of its adapter is ``<skipped
message="known divergence: ...">`` with the report's reason in the text, as pytest writes an
xfail (a ``<failure>`` under ``--strict-known``); a pass that matches one says so in its
``<system-out>``, as pytest's non-strict XPASS is a pass. The layout is the common subset that Jenkins, GitLab and GitHub
reporters read: ``testsuites > testsuite > testcase``. Every text and attribute goes through
:func:`~diffcheck.text.printable`, so control characters in a matrix or a reason are
visible escapes and the document always parses.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..text import printable
from .summary import SummaryRow, SweepSummary

__all__ = ["junit_xml"]


def _fails(row: SummaryRow, strict_known: bool) -> bool:
    return row.outcome == "failed" or (strict_known and row.outcome == "known")


def _skips(row: SummaryRow, strict_known: bool) -> bool:
    return row.outcome == "not_run" or (not strict_known and row.outcome == "known")


def _case(suite: ET.Element, row: SummaryRow, strict_known: bool) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=f"diffcheck.{row.candidate}.{row.op}",
        name=row.id,
        time=f"{row.worker_wall_s or 0.0:.3f}",
        file=row.report,
    )
    detail = (
        f"{row.op} {row.shape} {row.precision} seed {row.seed}: "
        f"nmse {row.nmse!r} (tolerance {row.tolerance!r}); worker {row.worker}; report {row.report}"
    )
    known = row.known_divergence
    why = f"known divergence: {known.reason} ({known.upstream})" if known else ""
    if row.outcome == "known" and not strict_known:
        skipped = ET.SubElement(case, "skipped", message=why, type="known_divergence")
        skipped.text = f"{row.reason}\n{detail}"
    elif row.status == "failed":
        failure = ET.SubElement(case, "failure", message=row.reason or "failed", type="failed")
        failure.text = f"{detail}\n{why} (--strict-known)" if known else detail
    elif row.passed_not_independent:
        failure = ET.SubElement(
            case, "failure", message=row.why or "not independent", type="not_independent"
        )
        failure.text = f"status passed, not counted: {detail}"
    elif row.status == "not_run":
        ET.SubElement(case, "skipped", message=row.reason or "not_run")
    else:
        out = ET.SubElement(case, "system-out")
        out.text = f"{detail}\n{why}: not seen, the check passed" if known else detail


def junit_xml(summary: SweepSummary) -> bytes:
    """The sweep as a JUnit XML document (UTF-8 bytes with an XML declaration)."""
    strict = summary.strict_known
    root = ET.Element(
        "testsuites",
        name="diffcheck sweep",
        tests=str(summary.counts.total),
        failures=str(sum(_fails(r, strict) for r in summary.checks)),
        errors="0",
        skipped=str(sum(_skips(r, strict) for r in summary.checks)),
        time=f"{summary.elapsed_s:.3f}",
    )
    suites: dict[str, list[SummaryRow]] = {}
    for row in summary.checks:
        suites.setdefault(f"{row.reference} -> {row.candidate}", []).append(row)
    for name, rows in suites.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=name,
            tests=str(len(rows)),
            failures=str(sum(_fails(r, strict) for r in rows)),
            errors="0",
            skipped=str(sum(_skips(r, strict) for r in rows)),
            time=f"{sum(r.worker_wall_s or 0.0 for r in rows):.3f}",
            timestamp=summary.started_at,
        )
        for row in rows:
            _case(suite, row, strict)
    for element in root.iter():
        # XML 1.0 cannot carry most control characters: spell them so the file parses.
        element.attrib = {key: printable(value) for key, value in element.attrib.items()}
        if element.text:
            element.text = printable(element.text)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
