"""Clocks and how long to think: absolute, Japanese byo-yomi, Canadian overtime and Fischer increment.

``TimeSettings`` says what the clock is (GTP ``time_settings``, ``kgs-time_settings``, ``kata-time_settings``);
``Clock`` tracks one player's remaining time (told by GTP ``time_left`` or counted down by ``record``) and
``Clock.budget`` answers "how many seconds may this move take?". Every budget keeps ``lag_buffer`` seconds in
reserve (``search.lag_buffer``) so that network and GUI lag cannot make the engine lose on time; in overtime the
reserve shrinks for short periods (at most 20% of a move's share of the period), since a 1-second byo-yomi period
with a 1-second reserve would leave no time to think.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

__all__ = ["TimeSystem", "TimeSettings", "Clock", "TimeControlError", "expected_moves_left", "overtime_lag"]

# Never spend more than this share of the time that is left on one move of the main time.
_MAX_SHARE_OF_MAIN = 0.5
# Smallest budget, in seconds, when almost nothing is left: still enough to pick a sensible move.
_MIN_BUDGET = 0.05
# In overtime the lag reserve is at most this share of the time one move may use: a short period cannot afford the
# full lag_buffer, and the controller that chose 1-second periods accepts that its lag must be small.
_LAG_SHARE_OF_PERIOD = 0.2


class TimeControlError(ValueError):
    """Invalid time settings."""


class TimeSystem(Enum):
    """The kind of clock."""

    NONE = "none"  # no time limit
    ABSOLUTE = "absolute"  # main time only
    BYO_YOMI = "byoyomi"  # main time, then ``periods`` periods of ``period_time`` each (one move per period)
    CANADIAN = "canadian"  # main time, then ``stones`` moves in every ``period_time``
    FISCHER = "fischer"  # main time, plus ``increment`` after every move


@dataclass(frozen=True)
class TimeSettings:
    """A clock's rules; times in seconds."""

    system: TimeSystem = TimeSystem.NONE
    main_time: float = 0.0
    period_time: float = 0.0
    periods: int = 0  # byo-yomi periods
    stones: int = 0  # Canadian stones per period
    increment: float = 0.0  # Fischer
    main_time_limit: float = -1.0  # Fischer: the clock never grows beyond this (fischer-capped); < 0 = no cap
    max_time_per_move: float = -1.0  # a hard cap on any one move (fischer-capped); < 0 = no cap

    def __post_init__(self) -> None:
        for name in ("main_time", "period_time", "increment"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise TimeControlError(f"{name} must be a finite number >= 0, got {value}")
        if self.periods < 0 or self.stones < 0:
            raise TimeControlError("periods and stones must be >= 0")
        if self.system is TimeSystem.BYO_YOMI and (self.periods == 0) != (self.period_time == 0):
            raise TimeControlError("byo-yomi needs both a period time and a number of periods")
        if self.system is TimeSystem.CANADIAN and (self.stones == 0) != (self.period_time == 0):
            raise TimeControlError("Canadian overtime needs both a period time and a number of stones")

    @classmethod
    def from_gtp(cls, main_time: float, byo_yomi_time: float, byo_yomi_stones: int) -> TimeSettings:
        """GTP ``time_settings``: Canadian overtime; byo-yomi time > 0 with 0 stones means no limit."""
        if byo_yomi_time > 0 and byo_yomi_stones == 0:
            return cls(TimeSystem.NONE)
        if byo_yomi_time == 0:
            return cls(TimeSystem.ABSOLUTE, main_time)
        return cls(TimeSystem.CANADIAN, main_time, byo_yomi_time, stones=byo_yomi_stones)

    @classmethod
    def from_control(cls, control: object) -> TimeSettings:
        """From ``miai.gtp.player.TimeControl`` (read by attribute names; ``fischer-capped`` becomes Fischer with
        its caps)."""
        system = str(getattr(getattr(control, "system"), "value", getattr(control, "system")))
        kind = TimeSystem.FISCHER if system == "fischer-capped" else TimeSystem(system)
        return cls(kind, float(getattr(control, "main_time")), float(getattr(control, "period_time")),
                   periods=int(getattr(control, "periods")), stones=int(getattr(control, "period_stones")),
                   increment=float(getattr(control, "increment")),
                   main_time_limit=float(getattr(control, "main_time_limit", -1.0)),
                   max_time_per_move=float(getattr(control, "max_time_per_move", -1.0)))

    @property
    def limited(self) -> bool:
        """False for an untimed game."""
        return self.system is not TimeSystem.NONE


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


@dataclass
class Clock:
    """One player's clock under ``settings``."""

    settings: TimeSettings
    main_left: float = 0.0
    period_left: float = 0.0  # time left in the current byo-yomi / Canadian period
    periods_left: int = 0
    stones_left: int = 0  # Canadian: moves left to play in the current period
    in_overtime: bool = False

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Full time again (a new game or new settings)."""
        s = self.settings
        self.main_left = s.main_time
        self.period_left = s.period_time
        self.periods_left = s.periods
        self.stones_left = s.stones
        self.in_overtime = s.main_time <= 0 and s.system in (TimeSystem.BYO_YOMI, TimeSystem.CANADIAN)

    def update(self, time_left: float, stones: int) -> None:
        """GTP ``time_left``: ``stones`` 0 means main time; otherwise the Canadian moves left in the period, or the
        byo-yomi periods left (KGS convention)."""
        s = self.settings
        if stones == 0 or s.system in (TimeSystem.ABSOLUTE, TimeSystem.FISCHER, TimeSystem.NONE):
            self.main_left, self.in_overtime = max(0.0, time_left), False
            return
        self.main_left, self.in_overtime = 0.0, True
        if s.system is TimeSystem.CANADIAN:
            self.period_left, self.stones_left = max(0.0, time_left), stones
        else:
            self.period_left, self.periods_left = max(0.0, time_left), stones

    def budget(self, board_size: int, move_number: int, lag_buffer: float) -> float:
        """Seconds this move may take (``math.inf`` when untimed); always leaves ``lag_buffer`` in reserve."""
        s = self.settings
        if not s.limited:
            return math.inf
        seconds = self._budget(board_size, move_number, lag_buffer)
        if s.max_time_per_move >= 0:
            seconds = min(seconds, max(_MIN_BUDGET, s.max_time_per_move - lag_buffer))
        return seconds

    def _budget(self, board_size: int, move_number: int, lag_buffer: float) -> float:
        s = self.settings
        moves = expected_moves_left(board_size, move_number)
        if self.in_overtime:
            return self._overtime_budget(lag_buffer)
        safe_main = max(0.0, self.main_left - lag_buffer)
        # Reserve the lag margin for every move still expected (at least a quarter of the board's points: games
        # outlive estimates), then share the rest out evenly.
        reserve = lag_buffer * max(moves, 0.25 * board_size * board_size)
        target = max(0.0, self.main_left - reserve) / moves
        if s.system is TimeSystem.FISCHER:
            target += 0.8 * s.increment
            cap = max(0.0, self.main_left + s.increment - lag_buffer) * _MAX_SHARE_OF_MAIN
            return max(_MIN_BUDGET, min(target, cap))
        if s.system is TimeSystem.ABSOLUTE:
            return max(_MIN_BUDGET, min(target, safe_main * _MAX_SHARE_OF_MAIN))
        # Main time with overtime behind it: the overtime is a safety net, so spend main time a bit faster, and
        # never think longer than the main time left plus what one move of overtime allows.
        per_move_overtime = self._overtime_budget(lag_buffer)
        target = max(target, 0.5 * per_move_overtime) + 0.5 * per_move_overtime
        return max(_MIN_BUDGET, min(target, safe_main + per_move_overtime))

    def _overtime_budget(self, lag_buffer: float) -> float:
        s = self.settings
        if s.system is TimeSystem.CANADIAN:
            stones = max(1, self.stones_left)
            # Keep the lag margin for every move still to play in this period.
            share = self.period_left / stones
            return max(_MIN_BUDGET, share - overtime_lag(lag_buffer, share))
        if s.system is TimeSystem.BYO_YOMI:
            return max(_MIN_BUDGET, s.period_time - overtime_lag(lag_buffer, s.period_time))
        return _MIN_BUDGET  # absolute or Fischer with nothing left

    def record(self, elapsed: float) -> None:
        """Count down ``elapsed`` seconds spent on one of our moves (when no ``time_left`` tells us)."""
        s = self.settings
        if not s.limited:
            return
        if not self.in_overtime:
            used = min(elapsed, self.main_left)
            self.main_left -= used
            elapsed -= used
            if s.system is TimeSystem.FISCHER:
                self.main_left += s.increment
                if s.main_time_limit >= 0:
                    self.main_left = min(self.main_left, s.main_time_limit)
                return
            if self.main_left > 0 or s.system is TimeSystem.ABSOLUTE:
                return
            self.in_overtime = True
            self.period_left, self.stones_left = s.period_time, s.stones
            if elapsed <= 0:
                return
        if s.system is TimeSystem.BYO_YOMI:
            # Each full period used up is lost; a move finished within a period resets it.
            lost = int(elapsed // s.period_time) if s.period_time else 0
            self.periods_left = max(0, self.periods_left - lost)
            self.period_left = s.period_time
        elif s.system is TimeSystem.CANADIAN:
            self.period_left -= elapsed
            self.stones_left -= 1
            if self.stones_left <= 0:
                self.period_left, self.stones_left = s.period_time, s.stones

    @property
    def lost_on_time(self) -> bool:
        """True when the clock has run out (no main time, and no overtime left)."""
        s = self.settings
        if not s.limited or self.main_left > 0:
            return False
        if s.system is TimeSystem.BYO_YOMI:
            return self.periods_left <= 0
        if s.system is TimeSystem.CANADIAN:
            return self.period_left < 0
        return s.system is not TimeSystem.FISCHER or self.main_left < 0
