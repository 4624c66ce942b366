"""The ``diffcheck`` command: one subcommand per job, one line on stderr per error."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ..errors import DiffcheckError
from ..text import one_line, printable

__all__ = ["main"]

_USAGE = """usage: diffcheck COMMAND [ARGS]

commands:
  run       run one required check and write its report (diffcheck run --help)
  replay    re-derive a report's verdict from its stored bits
  show      render a report's verdict: segments, the worst element by index, its neighbours
  backends  list backend adapters, their devices and availability
  ops       list operators and their options
  sweep     run a matrix of checks, each isolated in a worker (diffcheck sweep --help)
  fuzz      draw many shapes of one op on one backend, shrink a failure (diffcheck fuzz --help);
            with --api, search every function of the Array API standard instead
  schema    print the report JSON Schema (or write every schema with --write DIR)
  upgrade   rewrite a replaying report in the current schema version

Every error prints one line on stderr and exits nonzero. From Python:
diffcheck.compare(fn, *inputs, candidate=...) checks your own function, and with
locate=True (or diffcheck.locate) names the call inside it that went wrong
(docs/locate.md); docs/guide.md covers every command."""


def _commands() -> dict[str, Callable[[Sequence[str]], int]]:
    from . import commands

    def sweep(argv: Sequence[str]) -> int:
        from .sweep_command import sweep as run_sweep  # rich and the executors load only here

        return run_sweep(argv)

    def show(argv: Sequence[str]) -> int:
        from .show_command import show as show_report

        return show_report(argv)

    def backends(argv: Sequence[str]) -> int:
        from .backends_command import backends as list_backends

        return list_backends(argv)

    def fuzz(argv: Sequence[str]) -> int:
        from .fuzz_command import fuzz as run_fuzz  # hypothesis loads only when a fuzz runs

        return run_fuzz(argv)

    return {
        "run": commands.run,
        "replay": commands.replay,
        "show": show,
        "backends": backends,
        "ops": commands.ops,
        "schema": commands.schema,
        "upgrade": commands.upgrade,
        "sweep": sweep,
        "fuzz": fuzz,
    }


def _escaping_streams() -> None:
    # Help and messages hold non-ASCII text (·, ᵀ, user paths): on an ASCII or LANG=C
    # stream a character it cannot encode is written as an escape, never a traceback.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            # A closed or detached stream has nothing to adjust.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


class _Terminal(io.TextIOBase):
    """A stream that spells every control character but newline and tab as an escape.

    Every command but ``sweep`` and ``fuzz`` (whose rich progress writes its own terminal
    codes) prints through it: a name or reason from a report, a bundle or a plugin can never
    clear the screen, set the window title or ring the bell, whichever print forgot to escape
    it. Names cannot break a line either: :func:`diffcheck.text.check_name` refuses them where
    they enter.
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def writable(self) -> bool:
        return True


#: Commands that draw with rich and escape their own texts.
_DRAWING = frozenset({"sweep", "fuzz"})


def _memory_limit() -> str:
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return "no address-space limit could be read"
    if soft == resource.RLIM_INFINITY:
        return "no address-space limit is set; the machine ran out"
    from ..runner.budget import format_bytes

    return f"the address-space limit is {format_bytes(soft)}"


def _error(text: str) -> None:
    """One line on stderr: every echoed name, path or value is escaped (no ESC, no newline)."""
    print(f"diffcheck: {one_line(text)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    _escaping_streams()
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(_USAGE)
        return 0 if args else 1
    if args[0] == "--version":
        from .._distribution import __version__

        print(f"diffcheck {__version__}")
        return 0
    commands = _commands()
    command = commands.get(args[0])
    if command is None:
        from ..suggest import did_you_mean

        _error(
            f"unknown command {args[0]!r}{did_you_mean(args[0], commands)}; "
            "run 'diffcheck --help' for the commands"
        )
        return 1
    with contextlib.ExitStack() as stack:
        if args[0] not in _DRAWING:
            stack.enter_context(contextlib.redirect_stdout(_Terminal(sys.stdout)))
            stack.enter_context(contextlib.redirect_stderr(_Terminal(sys.stderr)))
        return _dispatch(command, args)


def _dispatch(command: Callable[[Sequence[str]], int], args: list[str]) -> int:
    """Run one command: a DiffcheckError, no memory or deep nesting is one line, exit 1."""
    try:
        code = command(args[1:])
        sys.stdout.flush()  # a reader that closed the pipe (| head) shows here, not at exit
        return code
    except BrokenPipeError:
        # `diffcheck replay ... | head`: the reader has what it wanted. Nothing more can be
        # written there, at exit either, so stdout goes to /dev/null; the status is a shell's
        # for a process ended by SIGPIPE.
        # The process's own stdout: sys.stdout is the escaping wrapper here, with no fileno.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (sys.__stdout__ or sys.stdout).fileno())
        return 141
    except DiffcheckError as error:
        _error(str(error))
        return 1
    except MemoryError:
        # Whatever was being read or built did not fit: say which command and files, and the
        # limit, in one line (the caller's memory limit is not an internal error).
        _error(
            f"out of memory running {' '.join(args)[:400]!r}; {_memory_limit()}; "
            "give a smaller input or more memory"
        )
        return 1
    except RecursionError:
        _error(f"input nested too deeply for {' '.join(args)[:400]!r}")
        return 1
    except KeyboardInterrupt:
        print("diffcheck: interrupted", file=sys.stderr)
        return 130
