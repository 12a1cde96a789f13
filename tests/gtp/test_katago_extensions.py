"""KataGo's GTP extensions with KataGo's syntax and answers: get_komi, rectangular_boardsize, set_position,
kata-search(_cancellable), genmove_debug, kata-benchmark, kata-get-models, kata-list-params, kata-set-param, and
the ogsChatToStderr line gtp2ogs turns into OGS's chat. Fast tests on the fake player; slow ones on the real engine,
beside KataGo 1.17.2 where it runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from miai.go.coords import Color, parse_gtp

from .fakes import Driver, FakePlayer
from .katago_peer import Answers, katago, needs_katago

REPO = Path(__file__).resolve().parents[2]
# KataGo's ogsChatToStderr line (cpp/command/gtp.cpp) as gtp2ogs reads it: src/Bot.ts takes what follows
# MALKOVICH: as chat, and the fields are those its KataGo PV parser (src/PvOutputParser.ts) expects.
MALKOVICH = re.compile(r"^MALKOVICH:Visits (\d+) Winrate (\d+\.\d\d)% ScoreLead (-?\d+\.\d) ScoreStdev (-?\d+\.\d) "
                       r"PV ((?:[A-HJ-T]\d+|pass)(?: (?:[A-HJ-T]\d+|pass))*)$")


def test_get_komi_answers_what_komi_set(driver: Driver) -> None:
    assert driver.ok("get_komi") == "7.5"
    driver.ok("komi 6.5")
    assert driver.ok("get_komi") == "6.5"


def test_rectangular_boardsize_takes_square_sizes_and_refuses_rectangles(driver: Driver) -> None:
    assert driver.ok("rectangular_boardsize 9 9") == "" and driver.session.state.size == 9
    assert driver.ok("rectangular_boardsize 13") == "" and driver.session.state.size == 13
    assert driver.fail("rectangular_boardsize 9 13") == "unacceptable size: 9x13: miai's boards are square (sizes 2..25)"
    assert driver.session.state.size == 13


def test_set_position_sets_stones_without_history(driver: Driver) -> None:
    driver.ok("boardsize 9")
    driver.ok("play b e5")
    assert driver.ok("set_position B D4 W E5 b c3") == ""
    state = driver.session.state
    assert not state.moves and state.to_play == Color.BLACK
    assert sorted(driver.ok("list_stones b").split()) == ["C3", "D4"] and driver.ok("list_stones w") == "E5"
    assert driver.fail("undo").startswith("cannot undo")
    assert driver.ok("set_position") == "" and driver.ok("list_stones b") == ""


@pytest.mark.parametrize(("line", "reply"), [
    ("set_position B D4 W", "syntax error: expected COLOR VERTEX pairs, got 'B D4 W'"),
    ("set_position X D4", "syntax error: expected COLOR VERTEX pairs, got 'X D4': invalid color 'X'"),
    ("set_position B Z99", "syntax error: expected COLOR VERTEX pairs, got 'B Z99': invalid vertex 'Z99'"),
    ("set_position B pass", "syntax error: expected COLOR VERTEX pairs, got 'B pass': a pass is not a stone"),
    ("set_position B D4 W D4", "illegal stone placements: two stones on D4"),
    ("set_position B A1 W A2 W B1", "illegal stone placements: a chain would have no liberty"),
])
def test_set_position_refuses_bad_placements_and_keeps_the_game(driver: Driver, line: str, reply: str) -> None:
    driver.ok("play b q16")
    assert driver.fail(line) == reply
    assert driver.ok("list_stones b") == "Q16" and len(driver.session.state.moves) == 1


def test_kata_search_answers_a_move_without_playing_it(driver: Driver, player: FakePlayer) -> None:
    player.script[:] = [parse_gtp("C3", 19), parse_gtp("D4", 19)]
    assert driver.ok("kata-search b") == "C3"
    assert not driver.session.state.moves
    assert driver.ok("kata-search_cancellable w") == "D4"
    assert not driver.session.state.moves


def test_genmove_debug_plays_and_writes_the_search_to_stderr(driver: Driver, player: FakePlayer) -> None:
    player.script[:] = [parse_gtp("C3", 19)]
    assert driver.ok("genmove_debug b") == "C3"
    assert len(driver.session.state.moves) == 1
    lines = driver.err.getvalue().splitlines()
    assert lines[0].startswith("miai: chose C3; root visits") and len(lines) >= 2


def test_ogs_chat_line_follows_every_genmove_in_katagos_format() -> None:
    from miai.gtp.config import GtpConfig

    driver = Driver(FakePlayer(script=[parse_gtp("C3", 19)]), GtpConfig(ogs_chat_to_stderr=True))
    assert driver.ok("genmove b") == "C3"
    (line,) = driver.err.getvalue().splitlines()
    assert MALKOVICH.match(line), line
    quiet = Driver(FakePlayer(script=[parse_gtp("C3", 19)]))
    quiet.ok("genmove b")
    assert quiet.err.getvalue() == ""  # off by default, as in KataGo


def test_a_player_without_a_net_has_no_models_and_no_benchmark(driver: Driver) -> None:
    assert driver.ok("kata-get-models") == "[]"
    assert driver.fail("kata-benchmark 10").startswith("cannot benchmark: ")
    assert driver.fail("kata-benchmark x").startswith("syntax error")


def test_the_new_commands_are_listed(driver: Driver) -> None:
    listed = set(driver.ok("list_commands").splitlines())
    assert {"get_komi", "rectangular_boardsize", "set_position", "kata-search", "kata-search_cancellable",
            "genmove_debug", "kata-benchmark", "kata-get-models", "kata-list-params"} <= listed


def test_ogs_chat_to_stderr_in_a_katago_config_sets_the_option() -> None:
    from miai.engine.config import Config
    from miai.engine.katago_config import apply_katago

    assert apply_katago(Config(), "ogsChatToStderr", "true").gtp.ogs_chat_to_stderr is True


# ------------------------------------------------------------------------------------------- the real engine

def _miai(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "miai.engine", "gtp", *args], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _answers(stdout: str) -> list[str]:
    return [block.strip() for block in stdout.split("\n\n") if block.strip()]


@pytest.mark.slow
def test_engine_params_as_katago_names_them() -> None:
    lines = ["kata-set-param numSearchThreads 4", "kata-get-param numSearchThreads", "kata-get-param batch_size",
             "kata-set-param cache_size 5", "kata-set-param nnCacheSizePowerOfTwo 5",
             "kata-set-param playoutDoublingAdvantage 1", "kata-set-param maxVisit 5", "kata-list-params",
             "kata-get-models", "boardsize 9", "kata-benchmark 8", "quit"]
    done = subprocess.run([sys.executable, "-m", "miai.engine", "gtp", "--model", "playouts"], cwd=REPO,
                          input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300)
    answers = _answers(done.stdout)
    assert answers[:3] == ["=", "= 4", "= 4"]  # numSearchThreads is the leaves per net batch
    assert answers[3].startswith("? cannot set parameter 'cache_size' to '5': cache_size applies when the net loads")
    assert answers[4].startswith("? cannot set parameter 'nnCacheSizePowerOfTwo' to '5'")
    assert answers[5] == "? unknown parameter 'playoutDoublingAdvantage': a KataGo parameter miai has no equivalent for"
    assert answers[6] == "? unknown parameter 'maxVisit': did you mean maxVisits?"
    listed = answers[7].removeprefix("= ").split(" ")
    assert {"maxVisits", "numSearchThreads", "cpuctExploration"} <= set(listed)
    assert "nnCacheSizePowerOfTwo" not in listed and "ponderingEnabled" not in listed
    assert answers[8] == "= []"  # playouts: no net
    assert re.fullmatch(r"= \nnumSearchThreads = +4: (\d+) / \1 positions, visits/s = [\d.]+ nnEvals/s = [\d.]+ "
                        r"nnBatches/s = [\d.]+ avgBatchSize = [\d.]+ \([\d.]+ secs\)", answers[10]), answers[10]


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:
    yield from katago(tmp_path_factory.mktemp("katago"))


@pytest.mark.slow
@needs_katago
def test_answers_as_katagos(peer: Answers) -> None:
    """The same commands to KataGo and to miai (bundled net): the same answers where they are facts of the game,
    the same shapes where they are the engines' own (moves, figures)."""
    lines = ["boardsize 9", "komi 6.5", "get_komi", "rectangular_boardsize 9 9", "set_position B D4 W E5",
             "get_komi", "set_position B D4 W", "set_position B D4 B D4", "kata-search w", "get_komi",
             "kata-search_cancellable w", "genmove_debug w", "kata-get-models", "kata-set-param numSearchThreads 4",
             "kata-set-param maxVisits 50", "kata-get-param maxVisits", "kata-set-param foo 1"]
    theirs = [peer.ask(line) for line in lines]
    proc = _miai("--set", "search.max_visits=50")
    out, _ = proc.communicate("\n".join([*lines, "quit"]) + "\n", timeout=600)
    ours = [(block[0] == "=", block[1:].strip()) for block in _answers(out)][:len(lines)]
    facts = {0, 1, 2, 3, 4, 5, 9, 13, 14, 15}
    for index in facts:
        assert ours[index] == theirs[index], lines[index]
    for index in (6, 7, 16):  # refused by both, each with its reason
        assert not ours[index][0] and not theirs[index][0] and ours[index][1], lines[index]
    vertex = re.compile(r"[A-HJ-T]\d+|pass")
    for index in (8, 10, 11):  # a move, not played by kata-search
        assert ours[index][0] and theirs[index][0] and vertex.fullmatch(ours[index][1]), lines[index]
    (model,), (theirs_model,) = json.loads(ours[12][1]), json.loads(theirs[12][1])
    assert set(theirs_model) <= set(model)  # KataGo's fields, and miai's backend and precision beside them


@pytest.mark.slow
def test_gtp2ogs_replay_shows_the_thinking_in_the_chat() -> None:
    """gtp2ogs's traffic (CRLF, the clock pipelined with genmove) to `miai gtp` with KataGo's option name, given
    as miai's own key: one MALKOVICH: line per genmove on stderr, in the format gtp2ogs's parser reads."""
    proc = _miai("--config", "server", "--set", "gtp.ogs_chat_to_stderr=true")
    script = ["list_commands", "boardsize 9", "clear_board", "komi 6.5", "play black D4",
              "kata-time_settings fischer-capped 60 10 120 -1", "time_left white 50 0", "genmove white",
              "play black pass", "time_left white 45 0", "genmove white", "quit"]
    out, err = proc.communicate("".join(line + "\r\n" for line in script), timeout=600)
    answers = _answers(out)
    assert len(answers) == len(script) and all(answer.startswith("=") for answer in answers), out
    moves = [answers[index].removeprefix("= ") for index, line in enumerate(script) if line.startswith("genmove")]
    chats = [line for line in err.splitlines() if line.startswith("MALKOVICH:")]
    assert len(chats) == 2, err
    for move, chat in zip(moves, chats):
        found = MALKOVICH.match(chat)
        assert found, chat
        assert int(found.group(1)) >= 1 and 0 <= float(found.group(2)) <= 100
        assert found.group(5).split(" ")[0] == move  # the PV starts with the move played
