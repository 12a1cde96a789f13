"""Durable results (miai.match.results): every finished game in results.jsonl beside the SGFs, and a rerun of the
same match that plays only the missing games and counts each game once. Real games between scripted GTP engines."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from miai.match.elo import SprtConfig
from miai.match.results import RESULTS_NAME
from miai.match.runner import MatchConfig, MatchError, run_match
from miai.match.summary import GameRecord, MatchSummary, ProgressPrinter

SCRIPTED = Path(__file__).parents[1] / "engine" / "scripted_engines" / "scripted.py"
RANDOM_A = [sys.executable, str(SCRIPTED), "--random", "1", "--name", "randomA"]
RANDOM_B = [sys.executable, str(SCRIPTED), "--random", "2", "--name", "randomB"]

pytestmark = pytest.mark.timeout(120)


class Interrupt(Exception):
    """Stands for Ctrl-C (or a killed driver) after some games."""


def play(folder: Path, games: int = 6, stop_after: int | None = None, **options: object) -> tuple[MatchSummary, list[int]]:
    """A 5x5 match into `folder`; the numbers of the games this run played, in the order they ended."""
    played: list[int] = []

    def progress(record: GameRecord, summary: MatchSummary) -> None:
        played.append(record.number)
        ProgressPrinter(io.StringIO())(record, summary)
        if stop_after is not None and len(played) >= stop_after:
            raise Interrupt

    config = MatchConfig(**{"games": games, "size": 5, "komi": 0.5, "sgf_dir": str(folder), **options})  # type: ignore[arg-type]
    return run_match(RANDOM_A, RANDOM_B, config, progress=progress), played


def result_lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / RESULTS_NAME).read_text().splitlines()]


def test_each_game_is_in_the_results_file_as_soon_as_it_ends(tmp_path: Path) -> None:
    with pytest.raises(Interrupt):
        play(tmp_path, stop_after=3)
    lines = result_lines(tmp_path)
    assert lines[0]["match"]["size"] == 5  # type: ignore[index]
    assert [line["game"]["number"] for line in lines[1:]] == [1, 2, 3]  # type: ignore[index]
    assert sorted(p.name for p in tmp_path.glob("*.sgf")) == ["game-0001.sgf", "game-0002.sgf", "game-0003.sgf"]


@pytest.mark.slow
def test_rerunning_the_command_plays_only_the_missing_games_and_counts_each_once(tmp_path: Path) -> None:
    with pytest.raises(Interrupt):
        play(tmp_path, stop_after=4)
    first = result_lines(tmp_path)
    summary, played = play(tmp_path)
    assert played == [5, 6]
    assert [g.number for g in summary.games] == [1, 2, 3, 4, 5, 6]
    assert summary.elo.games == 6 and sum(summary.pentanomial) == 3
    lines = result_lines(tmp_path)
    assert lines[: len(first)] == first  # appended, never rewritten
    assert [line["game"]["number"] for line in lines[1:]] == [1, 2, 3, 4, 5, 6]  # type: ignore[index]
    again, played_again = play(tmp_path)  # everything is done: nothing is played, the summary is the same
    assert played_again == [] and again.games == summary.games
    assert (again.wins, again.draws) == (summary.wins, summary.draws)


@pytest.mark.slow
def test_a_longer_schedule_continues_and_first_game_limits_the_count(tmp_path: Path) -> None:
    play(tmp_path, games=4)
    summary, played = play(tmp_path, games=8, first_game=3)
    assert played == [5, 6, 7, 8]
    assert [g.number for g in summary.games] == [3, 4, 5, 6, 7, 8]  # games 1 and 2 are not this run's


@pytest.mark.slow
def test_concurrent_games_are_each_recorded_once(tmp_path: Path) -> None:
    with pytest.raises(Interrupt):
        play(tmp_path, games=8, stop_after=3, concurrency=2)
    summary, _ = play(tmp_path, games=8, concurrency=2)
    numbers = [line["game"]["number"] for line in result_lines(tmp_path)[1:]]  # type: ignore[index]
    assert sorted(numbers) == list(range(1, 9)) and [g.number for g in summary.games] == list(range(1, 9))


@pytest.mark.slow
def test_a_line_cut_short_by_a_crash_is_dropped_and_its_game_played_again(tmp_path: Path) -> None:
    play(tmp_path, games=2)
    path = tmp_path / RESULTS_NAME
    text = path.read_text()
    path.write_text(text[: len(text) - 40])  # the driver died while writing game 2's line
    summary, played = play(tmp_path, games=2)
    assert played == [2] and [g.number for g in summary.games] == [1, 2]
    assert len(result_lines(tmp_path)) == 3


def test_another_match_in_the_same_folder_is_refused(tmp_path: Path) -> None:
    play(tmp_path, games=2)
    with pytest.raises(MatchError, match=r"results.jsonl holds the games of another match \(komi: 0.5 there, 7.5"):
        play(tmp_path, games=2, komi=7.5)
    (tmp_path / RESULTS_NAME).write_text("not json\n")
    with pytest.raises(MatchError, match="not a miai match results file"):
        play(tmp_path, games=2)


@pytest.mark.slow
def test_a_resumed_sprt_that_had_decided_plays_nothing(tmp_path: Path) -> None:
    resigner = [sys.executable, str(SCRIPTED), "--moves", " ".join(["resign"] * 30)]
    config = MatchConfig(games=30, size=5, komi=0.5, sgf_dir=str(tmp_path), sprt=SprtConfig(0, 200))
    first = run_match(RANDOM_A, resigner, config, progress=ProgressPrinter(io.StringIO()))
    assert first.sprt is not None and first.sprt.verdict == "H1" and len(first.games) == 16
    played: list[int] = []
    again = run_match(RANDOM_A, resigner, config, progress=lambda record, summary: played.append(record.number))
    assert played == [] and len(again.games) == 16 and again.sprt is not None and again.sprt.verdict == "H1"
    assert again.stopped_early
