"""Test doubles for the GTP layer: a deterministic player, and helpers to drive a session in-process.

Nothing here is part of the package: the GTP layer must be fully testable without the search.
"""

from __future__ import annotations

import io
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from miai.go.clock import TimeControl
from miai.go.coords import PASS, Color
from miai.go.state import GameState
from miai.gtp.player import (
    AnalysisSnapshot,
    AnalyzeRequest,
    ClockReading,
    Emit,
    GenmoveResult,
    MoveInfo,
    Player,
    RootInfo,
)
from miai.gtp.config import GtpConfig
from miai.gtp.session import GtpSession


@dataclass
class FakePlayer(Player):
    """A deterministic player.

    genmove: the next scripted move if any (``script``), else a seeded random legal move (never filling its
    own single-point eyes is not attempted: it is a fake), or pass when ``always_pass``.
    analyze: emits a fixed two-move snapshot (built from the first legal moves) until ``stop`` is set, at least
    once. Every call is recorded in ``calls``.
    """

    seed: int = 1
    script: list[GenmoveResult] = field(default_factory=list)
    always_pass: bool = False
    dead: list[int] = field(default_factory=list)
    handicap_points: list[int] | None = None
    params: dict[str, str] = field(default_factory=lambda: {"maxVisits": "100"})
    max_snapshots: int = 1000
    calls: list[tuple[str, Any]] = field(default_factory=list)
    time_control: TimeControl | None = None
    clock: list[ClockReading] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def genmove(
        self,
        state: GameState,
        color: Color,
        *,
        cleanup: bool = False,
        analysis: AnalyzeRequest | None = None,
        emit: Emit | None = None,
    ) -> GenmoveResult:
        self.calls.append(("genmove", (color, cleanup)))
        if analysis is not None and emit is not None:
            emit(self.snapshot(state, color, analysis))
        if self.script:
            return self.script.pop(0)
        if self.always_pass:
            return PASS
        legal = state.legal_moves(color)
        return self._rng.choice(legal) if legal else PASS

    def snapshot(self, state: GameState, color: Color, request: AnalyzeRequest) -> AnalysisSnapshot:
        """Two candidate moves with fixed numbers (from ``color``'s view), ownership +0.5 everywhere."""
        legal = sorted(state.legal_moves(color))[:2] or [PASS]
        infos = tuple(
            MoveInfo(
                move=move,
                visits=100 - 40 * order,
                winrate=0.6 - 0.1 * order,
                prior=0.5 - 0.2 * order,
                lcb=0.55 - 0.1 * order,
                pv=(move, legal[-1 - order]),
                score_lead=2.5 - order,
                score_mean=2.5 - order,
                score_stdev=10.0,
                utility=0.2,
                edge_visits=100 - 40 * order,
                pv_visits=(100 - 40 * order, 10),
            )
            for order, move in enumerate(legal)
        )
        area = state.size * state.size
        return AnalysisSnapshot(
            moves=infos,
            root=RootInfo(visits=160, winrate=0.6, score_lead=2.5, utility=0.2),
            ownership=[0.5] * area if request.ownership else None,
            ownership_stdev=[0.25] * area if request.ownership_stdev else None,
        )

    def analyze(
        self, state: GameState, color: Color, request: AnalyzeRequest, emit: Emit, stop: threading.Event
    ) -> None:
        self.calls.append(("analyze", (color, request)))
        for _ in range(self.max_snapshots):
            emit(self.snapshot(state, color, request))
            if stop.wait(request.interval if request.interval is not None else 1.0):
                return

    def final_status(self, state: GameState) -> list[int]:
        self.calls.append(("final_status", None))
        return list(self.dead)

    def free_handicap(self, state: GameState, count: int) -> list[int] | None:
        return None if self.handicap_points is None else list(self.handicap_points)

    def raw_nn(self, state: GameState, symmetry: int | None, optimism: float) -> str:
        return f"symmetry {symmetry}\nwhiteWin 0.5\noptimism {optimism:g}"

    def set_time_control(self, control: TimeControl) -> None:
        self.time_control = control

    def time_left(self, reading: ClockReading) -> None:
        self.clock.append(reading)

    def get_param(self, name: str) -> str:
        return self.params[name]

    def set_param(self, name: str, value: str) -> None:
        if name not in self.params:
            raise KeyError(name)
        if not value.isdigit():
            raise ValueError("expected an integer")
        self.params[name] = value

    def search_stats(self) -> dict[str, Any]:
        return {"calls": len(self.calls), "name": "fake"}

    def on_state_changed(self, state: GameState) -> None:
        self.calls.append(("state_changed", len(state.moves)))


class Driver:
    """Executes lines one at a time on an in-process session and returns each response text."""

    def __init__(self, player: Player | None = None, config: GtpConfig | None = None) -> None:
        self.player = player if player is not None else FakePlayer()
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.session = GtpSession(self.player, io.StringIO(), self.out, self.err, config)

    def raw(self, line: str) -> str:
        """Everything written to stdout for ``line``."""
        start = self.out.tell()
        self.session.handle_line(line)
        self.out.seek(start)
        written = self.out.read()
        return written

    def ok(self, line: str) -> str:
        """The content of a successful response (asserts success and framing)."""
        written = self.raw(line)
        assert written.startswith("=") and written.endswith("\n\n"), written
        head, _, body = written[:-2].partition(" ")
        return body

    def fail(self, line: str) -> str:
        """The message of a failed response (asserts failure)."""
        written = self.raw(line)
        assert written.startswith("?") and written.endswith("\n\n"), written
        return written[:-2].partition(" ")[2]


def run_transcript(text: str, player: Player | None = None, config: GtpConfig | None = None) -> tuple[str, str]:
    """Run a whole session over ``text`` as stdin (with the reader thread); returns (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    session = GtpSession(player if player is not None else FakePlayer(), io.StringIO(text), out, err, config)
    assert session.run() == 0
    return out.getvalue(), err.getvalue()


class SharedBuffer(io.StringIO):
    """A StringIO written by the session thread and polled by the test thread."""

    def __init__(self) -> None:
        super().__init__()
        self._changed = threading.Condition()

    def write(self, text: str) -> int:
        with self._changed:
            written = super().write(text)
            self._changed.notify_all()
            return written

    def wait_for(self, predicate: Any, timeout: float = 10.0) -> str:
        """Wait until ``predicate(text so far)`` holds; returns the text (assertion error on timeout)."""
        with self._changed:
            ok = self._changed.wait_for(lambda: predicate(self.getvalue()), timeout)
            assert ok, f"timed out; output so far: {self.getvalue()!r}"
            return self.getvalue()


class LiveSession:
    """A session running ``run()`` on its own thread, fed through a real pipe like a controller would."""

    def __init__(self, player: Player | None = None, config: GtpConfig | None = None) -> None:
        import os

        read_fd, self._write_fd = os.pipe()
        self._stdin = os.fdopen(read_fd, "r", encoding="utf-8")
        self.out, self.err = SharedBuffer(), SharedBuffer()
        self.player = player if player is not None else FakePlayer()
        self.session = GtpSession(self.player, self._stdin, self.out, self.err, config)
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.exit_code = self.session.run()

    def send(self, text: str) -> None:
        """Write raw text (include the newlines) to the engine's stdin."""
        import os

        os.write(self._write_fd, text.encode())

    def close_input(self) -> None:
        """End of input, as when the controller closes the pipe."""
        import os

        if self._write_fd >= 0:
            os.close(self._write_fd)
            self._write_fd = -1

    def join(self, timeout: float = 10.0) -> None:
        """Wait for the session to end, then close the pipe (EOF first, so the reader thread lets go of it)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "session did not end"
        self.close_input()
        self.session_reader_done(timeout)
        self._stdin.close()

    def session_reader_done(self, timeout: float) -> None:
        reader = self.session._reader  # noqa: SLF001 - test helper waits for the reader thread it cannot see
        if reader is not None:
            reader._thread.join(timeout)  # noqa: SLF001
