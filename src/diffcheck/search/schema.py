"""``python -m diffcheck.search.schema [DIR]``: write ``findings-vN.json`` (N: the findings schema version) into DIR.

DIR defaults to ``reports/schema``; ``nox -s schema`` runs it, and a test fails when the
checked-in file drifts from the model.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ..files import write_replacing
from .findings import FINDINGS_SCHEMA_FILE, findings_schema_text

__all__ = ["main", "write_findings_schema"]


def write_findings_schema(directory: Path) -> Path:
    """Write ``findings-vN.json`` (N: the findings schema version) into ``directory`` (replacing, never following, a symlink)."""
    path = Path(directory) / FINDINGS_SCHEMA_FILE
    write_replacing(path, findings_schema_text().encode())
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Write the schema file; print its path."""
    args = list(sys.argv[1:] if argv is None else argv)
    print(write_findings_schema(Path(args[0] if args else "reports/schema")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
