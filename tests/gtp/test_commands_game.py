"""Handicap, move generation, scoring, SGF and clock commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from miai.go.clock import TimeControl, TimeSystem
from miai.go.coords import PASS, Color, parse_gtp
from miai.gtp.commands.handicap import default_free_points
from miai.gtp.player import RESIGN

from .fakes import Driver, FakePlayer


def test_fixed_handicap_places_stones_and_white_moves(driver: Driver) -> None:
    assert driver.ok("fixed_handicap 4") == "D16 Q16 D4 Q4"
    state = driver.session.state
    assert state.handicap == 4 and state.to_play == Color.WHITE
    assert sorted(driver.ok("list_stones b").split()) == ["D16", "D4", "Q16", "Q4"]


@pytest.mark.parametrize(("size", "count"), [(19, 1), (19, 10), (19, 0), (9, 10), (7, 5), (8, 5), (6, 2), (13, 99)])
def test_fixed_handicap_invalid_counts(driver: Driver, size: int, count: int) -> None:
    driver.ok(f"boardsize {size}")
    assert driver.fail(f"fixed_handicap {count}").startswith("invalid number of stones")
    assert driver.ok("list_stones b") == ""


def test_handicap_needs_an_empty_board(driver: Driver) -> None:
    driver.ok("play b pass")  # even a pass makes the game non-empty
    assert driver.fail("fixed_handicap 2").startswith("board not empty")
    assert driver.fail("place_free_handicap 2").startswith("board not empty")
    assert driver.fail("set_free_handicap d4 q16").startswith("board not empty")
    driver.ok("clear_board")
    driver.ok("fixed_handicap 2")
    assert driver.fail("fixed_handicap 2").startswith("board not empty")


@pytest.mark.parametrize(("size", "count"), [(19, 2), (19, 9), (19, 17), (19, 50), (19, 360), (9, 12), (9, 80), (5, 7),
                                             (2, 3), (3, 8), (10, 6)])
def test_place_free_handicap_gives_exactly_n_distinct_vertices_on_one_line(size: int, count: int) -> None:
    driver = Driver()
    driver.ok(f"boardsize {size}")
    text = driver.ok(f"place_free_handicap {count}")
    vertices = text.split(" ")
    assert "\n" not in text and len(vertices) == count and len(set(vertices)) == count
    assert "PASS" not in text.upper().split()
    assert sorted(driver.ok("list_stones b").split()) == sorted(vertices)
    assert driver.session.state.to_play == Color.WHITE


def test_place_free_handicap_starts_with_the_fixed_points() -> None:
    driver = Driver()
    assert driver.ok("place_free_handicap 4").split() == ["D16", "Q16", "D4", "Q4"]
    assert default_free_points(19, 12)[:9] == default_free_points(19, 9)


def test_place_free_handicap_spreads_extra_stones_off_the_edge() -> None:
    points = default_free_points(19, 20)
    for point in points:
        y, x = divmod(point, 19)
        assert 0 < x < 18 and 0 < y < 18


def test_place_free_handicap_uses_the_players_points_when_valid() -> None:
    player = FakePlayer(handicap_points=[parse_gtp("C3", 9), parse_gtp("G7", 9), parse_gtp("E5", 9)])
    driver = Driver(player)
    driver.ok("boardsize 9")
    assert driver.ok("place_free_handicap 3") == "C3 G7 E5"
    driver.ok("clear_board")
    assert driver.ok("place_free_handicap 2") == "G7 C3"  # player gave 3 for 2: default used
    assert "not 2 distinct points" in driver.err.getvalue()


@pytest.mark.parametrize("count", ["0", "1", "361", "-2", "x"])
def test_place_free_handicap_invalid_counts(driver: Driver, count: str) -> None:
    expected = "syntax error" if not count.isdigit() else "invalid number of stones"
    assert driver.fail(f"place_free_handicap {count}").startswith(expected)


def test_set_free_handicap(driver: Driver) -> None:
    assert driver.ok("set_free_handicap D4 q16 K10") == ""
    assert driver.session.state.handicap == 3 and driver.session.state.to_play == Color.WHITE
    assert sorted(driver.ok("list_stones b").split()) == ["D4", "K10", "Q16"]


@pytest.mark.parametrize("args", ["", "d4", "d4 d4", "d4 pass", "pass pass"])
def test_set_free_handicap_bad_vertex_list(driver: Driver, args: str) -> None:
    assert driver.fail(f"set_free_handicap {args}").startswith("bad vertex list")
    assert driver.ok("list_stones b") == ""


def test_genmove_plays_the_players_move(driver: Driver) -> None:
    driver.session.player.script[:] = [parse_gtp("D4", 19), PASS, RESIGN]  # type: ignore[attr-defined]
    assert driver.ok("genmove b") == "D4"
    assert driver.ok("genmove w") == "pass"
    assert driver.ok("genmove b") == "resign"
    moves = driver.session.state.moves
    assert moves == [(Color.BLACK, parse_gtp("D4", 19)), (Color.WHITE, PASS)]


def test_genmove_for_the_colour_not_to_move(driver: Driver) -> None:
    driver.session.player.script[:] = [parse_gtp("C3", 19)]  # type: ignore[attr-defined]
    assert driver.ok("genmove white") == "C3"
    assert driver.session.state.moves == [(Color.WHITE, parse_gtp("C3", 19))]


def test_genmove_rejects_an_illegal_engine_move(driver: Driver) -> None:
    driver.ok("play b d4")
    driver.session.player.script[:] = [parse_gtp("D4", 19), 10_000, "e5"]  # type: ignore[attr-defined]
    assert driver.fail("genmove w").startswith("engine chose an illegal move D4")
    assert driver.fail("genmove w").startswith("engine")
    assert driver.fail("genmove w").startswith("engine returned an invalid move 'e5'")
    assert len(driver.session.state.moves) == 1


def test_reg_genmove_does_not_play_and_writes_pass_upper_case(driver: Driver, player: FakePlayer) -> None:
    player.script[:] = [parse_gtp("Q4", 19), PASS]
    assert driver.ok("reg_genmove b") == "Q4"
    assert driver.ok("reg_genmove b") == "PASS"
    assert driver.session.state.moves == []


def test_genmove_cleanup_flag_reaches_the_player(driver: Driver, player: FakePlayer) -> None:
    player.always_pass = True
    assert driver.ok("kgs-genmove_cleanup w") == "pass"
    assert ("genmove", (Color.WHITE, True)) in player.calls


def test_final_score_uses_the_players_dead_stones(driver: Driver, player: FakePlayer) -> None:
    driver.ok("boardsize 5")
    driver.ok("komi 0.5")
    driver.ok("play b c3")
    assert driver.ok("final_score") == "B+24.5"  # area: 25 points for Black, komi 0.5
    driver.ok("play w a1")
    player.dead = [parse_gtp("A1", 5)]
    assert driver.ok("final_score") == "B+24.5"
    assert driver.ok("final_status_list dead") == "A1"
    assert driver.ok("final_status_list alive") == "C3"
    assert driver.ok("final_status_list seki") == ""
    player.dead = []
    assert driver.ok("final_status_list dead") == ""
    assert driver.ok("final_status_list alive") == "C3\nA1"
    assert driver.fail("final_status_list maybe").startswith("syntax error")


def test_final_status_list_prints_one_chain_per_line(driver: Driver, player: FakePlayer) -> None:
    driver.ok("boardsize 9")
    for line in ("play b e5", "play b e4", "play w c3", "play b c7"):
        driver.ok(line)
    assert driver.ok("final_status_list alive") == "C7\nE5 E4\nC3"  # as GNU Go prints it


def test_final_score_fails_on_bad_dead_list(driver: Driver, player: FakePlayer) -> None:
    player.dead = [parse_gtp("D4", 19)]  # no stone there
    assert driver.fail("final_score").startswith("cannot score")


def test_time_settings_forms(driver: Driver, player: FakePlayer) -> None:
    driver.ok("time_settings 300 30 5")
    assert player.time_control == TimeControl(TimeSystem.CANADIAN, 300, 30, 5)
    driver.ok("time_settings 600 0 0")
    assert player.time_control == TimeControl(TimeSystem.ABSOLUTE, 600)
    driver.ok("time_settings 0 1 0")
    assert player.time_control == TimeControl(TimeSystem.NONE)
    driver.ok("time_settings 0 10 1")
    assert player.time_control == TimeControl(TimeSystem.CANADIAN, 0, 10, 1)
    for bad in ("time_settings 1 2", "time_settings a 1 1", "time_settings 1 1 1.5"):
        assert driver.fail(bad).startswith("syntax error")  # not the command's form: nothing changes
    assert player.time_control == TimeControl(TimeSystem.CANADIAN, 0, 10, 1)


@pytest.mark.parametrize(("line", "what"), [("time_settings -25 30 1", "main time is -25"),
                                            ("time_settings 1 -1 1", "byo-yomi time is -1"),
                                            ("time_settings 1 1 -1", "byo-yomi stones is -1")])
def test_time_settings_out_of_range_are_refused_in_words_and_time_left_rules(driver: Driver, player: FakePlayer,
                                                                           line: str, what: str) -> None:
    """gtp2ogs's plain-GTP fallback for a Fischer clock sends INITIAL-INC as main time: negative when the initial
    time is below the increment. The answer says why, and the old clock no longer applies."""
    driver.ok("time_settings 0 10 1")
    assert driver.fail(line) == f"invalid time settings: {what}, it must be >= 0; the clock now follows time_left"
    assert player.time_control == TimeControl(TimeSystem.NONE)


def test_time_left(driver: Driver, player: FakePlayer) -> None:
    driver.ok("time_left b 123 0")
    driver.ok("time_left white 7.5 3")
    assert [(r.color, r.seconds, r.stones) for r in player.clock] == [(Color.BLACK, 123, 0), (Color.WHITE, 7.5, 3)]
    assert driver.fail("time_left x 1 1").startswith("syntax error")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("kgs-time_settings none", TimeControl(TimeSystem.NONE)),
        ("kgs-time_settings absolute 600", TimeControl(TimeSystem.ABSOLUTE, 600)),
        ("kgs-time_settings canadian 600 300 25", TimeControl(TimeSystem.CANADIAN, 600, 300, 25)),
        ("kgs-time_settings byoyomi 1200 30 5", TimeControl(TimeSystem.BYOYOMI, 1200, 30, periods=5)),
        ("kata-time_settings fischer 300 20", TimeControl(TimeSystem.FISCHER, 300, increment=20)),
        ("kata-time_settings fischer-capped 300 20 600 -1",
         TimeControl(TimeSystem.FISCHER_CAPPED, 300, increment=20, main_time_limit=600, max_time_per_move=-1)),
        ("kata-time_settings BYOYOMI 10 5 3", TimeControl(TimeSystem.BYOYOMI, 10, 5, periods=3)),
    ],
)
def test_kgs_and_kata_time_settings(driver: Driver, player: FakePlayer, line: str, expected: TimeControl) -> None:
    assert driver.ok(line) == ""
    assert player.time_control == expected


@pytest.mark.parametrize("line", ["kgs-time_settings", "kgs-time_settings fischer 300 20",
                                  "kgs-time_settings byoyomi 1 2", "kgs-time_settings absolute x",
                                  "kata-time_settings sudden 5", "kata-time_settings canadian 1 2 3 4",
                                  "kata-time_settings fischer -5 2"])
def test_time_settings_errors(driver: Driver, player: FakePlayer, line: str) -> None:
    assert driver.fail(line).startswith("invalid time settings: times and counts must not be negative"
                                        if "-5" in line else "syntax error: ")
    assert driver.fail(line).endswith("; the clock now follows time_left")
    assert player.time_control == TimeControl(TimeSystem.NONE)  # the old clock is dropped: time_left rules


@pytest.mark.parametrize(("line", "message"), [
    ("kgs-time_settings canadian 600 0 25", "Canadian overtime needs both a period time and a number of stones"),
    ("kgs-time_settings byoyomi 600 5 0", "byo-yomi needs both a period time and a number of periods"),
])
def test_clock_rules_rejected_in_words_and_the_session_goes_on(driver: Driver, player: FakePlayer, line: str,
                                                               message: str) -> None:
    assert driver.fail(line) == f"{message}; the clock now follows time_left"  # a plain answer, not an internal error
    assert player.time_control == TimeControl(TimeSystem.NONE)  # no stale clock: time_left rules
    assert driver.ok("name") == "miai"


def test_kata_list_time_settings_mentions_fischer_capped(driver: Driver) -> None:
    assert "fischer-capped" in driver.ok("kata-list_time_settings").split("\n")


def test_kata_raw_nn(driver: Driver) -> None:
    assert driver.ok("kata-raw-nn 3") == "symmetry 3\nwhiteWin 0.5\noptimism 0"
    assert driver.ok("kata-raw-nn all 1.0").startswith("symmetry None")
    assert driver.fail("kata-raw-nn 8").startswith("syntax error")


SGF = "(;GM[1]FF[4]SZ[9]KM[5.5]RU[Japanese];B[ee];W[dc];B[cd];W[gd])"


def test_loadsgf_positions_and_colour_to_move(driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.sgf").write_text(SGF)
    assert driver.ok("loadsgf g.sgf") == "black"
    state = driver.session.state
    assert (state.size, state.komi, state.rules.name, len(state.moves)) == (9, 5.5, "japanese", 4)
    assert driver.ok("loadsgf g.sgf 3") == "black"  # before move 3: B E5, W D7 played
    assert driver.ok("list_stones b") == "E5" and driver.ok("list_stones w") == "D7"
    assert driver.ok("loadsgf g.sgf 2") == "white"
    assert driver.ok(f"loadsgf {tmp_path / 'g.sgf'} 1") == "black"
    assert driver.session.state.moves == []


def test_loadsgf_failures_keep_the_game(driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.sgf").write_text("(;GM[1]SZ[9];B[ee];W[ee])")  # second move on an occupied point
    (tmp_path / "junk.sgf").write_text("this is not sgf")
    driver.ok("play b d4")
    for name in ("missing.sgf", "bad.sgf", "junk.sgf", "."):
        assert driver.fail(f"loadsgf {name}").startswith("cannot load file")
    assert driver.session.state.size == 19 and len(driver.session.state.moves) == 1


def test_printsgf_round_trips_through_loadsgf(driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for line in ("boardsize 9", "komi 3.5", "fixed_handicap 3", "play w e5", "play b pass", "play w c5"):
        driver.ok(line)
    text = driver.ok("printsgf")
    assert text.startswith("(;") and "SZ[9]" in text and "HA[3]" in text
    assert driver.ok("printsgf saved.sgf") == ""
    assert (tmp_path / "saved.sgf").read_text().strip() == text
    before = (driver.ok("list_stones b"), driver.ok("list_stones w"))
    driver.ok("clear_board")
    assert driver.ok("loadsgf saved.sgf") == "black"
    assert (driver.ok("list_stones b"), driver.ok("list_stones w")) == before
    assert driver.session.state.komi == 3.5 and driver.session.state.handicap == 3
    assert driver.fail("printsgf /nonexistent-dir/x.sgf").startswith("cannot write file '/nonexistent-dir/x.sgf'")


def test_rules_and_komi_changes_keep_sgf_setup_stones(driver: Driver, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "setup.sgf").write_text("(;GM[1]SZ[9]AB[cc][gg]AW[ee]PL[W];W[cg];B[gc])")
    assert driver.ok("loadsgf setup.sgf") == "white"
    before = (driver.ok("list_stones b"), driver.ok("list_stones w"))
    driver.ok("kata-set-rules chinese")
    driver.ok("komi 0.5")
    assert (driver.ok("list_stones b"), driver.ok("list_stones w")) == before
    state = driver.session.state
    assert len(state.moves) == 2 and state.to_play == Color.WHITE and state.rules.name == "chinese"
    driver.ok("undo")
    driver.ok("undo")
    assert driver.fail("undo").startswith("cannot undo")
    assert driver.ok("list_stones w") == "E5"  # the setup stones stay


def test_loadsgf_reads_an_old_file_with_one_warning_line_per_repair(driver: Driver, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An old server's record (AB repeated, B and W in one node, text after the game) loads; stderr says what was
    repaired, naming the file, line and column."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.sgf").write_text("(;GM[1]SZ[9]HA[2]KM[0.5]AB[cc]AB[gg]\n;W[ee];B[ce]W[ge])\nbye\n")
    assert driver.ok("loadsgf old.sgf") == "black"
    assert driver.ok("list_stones b") == "C7 C5 G3" and driver.ok("list_stones w") == "E5 G5"
    assert driver.err.getvalue().splitlines() == [
        "miai: warning: old.sgf: line 1, column 2: no FF in the root: read as FF[4] (older forms accepted)",
        "miai: warning: old.sgf: line 1, column 31: AB repeated in one node: the points are joined",
        "miai: warning: old.sgf: line 2, column 13: B[ce] and W[ge] in one node: the 2 moves are played in file order",
        "miai: warning: old.sgf: line 3, column 1: text after the game tree is ignored ('bye')",
    ]
    assert driver.ok("printsgf").startswith("(;FF[4]GM[1]")  # written back strict
    assert "AB[cc][gg]" in driver.ok("printsgf") and "B[ce]\n;W[ge]" in driver.ok("printsgf")


@pytest.mark.parametrize("line, reply", [
    ("loadsgf missing.sgf", "cannot load file: missing.sgf: no such file"),
    ("loadsgf no-dir/x.sgf", "cannot load file: no-dir/x.sgf: no such directory no-dir"),
    ("loadsgf .", "cannot load file: .: is a directory, not a file"),
    ("printsgf no-dir/deeper/x.sgf", "cannot write file 'no-dir/deeper/x.sgf': no such directory no-dir"),
    ("printsgf .", "cannot write file '.': is a directory, not a file"),
])
def test_file_failures_explain_themselves_in_one_line(driver: Driver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      line: str, reply: str) -> None:
    """The reply says which file and what is wrong with it, without errno numbers (as KataGo puts the reason in
    its reply); nothing more on stderr."""
    monkeypatch.chdir(tmp_path)
    assert driver.fail(line) == reply
    assert driver.err.getvalue() == ""


@pytest.mark.parametrize("text, reply", [
    ("(;GM[1]FF[4]SZ[9]\n;B[ee];W[cc", "line 2, column 9: unterminated property value (missing ']')"),
    ("(;GM[1]FF[4]SZ[9];B[ee];W[ee])", "illegal SGF move 2 (WHITE 'ee')"),
])
def test_a_bad_sgf_file_is_named_with_its_line_and_column_in_the_reply(driver: Driver, tmp_path: Path, text: str,
                                                                      reply: str) -> None:
    path = tmp_path / "bad.sgf"
    path.write_text(text)
    driver.ok("komi 0.5")
    assert driver.fail(f"loadsgf {path}").startswith(f"cannot load file: {path}: {reply}")
    assert driver.ok("get_komi") == "0.5"  # the game in force stays


@pytest.mark.parametrize("name", ["/dev/zero", "/dev/stdin", "/dev/null", "/proc"])
def test_loadsgf_refuses_devices_and_directories(driver: Driver, name: str) -> None:
    assert driver.fail(f"loadsgf {name}").startswith("cannot load file")


def test_printsgf_refuses_to_write_into_pipes_and_devices(driver: Driver, tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # writing here would block forever with no reader
    assert driver.fail(f"printsgf {fifo}") == f"cannot write file '{fifo}': not a regular file"
    assert driver.fail("printsgf /proc").startswith("cannot write file '/proc'")


def test_genmove_accepts_numpy_integers(driver: Driver, player: FakePlayer) -> None:
    import numpy as np

    player.script[:] = [np.int64(parse_gtp("C3", 19)), np.int32(PASS), True]
    assert driver.ok("genmove b") == "C3"
    assert driver.ok("genmove w") == "pass"
    assert driver.fail("genmove b").startswith("engine returned an invalid move True")
