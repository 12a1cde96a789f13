"""The session loop: whole conversations over stdin/stdout, end of input, quit, pondering and notifications."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from miai.go.coords import Color
from miai.go.state import GameState
from miai.gtp.config import GtpConfig

from .fakes import Driver, FakePlayer, LiveSession, run_transcript

FAKE_ENGINE = Path(__file__).parent / "fake_engine.py"


def test_pipelined_commands_are_answered_in_order() -> None:
    lines = "".join(f"{i} play {'bw'[i % 2]} {'ABCDEFGHJ'[i % 9]}{i // 9 + 1}\n" for i in range(60))
    script = "boardsize 9\n" + lines + "61 list_stones b\n62 showboard\n"
    out, _ = run_transcript(script)
    responses = out[:-2].split("\n\n")
    assert responses[0] == "= " and [r.split(" ")[0] for r in responses[1:]] == [f"={i}" for i in range(63)
                                                                                 if i != 60]
    driver = Driver()  # the same lines one at a time give the same answers
    assert out == "".join(driver.raw(line) for line in script.splitlines())


def test_crlf_input_and_end_of_input_without_quit() -> None:
    out, err = run_transcript("1 name\r\n2 boardsize 9\r\n3 play black e5\r\n4 list_stones black\r\n")
    assert out == "=1 miai\n\n=2 \n\n=3 \n\n=4 E5\n\n"
    assert err == ""


def test_commands_after_quit_are_not_executed() -> None:
    out, _ = run_transcript("name\nquit\nname\n")
    assert out == "= miai\n\n= \n\n"


def test_last_line_without_newline_is_executed() -> None:
    out, _ = run_transcript("boardsize 9\nname")
    assert out == "= \n\n= miai\n\n"


def engine_process() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(FAKE_ENGINE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_engine_process_answers_each_command_before_the_next_arrives() -> None:
    """stdout must be flushed per response: a controller waiting for one answer must get it (pitfall 1)."""
    engine = engine_process()
    assert engine.stdin is not None and engine.stdout is not None
    for command, expected in (("name", "= miai"), ("1 boardsize 9", "=1 "), ("2 play b e5", "=2 "),
                              ("3 list_stones b", "=3 E5")):
        engine.stdin.write(command + "\n")
        engine.stdin.flush()
        assert engine.stdout.readline() == expected + "\n"
        assert engine.stdout.readline() == "\n"
    engine.stdin.write("quit\n")
    engine.stdin.flush()
    assert engine.wait(timeout=10) == 0


@pytest.mark.slow
def test_engine_process_exits_promptly_on_quit_and_on_eof() -> None:
    for script in ("name\nquit\n", "name\n"):
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(FAKE_ENGINE)], input=script, capture_output=True, text=True,
                              timeout=20)
        assert done.returncode == 0 and done.stdout.startswith("= miai\n\n")
        assert "Fatal" not in done.stderr and "Traceback" not in done.stderr
        assert time.monotonic() - started < 10


@pytest.mark.slow
def test_engine_process_stdout_carries_only_gtp() -> None:
    script = "boardsize 9\nundo\nfoo\nplay b z1\ngenmove b\nlz-analyze 1\nname\nquit\n"
    done = subprocess.run([sys.executable, str(FAKE_ENGINE)], input=script, capture_output=True, text=True,
                          timeout=20)
    for block in done.stdout[:-2].split("\n\n"):
        head, *rest = block.split("\n")
        assert head[0] in "=?"
        assert all(line.startswith("info ") for line in rest)
    assert "? cannot undo: no move to undo" in done.stdout  # the reason in the reply, as KataGo gives it


class PonderingPlayer(FakePlayer):
    def __post_init__(self) -> None:
        super().__post_init__()
        self.pondering = threading.Event()
        self.events: list[str] = []

    def start_pondering(self, state: GameState, color: Color) -> None:
        self.events.append(f"start {color.name} {len(state.moves)}")
        self.pondering.set()

    def stop_pondering(self) -> None:
        self.events.append("stop")
        self.pondering.clear()


def test_pondering_runs_only_while_waiting_for_input() -> None:
    player = PonderingPlayer()
    live = LiveSession(player, GtpConfig(ponder=True))
    assert player.pondering.wait(5)
    live.send("play b d4\n")
    live.out.wait_for(lambda t: t == "= \n\n")
    assert player.pondering.wait(5)
    assert player.events[:3] == ["start BLACK 0", "stop", "start WHITE 1"]
    live.send("quit\n")
    live.join()
    assert player.events[-1] == "stop"


def test_no_pondering_unless_configured() -> None:
    player = PonderingPlayer()
    out, _ = run_transcript("name\n", player)
    assert player.events == []


def test_player_is_told_about_successful_changes_only() -> None:
    player = FakePlayer()
    driver = Driver(player)
    for line in ("play b d4", "play b d4", "name", "undo", "undo", "boardsize 9", "boardsize 99", "komi 1"):
        driver.raw(line)
    notes = [moves for kind, moves in player.calls if kind == "state_changed"]
    assert notes == [1, 0, 0, 0]  # play, undo, boardsize, komi


def test_a_closed_stdout_ends_the_session_quietly() -> None:
    import io

    from miai.gtp.session import GtpSession

    out, err = io.StringIO(), io.StringIO()
    out.close()
    session = GtpSession(FakePlayer(), io.StringIO("name\nname\n"), out, err)
    assert session.run() == 0
    assert "stdout closed" in err.getvalue()


@pytest.mark.slow
def test_engine_process_survives_its_controller_vanishing() -> None:
    engine = engine_process()
    assert engine.stdin is not None and engine.stdout is not None
    engine.stdout.close()  # the controller stops reading
    engine.stdin.write("name\nlz-analyze 1\n")
    engine.stdin.flush()
    engine.stdin.close()
    assert engine.wait(timeout=10) == 0
    assert engine.stderr is not None and "Traceback" not in engine.stderr.read()


@pytest.mark.slow
def test_stray_prints_in_the_engine_go_to_stderr() -> None:
    done = subprocess.run([sys.executable, str(FAKE_ENGINE), "1", "--noisy"], input="genmove b\nname\nquit\n",
                          capture_output=True, text=True, timeout=20)
    assert done.returncode == 0
    blocks = done.stdout[:-2].split("\n\n")
    assert len(blocks) == 3 and blocks[0].startswith("= ") and blocks[1] == "= miai" and blocks[2] == "= "
    assert "debug: thinking hard" in done.stderr
