"""Clock commands: GTP's time_settings/time_left and the KGS and KataGo variants. Stored by the player."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from miai.go.clock import TimeControl, TimeControlError, TimeSystem

from ..args import COLOR, FLOAT, INT, STRING, many, named
from ..errors import GtpError, GtpSyntaxError
from ..player import ClockReading
from ..table import CommandTable

if TYPE_CHECKING:
    from miai.go.coords import Color

    from ..context import Session

table = CommandTable()

_KGS_SYSTEMS = (TimeSystem.NONE, TimeSystem.ABSOLUTE, TimeSystem.CANADIAN, TimeSystem.BYOYOMI)


def _nonneg(value: float, what: str) -> float:
    if value < 0:
        raise GtpSyntaxError(f"{what} must not be negative, got {value:g}")
    return value


def _refuse(s: Session, message: str) -> GtpError:
    """Time settings the engine cannot take: the old clock is dropped too (it is no longer the game's), so the
    clock follows ``time_left`` alone until settings it can take arrive."""
    s.player.set_time_control(TimeControl())
    return GtpError(f"{message}; the clock now follows time_left")


@table.command(
    "time_settings", named(FLOAT, "main_time"), named(FLOAT, "byo_yomi_time"), named(INT, "byo_yomi_stones"),
    clock=True,
)
def time_settings(s: Session, main: float, period: float, stones: int) -> str:
    """Canadian time, in seconds (GTP section 6.3). Negative or non-finite values are refused with their reason
    (gtp2ogs's fallback for Fischer clocks sends a negative main time when the initial time is below the
    increment); the clock then follows ``time_left``."""
    for value, what in ((main, "main time"), (period, "byo-yomi time"), (stones, "byo-yomi stones")):
        if not math.isfinite(value) or value < 0:
            raise _refuse(s, f"invalid time settings: {what} is {value:g}, it must be >= 0")
    s.player.set_time_control(TimeControl.from_gtp(main, period, stones))
    return ""


@table.command("time_left", COLOR, named(FLOAT, "time"), named(INT, "stones"), clock=True)
def time_left(s: Session, color: Color, seconds: float, stones: int) -> str:
    """Seconds left and stones (Canadian) or periods (byo-yomi) left; 0 while in main time. Without time settings
    the reading alone is the clock (absolute time, or ``stones`` moves in ``seconds``)."""
    if not math.isfinite(seconds):
        raise GtpSyntaxError(f"time must be a number of seconds, got {seconds:g}")
    s.player.time_left(ClockReading(color, max(0.0, seconds), int(_nonneg(stones, "stones"))))
    return ""


def parse_time_system(tokens: list[str], allowed: tuple[TimeSystem, ...]) -> TimeControl:
    """``SYSTEM args...`` of kgs-/kata-time_settings as a :class:`TimeControl`.

    Raises:
        GtpSyntaxError: unknown system, wrong number of arguments or a bad number (quoted).
        GtpError: numbers the clock's rules reject (byo-yomi with a period time but no periods), in its words.
    """
    if not tokens:
        raise GtpSyntaxError("expected a time system: " + ", ".join(system.value for system in allowed))
    try:
        system = TimeSystem(tokens[0].lower())
    except ValueError as error:
        raise GtpSyntaxError(f"unknown time system '{tokens[0]}'") from error
    if system not in allowed:
        raise GtpSyntaxError(f"unknown time system '{tokens[0]}'")
    args = tokens[1:]
    if len(args) != system.parameter_count:
        raise GtpSyntaxError(f"'{system.value}' takes {system.parameter_count} argument(s), got {len(args)}")
    numbers = [_number(token) for token in args]
    _check_signs(system, numbers)
    try:
        return TimeControl.from_system(system, numbers)
    except TimeControlError as error:  # well-formed numbers the clock's rules reject: the controller's mistake
        raise GtpError(str(error)) from error


def _number(token: str) -> float:
    try:
        value = float(token)
    except ValueError as error:
        raise GtpSyntaxError(f"invalid number '{token}'") from error
    if value != value or value in (float("inf"), float("-inf")):
        raise GtpSyntaxError(f"invalid number '{token}'")
    return value


def _check_signs(system: TimeSystem, numbers: list[float]) -> None:
    """Only fischer-capped's caps may be negative (a negative cap means none; gtp2ogs sends -1)."""
    if system is not TimeSystem.FISCHER_CAPPED and any(value < 0 for value in numbers):
        raise GtpError("invalid time settings: times and counts must not be negative")
    if system is TimeSystem.FISCHER_CAPPED and min(numbers[0], numbers[1]) < 0:
        raise GtpError("invalid time settings: main time and increment must not be negative")


def _parse_or_refuse(s: Session, tokens: list[str], allowed: tuple[TimeSystem, ...]) -> TimeControl:
    """:func:`parse_time_system`, dropping the old clock when the settings are refused (see :class:`_Refused`)."""
    try:
        return parse_time_system(tokens, allowed)
    except GtpError as error:
        s.player.set_time_control(TimeControl())
        if error.detail:
            raise GtpError(error.message, f"{error.detail}; the clock now follows time_left") from error
        raise GtpError(f"{error.message}; the clock now follows time_left") from error


@table.command("kgs-time_settings", many(named(STRING, "arg")), clock=True)
def kgs_time_settings(s: Session, tokens: list[str]) -> str:
    """``none``, ``absolute MAIN``, ``canadian MAIN PERIOD STONES`` or ``byoyomi MAIN PERIOD PERIODS``."""
    s.player.set_time_control(_parse_or_refuse(s, tokens, _KGS_SYSTEMS))
    return ""


@table.command("kata-time_settings", many(named(STRING, "arg")), clock=True)
def kata_time_settings(s: Session, tokens: list[str]) -> str:
    """The KGS systems plus ``fischer MAIN INCREMENT`` and ``fischer-capped MAIN INC MAIN_LIMIT MOVE_LIMIT``."""
    s.player.set_time_control(_parse_or_refuse(s, tokens, tuple(TimeSystem)))
    return ""


@table.command("kata-list_time_settings")
def kata_list_time_settings(s: Session) -> str:
    """The systems kata-time_settings accepts, one per line (gtp2ogs looks for fischer-capped)."""
    return "\n".join(system.value for system in TimeSystem)
