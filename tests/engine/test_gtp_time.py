"""Thinking time over GTP: every genmove ends, quit always works, overtime periods are used and never overrun,
and the first move on a new board size keeps to its budget.

The clock tests use a uniform evaluator that sleeps a fixed time per batch, like a net on a slow machine, so the
timings mean the same on a busy test machine as on a quiet one.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

import pytest

from miai.engine.config import Config, apply_overrides
from miai.engine.player import EnginePlayer
from miai.engine.timecontrol import StallWatch
from miai.go.state import GameState
from miai.gtp.config import GtpConfig
from miai.gtp.player import ClockReading
from miai.gtp.session import GtpSession
from miai.nets.evaluator import Evaluation, UniformEvaluator
from tests.gtp.fakes import LiveSession

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


class SlowEvaluator(UniformEvaluator):
    """A uniform evaluator taking ``batch_seconds`` per call, and ``first_run_seconds`` more on the first call for
    each board size (what onnxruntime does when it meets a new input shape)."""

    def __init__(self, batch_seconds: float = 0.03, first_run_seconds: float = 0.0) -> None:
        super().__init__()
        self.batch_seconds = batch_seconds
        self.first_run_seconds = first_run_seconds
        self.sizes_seen: set[int] = set()
        self._lock = threading.Lock()

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        with self._lock:
            size = states[0].size
            if size not in self.sizes_seen:
                self.sizes_seen.add(size)
                time.sleep(self.first_run_seconds)
            time.sleep(self.batch_seconds)
            return super().evaluate(states)


class _QuietMachine(StallWatch):
    """A stall watch that measures nothing: these tests time the engine against an evaluator of fixed speed, and
    the waits for a core that the machine running them has (other tests, other work) are not their subject; the
    test of the stall reserve sets its own."""

    def note(self, seconds: float, when: float | None = None) -> None:
        pass


@pytest.fixture(autouse=True)
def _quiet_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("miai.engine.clocks.StallWatch", _QuietMachine)


def _config(*sets: str) -> Config:
    return apply_overrides(Config(), ["search.seed=3", *sets])


class Gtp:
    """An in-process session driven line by line; ``timed`` returns (seconds, response)."""

    def __init__(self, player: EnginePlayer, size: int = 9) -> None:
        self.out = io.StringIO()
        self.session = GtpSession(player, io.StringIO(), self.out, io.StringIO(), GtpConfig(board_size=size))

    def timed(self, line: str) -> tuple[float, str]:
        start_at = self.out.tell()
        start = time.monotonic()
        self.session.handle_line(line)
        elapsed = time.monotonic() - start
        self.out.seek(start_at)
        response = self.out.read()
        assert response.startswith("="), (line, response)
        return elapsed, response.strip()


# ----------------------------------------------------------------------------------- every genmove ends


def test_genmove_without_any_limit_ends_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    player = EnginePlayer(SlowEvaluator(0.001), _config("search.max_visits=0", "search.max_playouts=0",
                                                        "search.max_time=0"))
    gtp = Gtp(player)
    with caplog.at_level(logging.WARNING):
        elapsed, response = gtp.timed("genmove b")
    assert elapsed < 3.0 and response != "= pass"
    assert any("no limit" in record.getMessage() for record in caplog.records)


def _engine(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "miai.engine", "gtp", "--model", "uniform", *args], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _response(engine: subprocess.Popen[str], deadline: float) -> str:
    """The next response (lines up to the blank line), failing if it takes past ``deadline`` (monotonic)."""

    def read(stdout: TextIO, lines: list[str]) -> None:
        for line in stdout:
            if not line.strip():
                break
            lines.append(line.strip())

    return "\n".join(_read_by(engine, read, deadline))


def _first_lines(engine: subprocess.Popen[str], count: int, deadline: float) -> list[str]:
    """The next ``count`` lines of output (an ongoing response's head), failing if they take past ``deadline``."""

    def read(stdout: TextIO, lines: list[str]) -> None:
        while len(lines) < count:
            line = stdout.readline()
            if not line:
                return
            lines.append(line.strip())

    lines = _read_by(engine, read, deadline)
    if len(lines) < count:
        engine.kill()
        pytest.fail(f"output ended early; read so far: {lines!r}")
    return lines


def _read_by(engine: subprocess.Popen[str], read: Callable[[TextIO, list[str]], None], deadline: float
             ) -> list[str]:
    """Run ``read`` on the engine's output in a thread and return the lines it collected, killing the engine and
    failing the test if it is still reading at ``deadline`` (monotonic)."""
    stdout = engine.stdout
    assert stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=read, args=(stdout, lines), daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if reader.is_alive():
        engine.kill()
        pytest.fail(f"no response in time; read so far: {lines!r}")
    return lines


def test_analysis_config_genmove_returns_and_quit_is_answered() -> None:
    """configs/analysis.toml sets no limit (for kata-analyze); genmove must still answer, and quit end it."""
    engine = _engine("--config", "analysis")
    assert engine.stdin is not None
    engine.stdin.write("genmove b\n")
    engine.stdin.flush()
    sent = time.monotonic()
    assert _response(engine, sent + 20.0).startswith("= ")  # start-up plus the bounded search
    engine.stdin.write("quit\n")
    engine.stdin.flush()
    assert _response(engine, time.monotonic() + 5.0) == "="
    assert engine.wait(5.0) == 0
    assert engine.stderr is not None and "no limit" in engine.stderr.read()


def test_quit_sent_during_a_long_genmove_stops_it() -> None:
    engine = _engine("--set", "search.max_visits=0", "--set", "search.max_time=120")
    assert engine.stdin is not None
    engine.stdin.write("name\n")
    engine.stdin.flush()
    assert _response(engine, time.monotonic() + 20.0) == "= miai"  # started
    engine.stdin.write("genmove b\n")
    engine.stdin.flush()
    time.sleep(0.5)  # the search is running
    engine.stdin.write("quit\n")
    engine.stdin.flush()
    quit_sent = time.monotonic()
    assert _response(engine, quit_sent + 5.0).startswith("= ")  # the best move so far, well before 120 s
    assert _response(engine, quit_sent + 5.0) == "="
    assert engine.wait(5.0) == 0


def test_quit_sent_while_pondering_is_answered_and_the_process_ends() -> None:
    engine = _engine("--size", "19", "--set", "player.ponder=true", "--set", "search.max_time=0.3")
    assert engine.stdin is not None
    engine.stdin.write("genmove b\n")
    engine.stdin.flush()
    assert _response(engine, time.monotonic() + 20.0).startswith("= ")
    time.sleep(2.0)  # pondering on the opponent's time, the graph growing
    engine.stdin.write("quit\n")
    engine.stdin.flush()
    quit_sent = time.monotonic()
    assert _response(engine, quit_sent + 5.0) == "="
    assert engine.wait(5.0) == 0


def test_quit_queued_behind_a_genmove_waits_its_turn() -> None:
    """Scripts pipe "genmove b" and "quit" together: that genmove is not cut short."""
    player = EnginePlayer(SlowEvaluator(0.01), _config("search.max_visits=0", "search.max_time=0.6"))
    out = io.StringIO()
    session = GtpSession(player, io.StringIO("genmove b\nmiai-search_stats\nquit\n"), out, io.StringIO())
    assert session.run() == 0
    responses = out.getvalue().split("\n\n")
    assert responses[0].startswith("= ") and responses[2].strip() == "="
    assert '"seconds": 0.' in responses[1]
    seconds = float(responses[1].split('"seconds": ')[1].split("}")[0].split(",")[0])
    assert seconds >= 0.4


# ------------------------------------------------------------------------------------------- overtime


def test_byo_yomi_periods_of_one_second_are_mostly_used_and_never_overrun() -> None:
    gtp = Gtp(EnginePlayer(SlowEvaluator(0.03), _config("search.max_visits=0", "search.max_time=0")))
    gtp.timed("kgs-time_settings byoyomi 0 1 5")
    times = [gtp.timed(f"genmove {color}")[0] for color in "bwbwbw"]
    # 0.2 s lag reserve, then 3% and 50 ms kept, and a 30 ms step not begun when it would end past the limit
    assert all(0.65 <= t < 1.0 for t in times), times


def test_canadian_period_is_shared_out_and_mostly_used() -> None:
    """30 s for 10 moves: about 3 s a move, of which at least 70% is used and never all of it."""
    gtp = Gtp(EnginePlayer(SlowEvaluator(0.03), _config("search.max_visits=0", "search.max_time=0")))
    gtp.timed("time_settings 0 30 10")
    elapsed, _ = gtp.timed("genmove b")
    assert 0.7 * 3.0 <= elapsed < 3.0


def test_max_time_is_kept_even_with_slow_batches() -> None:
    """The search looks at the clock only between batches; the last batch must still end within max_time."""
    gtp = Gtp(EnginePlayer(SlowEvaluator(0.2), _config("search.max_visits=0", "search.max_time=1.0")))
    times = [gtp.timed(f"genmove {color}")[0] for color in "bwb"]
    assert all(0.6 <= t < 1.0 for t in times), times


def test_max_time_is_the_search_time_as_katagos_max_time() -> None:
    """Without a clock, max_time is the search's own time, as KataGo's maxTime: no share of it and no answer time is
    kept back (the clock's reserve took 0.08 s of every second, and equal-time matches against KataGo were not)."""
    player = EnginePlayer(SlowEvaluator(0.01), _config("search.max_visits=0", "search.max_time=1.0"))
    gtp = Gtp(player)
    for color in "bw":
        elapsed, _ = gtp.timed(f"genmove {color}")
        searched = player.search_stats()["last_run"]["seconds"]
        assert 0.94 <= searched <= elapsed < 1.1, (searched, elapsed)


class StalledClock(EnginePlayer):
    """An engine slow to reach its genmove: each clock reading takes ``stall`` seconds more (as stopping a ponder
    search, or being off a core on a busy machine, delays the commands before the genmove)."""

    def __init__(self, evaluator: SlowEvaluator, config: Config, stall: float) -> None:
        super().__init__(evaluator, config)
        self.stall = stall

    def time_left(self, reading: ClockReading) -> None:
        time.sleep(self.stall)
        super().time_left(reading)


def test_a_genmove_sent_with_its_clock_answers_within_the_clock_counted_from_the_clocks_arrival() -> None:
    """gtp2ogs writes the clock readings and the genmove in one go, its clock running from then: the time the engine
    takes to reach the genmove is on that clock. Byo-yomi, a 2 s period with a 0.2 s reserve: 1.8 s from the
    write to the answer, however slow the two time_left commands before the genmove were."""
    player = StalledClock(SlowEvaluator(0.02), _config("search.max_visits=0", "search.max_time=0",
                                                        "player.lag_buffer=0.2"), stall=0.4)
    live = LiveSession(player)
    live.send("kgs-time_settings byoyomi 0 2 1\nboardsize 9\n")
    live.out.wait_for(lambda text: text.count("\n\n") == 2, 30.0)
    sent = time.monotonic()
    live.send("time_left black 2 1\ntime_left white 2 1\ngenmove black\n")
    text = live.out.wait_for(lambda text: text.count("\n\n") == 5, 30.0)
    elapsed = time.monotonic() - sent
    assert text.split("\n\n")[4].startswith("= "), text
    assert 0.9 <= elapsed <= 1.8, elapsed  # it searched, and answered within the period less the reserve
    live.send("quit\n")
    live.join()


class _Stalled(_QuietMachine):
    """A machine that kept the engine's woken thread off a core for ``STALL`` seconds a moment ago."""

    STALL = 0.5

    def __init__(self) -> None:
        super().__init__()
        StallWatch.note(self, self.STALL)


def test_after_the_machine_kept_the_engine_off_a_core_a_genmove_ends_that_much_earlier(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A controller on the same machine may wait as long to be given a core and read the answer: a 2 s byo-yomi
    period with a 0.2 s reserve is answered 0.5 s sooner after a 0.5 s stall, and uses most of it without one."""
    config = _config("search.max_visits=0", "search.max_time=0", "player.lag_buffer=0.2")
    quiet = Gtp(EnginePlayer(SlowEvaluator(0.02), config))
    quiet.timed("kgs-time_settings byoyomi 0 2 1")
    monkeypatch.setattr("miai.engine.clocks.StallWatch", _Stalled)
    stalled = Gtp(EnginePlayer(SlowEvaluator(0.02), config))
    stalled.timed("kgs-time_settings byoyomi 0 2 1")
    assert 1.4 <= quiet.timed("genmove b")[0] <= 1.8
    assert 0.8 <= stalled.timed("genmove b")[0] <= 1.8 - _Stalled.STALL


# ------------------------------------------------------------------------------------------- warm-up


def test_first_move_on_a_new_board_size_keeps_to_its_budget() -> None:
    """boardsize warms the evaluator up, so a slow first run is not charged to the first move."""
    evaluator = SlowEvaluator(0.03, first_run_seconds=0.8)
    gtp = Gtp(EnginePlayer(evaluator, _config("search.max_visits=0", "search.max_time=0")))
    gtp.timed("kgs-time_settings byoyomi 0 1 5")
    gtp.timed("boardsize 13")
    assert 13 in evaluator.sizes_seen  # warmed up before any genmove
    elapsed, _ = gtp.timed("genmove b")
    assert elapsed < 1.0


def test_boardsize_answers_after_the_warm_up_so_the_next_genmove_is_not_charged() -> None:
    """A controller times genmove from its request: the warm-up that boardsize starts must be over by then."""
    import os

    evaluator = SlowEvaluator(0.03, first_run_seconds=0.8)
    player = EnginePlayer(evaluator, _config("search.max_visits=0", "search.max_time=0"))
    read_fd, write_fd = os.pipe()
    stdin, out = os.fdopen(read_fd, "r", encoding="utf-8"), io.StringIO()
    session = GtpSession(player, stdin, out, io.StringIO(), GtpConfig(board_size=9))
    runner = threading.Thread(target=session.run, daemon=True)
    runner.start()

    def answered(count: int, timeout: float = 10.0) -> float:
        """Seconds until ``count`` responses are out."""
        start = time.monotonic()
        while out.getvalue().count("\n\n") < count:
            assert time.monotonic() - start < timeout, out.getvalue()
            time.sleep(0.002)
        return time.monotonic() - start

    os.write(write_fd, b"kgs-time_settings byoyomi 0 1 5\nboardsize 13\n")
    answered(2)
    os.write(write_fd, b"genmove b\n")
    assert answered(3) < 1.0
    os.write(write_fd, b"quit\n")
    answered(4)
    runner.join(5.0)
    os.close(write_fd)
    stdin.close()


def test_first_move_without_warm_up_still_keeps_to_its_budget() -> None:
    """Straight to genmove on a size never seen: the warm-up is charged to the move, which still ends in time."""
    evaluator = SlowEvaluator(0.03, first_run_seconds=0.5)
    gtp = Gtp(EnginePlayer(evaluator, _config("search.max_visits=0", "search.max_time=0")), size=11)
    gtp.timed("kgs-time_settings byoyomi 0 1 5")
    elapsed, response = gtp.timed("genmove b")
    assert 0.65 <= elapsed < 1.0 and response.startswith("= ")


# ------------------------------------------------------------------------------------ analysis output


def _floats(tokens: list[str], start: int, count: int) -> list[float]:
    return [float(t) for t in tokens[start:start + count]]


def _check_kata_segment(segment: str, area: int) -> None:
    """One ``info move ...`` segment with pvVisits, pvEdgeVisits and movesOwnership after its pv."""
    tokens = segment.split()  # from "move"
    fields = dict(zip(tokens[0:tokens.index("pv"):2], tokens[1:tokens.index("pv"):2]))
    pv_at, visits_at = tokens.index("pv"), tokens.index("pvVisits")
    pv = tokens[pv_at + 1:visits_at]
    pv_visits = [int(t) for t in tokens[visits_at + 1:visits_at + 1 + len(pv)]]
    edge_at = visits_at + 1 + len(pv)
    assert tokens[edge_at] == "pvEdgeVisits"
    pv_edge_visits = [int(t) for t in tokens[edge_at + 1:edge_at + 1 + len(pv)]]
    own_at = edge_at + 1 + len(pv)
    assert tokens[own_at] == "movesOwnership" and len(tokens) == own_at + 1 + area
    assert pv_visits[0] == int(fields["visits"]) and pv_edge_visits[0] == int(fields["edgeVisits"])
    assert pv_visits == sorted(pv_visits, reverse=True) and min(pv_edge_visits) >= 1
    assert all(-1.0 <= x <= 1.0 for x in _floats(tokens, own_at + 1, area))


def test_kata_analyze_prints_every_key_it_accepts_and_aliases_work() -> None:
    engine = _engine("--size", "9", "--set", "search.max_visits=0")
    assert engine.stdin is not None and engine.stdout is not None
    engine.stdin.write("kata-analyze b 10 pvVisits true pvEdgeVisits true movesOwnership true ownership true "
                       "ownershipStdev true maxmoves 3\n")
    engine.stdin.flush()
    # The head "=" and a first snapshot, however long start-up takes on a loaded machine; then one more interval.
    head = _first_lines(engine, 2, time.monotonic() + 60.0)
    time.sleep(0.2)
    engine.stdin.write("lz-analyze b 10 ownership true\nhelp\nlist_commands\nanalyze b 10\n")
    engine.stdin.flush()
    time.sleep(0.5)
    engine.stdin.write("genmove_analyze b 5\nquit\n")
    engine.stdin.flush()
    deadline = time.monotonic() + 20.0
    lines = [_response(engine, deadline) for _ in range(7)]
    lines[0] = "\n".join(head + ([lines[0]] if lines[0] else []))
    assert engine.wait(5.0) == 0
    last_snapshot = lines[0].splitlines()[-1]  # the head '=' is on its own line
    segments, _, whole_board = last_snapshot.partition(" ownership ")
    for segment in segments.split("info ")[1:]:
        _check_kata_segment(segment, 81)
    whole = whole_board.split()
    stdev_at = whole.index("ownershipStdev")
    assert stdev_at == 81 and len(whole) == 2 * 81 + 1
    assert all(0.0 <= x <= 1.0 for x in _floats(whole, stdev_at + 1, 81))
    assert lines[1].startswith("? syntax error: ")  # lz-analyze has no ownership field: refused, not silently dropped
    listed = lines[3].removeprefix("= ").splitlines()
    assert lines[2] == lines[3] and "kata-analyze" in listed and "genmove_analyze" not in listed
    assert lines[4].splitlines()[1].startswith("info move ")  # analyze: kata-analyze under KataGo's plain name
    assert lines[5].splitlines()[-1].split()[0] == "play"  # genmove_analyze ends with play <move>
    assert lines[6] == "="


def _search_runs(responses: Sequence[str]) -> list[dict[str, float]]:
    """The ``last_run`` of every miai-search_stats answer among ``responses``."""
    return [json.loads(r[2:])["last_run"] for r in responses if r.startswith("= {")]


def test_a_game_piped_at_once_searches_each_genmove_as_commands_sent_one_by_one() -> None:
    """Scripts and regression runners pipe whole files of commands. A genmove queued behind another starts when the
    engine answers the one before, not when its line arrived: each gets its own time, as when sent one by one."""
    lines = ["boardsize 9", "komi 7"]
    for turn in range(4):
        lines += [f"genmove {'bw'[turn % 2]}", "miai-search_stats"]
    config = ("search.max_visits=0", "search.max_time=0.3")

    out = io.StringIO()
    session = GtpSession(EnginePlayer(SlowEvaluator(0.01), _config(*config)), io.StringIO("\n".join(lines) + "\n"),
                         out, io.StringIO())
    assert session.run() == 0
    piped = _search_runs(out.getvalue().split("\n\n"))

    gtp = Gtp(EnginePlayer(SlowEvaluator(0.01), _config(*config)))
    one_by_one = _search_runs([gtp.timed(line)[1] for line in lines])

    assert len(piped) == len(one_by_one) == 4
    for run, alone in zip(piped, one_by_one):
        assert run["seconds"] >= 0.2, piped  # the move's own 0.3 s, less what the search keeps for its answer
        assert run["playouts"] >= alone["playouts"] / 2, (piped, one_by_one)
