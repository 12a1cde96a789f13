"""The search graph: nodes keyed by graph hash, edges carrying their own visit counts.

Notation (KataGo's "Monte-Carlo Graph Search from First Principles", see docs/search.md):

- ``U``: a node's own value from the net (or the exact result for a terminal node), weight 1;
- ``N``: node visits, ``N = 1 + sum(edge.visits)`` over its outgoing edges (a terminal node counts its visits);
- ``Q``: ``(w_U * U + sum(w_e * child.Q)) / W``, recomputed from scratch every time the node is updated, so the
  update is idempotent and a child shared by several parents contributes through each parent's *edge* visits.
  With plain weights (:class:`Weighting` defaults) ``w_U = 1`` and ``w_e = edge.visits``, so ``W = N``. KataGo's
  refinements (its cpp/search/searchupdatehelpers.cpp, docs/search.md) change the weights: each net evaluation
  weighs by its predicted uncertainty, a child's weight is its own weight ``W`` scaled by ``edge.visits / N(child)``,
  children far worse than the average lose weight (noise pruning, value weighting), and ``U`` may carry the
  subtree value bias correction of its local pattern.

Every value stored here is from **White's** point of view (positive utility / score = good for White), so that
values can be averaged along edges without sign flips; ``Node.sign`` (+1 White to move, -1 Black) converts to the
side to move. Only edges that the search has chosen at least once exist as :class:`Edge` objects: the others are
kept as compact arrays of moves and priors sorted by decreasing prior (all unvisited moves share the same first-play
value, so the best of them is always the first one left).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple, cast

import numpy as np

__all__ = [
    "Edge", "Node", "NodeTable", "Stats", "StaleUpdate", "Weighting", "BiasEntry", "t3_cdf", "edge_weights", "link",
    "relink", "refresh_parents", "refresh_ancestors", "revalue", "with_utility", "ZERO_STATS",
]


class Stats(NamedTuple):
    """The statistics a node averages over the graph (its own value U, and Q), all from White's view."""

    utility: float  # win_loss_factor * winloss + the score utilities (docs/search.md)
    winloss: float  # P(White wins) - P(Black wins)
    score_mean: float  # White's expected score (unconditional: a no-result counts as 0)
    score_sq: float  # its expected square (the score's spread is sqrt(score_sq - score_mean^2))
    lead: float  # the points White leads by
    utility_sq: float  # the expected square of the utility (for KataGo's utility stdev)

    def __neg__(self) -> Stats:
        """The same statistics from Black's view (squares unchanged): a relative value for
        :class:`miai.engine.core.results.Pov`, which the result path reads them through."""
        return _stats(Stats, (-self.utility, -self.winloss, -self.score_mean, self.score_sq, -self.lead,
                              self.utility_sq))


# Stats from six floats without NamedTuple.__new__'s Python-level call: Node.recompute makes one per backed-up node.
_stats = cast(Callable[[type[Stats], tuple[float, float, float, float, float, float]], Stats], tuple.__new__)
ZERO_STATS = Stats(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def with_utility(stats: Stats, utility: float) -> Stats:
    """``stats`` with another utility (and its square); the rest kept."""
    return _stats(Stats, (utility, stats.winloss, stats.score_mean, stats.score_sq, stats.lead, utility * utility))


class StaleUpdate(Enum):
    """Which nodes off the playout path are recomputed after a backup (``search.stale_update``; docs/search.md
    "Stale values"): the path only (KataGo's rule), also the other parents of each node on the path, or every
    ancestor in topological order."""

    PATH = "path"
    PARENTS = "parents"
    ANCESTORS = "ancestors"

_SQRT3 = math.sqrt(3.0)
_INV_PI = 1.0 / math.pi


def t3_cdf(z: float) -> float:
    """CDF of Student's t distribution with 3 degrees of freedom (KataGo's VALUE_WEIGHT_DEGREES_OF_FREEDOM)."""
    x = z / _SQRT3
    return 0.5 + _INV_PI * (x / (1.0 + x * x) + math.atan(x))


@dataclass(frozen=True, slots=True)
class Weighting:
    """How a node averages its children (KataGo's names in docs/search.md). The defaults give plain visit averages."""

    value_weight_exponent: float = 0.0  # valueWeightExponent
    noise_pruning: bool = False  # useNoisePruning
    noise_prune_utility_scale: float = 0.15  # noisePruneUtilityScale
    bias_factor: float = 0.0  # subtreeValueBiasFactor
    bias_weight_exponent: float = 0.85  # subtreeValueBiasWeightExponent


PLAIN = Weighting()


class BiasEntry:
    """One subtree value bias table entry: weighted sum of (children's utility - net utility) over the nodes that
    share a local pattern, White's view."""

    __slots__ = ("key", "delta_sum", "weight_sum")

    def __init__(self, key: object = None) -> None:
        self.key = key  # the local pattern the entry stands for (opaque here)
        self.delta_sum = 0.0
        self.weight_sum = 0.0

    def correction(self, factor: float) -> float:
        """The utility added to a net evaluation of a node of this pattern."""
        return factor * self.delta_sum / self.weight_sum if self.weight_sum > 0.001 else 0.0


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


def edge_weights(node: Node) -> list[float]:
    """The weight each child carries through its edge from ``node``, in edge order: the child's total weight ``W``
    times the share of its visits that came through this edge, ``W * (edge.visits / N(child))`` (KataGo's
    NodeStats::childWeight, in its order of operations); 0 for an edge without a visited child. The one home of this
    formula: averages, selection, snapshots and analysis all read it from here."""
    weights = []
    for edge in node.edges:  # (a loop, not a comprehension: in CPython 3.11 that is one more call per node)
        child = edge.child
        weights.append(child.weight * (edge.visits / child.visits) if child is not None and child.visits > 0 else 0.0)
    return weights


class Node:
    """A position in the search graph (one per graph hash; see the module docstring for N, U and Q).

    Q is kept as six attributes named as :class:`Stats`' fields (``utility``, ``winloss``, ...: what selection and
    backup read at every step, without building a record each time) and seen whole as ``q``; U is ``own``."""

    __slots__ = (
        "key", "sign", "edges", "moves", "priors", "next_index", "visits", "virtual_loss", "expanded",
        "terminal", "pending", "own", "ownership", "visited_mass", "weight", "weight_sq", "own_weight",
        "bias", "bias_delta", "bias_weight", "in_edges", "parents", "amaf_n", "amaf_w",
        *Stats._fields,
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
        self.own = ZERO_STATS  # U and friends, White's view
        # Q, White's view (the fields of Stats).
        self.utility = self.winloss = self.score_mean = self.score_sq = self.lead = self.utility_sq = 0.0
        self.ownership: np.ndarray | None = None  # the net's ownership, White's view (+1 White)
        self.visited_mass = 0.0  # sum of priors of edges with a child (for first-play urgency)
        self.weight = 0.0  # W: total weight of the values averaged into q (= visits with plain weights)
        self.weight_sq = 0.0  # sum of squared weights (for the effective sample size of the LCB)
        self.own_weight = 1.0  # weight of the node's own evaluation U
        self.bias: BiasEntry | None = None  # subtree value bias entry of the move that led here, if any
        self.bias_delta = 0.0  # this node's current contribution to bias.delta_sum / weight_sum
        self.bias_weight = 0.0
        self.in_edges = 0  # edges of the graph leading here (> 1: a transposition)
        self.parents: list[Node] | None = None  # the nodes those edges leave from; kept only for stale updates
        # RAVE: per flat point, playouts through here in which the side to move played it first, and their reward.
        self.amaf_n: np.ndarray | None = None
        self.amaf_w: np.ndarray | None = None

    # ----------------------------------------------------------------------------------------------- values
    @property
    def q(self) -> Stats:
        """Q, all six statistics (White's view)."""
        return Stats(self.utility, self.winloss, self.score_mean, self.score_sq, self.lead, self.utility_sq)

    @q.setter
    def q(self, stats: Stats) -> None:
        self.utility, self.winloss, self.score_mean, self.score_sq, self.lead, self.utility_sq = stats

    def set_value(self, own: Stats, weight: float = 1.0, bias_factor: float = 0.0) -> None:
        """Store the node's own value U (and companion statistics) and make it a visited leaf: N = 1, Q = U
        (plus the subtree value bias correction, when the node has an entry and ``bias_factor`` > 0)."""
        self.own = own
        self.own_weight = weight
        self.weight = weight
        self.weight_sq = weight * weight
        self.visits = 1
        if self.bias is not None and bias_factor:
            u = own.utility + self.bias.correction(bias_factor)
            own = with_utility(own, u)
        self.q = own

    def recompute(self, weighting: Weighting = PLAIN) -> None:
        """Recompute N, W and Q from U and the children (idempotent); see the module docstring."""
        if self.terminal:
            return
        sign = self.sign
        kids: list[Node] = []
        weights: list[float] = []
        priors: list[float] = []
        n = 1
        for edge in self.edges:
            visits = edge.visits
            if visits:
                child = edge.child
                assert child is not None  # an edge with visits always has a child
                child_visits = child.visits
                if child_visits > 0 and child.weight > 0.0:
                    kids.append(child)
                    # edge_weights, written out: a call and a list per backed-up node cost 3-4% of a search
                    weights.append(child.weight * (visits / child_visits))
                    priors.append(edge.prior)
                    n += visits
        self.visits = n
        orig_total = total = sum(weights)
        if len(kids) > 1:  # one child keeps its weight under both rules
            utilities = [sign * child.utility for child in kids]
            if weighting.noise_pruning:
                total = _prune_noise(utilities, weights, priors, weighting.noise_prune_utility_scale)
            if weighting.value_weight_exponent > 0.0 and total > 0.0:
                _downweight_bad(utilities, weights, total, weighting.value_weight_exponent)
        u = wl = sm = ssq = ld = usq = weight_sq = 0.0
        for child, w in zip(kids, weights):
            u += w * child.utility
            wl += w * child.winloss
            sm += w * child.score_mean
            ssq += w * child.score_sq
            ld += w * child.lead
            usq += w * child.utility_sq
            scale = w / child.weight
            weight_sq += scale * scale * child.weight_sq
        own_u, own_wl, own_sm, own_ssq, own_ld, _ = self.own
        if self.bias is not None and weighting.bias_factor:
            own_u += self._update_bias(u, total, orig_total, weighting)
        w = self.own_weight
        weight = total + w
        self.weight = weight
        self.weight_sq = weight_sq + w * w
        inv = 1.0 / weight
        self.utility = (u + w * own_u) * inv
        self.winloss = (wl + w * own_wl) * inv
        self.score_mean = (sm + w * own_sm) * inv
        self.score_sq = (ssq + w * own_ssq) * inv
        self.lead = (ld + w * own_ld) * inv
        self.utility_sq = (usq + w * own_u * own_u) * inv

    def _update_bias(self, child_utility_sum: float, total: float, orig_total: float, weighting: Weighting) -> float:
        """Record how far the children's average utility is from the net's (KataGo's subtree value bias) and
        return the correction for this node's own utility."""
        entry = self.bias
        assert entry is not None
        if total > 1e-10:
            bias_weight = orig_total ** weighting.bias_weight_exponent
            delta = (child_utility_sum / total - self.own.utility) * bias_weight
            entry.delta_sum += delta - self.bias_delta
            entry.weight_sum += bias_weight - self.bias_weight
            self.bias_delta, self.bias_weight = delta, bias_weight
        return entry.correction(weighting.bias_factor)

    def release_bias(self, free_prop: float) -> None:
        """Take ``free_prop`` of this node's contribution out of its bias entry (the node leaves the graph)."""
        entry = self.bias
        if entry is not None:
            entry.delta_sum -= self.bias_delta * free_prop
            entry.weight_sum -= self.bias_weight * free_prop
            self.bias = None

    # ------------------------------------------------------------------------------------------------ edges
    def set_moves(self, moves: np.ndarray, priors: np.ndarray) -> None:
        """Give the node its candidate moves; they are sorted by decreasing prior here."""
        order = np.argsort(-priors, kind="stable")
        self.moves = moves[order].astype(np.int16, copy=False)  # moves[order] is a copy already
        self.priors = priors[order].astype(np.float32, copy=False)
        self.next_index = 0
        self.expanded = True

    def touch_next(self) -> Edge:
        """Turn the best untouched move into an Edge (it was just chosen) and return it."""
        i = self.next_index
        edge = Edge(int(self.moves[i]), float(self.priors[i]))
        self.next_index = i + 1
        self.edges.append(edge)
        return edge

    def touch_move(self, move: int) -> Edge | None:
        """Turn the untouched ``move`` into an Edge out of prior order (the others keep theirs); None if it is not
        an untouched candidate."""
        i = self.next_index
        found = np.flatnonzero(self.moves[i:] == move)
        if not len(found):
            return None
        j = i + int(found[0])
        # Rotate it to the front of the untouched moves, so that they stay sorted by prior.
        self.moves[i:j + 1] = np.roll(self.moves[i:j + 1], 1)
        self.priors[i:j + 1] = np.roll(self.priors[i:j + 1], 1)
        return self.touch_next()

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
        self.visited_mass = sum(e.prior for e in self.edges if e.child is not None)

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
        return (f"Node(key={self.key:#x}, visits={self.visits}, utility={self.utility:+.3f}, "
                f"edges={len(self.edges)}, terminal={self.terminal})")


def _prune_noise(utilities: list[float], weights: list[float], priors: list[float], scale: float) -> float:
    """KataGo's noise pruning: in edge order, a child worse than the weighted average before it keeps at most
    twice its policy share of the weight, the excess shrinking by ``1 - exp(-gap / scale)``. Returns the new
    total weight."""
    utility_sum = weight_sum = policy_sum = 0.0
    for i, utility in enumerate(utilities):
        weight = weights[i]
        prior = priors[i]
        if prior < 1e-30:  # (max(prior, 1e-30), without a call per child)
            prior = 1e-30
        if weight_sum > 0.0 and policy_sum > 0.0:
            gap = utility_sum / weight_sum - utility
            lenient = 2.0 * weight_sum * prior / policy_sum
            if gap > 0.0 and weight > lenient:
                weight -= (weight - lenient) * (1.0 - math.exp(-gap / scale))
                weights[i] = weight
        utility_sum += utility * weight
        weight_sum += weight
        policy_sum += prior
    return weight_sum


def _downweight_bad(utilities: list[float], weights: list[float], total: float, exponent: float) -> None:
    """KataGo's value weighting: each child's weight times ``(t3_cdf(z) + 0.0001) ** exponent``, where ``z`` is its
    utility's distance from the weighted mean in units of ``1 / sqrt(1.5 sqrt(weight))``; the total is kept."""
    mean = sum(u * w for u, w in zip(utilities, weights)) / total
    new_total = 0.0
    sqrt, atan = math.sqrt, math.atan
    for i, utility in enumerate(utilities):
        w = weights[i]
        if w > 0.0:
            root = sqrt(w)
            x = (utility - mean) * sqrt(1.5 * root / (1.0 + 1.5e-8 * root)) / _SQRT3
            # (t3_cdf(z) + 0.0001) ** exponent, t3_cdf written out: at the root this runs for every visited child
            w *= (0.5 + _INV_PI * (x / (1.0 + x * x) + atan(x)) + 0.0001) ** exponent
            weights[i] = w
            new_total += w
    if new_total > 0.0:
        factor = total / new_total
        for i in range(len(weights)):
            weights[i] *= factor


class NodeTable:
    """Nodes keyed by graph hash (or by a fresh id in tree mode). The root is kept outside the table."""

    def __init__(self) -> None:
        self._nodes: dict[int, Node] = {}
        self._serial = 0  # tree mode's keys handed out so far (never reset: a kept root's key stays unique)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, key: int) -> bool:
        return key in self._nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def fresh_key(self) -> int:
        """A key no node of the table has had (tree mode, where every node is new): negative, so it never clashes
        with a graph hash's."""
        self._serial += 1
        return -self._serial

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

    def sweep(self, root: Node) -> list[Node]:
        """Mark every node reachable from ``root``, delete the rest; returns the freed nodes."""
        reachable = reachable_ids(root)
        kept: dict[int, Node] = {}
        freed: list[Node] = []
        for key, node in self._nodes.items():
            if id(node) in reachable:
                kept[key] = node
            else:
                freed.append(node)
        self._nodes = kept
        return freed


def link(parent: Node, child: Node, keep_parents: bool) -> None:
    """Record that an edge of ``parent`` now leads to ``child``."""
    child.in_edges += 1
    if keep_parents:
        parents = child.parents
        if parents is None:
            child.parents = [parent]
        elif not any(p is parent for p in parents):
            parents.append(parent)


def relink(root: Node, nodes: Iterable[Node], keep_parents: bool) -> None:
    """Recount in-edges (and rebuild parent lists) of ``root`` and ``nodes`` from their edges alone, after the nodes
    outside them were freed: no count or parent link may refer to a freed node."""
    kept = [root, *nodes]
    for node in kept:
        node.in_edges = 0
        node.parents = None
    for node in kept:
        for edge in node.edges:
            if edge.child is not None:
                link(node, edge.child, keep_parents)


def refresh_parents(path: list[Node], weighting: Weighting) -> int:
    """Recompute the parents of the nodes on ``path`` that are not on it (their averages include a child that just
    changed through another parent). Returns how many nodes were recomputed."""
    on_path = {id(node) for node in path}
    done = 0
    for node in reversed(path):
        for parent in node.parents or ():
            if id(parent) not in on_path:
                parent.recompute(weighting)
                done += 1
    return done


def refresh_ancestors(path: list[Node], weighting: Weighting) -> int:
    """Recompute every ancestor of the deepest node on ``path``, each after all of its children among them
    (Kahn's order over the parent links; nodes on a cycle come last, once each). Returns how many were recomputed."""
    members: dict[int, Node] = {}
    stack = [path[-1]]
    while stack:
        node = stack.pop()
        if id(node) not in members:
            members[id(node)] = node
            stack.extend(node.parents or ())
    waiting = {key: sum(1 for c in _distinct_children(node) if id(c) in members and c is not node)
               for key, node in members.items()}
    ready = [node for key, node in members.items() if waiting[key] == 0]
    done: set[int] = set()
    while ready:
        node = ready.pop()
        node.recompute(weighting)
        done.add(id(node))
        for parent in node.parents or ():
            key = id(parent)
            if key in waiting and parent is not node:
                waiting[key] -= 1
                if waiting[key] == 0:
                    ready.append(parent)
    for key, node in members.items():  # cycles: what Kahn's order could not reach
        if key not in done:
            node.recompute(weighting)
    return len(members)


def revalue(root: Node, refreshed: Callable[[Stats], Stats], weighting: Weighting) -> int:
    """Work out every node's own value again with ``refreshed`` and recompute the graph below ``root``, children
    before parents (post-order; a node on a cycle once). Returns how many nodes were revalued.

    KataGo does this at the start of every search (search.cpp, ``recursivelyRecomputeStats``), because the
    dynamic score utility is centred on the new root's expected score: values kept from the previous search
    would otherwise be measured against the old centre while new leaves use the new one. As there, a visited
    leaf's utility becomes its own utility without the subtree value bias correction."""
    order: list[Node] = []
    seen = {id(root)}
    stack: list[tuple[Node, Iterator[Node]]] = [(root, _distinct_children(root))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            order.append(node)
        elif id(child) not in seen:
            seen.add(id(child))
            stack.append((child, _distinct_children(child)))
    for node in order:
        if node.terminal:
            node.own = node.q = refreshed(node.own)
        elif node.expanded:
            node.own = refreshed(node.own)
            # KataGo's test is whether any child exists, visited through its edge or not (a passing-hack descent
            # makes a child without an edge visit): such a node still takes its subtree value bias correction.
            if any(edge.child is not None for edge in node.edges):
                node.recompute(weighting)
            else:
                u = node.own.utility
                node.utility, node.utility_sq = u, u * u
    return len(order)


def _distinct_children(node: Node) -> Iterator[Node]:
    seen: set[int] = set()
    for edge in node.edges:
        child = edge.child
        if child is not None and id(child) not in seen:
            seen.add(id(child))
            yield child


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
