"""What the parent hands one isolated worker: a check's config and where its report goes.

The spec is the report's own ``config`` record plus the reference and the report path, as
JSON on the worker's command line, so the worker rebuilds the very same :class:`Check` with
:func:`~diffcheck.config.make_check` (validating it again in its own process) and a person
can rerun one check by hand with the command line the log shows.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..config import Check, make_check

__all__ = ["WorkerSpec"]


class WorkerSpec(BaseModel):
    """One check as a worker process receives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="The check's id in the sweep (its report path without .json).")
    report: str = Field(description="Absolute path of the report file the worker creates.")
    reference: str = Field(description="The reference backend.")
    config: dict[str, Any] = Field(description="The report's config record of the check.")

    @classmethod
    def of(cls, check_id: str, check: Check, report: str) -> WorkerSpec:
        """The spec that rebuilds ``check`` and writes its report to ``report``."""
        return cls(
            id=check_id,
            report=report,
            reference=check.reference,
            config=check.record().model_dump(mode="json"),
        )

    def check(self) -> Check:
        """Rebuild and revalidate the check.

        Raises
        ------
        ConfigError
            When the config no longer validates (for example a different diffcheck version).
        """
        values = dict(self.config)
        backend = values.pop("require_backend")
        op = values.pop("op")
        return make_check(
            backend,
            op,
            reference=self.reference,
            precision=values.pop("precision"),
            seed=values.pop("seed"),
            max_nmse=values.pop("max_nmse"),
            **values,
        )
