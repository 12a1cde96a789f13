"""KataGo's search refinements, each checked against numbers worked out by hand from KataGo's formulas
(cpp/search/searchexplorehelpers.cpp, searchupdatehelpers.cpp, searchhelpers.cpp, searchresults.cpp; docs/search.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from miai.engine.config import SearchConfig, katago_names
from miai.engine.core.graph import BiasEntry, Node, Stats, Weighting, t3_cdf
from miai.engine.core.leaves import Valuation
from miai.engine.core.search import Search, leaves_per_batch
from miai.engine.core.selection import utility_stdev_factor
from miai.engine.core.snapshot import _lcb_radius, move_temperature
from toygame import FakeEvaluation, ScriptedEvaluator, ToyState, set_game


def node(key: int, utility: float, sign: int = 1, weight: float = 1.0) -> Node:
    n = Node(key, sign)
    n.set_moves(np.array([0, 1, 2, 3]), np.array([0.4, 0.3, 0.2, 0.1], dtype=np.float32))
    n.set_value(Stats(utility, utility, 0.0, 0.0, 0.0, utility * utility), weight)
    return n


def link(parent: Node, child: Node, visits: int) -> None:
    edge = parent.touch_next()
    edge.child = child
    edge.visits = visits
    child.visits = visits
    child.weight = float(visits)
    child.weight_sq = float(visits)
    parent.visited_mass += edge.prior


def test_t3_cdf_matches_the_t_distribution_with_three_degrees_of_freedom() -> None:
    assert t3_cdf(0.0) == pytest.approx(0.5)
    assert t3_cdf(1.0) == pytest.approx(0.80450, abs=1e-5)  # tables of Student's t, 3 d.o.f.
    assert t3_cdf(-3.182) == pytest.approx(0.025, abs=1e-4)  # the two-sided 95% critical value
    assert t3_cdf(2.0) + t3_cdf(-2.0) == pytest.approx(1.0)


def test_stdev_factor_follows_the_utility_spread() -> None:
    # ((u^2 + prior^2) * pw + usq * W) / (pw + W - 1) - u^2 = ((0.04 + 0.16) * 2 + 0.09 * 10) / 11 - 0.04 = 0.078182
    expected = 1.0 + 0.85 * (math.sqrt(1.3 / 11 - 0.04) / 0.4 - 1.0)
    assert utility_stdev_factor(10.0, 0.2, 0.09, 0.4, 2.0, 0.85) == pytest.approx(expected)
    assert expected == pytest.approx(0.744171, abs=1e-6)
    assert utility_stdev_factor(1.0, 0.2, 0.09, 0.4, 2.0, 0.85) == 1.0  # one visit: the prior stdev itself
    assert utility_stdev_factor(50.0, 0.0, 0.5, 0.4, 2.0, 0.0) == 1.0  # scale 0: fixed cpuct


def test_value_weighting_moves_a_node_towards_its_better_child() -> None:
    parent = node(1, 0.0)
    good, bad = node(2, 0.5), node(3, -0.5)
    link(parent, good, 4)
    link(parent, bad, 4)
    parent.recompute(Weighting(value_weight_exponent=0.25))
    # Both children weigh 4: stdev = sqrt(1e-8 + 1 / (1.5 * sqrt(4))) = sqrt(1/3); mean 0; z = +-0.5 / sqrt(1/3).
    stdev = math.sqrt(1e-8 + 1.0 / 3.0)
    w_good = (t3_cdf(0.5 / stdev) + 0.0001) ** 0.25
    w_bad = (t3_cdf(-0.5 / stdev) + 0.0001) ** 0.25
    good_share = 8.0 * w_good / (w_good + w_bad)
    expected = (0.0 + good_share * 0.5 + (8.0 - good_share) * -0.5) / 9.0
    assert parent.q[0] == pytest.approx(expected)
    assert parent.q[0] > 0.0 and parent.weight == pytest.approx(9.0)  # the total weight is kept
    parent.recompute(Weighting())
    assert parent.q[0] == pytest.approx(0.0)  # plain averages


def test_noise_pruning_takes_weight_off_an_overvisited_worse_child() -> None:
    parent = node(1, 0.0)
    first, second = node(2, 0.3), node(3, 0.0)
    link(parent, first, 2)  # prior 0.4
    link(parent, second, 10)  # prior 0.3: its raw-policy share is 2 * 0.3 / 0.4 = 1.5, lenient share 3
    parent.recompute(Weighting(noise_pruning=True, noise_prune_utility_scale=0.15))
    pruned = 10.0 - (10.0 - 3.0) * (1.0 - math.exp(-0.3 / 0.15))
    assert parent.weight == pytest.approx(1.0 + 2.0 + pruned)
    assert parent.q[0] == pytest.approx((0.0 + 2 * 0.3 + pruned * 0.0) / (3.0 + pruned))
    assert parent.visits == 13  # visits are counts: pruning changes weights only


def test_uncertainty_weight_of_an_evaluation() -> None:
    cfg = SearchConfig()
    valuation = Valuation(cfg, score_center=0.0)
    evaluation = FakeEvaluation(np.ones(10) / 10, 0.6, 0.4, 0.0, 0.0, 5.0, 0.0, None,
                                shortterm_winloss_error=0.2, shortterm_score_error=3.0)
    # slope at score 0 on 9x9: (2/pi) * (0.1 / (2 * 9) + 0.3 / (0.75 * 9)) ; uncertainty = 0.2 + slope * 3
    slope = 2.0 / math.pi * (0.1 / 18.0 + 0.3 / 6.75)
    expected = 0.25 / (0.2 + slope * 3.0 + 0.25 / 8.0)
    assert valuation.weight(evaluation, 0.0, 9) == pytest.approx(expected)
    no_head = FakeEvaluation(np.ones(10) / 10, 0.6, 0.4, 0.0, 0.0, 5.0, 0.0, None)
    assert valuation.weight(no_head, 0.0, 9) == 1.0  # nets before model version 9 have no error heads
    certain = FakeEvaluation(np.ones(10) / 10, 1.0, 0.0, 0.0, 0.0, 5.0, 0.0, None,
                             shortterm_winloss_error=0.0, shortterm_score_error=0.0)
    assert valuation.weight(certain, 0.0, 9) == pytest.approx(8.0)  # capped at uncertainty_max_weight


def test_lcb_radius_uses_the_effective_sample_size_and_a_small_maximal_variance_prior() -> None:
    # W = 4, sum(w^2) = 4: ess 4, prior weight 4 / 64; utility 0.1, mean square 0.05, range radius 1.4.
    w, wsq, u, usq, big = 4.0, 4.0, 0.1, 0.05, 1.4
    pw = w / 64.0
    msq = (usq * w + (usq + big * big) * pw) / (w + pw)
    ess = (w + pw) ** 2 / (wsq + pw * pw)
    assert _lcb_radius(w, wsq, u, usq, big, 5.0) == pytest.approx(5.0 * math.sqrt((msq - u * u) / ess))
    assert _lcb_radius(0.0, 0.0, 0.0, 0.0, big, 5.0) == pytest.approx(2 * big * 5.0)


def test_subtree_value_bias_shares_the_correction_between_nodes_of_one_pattern() -> None:
    entry = BiasEntry()
    weighting = Weighting(bias_factor=0.45, bias_weight_exponent=0.85)
    a = node(1, 0.0)
    a.bias = entry
    link(a, node(2, -0.4), 4)  # the children say 0.4 worse than the net's 0.0
    a.recompute(weighting)
    bias_weight = 4.0 ** 0.85
    assert entry.delta_sum == pytest.approx(-0.4 * bias_weight)
    assert entry.weight_sum == pytest.approx(bias_weight)
    correction = 0.45 * -0.4
    assert a.q[0] == pytest.approx((0.0 + correction + 4 * -0.4) / 5.0)
    a.recompute(weighting)  # idempotent: the node's contribution is replaced, not added again
    assert entry.weight_sum == pytest.approx(bias_weight)
    b = Node(3, 1)  # a fresh leaf of the same pattern starts corrected
    b.bias = entry
    b.set_value(Stats(0.1, 0.1, 0.0, 0.0, 0.0, 0.01), 1.0, 0.45)
    assert b.q[0] == pytest.approx(0.1 + correction)
    a.release_bias(0.8)
    assert entry.weight_sum == pytest.approx(0.2 * bias_weight)


def test_batches_grow_with_root_visits() -> None:
    growing = SearchConfig(batch_size=16, visits_per_batch_leaf=64)
    assert [leaves_per_batch(growing, 32, v) for v in (0, 63, 64, 200, 959, 960, 5000)] == [1, 1, 2, 4, 15, 16, 16]
    assert leaves_per_batch(growing, 32) == 16 and leaves_per_batch(growing, 8, 5000) == 8  # the evaluator's cap
    fixed = SearchConfig(batch_size=16, visits_per_batch_leaf=0)
    assert leaves_per_batch(fixed, 32, 0) == 16


def test_temperature_half_life_scales_with_the_board_side() -> None:
    # KataGo's interpolateEarly: 19 half-lives on 19x19 take 9 moves on 9x9.
    assert move_temperature(19, 0.5, 0.1, 19.0, 19) == pytest.approx(0.3)
    assert move_temperature(9, 0.5, 0.1, 19.0, 9) == pytest.approx(0.3)


def test_search_with_every_refinement_keeps_counts_exact() -> None:
    search = Search(ScriptedEvaluator(), SearchConfig(max_visits=300, max_time=0.0, batch_size=8, seed=3))
    search.set_root(ToyState(set_game(points=5, depth=4)))
    snapshot = search.run()
    assert snapshot.root.visits == 300
    assert sum(m.edge_visits for m in snapshot.moves) == 299
    assert snapshot.moves[0].play_value == max(m.play_value for m in snapshot.moves)


def test_katago_names_cover_the_refinements() -> None:
    names = katago_names()
    for name in ("cpuctUtilityStdevPrior", "cpuctUtilityStdevPriorWeight", "cpuctUtilityStdevScale",
                 "fpuParentWeightByVisitedPolicy", "valueWeightExponent", "useNoisePruning", "useUncertainty",
                 "subtreeValueBiasFactor", "subtreeValueBiasWeightExponent", "subtreeValueBiasFreeProp",
                 "policyOptimism", "maxVisits"):
        assert name in names
    assert names["valueWeightExponent"] == "search.value_weight_exponent"


def test_tree_reuse_keeps_the_bias_entries_of_the_nodes_it_keeps() -> None:
    from miai.go.state import GameState
    from miai.nets.evaluator import UniformEvaluator

    search = Search(UniformEvaluator(), SearchConfig(max_visits=200, max_time=0.0, seed=2))
    state = GameState(7)
    search.set_root(state)
    search.best_move(search.run())
    assert search._setup.bias_table
    move = max(search.root.edges, key=lambda e: e.visits).move  # type: ignore[union-attr]
    state.push(move)
    search.set_root(state)
    kept = {id(n.bias) for n in (search.root, *search.table) if n is not None and n.bias is not None}
    assert kept and kept == {id(e) for e in search._setup.bias_table.values()}


@pytest.mark.parametrize("rules, conservative, scored", [
    ("tromp-taylor", True, False),  # conservativePass: the root's game-ending pass is searched on
    ("tromp-taylor", False, True),  # without it, scored
    ("chinese", False, False),  # a friendly pass is searched on anywhere (shouldSuppressEndGameFromFriendlyPass)
    ("japanese", True, True),  # territory scoring: KataGo goes into its encore there; miai, without one, scores
])
def test_a_pass_answering_a_pass_at_the_root(rules: str, conservative: bool, scored: bool) -> None:
    from miai.go.rules import Rules
    from miai.go.state import GameState
    from miai.nets.evaluator import UniformEvaluator

    state = GameState(5, Rules.preset(rules), 0.5)
    state.push(12)
    state.push(-1)
    config = SearchConfig(max_visits=20, max_time=0.0, seed=1, conservative_pass=conservative)
    search = Search(UniformEvaluator(), config)
    search.set_root(state)
    search.run(allow=[-1])
    edge = search.root.edge_for(-1)  # type: ignore[union-attr]
    assert edge is not None and edge.child is not None and edge.child.terminal == scored


def test_wide_root_noise_spreads_the_root_visits() -> None:
    def top_share(noise: float) -> float:
        search = Search(ScriptedEvaluator(), SearchConfig(max_visits=200, max_time=0.0, seed=4, wide_root_noise=noise))
        search.set_root(ToyState(set_game(points=6, depth=3)))
        moves = search.run().moves
        return max(m.edge_visits for m in moves) / sum(m.edge_visits for m in moves)

    assert top_share(0.5) < top_share(0.0)
    search = Search(ScriptedEvaluator(), SearchConfig(seed=1))
    flattened = [search._selector.wide_root_noise(0.25, 0.0, 0.5) for _ in range(400)]
    assert all(p == pytest.approx(0.25 ** (1 / 3)) for p, _ in flattened)  # 1 / (4 * 0.5 + 1)
    bonuses = [u for _, u in flattened]
    assert 0.3 < sum(1 for u in bonuses if u > 0) / len(bonuses) < 0.7  # half the moves get a bonus
    assert min(bonuses) == 0.0
