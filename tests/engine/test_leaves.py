"""Leaf values and candidate moves: the utility formula, the score-uncertainty expectation, eye filtering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from miai.engine.config import SearchConfig
from miai.engine.leaves import PASS, Valuation, candidate_moves


def test_utility_is_winloss_plus_the_two_atan_score_terms() -> None:
    valuation = Valuation(SearchConfig(), score_center=2.0)
    got = valuation.utility(0.5, 6.0, 9)
    expected = 0.5 + (2 / math.pi) * (0.1 * math.atan(6.0 / (2.0 * 9)) + 0.3 * math.atan(4.0 / (0.75 * 9)))
    assert got == pytest.approx(expected)


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


def test_terminal_values_are_exact() -> None:
    valuation = Valuation(SearchConfig())
    utility, winloss, score, score_sq, lead, utility_sq = valuation.terminal(-3.5, 9)
    assert (winloss, score, score_sq, lead) == (-1.0, -3.5, 12.25, -3.5)
    assert utility == pytest.approx(valuation.utility(-1.0, -3.5, 9)) and utility_sq == pytest.approx(utility ** 2)
    assert valuation.terminal(0.0, 9)[1] == 0.0  # a draw


class _Stones:
    size = 3
    to_play = 1

    def __init__(self, stones: list[int]) -> None:
        self._stones = np.array(stones, dtype=np.int8)

    def stones(self) -> np.ndarray:
        return self._stones


def test_candidate_moves_drop_own_eyes_and_renormalise() -> None:
    # Black owns the top-left corner eye at 0 (neighbours 1 and 3 black, diagonal 4 black).
    state = _Stones([0, 1, 0, 1, 1, 0, 0, 0, 0])
    policy = np.array([0.4, 0, 0.1, 0, 0, 0.2, 0.1, 0.1, 0.05, 0.05], dtype=np.float32)
    moves, priors = candidate_moves(policy, state, forbid_eye_filling=True)
    assert 0 not in moves.tolist() and PASS in moves.tolist()
    assert priors.sum() == pytest.approx(1.0)
    moves, _ = candidate_moves(policy, state, forbid_eye_filling=False)
    assert 0 in moves.tolist()


def test_the_only_board_move_is_kept_even_if_it_fills_an_eye() -> None:
    state = _Stones([0, 1, 2, 1, 1, 2, 2, 2, 2])
    policy = np.array([0.7, 0, 0, 0, 0, 0, 0, 0, 0, 0.3], dtype=np.float32)
    moves, _ = candidate_moves(policy, state, forbid_eye_filling=True)
    assert sorted(moves.tolist()) == [PASS, 0]
