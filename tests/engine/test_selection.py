"""Selection formulas on hand-made statistics: UCB1, UCB1-TUNED, PUCT and untried-first ordering."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest

from miai.engine.selection import (
    SelectionConfig,
    SelectionError,
    SelectionRule,
    pick_untried,
    puct_exploration,
    puct_score,
    reward_from_value,
    select_edge,
    selection_scores,
    ucb1_score,
    ucb1_tuned_score,
    untried_order,
)


def test_ucb1_score_by_hand() -> None:
    # 6 wins in 10 visits under a parent with 100 visits: 0.6 + sqrt(2) * sqrt(ln 100 / 10).
    assert ucb1_score(0.6, 10, 100) == pytest.approx(0.6 + math.sqrt(2 * 4.605170185988092 / 10))
    assert ucb1_score(0.6, 10, 100, c=0.5) == pytest.approx(0.6 + 0.5 * math.sqrt(0.4605170185988092))


def test_ucb1_bonus_shrinks_with_visits_and_grows_with_parent() -> None:
    assert ucb1_score(0.5, 5, 50) > ucb1_score(0.5, 20, 50)
    assert ucb1_score(0.5, 5, 500) > ucb1_score(0.5, 5, 50)
    # A single-visit parent has ln 1 = 0: no exploration bonus at all.
    assert ucb1_score(0.25, 1, 1) == 0.25


def test_ucb1_tuned_uses_variance_bound_when_small() -> None:
    # r = 0.95 over 2000 visits, P = 5000: variance 0.0475, bound 0.0475 + sqrt(2 ln 5000 / 2000) < 0.25.
    log_ratio = math.log(5000) / 2000
    bound = 0.95 - 0.95**2 + math.sqrt(2 * log_ratio)
    assert bound < 0.25
    assert ucb1_tuned_score(0.95, 2000, 5000) == pytest.approx(0.95 + math.sqrt(log_ratio * bound))


def test_ucb1_tuned_caps_variance_at_a_quarter() -> None:
    # Few visits: the bound exceeds 1/4, so the cap applies and the bonus is sqrt(ln P / p / 4).
    log_ratio = math.log(50) / 3
    assert ucb1_tuned_score(0.5, 3, 50) == pytest.approx(0.5 + math.sqrt(log_ratio * 0.25))
    assert ucb1_tuned_score(0.5, 3, 50, variance_cap=0.1) == pytest.approx(0.5 + math.sqrt(log_ratio * 0.1))


def test_ucb1_tuned_is_never_more_optimistic_than_ucb1() -> None:
    # min(1/4, V) <= 1/4 < 2, so TUNED's bonus is at most sqrt(1/8) of UCB1's with c = sqrt(2).
    rng = random.Random(3)
    for _ in range(200):
        parent = rng.randint(2, 10_000)
        visits = rng.randint(1, parent)
        reward = rng.random()
        tuned = ucb1_tuned_score(reward, visits, parent) - reward
        plain = ucb1_score(reward, visits, parent) - reward
        assert 0 <= tuned <= plain / math.sqrt(8) + 1e-12


def test_ucb1_tuned_reward_sq_lowers_bonus_for_steady_rewards() -> None:
    # Same mean 0.5, but rewards that are always exactly 0.5 (second moment 0.25) have no variance.
    steady = ucb1_tuned_score(0.5, 1000, 5000, reward_sq=0.25)
    coin = ucb1_tuned_score(0.5, 1000, 5000)
    assert steady < coin
    log_ratio = math.log(5000) / 1000
    assert steady == pytest.approx(0.5 + math.sqrt(log_ratio * math.sqrt(2 * log_ratio)))


def test_scores_reject_untried_edges_and_bad_counts() -> None:
    with pytest.raises(SelectionError):
        ucb1_score(0.5, 0, 10)
    with pytest.raises(SelectionError):
        ucb1_tuned_score(0.5, 0, 10)
    with pytest.raises(SelectionError):
        ucb1_score(0.5, 11, 10)


def test_puct_by_hand() -> None:
    assert puct_exploration(0) == 1.0
    assert puct_exploration(500) == pytest.approx(1.0 + 0.45 * math.log(2))
    assert puct_score(0.1, 0.2, 3, 16, c=1.5) == pytest.approx(0.1 + 1.5 * 0.2 * 4 / 4)


def test_reward_from_value() -> None:
    assert reward_from_value(1.0) == 1.0
    assert reward_from_value(-1.0) == 0.0
    assert reward_from_value(0.0) == 0.5


def test_vectorised_scores_match_scalar_functions() -> None:
    visits = [10, 3, 40]
    rewards = [0.6, 0.2, 0.55]
    parent = sum(visits)
    ucb = selection_scores(SelectionConfig(rule=SelectionRule.UCB1, c_ucb1=0.7), parent, visits, rewards)
    tuned = selection_scores(SelectionConfig(rule=SelectionRule.UCB1_TUNED), parent, visits, rewards)
    for i in range(3):
        assert ucb[i] == pytest.approx(ucb1_score(rewards[i], visits[i], parent, c=0.7))
        assert tuned[i] == pytest.approx(ucb1_tuned_score(rewards[i], visits[i], parent))
    priors = [0.5, 0.3, 0.2]
    puct = selection_scores(SelectionConfig(), parent, visits, rewards, priors)
    c = puct_exploration(parent)
    for i in range(3):
        assert puct[i] == pytest.approx(puct_score(rewards[i], priors[i], visits[i], parent, c))


def test_unvisited_edges_score_infinite_under_ucb() -> None:
    scores = selection_scores(SelectionConfig(rule="ucb1-tuned"), 5, [5, 0], [0.9, 0.0])
    assert np.isfinite(scores[0]) and scores[1] == np.inf


def test_select_edge_prefers_best_ucb_once_all_tried() -> None:
    config = SelectionConfig(rule=SelectionRule.UCB1)
    rng = random.Random(0)
    # Equal visits: the higher mean wins. Same mean: the less visited edge wins.
    assert select_edge(config, rng, 30, [10, 10, 10], [0.4, 0.7, 0.5]) == 1
    assert select_edge(config, rng, 30, [20, 5, 5], [0.5, 0.5, 0.5]) == 1
    # A much better-explored strong edge loses to a rarely tried one when exploration is large enough...
    assert select_edge(config, rng, 1000, [990, 10], [0.6, 0.5]) == 1
    # ...and wins when exploration is switched off.
    assert select_edge(SelectionConfig(rule="ucb1", c_ucb1=0.0), rng, 1000, [990, 10], [0.6, 0.5]) == 0


def test_select_edge_puct_follows_prior_when_unvisited() -> None:
    config = SelectionConfig()
    assert select_edge(config, random.Random(0), 1, [0, 0, 0], [0.0, 0.0, 0.0], [0.2, 0.7, 0.1]) == 1
    with pytest.raises(SelectionError):
        select_edge(config, random.Random(0), 1, [0, 0], [0.0, 0.0])


def test_untried_edges_come_first_in_random_order() -> None:
    config = SelectionConfig(rule=SelectionRule.UCB1_TUNED)
    rng = random.Random(7)
    visits = [0] * 6
    rewards = [0.0] * 6
    visits[2], rewards[2] = 1, 1.0  # already tried and excellent: still waits for the untried ones
    order = []
    for _ in range(5):
        i = select_edge(config, rng, sum(visits), visits, rewards)
        assert visits[i] == 0
        order.append(i)
        visits[i] = 1
    assert sorted(order) == [0, 1, 3, 4, 5]
    # Once every edge has a visit, the score decides: the edge with reward 1 is chosen.
    assert select_edge(config, rng, sum(visits), visits, rewards) == 2


def test_untried_order_is_uniform() -> None:
    rng = random.Random(11)
    firsts = Counter(pick_untried([0, 0, 0, 5], rng) for _ in range(3000))
    assert set(firsts) == {0, 1, 2}
    assert all(900 < n < 1100 for n in firsts.values())
    perms = Counter(tuple(untried_order(3, rng)) for _ in range(3000))
    assert len(perms) == 6 and all(400 < n < 600 for n in perms.values())
    assert pick_untried([1, 2], rng) is None


def test_rule_parsing_and_config_validation() -> None:
    assert SelectionRule.parse("UCB1_TUNED") is SelectionRule.UCB1_TUNED
    assert SelectionConfig(rule="ucb1").rule is SelectionRule.UCB1  # type: ignore[arg-type]
    with pytest.raises(SelectionError):
        SelectionRule.parse("uct2")
    with pytest.raises(SelectionError):
        SelectionConfig(c_ucb1=-1.0)
    with pytest.raises(SelectionError):
        SelectionConfig(c_puct_base=0.0)


def _bandit_pulls(rule: SelectionRule, means: list[float], pulls: int, seed: int) -> list[int]:
    """Play a Bernoulli bandit with select_edge; return how often each arm was pulled."""
    rng = random.Random(seed)
    config = SelectionConfig(rule=rule)
    visits = [0] * len(means)
    wins = [0.0] * len(means)
    for _ in range(pulls):
        rewards = [w / v if v else 0.0 for w, v in zip(wins, visits)]
        arm = select_edge(config, rng, sum(visits), visits, rewards)
        visits[arm] += 1
        wins[arm] += 1.0 if rng.random() < means[arm] else 0.0
    return visits


@pytest.mark.parametrize("rule", [SelectionRule.UCB1, SelectionRule.UCB1_TUNED])
def test_bandit_concentrates_on_the_best_arm(rule: SelectionRule) -> None:
    means = [0.35, 0.5, 0.65]
    visits = _bandit_pulls(rule, means, 3000, seed=1)
    assert visits[2] == max(visits)
    assert visits[2] > 0.6 * 3000
    assert min(visits) > 10  # every arm keeps being explored a little (logarithmically)


def test_ucb1_tuned_explores_less_than_ucb1_on_coin_flips() -> None:
    # TUNED's bonus uses the variance bound (at most 1/4) where UCB1 uses 2, so it spends fewer pulls on the worse
    # arm (Auer et al. 2002 found it the better of the two in practice).
    means = [0.45, 0.55]
    waste_ucb1 = sum(_bandit_pulls(SelectionRule.UCB1, means, 2000, seed)[0] for seed in range(3))
    waste_tuned = sum(_bandit_pulls(SelectionRule.UCB1_TUNED, means, 2000, seed)[0] for seed in range(3))
    assert waste_tuned < waste_ucb1
