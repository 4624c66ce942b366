"""JUnit XML of a sweep: one testsuite per backend pair, one testcase per check.

A failed check is a ``<failure>`` with its reason; a not_run check is ``<skipped>`` with its
reason (CI dashboards show both without failing on skips; the sweep's exit status is what
fails a required pair). The layout is the common subset that Jenkins, GitLab and GitHub
reporters read: ``testsuites > testsuite > testcase``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .summary import SummaryRow, SweepSummary

__all__ = ["junit_xml"]


def _case(suite: ET.Element, row: SummaryRow) -> None:
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
    if row.status == "failed":
        failure = ET.SubElement(case, "failure", message=row.reason or "failed", type="failed")
        failure.text = detail
    elif row.status == "not_run":
        ET.SubElement(case, "skipped", message=row.reason or "not_run")
    else:
        out = ET.SubElement(case, "system-out")
        out.text = detail


def junit_xml(summary: SweepSummary) -> bytes:
    """The sweep as a JUnit XML document (UTF-8 bytes with an XML declaration)."""
    root = ET.Element(
        "testsuites",
        name="diffcheck sweep",
        tests=str(summary.counts.total),
        failures=str(summary.counts.failed),
        errors="0",
        skipped=str(summary.counts.not_run),
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
            failures=str(sum(r.status == "failed" for r in rows)),
            errors="0",
            skipped=str(sum(r.status == "not_run" for r in rows)),
            time=f"{sum(r.worker_wall_s or 0.0 for r in rows):.3f}",
            timestamp=summary.started_at,
        )
        for row in rows:
            _case(suite, row)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
