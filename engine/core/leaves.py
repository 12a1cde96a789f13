"""What a leaf of the search becomes: its candidate moves (policy minus own true eyes) and its value.

Values are ``miai.engine.core.graph.Stats``, from White's view. The utility combines the
win/loss value with KataGo-style static and dynamic score terms (docs/search.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from miai.engine.core.config import SearchConfig
from miai.engine.core.graph import Stats
from miai.engine.core.scorevalue import expected_score_value
from miai.engine.core.searchstate import ShowsEyes
from miai.go.coords import PASS

if TYPE_CHECKING:
    from miai.engine.core.searchstate import SearchState
    from miai.nets.protocol import Evaluation

__all__ = ["candidate_moves", "Valuation", "PASS"]

_TWO_OVER_PI = 2.0 / math.pi


def _single(x: float) -> float:
    """``x`` rounded to single precision, as KataGo's NNOutput holds it."""
    return float(np.float32(x))


def _without_own_eyes(policy: np.ndarray, state: ShowsEyes) -> np.ndarray:
    eyes = state.own_eyes(int(state.to_play))
    if not eyes or not (policy[eyes] > 0).any():
        return policy
    trimmed = policy.copy()
    trimmed[eyes] = 0.0
    if not (trimmed[:-1] > 0).any():
        return policy  # filling an eye is the only move besides pass: keep it
    return trimmed


def candidate_moves(policy: np.ndarray, state: SearchState, forbid_eye_filling: bool) -> tuple[np.ndarray, np.ndarray]:
    """The moves with a positive prior (pass as PASS) and their renormalised priors; own true eyes are dropped
    when ``forbid_eye_filling`` (and the state can list them). With no move at all, pass alone."""
    size = state.size
    policy = np.asarray(policy, dtype=np.float32)
    if forbid_eye_filling and isinstance(state, ShowsEyes):
        policy = _without_own_eyes(policy, state)
    index = np.flatnonzero(policy > 0)
    if len(index) == 0:
        return np.array([PASS], dtype=np.int16), np.array([1.0], dtype=np.float32)
    priors = policy[index]
    priors /= float(priors.sum())
    moves = index.astype(np.int16)  # node.set_moves keeps int16 (a 25x25 board has 625 points)
    if index[-1] == size * size:  # pass is the policy's last entry
        moves[-1] = PASS
    return moves, priors


class Valuation:
    """Utility of evaluations and final scores under one config and one dynamic score centre (White's view)."""

    def __init__(self, config: SearchConfig, score_center: float = 0.0) -> None:
        self.config = config
        self.score_center = score_center

    def utility(self, winloss: float, score: float, size: int, stdev: float = 0.0) -> float:
        """``win_loss_factor * winloss`` plus the static and dynamic atan score terms (scales times sqrt(area)),
        each the expectation over a normal score distribution of mean ``score`` and deviation ``stdev``, read from
        KataGo's table (``miai.engine.core.scorevalue``: an uncertain lead is worth less than a sure one of the same
        mean, and every utility is KataGo's to the last digits)."""
        cfg = self.config
        static = expected_score_value(score, stdev, 0.0, cfg.static_score_scale, size)
        dynamic = expected_score_value(score, stdev, self.score_center, cfg.dynamic_score_center_scale, size)
        return (cfg.win_loss_utility_factor * winloss + cfg.static_score_utility_factor * static
                + cfg.dynamic_score_utility_factor * dynamic)

    def score_utility_diff(self, mean: float, mean_sq: float, delta: float, size: int) -> float:
        """How much the score part of the utility (White's view) changes when a score of mean ``mean`` and mean
        square ``mean_sq`` moves by ``delta`` points for White, its spread kept (KataGo's getScoreUtilityDiff)."""
        cfg = self.config
        variance = mean_sq - mean * mean
        stdev = math.sqrt(variance) if variance > 0.0 else 0.0
        static = (expected_score_value(mean + delta, stdev, 0.0, cfg.static_score_scale, size)
                  - expected_score_value(mean, stdev, 0.0, cfg.static_score_scale, size))
        dynamic = (expected_score_value(mean + delta, stdev, self.score_center, cfg.dynamic_score_center_scale, size)
                   - expected_score_value(mean, stdev, self.score_center, cfg.dynamic_score_center_scale, size))
        return cfg.static_score_utility_factor * static + cfg.dynamic_score_utility_factor * dynamic

    def refreshed(self, own: Stats, size: int) -> Stats:
        """``own`` (a node's own statistics, as :meth:`evaluated` or :meth:`terminal` made them) with its utility
        worked out again under this valuation's score centre: what KataGo does to every node of a reused tree
        when a new search moves the centre (search.cpp, ``recursivelyRecomputeStats``)."""
        winloss, score, score_sq = own.winloss, own.score_mean, own.score_sq
        variance = score_sq - score * score
        utility = self.utility(winloss, score, size, math.sqrt(variance) if variance > 0.0 else 0.0)
        return Stats(utility, winloss, score, score_sq, own.lead, utility * utility)

    def terminal(self, score: float, size: int) -> Stats:
        """Exact value of a finished game from its final score (White's view): win/loss +-1, 0 for a draw."""
        winloss = 1.0 if score > 0 else -1.0 if score < 0 else 0.0
        utility = self.utility(winloss, score, size)
        return Stats(utility, winloss, score, score * score, score, utility * utility)

    def evaluated(self, evaluation: Evaluation, sign: int, size: int) -> Stats:
        """A net evaluation (side to move's view) as node statistics in White's view; ``sign`` +1 if White moves.

        As in KataGo (nneval.cpp), the statistics are unconditional: the net's score spread assumes the game has
        a result, so the mean square is ``(mean_given_result^2 + stdev^2) * (1 - no_result)``, and values pass
        through single precision as KataGo's NNOutput stores them (the spread is a difference of large squares)."""
        win, loss = _single(float(evaluation.win)), _single(float(evaluation.loss))
        winloss = sign * (win - loss)
        survive = 1.0 - float(evaluation.no_result)
        mean = float(evaluation.score_mean)  # already unconditional (times survive)
        stdev = float(evaluation.score_stdev)  # given a result
        mean_sq = mean * mean / survive + stdev * stdev * survive if survive > 0.0 else mean * mean
        stats = Stats(0.0, winloss, sign * _single(mean), _single(mean_sq), sign * _single(float(evaluation.lead)), 0.0)
        return self.refreshed(stats, size)  # the utility from those statistics

    def weight(self, evaluation: Evaluation, white_score: float, size: int) -> float:
        """How much one net evaluation counts in the averages (KataGo's computeWeightFromNNOutput): 1, or with
        ``use_uncertainty`` and a net that predicts its short-term errors (model version 9 and later),
        ``coeff / (uncertainty ** exponent + coeff / max_weight)``, where the uncertainty is the predicted
        win/loss error plus the score error times the score utility's slope at ``white_score``."""
        cfg = self.config
        wl_error = float(evaluation.shortterm_winloss_error)
        score_error = float(evaluation.shortterm_score_error)
        if not cfg.use_uncertainty or wl_error < 0.0 or score_error < 0.0:
            return 1.0
        uncertainty = cfg.win_loss_utility_factor * wl_error + self.score_slope(white_score, size) * score_error
        powered = uncertainty ** cfg.uncertainty_exponent if cfg.uncertainty_exponent != 1.0 else uncertainty
        return cfg.uncertainty_coeff / (powered + cfg.uncertainty_coeff / cfg.uncertainty_max_weight)

    def score_slope(self, white_score: float, size: int) -> float:
        """d(score utility)/d(score) at ``white_score``, ignoring the score's spread (KataGo's
        getApproxScoreUtilityDerivative)."""
        cfg = self.config
        static = cfg.static_score_scale * size
        dynamic = cfg.dynamic_score_center_scale * size
        offset = white_score - self.score_center
        return _TWO_OVER_PI * (cfg.static_score_utility_factor * static / (static * static + white_score ** 2)
                               + cfg.dynamic_score_utility_factor * dynamic / (dynamic * dynamic + offset ** 2))
