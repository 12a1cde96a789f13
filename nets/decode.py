"""Turning a KataGo net's raw outputs into probabilities and scores (KATAGO.md section 5).

The net answers from the side to move's view. Everything here is vectorised over a batch:
row ``i`` of every array belongs to position ``i``.

- Policy: ``logit = p + (p_opt - p) * optimism`` when the net has an optimistic channel, illegal
  points masked, softmax over the board points and pass.
- Value: softmax of the (win, loss, no result) logits; the no-result logit is dropped when the
  rules make a no-result impossible (a superko rule with area scoring).
- Score: mean, stdev, lead and time-variance with the model's post-process multipliers,
  softplus on the two spreads, and the mean and lead scaled by ``1 - no_result``.
- Ownership: ``tanh``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class PostProcess:
    """The multipliers KataGo applies to the raw score heads (model header, v13+; defaults before)."""

    score_mean: float = 20.0  # scoreMean = score_mean * s0
    score_stdev: float = 20.0  # scoreStdev = score_stdev * softplus(s1)
    lead: float = 20.0  # lead = lead * s2
    variance_time: float = 40.0  # varTimeLeft = variance_time * softplus(s3)
    shortterm_value_error: float = 0.25  # v10+: shorttermWinlossError from s4 (``shortterm_errors``)
    shortterm_score_error: float = 30.0  # v10+: shorttermScoreError from s5

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"post-process multiplier {name} must be positive, got {value}")

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> PostProcess:
        """Read the multipliers from ONNX metadata; missing keys keep KataGo's defaults.

        Accepts the converter's keys (``score_mean_multiplier``, ...) and KataGo's header names
        (``scoreMeanMultiplier``, ...).
        """
        values: dict[str, float] = {}
        for field in cls.__dataclass_fields__:
            camel = _camel(field) + "Multiplier"
            for key in (f"{field}_multiplier", camel):
                if key in metadata:
                    values[field] = float(metadata[key])
                    break
        return cls(**values)


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True)
class DecodedBatch:
    """Decoded outputs for a batch, side to move's view. ``N`` rows, ``A = size*size`` points."""

    policy: np.ndarray  # float32 [N, A+1], 0 on illegal moves, rows sum to 1
    win: np.ndarray  # float64 [N]
    loss: np.ndarray
    no_result: np.ndarray
    score_mean: np.ndarray
    score_stdev: np.ndarray
    lead: np.ndarray
    var_time_left: np.ndarray  # -1 when the net has no such head
    shortterm_winloss_error: np.ndarray  # -1 when the net has no such head
    shortterm_score_error: np.ndarray  # -1 when the net has no such head
    ownership: np.ndarray | None  # float32 [N, A], +1 = side to move


def softplus(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """log(1 + exp(x)), computed without overflow."""
    return np.logaddexp(0.0, x)


def combine_policy(logits: NDArray[np.floating], optimism: float) -> NDArray[np.float64]:
    """Pick or blend the policy channels of ``logits`` [N, P, A+1] into [N, A+1].

    Channel 0 is the normal policy, channel 1 (when present) the optimistic one. A net without an
    optimistic channel ignores ``optimism``, as KataGo does.
    """
    logits64 = np.asarray(logits, dtype=np.float64)
    if logits64.ndim == 2:
        return logits64
    normal = logits64[:, 0, :]
    if optimism == 0.0 or logits64.shape[1] < 2:
        return normal
    return normal + (logits64[:, 1, :] - normal) * optimism


def masked_softmax(logits: NDArray[np.float64], legal: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Softmax over the legal entries of each row; illegal entries get exactly 0.

    A row with no legal entry (never in Go, where pass is always legal) raises ``ValueError``.
    """
    if not legal.any(axis=-1).all():
        raise ValueError("a position has no legal move (pass should always be legal)")
    masked = np.where(legal, logits, -np.inf)
    masked = masked - masked.max(axis=-1, keepdims=True)
    exp = np.exp(masked)
    probabilities: NDArray[np.float64] = exp / exp.sum(axis=-1, keepdims=True)
    return probabilities


PASS_PRIOR_CAP = 0.95


def cap_pass_prior(policy: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows whose pass (last entry) has more than ``PASS_PRIOR_CAP`` of the mass get exactly that, the other moves
    sharing the rest in their proportions: KataGo's enablePassingHacks ("cap passing prior policy at 95% (19x
    other moves)", nneval.cpp), so that a search always looks at the moves besides pass. A row where pass is the
    only move with any mass keeps it whole."""
    others = policy[:, :-1].sum(axis=-1)
    capped = (policy[:, -1] > PASS_PRIOR_CAP) & (others > 0.0)
    if not capped.any():
        return policy
    policy = policy.copy()
    policy[capped, :-1] *= ((1.0 - PASS_PRIOR_CAP) / others[capped])[:, None]
    policy[capped, -1] = PASS_PRIOR_CAP
    return policy


def shortterm_errors(misc: NDArray[np.float64], post: PostProcess,
                     model_version: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The predicted short-term win/loss and score errors (misc heads 4 and 5) as KataGo reads them (nneval.cpp):
    from model version 14 on ``sqrt(m) * softplus(s / 2)``; versions 10-13 ``sqrt(m * softplus(s))``; version 9
    ``softplus(s)`` and ``10 * softplus(s)``. -1 (no such output) before version 9, where KataGo's
    ``supportsShorttermError`` is false, or when the heads are missing."""
    n = misc.shape[0]
    if model_version < 9 or misc.shape[1] <= 5:
        return np.full(n, -1.0), np.full(n, -1.0)
    wl, score = misc[:, 4], misc[:, 5]
    if model_version >= 14:
        return (softplus(wl * 0.5) * math.sqrt(post.shortterm_value_error),
                softplus(score * 0.5) * math.sqrt(post.shortterm_score_error))
    if model_version >= 10:
        return np.sqrt(softplus(wl) * post.shortterm_value_error), np.sqrt(softplus(score) * post.shortterm_score_error)
    return softplus(wl), softplus(score) * 10.0


def decode_value(value_logits: NDArray[np.floating], allow_no_result: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Softmax of [N, 3] (win, loss, no result) logits; rows where ``allow_no_result`` is False
    get a no-result probability of exactly 0. Returns float64 [N, 3]."""
    logits = np.asarray(value_logits, dtype=np.float64)[:, :3].copy()
    logits[~np.asarray(allow_no_result, dtype=bool), 2] = -np.inf
    logits -= logits.max(axis=-1, keepdims=True)
    exp = np.exp(logits)
    probabilities: NDArray[np.float64] = exp / exp.sum(axis=-1, keepdims=True)
    return probabilities


def decode_batch(
    policy_logits: np.ndarray,
    value_logits: np.ndarray,
    misc: np.ndarray,
    ownership_raw: np.ndarray | None,
    legal: np.ndarray,
    allow_no_result: np.ndarray,
    post: PostProcess,
    optimism: float = 0.0,
    cap_pass: bool = False,
    model_version: int = 0,
) -> DecodedBatch:
    """Decode one batch of raw outputs already cut to the board and brought back to its frame.

    Args:
        policy_logits: [N, P, A+1] (or [N, A+1]) raw policy logits, pass last.
        value_logits: [N, 3] raw (win, loss, no result) logits.
        misc: [N, K] raw score heads (0 mean, 1 stdev, 2 lead, 3 var-time, 4/5 short-term errors).
        ownership_raw: [N, A] pre-tanh ownership, or None.
        legal: bool [N, A+1] legal moves of the side to move (pass last).
        allow_no_result: bool [N], False where the rules rule out a no-result.
        post: the model's post-process multipliers.
        optimism: policy optimism (0 = normal policy, 1 = optimistic channel).
        cap_pass: KataGo's passing hack: the pass prior is at most ``PASS_PRIOR_CAP``.
        model_version: the net's KataGo model version, which decides how the short-term error heads read.
    """
    policy = masked_softmax(combine_policy(policy_logits, optimism), legal)
    if cap_pass:
        policy = cap_pass_prior(policy)
    policy = policy.astype(np.float32)
    wlr = decode_value(value_logits, allow_no_result)
    misc = np.asarray(misc, dtype=np.float64)
    no_result = wlr[:, 2]
    survive = 1.0 - no_result  # score heads are conditional on the game having a result

    def head(index: int, scale: float, spread: bool) -> np.ndarray:
        if misc.shape[1] <= index:
            return np.full(misc.shape[0], -1.0)
        raw = misc[:, index]
        return scale * (softplus(raw) if spread else raw)

    shortterm = shortterm_errors(misc, post, model_version)
    ownership = None
    if ownership_raw is not None:
        ownership = np.tanh(np.asarray(ownership_raw, dtype=np.float64)).astype(np.float32)
    return DecodedBatch(
        policy=policy,
        win=wlr[:, 0],
        loss=wlr[:, 1],
        no_result=no_result,
        score_mean=head(0, post.score_mean, False) * survive,
        score_stdev=head(1, post.score_stdev, True),
        lead=head(2, post.lead, False) * survive,
        var_time_left=head(3, post.variance_time, True),
        shortterm_winloss_error=shortterm[0],
        shortterm_score_error=shortterm[1],
        ownership=ownership,
    )
