"""Read mutmut's results after `nox -s mutants`: print the score and fail on unexplained survivors.

A surviving mutant is either killed by a new test or listed in tests/mutants_equivalent.toml
with one line of reasoning why no test can tell it from the original (an equivalent mutant).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tests" / "mutants_equivalent.toml"


def main() -> int:
    subprocess.run(["mutmut", "export-cicd-stats"], check=True, capture_output=True)
    stats = json.loads((ROOT / "mutants" / "mutmut-cicd-stats.json").read_text())
    listing = subprocess.run(
        ["mutmut", "results"], check=True, capture_output=True, text=True
    ).stdout
    survivors = sorted(
        line.split(":")[0].strip() for line in listing.splitlines() if line.endswith(": survived")
    )
    explained = tomllib.loads(EQUIVALENT.read_text()).get("equivalent", {})
    unexplained = [name for name in survivors if name not in explained]
    stale = sorted(set(explained) - set(survivors))
    total = stats["total"] - stats["skipped"]
    killed = stats["killed"] + stats["timeout"] + stats["segfault"]
    print(
        f"mutants: {total}, killed {killed} ({killed / max(total, 1):.1%}), "
        f"survived {len(survivors)} ({len(survivors) - len(unexplained)} equivalent, "
        f"{len(unexplained)} unexplained), no tests {stats['no_tests']}"
    )
    for name in survivors:
        print(
            f"  {'equivalent' if name in explained else 'SURVIVED  '} {name}"
            + (f": {explained[name]}" if name in explained else "")
        )
    for name in stale:
        print(f"  stale equivalent entry (no longer survives): {name}")
    return 1 if unexplained or stats["no_tests"] else 0


if __name__ == "__main__":
    sys.exit(main())
