"""What the search reports about itself: its counters (``miai-search_stats``), its transpositions, and the graph
as plain data (``miai-graph_dump``; schema in docs/gtp.md)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from miai.engine.core.graph import Node, NodeTable

__all__ = ["Counters", "Transpositions", "counter_stats", "transposition_stats", "graph_dump"]


@dataclass
class Counters:
    """The search's running totals since it was made."""

    playouts: int = 0
    net_evals: int = 0
    eval_batches: int = 0
    transposition_hits: int = 0
    stopped_early: int = 0
    leaky_descents: int = 0
    cycle_stops: int = 0
    terminal_visits: int = 0
    collisions: int = 0
    illegal_edges: int = 0
    nodes_created: int = 0
    nodes_freed: int = 0
    trees_reused: int = 0
    revalued_nodes: int = 0  # nodes whose values were worked out again when a search began (new score centre)
    passing_hack_playouts: int = 0  # playouts sent down a pass or a non-pass move by search.more_passing_hacks
    batches_abandoned: int = 0  # batches in flight at a run's deadline (or stop), given up instead of waited for
    last_run: dict[str, float] = field(default_factory=dict)


@dataclass
class Transpositions:
    """Transposition statistics of one run: playouts that passed through a node with several parents or linked an
    edge to a node already in the table, and the depths of those links (table hits)."""

    playouts: int = 0
    met: int = 0
    hit_depths: dict[int, int] = field(default_factory=dict)
    refreshed: int = 0  # nodes recomputed off the playout path (search.stale_update)


def counter_stats(count: Counters, root: Node | None, table: NodeTable) -> dict[str, Any]:
    """The counters as ``miai-search_stats`` shows them, with the root's visits and the graph's size."""
    c = count
    return {
        "visits": root.visits if root is not None else 0,
        "nodes": len(table) + (1 if root is not None else 0),
        "playouts": c.playouts, "net_evals": c.net_evals, "eval_batches": c.eval_batches,
        "transposition_hits": c.transposition_hits, "stopped_early": c.stopped_early,
        "leaky_descents": c.leaky_descents, "cycle_stops": c.cycle_stops, "terminal_visits": c.terminal_visits,
        "collisions": c.collisions, "illegal_edges": c.illegal_edges, "nodes_created": c.nodes_created,
        "nodes_freed": c.nodes_freed, "trees_reused": c.trees_reused, "revalued_nodes": c.revalued_nodes,
        "passing_hack_playouts": c.passing_hack_playouts, "batches_abandoned": c.batches_abandoned,
        "last_run": dict(c.last_run),
    }


def transposition_stats(t: Transpositions, table: NodeTable, stale_update: str) -> dict[str, Any]:
    """The last run's transposition statistics and the graph's shared nodes now."""
    hits = sum(t.hit_depths.values())
    shared = [node.in_edges for node in table if node.in_edges > 1]
    return {
        "playouts": t.playouts, "met": t.met, "share": round(t.met / t.playouts, 4) if t.playouts else 0.0,
        "table_hits": hits,
        "hit_depth_mean": round(sum(d * n for d, n in t.hit_depths.items()) / hits, 2) if hits else 0.0,
        "hit_depth_max": max(t.hit_depths, default=0),
        "hit_depths": [t.hit_depths.get(d, 0) for d in range(max(t.hit_depths, default=-1) + 1)],
        "nodes_with_several_parents": len(shared), "most_parents": max(shared, default=0),
        "stale_update": stale_update, "refreshed_nodes": t.refreshed,
    }


def graph_dump(root: Node | None, graph: bool, move_text: Callable[[int], str] = str) -> dict[str, Any]:
    """The graph reachable from ``root`` as plain data, breadth first (nodes in order of first reach), moves
    written by ``move_text``; ``graph`` says whether nodes are keyed by graph hash (else the search is a tree)."""
    if root is None:
        return {"root": None, "graph": graph, "nodes": []}
    nodes = []
    seen = {id(root)}
    queue = deque([root])
    while queue:
        node = queue.popleft()
        nodes.append(_node_data(node, move_text))
        for child in node.children():
            if id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return {"root": _key_text(root.key), "graph": graph, "nodes": nodes}


def _key_text(key: int) -> str:
    """A node key as JSON text: the graph hash in hex (tree mode: a negative serial number)."""
    return f"{key:#x}" if key >= 0 else str(key)


def _node_data(node: Node, move_text: Callable[[int], str]) -> dict[str, Any]:
    """One node of the dump: its statistics (White's view) and its touched edges."""
    return {
        "key": _key_text(node.key), "to_play": "W" if node.sign > 0 else "B", "visits": node.visits,
        "weight": round(node.weight, 4), "utility": round(node.utility, 5), "winloss": round(node.winloss, 5),
        "lead": round(node.lead, 3), "net_utility": round(node.own.utility, 5), "terminal": node.terminal,
        "expanded": node.expanded, "parents": node.in_edges,
        "edges": [{"move": move_text(edge.move), "prior": round(edge.prior, 5), "visits": edge.visits,
                   "child": None if edge.child is None else _key_text(edge.child.key), "illegal": edge.illegal}
                  for edge in node.edges],
        "untouched_moves": len(node.moves) - node.next_index,
    }
