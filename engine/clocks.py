"""The player's side of the game clock: how long each genmove may search, and what it is charged.

:class:`PlayerClocks` is the one home of the engine's time keeping in a game: the controller's time control and one
:class:`~miai.go.clock.Clock` per colour (``time_settings``, ``time_left``), when the command being run could start
(its clock's start), how long one search batch takes on each board size (measured: the search does not begin a
step that would end past its time), and how late answers come on this machine as it is now
(:class:`~miai.engine.timecontrol.Lateness`). :func:`~miai.engine.timecontrol.budget` answers how long one move may
take on a clock; this class turns it into the search's time for one genmove and charges the move to its clock.

Time: a move's clock starts when ``genmove`` is called (or when its command could start, if later), so the net's
first run on a new board size and tree reuse are charged to it; a clock's budget is met by the search not beginning
a step that would end past it (it checks the time between batches); a genmove with no limit at all gets the default
``search.max_time`` and a warning.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from miai.engine.config import Config, SearchConfig
from miai.engine.core.search import leaves_per_batch
from miai.engine.core.snapshot import Snapshot
from miai.engine.timecontrol import Lateness, StallWatch, budget, cpu_share, cpu_times
from miai.go.clock import Clock, TimeControl, TimeSystem
from miai.go.coords import Color
from miai.go.state import GameState
from miai.gtp.player import ClockReading

__all__ = ["MoveStart", "PlayerClocks"]

log = logging.getLogger(__name__)

# A genmove whose config sets no limit at all (analysis configs) searches this long: the built-in max_time.
_UNLIMITED_GENMOVE_SECONDS = SearchConfig().max_time
# Share of a clock's budget kept against the scheduler's jitter on a busy machine (a batch that takes longer than the
# last).
_JITTER_SHARE = 0.03
# Shortest search time handed to the search (0 would mean "no limit" to it).
_MIN_SEARCH_SECONDS = 0.001


@dataclass(frozen=True)
class MoveStart:
    """When a move's clock started: ``wall`` on the monotonic clock, ``cpu`` the thread's CPU times then
    (:func:`~miai.engine.timecontrol.cpu_times`; None where the system does not say)."""

    wall: float
    cpu: tuple[float, float] | None


class PlayerClocks:
    """Both colours' clocks and what the engine has measured of its own timing (see the module docstring)."""

    def __init__(self) -> None:
        self._time_control = TimeControl()
        self._clocks: dict[Color, Clock] = {}
        self._arrival: float | None = None  # when the command being run could start (command_arrived)
        self._batch_seconds: dict[int, float] = {}  # board size -> seconds one search batch takes (measured)
        # How long after its search's time a move is answered (measured), and how long a woken thread waits for a core.
        self._lateness = Lateness(stalls=StallWatch())
        self._warned_unlimited = False

    # --------------------------------------------------------------------------- what the controller says
    def command_arrived(self, when: float) -> None:
        """A genmove's clock starts when its command could start (the session says so before running each line)."""
        self._arrival = when

    def set_time_control(self, control: TimeControl) -> None:
        """Store the clock (both colours) and restart both clocks at full time."""
        self._time_control = control
        self._clocks = {}

    def time_left(self, reading: ClockReading) -> None:
        """Synchronise one colour's clock with the controller's.

        Without a clock set (no time settings, or settings refused as gtp2ogs's first-move fallback can send them)
        the reading alone is the clock: ``T 0`` is T seconds of absolute time, ``T N`` T seconds for N moves.
        """
        if not self._time_control.limited:
            self._clocks[reading.color] = Clock(_clock_from_reading(reading))
        self._clock(reading.color).update(reading.seconds, reading.stones)

    # ------------------------------------------------------------------------------------- one genmove
    def start_move(self) -> MoveStart:
        """The clock of the move about to be searched starts: the controller's clock runs since the command could
        start (its line's arrival, or the answer to the command before it when it was queued behind one), so
        everything from then on is charged to the move."""
        wall = min(time.monotonic(), self._arrival or math.inf)
        self._arrival = None
        return MoveStart(wall, cpu_times())

    def move_seconds(self, root: GameState, color: Color, start: float, config: Config) -> tuple[float, float | None]:
        """How long the search of this move may run from now (0 = no time limit; visits then end it), and when the
        clock's budget wants its search ended (None: no clock limits it, or it wants the move answered at once).

        The clock's budget and ``max_time`` count from ``start``; the search does not begin a step that would end
        past the time it is given (:meth:`step_seconds` tells it how long a batch took before). Only the clock's
        budget gives up a share and the answer's time (:class:`~miai.engine.timecontrol.Lateness`, as measured in
        this game), for the controller counts them against the clock; ``max_time`` is the search's own time, as
        KataGo's ``maxTime`` (its ``lagBuffer`` applies to time controls only; with both taken off, a move under
        ``max_time`` 0.5 searched 0.44 s beside KataGo's 0.5 s).
        """
        cfg = config.search
        cap = cfg.max_time or math.inf
        budget = self._time_budget(root, color, config.player.lag_buffer)
        if math.isinf(budget) and math.isinf(cap):
            if cfg.max_visits or cfg.max_playouts:
                return 0.0, None
            self._warn_unlimited()
            cap = _UNLIMITED_GENMOVE_SECONDS
        clocked = (1.0 - _JITTER_SHARE) * budget - self._lateness.reserve(root.size)
        limit = min(cap, clocked)
        seconds = limit - (time.monotonic() - start)
        # A move answered at once (the clock holds less than the reserve) tells nothing of how late answers are.
        deadline = start + clocked if math.isfinite(clocked) and seconds > 0 else None
        return max(_MIN_SEARCH_SECONDS, seconds), deadline

    def _warn_unlimited(self) -> None:
        if not self._warned_unlimited:
            self._warned_unlimited = True
            log.warning("genmove: search.max_visits, max_playouts and max_time are all 0 (no limit) and no clock "
                        "is set; each move searches %.1f s. Set search.max_time or a clock to change it.",
                        _UNLIMITED_GENMOVE_SECONDS)

    def note_batch_time(self, size: int, snapshot: Snapshot, calls: int, config: SearchConfig, max_batch: int) -> None:
        """Update the estimate of how long the last batch of a search takes, from a finished search that made
        ``calls`` evaluator calls: the mean call, or the search's time per playout times the size of its last
        batch (batches grow with the root's visits, so the last one is the biggest), whichever is longer."""
        playouts, elapsed = snapshot.playouts, snapshot.elapsed
        if calls < 2 or playouts < 2:  # too short to tell (and dominated by tree reuse and the root's evaluation)
            return
        last = leaves_per_batch(config, max_batch, snapshot.root.visits)
        seconds = max(elapsed / calls, elapsed / playouts * last)
        old = self._batch_seconds.get(size)
        # Rise at once, decay slowly: a slow batch (a busy machine) is what could overrun the clock.
        self._batch_seconds[size] = seconds if old is None else max(seconds, 0.5 * (old + seconds))

    def answered(self, color: Color, start: MoveStart, deadline: float | None, seconds: float,
                 snapshot: Snapshot, size: int) -> None:
        """The move is answered now: charge its time to ``color``'s clock, and when a clock's budget set its
        search's end (``deadline``), learn how late after it the answer came and the CPU share the move got."""
        answered = time.monotonic()
        if deadline is not None:
            share = cpu_share(start.cpu, cpu_times())
            log.debug("genmove: %.3f s, the search %.3f s of %.3f s, answered %+.3f s after the search's planned end "
                      "(%.3f s kept for it); the CPU %s of the time it was wanted", answered - start.wall,
                      snapshot.elapsed, seconds, answered - deadline, self._lateness.reserve(size),
                      "?" if share is None else f"{share:.0%}")
            self._lateness.note(size, answered - deadline)
            self._lateness.note_share(share)
        self.charge(color, answered - start.wall)

    def charge(self, color: Color, seconds: float) -> None:
        """``color``'s clock loses ``seconds`` (a move it played)."""
        self._clock(color).charge(seconds)

    # ---------------------------------------------------------------------------- the machine's timing
    def step_seconds(self, size: int) -> float:
        """How long one search batch took on a ``size`` board (0: not measured yet)."""
        return self._batch_seconds.get(size, 0.0)

    def has_batch_time(self, size: int) -> bool:
        """Whether a batch on a ``size`` board has been timed (the net warmed up for it)."""
        return size in self._batch_seconds

    def note_warm_up(self, size: int, seconds: float, cpu: tuple[float, float] | None) -> None:
        """The net's warm-up on a ``size`` board timed one batch at ``seconds``; the CPU the thread got since
        ``cpu`` (:func:`~miai.engine.timecontrol.cpu_times` when the warm-up began) is the first move's guess at
        the share it gets."""
        self._batch_seconds[size] = seconds
        self._lateness.note_share(cpu_share(cpu, cpu_times()))

    def _clock(self, color: Color) -> Clock:
        if color not in self._clocks:
            self._clocks[color] = Clock(self._time_control)
        return self._clocks[color]

    def _time_budget(self, state: GameState, color: Color, lag_buffer: float) -> float:
        return budget(self._clock(color), state.size, len(state.moves), lag_buffer)


def _clock_from_reading(reading: ClockReading) -> TimeControl:
    """The clock a lone ``time_left`` describes: absolute time (stones 0) or a Canadian period of ``stones``
    moves (a byo-yomi period read the same way, with one move per period, is never longer)."""
    if reading.stones == 0:
        return TimeControl(TimeSystem.ABSOLUTE, main_time=max(0.0, reading.seconds))
    return TimeControl(TimeSystem.CANADIAN, period_time=max(0.0, reading.seconds), period_stones=reading.stones)
