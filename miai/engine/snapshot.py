"""Analysis snapshots of a search and the choice of the move to play.

Every number in a snapshot is from the point of view of the **side to move at the root** (winrate 1 = the root
player wins; ownership +1 = owned by the root player), like :class:`miai.nets.evaluator.Evaluation`. ``to_play``
says who that is, so the GTP layer can convert to White's or Black's view.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from miai.engine.config import SearchConfig
from miai.engine.graph import Edge, Node

__all__ = ["MoveInfo", "RootInfo", "Snapshot", "build_snapshot", "choose_move", "move_temperature", "PASS"]

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


def build_snapshot(root: Node | None, state: Any, config: SearchConfig, playouts: int, elapsed: float,
                   permitted: Callable[[int], bool] | None = None) -> Snapshot:
    """Read the analysis off the graph: root statistics and the root moves (only ``permitted`` ones if given),
    converted from the graph's White view to the view of the side to move at the root."""
    to_play = int(state.to_play)
    move_number = len(getattr(state, "moves", ()))
    if root is None or root.visits == 0:
        return Snapshot(RootInfo(to_play, 0, 0.5, 0.0, 0.0, 0.0, 0.0, move_number, playouts, elapsed, None), ())
    sign = root.sign
    q = root.q
    ownership = average_ownership(root) if root.ownership is not None else None
    info = RootInfo(
        to_play=to_play, visits=root.visits, winrate=0.5 * (1 + sign * q[1]), score_lead=sign * q[4],
        score_mean=sign * q[2], score_stdev=math.sqrt(max(0.0, q[3] - q[2] * q[2])), utility=sign * q[0],
        move_number=move_number, playouts=playouts, elapsed=elapsed,
        ownership=None if ownership is None else (ownership * sign).astype(np.float32))
    return Snapshot(info, _move_infos(root, config, permitted))


def _move_infos(root: Node, config: SearchConfig, permitted: Callable[[int], bool] | None) -> tuple[MoveInfo, ...]:
    sign = root.sign
    rows = []
    for edge in root.edges:
        child = edge.child
        if child is None or edge.visits == 0 or (permitted is not None and not permitted(edge.move)):
            continue
        q = child.q
        utility = sign * q[0]
        # Shrink the utility variance towards 0.25 with two pseudo-visits, so two lucky visits are not certain.
        variance = (max(0.0, q[5] - q[0] * q[0]) * edge.visits + 0.25 * 2.0) / (edge.visits + 2.0)
        radius = config.lcb_stdevs * math.sqrt(variance / edge.visits)
        winrate = 0.5 * (1 + sign * q[1])
        rows.append(dict(
            move=edge.move, visits=child.visits, edge_visits=edge.visits, winrate=winrate,
            score_lead=sign * q[4], score_mean=sign * q[2], score_stdev=math.sqrt(max(0.0, q[3] - q[2] * q[2])),
            prior=edge.prior, lcb=winrate - 0.5 * radius, utility=utility, utility_lcb=utility - radius,
            pv=principal_variation(root, edge, config.pv_length)))
    rows.sort(key=lambda r: (-r["edge_visits"], -r["utility"]))
    if config.use_lcb and rows:
        # KataGo's rule: among moves with enough visits, play the best lower confidence bound.
        floor = config.min_visit_prop_for_lcb * rows[0]["edge_visits"]
        chosen = max((r for r in rows if r["edge_visits"] >= floor), key=lambda r: r["utility_lcb"])
        rows.remove(chosen)
        rows.insert(0, chosen)
    return tuple(MoveInfo(order=i, **r) for i, r in enumerate(rows))


def principal_variation(root: Node, edge: Edge, length: int) -> tuple[int, ...]:
    """The edge's move, then the most-visited edge at each node, up to ``length`` moves (cycle-safe)."""
    pv = [edge.move]
    node = edge.child
    seen = {id(root)}
    while node is not None and len(pv) < length and id(node) not in seen:
        seen.add(id(node))
        best = max((e for e in node.edges if e.visits > 0), key=lambda e: e.visits, default=None)
        if best is None:
            break
        pv.append(best.move)
        node = best.child
    return tuple(pv)


def average_ownership(root: Node) -> np.ndarray:
    """Ownership averaged like Q (own net ownership weight 1, children by edge visits), White's view.

    Nodes without ownership (terminal nodes) are left out; a node met again on a cycle contributes its own."""
    memo: dict[int, np.ndarray] = {}

    def average(node: Node, depth: int) -> np.ndarray | None:
        own = node.ownership
        if own is None:
            return None
        if id(node) in memo:
            return memo[id(node)]
        memo[id(node)] = own  # provisional value breaks cycles
        if depth >= 64 or node.visits <= 1:
            return own
        total = own.astype(np.float64)
        weight = 1.0
        for e in node.edges:
            if e.visits and e.child is not None:
                sub = average(e.child, depth + 1)
                if sub is not None:
                    total += e.visits * sub
                    weight += e.visits
        memo[id(node)] = result = total / weight
        return result

    result = average(root, 0)
    assert result is not None
    return result
