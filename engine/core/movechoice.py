"""Which root moves a run may search, and which move the search plays.

A run's root moves are filtered by the user (kata-analyze avoid/allow, no pass while cleaning up) and by KataGo's
root symmetry pruning (one move of each set of symmetric moves); the filtered moves are marked illegal for the run.
Restrictions deeper than the root (avoid/allow with an untilDepth above 1, :class:`AvoidUntil`) are applied at
each node the playouts choose at, the same way, for the one choice.
The move played comes from the run's snapshot (miai.engine.core.snapshot: KataGo's play selection values, a temperature),
or from the root's priors when no child was visited.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol

import numpy as np

from miai.engine.core.config import SearchConfig
from miai.engine.core.graph import Edge, Node
from miai.engine.core.snapshot import Snapshot, choose_move, move_temperature
from miai.go.coords import PASS, Color
from miai.go.geometry import symmetric_points

__all__ = ["best_move", "move_filter", "without", "both", "symmetric_duplicates", "block_root_moves", "MoveFilter",
           "AvoidUntil"]

MoveFilter = Callable[[int], bool]  # True for a root move a run may search


def move_filter(avoid: Collection[int], allow: Collection[int] | None) -> MoveFilter | None:
    """A predicate for permitted root moves, or None when everything is permitted."""
    if not avoid and allow is None:
        return None
    avoided = frozenset(avoid)
    allowed = None if allow is None else frozenset(allow)
    return lambda move: move not in avoided and (allowed is None or move in allowed)


def both(first: MoveFilter | None, second: MoveFilter | None) -> MoveFilter | None:
    """The moves both filters permit."""
    if first is None or second is None:
        return first if second is None else second
    return lambda move: first(move) and second(move)


class Restrictions(Protocol):
    """What asks for avoid/allow (miai.gtp.player.AnalyzeRequest, for kata-analyze and the analysis engine alike)."""

    def avoided_until(self, color: Color, size: int) -> dict[int, int]:
        """Each move ``color`` may not play near the root, and the depth from which it may."""
        ...


class AvoidUntil:
    """KataGo's avoidMoveUntilByLoc: for each colour, the moves it may not play in the first plies of a search and
    the depth (plies from the root; the root's move is at depth 0) from which it may again, as kata-analyze's and
    the analysis engine's avoid/allow with their untilDepth ask. A move is kept out of the choice at a node of depth
    ``d`` whose player has it listed with a depth above ``d``."""

    def __init__(self, black: Mapping[int, int], white: Mapping[int, int]) -> None:
        self._until = {Color.BLACK: dict(black), Color.WHITE: dict(white)}
        self.depth = max((*black.values(), *white.values(), 0))  # no restriction at this depth or below
        self._filters: dict[tuple[Color, int], MoveFilter | None] = {}

    @classmethod
    def of(cls, request: Restrictions, size: int) -> AvoidUntil | None:
        """The restrictions ``request`` asks for on a ``size`` board (None: none)."""
        black, white = request.avoided_until(Color.BLACK, size), request.avoided_until(Color.WHITE, size)
        return cls(black, white) if black or white else None

    def permitted(self, color: Color, depth: int) -> MoveFilter | None:
        """The moves ``color`` may play at ``depth`` (None: all)."""
        key = (color, depth)
        if key not in self._filters:
            banned = frozenset(move for move, until in self._until[color].items() if depth < until)
            self._filters[key] = (lambda move: move not in banned) if banned else None
        return self._filters[key]


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
    """Mark the forbidden moves of ``root`` (the run's root, or a node below it restricted by :class:`AvoidUntil`)
    as illegal edges (untouched ones are touched first, out of prior order, so the permitted untouched moves keep
    their order; a touched edge without a child is scored as the untouched move was); returns the edges to unblock
    after."""
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
