"""The analysis engine's responses: a search snapshot as KataGo's JSON (moveInfos, rootInfo, ownership, policy).

The search reports every number from the view of the side to move at the root (:mod:`miai.engine.snapshot`); the
graph's nodes keep their net ownership from White's view (stored by :mod:`miai.engine.expansion`). Here everything is turned to the view the
query asked for (``reportAnalysisWinratesAs``: BLACK, WHITE or SIDETOMOVE), the way KataGo does it: winrate and
lcb become ``1 - x``, utilities and scores change sign, ownership changes sign.

Ownership and its standard deviation are averaged over the graph (:func:`miai.engine.snapshot.ownership_moments`):
a node's own net ownership with weight 1 plus its children's averages weighted by edge visits, not by the child
weights the node values use (KataGo's getAverageTreeOwnership).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from miai.engine.analysis.query import Job, root_filters
from miai.engine.graph import Node, edge_weights
from miai.engine.snapshot import Snapshot, carried, ownership_moments, symmetric_copies
from miai.go import zobrist
from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.geometry import symmetric_points
from miai.gtp.player import MoveInfo
from miai.nets.evaluator import Evaluation

__all__ = ["build_response", "no_results", "position_hashes", "OwnershipStats"]

def rounded(value: float) -> float:
    """8 significant digits, as KataGo's JSON numbers."""
    return float(f"{value:.8g}")


def no_results(job: Job) -> dict[str, Any]:
    """The answer for a turn terminated before any visit (KataGo's ``noResults`` response)."""
    return {"id": job.id, "turnNumber": job.turn, "isDuringSearch": False, "noResults": True}


class OwnershipStats:
    """Mean and standard deviation of ownership (White's view) under any node of a graph, memoised per report."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def of(self, node: Node) -> tuple[np.ndarray, np.ndarray] | None:
        """(mean, stdev) of ``node``'s subgraph, or None when the node holds no ownership (terminal, or off)."""
        return ownership_moments(node, self._memo)


def position_hashes(stones: np.ndarray, size: int, to_play: Color, ko_move: int) -> tuple[str, str]:
    """``thisHash`` and ``symHash``: 128-bit hashes (32 hex digits) of the stones, the player to move and the
    simple-ko point; symHash is the smallest over the 8 symmetries, equal for symmetric positions."""
    black, white = zobrist.stone_keys(size)[1], zobrist.stone_keys(size)[2]
    ko_keys = zobrist.point_keys("ko", size)
    grid = stones.reshape(size, size)
    ko_grid = np.zeros((size, size), dtype=bool)
    if ko_move != PASS:
        ko_grid.flat[ko_move] = True
    hashes = []
    for sym in range(8):
        g, k = grid, ko_grid
        if sym & 1:
            g, k = g[::-1], k[::-1]
        if sym & 2:
            g, k = g[:, ::-1], k[:, ::-1]
        if sym & 4:
            g, k = g.T, k.T
        flat, ko_flat = g.reshape(-1), k.reshape(-1)
        value = zobrist.TO_PLAY[int(to_play)]
        for point in np.flatnonzero(flat == 1):
            value ^= black[point]
        for point in np.flatnonzero(flat == 2):
            value ^= white[point]
        for point in np.flatnonzero(ko_flat):
            value ^= ko_keys[point]
        hashes.append(value & ((1 << 128) - 1))
    return f"{hashes[0]:032X}", f"{min(hashes):032X}"


class Viewpoint:
    """Turns root-player numbers into the requested perspective."""

    def __init__(self, perspective: str, to_play: Color) -> None:
        holder = {"BLACK": Color.BLACK, "WHITE": Color.WHITE}.get(perspective, to_play)
        self.flip = holder != to_play  # root-player view -> perspective: 1 - winrate, -score
        self.white_sign = 1.0 if holder == Color.WHITE else -1.0  # White-view ownership -> perspective

    def winrate(self, value: float) -> float:
        return rounded(1.0 - value if self.flip else value)

    def signed(self, value: float) -> float:
        return rounded(-value if self.flip else value)

    def ownership(self, white_view: np.ndarray) -> list[float]:
        return [round(float(x), 6) + 0.0 for x in white_view * self.white_sign]


def build_response(job: Job, snapshot: Snapshot, root: Node | None, root_eval: Evaluation | None,
                   hashes: tuple[str, str],
                   *, during: bool) -> dict[str, Any]:
    """The response for one turn from a snapshot of its search (``root`` = the search's root node, read in the
    searching thread; ``root_eval`` = the net's evaluation of the root, for rawWinrate and policy)."""
    state = job.state
    view = Viewpoint(job.settings.perspective, state.to_play)
    stats = OwnershipStats()
    pv_cap = job.settings.pv_len + 1
    infos = [_move_info(info, order, root, view, stats, job, pv_cap) for order, info in enumerate(snapshot.moves)]
    if job.settings.config.search.root_symmetry_pruning:
        infos = _with_symmetric_copies(infos, snapshot.moves, job)
    out: dict[str, Any] = {"id": job.id, "isDuringSearch": during, "turnNumber": job.turn, "moveInfos": infos,
                           "rootInfo": _root_info(snapshot, root, root_eval, view, state.to_play, hashes)}
    flags = job.flags
    if flags.ownership or flags.ownership_stdev:
        own = stats.of(root) if root is not None else None
        mean, stdev = own if own is not None else (_raw_ownership(root_eval, state.to_play, state.size),
                                                   np.zeros(state.size * state.size))
        if flags.ownership:
            out["ownership"] = view.ownership(mean)
        if flags.ownership_stdev:
            out["ownershipStdev"] = [round(float(x), 6) for x in stdev]
    if flags.policy and root_eval is not None:
        out["policy"] = policy_list(root_eval.policy, state)
    return out


def _raw_ownership(root_eval: Evaluation | None, to_play: Color, size: int) -> np.ndarray:
    """The net's ownership of the root in White's view (zeros without one)."""
    own = root_eval.ownership if root_eval is not None else None
    if own is None:
        return np.zeros(size * size)
    return np.asarray(own, dtype=np.float64) * (1.0 if to_play == Color.WHITE else -1.0)


def policy_list(policy: np.ndarray, state: Any) -> list[float]:
    """The raw policy in KataGo's order (rows from the top, pass last), -1 on illegal points."""
    from miai.nets.evaluator import legal_mask

    mask = legal_mask(state)
    return [rounded(float(p)) if legal else -1.0 for p, legal in zip(np.asarray(policy, dtype=np.float64), mask)]


def _with_symmetric_copies(infos: list[dict[str, Any]], moves: Sequence[MoveInfo], job: Job) -> list[dict[str, Any]]:
    """The moves symmetry pruning left out, as KataGo's analysis engine shows them (``symmetric_copies``): after
    each move its copies under the root's symmetries, with ``isSymmetryOf`` naming the move searched and the PV and
    ownership carried over; copies the query avoids are left out."""
    state = job.state
    symmetries = state.symmetries()
    if len(symmetries) < 2:
        return infos
    size = state.size
    images = symmetric_points(size)
    avoided, allowed = root_filters(job, state.to_play, size)
    out: list[dict[str, Any]] = []
    for index, symmetry, move in symmetric_copies([m.move for m in moves], size, symmetries):
        entry = infos[index]
        if not symmetry:
            out.append(entry)
            continue
        if move in avoided or (allowed is not None and move not in allowed):
            continue
        image = images[symmetry]
        copy = dict(entry, move=to_gtp(move, size), isSymmetryOf=entry["move"],
                    pv=[to_gtp(image[parse_gtp(v, size)] if v.lower() != "pass" else PASS, size) for v in entry["pv"]])
        for key in ("ownership", "ownershipStdev"):
            if key in entry:
                copy[key] = carried(entry[key], size, symmetry)
        out.append(copy)
    for order, entry in enumerate(out):
        entry["order"] = order
    return out


def _move_info(info: MoveInfo, order: int, root: Node | None, view: Viewpoint, stats: OwnershipStats, job: Job,
               pv_cap: int) -> dict[str, Any]:
    size = job.state.size
    # The engine's snapshots fill every figure (miai.engine.snapshot); only other players leave some out.
    assert (info.edge_visits is not None and info.utility is not None and info.score_lead is not None
            and info.score_mean is not None and info.score_stdev is not None and info.utility_lcb is not None)
    pv = list(info.pv[:pv_cap])
    weight, edge_weight = _weights(root, info)
    out: dict[str, Any] = {
        "move": to_gtp(info.move, size), "visits": int(info.visits), "edgeVisits": int(info.edge_visits),
        "weight": weight, "edgeWeight": edge_weight,
        "utility": view.signed(info.utility), "winrate": view.winrate(info.winrate),
        "scoreMean": view.signed(info.score_lead), "scoreSelfplay": view.signed(info.score_mean),
        "scoreLead": view.signed(info.score_lead), "scoreStdev": rounded(info.score_stdev),
        "prior": rounded(info.prior), "lcb": view.winrate(info.lcb), "utilityLcb": view.signed(info.utility_lcb),
        "order": order, "playSelectionValue": rounded(float(info.play_value or 0.0)),
    }
    if job.flags.pv_visits:
        pv, visits, edge_visits = _pv_counts(root, pv)
        out["pvVisits"], out["pvEdgeVisits"] = visits, edge_visits
    out["pv"] = [to_gtp(move, size) for move in pv]
    if job.flags.moves_ownership or job.flags.moves_ownership_stdev:
        edge = root.edge_for(info.move) if root is not None else None
        own = stats.of(edge.child) if edge is not None and edge.child is not None else None
        area = size * size
        mean, stdev = own if own is not None else (np.zeros(area), np.zeros(area))
        if job.flags.moves_ownership:
            out["ownership"] = view.ownership(mean)
        if job.flags.moves_ownership_stdev:
            out["ownershipStdev"] = [round(float(x), 6) for x in stdev]
    return out


def _weights(root: Node | None, info: MoveInfo) -> tuple[float, float]:
    """The child's total value weight and the part of it its edge from the root carries (KataGo's weight and
    edgeWeight); both equal the visits when the search weighs every visit 1."""
    assert info.edge_visits is not None  # filled by the engine's snapshots
    for edge, edge_weight in zip(root.edges, edge_weights(root)) if root is not None else ():
        child = edge.child
        if edge.move == info.move and child is not None and child.weight and child.visits:
            return rounded(child.weight), rounded(edge_weight)
    return float(info.visits), float(info.edge_visits)


def _pv_counts(root: Node | None, pv: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Child visits and edge visits along ``pv`` (the pv is cut where the graph no longer has its edge)."""
    visits, edge_visits = [], []
    node = root
    for move in pv:
        edge = node.edge_for(move) if node is not None else None
        if edge is None or edge.child is None:
            break
        edge_visits.append(int(edge.visits))
        visits.append(int(edge.child.visits))
        node = edge.child
    return pv[:len(visits)], visits, edge_visits


def _root_info(snapshot: Snapshot, root_node: Node | None, root_eval: Evaluation | None, view: Viewpoint,
               to_play: Color,
               hashes: tuple[str, str]) -> dict[str, Any]:
    root = snapshot.reported or snapshot.root  # KataGo's pruned root values, as its analysis engine reports
    assert root.score_mean is not None and root.score_stdev is not None and root.utility is not None  # engine's
    info: dict[str, Any] = {
        "visits": int(root.visits), "weight": rounded(float((root_node.weight if root_node is not None else 0.0) or root.visits)), "winrate": view.winrate(root.winrate),
        "scoreLead": view.signed(root.score_lead), "scoreSelfplay": view.signed(root.score_mean),
        "scoreStdev": rounded(root.score_stdev), "utility": view.signed(root.utility),
        "currentPlayer": "B" if to_play == Color.BLACK else "W", "thisHash": hashes[0], "symHash": hashes[1],
    }
    if root_eval is not None:
        info.update({
            "rawWinrate": view.winrate(0.5 * (1.0 + float(root_eval.win) - float(root_eval.loss))),
            "rawLead": view.signed(float(root_eval.lead)),
            "rawScoreSelfplay": view.signed(float(root_eval.score_mean)),
            "rawScoreSelfplayStdev": rounded(float(root_eval.score_stdev)),
            "rawNoResultProb": rounded(float(root_eval.no_result)),
            "rawStWrError": rounded(0.5 * float(root_eval.shortterm_winloss_error)),
            "rawStScoreError": rounded(float(root_eval.shortterm_score_error)),
            "rawVarTimeLeft": rounded(float(root_eval.var_time_left)),
        })
    if root.visits == 0 and root_eval is not None:  # nothing searched yet: the net's own view
        info["winrate"], info["scoreLead"] = info["rawWinrate"], info["rawLead"]
        info["scoreSelfplay"] = info["rawScoreSelfplay"]
    if not math.isfinite(info["utility"]):
        info["utility"] = 0.0
    return info
