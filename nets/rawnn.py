"""The raw net outputs behind GTP ``kata-raw-nn SYMMETRY [OPTIMISM]``, in KataGo's format.

``raw_nn`` evaluates one position under one symmetry (or all eight, one block each) and returns
the numbers from **White's** view, as KataGo prints them; ``format_raw_nn`` renders them exactly
as KataGo 1.17 does: a ``symmetry N`` line, the value and score lines, the policy grid (top row
first, ``NAN`` on illegal points), ``policyPass``, and the ``whiteOwnership`` grid, with blocks
separated by a blank line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from miai.go.coords import Color
from miai.nets.evaluator import Evaluation, OnnxEvaluator, legal_mask
from miai.nets.symmetry import NUM_SYMMETRIES, check_symmetry

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition


def parse_symmetry(text: str) -> list[int]:
    """The symmetries a ``kata-raw-nn`` argument asks for: ``all`` or a number 0..7.

    Raises:
        ValueError: for anything else.
    """
    if text.strip().lower() == "all":
        return list(range(NUM_SYMMETRIES))
    try:
        return [check_symmetry(int(text))]
    except ValueError:
        raise ValueError(f"symmetry must be 0..7 or all, got {text!r}") from None


def white_view(state: NetPosition, evaluation: Evaluation, symmetry: int) -> dict[str, Any]:
    """KataGo's kata-raw-nn fields (White's view) for one evaluation of ``state``.

    Keys follow the reference files of KataGo's outputs (tests/nets/reference/*.jsonl): ``symmetry``,
    ``white_win``, ``white_loss``, ``no_result``, ``white_lead``, ``white_score_selfplay``, ``white_score_selfplay_sq``,
    ``var_time_left``, ``shortterm_winloss_error``, ``shortterm_score_error``, ``policy``
    (``size*size`` floats, NaN on illegal points), ``policy_pass``, ``white_ownership``.
    """
    area = state.size * state.size
    black_to_move = Color(state.to_play) == Color.BLACK
    sign = -1.0 if black_to_move else 1.0
    win, loss = (evaluation.loss, evaluation.win) if black_to_move else (evaluation.win, evaluation.loss)
    legal = legal_mask(state)
    policy = np.where(legal, evaluation.policy.astype(np.float64), np.nan)
    ownership = evaluation.ownership
    white_ownership = None if ownership is None else (sign * ownership.astype(np.float64)).tolist()
    score = sign * evaluation.score_mean
    return {
        "symmetry": symmetry,
        "white_win": win,
        "white_loss": loss,
        "no_result": evaluation.no_result,
        "white_lead": sign * evaluation.lead,
        "white_score_selfplay": score,
        "white_score_selfplay_sq": score * score + evaluation.score_stdev**2,
        "var_time_left": evaluation.var_time_left,
        "shortterm_winloss_error": evaluation.shortterm_winloss_error,
        "shortterm_score_error": evaluation.shortterm_score_error,
        "policy": policy[:area].tolist(),
        "policy_pass": float(policy[area]),
        "white_ownership": white_ownership,
    }


def raw_nn(
    evaluator: OnnxEvaluator, state: NetPosition, symmetries: Sequence[int], optimism: float = 0.0
) -> list[dict[str, Any]]:
    """Evaluate ``state`` once per symmetry (no averaging, no cache) and return the white-view
    dicts of ``white_view``, in the order given."""
    for sym in symmetries:
        check_symmetry(sym)
    evaluations = evaluator.evaluate_with([state] * len(symmetries), [[s] for s in symmetries], optimism)
    return [white_view(state, ev, sym) for ev, sym in zip(evaluations, symmetries)]


def _cell(value: float, fmt: str, nan: str) -> str:
    return nan if value is None or math.isnan(value) else fmt % value


def _grid(values: Sequence[float], size: int, fmt: str, nan: str) -> list[str]:
    return [
        "".join(_cell(values[y * size + x], fmt, nan) + " " for x in range(size)) for y in range(size)
    ]


def format_block(result: dict[str, Any], size: int) -> str:
    """One symmetry's block of kata-raw-nn output (no trailing blank line)."""
    lines = [
        f"symmetry {result['symmetry']}",
        f"whiteWin {result['white_win']:.6f}",
        f"whiteLoss {result['white_loss']:.6f}",
        f"noResult {result['no_result']:.6f}",
        f"whiteLead {result['white_lead']:.3f}",
        f"whiteScoreSelfplay {result['white_score_selfplay']:.3f}",
        f"whiteScoreSelfplaySq {result['white_score_selfplay_sq']:.3f}",
        f"varTimeLeft {result['var_time_left']:.3f}",
        f"shorttermWinlossError {result['shortterm_winloss_error']:.3f}",
        f"shorttermScoreError {result['shortterm_score_error']:.3f}",
        "policy",
        *_grid(result["policy"], size, "%8.6f", "    NAN"),
        "policyPass " + _cell(result["policy_pass"], "%8.6f", "    NAN") + " ",
        "whiteOwnership",
    ]
    ownership = result["white_ownership"] or [0.0] * (size * size)
    lines += _grid(ownership, size, "%9.7f", "NAN")
    return "\n".join(lines)


def format_raw_nn(results: Sequence[dict[str, Any]], size: int) -> str:
    """The whole kata-raw-nn response body: blocks separated by blank lines, trimmed like
    KataGo's (no leading or trailing whitespace)."""
    return "\n\n".join(format_block(r, size) for r in results).strip()
