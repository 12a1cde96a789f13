"""Analysis snapshots of a search and the choice of the move to play.

Every number in a snapshot is from the point of view of the **side to move at the root** (winrate 1 = the root
player wins; ownership +1 = owned by the root player), like :class:`miai.nets.evaluator.Evaluation`. ``to_play``
says who that is, so the GTP layer can convert to White's or Black's view.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np

__all__ = ["MoveInfo", "RootInfo", "Snapshot", "choose_move", "move_temperature", "PASS"]

PASS = -1  # miai.go.coords.PASS (the flat-index convention of docs/INTERFACES.md)


@dataclass(frozen=True, slots=True)
class MoveInfo:
    """Statistics of one root move."""

    move: int
    visits: int  # visits of the child node (may exceed edge_visits after transpositions)
    edge_visits: int  # times the root chose this move: what PUCT and move choice use
    winrate: float
    score_lead: float
    score_mean: float
    score_stdev: float
    prior: float
    lcb: float  # lower confidence bound of the winrate
    utility: float
    utility_lcb: float  # lower confidence bound of the utility (used for move choice)
    order: int  # 0 = the move the engine would play
    pv: tuple[int, ...]  # principal variation starting with ``move``


@dataclass(frozen=True, slots=True)
class RootInfo:
    """Statistics of the root position."""

    to_play: int  # 1 Black, 2 White (miai.go.coords.Color values)
    visits: int
    winrate: float
    score_lead: float
    score_mean: float
    score_stdev: float
    utility: float
    move_number: int  # moves played in the game so far
    playouts: int  # playouts of the run that produced this snapshot
    elapsed: float  # seconds spent in that run
    ownership: np.ndarray | None  # float32 size*size, averaged over the graph, +1 = root player's


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Root info plus one :class:`MoveInfo` per visited root move, ``moves[0]`` being the move to play."""

    root: RootInfo
    moves: tuple[MoveInfo, ...]

    def best(self) -> MoveInfo | None:
        """The move of order 0, or None when nothing was searched."""
        return self.moves[0] if self.moves else None


def move_temperature(move_number: int, early: float, late: float, halflife: float) -> float:
    """Temperature for choosing a move: ``early`` at move 0, halving its distance to ``late`` every ``halflife``."""
    return late + (early - late) * 0.5 ** (move_number / halflife)


def choose_move(snapshot: Snapshot, temperature: float, rng: random.Random) -> int:
    """The move to play: ``moves[0]`` at temperature ~0, else sampled with weight ``edge_visits ** (1/T)``.

    Only moves with at least one edge visit are sampled. Returns PASS if the root has no searched move.
    """
    if not snapshot.moves:
        return PASS
    if temperature <= 1e-4:
        return snapshot.moves[0].move
    visits = np.array([m.edge_visits for m in snapshot.moves], dtype=np.float64)
    top = visits.max()
    if top <= 0:
        return snapshot.moves[0].move
    # Work in log space relative to the top move so a tiny temperature cannot overflow.
    logits = np.where(visits > 0, np.log(np.maximum(visits, 1e-300) / top) / temperature, -math.inf)
    weights = np.exp(logits)
    pick = rng.random() * weights.sum()
    index = int(np.searchsorted(np.cumsum(weights), pick, side="right"))
    return snapshot.moves[min(index, len(snapshot.moves) - 1)].move
