"""The search graph: nodes keyed by graph hash, edges carrying their own visit counts.

Notation (KataGo's "Monte-Carlo Graph Search from First Principles", see docs/search.md):

- ``U``: a node's own value from the net (or the exact result for a terminal node), weight 1;
- ``N``: node visits, ``N = 1 + sum(edge.visits)`` over its outgoing edges (a terminal node counts its visits);
- ``Q``: ``(U + sum(edge.visits * child.Q)) / N``, recomputed from scratch every time the node is updated, so the
  update is idempotent and a child shared by several parents contributes through each parent's *edge* visits.

Every value stored here is from **White's** point of view (positive utility / score = good for White), so that
values can be averaged along edges without sign flips; ``Node.sign`` (+1 White to move, -1 Black) converts to the
side to move. Only edges that the search has chosen at least once exist as :class:`Edge` objects: the others are
kept as compact arrays of moves and priors sorted by decreasing prior (all unvisited moves share the same first-play
value, so the best of them is always the first one left).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["Edge", "Node", "NodeTable", "STAT_NAMES"]

# The statistics averaged over the graph, in the order of Node.own / Node.q.
STAT_NAMES = ("utility", "winloss", "score_mean", "score_sq", "lead", "utility_sq")

_EMPTY_MOVES = np.zeros(0, dtype=np.int16)
_EMPTY_PRIORS = np.zeros(0, dtype=np.float32)


class Edge:
    """A move out of a node: its prior, how often it was chosen (edge visits), and the child once created."""

    __slots__ = ("move", "prior", "visits", "child", "illegal")

    def __init__(self, move: int, prior: float, child: Node | None = None) -> None:
        self.move = move
        self.prior = prior
        self.visits = 0
        self.child = child
        # Set when the move turned out illegal on some path (superko with a different history): never chosen again.
        self.illegal = False

    def __repr__(self) -> str:
        return f"Edge(move={self.move}, prior={self.prior:.3f}, visits={self.visits})"


class Node:
    """A position in the search graph (one per graph hash; see the module docstring for N, U and Q)."""

    __slots__ = (
        "key", "sign", "edges", "moves", "priors", "next_index", "visits", "virtual_loss", "expanded",
        "terminal", "pending", "own", "q", "ownership", "visited_mass",
    )

    def __init__(self, key: int, sign: int) -> None:
        self.key = key
        self.sign = sign  # +1 if White is to move here, -1 if Black
        self.edges: list[Edge] = []  # edges chosen at least once, in the order they were first chosen
        self.moves: np.ndarray = _EMPTY_MOVES  # untouched moves from next_index on, best prior first
        self.priors: np.ndarray = _EMPTY_PRIORS
        self.next_index = 0
        self.visits = 0
        self.virtual_loss = 0  # playouts in flight through this node
        self.expanded = False
        self.terminal = False
        self.pending = False  # waiting for its evaluation in the current batch
        self.own: tuple[float, ...] = (0.0,) * len(STAT_NAMES)  # U and friends, White's view
        self.q: tuple[float, ...] = self.own
        self.ownership: np.ndarray | None = None  # the net's ownership, White's view (+1 White)
        self.visited_mass = 0.0  # sum of priors of edges with visits > 0 (for first-play urgency)

    # ----------------------------------------------------------------------------------------------- values
    def set_value(self, own: tuple[float, ...]) -> None:
        """Store the node's own value U (and companion statistics) and make it a visited leaf: N = 1, Q = U."""
        self.own = own
        self.q = own
        self.visits = 1

    def recompute(self) -> None:
        """Recompute N and Q from U and the children, weighted by edge visits (idempotent)."""
        if self.terminal:
            return
        own = self.own
        u, wl, sm, ssq, ld, usq = own
        n = 1
        for edge in self.edges:
            w = edge.visits
            if w:
                c = edge.child.q  # type: ignore[union-attr]  # an edge with visits always has a child
                n += w
                u += w * c[0]
                wl += w * c[1]
                sm += w * c[2]
                ssq += w * c[3]
                ld += w * c[4]
                usq += w * c[5]
        self.visits = n
        inv = 1.0 / n
        self.q = (u * inv, wl * inv, sm * inv, ssq * inv, ld * inv, usq * inv)

    @property
    def utility(self) -> float:
        """Q utility from White's view."""
        return self.q[0]

    @property
    def edge_visit_sum(self) -> int:
        """Sum of the visits of the outgoing edges (N - 1 for an expanded, non-terminal node)."""
        return sum(e.visits for e in self.edges)

    # ------------------------------------------------------------------------------------------------ edges
    def set_moves(self, moves: np.ndarray, priors: np.ndarray) -> None:
        """Give the node its candidate moves; they are sorted by decreasing prior here."""
        order = np.argsort(-priors, kind="stable")
        self.moves = moves[order].astype(np.int16)
        self.priors = priors[order].astype(np.float32)
        self.next_index = 0
        self.expanded = True

    def touch_next(self) -> Edge:
        """Turn the best untouched move into an Edge (it was just chosen) and return it."""
        i = self.next_index
        edge = Edge(int(self.moves[i]), float(self.priors[i]))
        self.next_index = i + 1
        self.edges.append(edge)
        return edge

    def has_untouched(self) -> bool:
        """True while some move has no Edge object yet."""
        return self.next_index < len(self.moves)

    def all_priors(self) -> Iterator[tuple[int, float]]:
        """Every candidate move with its prior, touched edges first."""
        for edge in self.edges:
            yield edge.move, edge.prior
        for i in range(self.next_index, len(self.moves)):
            yield int(self.moves[i]), float(self.priors[i])

    def replace_priors(self, priors: dict[int, float]) -> None:
        """Set new priors (e.g. after root noise): edges keep their stats, untouched moves are re-sorted."""
        for edge in self.edges:
            edge.prior = priors.get(edge.move, edge.prior)
        rest = self.moves[self.next_index:]
        new = np.array([priors.get(int(m), 0.0) for m in rest], dtype=np.float32)
        order = np.argsort(-new, kind="stable")
        self.moves = rest[order]
        self.priors = new[order]
        self.next_index = 0
        self.visited_mass = sum(e.prior for e in self.edges if e.visits > 0)

    def edge_for(self, move: int) -> Edge | None:
        """The Edge for ``move`` if it has been touched, else None."""
        for edge in self.edges:
            if edge.move == move:
                return edge
        return None

    def children(self) -> Iterator[Node]:
        """The child nodes created so far."""
        for edge in self.edges:
            if edge.child is not None:
                yield edge.child

    def __repr__(self) -> str:
        return (f"Node(key={self.key:#x}, visits={self.visits}, utility={self.q[0]:+.3f}, "
                f"edges={len(self.edges)}, terminal={self.terminal})")


class NodeTable:
    """Nodes keyed by graph hash (or by a fresh id in tree mode). The root is kept outside the table."""

    def __init__(self) -> None:
        self._nodes: dict[int, Node] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, key: int) -> bool:
        return key in self._nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def get(self, key: int) -> Node | None:
        """The node stored under ``key``, or None."""
        return self._nodes.get(key)

    def add(self, node: Node) -> None:
        """Store ``node`` under its key (replacing nothing: keys are unique)."""
        self._nodes[node.key] = node

    def discard(self, key: int) -> None:
        """Remove the node under ``key`` if present (the new root leaves the table)."""
        self._nodes.pop(key, None)

    def clear(self) -> None:
        """Forget every node."""
        self._nodes.clear()

    def sweep(self, root: Node) -> int:
        """Mark every node reachable from ``root``, delete the rest; returns how many nodes were freed."""
        reachable = reachable_ids(root)
        before = len(self._nodes)
        self._nodes = {k: n for k, n in self._nodes.items() if id(n) in reachable}
        return before - len(self._nodes)


def reachable_ids(root: Node) -> set[int]:
    """ids of all nodes reachable from ``root`` through created children (iterative, safe on cycles)."""
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        for edge in node.edges:
            child = edge.child
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return seen
