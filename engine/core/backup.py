"""Backup: what a finished playout changes in the graph.

A playout's path holds the nodes it went through (each with one virtual loss) and the edges it took; ``edges[i]``
leads from ``path[i]``, and the last edge may lead to a node outside the path (the stop rule or a cycle), whose own
statistics are then left unchanged. Backing up adds one visit to each edge and recomputes the nodes above it from
their children, bottom-up (miai.engine.core.graph); under ``search.stale_update`` the nodes off the path whose averages
include a changed child are recomputed too (docs/search.md "Stale values").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from miai.engine.core.graph import Edge, Node, StaleUpdate, Weighting, refresh_ancestors, refresh_parents

if TYPE_CHECKING:
    from miai.nets.protocol import Amaf

__all__ = ["Backup", "backup", "add_amaf", "release"]


def backup(path: list[Node], edges: list[Edge], weighting: Weighting, cut: int = -1) -> None:
    """Add one visit to each edge taken below ``edges[cut]`` and recompute the nodes above it, bottom-up; release
    virtual loss on the whole path. A playout that took ``edges[cut]`` without an edge visit (the passing hack)
    leaves that edge and every node above it as they were, as KataGo does."""
    for i in range(len(edges) - 1, cut, -1):
        edges[i].visits += 1
        path[i].recompute(weighting)
    for node in path:
        node.virtual_loss -= 1


def release(path: list[Node]) -> None:
    """Take a playout back without a trace (a collision, a failed evaluation): the virtual loss on its path. Its
    moves stay on the scratch state, which the next playout from it takes back as far as it must
    (miai.engine.core.playout)."""
    for node in path:
        node.virtual_loss -= 1


class Backup:
    """Backs up finished playouts under one config's weighting and stale-update rule (resolved here, once)."""

    def __init__(self, weighting: Weighting, stale: StaleUpdate) -> None:
        self.weighting = weighting
        self.refresh = {StaleUpdate.PATH: None, StaleUpdate.PARENTS: refresh_parents,
                        StaleUpdate.ANCESTORS: refresh_ancestors}[stale]

    def finish(self, path: list[Node], edges: list[Edge], cut: int = -1) -> int:
        """Back up a playout (the edges below ``cut``: see :func:`backup`); returns how many nodes off its path were
        recomputed. The playout's moves stay on its scratch state (miai.engine.core.playout)."""
        weighting = self.weighting
        backup(path, edges, weighting, cut)
        refreshed = 0
        refresh = self.refresh
        if refresh is not None:
            path = path[cut + 1:]
            refreshed = refresh(path, weighting)
            if refreshed:
                # A refreshed node may be a child of a path node updated before it (a transposition, or a cycle
                # under "ancestors"): go over the path once more so the root is always exact.
                for node in reversed(path):
                    node.recompute(weighting)
        return refreshed


def add_amaf(path: list[Node], edges: list[Edge], amaf: Amaf) -> None:
    """Add a playout's all-moves-as-first statistics to every node of its path, deepest first: a node counts the
    points its side to move played first after it, in the tree (the path's own moves, which come first and so
    override the playout's) or in the playout; rewards from that side's view."""
    first = amaf.first.copy()
    white_wins = amaf.white_wins.copy()
    for i in range(len(path) - 1, -1, -1):
        node = path[i]
        row = 1 if node.sign > 0 else 0  # the side to move: 1 White, 0 Black
        if i < len(edges) and edges[i].move >= 0:
            point = edges[i].move
            first[:, point] = 0.0
            white_wins[:, point] = 0.0
            first[row, point] = amaf.playouts
            white_wins[row, point] = amaf.white_win_total
        if node.amaf_n is None or node.amaf_w is None:
            node.amaf_n = np.zeros(first.shape[1])
            node.amaf_w = np.zeros(first.shape[1])
        node.amaf_n += first[row]
        node.amaf_w += white_wins[row] if row == 1 else first[row] - white_wins[row]
