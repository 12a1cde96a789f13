"""Measures shared by students and teachers (numpy only, no torch): agreement with the stored targets by game phase,
the teacher itself measured the same way (``miai train eval``), and a net's value against the teacher's on the
positions of played games (``miai train played``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from miai.go.coords import Color
from miai.go.sgf import SgfGame
from miai.go.state import GameState
from miai.nets.evaluator import Evaluator
from miai.nets.train.datagen import Teacher
from miai.nets.train.dataset import Batch, ShardSet

__all__ = ["PHASES", "PLAYED_PHASES", "one_board_size", "phase_metrics", "played_phases", "played_value_gaps",
           "teacher_holdout_metrics"]


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


# Moves played before the position on 9x9: after a match's 3-move opening .. endgame (``played_phases`` scales them).
PLAYED_PHASES = (4, 20, 40, 10_000)


def played_phases(size: int) -> tuple[int, ...]:
    """``PLAYED_PHASES`` for a board size: the middle bounds scaled by the board's area (9x9's 20 and 40 moves are
    89 and 178 on 19x19), the first (after the opening) and the open end kept.

    >>> played_phases(9), played_phases(19)
    ((4, 20, 40, 10000), (4, 89, 178, 10000))
    """
    scale = size * size / 81
    first, *middle, end = PLAYED_PHASES
    return (first, *(round(bound * scale) for bound in middle), end)


def one_board_size(games: Sequence[tuple[SgfGame, Color]]) -> int:
    """The board size all of ``games`` (at least one) are played on.

    Raises:
        ValueError: they are not all of one size (``played_value_gaps`` counts its phases per board area).
    """
    sizes = sorted({record.size for record, _ in games})
    if len(sizes) > 1:
        raise ValueError(f"games of {len(sizes)} board sizes ({', '.join(f'{s}x{s}' for s in sizes)}); "
                         "give one size's games at a time")
    return sizes[0]


def played_value_gaps(net: Evaluator, teacher: Evaluator,
                      games: Sequence[tuple[SgfGame, Color]]) -> dict[str, dict[str, dict[str, float]]]:
    """How far ``net``'s winrate is from the teacher's on the positions of played games, for the side ``net``
    played in each (``games``: a record and that side's colour), split by who played the last move and by moves
    played (``played_phases`` of the board size).

    For each group: positions, the mean signed gap (net minus teacher, from the net's side: above 0 the net thinks
    its side better off than the teacher does), the mean absolute gap, winrates in [0, 1], and the share of
    positions where the two name different winners (one winrate above one half, the other not). A search picks the
    moves its net's value likes best, so after its own moves a net that is wrong is wrong in its own favour; on
    the teacher's self-play the same net's errors have no such direction.

    Raises:
        ValueError: the games are not all of one board size.
    """
    states: list[GameState] = []
    sides: list[tuple[int, bool, bool]] = []  # moves played, last move the net's, the net's side to move
    phases = played_phases(one_board_size(games)) if games else PLAYED_PHASES
    for record, color in games:
        for played in range(phases[0], len(record.moves) + 1):
            state = record.to_state(played + 1)
            states.append(state)
            sides.append((played, record.moves[played - 1][0] == color, state.to_play == color))
    net_winrates, teacher_winrates = _winrates(net, states), _winrates(teacher, states)
    gaps = np.where([to_play for _, _, to_play in sides], 1.0, -1.0) * (net_winrates - teacher_winrates)
    other_winner = (net_winrates > 0.5) != (teacher_winrates > 0.5)
    played_counts = np.array([played for played, _, _ in sides])
    own_move = np.array([own for _, own, _ in sides], dtype=bool)
    groups: dict[str, dict[str, dict[str, float]]] = {}
    for name, chosen_side in (("after its own move", own_move), ("after the opponent's move", ~own_move)):
        groups[name] = {}
        for low, high in zip(phases, phases[1:]):
            chosen = chosen_side & (played_counts >= low) & (played_counts < high)
            if chosen.any():
                label = f"moves {low}-{high - 1}" if high < phases[-1] else f"moves {low}+"
                groups[name][label] = {"positions": int(chosen.sum()),
                                       "signed_gap": round(float(gaps[chosen].mean()), 4),
                                       "abs_gap": round(float(np.abs(gaps[chosen]).mean()), 4),
                                       "other_winner": round(float(other_winner[chosen].mean()), 4)}
    return groups


def _winrates(evaluator: Evaluator, states: Sequence[GameState]) -> np.ndarray:
    """Each position's winrate for the side to move (a no result counted half)."""
    values: list[float] = []
    for start in range(0, len(states), evaluator.max_batch):
        values += [e.win + e.no_result / 2.0 for e in evaluator.evaluate(states[start:start + evaluator.max_batch])]
    return np.array(values)
