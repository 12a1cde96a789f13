"""One run of the search: its root and what holds for the run there, its limits, its counters, and the two questions
every loop asks them.

A :class:`Run` is made by ``Search.run`` and handed to what the run does: the playouts (miai.engine.core.playout), which
start at its root, keep to its root filter and count its transpositions, and the selection at its root
(miai.engine.core.selection), which adds its ending bonus. Both of the search's loops (one batch at
a time, and the overlapped loop that collects a batch while the net evaluates the one before) ask the same run how
many playouts the next batch may begin (:meth:`Run.budget`) and hand it the same counts, so every limit is read
against what the run actually did, whichever loop did it; progress reports (:meth:`Run.report`) read the same counts.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from miai.engine.core.graph import Node, Stats
from miai.engine.core.rootsetup import RootFacts
from miai.engine.core.searchstats import Transpositions

if TYPE_CHECKING:
    from miai.engine.core.movechoice import AvoidUntil
    from miai.engine.core.snapshot import Snapshot

__all__ = ["Limits", "Run"]

# Steps whose lengths predict the next one's (the longest of them).
_STEPS_KEPT = 4
# Seconds between two hands of the GIL to threads waiting for it (Run.budget): CPython's own switch interval.
_YIELD_SECONDS = 0.005
# Seconds a run that may be stopped waits for the net before it looks at its stop event again.
_STOP_POLL = 0.01


@dataclass(frozen=True, slots=True)
class Limits:
    """When a run stops (0 = no such limit), as KataGo's maxVisits, maxPlayouts and maxTime."""

    visits: int = 0  # root visits, those kept from earlier searches included (KataGo's maxVisits)
    playouts: int = 0  # playouts begun by this run, the passing hack's not counted (KataGo's maxPlayouts)
    seconds: float = 0.0  # from the run's start; no step is begun that would end past it
    nodes: int = 0  # the graph's size (search.max_nodes)


class Run:
    """The state of one search run that its loop, its budget, its playouts and its progress reports share.

    ``facts``: what holds at the root (:class:`RootFacts`); ``trans``: the run's transposition statistics;
    ``playouts``: playouts begun (a leaf collected counts at once, before its evaluation comes back);
    ``in_flight``: the leaves among them waiting for the net. ``hack_playouts``: the playouts of the passing hack
    (search.more_passing_hacks), which no limit counts, as in KataGo."""

    def __init__(self, root: Node, facts: RootFacts, limits: Limits, *, start: float,
                 stop: threading.Event | None, batch: Callable[[int], int], graph_size: Callable[[], int],
                 snapshot: Callable[[Run, int, float], Snapshot],
                 on_progress: Callable[[Snapshot], None] | None = None, interval: float = 1.0,
                 step_seconds: float = 0.0, avoid_until: AvoidUntil | None = None) -> None:
        self.root = root
        self.facts = facts
        self.permitted = facts.permitted  # (read per playout)
        self.superko = facts.superko
        self.go = facts.go
        self.ending = facts.ending
        self.avoid_until = avoid_until  # the analysis's avoid/allow below the root (None: none there)
        self.trans = Transpositions()
        self.limits = limits
        self.stop = stop
        self.start = start  # (time.monotonic())
        self.playouts = 0
        self.in_flight = 0
        self.hack_playouts = 0
        self._batch = batch  # leaves a batch may collect at a given number of root visits
        self._graph_size = graph_size
        self._snapshot = snapshot
        self._on_progress = on_progress
        self._interval = interval
        self._next_report = self.start + interval
        self._last_call: float | None = None  # when budget() was called last: a step is the time between two calls
        self._next_yield = 0.0  # when budget() hands the GIL to waiting threads next
        # The latest steps' lengths, the first guess (the player's, from this game's earlier moves) among them.
        self._steps: deque[float] = deque([step_seconds], maxlen=_STEPS_KEPT)

    def ending_utility(self, move: int, stats: Stats) -> float:
        """The utility (White's view) a root child with statistics ``stats`` gains from ``move``'s ending bonus."""
        return self.facts.ending_utility(move, stats)

    @property
    def elapsed(self) -> float:
        """Seconds since the run began."""
        return time.monotonic() - self.start

    @property
    def finished(self) -> int:
        """Playouts whose results are in the graph (begun and not waiting for the net)."""
        return self.playouts - self.in_flight

    def budget(self) -> int:
        """How many playouts the next batch may begin: 0 once ``stop`` is set or a limit is reached."""
        if self.stop is not None and self.stop.is_set():
            return 0
        # Hand the GIL to any thread waiting for it, once every _YIELD_SECONDS. Without this, the GTP reader (stamping
        # a command's arrival, which starts the clock) and the main thread (stopping a ponder) were measured waiting
        # up to 0.5 s behind a pondering search in a young engine process; with it, under 10 ms. Not every step: a
        # sleep(0) costs 14 us at real-time priority and 70 us at normal priority (the kernel's timer slack), about
        # 5% of a search whose steps are short (small batches, a fast net).
        now = time.monotonic()
        if now >= self._next_yield:
            time.sleep(0)
            now = time.monotonic()
            self._next_yield = now + _YIELD_SECONDS
        # A step that would end past the time cap is not begun. The longest of the last few steps (the search's
        # Python as well as the net, in wall time) predicts the next one: on a machine busy with other work the
        # process gets the CPU in slices, and one step in a few is much slower than the rest. A batch in flight is
        # not waited for past the cap (expired), so stopping costs one step, overlapped or not.
        if self._last_call is not None:
            self._steps.append(now - self._last_call)
        self._last_call = now
        limits = self.limits
        if (limits.seconds and now + max(self._steps) - self.start >= limits.seconds) \
                or self._graph_size() >= limits.nodes:
            return 0
        left = self._batch(self.root.visits)
        if limits.visits:
            left = min(left, limits.visits - self.root.visits - self.in_flight)
        if limits.playouts:
            left = min(left, limits.playouts - self.playouts + self.hack_playouts)
        return max(0, left)

    def wait_limit(self) -> float | None:
        """How long to wait for a batch in flight before asking :meth:`expired` again: until the time cap, and a
        moment at a time where ``stop`` may be set (None: as long as the net takes)."""
        left = self.start + self.limits.seconds - time.monotonic() if self.limits.seconds else None
        if self.stop is not None:
            left = _STOP_POLL if left is None else min(left, _STOP_POLL)
        return None if left is None else max(0.0, left)

    def expired(self) -> bool:
        """Whether a batch still in flight is given up: the time cap is reached or ``stop`` is set (what was
        searched is answered; waiting for the net would run past the time)."""
        return ((self.stop is not None and self.stop.is_set())
                or bool(self.limits.seconds and time.monotonic() - self.start >= self.limits.seconds))

    def collected(self, done: int, leaves: int) -> None:
        """A batch was collected: ``done`` playouts finished without the net, ``leaves`` wait for it."""
        self.playouts += done + leaves
        self.in_flight += leaves

    def applied(self, leaves: int) -> None:
        """``leaves`` evaluations came back and were backed up (or abandoned)."""
        self.in_flight -= leaves

    def abandoned(self, leaves: int) -> None:
        """``leaves`` in flight were given up (their batch could not finish in time): they were never played."""
        self.playouts -= leaves
        self.in_flight -= leaves

    def report(self) -> None:
        """Send a progress snapshot if one is due: the playouts whose results it shows."""
        if self._on_progress is not None and time.monotonic() >= self._next_report:
            self._next_report = time.monotonic() + self._interval
            self._on_progress(self._snapshot(self, self.finished, self.elapsed))
