"""The match runner against scripted GTP engines (tests/engine/scripted_engines) and, if installed, GNU Go.

Each test plays real games between real subprocesses; the scripted engines keep their own independent board.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from miai.match.elo import SprtConfig
from miai.go.clock import Clock, TimeControl, TimeControlError, TimeSystem
from miai.match.runner import (
    MatchConfig,
    MatchError,
    MatchSummary,
    ProgressPrinter,
    _time_left_command,
    load_openings,
    ownership_dead_stones,
    parse_score,
    run_match,
)
from miai.go.coords import PASS, Color, parse_gtp
from miai.go.rules import Rules
from miai.go.sgf import load_sgf
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation

SCRIPTED = Path(__file__).parent / "scripted_engines" / "scripted.py"
GNUGO = "/usr/games/gnugo"

pytestmark = pytest.mark.timeout(120)


def engine(*args: str) -> list[str]:
    """Command line of a scripted engine with these options."""
    return [sys.executable, str(SCRIPTED), *args]


RANDOM_A = engine("--random", "1", "--name", "randomA")
RANDOM_B = engine("--random", "2", "--name", "randomB")
PASSER = engine("--pass-after", "1")


def quiet_match(black: list[str], white: list[str], **options: object) -> MatchSummary:
    """run_match on 5x5 with output captured (the progress table goes to a string)."""
    settings: dict[str, object] = {"games": 2, "size": 5, "komi": 0.5, "command_timeout": 20.0}
    settings.update(options)
    dead_stones = settings.pop("dead_stones", None)
    return run_match(black, white, MatchConfig(**settings), progress=ProgressPrinter(io.StringIO()),
                     dead_stones=dead_stones)  # type: ignore[arg-type]


# -- forfeits: crash, hang, illegal move ---------------------------------------------------------------------


def test_a_crashing_engine_forfeits_and_the_match_goes_on() -> None:
    summary = quiet_match(engine("--random", "1", "--crash-at", "2"), RANDOM_B, games=3)
    assert len(summary.games) == 3
    for game in summary.games:  # restarted every game, it crashes again on its second genmove
        assert game.method == "crash" and game.culprit == "A" and game.winner_label == "B"
        assert "crashing on purpose" in game.reason
    assert [g.result for g in summary.games] == ["W+F", "B+F", "W+F"]
    assert summary.wins == (0, 3)
    assert summary.culprits() == {"A": {"crash": 3}, "B": {}}


@pytest.mark.slow
def test_a_hanging_engine_loses_on_time_and_is_replaced() -> None:
    summary = quiet_match(RANDOM_A, engine("--random", "2", "--hang-at", "2"), move_timeout=1.0, games=2)
    first, second = summary.games
    assert (first.method, first.culprit, first.result) == ("time", "B", "B+T")
    assert "no answer to genmove within 1 s" in first.reason
    assert (second.method, second.culprit, second.result) == ("time", "B", "W+T")
    assert summary.wins == (2, 0)


def test_an_illegal_move_forfeits_with_its_reason() -> None:
    summary = quiet_match(engine("--random", "1", "--illegal-at", "3"), RANDOM_B, games=1)
    (game,) = summary.games
    assert (game.method, game.culprit, game.result) == ("illegal", "A", "W+F")
    assert "occupied" in game.reason
    assert game.moves == 4  # two moves each, then the illegal fifth move is not recorded


def test_an_unreadable_move_is_illegal() -> None:
    summary = quiet_match(engine("--moves", "Z99"), RANDOM_B, games=1)
    assert summary.games[0].method == "illegal"
    assert "unreadable move 'z99'" in summary.games[0].reason


def test_resignation() -> None:
    summary = quiet_match(engine("--moves", "resign"), RANDOM_B, games=1)
    (game,) = summary.games
    assert (game.method, game.result, game.winner_label, game.culprit) == ("resign", "W+R", "B", None)


def test_rejecting_a_legal_move_voids_the_game() -> None:
    summary = quiet_match(engine("--moves", "C3"), engine("--reject-play"), games=1)
    (game,) = summary.games
    assert game.method == "void" and game.winner is None and game.result == "Void"
    assert "rejected the legal 'play B C3'" in game.reason
    assert summary.voids == 1 and summary.elo.games == 0


def test_an_engine_that_does_not_start_stops_the_match() -> None:
    with pytest.raises(MatchError, match="does not start"):
        quiet_match(["/nonexistent/engine"], RANDOM_B)


# -- scoring -------------------------------------------------------------------------------------------------


def test_agreeing_final_scores_decide_the_game() -> None:
    summary = quiet_match(engine("--pass-after", "1", "--final-score", "B+10"),
                          engine("--pass-after", "1", "--final-score", "b+10.0"), games=1)
    (game,) = summary.games
    assert (game.method, game.result, game.score) == ("final_score", "B+10", -10.0)
    assert game.engine_scores == ("B+10", "b+10.0")


def test_disagreeing_final_scores_fall_back_to_miai_count(capsys: pytest.CaptureFixture[str]) -> None:
    summary = quiet_match(engine("--pass-after", "1", "--final-score", "B+10"),
                          engine("--pass-after", "1", "--final-score", "W+5"), games=2, komi=7.5)
    for game in summary.games:
        # Both passed at once: an empty board, so the count is the komi.
        assert (game.method, game.result, game.score) == ("count", "W+7.5", 7.5)
        assert "all stones alive" in game.reason and "B+10" in game.reason
    # A is White in game 2 and wins it.
    assert [g.winner_label for g in summary.games] == ["B", "A"]
    # The operator hears that a disputed game was counted with every stone alive, and what would judge it.
    warned = [line for line in capsys.readouterr().err.splitlines() if "disagree on the winner" in line]
    assert len(warned) == 2 and "game 1" in warned[0] and "--dead-model" in warned[0]


def test_engines_agreeing_on_the_winner_but_not_the_margin_decide_the_game() -> None:
    # An all-alive count would say W+7.5 here; both engines say Black won, so Black wins by the smaller margin.
    summary = quiet_match(engine("--pass-after", "1", "--final-score", "B+10"),
                          engine("--pass-after", "1", "--final-score", "B+3.5"), games=1, komi=7.5)
    (game,) = summary.games
    assert (game.method, game.result, game.score, game.winner) == ("final_score", "B+3.5", -3.5, "B")
    assert "agree on the winner" in game.reason


def test_one_engine_unable_to_score_means_a_count() -> None:
    summary = quiet_match(engine("--pass-after", "1", "--final-score", "B+10"), PASSER, games=1)
    assert summary.games[0].method == "count"


def test_dead_stones_callback_is_used_by_the_count() -> None:
    black = engine("--moves", "C3", "--pass-after", "2")
    alive = quiet_match(black, PASSER, games=1, komi=7.5, alternate=False)
    assert alive.games[0].result == "B+17.5"  # the lone stone owns the 5x5 board: 25 - 7.5
    seen = []

    def c3_is_dead(state: object) -> list[int]:
        seen.append(state)
        return [parse_gtp("C3", 5)]

    dead = quiet_match(black, PASSER, games=1, komi=7.5, alternate=False, dead_stones=c3_is_dead)
    game = dead.games[0]
    assert (game.method, game.result) == ("count", "W+7.5")
    assert "1 dead stones" in game.reason and len(seen) == 1


def test_the_move_limit_stops_and_scores_a_game() -> None:
    summary = quiet_match(RANDOM_A, RANDOM_B, games=1, max_moves=6)
    (game,) = summary.games
    assert game.moves == 6 and game.method == "count" and "move limit 6" in game.reason


def test_parse_score() -> None:
    assert parse_score("W+2.5") == 2.5
    assert parse_score("B+31") == -31.0
    assert parse_score(" 0 ") == 0.0
    for bad in (None, "B+R", "W+", "X+3", "", "B+nan", "W+inf"):
        assert parse_score(bad) is None


# -- colours, openings, SGF, summary, progress ---------------------------------------------------------------


def test_random_engines_alternate_colours_and_every_game_ends(tmp_path: Path) -> None:
    summary = quiet_match(RANDOM_A, RANDOM_B, games=4, sgf_dir=str(tmp_path))
    assert [(g.black, g.white) for g in summary.games] == [("A", "B"), ("B", "A")] * 2
    assert all(g.method == "count" and 0 < g.moves < 100 for g in summary.games)
    assert summary.wins[0] + summary.wins[1] + summary.draws == 4
    assert summary.engines[0].name == "randomA" and summary.engines[1].name == "randomB"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"game-000{i}.sgf" for i in range(1, 5)] + ["results.jsonl"]


def test_sgf_records_result_rules_komi_and_timings(tmp_path: Path) -> None:
    summary = quiet_match(RANDOM_A, engine("--random", "2", "--illegal-at", "4"), games=1, sgf_dir=str(tmp_path),
                          rules="tromp-taylor", komi=6.5)
    game = summary.games[0]
    assert game.sgf_path is not None
    sgf = load_sgf(Path(game.sgf_path).read_text())
    assert (sgf.size, sgf.komi, sgf.rules, sgf.result) == (5, 6.5, "tromp-taylor", "B+F")
    assert sgf.black_player == "randomA 1.0 (A)"
    assert len(sgf.moves) == game.moves == 7
    assert all(c is not None and c.endswith(" s") for c in sgf.comments[:-1])
    assert "illegal move" in (sgf.comments[-1] or "")
    # The referee's record replays under the match rules.
    assert sgf.to_state().moves == sgf.moves


def test_openings_are_played_with_both_colours(tmp_path: Path) -> None:
    openings = tmp_path / "openings.txt"
    openings.write_text("# two openings\nC3 C4\nB2, D4  # comment\n")
    assert load_openings(openings, MatchConfig(size=5)) == [[parse_gtp("C3", 5), parse_gtp("C4", 5)],
                                          [parse_gtp("B2", 5), parse_gtp("D4", 5)]]
    summary = quiet_match(PASSER, PASSER, games=4, openings=str(openings), sgf_dir=str(tmp_path / "sgf"))
    starts = [load_sgf(Path(g.sgf_path).read_text()).moves[:2] for g in summary.games if g.sgf_path]
    expected = load_openings(openings, MatchConfig(size=5))
    assert [[m for _c, m in s] for s in starts] == [expected[i // 2] for i in range(4)]
    assert [(g.black, g.moves) for g in summary.games] == [("A", 4), ("B", 4), ("A", 4), ("B", 4)]


def test_a_resumed_match_plays_the_rest_of_the_schedule(tmp_path: Path) -> None:
    openings = tmp_path / "openings.txt"
    openings.write_text("C3 C4\nB2 D4\nD2 B4\n")
    full = quiet_match(PASSER, PASSER, games=6, openings=str(openings), sgf_dir=str(tmp_path / "full"))
    rest = quiet_match(PASSER, PASSER, games=6, first_game=4, openings=str(openings), sgf_dir=str(tmp_path / "rest"))

    def schedule(summary: MatchSummary) -> list[tuple[int, str, list[tuple[object, int]]]]:
        return [(g.number, g.black, load_sgf(Path(g.sgf_path).read_text()).moves[:2]) for g in summary.games
                if g.sgf_path]

    assert [g.number for g in rest.games] == [4, 5, 6]
    assert schedule(rest) == schedule(full)[3:]  # game 4 is opening 2 with B as Black, as in the full run
    assert sorted(p.name for p in (tmp_path / "rest").iterdir()) == ["game-0004.sgf", "game-0005.sgf",
                                                                     "game-0006.sgf", "results.jsonl"]
    with pytest.raises(ValueError, match="first game"):
        MatchConfig(games=6, first_game=7)


@pytest.mark.slow
def test_concurrent_games_keep_the_schedule_and_the_summary(tmp_path: Path) -> None:
    """Three games at once: the same games, openings and colours as one at a time, listed by number; each
    game's engines are their own processes (their stderr apart in the log dir)."""
    openings = tmp_path / "openings.txt"
    openings.write_text("C3 C4\nB2 D4\nD2 B4\n")
    one = quiet_match(PASSER, PASSER, games=6, openings=str(openings), sgf_dir=str(tmp_path / "one"))
    three = quiet_match(PASSER, PASSER, games=6, openings=str(openings), sgf_dir=str(tmp_path / "three"),
                        concurrency=3, log_dir=str(tmp_path / "logs"))

    def schedule(summary: MatchSummary) -> list[tuple[int, str, str, list[tuple[object, int]]]]:
        return [(g.number, g.black, g.result, load_sgf(Path(g.sgf_path).read_text()).moves) for g in summary.games
                if g.sgf_path]

    assert [g.number for g in three.games] == [1, 2, 3, 4, 5, 6]
    assert schedule(three) == schedule(one)
    assert (three.wins, three.draws) == (one.wins, one.draws)
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == ["A.stderr", "A2.stderr", "A3.stderr",
                                                                     "B.stderr", "B2.stderr", "B3.stderr"]
    with pytest.raises(ValueError, match="concurrency"):
        MatchConfig(concurrency=0)


def test_concurrent_games_warn_once_per_engine(capsys: pytest.CaptureFixture[str]) -> None:
    """An engine without kata-set-rules is named once, not once for each of its processes."""
    quiet_match(PASSER, PASSER, games=4, concurrency=2, rules="japanese")
    warnings = [line for line in capsys.readouterr().err.splitlines() if "does not list kata-set-rules" in line]
    assert sorted(w.split()[2] for w in warnings) == ["A", "B"]  # the games start side by side, in either order


def test_concurrent_games_stop_when_the_sprt_decides() -> None:
    """No game starts after the SPRT decides; the ones already running are counted."""
    summary = quiet_match(RANDOM_A, engine("--moves", " ".join(["resign"] * 30)), games=40, concurrency=2,
                          sprt=SprtConfig(elo0=0, elo1=200))
    assert 16 <= len(summary.games) <= 18 and summary.stopped_early
    assert [g.number for g in summary.games] == list(range(1, len(summary.games) + 1))
    assert summary.sprt is not None and summary.sprt.verdict == "H1"


def test_both_engines_are_told_every_opening_move(tmp_path: Path) -> None:
    # A long opening on 5x5 leaves few points free; an engine that missed its own colour's opening moves would
    # soon pick an occupied point and forfeit.
    openings = tmp_path / "openings.txt"
    openings.write_text("C3 C4 B3 D4 D3 B4 C2 E4 B2 A4\n")
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    summary = quiet_match(RANDOM_A + ["--log", str(logs[0])], RANDOM_B + ["--log", str(logs[1])], games=2,
                          openings=str(openings))
    assert all(g.method != "illegal" for g in summary.games), [g.reason for g in summary.games]
    for log in logs:
        plays = [line for line in log.read_text().splitlines() if line.split()[1:2] == ["play"]]  # "id play ..."
        for vertex in ("C3", "C4", "A4"):
            assert sum(line.endswith(" " + vertex) for line in plays) >= 2  # once per game, whoever moved


def test_bad_openings_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("C3 C3\n")
    with pytest.raises(MatchError, match="occupied"):
        load_openings(bad, MatchConfig(size=5))
    bad.write_text("C3 Z1\n")
    with pytest.raises(MatchError, match="bad.txt:1"):
        load_openings(bad, MatchConfig(size=5))


def test_summary_json_and_text(tmp_path: Path) -> None:
    summary = quiet_match(engine("--moves", "resign"), RANDOM_B, games=2)
    path = tmp_path / "summary.json"
    summary.write_json(path)
    data = json.loads(path.read_text())
    # A resigns as Black in game 1; in game 2 A is White and resigns again.
    assert data["wins"] == {"A": 0, "B": 1} or data["wins"] == {"A": 0, "B": 2}
    assert data["games_played"] == 2 and data["win_rate_A"] == summary.win_rate
    assert data["elo_A_minus_B"]["elo"] == summary.elo.elo
    assert data["games"][0]["method"] == "resign" and data["games"][0]["winner_label"] == "B"
    assert "A 0 - B" in summary.format() and "Elo A - B" in summary.format()


def test_progress_table_has_a_line_per_game() -> None:
    out = io.StringIO()
    run_match(RANDOM_A, RANDOM_B, MatchConfig(games=3, size=5), progress=ProgressPrinter(out))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("A = randomA") and "result" in lines[2]
    assert [line.split()[0] for line in lines[3:]] == ["1", "2", "3"]


def test_sprt_stops_the_match_early() -> None:
    # B resigns every game: with elo1 = 200 the pentanomial SPRT accepts H1 after 8 pairs won 2-0
    # (tests/match/test_sprt.py), 16 games.
    summary = quiet_match(RANDOM_A, engine("--moves", " ".join(["resign"] * 30)), games=20,
                          sprt=SprtConfig(elo0=0, elo1=200))
    assert len(summary.games) == 16 and summary.stopped_early
    assert summary.pentanomial == (0, 0, 0, 0, 8)
    assert summary.sprt is not None and summary.sprt.verdict == "H1"


# -- time control --------------------------------------------------------------------------------------------


def test_clock_absolute_and_canadian() -> None:
    absolute = Clock(TimeControl.parse_spec("10"))
    assert absolute.charge(6.0) == 0 and absolute.allowance() == pytest.approx(4.0)
    assert absolute.charge(4.3) == pytest.approx(0.3) and not absolute.lost_on_time(margin=0.5)  # within the margin
    overrun = Clock(TimeControl.parse_spec("10"))
    overrun.charge(10.6)
    assert overrun.lost_on_time(margin=0.5)

    canadian = Clock(TimeControl.parse_spec("2+10/2"))
    assert _time_left_command(canadian, Color.BLACK) == "time_left b 2 0"
    assert canadian.charge(3.0) == 0  # main time gone, 1 s into the first period
    assert canadian.in_overtime and _time_left_command(canadian, Color.BLACK) == "time_left b 9 1"
    assert canadian.charge(8.0) == 0  # second stone of the period: a fresh period follows
    assert canadian.period_left == 10.0 and canadian.stones_left == 2
    canadian.charge(10.5)
    assert canadian.lost_on_time(margin=0.0)


def test_time_control_parsing() -> None:
    assert TimeControl.parse_spec("300") == TimeControl(TimeSystem.ABSOLUTE, main_time=300)
    assert TimeControl.parse_spec("0+5") == TimeControl(TimeSystem.CANADIAN, period_time=5, period_stones=1)
    assert TimeControl.parse_spec("60+30/5").gtp_arguments() == "60 30 5"
    assert TimeControl.parse_spec("60").gtp_arguments() == "60 0 0"
    assert TimeControl.parse_spec("60+30/5").spec() == "60+30/5" and TimeControl.parse_spec("60").spec() == "60"
    for bad in ("", "x", "0", "1+2/0", "-3"):
        with pytest.raises(TimeControlError):
            TimeControl.parse_spec(bad)
    with pytest.raises(ValueError, match="absolute, Canadian, byo-yomi or Fischer"):
        MatchConfig(time=TimeControl(TimeSystem.FISCHER_CAPPED, main_time=10, increment=1))


@pytest.mark.slow
def test_slow_engine_loses_on_its_clock() -> None:
    # 1 s absolute per game, 0.4 s a move and a 0.1 s margin: the third move overruns.
    summary = quiet_match(engine("--random", "1", "--slow", "0.4"), RANDOM_B, games=1,
                          time=TimeControl.parse_spec("1"), time_margin=0.1)
    (game,) = summary.games
    assert (game.method, game.culprit, game.result) == ("time", "A", "W+T")
    assert game.moves == 4


# -- GNU Go --------------------------------------------------------------------------------------------------


@pytest.mark.gnugo
@pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go not installed at /usr/games/gnugo")
@pytest.mark.slow
def test_gnugo_beats_a_random_mover_on_7x7(tmp_path: Path) -> None:
    # --capture-all-dead: the random mover cannot score, so miai counts with every stone alive (GTP.md 7.9).
    gnugo = f"{GNUGO} --mode gtp --level 1 --chinese-rules --capture-all-dead"
    summary = run_match(gnugo, RANDOM_B, MatchConfig(games=2, size=7, komi=7.5, sgf_dir=str(tmp_path)),
                        progress=ProgressPrinter(io.StringIO()))
    assert summary.engines[0].name == "GNU Go" and summary.engines[0].version == "3.8"
    assert summary.wins == (2, 0)
    assert all(g.method in ("count", "final_score", "resign") for g in summary.games)
    assert all(load_sgf(Path(g.sgf_path).read_text()).result == g.result for g in summary.games if g.sgf_path)


@pytest.mark.gnugo
@pytest.mark.skipif(not os.access(GNUGO, os.X_OK), reason="GNU Go not installed at /usr/games/gnugo")
@pytest.mark.slow
def test_gnugo_against_itself_agrees_on_the_score() -> None:
    gnugo = f"{GNUGO} --mode gtp --level 1 --chinese-rules"
    summary = run_match(gnugo, gnugo, MatchConfig(games=1, size=7, komi=9.5),
                        progress=ProgressPrinter(io.StringIO()))
    (game,) = summary.games
    assert game.method == "final_score" and game.engine_scores[0] == game.engine_scores[1]
    assert game.result == game.engine_scores[0]


# -- dead stones from a net's ownership ----------------------------------------------------------------------


class _FixedOwnership:
    """An evaluator stand-in that returns one fixed ownership map (side to move's view)."""

    max_batch = 1

    def __init__(self, ownership: list[float] | None) -> None:
        self.ownership = None if ownership is None else np.array(ownership, dtype=np.float32)

    def evaluate(self, states: list[GameState]) -> list[Evaluation]:
        n = states[0].size ** 2
        policy = np.full(n + 1, 1.0 / (n + 1), dtype=np.float32)
        return [Evaluation(policy, 0.5, 0.5, 0.0, 0.0, 1.0, 0.0, self.ownership) for _ in states]


def test_ownership_dead_stones_flips_to_the_stone_colour() -> None:
    state = GameState(3, Rules.preset("chinese"), 7.5)
    state.push(parse_gtp("A3", 3))  # black stone at point 0
    state.push(parse_gtp("C1", 3))  # white stone at point 8; Black to move
    # Side to move (Black) owns point 0 weakly and point 8 strongly: the white stone is dead.
    ownership = [0.2, 0, 0, 0, 0, 0, 0, 0, 0.9]
    assert ownership_dead_stones(_FixedOwnership(ownership))(state) == [8]
    # Now Black's own stone sits in White's area, and White's is alive.
    ownership = [-0.8, 0, 0, 0, 0, 0, 0, 0, -0.9]
    assert ownership_dead_stones(_FixedOwnership(ownership))(state) == [0]
    # A threshold keeps weakly owned stones alive.
    assert ownership_dead_stones(_FixedOwnership(ownership), threshold=0.85)(state) == []
    with pytest.raises(MatchError, match="ownership"):
        ownership_dead_stones(_FixedOwnership(None))(state)


# -- what the runner tells the engines -----------------------------------------------------------------------


def _commands(log: Path) -> list[str]:
    """The command lines an engine received, without their ids."""
    return [line.split(maxsplit=1)[1].strip() for line in log.read_text().splitlines()]


def test_setup_commands_time_left_and_moves_reach_both_engines(tmp_path: Path) -> None:
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    quiet_match(engine("--moves", "C3 pass", "--log", str(log_a), "--kata", "max_visits"),
                engine("--moves", "D4 pass", "--log", str(log_b)), games=1, komi=6.5, rules="japanese",
                visits=50, time=TimeControl.parse_spec("60+5/1"), alternate=False)
    a, b = _commands(log_a), _commands(log_b)
    assert a[:4] == ["protocol_version", "name", "version", "list_commands"]
    assert a[4:8] == ["boardsize 5", "clear_board", "komi 6.5", "kata-set-rules japanese"]
    # KataGo's name is tried first, then miai's.
    assert a[8:11] == ["time_settings 60 5 1", "kata-set-param maxVisits 50", "kata-set-param max_visits 50"]
    # B lists neither kata command, so it gets only the standard ones.
    assert b[4:8] == ["boardsize 5", "clear_board", "komi 6.5", "time_settings 60 5 1"]
    game_a = a[a.index("kata-set-param max_visits 50") + 1:]
    assert game_a[:3] == ["time_left b 60 0", "genmove B", "play W D4"]
    assert "final_score" in game_a and game_a[-1] == "quit"
    assert b[b.index("time_settings 60 5 1") + 1:][:3] == ["play B C3", "time_left w 60 0", "genmove W"]


def test_clocks_in_turn_reach_the_engines_in_the_most_faithful_form(tmp_path: Path) -> None:
    """Byo-yomi and Fischer game by game: kgs-/kata-time_settings where listed, else GTP's approximations."""
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    summary = quiet_match(engine("--moves", "C3 pass", "--log", str(log_a), "--kgs-time"),
                          engine("--moves", "D4 pass", "--log", str(log_b)), games=2, alternate=False,
                          times=(TimeControl.parse_spec("0+5x1"), TimeControl.parse_spec("10+1f")))
    a, b = _commands(log_a), _commands(log_b)
    assert [c for c in a if "time_settings" in c] == ["kgs-time_settings byoyomi 0 1 5",
                                                      "kata-time_settings fischer 10 1"]
    assert [c for c in b if "time_settings" in c] == ["time_settings 4 1 1", "time_settings 10 1 1"]
    assert "time_left b 1 5" in a and "time_left b 10 0" in a  # byo-yomi: the period and periods left
    assert all(g.method != "time" for g in summary.games)


def test_thinking_time_is_attributed_to_each_engine() -> None:
    summary = quiet_match(engine("--random", "1", "--slow", "0.05", "--pass-after", "4"), engine("--pass-after", "4"),
                          games=2)
    thinking = summary.thinking()
    assert thinking["A"]["genmoves"] + thinking["B"]["genmoves"] == sum(g.moves for g in summary.games)
    assert thinking["A"]["genmoves"] > 0 and thinking["B"]["genmoves"] > 0
    assert thinking["A"]["mean"] >= 0.05 > thinking["B"]["mean"]
    for game in summary.games:
        (black_moves, _), (white_moves, _) = game.thinking
        assert black_moves + white_moves == game.moves == len(game.move_times)
    assert "seconds per move: A 0.0" in summary.format()


# -- engines that die at other moments ------------------------------------------------------------------------


def test_dying_on_the_opponents_move_forfeits_the_receiver() -> None:
    summary = quiet_match(RANDOM_A, engine("--random", "2", "--die-on", "play"), games=1)
    (game,) = summary.games
    assert (game.method, game.culprit, game.result) == ("crash", "B", "B+F")
    assert "'play B" in game.reason and "exit code 4" in game.reason


def test_dying_during_setup_forfeits_and_the_next_game_restarts_it() -> None:
    summary = quiet_match(RANDOM_A, engine("--die-on", "boardsize"), games=2)
    assert [(g.method, g.culprit) for g in summary.games] == [("crash", "B"), ("crash", "B")]
    assert all("game setup" in g.reason for g in summary.games)


def test_dying_while_scoring_costs_no_game() -> None:
    summary = quiet_match(engine("--pass-after", "1", "--final-score", "W+0.5"),
                          engine("--pass-after", "1", "--die-on", "final_score"), games=2, komi=0.5)
    assert [(g.method, g.result, g.culprit) for g in summary.games] == [("count", "W+0.5", None)] * 2


def test_engine_stderr_is_kept_in_the_log_dir(tmp_path: Path) -> None:
    quiet_match(engine("--random", "1", "--crash-at", "2"), RANDOM_B, games=1, log_dir=str(tmp_path))
    assert "crashing on purpose" in (tmp_path / "A.stderr").read_text()
    assert (tmp_path / "B.stderr").exists()


def test_a_failing_dead_stone_callback_falls_back_to_all_alive() -> None:
    def broken(state: GameState) -> list[int]:
        raise MatchError("the net has no ownership output")

    summary = quiet_match(engine("--moves", "C3", "--pass-after", "2"), PASSER, games=1, komi=7.5,
                          dead_stones=broken)
    (game,) = summary.games
    assert (game.method, game.result) == ("count", "B+17.5")
    assert "dead-stone detection failed: the net has no ownership output" in game.reason


def test_summary_text_names_forfeits() -> None:
    summary = quiet_match(engine("--random", "1", "--illegal-at", "2"), engine("--random", "2", "--crash-at", "2"),
                          games=2)
    # Game 1: A's second genmove is illegal. Game 2: B (not restarted, so its count goes on) crashes on its second.
    assert [(g.method, g.culprit) for g in summary.games] == [("illegal", "A"), ("crash", "B")]
    assert "forfeits: A illegal 1; B crash 1" in summary.format()
    assert summary.methods() == {"illegal": 1, "crash": 1}


def test_openings_from_a_directory_of_sgf_files(tmp_path: Path) -> None:
    (tmp_path / "b.sgf").write_text("(;GM[1]FF[4]SZ[5];B[cc];W[bb])")
    (tmp_path / "a.sgf").write_text("(;GM[1]FF[4]SZ[5];B[dd])")
    assert load_openings(tmp_path, MatchConfig(size=5)) == [[parse_gtp("D2", 5)],
                                                            [parse_gtp("C3", 5), parse_gtp("B4", 5)]]
    (tmp_path / "c.sgf").write_text("(;GM[1]FF[4]SZ[9];B[dd])")
    with pytest.raises(MatchError, match="board size 9"):
        load_openings(tmp_path, MatchConfig(size=5))


def test_openings_from_old_sgf_files_load_with_a_warning_per_repair(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.sgf"
    old.write_text("(;GM[1]FF[3]SZ[5];B[cc]W[bb];B[tt])\nsaved by a server\n")
    assert load_openings(old, MatchConfig(size=5)) == [[parse_gtp("C3", 5), parse_gtp("B4", 5), PASS]]
    assert capsys.readouterr().err.splitlines() == [
        f"match: warning: {old}: line 1, column 24: B[cc] and W[bb] in one node: the 2 moves are played in file order",
        f"match: warning: {old}: line 1, column 30: B[tt] read as a pass (FF[3]'s pass; FF[4] writes B[])",
        f"match: warning: {old}: line 2, column 1: text after the game tree is ignored ('saved by a server')",
    ]
    old.write_text("(;GM[1]FF[4]SZ[5];B[cc]W[")
    with pytest.raises(MatchError, match=r"old\.sgf: malformed SGF: unterminated property value"):
        load_openings(old, MatchConfig(size=5))


def test_move_hook_and_terminal_counter() -> None:
    seen: list[tuple[int, int]] = []
    run_match(engine("--moves", "C3 D4", "--pass-after", "3"), engine("--moves", "B2", "--pass-after", "2"),
              MatchConfig(games=1, size=5), progress=ProgressPrinter(io.StringIO()),
              on_move=lambda game, moves: seen.append((game, moves)))
    assert seen == [(1, n) for n in range(1, 6)]  # C3 B2 D4 pass pass

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    run_match(RANDOM_A, RANDOM_B, MatchConfig(games=1, size=5), progress=(printer := ProgressPrinter(screen)),
              on_move=printer.move)
    printer.close()
    text = screen.getvalue()
    assert "1/1 games" in text and "game 1 move 1" in text and "A-B-draw 0-1-0" in text  # the bar, as it went
    assert text.endswith("\r") and text.split("\r")[-2].strip() == ""  # closed: the bar is wiped, the table stays
    assert [line.split()[0] for line in text.splitlines() if line.strip().startswith("1 ")] == ["1"]


# -- miai itself over GTP ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_miai_gtp_plays_a_match_and_accepts_rules_and_visits(capfd: pytest.CaptureFixture[str]) -> None:
    miai = [sys.executable, "-m", "miai.engine", "gtp", "--model", "uniform"]
    summary = quiet_match(miai, RANDOM_B, games=2, visits=8, rules="tromp-taylor", komi=7.5)
    assert summary.engines[0].name == "miai"
    assert all(g.method in ("count", "final_score", "resign") and g.culprit is None for g in summary.games)
    warnings = capfd.readouterr().err
    assert "engine B" in warnings and "engine A" not in warnings  # miai took kata-set-rules and max_visits


# -- handicap ------------------------------------------------------------------------------------------------


def test_handicap_stones_reach_both_engines_and_white_starts(tmp_path: Path) -> None:
    log_a, log_b = tmp_path / "a.log", tmp_path / "b.log"
    summary = quiet_match(engine("--random", "1", "--free-handicap", "--log", str(log_a)),
                          engine("--random", "2", "--fixed-handicap", "C3 E5", "--log", str(log_b)),
                          games=1, size=7, handicap=2, komi=0.5, sgf_dir=str(tmp_path / "sgf"))
    (game,) = summary.games
    assert game.method == "count"
    # GNU Go's fixed 2-stone handicap on 7x7 is E5 and C3 (the third line), top-left to bottom-right.
    assert "set_free_handicap E5 C3" in _commands(log_a)
    b = _commands(log_b)
    assert "fixed_handicap 2" in b and b[b.index("fixed_handicap 2") + 1] == "genmove W"
    sgf = load_sgf(Path(game.sgf_path or "").read_text())
    assert sgf.handicap == 2 and sorted(sgf.setup_black) == sorted(parse_gtp(v, 7) for v in ("E5", "C3"))
    assert sgf.moves[0][0] == Color.WHITE


def test_an_engine_placing_other_handicap_points_forfeits() -> None:
    summary = quiet_match(engine("--free-handicap"), engine("--fixed-handicap", "C5 E3"), games=1, size=7, handicap=2)
    (game,) = summary.games
    assert (game.method, game.culprit) == ("crash", "B")
    assert "fixed_handicap placed 'C5 E3', the referee E5 C3" in game.reason
    # An engine with neither handicap command cannot take part in a handicap game.
    summary = quiet_match(RANDOM_A, engine("--free-handicap"), games=1, size=7, handicap=2)
    assert (summary.games[0].method, summary.games[0].culprit) == ("crash", "A")
    assert "handicap placement" in summary.games[0].reason


def test_handicap_is_validated_and_shifts_openings(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="handicap"):
        MatchConfig(size=5, handicap=2)
    with pytest.raises(ValueError, match="handicap"):
        MatchConfig(size=9, handicap=1)
    openings = tmp_path / "o.txt"
    openings.write_text("E5\n")  # White's first move on a handicap stone
    with pytest.raises(MatchError, match="occupied"):
        load_openings(openings, MatchConfig(size=7, handicap=2))


def test_a_match_summary_is_recorded_in_a_net_manifest(tmp_path) -> None:
    import hashlib
    import json

    from miai.match.summary import result_entry
    from miai.nets.train.manifest import record_match

    net = tmp_path / "tiny.onnx"
    net.write_bytes(b"not really a net")
    manifest = {"file": "tiny.onnx", "sha256": hashlib.sha256(net.read_bytes()).hexdigest(), "measured": {}}
    (tmp_path / "tiny.json").write_text(json.dumps(manifest))
    summary = quiet_match(RANDOM_A, PASSER, games=2)
    summary.write_json(str(tmp_path / "summary.json"))
    entry = record_match(net, "random-vs-passer", result_entry([tmp_path / "summary.json"]), note="5x5")
    stored = json.loads((tmp_path / "tiny.json").read_text())["measured"]["matches"]["random-vs-passer"]
    assert stored == entry and entry["games"] == 2 and entry["size"] == 5 and entry["note"] == "5x5"
    assert entry["wins_A"] + entry["wins_B"] + entry["draws"] + entry["voids"] == 2
    assert (entry["elo_A_minus_B"], entry["elo_95"]) == (round(summary.elo.elo), [round(summary.elo.low),
                                                                                   round(summary.elo.high)])
    with pytest.raises(ValueError, match="not a miai match"):
        result_entry([tmp_path / "tiny.json"])


@pytest.mark.slow
def test_a_schedule_resumed_in_a_later_session_adds_its_games_to_the_stored_result(tmp_path) -> None:
    """`miai train record --add`: games 3-4 join games 1-2 in the manifest as if recorded together, though the
    first part's summary file is gone; a different pairing is refused and the manifest left as it was."""
    import hashlib
    import json

    from click.testing import CliRunner, Result

    from miai.engine.cli.main import main
    from miai.match.summary import result_entry

    net = tmp_path / "tiny.onnx"
    net.write_bytes(b"not really a net")
    manifest = tmp_path / "tiny.json"
    manifest.write_text(json.dumps({"file": "tiny.onnx", "sha256": hashlib.sha256(net.read_bytes()).hexdigest()}))
    first, second, other = (tmp_path / f"{name}.json" for name in ("first", "second", "other"))
    quiet_match(RANDOM_A, RANDOM_B, games=2).write_json(first)
    quiet_match(RANDOM_A, RANDOM_B, games=4, first_game=3).write_json(second)
    quiet_match(RANDOM_A, PASSER, games=2).write_json(other)
    both = result_entry([first, second])

    def record(*args: str) -> Result:
        return CliRunner().invoke(main, ["train", "record", str(net), *args, "--key", "rr"])

    assert record(str(first), "--note", "games 1-2").exit_code == 0
    first.unlink()
    assert "--note" in record(str(second), "--add").output  # a resumed schedule says what it now holds
    assert record(str(second), "--add", "--note", "games 1-4").exit_code == 0
    stored = json.loads(manifest.read_text())["measured"]["matches"]["rr"]
    for key in ("games", "wins_A", "wins_B", "draws", "voids", "elo_A_minus_B", "elo_95", "genmoves_A",
                "genmoves_B"):
        assert stored[key] == both[key], key
    for side in ("A", "B"):  # both parts' rates are rounded before they are combined
        assert stored[f"seconds_per_move_{side}"] == pytest.approx(both[f"seconds_per_move_{side}"], abs=2e-3)
    assert stored["games"] == 4 and stored["note"] == "games 1-4"

    refused = record(str(other), "--add", "--note", "games 1-6")
    assert refused.exit_code != 0 and "same pairing" in refused.output
    assert json.loads(manifest.read_text())["measured"]["matches"]["rr"] == stored
    missing = CliRunner().invoke(main, ["train", "record", str(net), str(second), "--key", "nn", "--add",
                                        "--note", "x"])
    assert missing.exit_code != 0 and "holds no match 'nn'" in missing.output


def test_a_recorded_match_names_nets_by_file_name_not_by_this_machine_s_directories(tmp_path) -> None:
    """A manifest ships with its net: the engines' commands keep the file names, not where they lay when measured."""
    import hashlib
    import json

    from miai.nets.train.manifest import portable_command, record_match

    net = tmp_path / "tiny.onnx"
    net.write_bytes(b"not really a net")
    (tmp_path / "tiny.json").write_text(json.dumps({"file": "tiny.onnx",
                                                    "sha256": hashlib.sha256(net.read_bytes()).hexdigest()}))
    entry = {"A": f"miai gtp --model {tmp_path / 'x18b.onnx'} --set search.max_time=0.3",
             "B": "/opt/peers/pachi -e uct -t 1 threads=2", "games": 2}
    stored = record_match(net, "k", entry)
    assert stored["A"] == "miai gtp --model x18b.onnx --set search.max_time=0.3"
    assert stored["B"] == "pachi -e uct -t 1 threads=2"
    assert json.loads((tmp_path / "tiny.json").read_text())["measured"]["matches"]["k"] == stored
    assert portable_command("miai gtp --model=~/nets/a.onnx") == "miai gtp --model=a.onnx"
    relative = "miai gtp --model nets/default/miai-b5c48.onnx --set search.max_visits=0"
    assert portable_command(relative) == relative  # a path inside the repository stays as typed


@pytest.mark.slow
def test_two_streams_of_one_schedule_are_recorded_as_one_result(tmp_path) -> None:
    """Games 1-2 and 3-4 played apart add up to a 4-game result, Elo over all four; another pairing is refused."""
    from miai.match.elo import estimate_elo
    from miai.match.summary import result_entry

    first, second = quiet_match(RANDOM_A, PASSER, games=2), quiet_match(RANDOM_A, PASSER, games=2)
    first.write_json(str(tmp_path / "1.json"))
    second.write_json(str(tmp_path / "2.json"))
    entry = result_entry([tmp_path / "1.json", tmp_path / "2.json"])
    wins_a, wins_b = first.wins[0] + second.wins[0], first.wins[1] + second.wins[1]
    draws = first.draws + second.draws
    assert (entry["games"], entry["wins_A"], entry["wins_B"], entry["draws"]) == (4, wins_a, wins_b, draws)
    assert entry["elo_A_minus_B"] == round(estimate_elo(wins_a, draws, wins_b).elo)
    quiet_match(PASSER, RANDOM_A, games=2).write_json(str(tmp_path / "other.json"))
    with pytest.raises(ValueError, match="same pairing"):
        result_entry([tmp_path / "1.json", tmp_path / "other.json"])


@pytest.mark.slow
def test_the_json_summary_holds_the_games_played_while_the_match_runs(tmp_path: Path) -> None:
    """A match stopped by hand (here: killed) keeps the summary of the games it finished."""
    import shlex
    import subprocess
    import time

    summary = tmp_path / "match.json"
    slow = shlex.join(engine("--random", "3", "--slow", "0.05"))
    fast = shlex.join(RANDOM_B)
    process = subprocess.Popen([sys.executable, "-m", "miai.engine", "match", "--black", slow, "--white", fast,
                                "--games", "200", "--size", "5", "--komi", "0.5", "--json", str(summary)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not summary.is_file() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
        assert process.poll() is None, "the match should still be running"
        played = json.loads(summary.read_text(encoding="utf-8"))
    finally:
        process.kill()
        process.wait()
    assert 1 <= played["games_played"] < 200
    assert played["wins"]["A"] + played["wins"]["B"] + played["draws"] + played["voids"] == played["games_played"]
