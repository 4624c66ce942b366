"""An argparse parser whose errors are one line and exit 1, like every other diffcheck error."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from ..text import one_line

__all__ = ["OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse echoes what was typed: a newline or ESC in it is escaped, not shown raw.
        print(one_line(f"diffcheck {self.prog.split()[-1]}: {message}"), file=sys.stderr)
        raise SystemExit(1)
