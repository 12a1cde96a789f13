"""Resignation (engine/resign.py): KataGo's ``shouldResign`` (cpp/command/gtp.cpp), worked by hand, and the player
resigning a lost game on its defaults, once per game."""

from __future__ import annotations

from dataclasses import replace

import pytest

from miai.engine.config import Config, PlayerConfig, apply_overrides
from miai.engine.handicap import initial_black_advantage
from miai.engine.player import EnginePlayer
from miai.engine.resign import should_resign
from miai.go.coords import PASS, Color
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.gtp.player import RESIGN
from miai.nets.evaluator import UniformEvaluator

LOST = -0.95  # a win-loss value (-1..1) below KataGo's default resignThreshold of -0.90
HOPEFUL = -0.85


def _game(size: int = 9, komi: float = 7.0, handicap: int = 0, passes: int = 0) -> GameState:
    """A game ``passes`` moves old (the moves are passes: only their number matters here)."""
    state = GameState(size, Rules.preset("chinese"), komi)
    if handicap:
        state.fixed_handicap(handicap)
    for _ in range(passes):
        state.push(PASS, state.to_play)
    return state


def test_the_default_resigns_after_three_lost_searches_in_a_row() -> None:
    config = PlayerConfig()
    assert (config.resign_threshold, config.resign_consecutive) == (0.05, 3)  # KataGo's -0.90, 3 turns
    black = _game()
    assert should_resign(black, [-LOST] * 3, 20.0, config)  # White's view: Black is lost
    assert not should_resign(black, [-LOST, -LOST], 20.0, config)  # not yet three searches
    assert not should_resign(black, [-LOST, -HOPEFUL, -LOST, -LOST], 20.0, config)
    assert should_resign(black, [-HOPEFUL, -LOST, -LOST, -LOST], 20.0, config)  # only the last three count
    white = _game(passes=1)
    assert should_resign(white, [LOST] * 3, -20.0, config)
    assert not should_resign(white, [-LOST] * 3, 20.0, config)  # lost for Black, not for White


def test_zero_threshold_never_resigns() -> None:
    assert not should_resign(_game(), [-1.0] * 10, 80.0, PlayerConfig(resign_threshold=0.0))


def test_min_score_difference_keeps_close_games() -> None:
    config = PlayerConfig(resign_min_score_difference=10.0)
    black = _game()
    assert not should_resign(black, [-LOST] * 3, 9.9, config)  # behind by less than the margin (KataGo: lead < 10)
    assert should_resign(black, [-LOST] * 3, 10.0, config)


def test_min_moves_per_board_area() -> None:
    config = PlayerConfig(resign_min_moves_per_board_area=0.25)  # int(0.25 * 81) = 20 moves on 9x9
    assert not should_resign(_game(passes=18), [-LOST] * 3, 30.0, config)
    assert should_resign(_game(passes=20), [-LOST] * 3, 30.0, config)


def test_white_in_a_handicap_game_follows_the_catch_up_schedule() -> None:
    # 9x9, 2 stones, komi 0.5, Chinese: Black starts 15 * 1 + 7 - 0.5 - 2 = 19.5 points ahead. White may resign from
    # turn 1 + 81 // 5 = 17; it has 0.6 * 81 - 17 = 31.6 turns to catch up, so at turn 20 it must be behind by more
    # than 19.5 * (31.6 - 3) / 31.6 + 5 + 0.15 * 19.5 = 25.574 points.
    assert initial_black_advantage(_game(komi=0.5, handicap=2)) == 19.5
    config = PlayerConfig()
    early = _game(komi=0.5, handicap=2, passes=16)
    assert early.to_play == Color.WHITE and not should_resign(early, [LOST] * 3, -80.0, config)
    white = _game(komi=0.5, handicap=2, passes=20)
    assert white.to_play == Color.WHITE
    assert not should_resign(white, [LOST] * 3, -25.5, config)
    assert should_resign(white, [LOST] * 3, -25.6, config)
    # Black in the same game is not held back by the schedule.
    black = _game(komi=0.5, handicap=2, passes=21)
    assert black.to_play == Color.BLACK and should_resign(black, [-LOST] * 3, 1.0, config)


class _BlackIsLost(UniformEvaluator):
    """Black is lost in every position, whoever is to move."""

    def evaluate(self, states):  # type: ignore[no-untyped-def]
        return [replace(e, win=0.01, loss=0.99) if s.to_play == Color.BLACK else replace(e, win=0.99, loss=0.01)
                for s, e in zip(states, super().evaluate(states))]


def _player(*sets: str) -> EnginePlayer:
    return EnginePlayer(_BlackIsLost(), apply_overrides(Config(), ["search.seed=7", "search.max_visits=10", *sets]))


def test_the_player_resigns_a_lost_game_on_its_defaults() -> None:
    player = _player()
    state = _game()
    assert [player.genmove(state, Color.BLACK) for _ in range(3)][-1] == RESIGN


def test_a_new_game_starts_the_count_again() -> None:
    player = _player()
    state = _game()
    assert player.genmove(state, Color.BLACK) != RESIGN
    assert player.genmove(state, Color.BLACK) != RESIGN
    other = _game(komi=6.5)  # clear_board and a new komi: another game
    assert player.genmove(other, Color.BLACK) != RESIGN
    assert player.genmove(other, Color.BLACK) != RESIGN
    assert player.genmove(other, Color.BLACK) == RESIGN


@pytest.mark.parametrize("name", ["resignMinScoreDifference", "player.resign_min_score_difference"])
def test_kata_set_param_sets_the_score_margin(name: str) -> None:
    player = _player()
    player.set_param(name, "15")
    assert player.config.player.resign_min_score_difference == 15.0
