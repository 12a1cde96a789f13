"""The analysis engine's responses: a search snapshot as KataGo's JSON (moveInfos, rootInfo, ownership, policy).

The search reports every number from the view of the side to move at the root (:mod:`miai.engine.core.snapshot`); the
graph's nodes keep their net ownership from White's view (stored by :mod:`miai.engine.core.expansion`). Here everything
is seen from the side the query asked for (``reportAnalysisWinratesAs``: BLACK, WHITE or SIDETOMOVE) through
:class:`~miai.engine.core.results.Pov`, the way KataGo does it: winrate and lcb become ``1 - x``, utilities, scores and
ownership change sign.

Ownership and its standard deviation are averaged over the graph (:func:`miai.engine.core.snapshot.ownership_moments`):
a node's own net ownership with weight 1 plus its children's averages weighted by edge visits, not by the child
weights the node values use (KataGo's getAverageTreeOwnership).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from miai.engine.analysis.query import Job
from miai.engine.core.graph import Node
from miai.engine.core.results import Chance, MoveResult, Pov
from miai.engine.core.snapshot import Snapshot, carried, ownership_moments, pv_line, symmetric_copies
from miai.go import zobrist
from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.geometry import symmetric_points
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


def reported_side(perspective: str, to_play: Color) -> Color:
    """Whose view the response takes (``reportAnalysisWinratesAs``: BLACK, WHITE, or SIDETOMOVE: ``to_play``)."""
    return {"BLACK": Color.BLACK, "WHITE": Color.WHITE}.get(perspective, to_play)


def _ownership(white_view: np.ndarray, side: Color) -> list[float]:
    """White-view ownership from ``side``'s view, as KataGo writes it (6 decimals, no -0.0)."""
    return [round(float(x), 6) + 0.0 for x in Pov(white_view, Color.WHITE).pov(side)]


def build_response(job: Job, snapshot: Snapshot, root: Node | None, root_eval: Evaluation | None,
                   hashes: tuple[str, str],
                   *, during: bool) -> dict[str, Any]:
    """The response for one turn from a snapshot of its search (``root`` = the search's root node, read in the
    searching thread; ``root_eval`` = the net's evaluation of the root, for rawWinrate and policy)."""
    state = job.state
    side = reported_side(job.settings.perspective, state.to_play)
    stats = OwnershipStats()
    pv_cap = job.settings.pv_len + 1
    infos = [_move_info(info, order, root, side, stats, job, pv_cap) for order, info in enumerate(snapshot.moves)]
    if job.settings.config.search.root_symmetry_pruning:
        infos = _with_symmetric_copies(infos, snapshot.moves, job)
    out: dict[str, Any] = {"id": job.id, "isDuringSearch": during, "turnNumber": job.turn, "moveInfos": infos,
                           "rootInfo": _root_info(snapshot, root, root_eval, side, state.to_play, hashes)}
    flags = job.request
    if flags.ownership or flags.ownership_stdev:
        own = stats.of(root) if root is not None else None
        mean, stdev = own if own is not None else (_raw_ownership(root_eval, state.to_play, state.size),
                                                   np.zeros(state.size * state.size))
        if flags.ownership:
            out["ownership"] = _ownership(mean, side)
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
    return Pov(np.asarray(own, dtype=np.float64), to_play).white()


def policy_list(policy: np.ndarray, state: Any) -> list[float]:
    """The raw policy in KataGo's order (rows from the top, pass last), -1 on illegal points."""
    from miai.nets.evaluator import legal_mask

    mask = legal_mask(state)
    return [rounded(float(p)) if legal else -1.0 for p, legal in zip(np.asarray(policy, dtype=np.float64), mask)]


def _with_symmetric_copies(infos: list[dict[str, Any]], moves: Sequence[MoveResult], job: Job) -> list[dict[str, Any]]:
    """The moves symmetry pruning left out, as KataGo's analysis engine shows them (``symmetric_copies``): after
    each move its copies under the root's symmetries, with ``isSymmetryOf`` naming the move searched and the PV and
    ownership carried over; copies the query avoids are left out."""
    state = job.state
    symmetries = state.symmetries()
    if len(symmetries) < 2:
        return infos
    size = state.size
    images = symmetric_points(size)
    allowed = job.request.root_moves(state.to_play, size)
    out: list[dict[str, Any]] = []
    for index, symmetry, move in symmetric_copies([m.move for m in moves], size, symmetries):
        entry = infos[index]
        if not symmetry:
            out.append(entry)
            continue
        if allowed is not None and move not in allowed:
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


def _move_info(result: MoveResult, order: int, root: Node | None, side: Color, stats: OwnershipStats, job: Job,
               pv_cap: int) -> dict[str, Any]:
    size = job.state.size
    info = Pov(result, job.state.to_play).pov(side)
    pv = list(info.pv[:pv_cap])
    out: dict[str, Any] = {
        "move": to_gtp(info.move, size), "visits": int(info.visits), "edgeVisits": int(info.edge_visits),
        "weight": rounded(info.weight), "edgeWeight": rounded(info.edge_weight),
        "utility": rounded(info.utility), "winrate": rounded(info.winrate),
        "scoreMean": rounded(info.score_lead), "scoreSelfplay": rounded(info.score_mean),
        "scoreLead": rounded(info.score_lead), "scoreStdev": rounded(info.score_stdev),
        "prior": rounded(info.prior), "lcb": rounded(info.lcb), "utilityLcb": rounded(info.utility_lcb),
        "order": order, "playSelectionValue": rounded(float(info.play_value)),
    }
    edge = root.edge_for(info.move) if root is not None else None
    if job.request.pv_visits:
        line = pv_line(root, edge, len(pv)) if root is not None and edge is not None else None
        out["pvVisits"] = list(line.visits) if line is not None else []
        out["pvEdgeVisits"] = list(line.edge_visits) if line is not None else []
        pv = pv[:len(out["pvVisits"])]
    out["pv"] = [to_gtp(move, size) for move in pv]
    if job.request.moves_ownership or job.request.moves_ownership_stdev:
        own = stats.of(edge.child) if edge is not None and edge.child is not None else None
        area = size * size
        mean, stdev = own if own is not None else (np.zeros(area), np.zeros(area))
        if job.request.moves_ownership:
            out["ownership"] = _ownership(mean, side)
        if job.request.moves_ownership_stdev:
            out["ownershipStdev"] = [round(float(x), 6) for x in stdev]
    return out


def _root_info(snapshot: Snapshot, root_node: Node | None, root_eval: Evaluation | None, side: Color,
               to_play: Color, hashes: tuple[str, str]) -> dict[str, Any]:
    # KataGo's pruned root values, as its analysis engine reports
    root = Pov(snapshot.reported or snapshot.root, to_play).pov(side)
    weight = (root_node.weight if root_node is not None else 0.0) or root.visits
    info: dict[str, Any] = {
        "visits": int(root.visits), "weight": rounded(float(weight)), "winrate": rounded(root.winrate),
        "scoreLead": rounded(root.score_lead), "scoreSelfplay": rounded(root.score_mean),
        "scoreStdev": rounded(root.score_stdev), "utility": rounded(root.utility),
        "currentPlayer": "B" if to_play == Color.BLACK else "W", "thisHash": hashes[0], "symHash": hashes[1],
    }
    if root_eval is not None:
        info.update({
            "rawWinrate": rounded(Pov(Chance(0.5 * (1.0 + float(root_eval.win) - float(root_eval.loss))),
                                      to_play).pov(side)),
            "rawLead": rounded(Pov(float(root_eval.lead), to_play).pov(side)),
            "rawScoreSelfplay": rounded(Pov(float(root_eval.score_mean), to_play).pov(side)),
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
