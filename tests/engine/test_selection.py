"""The search's selection rules (miai.engine.core.selection), checked on hand-made statistics and hand-built nodes: the
same functions and the same Selector the search calls at every node (PUCT, first-play urgency, virtual loss,
UCB1, UCB1-TUNED, untried moves first)."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from miai.engine.config import SearchConfig
from miai.engine.core.graph import Edge, Node, Stats, edge_weights
from miai.engine.core.selection import (
    SelectionError,
    SelectionRule,
    Selector,
    exploration_scale,
    pick_untried,
    puct_exploration,
    puct_score,
    puct_weight_for,
    ucb_reward,
    ucb_scores,
    utility_stdev_factor,
)

ROOT2 = math.sqrt(2.0)


def stats(utility: float = 0.0, winloss: float = 0.0) -> Stats:
    return Stats(utility, winloss, 0.0, 0.0, 0.0, utility * utility)


def ucb1(reward: float, visits: int, parent: int, c: float = ROOT2) -> float:
    return float(ucb_scores(SelectionRule.UCB1, parent, [visits], [reward], c)[0])


def tuned(reward: float, visits: int, parent: int, c: float = 1.0, reward_sq: float | None = None) -> float:
    squares = None if reward_sq is None else [reward_sq]
    return float(ucb_scores(SelectionRule.UCB1_TUNED, parent, [visits], [reward], c, squares)[0])


# --------------------------------------------------------------------------------------------------- UCB formulas
def test_ucb1_score_by_hand() -> None:
    # 6 wins in 10 visits under a parent with 100 visits: 0.6 + sqrt(2) * sqrt(ln 100 / 10).
    assert ucb1(0.6, 10, 100) == pytest.approx(0.6 + math.sqrt(2 * 4.605170185988092 / 10))
    assert ucb1(0.6, 10, 100, c=0.5) == pytest.approx(0.6 + 0.5 * math.sqrt(0.4605170185988092))


def test_ucb1_bonus_shrinks_with_visits_and_grows_with_parent() -> None:
    assert ucb1(0.5, 5, 50) > ucb1(0.5, 20, 50)
    assert ucb1(0.5, 5, 500) > ucb1(0.5, 5, 50)
    # A single-visit parent has ln 1 = 0: no exploration bonus at all.
    assert ucb1(0.25, 1, 1) == 0.25


def test_ucb1_tuned_uses_variance_bound_when_small() -> None:
    # r = 0.95 over 2000 visits, P = 5000: variance 0.0475, bound 0.0475 + sqrt(2 ln 5000 / 2000) < 0.25.
    log_ratio = math.log(5000) / 2000
    bound = 0.95 - 0.95**2 + math.sqrt(2 * log_ratio)
    assert bound < 0.25
    assert tuned(0.95, 2000, 5000) == pytest.approx(0.95 + math.sqrt(log_ratio * bound))


def test_ucb1_tuned_caps_variance_at_a_quarter() -> None:
    # Few visits: the bound exceeds 1/4, so the cap applies and the bonus is sqrt(ln P / p / 4).
    log_ratio = math.log(50) / 3
    assert tuned(0.5, 3, 50) == pytest.approx(0.5 + math.sqrt(log_ratio * 0.25))
    assert tuned(0.5, 3, 50, c=2.0) == pytest.approx(0.5 + 2.0 * math.sqrt(log_ratio * 0.25))


def test_ucb1_tuned_is_never_more_optimistic_than_ucb1() -> None:
    # min(1/4, V) <= 1/4 < 2, so TUNED's bonus is at most sqrt(1/8) of UCB1's with c = sqrt(2).
    rng = random.Random(3)
    for _ in range(200):
        parent = rng.randint(2, 10_000)
        visits = rng.randint(1, parent)
        reward = rng.random()
        assert 0 <= tuned(reward, visits, parent) - reward <= (ucb1(reward, visits, parent) - reward) / math.sqrt(8) + 1e-12


def test_ucb1_tuned_reward_sq_lowers_bonus_for_steady_rewards() -> None:
    # Same mean 0.5, but rewards that are always exactly 0.5 (second moment 0.25) have no variance.
    steady = tuned(0.5, 1000, 5000, reward_sq=0.25)
    assert steady < tuned(0.5, 1000, 5000)
    log_ratio = math.log(5000) / 1000
    assert steady == pytest.approx(0.5 + math.sqrt(log_ratio * math.sqrt(2 * log_ratio)))


def test_vectorised_scores_score_each_edge_alone() -> None:
    visits, rewards = [10, 3, 40], [0.6, 0.2, 0.55]
    parent = sum(visits)
    together = ucb_scores(SelectionRule.UCB1, parent, visits, rewards, 0.7)
    assert list(together) == pytest.approx([ucb1(r, v, parent, c=0.7) for r, v in zip(rewards, visits)])


def test_untried_edges_score_infinite_and_puct_has_no_ucb_score() -> None:
    scores = ucb_scores(SelectionRule.UCB1_TUNED, 5, [5, 0], [0.9, 0.0], 1.0)
    assert np.isfinite(scores[0]) and scores[1] == np.inf
    with pytest.raises(SelectionError):
        ucb_scores(SelectionRule.PUCT, 5, [5], [0.9], 1.0)
    with pytest.raises(SelectionError):
        ucb_scores(SelectionRule.UCB1, 5, [5, 0], [0.9], 1.0)


def test_reward_from_winloss() -> None:
    assert (ucb_reward(1.0), ucb_reward(-1.0), ucb_reward(0.0)) == (1.0, 0.0, 0.5)


def test_untried_pick_is_uniform() -> None:
    rng = random.Random(11)
    picks = Counter(pick_untried(3, rng) for _ in range(3000))
    assert set(picks) == {0, 1, 2} and all(900 < n < 1100 for n in picks.values())


def test_rule_parsing() -> None:
    assert SelectionRule.parse("UCB1_TUNED") is SelectionRule.UCB1_TUNED
    with pytest.raises(SelectionError, match="unknown selection rule 'uct2'"):
        SelectionRule.parse("uct2")
    assert sorted(rule.value for rule in SelectionRule) == sorted(("puct", "ucb1", "ucb1-tuned"))


# -------------------------------------------------------------------------------------------------- PUCT formulas
def test_puct_by_hand() -> None:
    assert puct_exploration(0) == 1.0
    assert puct_exploration(500) == pytest.approx(1.0 + 0.45 * math.log(2))
    assert puct_score(0.1, 0.2, 3, 1.5) == pytest.approx(0.1 + 1.5 * 0.2 / 4)


def test_exploration_scale_grows_with_the_weight_and_follows_the_utility_spread() -> None:
    node = hand_node(1, 0.0, [(0.5, 10, 0.2)], [])
    fixed = SearchConfig(cpuct_utility_stdev_scale=0.0)
    assert exploration_scale(16.0, fixed, node) == pytest.approx(puct_exploration(16.0) * math.sqrt(16.01))
    factor = utility_stdev_factor(node.weight, node.q.utility, node.q.utility_sq, 0.4, 2.0, 0.85)
    assert factor != 1.0
    assert exploration_scale(16.0, SearchConfig(), node) == pytest.approx(
        puct_exploration(16.0) * math.sqrt(16.01) * factor)


def test_puct_weight_for_inverts_the_bonus() -> None:
    scale, prior = 3.0, 0.2
    for gap in (0.01, 0.1, 0.3):
        weight = puct_weight_for(gap, prior, scale)
        assert puct_score(0.0, prior, weight, scale) == pytest.approx(gap)
    assert puct_weight_for(0.0, prior, scale) == 1e100 and puct_weight_for(10.0, prior, scale) == 0.0


# ------------------------------------------------------------------------------------------ the search's Selector
def hand_node(sign: int, own_utility: float, children: list[tuple[float, int, float]], untouched: list[float]) -> Node:
    """A node whose touched edges have (prior, edge visits, child utility in White's view), then untouched moves;
    priors in decreasing order, move i has the i-th prior."""
    node = Node(1, sign)
    priors = [p for p, _, _ in children] + untouched
    assert priors == sorted(priors, reverse=True)
    node.set_moves(np.arange(len(priors)), np.array(priors, dtype=np.float32))
    node.set_value(stats(own_utility))
    for i, (_prior, visits, utility) in enumerate(children):
        edge = node.touch_next()
        child = Node(100 + i, -sign)
        child.set_value(stats(utility))
        child.visits = child.weight = max(1, visits)
        edge.child, edge.visits = child, visits
        if visits:
            node.visited_mass += edge.prior
    node.recompute()
    return node


def puct_selector(**kw: object) -> Selector:
    return Selector(SearchConfig(**kw), random.Random(1))  # type: ignore[arg-type]


def test_puct_chooses_the_best_score_of_the_formula() -> None:
    selector = puct_selector()
    # Black to move (sign -1): child utilities are White's view, so Black prefers low ones.
    node = hand_node(-1, 0.0, [(0.5, 10, 0.2), (0.3, 4, -0.1), (0.1, 1, -0.6)], [0.05, 0.05])
    weights = edge_weights(node)
    scale = exploration_scale(sum(weights), selector.config, node)
    values = [puct_score(-e.child.q.utility, e.prior, w, scale)  # type: ignore[union-attr]
              for e, w in zip(node.edges, weights)]
    values.append(puct_score(selector.first_play_value(node, False), 0.05, 0.0, scale))
    best = max(range(len(values)), key=values.__getitem__)
    chosen = selector.choose(node, None)
    assert chosen is not None and chosen.move == best


def test_puct_agrees_with_the_formula_on_random_nodes() -> None:
    rng = random.Random(5)
    selector = puct_selector()
    for _ in range(200):
        count = rng.randint(1, 6)
        priors = sorted((rng.random() for _ in range(count + 2)), reverse=True)
        children = [(priors[i], rng.randint(0, 30), rng.uniform(-1, 1)) for i in range(count)]
        node = hand_node(rng.choice((-1, 1)), rng.uniform(-1, 1), children, priors[count:])
        weights = edge_weights(node)
        scale = exploration_scale(sum(weights), selector.config, node)
        fpu = selector.first_play_value(node, False)
        scored: list[tuple[float, Edge | None]] = [
            (puct_score(node.sign * e.child.q.utility if w > 0 else fpu, e.prior, w, scale), e)  # type: ignore[union-attr]
            for e, w in zip(node.edges, weights)]
        scored.append((puct_score(fpu, float(node.priors[node.next_index]), 0.0, scale), None))
        best_value = max(value for value, _ in scored)
        chosen = selector.choose(node, None)
        expected = next(edge for value, edge in scored if value == best_value)
        assert chosen is not None
        assert chosen is expected if expected is not None else chosen.move == count


def test_first_play_urgency_picks_the_best_untouched_move_when_the_visited_ones_look_bad() -> None:
    # White to move; the only visited child is terrible for White, so an unvisited move (FPU) is preferred,
    # and among those the highest prior one.
    node = hand_node(1, 0.5, [(0.4, 5, -0.9)], [0.35, 0.25])
    chosen = puct_selector().choose(node, None)
    assert chosen is not None and chosen.move == 1 and chosen.prior == pytest.approx(0.35)


def test_first_play_value_blends_the_net_utility_in_while_little_policy_is_visited() -> None:
    parent = hand_node(1, 0.2, [], [0.4, 0.3])
    parent.q = Stats(0.6, 0.6, 0.0, 0.0, 0.0, 0.36)  # the search has found the position better than the net thought
    parent.visited_mass = 0.5
    # blend = min(1, 0.5^2) = 0.25: 0.25 * 0.6 + 0.75 * 0.2 = 0.3, minus 0.2 * sqrt(0.5) (0.1 at the root)
    selector = puct_selector()
    assert selector.first_play_value(parent, is_root=False) == pytest.approx(0.3 - 0.2 * math.sqrt(0.5))
    assert selector.first_play_value(parent, is_root=True) == pytest.approx(0.3 - 0.1 * math.sqrt(0.5))
    plain = puct_selector(fpu_parent_weight_by_visited_policy=False)
    assert plain.first_play_value(parent, is_root=False) == pytest.approx(0.6 - 0.2 * math.sqrt(0.5))


def test_virtual_loss_steers_the_next_playout_of_a_batch_elsewhere() -> None:
    selector = puct_selector()
    node = hand_node(1, 0.0, [(0.5, 3, 0.3), (0.5, 3, 0.29)], [])
    first = selector.choose(node, None)
    assert first is not None and first.move == 0
    first.child.virtual_loss += 1  # type: ignore[union-attr]
    second = selector.choose(node, None)
    assert second is not None and second.move == 1


def test_illegal_edges_are_never_chosen() -> None:
    node = hand_node(1, 0.0, [(0.6, 3, 0.9), (0.4, 3, -0.5)], [])
    node.edges[0].illegal = True
    for rule in ("puct", "ucb1", "ucb1-tuned"):
        chosen = puct_selector(selection=rule).choose(node, None)
        assert chosen is node.edges[1]


def test_ucb_tries_every_untouched_move_first_in_random_order() -> None:
    selector = puct_selector(selection="ucb1-tuned")
    node = hand_node(1, 0.0, [(0.5, 1, 1.0)], [0.2, 0.1, 0.1, 0.05, 0.05])  # one tried edge, excellent for White
    order = []
    for _ in range(5):
        edge = selector.choose(node, None)
        assert edge is not None and edge.child is None
        order.append(edge.move)
        edge.child, edge.visits = Node(200 + edge.move, -1), 1
        edge.child.set_value(stats(-1.0, -1.0))
    assert sorted(order) == [1, 2, 3, 4, 5] and order != [1, 2, 3, 4, 5]
    # Once every move has a visit, the score decides: the edge whose child wins for White is chosen.
    node.edges[0].child.q = stats(1.0, 1.0)  # type: ignore[union-attr]
    assert selector.choose(node, None) is node.edges[0]


def _bandit_pulls(rule: str, means: list[float], pulls: int, seed: int) -> list[int]:
    """Play a Bernoulli bandit through the search's Selector at a White node whose children are the arms; returns
    how often each arm was pulled."""
    rng = random.Random(seed)
    selector = Selector(SearchConfig(selection=rule), rng)
    node = Node(1, 1)
    node.set_moves(np.arange(len(means)), np.full(len(means), 1.0 / len(means), dtype=np.float32))
    wins = [0.0] * len(means)
    for _ in range(pulls):
        edge = selector.choose(node, None)
        assert edge is not None
        if edge.child is None:
            edge.child = Node(10 + edge.move, -1)
        edge.visits += 1
        wins[edge.move] += 1.0 if rng.random() < means[edge.move] else 0.0
        rate = wins[edge.move] / edge.visits
        edge.child.set_value(stats(2 * rate - 1, 2 * rate - 1))
        edge.child.visits = edge.visits
    return [node.edge_for(arm).visits for arm in range(len(means))]  # type: ignore[union-attr]


@pytest.mark.parametrize("rule", ["ucb1", "ucb1-tuned"])
@pytest.mark.slow
def test_bandit_concentrates_on_the_best_arm(rule: str) -> None:
    visits = _bandit_pulls(rule, [0.35, 0.5, 0.65], 3000, seed=1)
    assert visits[2] == max(visits)
    assert visits[2] > 0.6 * 3000
    assert min(visits) > 10  # every arm keeps being explored a little (logarithmically)


@pytest.mark.slow
def test_ucb1_tuned_explores_less_than_ucb1_on_coin_flips() -> None:
    # TUNED's bonus uses the variance bound (at most 1/4) where UCB1 uses 2, so it spends fewer pulls on the worse
    # arm (Auer et al. 2002 found it the better of the two in practice).
    means = [0.45, 0.55]
    waste_ucb1 = sum(_bandit_pulls("ucb1", means, 2000, seed)[0] for seed in range(3))
    waste_tuned = sum(_bandit_pulls("ucb1-tuned", means, 2000, seed)[0] for seed in range(3))
    assert waste_tuned < waste_ucb1
