"""Pondering: the player's search of the position on the opponent's time, in a thread of its own.

:class:`Ponderer` runs one search at a time until it is stopped (the next command's arrival stops it: the GTP
session calls ``stop_pondering`` before anything else touches the search). The graph it grows is the one the next
genmove reuses, which is the point of pondering.
"""

from __future__ import annotations

import logging
import threading

from miai.engine.core.search import Search
from miai.go.state import GameState

__all__ = ["Ponderer"]

log = logging.getLogger(__name__)


class Ponderer:
    """At most one ponder search, run in a daemon thread until :meth:`stop`."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self, search: Search, root: GameState) -> None:
        """Search ``root`` with ``search`` until :meth:`stop` (stopping a ponder search already running first)."""
        self.stop()
        self._stop = threading.Event()
        stop = self._stop

        def ponder() -> None:
            try:
                search.set_root(root)
                search.ponder(stop)
            except Exception:  # pondering is best effort; the next genmove searches anyway
                log.exception("pondering failed")

        self._thread = threading.Thread(target=ponder, name="miai-ponder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop a running ponder search and wait for it (it stops within one batch)."""
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        thread.join()
        self._thread = None
