"""Time budgets: sensible per-move times, and never losing on time over a long game with lag."""

from __future__ import annotations

import math

import pytest

from miai.engine.timecontrol import (
    Clock,
    TimeControlError,
    TimeSettings,
    TimeSystem,
    expected_moves_left,
    overtime_lag,
)

SYSTEMS = {
    "absolute": TimeSettings(TimeSystem.ABSOLUTE, main_time=300),
    "byoyomi": TimeSettings(TimeSystem.BYO_YOMI, main_time=60, period_time=10, periods=3),
    "byoyomi-only": TimeSettings(TimeSystem.BYO_YOMI, period_time=5, periods=1),
    "canadian": TimeSettings(TimeSystem.CANADIAN, main_time=60, period_time=60, stones=10),
    "fischer": TimeSettings(TimeSystem.FISCHER, main_time=30, increment=2),
}


def test_untimed_games_have_no_budget() -> None:
    clock = Clock(TimeSettings.from_gtp(0, 1, 0))  # GTP: byo-yomi time with 0 stones = no limit
    assert clock.budget(19, 0, 1.0) == math.inf


def test_gtp_time_settings_map_to_canadian_or_absolute() -> None:
    assert TimeSettings.from_gtp(600, 0, 0).system is TimeSystem.ABSOLUTE
    canadian = TimeSettings.from_gtp(600, 300, 25)
    assert (canadian.system, canadian.period_time, canadian.stones) == (TimeSystem.CANADIAN, 300, 25)


def test_absolute_time_is_spread_over_the_expected_game() -> None:
    clock = Clock(SYSTEMS["absolute"])
    first = clock.budget(19, 0, 1.0)
    moves = expected_moves_left(19, 0)
    assert first == pytest.approx((300 - 1.0 * max(moves, 361 / 4)) / moves)
    assert 1.0 < first < 5.0
    clock.update(10.0, 0)
    assert clock.budget(19, 250, 1.0) <= (10.0 - 1.0) / 2  # never more than half of what is left


def test_byo_yomi_uses_the_period_minus_the_lag_margin() -> None:
    clock = Clock(SYSTEMS["byoyomi"])
    clock.update(10.0, 2)  # KGS: in byo-yomi, 2 periods left
    assert clock.in_overtime and clock.budget(19, 100, 1.5) == pytest.approx(8.5)


def test_canadian_overtime_divides_the_period_between_its_stones() -> None:
    clock = Clock(SYSTEMS["canadian"])
    clock.update(40.0, 5)  # 40 s for 5 more moves
    assert clock.budget(9, 60, 1.0) == pytest.approx((40 - 5 * 1.0) / 5)


def test_short_overtime_periods_keep_a_smaller_lag_reserve() -> None:
    """A 1 s byo-yomi period cannot afford a 1 s reserve: most of it goes to thinking; long periods keep it all."""
    assert overtime_lag(1.0, 1.0) == pytest.approx(0.2)
    assert Clock(TimeSettings(TimeSystem.BYO_YOMI, period_time=1, periods=5)).budget(19, 0, 1.0) == pytest.approx(0.8)
    assert Clock(TimeSettings(TimeSystem.BYO_YOMI, period_time=30, periods=5)).budget(19, 0, 1.0) == 29.0


def test_a_canadian_period_of_30_s_for_10_moves_is_mostly_used_and_never_overrun() -> None:
    clock = Clock(TimeSettings(TimeSystem.CANADIAN, period_time=30, stones=10))
    budgets = []
    for move in range(10):
        budgets.append(clock.budget(19, 2 * move, 1.0))
        clock.record(budgets[-1])
    assert all(b >= 0.7 * 3.0 for b in budgets) and 0.7 * 30 <= sum(budgets) < 30
    assert not clock.lost_on_time


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@pytest.mark.parametrize("size", [9, 19])
def test_never_loses_on_time_over_a_long_game_with_lag(name: str, size: int) -> None:
    settings, lag = SYSTEMS[name], 0.5
    clock = Clock(settings)
    # A very long game: 1.5 plies per point (absolute time cannot survive an endless game: lag alone drains it).
    for move_number in range(0, 3 * size * size // 2, 2):
        budget = clock.budget(size, move_number, lag_buffer=1.0)
        assert budget > 0
        clock.record(budget + lag)  # the search overshoots by the network/GUI lag
        assert not clock.lost_on_time, (move_number, clock)


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(TimeControlError):
        TimeSettings(TimeSystem.ABSOLUTE, main_time=-1)
    with pytest.raises(TimeControlError):
        TimeSettings(TimeSystem.BYO_YOMI, main_time=10, period_time=5, periods=0)
    with pytest.raises(TimeControlError):
        TimeSettings(TimeSystem.CANADIAN, main_time=10, period_time=0, stones=5)


def test_gtp_time_control_converts_including_fischer_caps() -> None:
    from miai.gtp.player import TimeControl
    from miai.gtp.player import TimeSystem as GtpSystem

    byo = TimeSettings.from_control(TimeControl(GtpSystem.BYOYOMI, main_time=60, period_time=30, periods=5))
    assert (byo.system, byo.main_time, byo.period_time, byo.periods) == (TimeSystem.BYO_YOMI, 60, 30, 5)
    capped = TimeSettings.from_control(TimeControl(GtpSystem.FISCHER_CAPPED, main_time=20, increment=10,
                                                   main_time_limit=25, max_time_per_move=4))
    clock = Clock(capped)
    assert clock.budget(19, 0, 1.0) <= 3.0  # max_time_per_move minus the lag margin
    clock.record(1.0)
    assert clock.main_left == 25  # 20 - 1 + 10, capped at 25
