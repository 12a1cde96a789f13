"""Leaf values and candidate moves: the utility formula, the score-uncertainty expectation, eye filtering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from miai.engine.config import SearchConfig
from miai.engine.core.leaves import PASS, Valuation, candidate_moves
from miai.engine.core.scorevalue import expected_score_value
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation


def test_utility_is_winloss_plus_the_two_atan_score_terms() -> None:
    valuation = Valuation(SearchConfig(), score_center=2.0)
    got = valuation.utility(0.5, 6.0, 9)
    expected = 0.5 + (2 / math.pi) * (0.1 * math.atan(6.0 / (2.0 * 9)) + 0.3 * math.atan(4.0 / (0.75 * 9)))
    # A sure score is read from KataGo's table too: linear between half units, within 1e-4 of the atan.
    assert got == pytest.approx(expected, abs=1e-4)


def test_score_uncertainty_is_integrated_against_a_normal_distribution() -> None:
    valuation = Valuation(SearchConfig(win_loss_utility_factor=0.0), score_center=0.0)
    rng = np.random.default_rng(0)
    samples = 10.0 + 8.0 * rng.standard_normal(20_000)
    monte_carlo = float(np.mean([(2 / math.pi) * (0.1 * math.atan(s / 38.0) + 0.3 * math.atan(s / 14.25))
                                 for s in samples]))
    assert valuation.utility(0.0, 10.0, 19, stdev=8.0) == pytest.approx(monte_carlo, abs=2e-3)
    # A sure lead is worth more than an uncertain one of the same mean (atan is concave for positive scores).
    assert valuation.utility(0.0, 10.0, 19) > valuation.utility(0.0, 10.0, 19, stdev=8.0)
    assert valuation.utility(0.0, 0.0, 19, stdev=8.0) == pytest.approx(0.0, abs=1e-12)  # symmetric


def _integral(mean: float, stdev: float, scale: float) -> float:
    """E[(2/pi) atan(S / scale)] for S ~ Normal(mean, stdev), by a fine Riemann sum."""
    x = np.linspace(-9.0, 9.0, 36_001)
    w = np.exp(-0.5 * x * x)
    return float((w * np.arctan((mean + stdev * x) / scale)).sum() / w.sum() * 2 / math.pi)


@pytest.mark.parametrize(("mean", "stdev", "scale"), [
    (-40.0, 35.0, 0.75), (30.0, 50.0, 0.75), (-3.0, 20.0, 0.75), (5.0, 10.0, 2.0), (2.3, 0.7, 2.0), (-20, 35, 2.0),
])
def test_expected_score_value_is_within_the_tables_accuracy_of_the_integral(mean: float, stdev: float,
                                                                            scale: float) -> None:
    # Wide score distributions against the dynamic scale are 19x19's everyday case; a 12-point Gauss-Hermite rule
    # was 0.02 off at (30, 50, 0.75) and 0.007 at (-40, 35, 0.75).
    assert expected_score_value(mean, stdev, 0.0, scale, 19) == pytest.approx(_integral(mean, stdev, scale * 19),
                                                                              abs=1e-4)


@pytest.mark.parametrize(("mean_units", "stdev_units"), [(2.5, 0), (-7.5, 3), (40.5, 12), (-0.5, 1)])
def test_expected_score_value_on_the_grid_is_katagos_entry(mean_units: float, stdev_units: int) -> None:
    # On the table's grid (means at half units, whole deviations; a unit is scale * sqrt(area) / 19 points) a
    # lookup is the entry itself: the mean of the value at mean + d * t for t = -5, -4.9, ..., 5, each weighted
    # exp(-t^2 / 2) (KataGo's nninputs.cpp, ScoreValue::initTables).
    t = [i / 10 for i in range(-50, 51)]
    weights = [math.exp(-0.5 * x * x) for x in t]
    entry = sum(w * math.atan((mean_units + stdev_units * x) / 19) for w, x in zip(weights, t)) / sum(weights)
    scale, side = 0.75, 9  # one unit = 0.75 * 9 / 19 points
    unit = scale * side / 19
    got = expected_score_value(mean_units * unit + 1.0, stdev_units * unit, 1.0, scale, side)
    assert got == pytest.approx(entry * 2 / math.pi, abs=1e-12)


def test_refreshed_values_follow_a_new_score_centre() -> None:
    old, new = Valuation(SearchConfig(), score_center=0.0), Valuation(SearchConfig(), score_center=6.0)
    evaluation = Evaluation(policy=np.ones(362, dtype=np.float32) / 362, win=0.7, loss=0.3, no_result=0.0, score_mean=4.0,
                            score_stdev=12.0, lead=3.5, ownership=None)
    own = old.evaluated(evaluation, 1, 19)
    again = new.refreshed(own, 19)
    assert again[1:5] == own[1:5]
    assert again[0] == pytest.approx(new.utility(own[1], 4.0, 19, stdev=12.0), abs=1e-12)
    assert again[0] < own[0] and again[5] == pytest.approx(again[0] ** 2)


def test_terminal_values_are_exact() -> None:
    valuation = Valuation(SearchConfig())
    utility, winloss, score, score_sq, lead, utility_sq = valuation.terminal(-3.5, 9)
    assert (winloss, score, score_sq, lead) == (-1.0, -3.5, 12.25, -3.5)
    assert utility == pytest.approx(valuation.utility(-1.0, -3.5, 9)) and utility_sq == pytest.approx(utility ** 2)
    assert valuation.terminal(0.0, 9)[1] == 0.0  # a draw


def _stones(colors: list[int]) -> GameState:
    """A 3x3 position with Black to play from colours in flat order (0 empty, 1 Black, 2 White)."""
    state = GameState(3)
    state.set_stones([m for m, c in enumerate(colors) if c == 1], [m for m, c in enumerate(colors) if c == 2])
    return state


def test_candidate_moves_drop_own_eyes_and_renormalise() -> None:
    # Black owns the top-left corner eye at 0 (neighbours 1 and 3 black, diagonal 4 black).
    state = _stones([0, 1, 0, 1, 1, 0, 0, 0, 0])
    policy = np.array([0.4, 0, 0.1, 0, 0, 0.2, 0.1, 0.1, 0.05, 0.05], dtype=np.float32)
    moves, priors = candidate_moves(policy, state, forbid_eye_filling=True)
    assert 0 not in moves.tolist() and PASS in moves.tolist()
    assert priors.sum() == pytest.approx(1.0)
    moves, _ = candidate_moves(policy, state, forbid_eye_filling=False)
    assert 0 in moves.tolist()


def test_the_only_board_move_is_kept_even_if_it_fills_an_eye() -> None:
    state = _stones([0, 1, 1, 1, 1, 1, 1, 1, 0])  # two eyes; the policy gives the second none
    policy = np.array([0.7, 0, 0, 0, 0, 0, 0, 0, 0, 0.3], dtype=np.float32)
    moves, _ = candidate_moves(policy, state, forbid_eye_filling=True)
    assert sorted(moves.tolist()) == [PASS, 0]


def test_evaluated_statistics_are_unconditional_on_a_result_as_in_katago() -> None:
    # The net's score spread assumes the game has a result; KataGo multiplies the mean and the mean square by
    # 1 - no_result (nneval.cpp). miai's decoder already did so for the mean (score_mean below is unconditional).
    survive = 0.9
    given_result_mean, stdev = 5.0, 12.0
    evaluation = Evaluation(policy=np.ones(82, dtype=np.float32) / 82, win=0.5, loss=0.4, no_result=1 - survive,
                            score_mean=given_result_mean * survive, score_stdev=stdev, lead=4.0, ownership=None)
    own = Valuation(SearchConfig()).evaluated(evaluation, 1, 9)
    assert own[2] == pytest.approx(4.5, rel=1e-6)
    assert own[3] == pytest.approx((given_result_mean ** 2 + stdev ** 2) * survive, rel=1e-6)
    spread = math.sqrt(own[3] - own[2] ** 2)  # what the utility integrates over: wider than 12 * sqrt(0.9) here
    assert own[0] == pytest.approx(Valuation(SearchConfig()).utility(0.1, 4.5, 9, spread), abs=1e-6)
