"""The subprocess GTP client: framing, failures, timeouts, crashes and stderr, against scripted engines."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from miai.gtp.client import (
    GtpCommandError,
    GtpEngine,
    GtpEngineDied,
    GtpProtocolError,
    GtpTimeout,
    split_command,
)

SCRIPTED = Path(__file__).parent / "scripted_engines" / "scripted.py"

pytestmark = pytest.mark.timeout(60)


def scripted(*args: str) -> list[str]:
    return [sys.executable, str(SCRIPTED), *args]


def inline(code: str) -> list[str]:
    """An engine written inline: a Python program given with -c."""
    return [sys.executable, "-c", code]


def test_commands_answers_and_failures() -> None:
    with GtpEngine(scripted("--moves", "C3", "--name", "bob")) as engine:
        assert engine.send("protocol_version") == "2"
        assert engine.send("name") == "bob"
        assert "genmove" in engine.known_commands() and engine.knows("final_score")
        engine.send("boardsize 5")
        assert engine.send("genmove b") == "C3"
        with pytest.raises(GtpCommandError) as failure:
            engine.send("final_score")
        assert failure.value.message == "cannot score"
        assert engine.try_send("frobnicate") is None
        with pytest.raises(ValueError):
            engine.send("play b C3\nplay w D4")  # two commands smuggled into one would shift every answer
        assert engine.alive  # a failure answer is not a fault of the process


def test_multiline_answer_crlf_and_junk_before_the_response() -> None:
    # Writes junk before its first answer, CRLF line ends, and a two-line answer.
    code = (
        "import sys\n"
        "for line in sys.stdin:\n"
        "    i = line.split()[0]\n"
        "    sys.stdout.write('some banner\\r\\n=' + i + ' first\\r\\nsecond\\r\\n\\r\\n'); sys.stdout.flush()\n"
        "    if 'quit' in line: break\n"
    )
    with GtpEngine(inline(code)) as engine:
        assert engine.send("list_commands") == "first\nsecond"
        assert engine.send("list_commands") == "first\nsecond"


def test_a_wrong_id_is_a_protocol_error() -> None:
    code = "import sys\nfor line in sys.stdin:\n    sys.stdout.write('=999 x\\n\\n'); sys.stdout.flush()\n"
    engine = GtpEngine(inline(code))
    with pytest.raises(GtpProtocolError):
        engine.send("name")
    assert not engine.alive
    engine.close()


def test_an_answer_without_id_is_accepted() -> None:
    code = (
        "import sys\nfor line in sys.stdin:\n    sys.stdout.write('= ok\\n\\n'); sys.stdout.flush()\n"
        "    if 'quit' in line: break\n"
    )
    with GtpEngine(inline(code)) as engine:
        assert engine.send("name") == "ok"


@pytest.mark.slow
def test_a_hanging_engine_times_out_and_is_killed() -> None:
    engine = GtpEngine(scripted("--hang-at", "1"))
    engine.send("boardsize 5")
    start = time.monotonic()
    with pytest.raises(GtpTimeout) as timeout:
        engine.send("genmove b", timeout=0.5)
    assert 0.5 <= time.monotonic() - start < 5.0
    assert timeout.value.timeout == 0.5
    assert not engine.alive and engine.process.poll() is not None
    with pytest.raises(GtpEngineDied):
        engine.send("name")
    engine.close()


def test_a_crash_is_reported_with_exit_code_and_stderr() -> None:
    engine = GtpEngine(scripted("--crash-at", "1"))
    engine.send("boardsize 5")
    with pytest.raises(GtpEngineDied) as died:
        engine.send("genmove b")
    assert died.value.returncode == 3
    assert "crashing on purpose" in "\n".join(died.value.stderr_tail)
    assert "crashing on purpose" in str(died.value)
    assert not engine.alive
    engine.close()


def test_a_missing_program_fails_to_start() -> None:
    with pytest.raises(GtpEngineDied):
        GtpEngine(["/nonexistent/engine", "--gtp"])


def test_stderr_is_drained_and_logged(tmp_path: Path) -> None:
    # 2 MB of stderr before answering: more than a pipe buffer, so an undrained pipe would hang the engine.
    code = (
        "import sys\n"
        "for line in sys.stdin:\n"
        "    if 'quit' in line: break\n"
        "    sys.stderr.write(('x' * 999 + '\\n') * 2000); sys.stderr.write('last words\\n'); sys.stderr.flush()\n"
        "    sys.stdout.write('=' + line.split()[0] + ' done\\n\\n'); sys.stdout.flush()\n"
    )
    log = tmp_path / "engine.stderr"
    with GtpEngine(inline(code), stderr_log=log) as engine:
        assert engine.send("name", timeout=20) == "done"
        deadline = time.monotonic() + 5
        while "last words" not in engine.stderr_tail() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert engine.stderr_tail()[-1] == "last words"
    assert log.read_text().count("\n") == 2001


def test_quit_on_close_and_exit_code() -> None:
    engine = GtpEngine(scripted())
    assert engine.close() == 0


def test_closing_an_engine_that_ignores_quit_kills_it() -> None:
    code = "import time\ntime.sleep(600)\n"
    engine = GtpEngine(inline(code))
    start = time.monotonic()
    engine.close(timeout=0.3)
    assert time.monotonic() - start < 5
    assert engine.process.poll() is not None


def test_split_command() -> None:
    assert split_command("/usr/games/gnugo --mode gtp --level '10'") == ["/usr/games/gnugo", "--mode", "gtp", "--level", "10"]
    assert split_command(["a b", "c"]) == ["a b", "c"]
    with pytest.raises(ValueError):
        split_command("  ")
