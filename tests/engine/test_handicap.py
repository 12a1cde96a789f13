"""KataGo's dynamic playout doubling advantage for handicap games (engine/handicap.py), worked by hand from
cpp/command/gtp.cpp (initialBlackAdvantage, getBoardSizeScaling, getPointsThresholdForHandicapGame,
updateDynamicPDAHelper), and how the player hands it to the net."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from miai.engine.config import Config, apply_overrides
from miai.engine.handicap import (board_size_scaling, dynamic_pda_for_white, handicap_stones, handicap_threshold,
                                  initial_black_advantage)
from miai.engine.player import EnginePlayer
from miai.go.coords import PASS, Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.gtp.player import AnalyzeRequest
from miai.nets.evaluator import Evaluation, UniformEvaluator


def _game(size: int = 19, komi: float = 0.5, handicap: int = 0, moves: str = "", rules: str = "chinese") -> GameState:
    state = GameState(size, Rules.preset(rules), komi)
    if handicap:
        state.fixed_handicap(handicap)
    for token in moves.split():
        color, vertex = token.split(":")
        state.push(PASS if vertex == "pass" else parse_gtp(vertex, size), Color.BLACK if color == "b" else Color.WHITE)
    return state


def test_handicap_stones_count_setup_stones_and_opening_black_moves() -> None:
    assert handicap_stones(_game(handicap=4)) == 4
    assert handicap_stones(_game(moves="b:D4 b:Q16 w:pass b:D16 w:C3")) == 3  # free placement by moves
    assert handicap_stones(_game(moves="b:D4 w:Q16")) == 0  # one black move: an even game
    assert handicap_stones(_game(moves="b:D4 b:Q16 w:C3 w:C4")) == 0  # two white moves in a row: a problem set-up
    stones = _game()
    stones.set_stones([parse_gtp("D4", 19), parse_gtp("Q16", 19)], [parse_gtp("C3", 19)])
    assert handicap_stones(stones) == 0  # white stones in the start position


def test_initial_black_advantage_by_hand() -> None:
    assert initial_black_advantage(_game(komi=7.5)) == -0.5
    # 4 stones, Chinese (White gets N = 4 points back): 15 * 3 + 7 - 0.5 - 4.
    assert initial_black_advantage(_game(handicap=4)) == 47.5
    # Japanese (territory, no bonus): 14 * 3 + 7 - 0.5.
    assert initial_black_advantage(_game(handicap=4, rules="japanese")) == 48.5


def test_board_size_scaling_and_threshold_by_hand() -> None:
    assert board_size_scaling(19) == 1.0 and handicap_threshold(19) == 4.0
    assert board_size_scaling(9) == pytest.approx((361 / 81) ** 0.75)  # 3.07
    assert handicap_threshold(9) == 2.0  # 4 / 3.07 = 1.30, at least 2


def test_a_fresh_handicap_game_gets_the_cap_in_eighths() -> None:
    # 19x19, 4 stones: min(2.75, 0.045 * (47.5 - 4) * 1) = 1.9575 -> 15.66 eighths -> 16 -> 2.0, for White.
    assert dynamic_pda_for_white(_game(handicap=4), 0.045, [], 0.0) == 2.0
    # Komi 0.5 on 19x19: 6.5 points, 0.045 * 2.5 = 0.1125 -> 0.9 eighths -> 1 -> 0.125.
    assert dynamic_pda_for_white(_game(), 0.045, [], 0.0) == 0.125
    # 9x9 komi 0.5: 0.045 * (6.5 - 2) * 3.07 = 0.62 -> 5 eighths -> 0.625.
    assert dynamic_pda_for_white(_game(size=9), 0.045, [], 0.0) == 0.625
    # Black behind (komi 20 on 19x19): the advantage is Black's, so White's is negative.
    # 13 points: 0.045 * (13 - 4) = 0.405 -> 3.24 eighths -> 3 -> 0.375.
    assert dynamic_pda_for_white(_game(komi=20.0), 0.045, [], 0.0) == -0.375
    assert dynamic_pda_for_white(_game(komi=7.5), 0.045, [], 0.0) == 0.0  # an even game
    assert dynamic_pda_for_white(_game(size=7), 0.045, [], 0.0) == 0.0  # 7x7 and smaller: never
    assert dynamic_pda_for_white(_game(handicap=4), 0.0, [], 0.0) == 0.0  # switched off


def test_the_advantage_follows_the_winrate_of_the_side_behind() -> None:
    game = _game(handicap=4, moves="w:Q3")  # White's stones are on the board now
    # White (behind) doing badly (value < -0.9): one step more, up to the cap.
    assert dynamic_pda_for_white(game, 0.045, [-0.95], 1.0) == 1.125
    assert dynamic_pda_for_white(game, 0.045, [-0.95], 2.0) == 2.0
    # Doing well enough (> -0.5): one step less, not below 0; in between: unchanged.
    assert dynamic_pda_for_white(game, 0.045, [-0.2], 1.0) == 0.875
    assert dynamic_pda_for_white(game, 0.045, [0.3], 0.0) == 0.0
    assert dynamic_pda_for_white(game, 0.045, [-0.7], 1.0) == 1.0


class AdvantageRecorder(UniformEvaluator):
    """A uniform evaluator that records the playout advantages it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.advantages: list[tuple[int, float]] = []

    def set_playout_advantage(self, color: int, value: float) -> None:
        self.advantages.append((color, value))

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        return super().evaluate(states)


def _player(evaluator: AdvantageRecorder) -> EnginePlayer:
    return EnginePlayer(evaluator, apply_overrides(Config(), ["search.seed=3", "search.max_visits=8",
                                                              "search.max_time=0"]))


def test_genmove_gives_the_side_behind_its_advantage_and_analysis_none() -> None:
    evaluator = AdvantageRecorder()
    player = _player(evaluator)
    game = _game(size=9, handicap=4)  # 9x9, 4 stones: far beyond the 2.75 hard cap
    player.genmove(game, Color.WHITE)
    assert evaluator.advantages[-1] == (int(Color.WHITE), 2.75)
    game.push(parse_gtp("E5", 9))  # (White's move) and Black to move: the same advantage, from Black's side
    game.push(parse_gtp("D6", 9))
    player.genmove(game, Color.WHITE)
    assert evaluator.advantages[-1][1] != 0.0
    stop = threading.Event()
    stop.set()
    player.analyze(game, Color.WHITE, AnalyzeRequest(), lambda _: None, stop)
    assert evaluator.advantages[-1] == (int(Color.WHITE), 0.0)


def test_an_even_game_gets_no_advantage() -> None:
    evaluator = AdvantageRecorder()
    _player(evaluator).genmove(_game(size=9, komi=7.0), Color.BLACK)
    assert evaluator.advantages[-1] == (int(Color.BLACK), 0.0)



def test_the_same_advantage_for_the_other_side_keeps_the_graph() -> None:
    """White's +2.75 and Black's -2.75 are one advantage seen from each side (a GUI asking the engine for both
    colours): the graph is kept. Another value, or none, clears it: every evaluation in it used the old one."""
    evaluator = AdvantageRecorder()
    player = _player(evaluator)
    game = _game(size=9, handicap=4)
    player.genmove(game, Color.WHITE)
    assert evaluator.advantages[-1] == (int(Color.WHITE), 2.75) and player.search.root is not None
    game.push(parse_gtp("E5", 9))  # Black to move
    player._set_playout_advantage(game, -2.75)
    assert player.search.root is not None
    player._set_playout_advantage(game, -2.625)
    assert player.search.root is None
