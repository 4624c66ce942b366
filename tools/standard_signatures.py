"""Generate the standard's signature data from its own stubs, one JSON file per version.

Reads ``src/array_api_stubs/_YYYY_MM/*.py`` of the data-apis/array-api repository (a git
directory, read at one commit, or a checkout) with :mod:`ast`, and writes, for each function
of each version: its parameters by kind (positional-only, positional-or-keyword,
keyword-only) with defaults, the data type each array parameter "should" or "must" have,
the interval an ``axis`` must or should lie on, and whether a complex input gives a real
result. Nothing is transcribed by hand; run it again when the standard changes::

    python tools/standard_signatures.py /path/to/array-api/.git src/diffcheck/values/standard
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

STUBS = "src/array_api_stubs"
#: Stub modules that hold functions (others hold the array object, constants, types).
MODULES = (
    "creation_functions",
    "data_type_functions",
    "elementwise_functions",
    "indexing_functions",
    "linear_algebra_functions",
    "manipulation_functions",
    "searching_functions",
    "set_functions",
    "sorting_functions",
    "statistical_functions",
    "utility_functions",
    "linalg",
    "fft",
)
_DTYPE = re.compile(
    r"\**(?P<level>should|must)\** have an? (?P<kind>(?:[a-z-]+ )*?)(?:array )?data type",
    re.IGNORECASE,
)
_INTERVAL = re.compile(
    r"\**(?P<level>should|must)\** be an integer on the (?:half-open )?interval "
    r"``(?P<open>[\[(])(?P<low>[^,`]+), *(?P<high>[^\])`]+)[\])]``",
    re.IGNORECASE,
)
_COMPLEX_REAL = re.compile(
    r"complex[- ](?:valued|floating-point)[^.]*?returned array (?:\*\*)?must(?:\*\*)? have "
    r"a real-valued floating-point data type",
    re.IGNORECASE,
)

_ALIAS = re.compile(r"Alias for :func:`~array_api\.([A-Za-z_.]+)`")


class Reader:
    """Files of one repository, from a git directory at ``commit`` or from a checkout."""

    def __init__(self, source: Path, commit: str) -> None:
        self.source, self.commit = source, commit
        self.git = (source / "HEAD").exists() and not (source / STUBS).exists()

    def resolved_commit(self) -> str:
        if not self.git:
            return "checkout"
        args = ["git", f"--git-dir={self.source}", "rev-parse", self.commit]
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()

    def list(self, folder: str) -> list[str]:
        if not self.git:
            return sorted(p.name for p in (self.source / folder).iterdir())
        args = ["git", f"--git-dir={self.source}", "ls-tree", "--name-only", self.commit]
        out = subprocess.run([*args, folder + "/"], check=True, capture_output=True, text=True)
        return sorted(line.rsplit("/", 1)[-1] for line in out.stdout.split())

    def read(self, path: str) -> str | None:
        if not self.git:
            file = self.source / path
            return file.read_text() if file.exists() else None
        args = ["git", f"--git-dir={self.source}", "show", f"{self.commit}:{path}"]
        out = subprocess.run(args, capture_output=True, text=True)
        return out.stdout if out.returncode == 0 else None


def _sections(doc: str) -> dict[str, str]:
    """A numpydoc docstring's sections by title (``Parameters``, ``Returns``, ``Notes``)."""
    lines = doc.splitlines()
    found: dict[str, list[str]] = {"": []}
    current = ""
    for index, line in enumerate(lines):
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if line.strip() and following and set(following) == {"-"}:
            current = line.strip()
            found[current] = []
        elif not (line.strip() and set(line.strip()) == {"-"}):
            found[current].append(line)
    return {title: "\n".join(body) for title, body in found.items()}


def _parameters(text: str) -> dict[str, str]:
    """Each parameter's description from a ``Parameters`` section (``name: type`` heads)."""
    result: dict[str, str] = {}
    name = None
    head = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*:")
    for line in text.splitlines():
        match = head.match(line)
        if match:
            name = match.group(1).lstrip("*")
            result[name] = ""
        elif name is not None:
            result[name] += " " + line.strip()
    return {key: " ".join(value.split()) for key, value in result.items()}


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)


def _describe(function: ast.FunctionDef) -> dict[str, Any]:
    args = function.args
    plain = args.posonlyargs + args.args
    defaults = dict(
        zip([a.arg for a in plain][len(plain) - len(args.defaults) :], args.defaults, strict=True)
    )
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d})
    doc = ast.get_docstring(function) or ""
    sections = _sections(doc)
    described = _parameters(sections.get("Parameters", ""))
    arrays = {
        a.arg
        for a in (*plain, *args.kwonlyargs)
        if a.annotation is not None and "array" in ast.unparse(a.annotation)
    }
    params: dict[str, Any] = {}
    for name, text in described.items():
        facts: dict[str, Any] = {}
        dtype = _DTYPE.search(text)
        if dtype and name in arrays:  # what an input array's dtype should be, not a dtype=
            facts["dtype"] = {"level": dtype.group("level").lower(), "kind": _kind(dtype)}
        interval = _INTERVAL.search(text)
        if interval:
            facts["interval"] = {
                "level": interval.group("level").lower(),
                "low": interval.group("low").strip(),
                "high": interval.group("high").strip(),
                "high_open": interval.group(0).rstrip("`").endswith(")"),
            }
        if facts:
            params[name] = facts
    returns = " ".join(sections.get("Returns", "").split())
    alias = _ALIAS.match(doc.strip())
    return {
        "positional_only": [a.arg for a in args.posonlyargs],
        "positional_or_keyword": [a.arg for a in args.args],
        "varargs": args.vararg.arg if args.vararg else None,
        "keyword_only": [a.arg for a in args.kwonlyargs],
        "defaults": {k: _literal(v) for k, v in defaults.items()},
        "params": params,
        "complex_returns_real": bool(_COMPLEX_REAL.search(returns)),
        "alias_of": alias.group(1) if alias else None,
    }


def _kind(match: re.Match[str]) -> str:
    kind = " ".join(match.group("kind").lower().split())
    return kind or "any"


def version_data(reader: Reader, folder: str) -> dict[str, Any]:
    """Every function of one version's stubs, by the standard's qualified name."""
    functions: dict[str, Any] = {}
    present = set(reader.list(folder))
    for module in MODULES:
        if module + ".py" not in present:
            continue
        text = reader.read(f"{folder}/{module}.py") or ""
        prefix = f"{module}." if module in ("linalg", "fft") else ""
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                functions[prefix + node.name] = _describe(node)
    for name, facts in functions.items():  # an alias has its original's documentation
        original = functions.get(facts["alias_of"] or "")
        if original is not None:
            functions[name] = {**original, "alias_of": facts["alias_of"]}
    return dict(sorted(functions.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="array-api git directory or checkout")
    parser.add_argument("out", type=Path, help="folder for <version>.json")
    parser.add_argument("--commit", default="HEAD")
    options = parser.parse_args(argv)
    reader = Reader(options.source, options.commit)
    commit = reader.resolved_commit()
    versions = [
        name for name in reader.list(STUBS) if re.fullmatch(r"_\d{4}_\d{2}", name) is not None
    ]
    if not versions:
        print(f"no _YYYY_MM stub folders under {options.source}/{STUBS}", file=sys.stderr)
        return 1
    options.out.mkdir(parents=True, exist_ok=True)
    for folder in versions:
        version = folder.strip("_").replace("_", ".")
        document = {
            "version": version,
            "source": f"data-apis/array-api {commit} {STUBS}/{folder}",
            "functions": version_data(reader, f"{STUBS}/{folder}"),
        }
        path = options.out / f"{version}.json"
        path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(f"{path}: {len(document['functions'])} functions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
