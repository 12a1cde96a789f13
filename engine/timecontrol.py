"""How long to think: the budget of one move under a game clock (absolute, byo-yomi, Canadian, Fischer).

The clock itself (what the controller set, the time left) is :class:`miai.go.clock.Clock`; :func:`budget` answers
"how many seconds may this move take?". Every budget keeps ``lag_buffer`` seconds in reserve
(``player.lag_buffer``) so that network and GUI lag cannot make the engine lose on time; in overtime the reserve
shrinks for short periods (at most 20% of a move's share of the period), since a 1-second byo-yomi period with a
1-second reserve would leave no time to think.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections import deque

from miai.go.clock import Clock, TimeSystem

__all__ = ["Lateness", "StallWatch", "budget", "cpu_share", "cpu_times", "expected_moves_left", "hard_limit",
           "overtime_lag"]

# Never spend more than this share of the time that is left on one move of the main time.
_MAX_SHARE_OF_MAIN = 0.5
# Smallest budget, in seconds, when almost nothing is left: still enough to pick a sensible move.
_MIN_BUDGET = 0.05
# Seconds kept for the answer when no move has been timed yet on a board size: setting the root, the final snapshot,
# choosing the move, answering, and the controller's pipe both ways (the bridges' replays measure 20-40 ms of it on a
# 19x19 board on a quiet machine).
ANSWER_SECONDS = 0.05
# How much of a lateness measured a move ago the next move still keeps (the rest gives way to the new measurement).
_LATENESS_KEPT = 0.75
# The most the engine's own work outside the search is taken to slow down on a busy machine. That work is short and
# mostly waits to be woken (a line read, an answer written), which a scheduler favours over the spinning processes
# beside it: with a tenth of a core for its search threads (load 20 on 2 cores), the bridges' replays measured 50-100
# ms of it, not ten times the 50 ms of a quiet machine.
_MAX_SLOWDOWN = 4.0
# Less CPU time than this (run and waited for) does not tell a thread's share of the CPU.
_MIN_SHARE_SECONDS = 0.05
# How often the stall watch wakes (seconds): each wake-up is one wait for a core that it measures.
_WATCH_INTERVAL = 0.1
# How long a stall measured by the watch is kept in the reserve (seconds): stalls come in bursts while other work holds
# the machine (the bridges' replays with two spinning processes per core saw runs of 0.3-0.7 s a minute or two apart).
_STALL_WINDOW = 120.0
# Waits for a core shorter than this are the scheduler's ordinary turns, not stalls (and are not kept).
_MIN_STALL = 0.02
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
    """Seconds the next move on ``clock`` may take (``math.inf`` when untimed).

    Never more than :func:`hard_limit` (what the clock as the server counts it holds for this move, less the lag
    reserve) nor a fischer-capped ``max_time_per_move`` less the lag reserve; within that, a share of the time
    left that the rest of the game can afford.
    """
    control = clock.control
    if not control.limited:
        return math.inf
    seconds = min(_target(clock, board_size, move_number, lag_buffer), hard_limit(clock, lag_buffer))
    if control.max_time_per_move >= 0:
        seconds = min(seconds, control.max_time_per_move - lag_buffer)
    return max(_MIN_BUDGET, seconds)


def hard_limit(clock: Clock, lag_buffer: float) -> float:
    """The most the next move may take before the flag falls, as the server counts the clock, less the lag reserve
    (may be <= 0: then the move must be answered at once).

    Fischer: the main time left, without the increment (the server adds it after the move). Byo-yomi: the main
    time left plus the time left in the current period (a move that used up a period would lose it). Canadian:
    the main time plus this move's share of the period left (the period's time left over the stones left).
    Absolute: the main time left. Overtime keeps :func:`overtime_lag`; main time alone keeps the whole
    ``lag_buffer``.
    """
    control = clock.control
    if control.system in (TimeSystem.BYOYOMI, TimeSystem.CANADIAN):
        share, nominal = _overtime_share(clock)
        return clock.main_left + share - overtime_lag(lag_buffer, nominal)
    return clock.main_left - lag_buffer


def _overtime_share(clock: Clock) -> tuple[float, float]:
    """(the seconds of overtime the next move may use, the same for a move at the start of a period): in overtime
    from the current period; in main time from the first period (it starts full when main time runs out)."""
    control = clock.control
    if control.system is TimeSystem.CANADIAN:
        stones = max(1, control.period_stones)
        nominal = control.period_time / stones
        if not clock.in_overtime:
            return nominal, nominal
        share = clock.period_left / max(1, clock.stones_left)
        return share, nominal if control.period_stones else share
    if not clock.in_overtime:
        return control.period_time, control.period_time
    return clock.period_left, control.period_time or clock.period_left


def _target(clock: Clock, board_size: int, move_number: int, lag_buffer: float) -> float:
    """The time this move should take to leave enough for the rest of the game (before :func:`hard_limit`)."""
    control = clock.control
    if clock.in_overtime:
        return math.inf  # the period is the plan: hard_limit gives this move its share of it
    moves = expected_moves_left(board_size, move_number)
    # Reserve the lag margin for every move still expected (at least a quarter of the board's points: games
    # outlive estimates), then share the rest out evenly.
    reserve = lag_buffer * max(moves, 0.25 * board_size * board_size)
    target = max(0.0, clock.main_left - reserve) / moves
    if control.fischer:
        # Each move gets the increment back after it: spend most of it, but never more than half of what the
        # clock holds now (the increment of this move is not on it yet).
        return min(target + 0.8 * control.increment, _MAX_SHARE_OF_MAIN * (clock.main_left - lag_buffer))
    if control.system is TimeSystem.ABSOLUTE:
        return min(target, _MAX_SHARE_OF_MAIN * (clock.main_left - lag_buffer))
    # Main time with overtime behind it: the overtime is a safety net, so spend main time a bit faster.
    share, nominal = _overtime_share(clock)
    per_move_overtime = share - overtime_lag(lag_buffer, nominal)
    return max(target, 0.5 * per_move_overtime) + 0.5 * per_move_overtime


class Lateness:
    """How long after its search's time a move is answered on this machine as it is now, measured move by move.

    A move's search is given its clock's budget less this reserve. Two measurements of this game's moves set it:

    - what the search's clock cannot see (a step that ran longer than predicted, the final snapshot and the move
      choice): the time from the search's planned end to the answer, measured after each timed move;
    - the share of the CPU the engine gets: what its own work outside the search costs (the command's line read
      and stamped, the answer written; ``ANSWER_SECONDS`` on a quiet machine) takes that much longer in wall time
      when other processes hold the cores. On Linux a thread's time spent runnable but waiting for a core against
      its time on one (``/proc/thread-self/schedstat``) gives the share, measured over each move (and before the
      first, over the net's warm-up); elsewhere only the first measurement adapts.

    Both rise at once with a slow move and give way slowly (a quarter of the difference a move) when moves are
    answered sooner, so a machine that gets busy makes the next moves keep more: a bot keeps to its clock when it
    gets less CPU than it measured. The lateness is kept per board size, since the answer's work grows with the
    board.

    A third measure covers what no move of the engine can time: after the answer is written, the controller's
    process must be given a core to read it, and on a busy machine the scheduler can keep a process that just woke
    waiting for one for a large part of a second (with two spinning processes per core on a 2-core machine the
    bridges' replays saw a controller read an answer 0.73 s after it was written). ``stalls``
    (:class:`StallWatch`) measures how long the engine's own thread waits for a core when it wakes, all the time;
    the reserve is never less than the longest such wait of the last two minutes, a stall of the same machine.
    """

    def __init__(self, floor: float = ANSWER_SECONDS, stalls: StallWatch | None = None) -> None:
        self.floor = floor
        self.stalls = stalls
        self._seconds: dict[int, float] = {}
        self._slowdown = 1.0  # wall time over CPU time of work that wants a core (1: a core is there when wanted)

    def reserve(self, size: int) -> float:
        """Seconds to keep between the search's end and the answer on a ``size`` board."""
        stall = self.stalls.longest() if self.stalls is not None else 0.0
        return max(self.floor * self._slowdown, self._seconds.get(size, 0.0), stall)

    def note(self, size: int, seconds: float) -> None:
        """A timed move on a ``size`` board was answered ``seconds`` after its search's planned end (negative:
        before it)."""
        self._seconds[size] = _rise_at_once(self._seconds.get(size, 0.0), max(seconds, 0.0))

    def note_share(self, share: float | None) -> None:
        """The engine's thread got ``share`` of the time it wanted a core (None: not measured)."""
        if share is not None:
            self._slowdown = _rise_at_once(self._slowdown, min(_MAX_SLOWDOWN, 1.0 / max(share, 1e-9)))


class StallWatch:
    """The longest time a thread of this process that woke up waited for a core, over the last ``window`` seconds.

    A daemon thread sleeps ``interval`` seconds at a time, and after each wake-up reads how long it was runnable
    but kept off a core (Linux's ``/proc/thread-self/schedstat``; a wait for Python's GIL is not counted, so the
    engine's own work between moves is not taken for the machine's). Waits over 20 ms are kept with their time.
    On a quiet machine the longest is a few milliseconds; with other processes holding every core it is what a
    process that wakes to read a pipe (the controller reading the answer, the engine reading the next command) may
    lose. Where the system does not report it, no thread is started and :meth:`longest` is 0. The thread ends
    by itself once the watch is no longer referenced.
    """

    def __init__(self, interval: float = _WATCH_INTERVAL, window: float = _STALL_WINDOW) -> None:
        self.window = window
        self._stalls: deque[tuple[float, float]] = deque()  # (when, seconds waited), oldest first
        self._lock = threading.Lock()
        if cpu_times() is not None:
            threading.Thread(target=_watch, args=(weakref.ref(self), interval), name="miai-stall-watch",
                             daemon=True).start()

    def note(self, seconds: float, when: float | None = None) -> None:
        """A woken thread waited ``seconds`` for a core (at ``when``, ``time.monotonic()``; now by default)."""
        if seconds >= _MIN_STALL:
            with self._lock:
                self._stalls.append((time.monotonic() if when is None else when, seconds))

    def longest(self) -> float:
        """The longest wait noted in the last ``window`` seconds (0 if none)."""
        now = time.monotonic()
        with self._lock:
            while self._stalls and self._stalls[0][0] < now - self.window:
                self._stalls.popleft()
            return max((seconds for _, seconds in self._stalls), default=0.0)


def _watch(ref: weakref.ReferenceType[StallWatch], interval: float) -> None:
    """The watch's thread: sleep, wake, note the time spent waiting for a core, until the watch is gone."""
    before = cpu_times()
    while True:
        time.sleep(interval)
        after = cpu_times()
        watch = ref()
        if watch is None or before is None or after is None:
            return
        watch.note(after[1] - before[1])
        del watch
        before = after


def _rise_at_once(old: float, new: float) -> float:
    return max(new, _LATENESS_KEPT * old + (1.0 - _LATENESS_KEPT) * new)


def cpu_times() -> tuple[float, float] | None:
    """(seconds on a core, seconds runnable but waiting for one) of the calling thread since it started (Linux's
    schedstat); None where the system does not say."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as handle:
            ran, waited = handle.read().split()[:2]
        return int(ran) / 1e9, int(waited) / 1e9
    except (OSError, ValueError):
        return None


def cpu_share(before: tuple[float, float] | None, after: tuple[float, float] | None) -> float | None:
    """The share of the time a thread wanted a core that it got, between two :func:`cpu_times` (None: unknown, or
    too little time wanted to tell)."""
    if before is None or after is None:
        return None
    ran, waited = after[0] - before[0], after[1] - before[1]
    return ran / (ran + waited) if ran + waited >= _MIN_SHARE_SECONDS else None
