"""How long to think: the budget of one move under a game clock (absolute, byo-yomi, Canadian, Fischer).

The clock itself (what the controller set, the time left) is :class:`miai.go.clock.Clock`; :func:`budget` answers
"how many seconds may this move take?". Every budget keeps ``lag_buffer`` seconds in reserve
(``player.lag_buffer``) so that network and GUI lag cannot make the engine lose on time; in overtime the reserve
shrinks for short periods (at most 20% of a move's share of the period), since a 1-second byo-yomi period with a
1-second reserve would leave no time to think.
"""

from __future__ import annotations

import math

from miai.go.clock import Clock, TimeSystem

__all__ = ["budget", "expected_moves_left", "overtime_lag"]

# Never spend more than this share of the time that is left on one move of the main time.
_MAX_SHARE_OF_MAIN = 0.5
# Smallest budget, in seconds, when almost nothing is left: still enough to pick a sensible move.
_MIN_BUDGET = 0.05
# In overtime the lag reserve is at most this share of the time one move may use: a short period cannot afford the
# full lag_buffer, and the controller that chose 1-second periods accepts that its lag must be small.
_LAG_SHARE_OF_PERIOD = 0.2


def expected_moves_left(board_size: int, move_number: int) -> float:
    """A conservative estimate of how many more moves *this player* makes: games last about 0.7 x points plies,
    and there is always a tail of at least 8% of the board's points (endgames run long)."""
    area = board_size * board_size
    plies_left = max(0.7 * area - move_number, 0.16 * area)
    return max(plies_left / 2.0, 4.0)


def overtime_lag(lag_buffer: float, per_move: float) -> float:
    """The lag reserve of one overtime move that may use ``per_move`` seconds: ``lag_buffer``, but at most 20% of
    ``per_move`` (a 1 s byo-yomi period keeps 0.2 s, a 10 s one keeps 2 s).

    >>> overtime_lag(1.0, 1.0), overtime_lag(1.0, 30.0)
    (0.2, 1.0)
    """
    return min(lag_buffer, _LAG_SHARE_OF_PERIOD * max(0.0, per_move))


def budget(clock: Clock, board_size: int, move_number: int, lag_buffer: float) -> float:
    """Seconds the next move on ``clock`` may take (``math.inf`` when untimed); always leaves ``lag_buffer`` in
    reserve, and never exceeds a fischer-capped ``max_time_per_move``."""
    control = clock.control
    if not control.limited:
        return math.inf
    seconds = _budget(clock, board_size, move_number, lag_buffer)
    if control.max_time_per_move >= 0:
        seconds = min(seconds, max(_MIN_BUDGET, control.max_time_per_move - lag_buffer))
    return seconds


def _budget(clock: Clock, board_size: int, move_number: int, lag_buffer: float) -> float:
    control = clock.control
    moves = expected_moves_left(board_size, move_number)
    if clock.in_overtime:
        return _overtime_budget(clock, lag_buffer)
    safe_main = max(0.0, clock.main_left - lag_buffer)
    # Reserve the lag margin for every move still expected (at least a quarter of the board's points: games
    # outlive estimates), then share the rest out evenly.
    reserve = lag_buffer * max(moves, 0.25 * board_size * board_size)
    target = max(0.0, clock.main_left - reserve) / moves
    if control.fischer:
        target += 0.8 * control.increment
        cap = max(0.0, clock.main_left + control.increment - lag_buffer) * _MAX_SHARE_OF_MAIN
        return max(_MIN_BUDGET, min(target, cap))
    if control.system is TimeSystem.ABSOLUTE:
        return max(_MIN_BUDGET, min(target, safe_main * _MAX_SHARE_OF_MAIN))
    # Main time with overtime behind it: the overtime is a safety net, so spend main time a bit faster, and
    # never think longer than the main time left plus what one move of overtime allows.
    per_move_overtime = _overtime_budget(clock, lag_buffer)
    target = max(target, 0.5 * per_move_overtime) + 0.5 * per_move_overtime
    return max(_MIN_BUDGET, min(target, safe_main + per_move_overtime))


def _overtime_budget(clock: Clock, lag_buffer: float) -> float:
    control = clock.control
    if control.system is TimeSystem.CANADIAN:
        stones = max(1, clock.stones_left)
        # Keep the lag margin for every move still to play in this period.
        share = clock.period_left / stones
        return max(_MIN_BUDGET, share - overtime_lag(lag_buffer, share))
    if control.system is TimeSystem.BYOYOMI:
        return max(_MIN_BUDGET, control.period_time - overtime_lag(lag_buffer, control.period_time))
    return _MIN_BUDGET  # absolute or Fischer with nothing left
