"""Read mutmut's results after `nox -s mutants`: print the score and fail on unexplained survivors.

A surviving mutant is either killed by a new test or listed in tests/mutants_equivalent.toml
with one line of reasoning why no test can tell it from the original (an equivalent mutant).
Only the mutants that were checked count: `nox -s mutants -- "diffcheck.differ*"` runs and
judges the differ's alone, and the others are reported as not checked. A mutant no test
reaches ("no tests") fails the session like a survivor: nothing would notice it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tests" / "mutants_equivalent.toml"
KILLED = {"killed", "timeout", "segfault", "caught by type check"}


def statuses() -> dict[str, str]:
    """Every mutant's name and status, from ``mutmut results --all true``."""
    listing = subprocess.run(
        ["mutmut", "results", "--all", "true"], check=True, capture_output=True, text=True
    ).stdout
    found = {}
    for line in listing.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            found[name] = status
    return found


def module_of(name: str) -> str:
    """``diffcheck.values.compare.x_f__mutmut_3`` -> ``values.compare``."""
    path = name.split(".x_")[0].split(".xǁ")[0]
    return path.removeprefix("diffcheck.")


def table(status_of: dict[str, str], explained: dict[str, str]) -> str:
    """CONTRIBUTING's per-module table of mutants: killed, survived, equivalent, not checked."""
    rows: dict[str, Counter[str]] = {}
    for name, status in status_of.items():
        row = rows.setdefault(module_of(name), Counter())
        row["mutants"] += 1
        if status in KILLED:
            row["killed"] += 1
        elif status == "survived":
            row["survived"] += 1
            row["equivalent" if name in explained else "unexplained"] += 1
        elif status in ("not checked", "skipped"):
            row["not checked"] += 1
        else:
            row[status] += 1
    columns = ["mutants", "killed", "survived", "equivalent", "unexplained", "no tests"]
    columns += ["not checked"]
    lines = [
        "| module | " + " | ".join(columns) + " |",
        "| --- |" + " ---: |" * len(columns),
    ]
    total: Counter[str] = Counter()
    for module in sorted(rows):
        total.update(rows[module])
        lines.append(f"| `{module}` | " + " | ".join(str(rows[module][c]) for c in columns) + " |")
    lines.append("| all | " + " | ".join(f"{total[c]:,}" for c in columns) + " |")
    return "\n".join(lines)


def stale_entries(
    status_of: dict[str, str], explained: dict[str, str]
) -> tuple[list[str], list[str]]:
    """The equivalent entries that are stale, and those outside this run.

    An entry is stale when its mutant no longer exists, or was checked and did not survive.
    A leg that narrows ``only_mutate`` makes no mutant of the other modules: their entries
    are outside it, neither confirmed nor stale (tests/test_mutants_verdict.py keeps every
    entry's module in the committed ``only_mutate``, so a full run judges them all).
    """
    mutated = {module_of(name) for name in status_of}
    outside = sorted(name for name in explained if module_of(name) not in mutated)
    stale = sorted(
        name
        for name in explained
        if module_of(name) in mutated
        and status_of.get(name, "gone") not in ("survived", "not checked", "skipped")
    )
    return stale, outside


def main() -> int:
    status_of = statuses()
    if "--table" in sys.argv[1:]:
        explained_now = tomllib.loads(EQUIVALENT.read_text()).get("equivalent", {})
        print(table(status_of, explained_now))
        return 0
    checked = {name: s for name, s in status_of.items() if s not in ("not checked", "skipped")}
    counts = Counter(checked.values())
    survivors = sorted(name for name, s in checked.items() if s == "survived")
    untested = sorted(name for name, s in checked.items() if s == "no tests")
    explained = tomllib.loads(EQUIVALENT.read_text()).get("equivalent", {})
    unexplained = [name for name in survivors if name not in explained]
    stale, outside = stale_entries(status_of, explained)
    killed = sum(counts[s] for s in KILLED)
    total = len(checked)
    score = killed / max(total - len(survivors) + len(unexplained), 1)
    print(
        f"mutants checked: {total} (not checked: {len(status_of) - total}), killed {killed} "
        f"({killed / max(total, 1):.1%}); survived {len(survivors)}: "
        f"{len(survivors) - len(unexplained)} equivalent, {len(unexplained)} unexplained; "
        f"no tests {len(untested)}; score over non-equivalent mutants {score:.1%}"
    )
    for name in survivors:
        if name in explained:
            print(f"  equivalent {name}: {explained[name]}")
        else:
            print(f"  SURVIVED   {name}")
    for name in untested:
        print(f"  NO TESTS   {name}")
    for name in stale:
        print(f"  stale equivalent entry (killed now, or no such mutant): {name}")
    if outside:
        print(f"  equivalent entries of modules this run did not mutate: {len(outside)}")
    for status in sorted(set(counts) - KILLED - {"survived", "no tests"}):
        print(f"  {status}: {counts[status]}")
    if not checked:
        print("  no mutant was checked: run `mutmut run` first")
    return 1 if unexplained or untested or stale or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
