"""The GameState adapter: what the playout evaluator reads from a real game, checked against the go layer."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS, Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.playouts import PlayoutEvaluator, position_from_state, run_playouts

# Two living groups and nothing left to play: the game is decided, every playout is two passes.
TWO_LIVE_GROUPS = """
    . X O . O
    X X O O O
    X X O O O
    X . X O O
    X X X O .
"""


def state_from(diagram: str, rules: str = "tromp-taylor", komi: float = 7.5) -> GameState:
    rows = [line.split() for line in diagram.strip().splitlines()]
    size = len(rows)
    state = GameState(size, Rules.preset(rules), komi)
    cells = [c for row in rows for c in row]
    state.set_stones([m for m, c in enumerate(cells) if c == "X"], [m for m, c in enumerate(cells) if c == "O"])
    return state


def play(state: GameState, *vertices: str) -> None:
    for vertex in vertices:
        state.push(parse_gtp(vertex, state.size))


def test_position_reads_stones_side_to_move_and_komi() -> None:
    state = GameState(9, Rules.preset("chinese"), 7.5)
    play(state, "D4", "E5")
    position = position_from_state(state)
    assert position.size == 9
    assert position.to_play == 1
    assert list(position.stones) == [int(v) for v in state.stones()]
    assert position.komi == 7.5 and not position.territory and not position.tax_all
    assert position.legal_moves == tuple(state.legal_moves())


def test_handicap_bonus_is_added_to_komi_under_area_rules() -> None:
    state = GameState(9, Rules.preset("chinese"), 0.5)
    state.fixed_handicap(3)
    position = position_from_state(state)
    assert position.to_play == int(Color.WHITE)
    assert position.komi == 0.5 + 3  # chinese: White gets N points for N handicap stones
    japanese = GameState(9, Rules.preset("japanese"), 0.5)
    japanese.fixed_handicap(3)
    assert position_from_state(japanese).komi == 0.5
    assert position_from_state(japanese).territory


def test_ko_ban_reaches_the_policy() -> None:
    state = state_from("""
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """, rules="chinese")
    play(state, "C3")  # Black takes the white stone at B3
    ko = parse_gtp("B3", 5)
    assert ko in state.banned_points()
    position = position_from_state(state)
    assert ko in position.banned
    evaluation = PlayoutEvaluator(seed=1).evaluate([state])[0]
    assert evaluation.policy[ko] == 0
    # Every other empty point is legal for White here, and has the same uniform probability as pass.
    legal = [m for m in range(25) if evaluation.policy[m] > 0]
    assert legal == state.legal_moves()
    assert np.allclose(evaluation.policy[legal], evaluation.policy[25])


def test_policy_support_matches_the_games_legal_moves_after_random_play() -> None:
    rng = random.Random(8)
    state = GameState(7, Rules.preset("tromp-taylor"), 7.5)
    evaluator = PlayoutEvaluator(seed=2)
    for _ in range(40):
        evaluation = evaluator.evaluate([state])[0]
        support = [m for m in range(49) if evaluation.policy[m] > 0]
        assert support == state.legal_moves()
        assert evaluation.policy[49] > 0
        moves = state.legal_moves()
        state.push(rng.choice(moves) if moves else PASS)


@pytest.mark.parametrize("rules", ["tromp-taylor", "chinese", "japanese", "stone-scoring"])
def test_finished_game_score_agrees_with_game_state(rules: str) -> None:
    # Black to move, then White to move after Black's pass: the playouts' score is GameState's, seen by the mover.
    state = state_from(TWO_LIVE_GROUPS, rules=rules, komi=0.5)
    for _ in range(2):
        evaluation = PlayoutEvaluator(playouts=3, seed=0).evaluate([state])[0]
        white_view = state.score()
        expected = white_view if state.to_play is Color.WHITE else -white_view
        assert evaluation.score_mean == pytest.approx(expected)
        assert evaluation.score_stdev == 0.0
        play(state, "pass")


def test_finished_game_score_counts_game_prisoners_under_territory_rules() -> None:
    state = state_from("""
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        . . . . .
    """, rules="japanese", komi=0.5)
    play(state, "C3")  # Black captures one white stone
    assert state.captures(Color.BLACK) == 1
    position = position_from_state(state)
    assert position.captures == (1, 0)
    # From here random play changes the board; what matters is that the capture counts in every playout's score:
    # a copy of the position without the prisoner scores exactly one point worse for Black in every playout.
    with_prisoner = run_playouts(position, 10, random.Random(3))
    without = run_playouts(replace(position, captures=(0, 0)), 10, random.Random(3))
    assert with_prisoner.score_mean - without.score_mean == pytest.approx(-1.0)  # White to move: Black's point


def test_evaluate_returns_one_evaluation_per_state_in_order() -> None:
    won = state_from(TWO_LIVE_GROUPS, komi=0.5)  # White ahead by 1.5 once both pass
    small = GameState(5, Rules.preset("tromp-taylor"), 7.5)
    evaluations = PlayoutEvaluator(playouts=4, seed=0).evaluate([won, small])
    assert len(evaluations) == 2
    assert evaluations[0].policy.shape == (26,) and evaluations[1].policy.shape == (26,)
    assert evaluations[0].score_mean == pytest.approx(-1.5)  # Black to move, all playouts identical
    assert evaluations[0].loss == 1.0


@pytest.mark.parametrize("size,seed", [(5, 1), (7, 2), (9, 3)])
def test_playout_board_agrees_with_game_state_move_by_move(size: int, seed: int) -> None:
    # Differential test: the lean board and the real GameState (simple ko, no suicide) play the same random game
    # and must agree on every point's legality, on the stones after each move and on the prisoners.
    from miai.nets.playouts import PlayoutBoard

    rng = random.Random(seed)
    state = GameState(size, Rules.preset("chinese"), 7.5)
    board = PlayoutBoard(size)
    points = board.geometry.points
    for _ in range(4 * size * size):
        color = int(state.to_play)
        banned = set(state.banned_points())
        lean_legal = [m for m in range(size * size) if m not in banned and board.is_legal(points[m], color)]
        assert lean_legal == state.legal_moves()
        if not lean_legal:
            break
        move = rng.choice(lean_legal)
        state.push(move)
        board.play(points[move], color)
        assert [board.color[p] for p in points] == [int(v) for v in state.stones()]
        assert board.captures[1:] == [state.captures(Color.BLACK), state.captures(Color.WHITE)]


@settings(max_examples=15, deadline=None)
@given(size=st.integers(3, 7), seed=st.integers(0, 2**32 - 1), pass_rate=st.sampled_from([0.0, 0.05]))
def test_playout_board_agrees_with_game_state_on_random_games(size: int, seed: int, pass_rate: float) -> None:
    from miai.go.coords import PASS as BOARD_PASS
    from miai.nets.playouts import PlayoutBoard

    rng = random.Random(seed)
    state = GameState(size, Rules.preset("chinese"), 7.5)
    board = PlayoutBoard(size)
    points = board.geometry.points
    for _ in range(3 * size * size):
        color = int(state.to_play)
        banned = set(state.banned_points())
        legal = [m for m in range(size * size) if m not in banned and board.is_legal(points[m], color)]
        assert legal == state.legal_moves()
        if not legal or rng.random() < pass_rate:
            state.push(PASS)
            board.play(BOARD_PASS, color)
            if state.is_over():
                break
            continue
        move = rng.choice(legal)
        state.push(move)
        board.play(points[move], color)
    assert [board.color[p] for p in points] == [int(v) for v in state.stones()]
