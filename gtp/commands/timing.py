"""Clock commands: GTP's time_settings/time_left and the KGS and KataGo variants. Stored by the player."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..args import COLOR, FLOAT, INT, STRING, many, named
from ..errors import GtpSyntaxError
from ..player import ClockReading, TimeControl, TimeSystem
from ..table import CommandTable

if TYPE_CHECKING:
    from miai.go.coords import Color

    from ..session import GtpSession

table = CommandTable()

# Arguments after the system name, per system, for kgs-time_settings and kata-time_settings.
_ARITY = {
    TimeSystem.NONE: 0,
    TimeSystem.ABSOLUTE: 1,
    TimeSystem.CANADIAN: 3,
    TimeSystem.BYOYOMI: 3,
    TimeSystem.FISCHER: 2,
    TimeSystem.FISCHER_CAPPED: 4,
}
_KGS_SYSTEMS = (TimeSystem.NONE, TimeSystem.ABSOLUTE, TimeSystem.CANADIAN, TimeSystem.BYOYOMI)


def canadian_control(main: float, period: float, stones: int) -> TimeControl:
    """GTP ``time_settings``: byo-yomi time > 0 with 0 stones means no limit; 0 byo-yomi time is absolute."""
    if period > 0 and stones == 0:
        return TimeControl(TimeSystem.NONE)
    if period == 0:
        return TimeControl(TimeSystem.ABSOLUTE, main_time=main)
    return TimeControl(TimeSystem.CANADIAN, main_time=main, period_time=period, period_stones=stones)


def _nonneg(value: float, what: str) -> float:
    if value < 0:
        raise GtpSyntaxError(f"{what} must not be negative, got {value:g}")
    return value


@table.command(
    "time_settings", named(FLOAT, "main_time"), named(FLOAT, "byo_yomi_time"), named(INT, "byo_yomi_stones")
)
def time_settings(s: GtpSession, main: float, period: float, stones: int) -> str:
    """Canadian time, in seconds (GTP section 6.3)."""
    stones = int(_nonneg(stones, "stones"))
    s.player.set_time_control(canadian_control(_nonneg(main, "main time"), _nonneg(period, "byo-yomi time"), stones))
    return ""


@table.command("time_left", COLOR, named(FLOAT, "time"), named(INT, "stones"))
def time_left(s: GtpSession, color: Color, seconds: float, stones: int) -> str:
    """Seconds left and stones (Canadian) or periods (byo-yomi) left; 0 while in main time."""
    s.player.time_left(ClockReading(color, seconds, int(_nonneg(stones, "stones"))))
    return ""


def parse_time_system(tokens: list[str], allowed: tuple[TimeSystem, ...]) -> TimeControl:
    """``SYSTEM args...`` of kgs-/kata-time_settings as a :class:`TimeControl`.

    Raises:
        GtpSyntaxError: unknown system, wrong number of arguments or a bad number (quoted).
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
    if len(args) != _ARITY[system]:
        raise GtpSyntaxError(f"'{system.value}' takes {_ARITY[system]} argument(s), got {len(args)}")
    numbers = [_number(token) for token in args]
    return _control(system, numbers)


def _number(token: str) -> float:
    try:
        value = float(token)
    except ValueError as error:
        raise GtpSyntaxError(f"invalid number '{token}'") from error
    if value != value or value in (float("inf"), float("-inf")):
        raise GtpSyntaxError(f"invalid number '{token}'")
    return value


def _control(system: TimeSystem, n: list[float]) -> TimeControl:
    if system is not TimeSystem.FISCHER_CAPPED and any(value < 0 for value in n):
        raise GtpSyntaxError("times and counts must not be negative")
    if system is TimeSystem.NONE:
        return TimeControl(TimeSystem.NONE)
    if system is TimeSystem.ABSOLUTE:
        return TimeControl(system, main_time=n[0])
    if system is TimeSystem.CANADIAN:
        return TimeControl(system, main_time=n[0], period_time=n[1], period_stones=int(n[2]))
    if system is TimeSystem.BYOYOMI:
        return TimeControl(system, main_time=n[0], period_time=n[1], periods=int(n[2]))
    if system is TimeSystem.FISCHER:
        return TimeControl(system, main_time=n[0], increment=n[1])
    if min(n[0], n[1]) < 0:
        raise GtpSyntaxError("main time and increment must not be negative")
    # fischer-capped MAIN INCREMENT MAIN_TIME_LIMIT MAX_TIME_PER_MOVE; a negative cap means none (gtp2ogs: -1).
    return TimeControl(system, main_time=n[0], increment=n[1], main_time_limit=n[2], max_time_per_move=n[3])


@table.command("kgs-time_settings", many(named(STRING, "arg")))
def kgs_time_settings(s: GtpSession, tokens: list[str]) -> str:
    """``none``, ``absolute MAIN``, ``canadian MAIN PERIOD STONES`` or ``byoyomi MAIN PERIOD PERIODS``."""
    s.player.set_time_control(parse_time_system(tokens, _KGS_SYSTEMS))
    return ""


@table.command("kata-time_settings", many(named(STRING, "arg")))
def kata_time_settings(s: GtpSession, tokens: list[str]) -> str:
    """The KGS systems plus ``fischer MAIN INCREMENT`` and ``fischer-capped MAIN INC MAIN_LIMIT MOVE_LIMIT``."""
    s.player.set_time_control(parse_time_system(tokens, tuple(TimeSystem)))
    return ""


@table.command("kata-list_time_settings")
def kata_list_time_settings(s: GtpSession) -> str:
    """The systems kata-time_settings accepts, one per line (gtp2ogs looks for fischer-capped)."""
    return "\n".join(system.value for system in TimeSystem)
