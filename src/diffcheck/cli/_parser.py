"""An argparse parser whose errors are one line and exit 1, like every other diffcheck error.

Options are accepted in either spelling (``--max-nmse`` or ``--max_nmse``), and an unknown
option gets the nearest known one as a suggestion.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ..text import one_line

__all__ = ["OneLineParser", "plain"]

_UNRECOGNIZED = re.compile(r"unrecognized arguments: (\S+)")
#: Sphinx roles (``:func:`name```) and inline literals (````x````) of the docstrings that
#: become help text: a terminal shows the name alone.
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str | None) -> str | None:
    """``text`` with reStructuredText roles and inline literals reduced to their words."""
    if text is None:
        return None
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


class OneLineParser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        for key in ("description", "epilog"):
            kwargs[key] = plain(kwargs.get(key))
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if isinstance(kwargs.get("help"), str):
            kwargs["help"] = plain(kwargs["help"])
        return super().add_argument(*args, **kwargs)

    def _options(self) -> list[str]:
        return [s for action in self._actions for s in action.option_strings if s.startswith("--")]

    def _respelled(self, args: Sequence[str]) -> list[str]:
        """``args`` with each option in its other spelling (``_`` for ``-``) as declared."""
        declared = set(self._options())
        respelled = []
        for arg in args:
            key, sep, value = arg.partition("=")
            if key.startswith("--") and key not in declared:
                other = "--" + key[2:].replace("_", "-")
                if other in declared:
                    arg = f"{other}{sep}{value}"
            respelled.append(arg)
        return respelled

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        given = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(self._respelled(given), namespace)

    def error(self, message: str) -> NoReturn:
        from ..suggest import did_you_mean

        match = _UNRECOGNIZED.search(message)
        if match is not None and match[1].startswith("--"):
            message += did_you_mean(match[1].partition("=")[0], self._options())
        # argparse echoes what was typed: a newline or ESC in it is escaped, not shown raw.
        print(one_line(f"diffcheck {self.prog.split()[-1]}: {message}"), file=sys.stderr)
        raise SystemExit(1)
