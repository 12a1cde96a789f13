"""Game clocks: the time control of a game and the state of one player's clock.

:class:`TimeControl` says what the clock is: no limit, absolute (sudden death) time, Japanese byo-yomi, Canadian
overtime or a Fischer increment (optionally capped). It is read from GTP's ``time_settings`` arguments
(:meth:`TimeControl.from_gtp`), from the ``SYSTEM args...`` of ``kgs-time_settings``/``kata-time_settings``
(:meth:`TimeControl.from_system`) and from a match's ``--time`` spec (``M``, ``M+B/S``, ``M+PxB``, ``M+If``)
(:meth:`TimeControl.parse_spec`). :class:`Clock` is one player's clock under a control: the time left, charged
with each move's elapsed time (:meth:`Clock.charge`) or set from the controller's ``time_left``
(:meth:`Clock.update`), and whether the player lost on time.

Why here, in the rules layer: a clock with byo-yomi, Canadian overtime or an increment is part of Go as it is
played (tournament rules define it, not a protocol), and it holds no idea of search or protocol. The three layers
that need it (``miai.gtp`` stores what the controller set, ``miai.engine`` plans its thinking time on it,
``miai.match`` referees engines with it) may all import ``miai.go``; in ``miai.gtp`` the referee and the search
would depend on the protocol package for a concept that is not about the protocol. How long to *think* under a
clock is the engine's business (``miai.engine.timecontrol``).

All times are in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

__all__ = ["TimeSystem", "TimeControl", "TimeControlError", "Clock"]


class TimeControlError(ValueError):
    """Invalid time settings."""


class TimeSystem(str, Enum):
    """The kind of clock; the values are the system names of ``kgs-time_settings``/``kata-time_settings``."""

    NONE = "none"  # no time limit
    ABSOLUTE = "absolute"  # main time only
    CANADIAN = "canadian"  # main time, then ``period_stones`` moves in every ``period_time``
    BYOYOMI = "byoyomi"  # main time, then ``periods`` periods of ``period_time`` each (one move per period)
    FISCHER = "fischer"  # main time, plus ``increment`` after every move
    FISCHER_CAPPED = "fischer-capped"  # Fischer with ``main_time_limit`` and ``max_time_per_move``

    @property
    def parameter_count(self) -> int:
        """How many numbers follow the system's name in ``kgs-time_settings``/``kata-time_settings``."""
        return _PARAMETER_COUNTS[self]


_PARAMETER_COUNTS = {
    TimeSystem.NONE: 0,
    TimeSystem.ABSOLUTE: 1,  # MAIN
    TimeSystem.CANADIAN: 3,  # MAIN PERIOD STONES
    TimeSystem.BYOYOMI: 3,  # MAIN PERIOD PERIODS
    TimeSystem.FISCHER: 2,  # MAIN INCREMENT
    TimeSystem.FISCHER_CAPPED: 4,  # MAIN INCREMENT MAIN_TIME_LIMIT MAX_TIME_PER_MOVE
}


@dataclass(frozen=True)
class TimeControl:
    """A clock's rules.

    ``period_time``/``period_stones``: Canadian overtime (``period_stones`` moves in ``period_time``).
    ``period_time``/``periods``: Japanese byo-yomi. ``increment``: Fischer. ``main_time_limit`` (the clock never
    grows beyond it) and ``max_time_per_move`` cap fischer-capped; negative means no cap.

    Raises:
        TimeControlError: a negative or non-finite time or count, or overtime with only half its parameters.
    """

    system: TimeSystem = TimeSystem.NONE
    main_time: float = 0.0
    period_time: float = 0.0
    period_stones: int = 0
    periods: int = 0
    increment: float = 0.0
    main_time_limit: float = -1.0
    max_time_per_move: float = -1.0

    def __post_init__(self) -> None:
        for name, value in (("main_time", self.main_time), ("period_time", self.period_time),
                            ("increment", self.increment)):
            if not (math.isfinite(value) and value >= 0):
                raise TimeControlError(f"{name} must be a finite number >= 0, got {value}")
        if self.periods < 0 or self.period_stones < 0:
            raise TimeControlError("periods and stones must be >= 0")
        if self.system is TimeSystem.BYOYOMI and (self.periods == 0) != (self.period_time == 0):
            raise TimeControlError("byo-yomi needs both a period time and a number of periods")
        if self.system is TimeSystem.CANADIAN and (self.period_stones == 0) != (self.period_time == 0):
            raise TimeControlError("Canadian overtime needs both a period time and a number of stones")

    @classmethod
    def from_gtp(cls, main_time: float, byo_yomi_time: float, byo_yomi_stones: int) -> TimeControl:
        """GTP ``time_settings``: Canadian overtime; byo-yomi time > 0 with 0 stones means no limit, byo-yomi time
        0 is absolute time."""
        if byo_yomi_time > 0 and byo_yomi_stones == 0:
            return cls(TimeSystem.NONE)
        if byo_yomi_time == 0:
            return cls(TimeSystem.ABSOLUTE, main_time=main_time)
        return cls(TimeSystem.CANADIAN, main_time=main_time, period_time=byo_yomi_time, period_stones=byo_yomi_stones)

    @classmethod
    def from_system(cls, system: TimeSystem, numbers: Sequence[float]) -> TimeControl:
        """The ``SYSTEM args...`` of ``kgs-time_settings``/``kata-time_settings``: ``system.parameter_count``
        numbers in the order of :data:`_PARAMETER_COUNTS` (counts are truncated to integers)."""
        if len(numbers) != system.parameter_count:
            raise TimeControlError(f"'{system.value}' takes {system.parameter_count} argument(s), got {len(numbers)}")
        n = numbers
        if system is TimeSystem.NONE:
            return cls(system)
        if system is TimeSystem.ABSOLUTE:
            return cls(system, main_time=n[0])
        if system is TimeSystem.CANADIAN:
            return cls(system, main_time=n[0], period_time=n[1], period_stones=int(n[2]))
        if system is TimeSystem.BYOYOMI:
            return cls(system, main_time=n[0], period_time=n[1], periods=int(n[2]))
        if system is TimeSystem.FISCHER:
            return cls(system, main_time=n[0], increment=n[1])
        return cls(system, main_time=n[0], increment=n[1], main_time_limit=n[2], max_time_per_move=n[3])

    @classmethod
    def parse_spec(cls, spec: str) -> TimeControl:
        """A match's clock, in integer seconds: ``M`` (absolute), ``M+B`` (then one move per B seconds), ``M+B/S``
        (Canadian: S moves per B seconds), ``M+PxB`` (byo-yomi: P periods of B seconds) or ``M+If`` (Fischer: I
        seconds added after every move); e.g. ``0+5`` is 5 seconds a move, ``0+5x1`` five 1-second periods,
        ``10+1f`` 10 seconds plus 1 a move.

        Raises:
            TimeControlError: a malformed spec, a negative number, S or P < 1, or neither main time nor overtime.
        """
        text = spec.strip().lower()
        try:
            main_text, _, rest = text.partition("+")
            main = _whole_seconds(main_text)
            if rest.endswith("f"):
                return cls._checked(cls(TimeSystem.FISCHER, main_time=main, increment=_whole_seconds(rest[:-1])))
            if "x" in rest:
                periods_text, _, period_text = rest.partition("x")
                periods, period = _whole_seconds(periods_text), _whole_seconds(period_text)
                if periods < 1 or period < 1:
                    raise ValueError(f"byo-yomi needs at least one period of at least 1 s, got {periods}x{period}")
                return cls._checked(cls(TimeSystem.BYOYOMI, main_time=main, period_time=period, periods=periods))
            byo_text, _, stones_text = rest.partition("/")
            byo_yomi, stones = _whole_seconds(byo_text or "0"), _whole_seconds(stones_text or "1")
            if stones < 1:
                raise ValueError(f"bad time control {main}+{byo_yomi}/{stones}")
            if byo_yomi == 0:
                return cls._checked(cls(TimeSystem.ABSOLUTE, main_time=main))
            return cls._checked(cls(TimeSystem.CANADIAN, main_time=main, period_time=byo_yomi, period_stones=stones))
        except (ValueError, TimeControlError) as exc:
            raise TimeControlError(f"bad time spec {spec!r}: {exc} (expected M, M+B, M+B/S, M+PxB or M+If, whole "
                                   "seconds)") from None

    @staticmethod
    def _checked(control: TimeControl) -> TimeControl:
        """``control`` if it gives any time at all (a spec's numbers are also >= 0)."""
        numbers = (control.main_time, control.period_time, control.increment, control.periods, control.period_stones)
        if min(numbers) < 0:
            raise ValueError("times and counts must be >= 0")
        if control.main_time == 0 and control.period_time == 0 and control.increment == 0:
            raise ValueError("a time control needs main time or overtime")
        return control

    def spec(self) -> str:
        """The spec of an absolute, Canadian, byo-yomi or Fischer control (the inverse of :meth:`parse_spec`)."""
        main = _seconds(self.main_time)
        if self.system is TimeSystem.ABSOLUTE:
            return main
        if self.system is TimeSystem.CANADIAN:
            return f"{main}+{_seconds(self.period_time)}/{self.period_stones}"
        if self.system is TimeSystem.BYOYOMI:
            return f"{main}+{self.periods}x{_seconds(self.period_time)}"
        if self.system is TimeSystem.FISCHER:
            return f"{main}+{_seconds(self.increment)}f"
        raise TimeControlError(f"a {self.system.value} clock has no spec")

    def gtp_arguments(self) -> str:
        """The arguments of GTP ``time_settings`` for an absolute or Canadian control (the inverse of
        :meth:`from_gtp`): ``MAIN BYO_YOMI_TIME BYO_YOMI_STONES``."""
        if self.system is TimeSystem.ABSOLUTE:
            return f"{_seconds(self.main_time)} 0 0"
        if self.system is TimeSystem.CANADIAN:
            return f"{_seconds(self.main_time)} {_seconds(self.period_time)} {self.period_stones}"
        raise TimeControlError(f"GTP time_settings cannot express a {self.system.value} clock")

    @property
    def limited(self) -> bool:
        """False for an untimed game."""
        return self.system is not TimeSystem.NONE

    @property
    def fischer(self) -> bool:
        """True for an increment clock, capped or not."""
        return self.system in (TimeSystem.FISCHER, TimeSystem.FISCHER_CAPPED)


def _seconds(value: float) -> str:
    """Seconds as GTP and match specs write them: whole seconds without a decimal point."""
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass
class Clock:
    """One player's clock under ``control``.

    ``overrun``: the most that any move charged since the last :meth:`reset` took beyond what the clock allowed
    (0 while the player is within time); see :meth:`lost_on_time`.
    """

    control: TimeControl
    main_left: float = 0.0
    period_left: float = 0.0  # time left in the current byo-yomi / Canadian period
    periods_left: int = 0  # byo-yomi periods left
    stones_left: int = 0  # Canadian: moves left to play in the current period
    in_overtime: bool = False
    overrun: float = 0.0

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Full time again (a new game or new settings)."""
        c = self.control
        self.main_left = c.main_time
        self.period_left = c.period_time
        self.periods_left = c.periods
        self.stones_left = c.period_stones
        self.in_overtime = c.main_time <= 0 and c.system in (TimeSystem.BYOYOMI, TimeSystem.CANADIAN)
        self.overrun = 0.0

    def update(self, time_left: float, stones: int) -> None:
        """The controller's ``time_left``: ``stones`` 0 means main time; otherwise the Canadian moves left in the
        period, or the byo-yomi periods left (KGS convention)."""
        c = self.control
        if stones == 0 or c.system not in (TimeSystem.BYOYOMI, TimeSystem.CANADIAN):
            self.main_left, self.in_overtime = max(0.0, time_left), False
            return
        self.main_left, self.in_overtime = 0.0, True
        if c.system is TimeSystem.CANADIAN:
            self.period_left, self.stones_left = max(0.0, time_left), stones
        else:
            self.period_left, self.periods_left = max(0.0, time_left), stones

    def reading(self) -> tuple[float, int]:
        """The clock as ``time_left`` reports it (the inverse of :meth:`update`): seconds and stones (Canadian)
        or periods (byo-yomi) left, with 0 stones while in main time."""
        if not self.in_overtime:
            return self.main_left, 0
        if self.control.system is TimeSystem.CANADIAN:
            return self.period_left, self.stones_left
        return self.period_left, self.periods_left

    def allowance(self) -> float:
        """Seconds the next move may take before the flag falls (``math.inf`` when untimed)."""
        c = self.control
        if not c.limited:
            return math.inf
        if c.system is TimeSystem.CANADIAN:
            return self.main_left + self.period_left
        if c.system is TimeSystem.BYOYOMI:
            return self.main_left + self.periods_left * c.period_time
        return self.main_left

    def charge(self, elapsed: float) -> float:
        """Count down ``elapsed`` seconds spent on one move; returns how far the move overran the clock (0 when
        it was within time) and remembers the worst overrun in ``overrun``.

        Main time goes first. Fischer adds the increment after the move (up to ``main_time_limit``). Byo-yomi
        loses every full period the move used and starts the next move with a full period. Canadian overtime
        counts the move against the period and starts a new period after its last stone, or after an overrun
        (a referee that lets a move within its lag margin go on gives the player a fresh period).
        """
        c = self.control
        if not c.limited:
            return 0.0
        if not self.in_overtime:
            used = min(elapsed, self.main_left)
            self.main_left -= used
            elapsed -= used
            if c.fischer:
                self.main_left += c.increment
                if c.main_time_limit >= 0:
                    self.main_left = min(self.main_left, c.main_time_limit)
                return self._note(elapsed)
            if c.system is TimeSystem.ABSOLUTE:
                return self._note(elapsed)
            if self.main_left > 0:
                return 0.0
            self.in_overtime = True
            self.period_left, self.stones_left = c.period_time, c.period_stones
            if elapsed <= 0:
                return 0.0
        if c.system is TimeSystem.BYOYOMI:
            overrun = max(0.0, elapsed - self.periods_left * c.period_time)
            lost = int(elapsed // c.period_time) if c.period_time else 0
            self.periods_left = max(0, self.periods_left - lost)
            self.period_left = c.period_time
            return self._note(overrun)
        self.period_left -= elapsed
        self.stones_left -= 1
        overrun = max(0.0, -self.period_left)
        if self.stones_left <= 0 or self.period_left < 0:
            self.period_left, self.stones_left = c.period_time, c.period_stones
        return self._note(overrun)

    def _note(self, overrun: float) -> float:
        self.overrun = max(self.overrun, overrun)
        return overrun

    def lost_on_time(self, margin: float = 0.0) -> bool:
        """True once a move has overrun the clock by more than ``margin`` seconds (a referee's lag allowance)."""
        return self.overrun > margin


def _whole_seconds(text: str) -> int:
    """A count of a time spec (seconds, periods or stones), or ValueError saying what was read."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
