"""A search's snapshots as the GTP layer's analysis snapshots (lz-analyze, kata-analyze, genmove_analyze).

The search's move records are already from the root player's view; what an analysis request adds is read here:
the root moves it allows and avoids, ``maxmoves``, the moves symmetry pruning left out, and the extras it asked for
(ownership and its spread, each move's ownership and its PV's visits), read off the search's graph while it is
paused (in its progress callback or after it).
"""

from __future__ import annotations

import dataclasses

from miai.engine.search import Search
from miai.engine.snapshot import Snapshot, average_ownership, ownership_moments, pv_visits, with_symmetric_copies
from miai.go.coords import PASS, Color
from miai.go.state import GameState
from miai.gtp.player import AnalysisSnapshot, AnalyzeRequest, MoveInfo

__all__ = ["allowed_moves", "analysis_snapshot"]


def analysis_snapshot(search: Search, snapshot: Snapshot, root: GameState, request: AnalyzeRequest) -> AnalysisSnapshot:
    """``snapshot`` (a run of ``search`` from ``root``) as the GTP layer prints it: the same records (already from
    the root player's view), cut to the moves ``request`` allows and to ``maxmoves``, with the extras it asked for."""
    allowed = allowed_moves(request, root.to_play, root.size)
    moves = [_with_extras(search, m, request) for m in snapshot.moves if allowed is None or m.move in allowed]
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
    return AnalysisSnapshot(moves=tuple(moves),
                            root=snapshot.reported or snapshot.root,
                            ownership=ownership, ownership_stdev=stdev)


def _with_extras(search: Search, m: MoveInfo, request: AnalyzeRequest) -> MoveInfo:
    """One root move with the per-move extras the request asked for, read off the graph (the search is paused:
    this runs in its progress callback or after it); ``weight`` is reported as the edge visits."""
    visits = edge_visits = ownership = None
    root = search.root
    wanted = request.pv_visits or request.pv_edge_visits or request.moves_ownership
    edge = next((e for e in root.edges if e.move == m.move), None) if root is not None and wanted else None
    if edge is not None and (request.pv_visits or request.pv_edge_visits):
        assert root is not None  # edge is one of its edges
        visits, edge_visits = pv_visits(root, edge, len(m.pv))
    if edge is not None and request.moves_ownership and edge.child is not None \
            and edge.child.ownership is not None:
        assert root is not None  # edge is one of its edges
        ownership = [float(x) for x in average_ownership(edge.child) * root.sign]
    return dataclasses.replace(
        m, weight=None if m.edge_visits is None else float(m.edge_visits),
        pv_visits=visits if request.pv_visits else None,
        pv_edge_visits=edge_visits if request.pv_edge_visits else None, ownership=ownership)


def allowed_moves(request: AnalyzeRequest, color: Color, size: int) -> set[int] | None:
    """Root moves the analysis may report under ``allow``/``avoid`` (None = all)."""
    allow = [r for r in request.allow if r.color == color and r.until_depth >= 1]
    avoid = [r for r in request.avoid if r.color == color and r.until_depth >= 1]
    if not allow and not avoid:
        return None
    moves = set(range(size * size)) | {PASS}
    if allow:
        moves = set().union(*(set(r.moves) for r in allow))
    for r in avoid:
        moves -= set(r.moves)
    return moves
