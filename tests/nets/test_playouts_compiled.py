"""The compiled playouts (nets/playouts/compiled.py) against the Python playout board they mirror: the same board
after the same moves, the same results in distribution, and the evaluator choosing them where it can."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

pytest.importorskip("numba", reason="numba is not installed (the optional extra: pip install -e '.[fast]')")

from miai.go.coords import PASS  # noqa: E402
from miai.nets.playouts import PlayoutEvaluator  # noqa: E402
from miai.nets.playouts.board import BLACK, WHITE, PlayoutBoard  # noqa: E402
from miai.nets.playouts.compiled import (prior_knowledge_compiled, replay, run_playouts_compiled,  # noqa: E402
                                         supports)
from miai.nets.playouts.knowledge import LOCALITY_COUNT, THIRD_LINE_COUNT, Knowledge, prior_knowledge  # noqa: E402
from miai.nets.playouts.evaluator import COMPILED_PLAYOUTS  # noqa: E402
from miai.nets.playouts.simulate import PlayoutPosition, PlayoutStats, run_playouts  # noqa: E402

pytestmark = pytest.mark.slow  # (numba compiles the playouts on first use)


def _random_game(size: int, seed: int, length: int) -> tuple[PlayoutBoard, list[int], list[int]]:
    """A random game of light playout moves on the Python board: the board after it, the moves (flat, -1 for a
    pass) and their colours."""
    rng = random.Random(seed)
    board = PlayoutBoard(size)
    flat = board.geometry.flat
    moves, colors, color = [], [], BLACK
    for _ in range(length):
        p = board.draw_move(color, rng.random, no_self_atari=rng.random() < 0.5)
        if p == PASS:
            board.play(PASS, color)
            moves.append(-1)
        else:
            board.place(p, color)
            moves.append(flat[p])
        colors.append(color)
        color = 3 - color
    return board, moves, colors


@pytest.mark.parametrize("size", [2, 3, 5, 9, 13, 19, 25])
def test_the_compiled_board_replays_a_python_game_stone_for_stone(size: int) -> None:
    for seed in range(6):
        length = random.Random(seed).randrange(1, 3 * size * size)
        board, moves, colors = _random_game(size, seed * 31 + size, length)
        stones, captures, ko = replay(np.zeros(size * size, np.int8), size, np.asarray(moves, np.int64),
                                      np.asarray(colors, np.int64))
        expected = [board.color[p] for p in board.geometry.points]
        assert stones.tolist() == expected, (size, seed, length)
        assert captures[1:].tolist() == board.captures[1:]
        assert ko == (-1 if board.ko == PASS else board.geometry.flat[board.ko])


def test_replay_starts_from_given_stones() -> None:
    # A black stone in atari in the corner of 5x5 (A5 black, B5 and A4 about to be white): White takes it.
    stones = np.zeros(25, np.int8)
    stones[0], stones[1] = BLACK, WHITE
    after, captures, _ = replay(stones, 5, np.asarray([5], np.int64), np.asarray([WHITE], np.int64))
    assert after[0] == 0 and after[1] == WHITE and after[5] == WHITE and captures[WHITE] == 1


def _rates(stats: PlayoutStats) -> tuple[float, float, float]:
    """Win rate, mean score and the score's standard error."""
    return stats.win_rate, stats.score_mean, stats.score_stdev / math.sqrt(stats.playouts)


# White has just put Black's four stones in atari with D5 (x=3, y=2); extending at D4 gives them three liberties.
_ATARI = tuple({"X": BLACK, "O": WHITE}.get(c, 0) for c in (
    ". . . . . . ."
    ". O O O . . ."
    "O X X O . . ."
    "O X X . . . ."
    ". O O . . . ."
    ". . . . . . ."
    ". . . . . . .").replace(" ", ""))

_POSITIONS = {
    "empty 7x7": PlayoutPosition(size=7, stones=(0,) * 49, komi=7.0),
    "empty 7x7, white to play, territory, prisoners": PlayoutPosition(
        size=7, stones=(0,) * 49, komi=6.5, to_play=WHITE, territory=True, captures=(3, 1)),
    "7x7 with a black wall, first move banned": PlayoutPosition(
        size=7, stones=tuple(BLACK if i % 7 == 2 else 0 for i in range(49)), komi=7.0, banned=(24,)),
    "7x7, four black stones just put in atari": PlayoutPosition(size=7, stones=_ATARI, komi=0.5, last_move=2 * 7 + 3),
}


@pytest.mark.parametrize("name", sorted(_POSITIONS))
@pytest.mark.parametrize("rules", ["light", "noselfatari", "tactical", "tactical noselfatari", "patterns",
                                   "tactical noselfatari patterns"])
def test_compiled_playouts_give_the_python_results_in_distribution(name: str, rules: str) -> None:
    position = _POSITIONS[name]
    options = {"no_self_atari": "noselfatari" in rules, "tactical": "tactical" in rules,
               "patterns": "patterns" in rules}
    compiled = run_playouts_compiled(position, 20000, random.Random(1), amaf=True, **options)
    python = run_playouts(position, 2500, random.Random(2), amaf=True, **options)
    win_c, mean_c, se_c = _rates(compiled)
    win_p, mean_p, se_p = _rates(python)
    assert abs(mean_c - mean_p) < 4.5 * math.hypot(se_c, se_p) + 1e-9, (mean_c, mean_p)
    assert abs(win_c - win_p) < 4.5 * math.hypot(0.5 / math.sqrt(20000), 0.5 / math.sqrt(2500))
    own_c, own_p = compiled.ownership(), python.ownership()
    assert float(np.abs(own_c - own_p).max()) < 0.12
    assert compiled.amaf_first is not None and python.amaf_first is not None
    share_c = compiled.amaf_first.sum() / compiled.playouts
    share_p = python.amaf_first.sum() / python.playouts
    assert abs(share_c - share_p) < 0.05 * share_p  # as many points first played per playout


def test_compiled_tactical_playouts_save_the_group_in_atari() -> None:
    position = _POSITIONS["7x7, four black stones just put in atari"]
    light = run_playouts_compiled(position, 400, random.Random(1))
    tactical = run_playouts_compiled(position, 400, random.Random(1), tactical=True)
    assert tactical.ownership()[2 * 7 + 1] > light.ownership()[2 * 7 + 1] + 0.2


def _hane_position(size: int) -> tuple[PlayoutPosition, set[int]]:
    """White's C4 and D4 (the hane at D4) against Black's D5 on an otherwise empty board of ``size``, Black to move: the
    position and the flat points of the Python board's pattern moves around D4."""
    stones = [0] * (size * size)
    stones[2 * size + 3], stones[3 * size + 2], stones[3 * size + 3] = BLACK, WHITE, WHITE
    last = 3 * size + 3
    position = PlayoutPosition(size=size, stones=tuple(stones), to_play=BLACK, komi=0.5, last_move=last)
    board = PlayoutBoard.from_stones(stones, size)
    points = board.geometry.points
    return position, {points.index(p) for p in board.pattern_moves(BLACK, points[last])}


def test_compiled_pattern_playouts_answer_the_last_move_with_the_python_boards_pattern_moves() -> None:
    # White's hane at D4 (x=3, y=3) on Black's stone at D5 leaves 3x3 patterns around it; Black's first playout
    # move must be one of the points the Python board names, and over many playouts every one of them comes up.
    position, expected = _hane_position(7)
    assert expected
    stats = run_playouts_compiled(position, 400, random.Random(3), amaf=True, patterns=True, max_moves=1)
    assert stats.amaf_first is not None
    played = {int(m) for m in np.flatnonzero(stats.amaf_first[0])}
    assert played == expected


@pytest.mark.parametrize("size, answers_locally", [(9, False), (13, True), (19, True)])
def test_the_modes_playouts_play_the_patterns_from_13x13_up(size: int, answers_locally: bool) -> None:
    # `playouts` alone (the mode's defaults) answers the hane with a pattern move on 13x13 and larger boards, where
    # the patterns won against GNU Go; on 9x9, where they were not measured to help, the first move is random.
    position, expected = _hane_position(size)
    evaluator = PlayoutEvaluator.from_spec("playouts:300", seed=5, amaf=True, max_moves=1)
    amaf = evaluator.evaluate_position(position).amaf
    assert amaf is not None
    played = {int(m) for m in np.flatnonzero(amaf.first[0])}
    assert (played <= expected) is answers_locally
    if answers_locally:
        assert played == expected
    plain = PlayoutEvaluator.from_spec("playouts:light:noselfatari:tactical:knowledge:300", seed=5, amaf=True,
                                       max_moves=1).evaluate_position(position).amaf
    assert plain is not None and not {int(m) for m in np.flatnonzero(plain.first[0])} <= expected


def test_a_won_position_is_won_and_seeds_repeat() -> None:
    # Black owns the whole 5x5 board but two eyes: every playout ends with Black's area.
    rows = ["XXXXX", "X.XXX", "XXXXX", "XXX.X", "XXXXX"]
    stones = tuple(BLACK if c == "X" else 0 for c in "".join(rows))
    position = PlayoutPosition(size=5, stones=stones, to_play=WHITE, komi=7.5)
    stats = run_playouts_compiled(position, 50, random.Random(4))
    assert stats.wins == 0 and stats.score_mean == pytest.approx(-(25 - 7.5))
    assert stats.ownership().tolist() == [-1.0] * 25
    again = [run_playouts_compiled(_POSITIONS["empty 7x7"], 200, random.Random(9), amaf=True) for _ in range(2)]
    assert again[0].score_sum == again[1].score_sum and again[0].ownership_sum == again[1].ownership_sum


def test_the_evaluator_plays_compiled_where_it_can() -> None:
    assert PlayoutEvaluator.from_spec("playouts").compiled
    assert not PlayoutEvaluator.from_spec("playouts:python").compiled
    position = _POSITIONS["empty 7x7"]
    assert supports(position)
    assert PlayoutEvaluator.from_spec("playouts:patterns").playouts == COMPILED_PLAYOUTS
    taxed = PlayoutPosition(size=7, stones=(0,) * 49, tax_all=True)
    assert not supports(taxed)


@pytest.mark.parametrize("size", [5, 9, 13, 19])
@pytest.mark.parametrize("knowledge", [Knowledge(), Knowledge(locality=LOCALITY_COUNT),
                                       Knowledge(third_line=THIRD_LINE_COUNT)], ids=["default", "locality", "third"])
def test_compiled_prior_knowledge_equals_the_python_one(size: int, knowledge: Knowledge) -> None:
    for seed in range(8):
        board, moves, colors = _random_game(size, seed * 7 + size, random.Random(seed).randrange(0, 2 * size * size))
        stones = tuple(board.color[p] for p in board.geometry.points)
        to_play = 3 - colors[-1] if colors else BLACK
        last_flat = moves[-1] if moves else -1
        position = PlayoutPosition(size=size, stones=stones, to_play=to_play, last_move=last_flat)
        legal = [m for m, p in enumerate(board.geometry.points) if board.is_legal(p, to_play)]
        last = PASS if last_flat < 0 else board.geometry.points[last_flat]
        n_python, w_python = prior_knowledge(board, to_play, last, legal, knowledge)
        n_compiled, w_compiled = prior_knowledge_compiled(position, legal, knowledge)
        assert n_compiled.tolist() == n_python.tolist() and w_compiled.tolist() == w_python.tolist(), (size, seed)
