"""Time budgets: sensible per-move times, and never losing on time over a long game with lag (the clock itself:
tests/go/test_clock.py)."""

from __future__ import annotations

import math
import time

import pytest

from miai.engine.timecontrol import (ANSWER_SECONDS, Lateness, StallWatch, budget, cpu_share, cpu_times, expected_moves_left,
                                    hard_limit, overtime_lag)
from miai.go.clock import Clock, TimeControl, TimeSystem

SYSTEMS = {
    "absolute": TimeControl(TimeSystem.ABSOLUTE, main_time=300),
    "byoyomi": TimeControl(TimeSystem.BYOYOMI, main_time=60, period_time=10, periods=3),
    "byoyomi-only": TimeControl(TimeSystem.BYOYOMI, period_time=5, periods=1),
    "canadian": TimeControl(TimeSystem.CANADIAN, main_time=60, period_time=60, period_stones=10),
    "fischer": TimeControl(TimeSystem.FISCHER, main_time=30, increment=2),
}


def test_untimed_games_have_no_budget() -> None:
    clock = Clock(TimeControl.from_gtp(0, 1, 0))  # GTP: byo-yomi time with 0 stones = no limit
    assert budget(clock, 19, 0, 1.0) == math.inf


def test_absolute_time_is_spread_over_the_expected_game() -> None:
    clock = Clock(SYSTEMS["absolute"])
    first = budget(clock, 19, 0, 1.0)
    moves = expected_moves_left(19, 0)
    assert first == pytest.approx((300 - 1.0 * max(moves, 361 / 4)) / moves)
    assert 1.0 < first < 5.0
    clock.update(10.0, 0)
    assert budget(clock, 19, 250, 1.0) <= (10.0 - 1.0) / 2  # never more than half of what is left


def test_byo_yomi_uses_the_period_minus_the_lag_margin() -> None:
    clock = Clock(SYSTEMS["byoyomi"])
    clock.update(10.0, 2)  # KGS: in byo-yomi, 2 periods left
    assert clock.in_overtime and budget(clock, 19, 100, 1.5) == pytest.approx(8.5)


def test_canadian_overtime_divides_the_period_between_its_stones() -> None:
    clock = Clock(SYSTEMS["canadian"])
    clock.update(40.0, 5)  # 40 s for 5 more moves
    assert budget(clock, 9, 60, 1.0) == pytest.approx((40 - 5 * 1.0) / 5)


def test_short_overtime_periods_keep_a_smaller_lag_reserve() -> None:
    """A 1 s byo-yomi period cannot afford a 1 s reserve: most of it goes to thinking; long periods keep it all."""
    assert overtime_lag(1.0, 1.0) == pytest.approx(0.2)
    short, long = (Clock(TimeControl(TimeSystem.BYOYOMI, period_time=period, periods=5)) for period in (1, 30))
    assert budget(short, 19, 0, 1.0) == pytest.approx(0.8)
    assert budget(long, 19, 0, 1.0) == 29.0


def test_a_canadian_period_of_30_s_for_10_moves_is_mostly_used_and_never_overrun() -> None:
    clock = Clock(TimeControl(TimeSystem.CANADIAN, period_time=30, period_stones=10))
    budgets = []
    for move in range(10):
        budgets.append(budget(clock, 19, 2 * move, 1.0))
        clock.charge(budgets[-1])
    assert all(b >= 0.7 * 3.0 for b in budgets) and 0.7 * 30 <= sum(budgets) < 30
    assert not clock.lost_on_time()


@pytest.mark.parametrize("name", sorted(SYSTEMS))
@pytest.mark.parametrize("size", [9, 19])
def test_never_loses_on_time_over_a_long_game_with_lag(name: str, size: int) -> None:
    settings, lag = SYSTEMS[name], 0.5
    clock = Clock(settings)
    # A very long game: 1.5 plies per point (absolute time cannot survive an endless game: lag alone drains it).
    for move_number in range(0, 3 * size * size // 2, 2):
        seconds = budget(clock, size, move_number, lag_buffer=1.0)
        assert seconds > 0
        clock.charge(seconds + lag)  # the search overshoots by the network/GUI lag
        assert not clock.lost_on_time(), (move_number, clock)


def test_fischer_capped_keeps_to_its_caps() -> None:
    capped = TimeControl(TimeSystem.FISCHER_CAPPED, main_time=20, increment=10, main_time_limit=25,
                         max_time_per_move=4)
    clock = Clock(capped)
    assert budget(clock, 19, 0, 1.0) <= 3.0  # max_time_per_move minus the lag margin
    clock.charge(1.0)
    assert clock.main_left == 25  # 20 - 1 + 10, capped at 25


# ------------------------------------------------------------------- the clock as the server counts it


def test_fischer_does_not_count_the_increment_it_gets_after_the_move() -> None:
    """OGS adds the increment once the move is made: with 1 s on the clock the move has 1 s, not 11 s."""
    clock = Clock(TimeControl(TimeSystem.FISCHER_CAPPED, main_time=60, increment=10, main_time_limit=120,
                              max_time_per_move=-1))
    clock.update(1.0, 0)
    assert budget(clock, 19, 100, 2.0) == pytest.approx(0.05)  # less than the lag reserve left: answer at once
    clock.update(5.0, 0)
    assert budget(clock, 19, 100, 1.0) <= 5.0 - 1.0
    clock.update(30.0, 0)
    assert budget(clock, 19, 100, 1.0) <= 0.5 * (30.0 - 1.0)  # the increment is spent, but only out of the clock


def test_byo_yomi_counts_the_time_left_in_the_current_period() -> None:
    """gtp2ogs and kgsGtp send the seconds left in the period the player is in, not the whole period."""
    clock = Clock(TimeControl(TimeSystem.BYOYOMI, main_time=0, period_time=10, periods=1))
    clock.update(4.0, 1)
    assert budget(clock, 19, 100, 2.0) == pytest.approx(4.0 - 2.0)
    clock.update(1.0, 1)
    assert budget(clock, 19, 100, 0.5) == pytest.approx(0.5)


def test_byo_yomi_in_main_time_may_spill_into_the_first_period_only() -> None:
    clock = Clock(TimeControl(TimeSystem.BYOYOMI, main_time=60, period_time=10, periods=5))
    clock.update(0.5, 0)  # half a second of main time, then five full periods
    assert hard_limit(clock, 1.0) == pytest.approx(0.5 + 10 - 1.0)
    assert budget(clock, 19, 100, 1.0) <= 0.5 + 10 - 1.0


def test_canadian_counts_the_period_and_stones_left() -> None:
    clock = Clock(TimeControl(TimeSystem.CANADIAN, main_time=0, period_time=300, period_stones=25))
    clock.update(6.0, 3)  # 6 s for the 3 moves left in this period
    assert budget(clock, 19, 100, 1.0) == pytest.approx(6.0 / 3 - 1.0)


@pytest.mark.parametrize("control", [
    TimeControl(TimeSystem.ABSOLUTE, main_time=300),
    TimeControl(TimeSystem.FISCHER, main_time=30, increment=10),
    TimeControl(TimeSystem.FISCHER_CAPPED, main_time=30, increment=10, main_time_limit=60, max_time_per_move=-1),
])
@pytest.mark.parametrize("left", [0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 20.0, 100.0])
def test_main_time_budgets_keep_the_whole_lag_reserve(control: TimeControl, left: float) -> None:
    clock = Clock(control)
    clock.update(left, 0)
    for lag in (0.0, 1.0, 2.0):
        assert budget(clock, 9, 30, lag) <= max(0.05, left - lag)


def test_a_late_move_raises_the_reserve_at_once_and_it_gives_way_slowly() -> None:
    lateness = Lateness()
    assert lateness.reserve(19) == ANSWER_SECONDS  # nothing measured: a quiet machine's answer time
    lateness.note(19, 0.4)  # answered 0.4 s after its search's planned end
    assert lateness.reserve(19) == pytest.approx(0.4)
    assert lateness.reserve(9) == ANSWER_SECONDS  # another board size's answers are timed apart
    reserves = []
    for _ in range(4):
        lateness.note(19, -0.02)  # answered in time
        reserves.append(lateness.reserve(19))
    assert reserves == sorted(reserves, reverse=True) and reserves[0] > 0.25 and reserves[-1] > ANSWER_SECONDS
    lateness.note(19, 0.6)
    assert lateness.reserve(19) == pytest.approx(0.6)


def test_less_cpu_keeps_more_for_the_answer() -> None:
    lateness = Lateness()
    lateness.note_share(1.0)
    assert lateness.reserve(13) == ANSWER_SECONDS
    lateness.note_share(0.5)  # half the time it wanted a core, it waited for one
    assert lateness.reserve(13) == pytest.approx(2 * ANSWER_SECONDS)
    lateness.note_share(0.01)  # capped: the answer's work mostly waits to be woken, which a scheduler favours
    assert 2 * ANSWER_SECONDS < lateness.reserve(13) <= 4 * ANSWER_SECONDS
    lateness.note_share(None)  # not measured (not Linux, or too short a move): no change
    assert lateness.reserve(13) == pytest.approx(4 * ANSWER_SECONDS)


def test_a_stall_of_the_machine_is_kept_in_the_reserve_for_two_minutes() -> None:
    stalls = StallWatch(window=120.0)
    lateness = Lateness(stalls=stalls)
    assert lateness.reserve(19) == ANSWER_SECONDS
    stalls.note(0.01)  # an ordinary turn of the scheduler: not a stall
    assert lateness.reserve(19) == ANSWER_SECONDS
    now = time.monotonic()
    stalls.note(0.5, when=now - 121.0)  # long ago: forgotten
    stalls.note(0.3, when=now - 60.0)
    assert lateness.reserve(9) == lateness.reserve(19) == pytest.approx(0.3)  # every board size: the machine's
    stalls.note(0.2)
    assert lateness.reserve(19) == pytest.approx(0.3)  # the longest of the window


def test_cpu_share_of_a_spinning_thread() -> None:
    before = cpu_times()
    if before is None:
        pytest.skip("this system does not report a thread's time waiting for a core")
    end = time.thread_time() + 0.1
    while time.thread_time() < end:
        pass
    share = cpu_share(before, cpu_times())
    assert share is not None and 0.0 < share <= 1.0
    assert cpu_share(before, before) is None  # no time wanted: nothing to tell
