"""Which root moves a run may search, and which move the search plays.

A run's root moves are filtered by the user (kata-analyze avoid/allow, no pass while cleaning up) and by KataGo's
root symmetry pruning (one move of each set of symmetric moves); the filtered moves are marked illegal for the run.
The move played comes from the run's snapshot (miai.engine.snapshot: KataGo's play selection values, a temperature),
or from the root's priors when no child was visited.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence

import numpy as np

from miai.engine.config import SearchConfig
from miai.engine.graph import Edge, Node
from miai.engine.snapshot import Snapshot, choose_move, move_temperature
from miai.go.coords import PASS, Color
from miai.go.geometry import symmetric_points

__all__ = ["best_move", "move_filter", "without", "symmetric_duplicates", "block_root_moves", "MoveFilter"]

MoveFilter = Callable[[int], bool]  # True for a root move a run may search


def move_filter(avoid: Collection[int], allow: Collection[int] | None) -> MoveFilter | None:
    """A predicate for permitted root moves, or None when everything is permitted."""
    if not avoid and allow is None:
        return None
    avoided = frozenset(avoid)
    allowed = None if allow is None else frozenset(allow)
    return lambda move: move not in avoided and (allowed is None or move in allowed)


def without(permitted: MoveFilter | None, banned: frozenset[int]) -> MoveFilter | None:
    """``permitted`` with the moves of ``banned`` taken out."""
    if not banned:
        return permitted
    return lambda move: move not in banned and (permitted is None or permitted(move))


def symmetric_duplicates(size: int, to_play: int, symmetries: Sequence[int],
                         permitted: MoveFilter | None = None) -> frozenset[int]:
    """The points that are symmetric copies of a point kept for the search (``markDuplicateMoveLocs``,
    nninputs.cpp). The points are walked in KataGo's order, so that the kept ones are the first move in the upper
    right for Black and the lower left for White ("natural openings result in white on the left and black on the
    right"): for Black columns right to left, each top to bottom; for White columns left to right, each bottom to
    top. A point ``permitted`` refuses does not keep its copies out."""
    images = symmetric_points(size)
    black = to_play == int(Color.BLACK)
    columns = range(size - 1, -1, -1) if black else range(size)
    rows = range(size) if black else range(size - 1, -1, -1)
    duplicate: set[int] = set()
    for x in columns:
        for y in rows:
            point = y * size + x
            if point in duplicate or (permitted is not None and not permitted(point)):
                continue
            duplicate.update(images[s][point] for s in symmetries if images[s][point] != point)
    return frozenset(duplicate)


def block_root_moves(root: Node | None, permitted: MoveFilter | None) -> list[Edge]:
    """Mark the root's forbidden moves as illegal edges for this run (untouched ones are touched first, out of
    prior order, so the permitted untouched moves keep their order); returns the edges to unblock after."""
    if permitted is None or root is None:
        return []
    rest = range(root.next_index, len(root.moves))
    banned = [i for i in rest if not permitted(int(root.moves[i]))]
    if banned:
        kept = [i for i in rest if permitted(int(root.moves[i]))]
        order = np.array(banned + kept, dtype=np.int64)
        root.moves[root.next_index:] = root.moves[order]
        root.priors[root.next_index:] = root.priors[order]
        for _ in banned:
            root.touch_next()
    blocked = [e for e in root.edges if not e.illegal and not permitted(e.move)]
    for edge in blocked:
        edge.illegal = True
    return blocked


def best_move(snapshot: Snapshot, config: SearchConfig, size: int, rng: random.Random, root: Node | None,
              permitted: MoveFilter | None) -> int:
    """The move to play from ``snapshot``: order 0 (LCB/visits), or sampled when a temperature is configured; with
    no move searched, the root's best prior (:func:`policy_move`)."""
    if not snapshot.moves:
        return policy_move(root, permitted)
    temperature = move_temperature(snapshot.move_number, config.temperature_early, config.temperature,
                                   config.temperature_halflife, size)
    return choose_move(snapshot, temperature, rng)


def policy_move(root: Node | None, permitted: MoveFilter | None) -> int:
    """With no child visited (a one-visit search), the root's highest-prior move, as the raw policy plays;
    pass when the root was never expanded (a finished game)."""
    if root is None or not len(root.moves) and not root.edges:
        return PASS
    candidates = [(e.prior, e.move) for e in root.edges if not e.illegal]
    candidates += list(zip(root.priors[root.next_index:].tolist(), root.moves[root.next_index:].tolist()))
    candidates = [c for c in candidates if permitted is None or permitted(int(c[1]))]
    return int(max(candidates)[1]) if candidates else PASS
