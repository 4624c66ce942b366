"""``python -m diffcheck.search.worker FD``: the API search's warm worker (see :mod:`.isolation`).

It serves the socket inherited as file descriptor ``FD`` and is killed by the kernel when
its parent exits (Linux), so an interrupted search leaves no worker behind.
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from ..sweep.lifeline import die_with_parent
from .isolation import serve


def main(argv: list[str]) -> int:
    """Serve the connection on the descriptor named by ``argv[0]``."""
    die_with_parent()
    serve(Connection(int(argv[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
