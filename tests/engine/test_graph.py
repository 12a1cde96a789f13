"""Node/Edge/NodeTable on hand-built graphs: the N and Q formulas, edge order, sweep."""

from __future__ import annotations

import random

import numpy as np
import pytest

from miai.engine.core.graph import Node, NodeTable, Stats, edge_weights, reachable_ids


def leaf(key: int, utility: float, winloss: float = 0.0, score: float = 0.0) -> Node:
    node = Node(key, sign=1)
    node.set_moves(np.array([0, 1, 2]), np.array([0.2, 0.5, 0.3], dtype=np.float32))
    node.set_value(Stats(utility, winloss, score, score * score + 1.0, score, utility * utility))
    return node


def link(parent: Node, child: Node, visits: int) -> None:
    edge = parent.touch_next()
    edge.child = child
    edge.visits = visits


def test_n_and_q_formulas_weight_children_by_edge_visits() -> None:
    parent = leaf(1, 0.1, winloss=0.2, score=1.0)
    a = leaf(2, 0.5, winloss=0.6, score=4.0)
    b = leaf(3, -0.3, winloss=-0.4, score=-2.0)
    a.visits = 7  # child visits from elsewhere must not matter: only the edge visits weigh
    a.weight = 7.0  # (with plain weights a node's weight equals its visits)
    link(parent, a, 3)
    link(parent, b, 1)
    parent.recompute()
    assert parent.visits == 1 + 3 + 1
    expected = [(own + 3 * qa + 1 * qb) / 5 for own, qa, qb in zip(parent.own, a.q, b.q)]
    assert parent.q == pytest.approx(expected)
    assert parent.utility == pytest.approx((0.1 + 1.5 - 0.3) / 5)


def test_recompute_weighs_each_child_by_edge_weights() -> None:
    # Node.recompute writes the child weight out for speed; it must be edge_weights' W * (edge visits / N(child)).
    rng = random.Random(2)
    for _ in range(50):
        parent = leaf(1, rng.uniform(-1, 1))
        for key in range(rng.randint(1, 3)):
            child = leaf(10 + key, rng.uniform(-1, 1))
            child.visits = rng.randint(0, 9)
            child.weight = rng.uniform(0.5, 9.0) if child.visits else 0.0
            link(parent, child, min(child.visits, rng.randint(0, 9)))
        parent.recompute()
        weights = edge_weights(parent)
        assert parent.weight == pytest.approx(parent.own_weight + sum(weights))
        assert parent.utility == pytest.approx((parent.own.utility + sum(
            w * e.child.utility for e, w in zip(parent.edges, weights))) / parent.weight)  # type: ignore[union-attr]
        assert parent.visits == 1 + sum(e.visits for e, w in zip(parent.edges, weights) if w > 0)


def test_recompute_is_idempotent() -> None:
    parent = leaf(1, 0.1)
    link(parent, leaf(2, 0.9), 2)
    parent.recompute()
    first = (parent.visits, parent.q)
    parent.recompute()
    parent.recompute()
    assert (parent.visits, parent.q) == first


def test_terminal_node_keeps_its_exact_value() -> None:
    node = Node(5, sign=-1)
    node.terminal = node.expanded = True
    node.own = node.q = Stats(1.0, 1.0, 3.5, 12.25, 3.5, 1.0)
    node.visits = 4
    node.recompute()
    assert node.visits == 4 and node.q[0] == 1.0


def test_moves_are_touched_in_decreasing_prior_order() -> None:
    node = Node(1, sign=1)
    node.set_moves(np.array([10, 11, 12, -1]), np.array([0.1, 0.4, 0.2, 0.3], dtype=np.float32))
    assert [node.touch_next().move for _ in range(4)] == [11, -1, 12, 10]
    assert not node.has_untouched()


def test_touch_move_takes_a_move_out_of_order_and_keeps_the_rest_sorted() -> None:
    node = Node(1, sign=1)
    node.set_moves(np.array([10, 11, 12, -1]), np.array([0.1, 0.4, 0.2, 0.3], dtype=np.float32))
    assert node.touch_next().move == 11
    edge = node.touch_move(10)
    assert edge is not None and edge.move == 10 and edge.prior == pytest.approx(0.1)
    assert node.touch_move(11) is None  # touched already
    assert [node.touch_next().move for _ in range(2)] == [-1, 12]


def test_replace_priors_resorts_the_untouched_moves_and_keeps_edges() -> None:
    node = Node(1, sign=1)
    node.set_moves(np.array([0, 1, 2]), np.array([0.5, 0.3, 0.2], dtype=np.float32))
    edge = node.touch_next()
    edge.child, edge.visits = Node(2, sign=-1), 2
    node.replace_priors({0: 0.1, 1: 0.2, 2: 0.7})
    assert edge.prior == pytest.approx(0.1) and edge.visits == 2
    assert node.touch_next().move == 2
    assert node.visited_mass == pytest.approx(0.1)


def test_sweep_frees_exactly_the_unreachable_nodes() -> None:
    table = NodeTable()
    root, a, b, c, d, e = (leaf(k, 0.0) for k in range(1, 7))
    link(root, a, 1)
    link(a, b, 1)
    link(root, c, 1)
    link(e, d, 1)  # e -> d, neither reachable from root
    for node in (a, b, c, d, e):
        table.add(node)
    freed = table.sweep(root)
    assert {n.key for n in freed} == {d.key, e.key}
    assert {n.key for n in table} == {a.key, b.key, c.key}


def test_reachable_ids_terminates_on_cycles() -> None:
    a, b = leaf(1, 0.0), leaf(2, 0.0)
    link(a, b, 1)
    link(b, a, 1)
    assert reachable_ids(a) == {id(a), id(b)}
