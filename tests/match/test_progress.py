"""The live progress of a match: plain table lines off a terminal, a bar with the standing, Elo, LLR and the games
running on each node on one."""

from __future__ import annotations

import io

from miai.match.elo import SprtConfig, sprt_pentanomial
from miai.match.runner import MatchConfig
from miai.match.summary import EngineInfo, GameRecord, ProgressPrinter, summarize


ONE_PAIR_WON = sprt_pentanomial([0, 0, 0, 0, 1], SprtConfig(0, 30)).llr  # about +0.08


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def records() -> list[GameRecord]:
    return [GameRecord(1, "A", "B", "B", "B+R", "resign", "", 30, 2.0),
            GameRecord(2, "B", "A", "W", "W+3.5", "final_score", "", 41, 2.5)]


def feed(printer: ProgressPrinter) -> None:
    config = MatchConfig(games=6, sprt=SprtConfig(0, 30))
    engines = (EngineInfo("A", "a", "miai", "1"), EngineInfo("B", "b", "gnugo", "3.8"))
    games = records()
    printer.running({"node1": 1, "node2": 1})
    for k in range(len(games)):
        printer(games[k], summarize(config, engines, games[: k + 1]))
    printer.running({"node1": 0, "node2": 1})


def test_off_a_terminal_every_game_is_one_plain_line_with_the_llr() -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out)
    feed(printer)
    printer.close()
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["A = miai 1", "B = gnugo 3.8"] and lines[2].endswith("LLR")
    assert lines[3].split()[:2] == ["1", "A"] and lines[4].split()[:2] == ["2", "B"]
    assert lines[4].split()[-1] == f"{ONE_PAIR_WON:+.2f}"  # one pair won 2-0, tested for elo 0 against 30
    assert "\r" not in out.getvalue() and len(lines) == 5


def test_on_a_terminal_a_bar_shows_games_standing_elo_llr_and_games_per_node() -> None:
    screen = Terminal()
    printer = ProgressPrinter(screen, total=6)
    feed(printer)
    shown = screen.getvalue().split("\r")
    last_bar = [part for part in shown if "games |" in part][-1]
    assert last_bar.startswith("2/6 games")
    assert "A-B-draw 2-0-0" in last_bar and "Elo > -113 " in last_bar  # a bound, not the clamp
    assert f"LLR {ONE_PAIR_WON:+.2f} (-2.94, +2.94)" in last_bar and "running node1:0 node2:1" in last_bar
    printer.close()
    assert screen.getvalue().endswith("\r")
