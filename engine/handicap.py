"""KataGo's dynamic playout doubling advantage: how its GTP engine plays handicap games (cpp/command/gtp.cpp,
``updateDynamicPDAHelper``, ``initialBlackAdvantage``).

A net trained with a "playout doubling advantage" input (KataGo's nets from g170 on) can be told that one side
searches with 2^PDA times the playouts of the other. In a handicap game the stronger side, asked to believe it
out-searches the opponent, plays for the win instead of the honest move that loses slowly. KataGo's GTP engine gives
the side that starts behind (by handicap stones or by komi) such an advantage for ``genmove``, scaled by how far
behind it starts and adjusted move by move to keep its winrate between about 5% and 25%; analysis stays without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from miai.engine.core.scorevalue import round_half_away
from miai.go.coords import PASS, Color
from miai.go.rules import Scoring
from miai.go.state import GameState

# KataGo: "hard cap of 2.75 in this parameter, since more extreme values start to reach into values without good
# training", and steps of 1/8 ("power of 2 to avoid any rounding issues").
PDA_HARD_CAP = 2.75
PDA_STEP = 0.125


def handicap_stones(state: GameState) -> int:
    """KataGo's ``computeNumHandicapStones`` with ``assumeMultipleStartingBlackMovesAreHandicap``: the black stones
    of the starting position plus the black moves that open the game before White's first move (isolated White
    passes between them allowed); 0 when the start has white stones, or when that makes at most one stone."""
    colors, _ = state.setup
    if any(c == int(Color.WHITE) for c in colors):
        return 0
    moves = list(state.moves)
    black_turns = 0
    for i, (color, move) in enumerate(moves):
        if int(color) != int(Color.BLACK):
            if i + 1 < len(moves) and int(moves[i + 1][0]) != int(Color.BLACK):
                black_turns = 0  # two White moves in a row: a problem being set up, not a handicap
                break
            if move == PASS:
                continue
            break
        if move != PASS:
            black_turns += 1
    advantage = sum(1 for c in colors if c == int(Color.BLACK)) + black_turns
    return advantage if advantage > 1 else 0


def initial_black_advantage(state: GameState) -> float:
    """Points Black starts ahead by (``initialBlackAdvantage``): 7 minus komi, plus 15 a handicap stone after the
    first (14 under territory scoring) minus White's handicap bonus."""
    stones = handicap_stones(state)
    if stones <= 1:
        return 7.0 - state.komi
    stone_value = 15.0 if state.rules.scoring == Scoring.AREA else 14.0
    return stone_value * (stones - 1) + 7.0 - state.komi - state.rules.handicap_bonus(stones)


def board_size_scaling(size: int) -> float:
    """``getBoardSizeScaling``: a point counts for more on a small board."""
    return float((19.0 * 19.0 / (size * size)) ** 0.75)


def handicap_threshold(size: int) -> float:
    """``getPointsThresholdForHandicapGame``: the start is a handicap game from this many points on."""
    return max(4.0 / board_size_scaling(size), 2.0)


def dynamic_pda_for_white(state: GameState, cap_per_opp_lead: float, recent_white_values: Sequence[float],
                          previous_for_white: float) -> float:
    """The playout doubling advantage KataGo's ``genmove`` gives White now (negative: Black has it).

    ``recent_white_values`` are the root win-loss values (White's view, -1..1) of this game's earlier ``genmove``
    searches, latest last; ``previous_for_white`` the value this returned last time in this game.
    """
    if cap_per_opp_lead <= 0.0 or state.size <= 7:
        return 0.0
    black_ahead = initial_black_advantage(state)
    behind = Color.WHITE if black_ahead >= 0 else Color.BLACK
    points = abs(black_ahead)
    if points < handicap_threshold(state.size):
        return 0.0
    scaling = board_size_scaling(state.size)
    cap = min(PDA_HARD_CAP, cap_per_opp_lead * (points - handicap_threshold(state.size)) * scaling)
    cap = round_half_away(cap / PDA_STEP) * PDA_STEP
    sign = 1.0 if behind == Color.WHITE else -1.0
    if not recent_white_values or not (np.asarray(state.stones()) == int(Color.WHITE)).any():
        desired = cap  # a new game or a newly set position: just the cap
    else:
        desired = sign * previous_for_white
        value = sign * recent_white_values[-1]  # the side behind's view
        if value < -0.9:  # keep its winrate between about 5% and 25%
            desired += PDA_STEP
        elif value > -0.5:
            desired -= PDA_STEP
        desired = min(max(desired, 0.0), cap)
    return sign * desired

