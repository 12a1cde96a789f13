"""`miai gtp` behind the server bridges: gtp2ogs (OGS) and kgsGtp (KGS) replayed command for command, framing
included, and every genmove checked against the clock as the server counts it.

What the bridges send (docs/gtp.md, "Playing on a server"; gtp2ogs 9.0.1 src/Bot.ts, kgsGtp's documentation):

- gtp2ogs ends every command with CRLF; it asks ``list_commands`` once, then loads a game (``boardsize``,
  ``clear_board``, ``komi``, ``play``...) one command at a time, and before every ``genmove`` writes the clock
  commands and the ``genmove`` in one go, without waiting for their answers. Times are whole seconds, rounded
  down, counted just before the genmove. Byo-yomi sends the seconds left in the current period and the periods
  left; Fischer (``kata-time_settings fischer-capped``) the main time without the increment the server adds after
  the move. Before the answer to ``list_commands`` has arrived it knows only the required commands and falls back
  to plain ``time_settings``: for Fischer ``time_settings INITIAL-INC INC 1``, negative when the initial time is
  below the increment, then ``time_left C T 1``.
- kgsGtp sends ``kgs-time_settings`` when a game starts and ``time_left`` (periods left in byo-yomi) before each
  ``genmove``, with LF line ends.

Each scenario gives the seconds this move has on the server's clock (its share of the period for Canadian time)
and whether the move is in overtime. A genmove's wall time, from writing the clock commands to reading the answer,
must stay within that time less the lag reserve ``player.lag_buffer`` of the config (in overtime at most 20% of
the period's share of one move, the engine's documented rule for short periods); when that leaves less than
``QUICK`` seconds the move must simply be answered at once. The tests replay every scenario once (board sizes and
colours taken in turn) on a uniform evaluator with the server and default configs, each on 9x9, 13x13 and 19x19,
for both colours, on the bundled net with both configs, and every scenario once on the bundled net with the server
config while two processes per core spin beside the engine (tests/busy.py; ``tests/tools/bridge_load.py`` repeats
that many times and counts the late moves).
"""

from __future__ import annotations

import contextlib
import queue
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.busy import busy_cores

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
# A move the engine must answer at once (less time than its lag reserve is left) takes at most this long.
QUICK = 0.6
# The longest a new process may take to load its net and answer, and a board size to be set (its net planned): minutes
# on a machine busy with other work, where the engine gets a fraction of a core; none of it is on a move's clock.
START_SECONDS = 600.0
OPENING = ["D4", "F6", "C6", "F3"]  # both colours' moves before the genmove (lower case as gtp2ogs sends them)


def lag_buffer(config: str) -> float:
    """The config's player.lag_buffer (default.toml lists every option's default)."""
    with open(CONFIGS / f"{config}.toml", "rb") as handle:
        data = tomllib.load(handle)
    if "player" in data and "lag_buffer" in data["player"]:
        return float(data["player"]["lag_buffer"])
    return lag_buffer("default")


@dataclass(frozen=True)
class Scenario:
    """One move under a clock: the commands written together with the genmove ({c}: the colour)."""

    name: str
    bridge: str  # gtp2ogs or kgsGtp: the framing
    setup: tuple[str, ...]  # sent once after the game is loaded (kgsGtp's kgs-time_settings), answered one by one
    clock: tuple[str, ...]  # pipelined with the genmove
    seconds: float  # what the server's clock holds for this move (Canadian: this move's share of the period)
    overtime_share: float = 0.0  # > 0: in overtime, with this per-move share of a full period
    refused: tuple[int, ...] = ()  # indexes of clock commands the engine must refuse with a reason


SCENARIOS = [
    # gtp2ogs with the commands it finds in miai's list_commands.
    Scenario("ogs fischer 1 s left", "gtp2ogs", (), (
        "kata-time_settings fischer-capped 60 10 120 -1", "time_left black 1 0", "time_left white 1 0"), 1.0),
    Scenario("ogs fischer 3 s left", "gtp2ogs", (), (
        "kata-time_settings fischer-capped 30 10 120 -1", "time_left black 3 0", "time_left white 3 0"), 3.0),
    Scenario("ogs byo-yomi 3 s of a 10 s period", "gtp2ogs", (), (
        "kgs-time_settings byoyomi 0 10 1", "time_left black 3 1", "time_left white 3 1"), 3.0, 10.0),
    Scenario("ogs byo-yomi last second of main time", "gtp2ogs", (), (
        "kgs-time_settings byoyomi 60 2 5", "time_left black 0 0", "time_left white 0 0"), 0.0 + 2.0, 2.0),
    Scenario("ogs canadian 6 s for 3 stones", "gtp2ogs", (), (
        "kgs-time_settings canadian 0 15 5", "time_left black 6 3", "time_left white 6 3"), 6.0 / 3, 3.0),
    Scenario("ogs simple 2 s of 5", "gtp2ogs", (), (
        "time_settings 0 5 1", "time_left black 2 1", "time_left white 2 1"), 2.0, 5.0),
    Scenario("ogs absolute 3 s left", "gtp2ogs", (), (
        "time_settings 300 0 0", "time_left black 3 0", "time_left white 3 0"), 3.0),
    Scenario("ogs fischer via kgs canadian, negative main", "gtp2ogs", (), (
        "kgs-time_settings canadian -25 30 1", "time_left black 2 1", "time_left white 2 1"), 2.0, 2.0, (0,)),
    # kgsGtp: settings once, time_left before each genmove (periods left in byo-yomi).
    Scenario("kgs byo-yomi 2 s of a 5 s period", "kgsGtp", ("kgs-time_settings byoyomi 600 5 3",), (
        "time_left {c} 2 2",), 2.0, 5.0),
    Scenario("kgs canadian 8 s for 4 stones", "kgsGtp", ("kgs-time_settings canadian 0 25 5",), (
        "time_left {c} 8 4",), 8.0 / 4, 5.0),
    Scenario("kgs absolute 2 s left", "kgsGtp", ("kgs-time_settings absolute 600",), ("time_left {c} 2 0",), 2.0),
]

# gtp2ogs's first genmove of a new bot process, before list_commands was answered: plain time_settings.
FIRST_MOVE = [
    Scenario("ogs first move, fischer 3 s + 30 s", "gtp2ogs", (), (
        "time_settings -27 30 1", "time_left black 3 1", "time_left white 3 1"), 3.0, 3.0, (0,)),
    Scenario("ogs first move, byo-yomi 3 s of a 10 s period", "gtp2ogs", (), (
        "time_settings 0 10 1", "time_left black 3 1", "time_left white 3 1"), 3.0, 10.0),
]


def allowed_seconds(scenario: Scenario, lag: float) -> float:
    """The longest the genmove may take: the server's time for it less the lag reserve, or QUICK."""
    reserve = lag if scenario.overtime_share <= 0 else min(lag, 0.2 * scenario.overtime_share)
    return max(scenario.seconds - reserve, QUICK)


class Bridge:
    """A ``miai gtp`` process driven as a bridge drives it: ``eol`` after every command, answers read as
    blocks ending with a blank line."""

    def __init__(self, args: list[str], eol: str, stderr: Path | None = None) -> None:
        self.eol = eol
        self.stderr = stderr
        with open(stderr, "ab") if stderr is not None else contextlib.nullcontext() as log:
            self.process = subprocess.Popen([sys.executable, "-m", "miai.engine", "gtp", *args], cwd=REPO,
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL if log is None else log)
        self.answers: queue.Queue[str | None] = queue.Queue()
        self.read_at = 0.0  # time.monotonic() when the reading thread had read the answer answer() returned last
        self._stamps: queue.Queue[float] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        block: list[str] = []
        for raw in self.process.stdout:
            line = raw.decode("utf-8").rstrip()
            if line.strip():
                block.append(line)
            elif block:
                self._stamps.put(time.monotonic())
                self.answers.put("\n".join(block))
                block = []
        self.answers.put(None)

    def write(self, *commands: str) -> None:
        """Write ``commands`` in one go (pipelined, as gtp2ogs writes the clock and the genmove)."""
        assert self.process.stdin is not None
        self.process.stdin.write("".join(command + self.eol for command in commands).encode("utf-8"))
        self.process.stdin.flush()

    def answer(self, timeout: float = 60.0) -> str:
        try:
            text = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.process.kill()
            pytest.fail(f"no answer within {timeout} s")
        if text is None:
            pytest.fail(f"the engine exited (code {self.process.wait()})")
        self.read_at = self._stamps.get()
        return text

    def ask(self, command: str) -> str:
        self.write(command)
        return self.answer()

    def close(self) -> None:
        self.write("quit")
        try:
            assert self.answer(10.0) == "="
            answered = time.monotonic()
            assert self.process.wait(10.0) == 0
            if self.stderr is not None:
                with open(self.stderr, "a", encoding="utf-8") as log:
                    log.write(f"bridge: the engine exited {time.monotonic() - answered:.2f} s after quit's answer\n")
        finally:
            if self.process.poll() is None:
                self.process.kill()


def start(config: str, model: str | None, eol: str, *, first_move: bool = False, trace: Path | None = None
          ) -> Bridge:
    """A bridge's new bot process, its command list asked for first (answered later when ``first_move``); with
    ``trace``, a file the engine's debug log (the times of each command and move) is appended to."""
    args = ["--config", config] + (["--model", model] if model else []) + (["--log-level", "debug"] if trace else [])
    bridge = Bridge(args, eol, trace)
    bridge.write("list_commands")
    if not first_move:
        assert bridge.answer(START_SECONDS).startswith("= ")
    return bridge


def load_game(bridge: Bridge, size: int, color: str, *, pending_list: bool = False) -> None:
    """boardsize, clear_board, komi and the opening up to ``color``'s turn, one command at a time."""
    moves = OPENING[:3] if color == "white" else OPENING
    commands = [f"boardsize {size}", "clear_board", "komi 7.5"]
    commands += [f"play {'black' if i % 2 == 0 else 'white'} {move.lower()}" for i, move in enumerate(moves)]
    for index, command in enumerate(commands):
        bridge.write(command)
        if pending_list and index == 0:  # the list_commands answer arrives first
            assert bridge.answer(START_SECONDS).startswith("= ")
        assert bridge.answer(START_SECONDS) == "=", command


@dataclass(frozen=True)
class Timing:
    """One genmove as the server counted it: its wall time and the longest it may take."""

    scenario: str
    color: str
    size: int
    seconds: float
    limit: float
    written: float = 0.0  # time.monotonic() when the clock commands and the genmove were written
    read: float = 0.0  # when the bridge's reading thread had the move's answer (the test's thread sees it later)

    @property
    def over(self) -> bool:
        return self.seconds > self.limit

    def __str__(self) -> str:
        return f"{self.scenario}, {self.color}, {self.size}x{self.size}: {self.seconds:.2f} s for {self.limit:.2f} s"


def timed_genmove(bridge: Bridge, scenario: Scenario, color: str, size: int, lag: float) -> Timing:
    """Write the clock commands and the genmove together; check every answer and time the genmove."""
    letter = color[0] if scenario.bridge == "kgsGtp" else color
    for command in scenario.setup:
        assert bridge.ask(command) == "=", command
    clock = [command.format(c=letter) for command in scenario.clock]
    start_time = time.monotonic()
    bridge.write(*clock, f"genmove {letter}")
    for index, command in enumerate(clock):
        answer = bridge.answer()
        if index in scenario.refused:
            assert answer.startswith("? invalid time settings"), (command, answer)
        else:
            assert answer == "=", (command, answer)
    move = bridge.answer()
    elapsed = time.monotonic() - start_time
    assert move.startswith("= ") and move.split()[1] != "resign", (scenario.name, move)
    if bridge.stderr is not None:
        with open(bridge.stderr, "a", encoding="utf-8") as log:
            log.write(f"bridge: {scenario.name}, {color}, {size}x{size}: written {start_time:.4f}, answer read "
                      f"{bridge.read_at:.4f}, seen {start_time + elapsed:.4f}: {elapsed:.3f} s\n")
    return Timing(scenario.name, color, size, elapsed, allowed_seconds(scenario, lag), start_time, bridge.read_at)


def replay(config: str, model: str | None, cases: list[tuple[Scenario, int, str]], trace: Path | None = None
           ) -> list[Timing]:
    """Each case in a new game, as a persistent bot process would play them; first-move cases in new processes.
    Returns every genmove's timing (the tests check them with :func:`check`). With ``trace``, every engine's debug
    log and the bridge's own stamps are appended to that file."""
    lag = lag_buffer(config)
    timings: list[Timing] = []
    bridge: Bridge | None = None
    try:
        for scenario, size, color in cases:
            eol = "\r\n" if scenario.bridge == "gtp2ogs" else "\n"
            first = scenario in FIRST_MOVE
            if bridge is None or first or bridge.eol != eol:
                if bridge is not None:
                    bridge.close()
                bridge = start(config, model, eol, first_move=first, trace=trace)
                load_game(bridge, size, color, pending_list=first)
            else:
                load_game(bridge, size, color)
            timings.append(timed_genmove(bridge, scenario, color, size, lag))
            if first:  # the next case needs the command list answered: a new process
                bridge.close()
                bridge = None
    finally:
        if bridge is not None:
            bridge.close()
    return timings


def check(timings: list[Timing]) -> None:
    """Every genmove within its time (all the late ones named)."""
    late = [str(timing) for timing in timings if timing.over]
    assert not late, f"{len(late)} of {len(timings)} genmoves over their time: " + "; ".join(late)


def rotated() -> list[tuple[Scenario, int, str]]:
    """Every scenario once, the board sizes and colours taken in turn."""
    return [(scenario, (9, 13, 19)[i % 3], ("black", "white")[i % 2])
            for i, scenario in enumerate(SCENARIOS + FIRST_MOVE)]


@pytest.mark.slow
def test_every_clock_as_the_bridges_send_it_on_a_uniform_evaluator() -> None:
    check(replay("server", "uniform", rotated()))


@pytest.mark.slow
def test_every_clock_on_the_default_config() -> None:
    check(replay("default", "uniform", rotated()))


@pytest.mark.slow
@pytest.mark.parametrize("config", ["server", "default"])
def test_every_clock_size_and_colour_on_the_bundled_net(config: str) -> None:
    cases = [(scenario, size, color) for scenario in SCENARIOS + FIRST_MOVE for size in (9, 13, 19)
             for color in ("black", "white")]
    check(replay(config, None, cases))



@pytest.fixture
def busy_machine() -> Iterator[int]:
    """Two processes spinning per core beside the engine (as a shared bot host or CI machine runs other work)."""
    with busy_cores(2) as count:
        yield count


@pytest.mark.slow
def test_every_clock_on_a_busy_machine(busy_machine: int) -> None:
    # The engine gets a fraction of the CPU it measured at start: its step predictions and its reserve follow the
    # time it gets in the game, and the reserve covers the longest wait for a core the machine has lately imposed,
    # which the bridge's own reading of the answer can suffer too (docs/gtp.md, "How a move keeps to its time").
    check(replay("server", None, rotated()))
