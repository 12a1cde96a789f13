"""Analysis snapshots of a search and the choice of the move to play.

Every number in a snapshot is from the point of view of the **side to move at the root** (winrate 1 = the root
player wins; ownership +1 = owned by the root player), like :class:`miai.nets.evaluator.Evaluation`. ``to_play``
says who that is: ``Pov(snapshot.root, snapshot.to_play).white()`` gives White's view (:mod:`miai.engine.core.results`).
The graph keeps its statistics from White's view; they are read through :class:`~miai.engine.core.results.Pov` here.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import NotRequired, TypedDict

import numpy as np

from miai.engine.core.config import SearchConfig
from miai.engine.core.graph import Edge, Node, Stats, edge_weights
from miai.engine.core.results import MoveResult, Pov, RootResult
from miai.engine.core.rootsetup import RootFacts
from miai.engine.core.searchstate import SearchState
from miai.engine.core.selection import exploration_scale, puct_score, puct_weight_for
from miai.go.coords import PASS, Color, to_gtp
from miai.go.geometry import neighbor_table, symmetric_points

__all__ = ["Snapshot", "FinalChoice", "build_snapshot", "choose_move", "move_temperature", "PASS",
           "PvLine", "pv_line", "ownership_moments", "mover"]


class FinalChoice(Enum):
    """How the move to play is chosen from the root's children (``search.final_choice``)."""

    KATAGO = "katago"  # KataGo's play selection values: weights cut back in hindsight, then the best LCB raised
    VISITS = "visits"  # most edge visits
    WINS = "wins"  # most wins: edge visits times winrate (the textbook MCTS rule)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One search run's result: the root position's figures and one :class:`~miai.engine.core.results.MoveResult` per
    visited root move, best first (``moves[0]`` is the move to play, a move's index is its ``order``), plus what the
    run knows beyond the analysis records. Every record is the side to move's (``to_play``) view."""

    root: RootResult
    moves: tuple[MoveResult, ...]
    to_play: int  # 1 Black, 2 White (miai.go.coords.Color values): the side whose view every number takes
    move_number: int  # moves played in the game so far
    playouts: int  # playouts of the run that produced this snapshot
    elapsed: float  # seconds spent in that run
    ownership: np.ndarray | None  # float32 size*size, averaged over the graph, +1 = root player's
    # What an analysis reports as the root's figures: KataGo's pruned root values (getPrunedRootValues), the
    # children weighted by their play values before the LCB, plus the root's own evaluation, so that moves the
    # search tried and rejected do not drag the reported winrate. ``root`` keeps the graph's own average (what
    # resignation reads, as KataGo's genmove does). None: the same as ``root``.
    reported: RootResult | None = None

    def best(self) -> MoveResult | None:
        """The move of order 0, or None when nothing was searched."""
        return self.moves[0] if self.moves else None


# Each genmove's search, for a log file only (KataGo's logSearchInfo): it never reaches stderr, and records only
# once a log file gives it a handler and a level (miai.engine.cli.logs). The one-line summary goes to the player's
# own logger at debug instead.
search_info_log = logging.getLogger("miai.engine.search_info")
search_info_log.propagate = False


def search_summary(snapshot: Snapshot, size: int, chosen: str, evaluations: tuple[int, int] | None = None) -> str:
    """One line on a finished genmove search: the move chosen, visits, playouts, the visits carried over from the
    last move (KataGo's logSearchInfo "Root visits" less "New playouts"; a new root's own evaluation counts one),
    when ``evaluations`` is given, the positions the net ran (KataGo's "NN rows") and those the evaluation cache
    answered (a playout that ends at no terminal position, transposition or cycle needs one or the other), time and
    speed, the root's winrate and score lead (the side to move's view) and the principal variation."""
    root = snapshot.root
    speed = snapshot.playouts / snapshot.elapsed if snapshot.elapsed > 0 else 0.0
    best = snapshot.best()
    pv = " ".join(to_gtp(move, size) for move in best.pv) if best is not None else ""
    color = "B" if snapshot.to_play == 1 else "W"
    carried = max(0, root.visits - snapshot.playouts)
    evaluated = "" if evaluations is None else f", {evaluations[0]} net evals, {evaluations[1]} cache hits"
    return (f"genmove {color} move {snapshot.move_number + 1}: {chosen}, {root.visits} visits, {snapshot.playouts} "
            f"playouts ({carried} carried over{evaluated}) in {snapshot.elapsed:.2f} s ({speed:.0f}/s), "
            f"winrate {100 * root.winrate:.1f}%, "
            f"lead {root.score_lead:+.1f}, pv {pv}")


def search_details(snapshot: Snapshot, size: int, moves: int = 8) -> list[str]:
    """The best ``moves`` root moves of a search, one line each: visits, winrate, score lead, prior, LCB and the
    principal variation (the side to move's view), as KataGo's logSearchInfo lists the root's children."""
    lines = []
    for info in snapshot.moves[:moves]:
        pv = " ".join(to_gtp(move, size) for move in info.pv)
        lines.append(f"  {to_gtp(info.move, size):>4} visits {info.visits:6d} winrate {100 * info.winrate:5.1f}%"
                     f" lead {info.score_lead:+6.1f} prior {100 * info.prior:5.1f}% lcb {100 * info.lcb:5.1f}% pv {pv}")
    return lines


def move_temperature(move_number: int, early: float, late: float, halflife: float, size: int = 19) -> float:
    """Temperature for choosing a move: ``early`` at move 0, halving its distance to ``late`` every ``halflife``
    moves on 19x19; like KataGo (interpolateEarly) the half-life scales with the board's side, so on 9x9 it is
    ``halflife * 9 / 19`` moves."""
    decay: float = 0.5 ** (move_number / halflife * 19.0 / size)
    return late + (early - late) * decay


def choose_move(snapshot: Snapshot, temperature: float, rng: random.Random) -> int:
    """The move to play: ``moves[0]`` at temperature ~0, else sampled with weight ``play_value ** (1/T)`` (KataGo's
    play selection values; edge visits where a snapshot has none).

    Only moves with a positive value are sampled. Returns PASS if the root has no searched move.
    """
    if not snapshot.moves:
        return PASS
    if temperature <= 1e-4:
        return snapshot.moves[0].move
    visits = np.array([m.play_value for m in snapshot.moves], dtype=np.float64)
    if visits.max() <= 0:
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


def build_snapshot(root: Node | None, state: SearchState, config: SearchConfig, playouts: int, elapsed: float,
                   facts: RootFacts | None = None) -> Snapshot:
    """Read the analysis off the graph: root statistics and the root moves, converted from the graph's White view
    to the view of the side to move at the root. ``facts``: what holds at the root for the run
    (miai.engine.core.rootsetup.RootFacts; None: nothing). Only the root moves its filter permits are shown; its root
    moves' ending bonus, as a utility (White's view) from the move and its child's statistics, steers the move
    choice (play values and LCB, as KataGo's) but not the figures shown; and where its ``dame`` ownership is given
    (KataGo's fillDameBeforePass, territory scoring), a pass that some other move matches is not chosen
    (``_pass_suppressed``)."""
    permitted = facts.permitted if facts is not None else None
    ending = facts.ending_utility if facts is not None and facts.ending else None
    dame = facts.dame if facts is not None else None
    to_play = int(state.to_play)
    move_number = len(state.moves)
    if root is None or root.visits == 0:
        return Snapshot(RootResult(visits=0, winrate=0.5, score_lead=0.0, score_mean=0.0, score_stdev=0.0,
                                   utility=0.0), (), to_play, move_number, playouts, elapsed, None)
    ownership = average_ownership(root) if root.ownership is not None else None
    info = _root_info(root, root.q)
    rows = _rows(root, config, permitted, ending)
    reported = None
    choice = FinalChoice(config.final_choice)
    if choice is FinalChoice.KATAGO:
        # KataGo's getPlaySelectionValues: weights cut back in hindsight, then the best LCB raised. The reported
        # root reads every searched move's hindsight value, whatever the analysis was allowed to show.
        every = rows if permitted is None else _rows(root, config, None, ending)
        for table in (rows,) if every is rows else (rows, every):
            if dame is not None:
                _suppress_pass(table, dame, int(state.size))
            _hindsight_play_values(root, table, config)
        reported = _pruned_root(root, every)
        _raise_best_lcb(rows, config)
    else:  # the classic rules: most visits, or most wins (visits times winrate)
        for r in rows:
            r["play_value"] = r["edge_visits"] * (r["winrate"] if choice is FinalChoice.WINS else 1.0)
    return Snapshot(info, _move_results(rows), to_play, move_number, playouts, elapsed,
                    None if ownership is None else Pov(ownership, Color.WHITE).pov(mover(root)).astype(np.float32),
                    reported)


def mover(node: Node) -> Color:
    """The side to move at ``node`` (whose view its statistics are read from)."""
    return Color.WHITE if node.sign > 0 else Color.BLACK


def _root_info(root: Node, white: Stats) -> RootResult:
    """Root figures, the side to move's view, from ``root``'s White-view statistics ``white``."""
    q = Pov(white, Color.WHITE).pov(mover(root))
    return RootResult(visits=root.visits, winrate=0.5 * (1 + q.winloss), score_lead=q.lead, score_mean=q.score_mean,
                      score_stdev=_score_stdev(white), utility=q.utility)


def _score_stdev(q: Stats) -> float:
    return math.sqrt(max(0.0, q.score_sq - q.score_mean * q.score_mean))


def _pruned_root(root: Node, rows: list[_Row]) -> RootResult:
    """KataGo's getPrunedNodeValues at the root: each searched child's statistics weighted by its play value in
    hindsight (``rows`` carry them, before the LCB step), and the root's own evaluation with its own weight."""
    weight = root.own_weight
    sums = [weight * x for x in root.own]
    for r in rows:
        w = r["play_value"]
        weight += w
        for i, x in enumerate(r["stats"]):
            sums[i] += w * x
    return _root_info(root, Stats(*(x / weight for x in sums)))


class _Row(TypedDict):
    """One root move's figures while the snapshot is built: MoveResult's fields (``weight`` here is the edge's,
    set to 0 where a pass is suppressed) plus ``radius``."""

    move: int
    visits: int
    edge_visits: int
    winrate: float
    score_lead: float
    score_mean: float
    score_stdev: float
    prior: float
    lcb: float
    utility: float
    utility_lcb: float
    weight: float
    child_weight: float
    edge_weight: float
    radius: float
    pv: tuple[int, ...]
    stats: Stats  # the child's statistics, White's view
    bonus: float  # the ending bonus's utility, side to move's view (0 for most moves): only the choice sees it
    play_value: NotRequired[float]  # set once every row is known


def _rows(root: Node, config: SearchConfig, permitted: Callable[[int], bool] | None,
          ending: Callable[[int, Stats], float] | None = None) -> list[_Row]:
    """One row per searched root move (only ``permitted`` ones if given), without play values yet."""
    color = mover(root)
    utility_radius = (config.win_loss_utility_factor + config.static_score_utility_factor
                      + config.dynamic_score_utility_factor)
    rows: list[_Row] = []
    for edge, weight in zip(root.edges, edge_weights(root)):
        child = edge.child
        if child is None or weight <= 0.0 or (permitted is not None and not permitted(edge.move)):
            continue
        white = child.q
        q = Pov(white, Color.WHITE).pov(color)
        share = edge.visits / child.visits
        radius = _lcb_radius(weight, child.weight_sq * share, white.utility, white.utility_sq, utility_radius,
                             config.lcb_stdevs)
        winrate = 0.5 * (1 + q.winloss)
        # KataGo's weight (childWeightSum) and edgeWeight; a child without weight yet counts its visits.
        child_weight, edge_weight = ((child.weight, weight) if child.weight and child.visits
                                     else (float(child.visits), float(edge.visits)))
        rows.append(_Row(
            move=edge.move, visits=child.visits, edge_visits=edge.visits, winrate=winrate,
            score_lead=q.lead, score_mean=q.score_mean, score_stdev=_score_stdev(white),
            prior=edge.prior, lcb=winrate - 0.5 * radius / max(utility_radius, 1e-9), utility=q.utility,
            utility_lcb=q.utility - radius, weight=weight, child_weight=child_weight, edge_weight=edge_weight,
            radius=radius, stats=white,
            bonus=Pov(ending(edge.move, white), Color.WHITE).pov(color) if ending is not None else 0.0,
            pv=pv_line(root, edge, config.pv_length).moves))
    return rows


def _move_results(rows: list[_Row]) -> tuple[MoveResult, ...]:
    """The rows as analysis records, best play value first."""
    rows.sort(key=lambda r: (-r["play_value"], -r["edge_visits"], -r["utility"]))
    return tuple(MoveResult(
        move=r["move"], visits=r["visits"], edge_visits=r["edge_visits"], weight=r["child_weight"],
        edge_weight=r["edge_weight"], prior=r["prior"], winrate=r["winrate"], score_lead=r["score_lead"],
        score_mean=r["score_mean"], score_stdev=r["score_stdev"], utility=r["utility"], lcb=r["lcb"],
        utility_lcb=r["utility_lcb"], play_value=r["play_value"], pv=r["pv"])
        for r in rows)


def _lcb_radius(weight: float, weight_sq: float, utility: float, utility_sq: float, utility_radius: float,
                stdevs: float) -> float:
    """KataGo's LCB radius of a utility mean (getSelfUtilityLCBAndRadius): the stdev of the mean over the
    effective sample size ``W^2 / sum(w^2)``, with a small prior of maximal variance (weight ``W / ess^3``) so that
    a few lucky visits are not certain."""
    if weight <= 0.0 or weight_sq <= 0.0:
        return 2.0 * utility_radius * stdevs
    ess = weight * weight / weight_sq
    prior_weight = weight / (ess * ess * ess)
    mean_sq = max(utility_sq, utility * utility + 1e-8)
    mean_sq = (mean_sq * weight + (mean_sq + utility_radius * utility_radius) * prior_weight) / (weight + prior_weight)
    weight += prior_weight
    weight_sq += prior_weight * prior_weight
    ess = weight * weight / weight_sq
    return math.sqrt(max(0.0, mean_sq - utility * utility) / ess) * stdevs


def _hindsight_play_values(root: Node, rows: list[_Row], config: SearchConfig) -> None:
    """Each row's weight, cut back for moves other than the most stably explored one to what PUCT would have
    given them in hindsight (KataGo's getPlaySelectionValues before its LCB step)."""
    if not rows:
        return
    for r in rows:
        r["play_value"] = r["weight"]
    best = _most_stable(rows)
    best_weight = best["weight"]
    total = sum(r["weight"] for r in rows)
    scale = exploration_scale(total, config, root)
    best_value = puct_score(best["utility"] + best["bonus"], best["prior"], best_weight, scale)
    for r in rows:
        if r is not best:
            wanted = puct_weight_for(best_value - (r["utility"] + r["bonus"]), r["prior"], scale)
            r["play_value"] = math.ceil(min(r["weight"], wanted))


def _suppress_pass(rows: list[_Row], ownership: np.ndarray, size: int) -> None:
    """The pass's weight set to 0 where ``_pass_suppressed`` (KataGo: its play selection value is 0 from the start)."""
    if _pass_suppressed(rows, ownership, size):
        for r in rows:
            if r["move"] == PASS:
                r["weight"] = 0.0


def _pass_suppressed(rows: list[_Row], ownership: np.ndarray, size: int) -> bool:
    """KataGo's fillDameBeforePass (``Search::shouldSuppressPass``, searchhelpers.cpp): under territory scoring, the
    root's pass is not played while a searched move that is not on the opponent's sure area (or touches the mover's
    sure area) does about as well: utility within 0.1, score and lead within half a point, and enough weight (above
    twice the square root of the pass's, or more than 500 edge visits). ``ownership`` is the root's net ownership
    from the mover's view."""
    passed = next((r for r in rows if r["move"] == PASS), None)
    if passed is None or passed["weight"] <= 1e-10:
        return False
    neighbours = neighbor_table(size)
    for r in rows:
        move = r["move"]
        if move == PASS:
            continue
        opponents = ownership[move] < -0.95
        touches_own = any(ownership[n] > 0.95 for n in neighbours[move])
        if opponents and not touches_own:
            continue
        if (r["edge_visits"] <= 500 and r["weight"] <= 2.0 * math.sqrt(passed["weight"])) or r["weight"] <= 1e-10:
            continue
        if (r["utility"] > passed["utility"] - 0.1 and r["score_mean"] > passed["score_mean"] - 0.5
                and r["score_lead"] > passed["score_lead"] - 0.5):
            return True
    return False


def _most_stable(rows: list[_Row]) -> _Row:
    """The most stably explored move: the largest weight, discounting the latest visit, plus a little policy."""
    return max(rows, key=lambda r: r["weight"] * max(0.0, r["edge_visits"] - 1.0) / max(1.0, r["edge_visits"])
               + 2.0 * r["prior"])


def _raise_best_lcb(rows: list[_Row], config: SearchConfig) -> None:
    """The best LCB among moves with at least ``min_visit_prop_for_lcb`` of the top weight gets a play value
    above every move whose LCB it beats (KataGo's LCB step)."""
    if not config.use_lcb or not rows:
        return
    best_weight = _most_stable(rows)["weight"]
    eligible = [r for r in rows if r["play_value"] > 0 and r["play_value"] >= config.min_visit_prop_for_lcb * best_weight]
    if not eligible:
        return
    chosen = max(eligible, key=lambda r: r["utility_lcb"] + r["bonus"])
    adjusted = chosen["play_value"]
    for r in rows:
        excess = chosen["utility_lcb"] + chosen["bonus"] - (r["utility_lcb"] + r["bonus"])
        if r is chosen or excess < 0.0:
            continue
        # How much wider r's radius would have to be for its LCB to fall below the chosen one's, squared: the
        # weight r would need to be as well established.
        radius_factor = (r["radius"] + excess) / (r["radius"] + 0.20 * excess)
        adjusted = max(adjusted, radius_factor * radius_factor * r["play_value"])
    chosen["play_value"] = adjusted


@dataclass(frozen=True, slots=True)
class PvLine:
    """A principal variation and the counts along it: ``visits`` of the node each move leads to (kata-analyze
    ``pvVisits``) and ``edge_visits`` of the edge that plays it (``pvEdgeVisits``)."""

    moves: tuple[int, ...]
    visits: tuple[int, ...]
    edge_visits: tuple[int, ...]


def pv_line(root: Node, edge: Edge, length: int) -> PvLine:
    """The one PV walk: ``edge``'s move, then the most-visited edge at each node, up to ``length`` moves; it stops
    where a node has no visited edge, or comes round again (a cycle in the graph)."""
    moves: list[int] = []
    visits: list[int] = []
    edge_visits: list[int] = []
    seen = {id(root)}
    current: Edge | None = edge
    while current is not None and (not moves or len(moves) < length):
        child = current.child
        moves.append(current.move)
        visits.append(child.visits if child is not None else current.visits)
        edge_visits.append(current.visits)
        if child is None or id(child) in seen:
            break
        seen.add(id(child))
        current = max((e for e in child.edges if e.visits > 0), key=lambda e: e.visits, default=None)
    return PvLine(tuple(moves), tuple(visits), tuple(edge_visits))


def ownership_moments(root: Node, memo: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray] | None:
    """Mean (White's view) and standard deviation of the ownership over ``root``'s subgraph, weighted as in
    :func:`average_ownership` (kata-analyze ``ownershipStdev``, the analysis engine's ``ownershipStdev``); None
    without ownership. ``memo`` (first and second moments by node id) may be shared by the calls of one report."""
    if memo is None:
        memo = {}

    def moments(node: Node, depth: int) -> tuple[np.ndarray, np.ndarray] | None:
        own = node.ownership
        if own is None:
            return None
        if id(node) in memo:
            return memo[id(node)]
        own64 = own.astype(np.float64)
        memo[id(node)] = (own64, own64 * own64)  # provisional value breaks cycles
        if depth >= 64 or node.visits <= 1:
            return memo[id(node)]
        total, total_sq, weight = own64.copy(), own64 * own64, 1.0
        for e in node.edges:
            if e.visits and e.child is not None:
                sub = moments(e.child, depth + 1)
                if sub is not None:
                    total += e.visits * sub[0]
                    total_sq += e.visits * sub[1]
                    weight += e.visits
        memo[id(node)] = result = (total / weight, total_sq / weight)
        return result

    result = moments(root, 0)
    if result is None:
        return None
    mean, mean_sq = result
    return mean, np.sqrt(np.maximum(0.0, mean_sq - mean * mean))


def average_ownership(root: Node) -> np.ndarray:
    """Ownership averaged over the graph, White's view: a node's own net ownership with weight 1 plus its children's
    averages weighted by edge visits (not by the child weights Q uses).

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


def symmetric_copies(moves: Sequence[int], size: int, symmetries: Sequence[int]) -> list[tuple[int, int, int]]:
    """KataGo's ``duplicateForSymmetries`` order (``getAnalysisData``, searchresults.cpp) for the root moves of an
    analysis searched with symmetry pruning: ``(index in moves, symmetry, move)`` for each move followed by its
    images under ``symmetries`` (the board symmetries the root has) not listed yet; symmetry 0 is the move itself."""
    images = symmetric_points(size)
    listed: set[int] = set()
    out = []
    for index, move in enumerate(moves):
        for symmetry in symmetries:
            image = images[symmetry][move] if move >= 0 else move
            if image not in listed:
                listed.add(image)
                out.append((index, symmetry, image))
    return out


def carried(values: Sequence[float], size: int, symmetry: int) -> list[float]:
    """Per-point ``values`` (ownership) moved along by ``symmetry``."""
    image = symmetric_points(size)[symmetry]
    moved = [0.0] * len(values)
    for point, value in enumerate(values):
        moved[image[point]] = value
    return moved
