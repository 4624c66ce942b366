"""Checks on machines that do not share the sweep directory: reports travel back as data.

A remote task (:func:`run_remote`, run by a dask worker) gets the check's spec without the
parent's path, runs it isolated (a fresh worker process, :func:`.isolate.run_isolated`) in a
scratch directory of its own, and returns the finished report document and the worker's
log as bytes. The parent (:class:`Landing`) is the only writer under the sweep directory,
with the same discipline as a local sweep:

- before submitting, it creates the report new with the incomplete record
  (``completed: false``), so an interrupted sweep leaves evidence ``--resume`` recognises;
- on the result, it checks the document (valid, complete, the very check it asked for) and
  replaces its own incomplete record with it, only while the path still holds that record;
- when the task itself failed (the dask worker died, the task errored) or returned
  something that is not that check's report, the report is settled ``failed`` with why.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ReportError
from ..files import FileIdentity, identity, read_regular, replace_if_unchanged
from ..report.limits import report_read_limit
from ..report.read import parse_report
from ..report.writer import ReportWriter
from .isolate import WorkerOutcome, prepare_report_path, run_isolated
from .records import new_document, settle_report
from .spec import WorkerSpec
from .worker_log import append_log, log_path, tail_bytes

__all__ = ["Landing", "RemoteResult", "remote_spec", "run_remote"]

#: The most worker log a remote task sends back (its tail).
_LOG_BYTES = 64 * 1024
#: The name a remote task gives the report in its scratch directory.
_REMOTE_NAME = "report.json"


@dataclass(frozen=True)
class RemoteResult:
    """What a remote task sends back: how its worker ended, the report and the log."""

    outcome: WorkerOutcome
    report: bytes | None
    log: bytes | None


def remote_spec(spec: WorkerSpec) -> str:
    """The spec a remote task receives: the parent's report path is not part of it."""
    return spec.model_copy(update={"report": _REMOTE_NAME}).model_dump_json()


def run_remote(spec_json: str, timeout_s: float) -> RemoteResult:
    """Run one check isolated in a scratch directory here; return its report as bytes.

    This is the function a dask worker runs; it writes nothing outside its scratch directory.
    """
    spec = WorkerSpec.model_validate_json(spec_json)
    with tempfile.TemporaryDirectory(prefix="diffcheck-remote-") as scratch:
        local = spec.model_copy(update={"report": str(Path(scratch) / _REMOTE_NAME)})
        outcome = run_isolated(local.model_dump_json(), timeout_s)
        try:
            limit = report_read_limit().bytes
            report: bytes | None = read_regular(Path(local.report), limit=limit)
        except (FileNotFoundError, ReportError):
            report = None
        log = log_path(Path(local.report))
        text = tail_bytes(log, _LOG_BYTES)
    return RemoteResult(replace(outcome, report=spec.report, log=None), report, text)


class Landing:
    """The parent's side of one remote check: its report path, from creation to final record."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.path = Path(spec.report)
        self.check = spec.check()
        self.reused: WorkerOutcome | None = None
        self._created: FileIdentity | None = None
        complete, self._moved = prepare_report_path(self.path)
        if complete:
            self.reused = WorkerOutcome(
                spec.id, spec.report, "not run: report already complete", None, reused=True
            )
            return
        ReportWriter(self.path).write(new_document(self.check))
        self._created = identity(self.path)

    def _unusable(self, data: bytes | None) -> str | None:
        """Why ``data`` is not this check's complete report, or None."""
        if data is None:
            return "the remote task returned no report"
        try:
            document = parse_report(data, "of the remote task")
        except ReportError as error:
            return f"the remote task returned an invalid report: {error}"
        if not document.completed:
            return "the remote task returned an incomplete report"
        if document.config.model_dump() != self.check.record().model_dump():
            return "the remote task returned the report of a different check"
        return None

    def _keep_log(self, log: bytes | None) -> str | None:
        if not log:
            return None
        path = log_path(self.path)
        append_log(path, log)
        return str(path)

    def land(self, result: RemoteResult) -> WorkerOutcome:
        """Write the returned report (or a failed one saying why) and describe the outcome."""
        assert self._created is not None
        problem = self._unusable(result.report)
        log = self._keep_log(result.log)
        outcome = replace(result.outcome, report=self.spec.report, log=log)
        if problem is None:
            assert result.report is not None
            replace_if_unchanged(self.path, self._created, result.report)
            return replace(outcome, moved_aside=str(self._moved) if self._moved else None)
        return self.fail(problem, outcome)

    def fail(self, reason: str, outcome: WorkerOutcome | None = None) -> WorkerOutcome:
        """Settle the report ``failed`` with ``reason`` (the task or its result was unusable)."""
        settled = settle_report(self.path, self.check, reason)
        base = outcome or WorkerOutcome(self.spec.id, self.spec.report, reason, None)
        moved = self._moved or settled.moved_aside
        return replace(base, action=settled.action, moved_aside=str(moved) if moved else None)
