"""``python -m diffcheck.search.schema [DIR]``: write ``findings-v1.json`` into DIR.

DIR defaults to ``reports/schema``; ``nox -s schema`` runs it, and a test fails when the
checked-in file drifts from the model.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .findings import FINDINGS_SCHEMA_FILE, findings_schema_text

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the schema file; print its path."""
    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0] if args else "reports/schema") / FINDINGS_SCHEMA_FILE
    path.write_text(findings_schema_text())
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
