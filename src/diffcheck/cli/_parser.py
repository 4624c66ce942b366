"""An argparse parser whose errors are one line and exit 1, like every other diffcheck error."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"diffcheck {self.prog.split()[-1]}: {message}", file=sys.stderr)
        raise SystemExit(1)
