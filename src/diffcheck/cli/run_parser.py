"""``diffcheck run``'s options, declared once as an argparse parser: its help and its keys.

The help is argparse's, as for every other command. The reading of an argument list is
not: the reference contract (section 2.3) fixes rules argparse does not follow (every
option takes the next token as its value, even ``-x``; no ``--key=value``; ``--help`` only
alone; a repeated option is an error; the errors come in a fixed order, each in its own
words), so :mod:`diffcheck.cli.run_args` reads the tokens by those rules against the
options declared here.
"""

from __future__ import annotations

import argparse
import textwrap
from functools import cache

from ..config import DEFAULT_REFERENCE, DEFAULT_SEED
from ..ops import OPS
from ..precision import DEFAULT_MAX_NMSE, PRECISIONS
from ._parser import OneLineParser

__all__ = ["flags", "options", "run_parser", "usage"]

_DESCRIPTION = f"""\
diffcheck run: run one operation on exactly one required candidate backend and
compare it with the reference backend (default {DEFAULT_REFERENCE}) from the same seeded
inputs. The candidate never falls back to another backend."""


def _shown(value: object) -> str:
    # As typed on the command line (--causal true), as 'diffcheck ops' prints them.
    return str(value).lower() if isinstance(value, bool) else str(value)


def _op_lines() -> str:
    lines = []
    for op in OPS.values():
        defaults = ", ".join(
            f"{name} {_shown(field.default)}"
            for name, field in op.params_model.model_fields.items()
        )
        alias = f" (alias: {', '.join(op.aliases)})" if op.aliases else ""
        lines.append(f"  {op.name}{alias}: {defaults}")
    return "\n".join(lines)


def _epilog() -> str:
    tolerances = ", ".join(f"{k} {v:g}" for k, v in DEFAULT_MAX_NMSE.items())
    return f"""\
Operators and their options (defaults):
{_op_lines()}
  gemm computes C[m,n] = A[m,k]·B[n,k]ᵀ; silu-mul reads rows laid out [gate | up];
  context-lifecycle runs gemm -> copy -> silu-mul under four submission phases (as four
  independent chains on a backend without command contexts, and the report says so).

--max-nmse defaults by precision: {tolerances}.
context-lifecycle at f32 requires 0 < max-nmse <= 1e-7. A check passes only when NMSE is
strictly below the tolerance.
Every option takes exactly one value (--key=value is not accepted); operator options
cannot be combined with a different operator. not_run and failed exit nonzero. A pass
covers only the selected op, shape and precision on the named backend, and says nothing
about performance. Run 'diffcheck backends' to list backends and 'diffcheck ops' to list
operators."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """The description and epilog as written (their lists keep their lines); option help
    wrapped at spaces only, so an operator's name (context-lifecycle) stays whole."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _metavar(annotation: object) -> str:
    if annotation is bool:
        return "true|false"
    if annotation is int:
        return "N"
    if annotation is float:
        return "VALUE"
    return "TEXT"


@cache
def run_parser() -> argparse.ArgumentParser:
    """The parser that declares every ``run`` option (built once: the op registry is fixed
    for a process)."""
    parser = OneLineParser(
        prog="diffcheck run",
        description=_DESCRIPTION,
        epilog=_epilog(),
        formatter_class=_Formatter,
        add_help=False,  # declared below, in the group "options" after "required"
    )
    required = parser.add_argument_group("required")
    common = parser.add_argument_group("options")
    common.add_argument("-h", "--help", action="help", help="show this help and exit")
    required.add_argument(
        "--require-backend",
        metavar="BACKEND",
        required=True,
        help="the candidate backend that must run the check ('diffcheck backends' lists them)",
    )
    required.add_argument(
        "--op", metavar="OP", required=True, help=f"the operator: {', '.join(OPS)}"
    )
    required.add_argument(
        "--report",
        metavar="PATH",
        required=True,
        help="a new report file in an existing directory (never overwritten), or a "
        "directory, where a new <op>-<backend>-<UTC time>.json is written",
    )
    common.add_argument(
        "--reference", metavar="BACKEND", help=f"the trusted side (default {DEFAULT_REFERENCE})"
    )
    common.add_argument(
        "--precision",
        metavar="|".join(PRECISIONS),
        help="the storage precision the candidate executes with (default f32)",
    )
    common.add_argument("--seed", metavar="N", help=f"the input seed (default {DEFAULT_SEED})")
    common.add_argument(
        "--max-nmse",
        metavar="VALUE",
        help="the NMSE tolerance, fixed before the check runs (default by precision, below)",
    )
    common.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="refuse a check estimated to need more, before its report exists (bytes, or "
        "8G, 512MiB); default: half the memory available now",
    )
    common.add_argument(
        "--allow-self-test",
        action="store_true",
        help="let the candidate be the reference's own backend (numpy and numpy:cpu are "
        "one); the report's coverage says so, and it is never a pass",
    )
    by_option: dict[str, list[str]] = {}
    kinds: dict[str, object] = {}
    for op in OPS.values():
        for name, field in op.params_model.model_fields.items():
            by_option.setdefault(name, []).append(op.name)
            kinds.setdefault(name, field.annotation)
    group = parser.add_argument_group(
        "operator options", "each applies to the operators named; their defaults are below"
    )
    for name in sorted(by_option):
        group.add_argument(
            f"--{name}", metavar=_metavar(kinds[name]), help=", ".join(by_option[name])
        )
    # The usage line names the common options and "[OPERATOR OPTIONS]" (the operator
    # options are listed below it), wrapped by argparse under its "usage: " prefix.
    shown = [a for a in parser._actions if a not in group._group_actions]
    formatter = parser._get_formatter()
    formatter.add_usage(None, shown, [], prefix="usage: ")
    lines = formatter.format_help().strip().splitlines()
    tail = " [OPERATOR OPTIONS]"
    if len(lines[-1]) + len(tail) <= formatter._width:
        lines[-1] += tail
    else:
        lines.append(" " * len("usage: diffcheck run") + tail)
    parser.usage = "\n".join(lines).removeprefix("usage: ")
    return parser


def options() -> frozenset[str]:
    """Every ``--option`` of ``run`` (``--help`` aside: it is only help when alone)."""
    found = {o for a in run_parser()._actions for o in a.option_strings if o.startswith("--")}
    return frozenset(found - {"--help"})


def flags() -> frozenset[str]:
    """The options that take no value (``--allow-self-test``)."""
    return frozenset(
        s
        for a in run_parser()._actions
        if a.nargs == 0 and not isinstance(a, argparse._HelpAction)
        for s in a.option_strings
    )


def usage() -> str:
    """``diffcheck run --help``: argparse's help of the declared options."""
    return run_parser().format_help().rstrip("\n")
