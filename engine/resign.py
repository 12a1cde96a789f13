"""When the engine resigns: KataGo's GTP rule (``shouldResign``, cpp/command/gtp.cpp).

The engine resigns when the root value of each of its last few ``genmove`` searches in this game says it is lost
(below ``player.resign_threshold`` as a winrate), unless the game is too young, too close on the score, or a
handicap game that White is still expected to catch up in. The values are those the search's root averaged (not
the pruned figures an analysis reports), as KataGo's genmove reads them.
"""

from __future__ import annotations

from collections.abc import Sequence

from miai.engine.config import PlayerConfig
from miai.engine.handicap import initial_black_advantage
from miai.go.coords import Color
from miai.go.state import GameState

# KataGo: a handicap game is one where Black starts ahead by more than this many points.
_HANDICAP_POINTS = 0.9
# KataGo's buffers before White resigns a handicap game: always 5 points, and 15% of Black's starting advantage.
_HANDICAP_BUFFER_POINTS = 5.0
_HANDICAP_BUFFER_SHARE = 0.15
# KataGo expects White to catch up over this share of the board's points in moves.
_CATCH_UP_SHARE = 0.60


def should_resign(state: GameState, white_values: Sequence[float], white_lead: float, config: PlayerConfig) -> bool:
    """Resign at ``state`` (for its side to move)?

    ``white_values``: the root win-loss values (-1..1, White's view, latest last) of this game's genmove searches,
    this one included; ``white_lead``: this search's root score lead, White's view.
    """
    if config.resign_threshold <= 0.0:
        return False
    white = state.to_play == Color.WHITE
    area = state.size * state.size
    played = len(state.moves)
    first_turn, white_floor = 0, float(area)
    advantage = initial_black_advantage(state)
    if white and advantage > _HANDICAP_POINTS:
        first_turn, white_floor = _handicap_schedule(advantage, area, played)
    first_turn = max(first_turn, int(config.resign_min_moves_per_board_area * area))
    if played < first_turn or (white and white_lead > white_floor):
        return False
    streak = config.resign_consecutive
    if streak > len(white_values):
        return False
    own_lead = white_lead if white else -white_lead
    margin = config.resign_min_score_difference
    if margin > 0.0 and own_lead > -margin:  # too close to give up on the count
        return False
    threshold = 2.0 * config.resign_threshold - 1.0  # the winrate as a win-loss value: 0.05 -> -0.90
    own_values = [v if white else -v for v in white_values[-streak:]]
    return all(v < threshold for v in own_values)


def _handicap_schedule(advantage: float, area: int, played: int) -> tuple[int, float]:
    """White in a handicap game: the first turn it may resign on, and the lead it must be below to resign, which
    starts at Black's whole advantage and shrinks linearly to nothing by move 0.6 x area, less the buffers."""
    first_turn = 1 + area // 5
    to_catch_up = max(1.0, _CATCH_UP_SHARE * area - first_turn)
    spent = min(max(0.0, float(played - first_turn)), to_catch_up)
    floor = -advantage * (to_catch_up - spent) / to_catch_up
    return first_turn, floor - _HANDICAP_BUFFER_POINTS - advantage * _HANDICAP_BUFFER_SHARE
