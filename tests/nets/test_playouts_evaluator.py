"""PlayoutEvaluator: Evaluation shape, legal policy, priors, and win rates that track the position."""

from __future__ import annotations

import random

import numpy as np
import pytest

from miai.go.coords import Color
from miai.nets.playouts import (
    PlayoutBoard,
    PlayoutError,
    PlayoutEvaluator,
    PlayoutPosition,
    move_priors,
    run_playouts,
)
from miai.nets.playouts import compiled
from miai.nets.playouts.evaluator import COMPILED_PLAYOUTS

BLACK, WHITE = Color.BLACK, Color.WHITE



def parse(diagram: str) -> tuple[int, tuple[int, ...]]:
    """(size, flat stones) from rows of ``. X O`` (X black, O white), top row first."""
    rows = [line.split() for line in diagram.strip().splitlines()]
    codes = {".": 0, "X": BLACK, "O": WHITE}
    return len(rows), tuple(codes[c] for row in rows for c in row)

# Black: a large group with many eyes on the left; White: one stone on the right. Black is far ahead.
BLACK_WINNING = """
    . X . X . X . . .
    X X X X X X . . .
    . X . X . X . . .
    X X X X X X . . .
    . X . X . X . O .
    X X X X X X . . .
    . X . X . X . . .
    X X X X X X . . .
    . X . X . X . . .
"""

# Black has just taken a white stone at B3 by playing C3: White may not retake at B3 at once.
KO = """
    . . . . .
    . X O . .
    X . X O .
    . X O . .
    . . . . .
"""


def position(diagram: str, **kwargs: object) -> PlayoutPosition:
    size, stones = parse(diagram)
    return PlayoutPosition(size=size, stones=stones, **kwargs)  # type: ignore[arg-type]


def test_evaluation_shape_and_ranges() -> None:
    evaluation = PlayoutEvaluator(playouts=8, seed=3).evaluate_position(position(KO))
    assert evaluation.policy.shape == (26,) and evaluation.policy.dtype == np.float32
    assert evaluation.policy.sum() == pytest.approx(1.0, abs=1e-6)
    assert evaluation.ownership is not None
    assert evaluation.ownership.shape == (25,) and evaluation.ownership.dtype == np.float32
    assert np.all(np.abs(evaluation.ownership) <= 1.0)
    assert 0.0 <= evaluation.win <= 1.0
    assert evaluation.win + evaluation.loss + evaluation.no_result == pytest.approx(1.0)
    assert evaluation.lead == evaluation.score_mean
    assert evaluation.score_stdev >= 0.0


def test_uniform_policy_covers_exactly_the_legal_moves_and_pass() -> None:
    size, stones = parse(KO)
    # White to move; the ko point B3 (x=1, y=2) is banned by the position, as GameState would report it.
    ko = 2 * size + 1
    evaluation = PlayoutEvaluator(seed=0).evaluate_position(
        PlayoutPosition(size=size, stones=stones, to_play=WHITE, banned=(ko,)))
    policy = evaluation.policy
    occupied = [m for m, v in enumerate(stones) if v]
    assert np.all(policy[occupied] == 0)
    assert policy[ko] == 0
    legal = [m for m in range(25) if policy[m] > 0]
    assert len(legal) == 25 - len(occupied) - 1
    assert np.allclose(policy[legal], policy[25])  # uniform, pass included


def test_game_supplied_legal_moves_take_precedence() -> None:
    size, stones = parse(KO)
    evaluation = PlayoutEvaluator(seed=0).evaluate_position(
        PlayoutPosition(size=size, stones=stones, to_play=WHITE, legal_moves=(4, 24)))
    assert set(np.flatnonzero(evaluation.policy)) == {4, 24, 25}


TACTICS = """
    . X . . X O
    X X . . . .
    . . . O . .
    . . O X O .
    . . . . . .
    . . . . . .
"""


def test_priors_favour_captures_and_escapes_and_shun_own_eyes() -> None:
    size, stones = parse(TACTICS)
    board = PlayoutBoard.from_stones(stones, size)
    corner_eye, plain = 0, 2
    white_in_atari_liberty = 1 * size + 5  # F5: captures the white corner stone / lets it escape
    black_in_atari_liberty = 4 * size + 3  # D2: extends the black stone in atari / captures it

    def prior_for(color: int) -> np.ndarray:
        legal = [m for m, p in enumerate(board.geometry.points) if board.is_legal(p, color)]
        return move_priors(board, legal, color)

    black = prior_for(BLACK)
    assert black.sum() == pytest.approx(1.0, abs=1e-6)
    assert black[white_in_atari_liberty] / black[plain] == pytest.approx(1 + 3.0)  # capture of one stone
    assert black[black_in_atari_liberty] / black[plain] == pytest.approx(1 + 2.0)  # escape of one stone
    assert black[corner_eye] / black[plain] == pytest.approx(0.05)
    assert black[size * size] == pytest.approx(black[plain])  # pass weighs like a plain move
    white = prior_for(WHITE)
    assert white[black_in_atari_liberty] / white[plain] == pytest.approx(1 + 3.0)
    assert white[white_in_atari_liberty] / white[plain] == pytest.approx(1 + 2.0)
    assert white[corner_eye] == 0  # suicide for White


def test_an_escape_that_stays_in_atari_gets_no_bonus() -> None:
    size, stones = parse("""
        . . . . .
        . . O . .
        . O X O .
        . . . . .
        . . . . .
    """)
    board = PlayoutBoard.from_stones(stones, size)
    legal = [m for m, p in enumerate(board.geometry.points) if board.is_legal(p, BLACK)]
    policy = move_priors(board, legal, BLACK)
    # C2 (x=2, y=3) extends the atari-ed stone to two liberties: an escape. Surround C2 first to make it fail.
    assert policy[3 * size + 2] / policy[0] == pytest.approx(3.0)
    size, stones = parse("""
        . . . . .
        . . O . .
        . O X O .
        . O . O .
        . . O . .
    """)
    board = PlayoutBoard.from_stones(stones, size)
    legal = [m for m, p in enumerate(board.geometry.points) if board.is_legal(p, BLACK)]
    assert 3 * size + 2 not in legal  # now suicide: no escape to reward
    policy = move_priors(board, legal, BLACK)
    assert policy[3 * size + 2] == 0


def test_evaluator_with_priors_flag_uses_them() -> None:
    plain = PlayoutEvaluator(seed=0).evaluate_position(position(TACTICS))
    weighted = PlayoutEvaluator(seed=0, priors=True).evaluate_position(position(TACTICS))
    assert len(set(plain.policy[plain.policy > 0].round(6))) == 1
    assert weighted.policy[1 * 6 + 5] > weighted.policy[2]


def test_clearly_won_position_has_a_high_win_rate() -> None:
    black = PlayoutEvaluator(playouts=64, seed=1).evaluate_position(position(BLACK_WINNING, to_play=BLACK))
    white = PlayoutEvaluator(playouts=64, seed=1).evaluate_position(position(BLACK_WINNING, to_play=WHITE))
    assert black.win > 0.9 and black.score_mean > 30
    assert white.loss > 0.9 and white.score_mean < -30
    assert black.ownership is not None and white.ownership is not None
    # Black's eyes on the left are Black's in every playout: +1 for Black to move, -1 for White to move.
    assert black.ownership[0] == 1.0 and white.ownership[0] == -1.0


def test_even_position_has_a_middling_win_rate_and_symmetric_ownership() -> None:
    stats = run_playouts(PlayoutPosition(size=7, stones=(0,) * 49, komi=0.5), 300, random.Random(4))
    assert 0.3 < stats.win_rate < 0.7
    assert abs(stats.score_mean) < 8
    assert np.all(np.abs(stats.ownership()) < 0.5)


def test_komi_shifts_the_score_by_its_amount() -> None:
    low = run_playouts(position(BLACK_WINNING, komi=0.5), 40, random.Random(9))
    high = run_playouts(position(BLACK_WINNING, komi=10.5), 40, random.Random(9))
    # Same seed, same playouts: only komi differs, and the side to move (Black) loses it point for point.
    assert low.score_mean - high.score_mean == pytest.approx(10.0)


def test_game_over_position_is_scored_without_moves() -> None:
    size, stones = parse(KO)
    stats = run_playouts(PlayoutPosition(size=size, stones=stones, consecutive_passes=2, komi=0.0), 3,
                         random.Random(0))
    # Black: 4 stones + the B3 point; White: 3 stones; the big open region touches both colours.
    assert stats.score_stdev == 0.0
    assert stats.score_mean == pytest.approx(2.0)


def test_evaluator_arguments_are_checked() -> None:
    with pytest.raises(PlayoutError):
        PlayoutEvaluator(playouts=0)
    with pytest.raises(PlayoutError):
        PlayoutEvaluator(max_batch=0)
    assert PlayoutEvaluator(max_batch=8).max_batch == 8


def test_same_seed_same_evaluation() -> None:
    a = PlayoutEvaluator(playouts=5, seed=11).evaluate_position(position(KO))
    b = PlayoutEvaluator(playouts=5, seed=11).evaluate_position(position(KO))
    assert a.win == b.win and a.score_mean == b.score_mean
    assert np.array_equal(a.ownership, b.ownership)  # type: ignore[arg-type]


def test_model_name_spec() -> None:
    assert PlayoutEvaluator.is_spec("playouts") and PlayoutEvaluator.is_spec("Playouts:8:priors")
    assert not PlayoutEvaluator.is_spec("b6c96.onnx")
    plain = PlayoutEvaluator.from_spec("playouts")
    # Eight playouts a visit where they are compiled (numba installed), one in Python.
    assert plain.playouts == (COMPILED_PLAYOUTS if compiled.AVAILABLE else 1) and not plain.priors
    assert PlayoutEvaluator.from_spec("playouts:python").playouts == 1
    assert PlayoutEvaluator.from_spec("playouts:patterns").playouts == plain.playouts  # compiled too
    tuned = PlayoutEvaluator.from_spec("playouts:16:priors", seed=3, max_batch=8, symmetry_mode="fixed")
    assert tuned.playouts == 16 and tuned.priors and tuned.max_batch == 8
    assert PlayoutEvaluator.from_spec("playouts:priors").priors
    both = PlayoutEvaluator.from_spec("playouts:tactical:4:priors")
    assert both.tactical and both.priors and both.playouts == 4
    assert plain.tactical  # a default since 2026-11-25 (compiled, it won at equal time)
    # The mode's defaults (no self-atari, prior knowledge) unless "light" is named; flags named with it add to it.
    assert plain.no_self_atari and plain.knowledge and not plain.patterns and not plain.locality
    assert not plain.third_line
    local = PlayoutEvaluator.from_spec("playouts:light:locality")
    assert local.knowledge and local.locality  # the locality bonus is part of the knowledge
    third = PlayoutEvaluator.from_spec("playouts:light:thirdline")
    assert third.knowledge and third.third_line and not third.locality  # and so is the third-line bonus
    light = PlayoutEvaluator.from_spec("playouts:light")
    assert not (light.no_self_atari or light.knowledge or light.tactical or light.patterns or light.priors)
    light_tactical = PlayoutEvaluator.from_spec("playouts:light:tactical")
    assert light_tactical.tactical and not light_tactical.no_self_atari
    for bad in ("playout", "playouts:x", "playouts:0", "playouts:1:2", "playouts:priors:priors", "playouts:2:a:b:c"):
        with pytest.raises(PlayoutError):
            PlayoutEvaluator.from_spec(bad)


def test_playout_evaluator_satisfies_the_evaluator_protocol() -> None:
    from miai.nets.evaluator import Evaluator

    assert isinstance(PlayoutEvaluator(), Evaluator)


@pytest.mark.slow
def test_worker_processes_answer_each_state_in_order() -> None:
    """Two worker processes share a batch: every answer belongs to its own state (board size, legal moves, the side
    a huge komi favours), AMAF and prior knowledge included, and the evaluator works on after its workers close."""
    from miai.go.rules import Rules
    from miai.go.state import GameState

    chinese = Rules.preset("chinese")
    states = [GameState(9, chinese, 7.0), GameState(5, chinese, -40.5), GameState(5, chinese, 40.5),
              GameState(7, Rules.preset("japanese"), 6.5)] * 3
    evaluator = PlayoutEvaluator(4, amaf=True, knowledge=True, workers=2, seed=5)
    try:
        answers = evaluator.evaluate(states)
    finally:
        evaluator.close()
    assert [len(a.policy) for a in answers] == [82, 26, 26, 50] * 3
    assert [a.win for a in answers[1::4]] == [1.0] * 3 and [a.win for a in answers[2::4]] == [0.0] * 3
    for state, answer in zip(states, answers):
        assert answer.amaf is not None and answer.amaf.prior_n is not None
        assert {int(m) for m in np.flatnonzero(answer.amaf.prior_n)} == set(state.legal_moves())
    assert len(evaluator.evaluate(states[:2])) == 2  # closed: evaluated in this process
