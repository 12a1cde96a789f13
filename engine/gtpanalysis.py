"""A search's snapshots as the GTP layer's analysis snapshots (lz-analyze, kata-analyze, genmove_analyze).

The search's records (miai.engine.core.results) are already from the root player's view, and become the GTP layer's here
(one conversion); what an analysis request adds is read here too:
the root moves it allows and avoids, ``maxmoves``, the moves symmetry pruning left out, and the extras it asked for
(ownership and its spread, each move's ownership and its PV's visits), read off the search's graph while it is
paused (in its progress callback or after it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from miai.engine.core.results import MoveResult, Pov
from miai.engine.core.search import Search
from miai.engine.core.snapshot import (Snapshot, average_ownership, carried, mover, ownership_moments, pv_line,
                                  symmetric_copies)
from miai.go.coords import Color
from miai.go.geometry import symmetric_points
from miai.go.state import GameState
from miai.gtp.player import AnalysisSnapshot, AnalyzeRequest, MoveInfo, RootInfo

__all__ = ["analysis_snapshot", "with_symmetric_copies"]


def analysis_snapshot(search: Search, snapshot: Snapshot, root: GameState, request: AnalyzeRequest) -> AnalysisSnapshot:
    """``snapshot`` (a run of ``search`` from ``root``) as the GTP layer prints it: the same records (already from
    the root player's view), cut to the moves ``request`` allows and to ``maxmoves``, with the extras it asked for."""
    allowed = request.root_moves(root.to_play, root.size)
    moves = [_move_info(search, m, request) for m in snapshot.moves if allowed is None or m.move in allowed]
    if search.config.root_symmetry_pruning:  # the moves symmetry pruning left out, shown as KataGo does
        copies = with_symmetric_copies(moves, root.size, root.symmetries())
        moves = [m for m in copies if allowed is None or m.move in allowed]
    if request.max_moves > 0:
        moves = moves[: request.max_moves]
    ownership = stdev = None
    if request.ownership and snapshot.ownership is not None:
        ownership = [float(x) for x in snapshot.ownership]
    node = search.root
    if request.ownership_stdev and node is not None and node.visits > 0:
        moments = ownership_moments(node)
        stdev = None if moments is None else [float(x) for x in moments[1]]
    figures = snapshot.reported or snapshot.root
    return AnalysisSnapshot(moves=tuple(moves),
                            root=RootInfo(visits=figures.visits, winrate=figures.winrate,
                                          score_lead=figures.score_lead, score_mean=figures.score_mean,
                                          score_stdev=figures.score_stdev, utility=figures.utility),
                            ownership=ownership, ownership_stdev=stdev)


def _move_info(search: Search, m: MoveResult, request: AnalyzeRequest) -> MoveInfo:
    """One root move as the GTP layer prints it, with the per-move extras the request asked for, read off the graph
    (the search is paused: this runs in its progress callback or after it)."""
    visits = edge_visits = ownership = None
    root = search.root
    wanted = request.pv_visits or request.pv_edge_visits or request.moves_ownership
    edge = root.edge_for(m.move) if root is not None and wanted else None
    if root is not None and edge is not None and (request.pv_visits or request.pv_edge_visits):
        line = pv_line(root, edge, len(m.pv))
        visits, edge_visits = line.visits, line.edge_visits
    if root is not None and edge is not None and request.moves_ownership and edge.child is not None \
            and edge.child.ownership is not None:
        ownership = [float(x) for x in Pov(average_ownership(edge.child), Color.WHITE).pov(mover(root))]
    return MoveInfo(
        move=m.move, visits=m.visits, winrate=m.winrate, prior=m.prior, lcb=m.lcb, pv=m.pv, score_lead=m.score_lead,
        score_mean=m.score_mean, score_stdev=m.score_stdev, utility=m.utility, utility_lcb=m.utility_lcb,
        edge_visits=m.edge_visits, weight=m.weight, play_value=m.play_value,
        pv_visits=visits if request.pv_visits else None,
        pv_edge_visits=edge_visits if request.pv_edge_visits else None, ownership=ownership)


def with_symmetric_copies(moves: Sequence[MoveInfo], size: int, symmetries: Sequence[int]) -> list[MoveInfo]:
    """The analysis of a root searched with symmetry pruning, as KataGo shows it (``symmetric_copies``): each move
    followed by its copies, each with the move's figures and its PV and per-move ownership carried over by the same
    symmetry."""
    if len(symmetries) < 2:
        return list(moves)
    images = symmetric_points(size)
    out = []
    for index, symmetry, move in symmetric_copies([m.move for m in moves], size, symmetries):
        info = moves[index]
        if symmetry == 0:
            out.append(info)
            continue
        image = images[symmetry]
        out.append(dataclasses.replace(
            info, move=move, pv=tuple(image[p] if p >= 0 else p for p in info.pv),
            ownership=None if info.ownership is None else carried(info.ownership, size, symmetry)))
    return out
