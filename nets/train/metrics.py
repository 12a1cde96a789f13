"""Held-out measures shared by students and teachers (numpy only, no torch): agreement with the stored targets by
game phase, and the teacher itself measured the same way (``miai train eval``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from miai.nets.train.datagen import Teacher
from miai.nets.train.dataset import Batch, ShardSet

__all__ = ["PHASES", "phase_metrics", "teacher_holdout_metrics"]


def teacher_holdout_metrics(teacher: Teacher, shards: ShardSet, count: int = 512) -> dict[int, dict[str, Any]]:
    """The teacher itself measured as ``holdout_metrics`` measures a student: its policy and value cross-entropy
    against the stored targets, ``top1``, ``teacher_prob`` and ``by_stones``. On raw targets this is the floor a
    student can reach; on search targets it says how far the search moved the targets from the raw net."""
    results: dict[int, dict[str, Any]] = {}
    for size in shards.counts():
        batch = shards.validation(size, count)
        if batch is None:
            continue
        policy_log, value_log = teacher.log_outputs(batch.spatial, batch.global_, batch.policy)
        top = policy_log.argmax(axis=1)
        rows = np.arange(len(top))
        results[size] = {
            "policy": round(float(-(batch.policy * np.where(batch.policy > 0, policy_log, 0.0)).sum(axis=1).mean()), 4),
            "value": round(float(-(batch.value * value_log).sum(axis=1).mean()), 4),
            "top1": round(float(np.mean(top == batch.policy.argmax(axis=1))), 4),
            "teacher_prob": round(float(np.mean(batch.policy[rows, top])), 4),
            "positions": len(top),
            "by_stones": phase_metrics(batch, policy_log, value_log),
        }
    return results


PHASES = (0.0, 0.125, 0.25, 0.5, 1.01)  # stones on the board as a share of its points: opening .. endgame


def phase_metrics(batch: Batch, policy_log: np.ndarray, value_log: np.ndarray) -> dict[str, dict[str, float]]:
    """A net (its log-probabilities of moves and of win, loss and no result: a student's, or the teacher's own)
    against the stored targets by the number of stones on the board (``PHASES``): positions, policy and value KL
    divergence (nats), top-1 agreement, and the mean gap between the two winrates. Held-out sets of early shards
    are mostly openings; this shows where in a game the net falls short."""
    stones = batch.spatial[:, 1:3].sum(axis=(1, 2, 3))  # planes 1 and 2: the stones of either side
    share = stones / (batch.size * batch.size)
    policy_kl = _kl(batch.policy.astype(np.float64), policy_log)
    value_kl = _kl(batch.value.astype(np.float64), value_log)
    student_value = np.exp(value_log)
    gap = np.abs((student_value[:, 0] - student_value[:, 1]) - (batch.value[:, 0] - batch.value[:, 1])) / 2.0
    agree = policy_log.argmax(axis=1) == batch.policy.argmax(axis=1)
    phases: dict[str, dict[str, float]] = {}
    for low, high in zip(PHASES, PHASES[1:]):
        chosen = (share >= low) & (share < high)
        if chosen.any():
            phases[f"{int(low * 100)}-{min(int(high * 100), 100)}%"] = {
                "positions": int(chosen.sum()), "policy_kl": round(float(policy_kl[chosen].mean()), 4),
                "top1": round(float(agree[chosen].mean()), 4), "value_kl": round(float(value_kl[chosen].mean()), 4),
                "winrate_gap": round(float(gap[chosen].mean()), 4)}
    return phases


def _kl(target: np.ndarray, log_probs: np.ndarray) -> np.ndarray:
    """KL(target || exp(log_probs)) per row; terms where the target is 0 count 0."""
    positive = target > 0
    logs = np.where(positive, np.log(np.where(positive, target, 1.0)) - log_probs, 0.0)
    result: np.ndarray = (target * logs).sum(axis=1)
    return result
