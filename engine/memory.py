"""Memory hygiene of a long-running engine: no garbage-collection pauses on the clock, memory given back between
games.

A bot plays game after game in one process; two things made that show (docs/gtp.md, "Soak"): the garbage
collector's full collections paused moves, and the C heap kept the pages a search freed. :func:`no_collection_pauses`
wraps a move; :func:`collect_between_games` runs when a new game starts, off the clock.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
from collections.abc import Callable, Iterator

__all__ = ["collect_between_games", "no_collection_pauses"]


@contextlib.contextmanager
def no_collection_pauses() -> Iterator[None]:
    """No garbage collection while a move is on the clock, and none of the objects alive after it (the graph, the
    evaluation cache) walked through by later collections.

    A full collection walks every object the collector tracks: with a few hundred thousand (an evaluation cache
    filling up, a large graph) it paused a 9x9 server game for 0.3-0.6 s, and cost 1-second byo-yomi periods. The
    graph and the cache free themselves by reference counting (they hold no cycles), so a move loses nothing by
    not collecting; freezing what survives it keeps the collections between moves short. A new game unfreezes and
    collects everything once (:func:`collect_between_games`), so that no cycle is kept for good.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def collect_between_games() -> None:
    """Unfreeze and collect everything the moves before kept (:func:`no_collection_pauses`), then give the freed
    memory back to the system: run when a game starts, off the clock."""
    gc.unfreeze()
    gc.collect()
    _give_back_free_memory()


def _give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing elsewhere).

    numpy's arrays live on the C heap, and a search frees thousands of small ones amid long-lived allocations: glibc
    keeps the freed pages mapped, so a server bot's resident memory crept up game after game (docs/gtp.md, "Soak")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` among the symbols the process has loaded, looked up once; None without glibc (musl,
    macOS and Windows keep their own ways)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
