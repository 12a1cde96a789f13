"""The game clock: time controls from GTP arguments and match specs, and one player's clock counting down."""

from __future__ import annotations

import math

import pytest

from miai.go.clock import Clock, TimeControl, TimeControlError, TimeSystem


def test_gtp_time_settings_map_to_canadian_absolute_or_none() -> None:
    assert TimeControl.from_gtp(600, 0, 0).system is TimeSystem.ABSOLUTE
    canadian = TimeControl.from_gtp(600, 300, 25)
    assert (canadian.system, canadian.period_time, canadian.period_stones) == (TimeSystem.CANADIAN, 300, 25)
    assert TimeControl.from_gtp(0, 1, 0) == TimeControl(TimeSystem.NONE)  # byo-yomi time with 0 stones: no limit
    assert canadian.gtp_arguments() == "600 300 25"


def test_kgs_and_kata_system_arguments() -> None:
    assert TimeControl.from_system(TimeSystem.BYOYOMI, [60, 30, 5]) == TimeControl(
        TimeSystem.BYOYOMI, main_time=60, period_time=30, periods=5)
    assert TimeControl.from_system(TimeSystem.FISCHER_CAPPED, [20, 10, 25, -1]) == TimeControl(
        TimeSystem.FISCHER_CAPPED, main_time=20, increment=10, main_time_limit=25, max_time_per_move=-1)
    assert [system.parameter_count for system in TimeSystem] == [0, 1, 3, 3, 2, 4]
    with pytest.raises(TimeControlError, match="takes 2 argument"):
        TimeControl.from_system(TimeSystem.FISCHER, [300])


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.ABSOLUTE, main_time=-1)
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.ABSOLUTE, main_time=math.inf)
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.BYOYOMI, main_time=10, period_time=5, periods=0)
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.CANADIAN, main_time=10, period_time=0, period_stones=5)


def test_specs_of_every_match_clock_round_trip() -> None:
    assert TimeControl.parse_spec(" 5+2 ").spec() == "5+2/1"
    byoyomi = TimeControl.parse_spec("0+5x1")  # five periods of one second
    assert byoyomi == TimeControl(TimeSystem.BYOYOMI, period_time=1, periods=5) and byoyomi.spec() == "0+5x1"
    fischer = TimeControl.parse_spec("10+1f")
    assert fischer == TimeControl(TimeSystem.FISCHER, main_time=10, increment=1) and fischer.spec() == "10+1f"
    for bad in ("0+0x1", "0+1x0", "0+0f", "1+xf", "-1+2f"):
        with pytest.raises(TimeControlError):
            TimeControl.parse_spec(bad)
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.FISCHER_CAPPED, main_time=5, increment=1).spec()
    with pytest.raises(TimeControlError):
        TimeControl(TimeSystem.FISCHER, main_time=5, increment=1).gtp_arguments()


def test_time_left_readings_round_trip() -> None:
    byoyomi = Clock(TimeControl(TimeSystem.BYOYOMI, main_time=60, period_time=30, periods=5))
    assert byoyomi.reading() == (60, 0) and not byoyomi.in_overtime
    byoyomi.update(25.0, 3)  # KGS: 3 periods left, 25 s of this one
    assert byoyomi.in_overtime and byoyomi.reading() == (25.0, 3) and byoyomi.main_left == 0
    canadian = Clock(TimeControl(TimeSystem.CANADIAN, period_time=30, period_stones=10))
    assert canadian.in_overtime and canadian.reading() == (30, 10)  # no main time: overtime from the start
    canadian.update(12.0, 4)
    assert canadian.reading() == (12.0, 4) and canadian.allowance() == 12.0
    fischer = Clock(TimeControl(TimeSystem.FISCHER, main_time=30, increment=5))
    fischer.update(7.0, 2)  # stones mean nothing under Fischer
    assert fischer.reading() == (7.0, 0)
    assert Clock(TimeControl()).allowance() == math.inf


def test_byo_yomi_loses_each_full_period_used() -> None:
    clock = Clock(TimeControl(TimeSystem.BYOYOMI, main_time=10, period_time=5, periods=3))
    assert clock.allowance() == 25
    assert clock.charge(12.0) == 0  # main time, then 2 s into the first period
    assert clock.periods_left == 3 and clock.in_overtime
    assert clock.charge(11.0) == 0  # two full periods gone, finished in the third
    assert clock.periods_left == 1 and not clock.lost_on_time()
    assert clock.charge(6.0) == pytest.approx(1.0)  # the last period overrun by 1 s
    assert clock.periods_left == 0 and clock.lost_on_time() and not clock.lost_on_time(margin=1.5)


def test_fischer_adds_the_increment_and_a_move_beyond_the_clock_loses() -> None:
    clock = Clock(TimeControl(TimeSystem.FISCHER, main_time=10, increment=3))
    assert clock.charge(4.0) == 0 and clock.main_left == 9
    assert clock.charge(10.0) == pytest.approx(1.0) and clock.lost_on_time()
    clock.reset()
    assert clock.main_left == 10 and not clock.lost_on_time()


def test_untimed_clock_never_runs_out() -> None:
    clock = Clock(TimeControl.from_gtp(0, 1, 0))
    assert clock.charge(1e6) == 0 and not clock.lost_on_time()
