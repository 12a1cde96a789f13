"""MoGo's 3x3 playout patterns: each family matches where it should and not elsewhere, in all 8 symmetries and
with colours swapped; pattern moves are playable; seeded pattern playouts stay legal."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS
from miai.nets.playouts import PlayoutBoard, PlayoutEvaluator, PlayoutPosition, play_out, run_playouts
from miai.nets.playouts.patterns import FAMILIES, PATTERNS, family_codes, neighbourhood_code, pattern_tables
from tests.nets.test_playouts import assert_consistent

BLACK, WHITE = 1, 2


def symmetric_diagrams(diagram: str) -> list[list[list[str]]]:
    """The 8 rotations and reflections of a diagram of ``. X O`` plus markers, as grids of symbols."""
    grid = np.array([line.split() for line in diagram.strip().splitlines()])
    out = []
    for flip in (False, True):
        base = np.fliplr(grid) if flip else grid
        for turns in range(4):
            out.append(np.rot90(base, turns).tolist())
    return out


def build(grid: list[list[str]], swap: bool = False) -> tuple[PlayoutBoard, dict[str, list[int]]]:
    """The board of a grid (``X`` black, ``O`` white, or the other way round with ``swap``) and the padded points
    of each marker symbol (``*``, ``-``, ``L``: all empty points)."""
    size = len(grid)
    codes = {"X": WHITE if swap else BLACK, "O": BLACK if swap else WHITE}
    stones = [codes.get(symbol, 0) for row in grid for symbol in row]
    board = PlayoutBoard.from_stones(stones, size)
    marks: dict[str, list[int]] = {}
    for y, row in enumerate(grid):
        for x, symbol in enumerate(row):
            if symbol not in ("X", "O", "."):
                marks.setdefault(symbol, []).append(board.geometry.points[y * size + x])
    return board, marks


def families_at(board: PlayoutBoard, p: int, mover: int) -> set[str]:
    """The pattern families whose codes include the neighbourhood of ``p`` with ``mover`` to play."""
    code = neighbourhood_code(board.color, board.ring[p])
    return {family for family in FAMILIES if code in family_codes(family, mover)}


# Each case: a family, a diagram with ``*`` (must match that family) and ``-`` (must not), and the movers for
# which ``*`` matches, as colours of the diagram: "X" for the side playing X's colour, "O" for the other.
CASES = [
    ("hane", """
        . . . . . . .
        . . . . . . .
        . . X O X . .
        . - . * . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, "XO"),  # enclosing hane; the point left of it sees only X at its upper right: no hane
    ("hane", """
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . X * . . .
        . . . . . . .
        . . - . . . .
        . . . . . . .
     """, "XO"),  # magari (bend round the O stone)
    ("hane", """
        . . . . . . .
        . . . . . . .
        . . X O O . .
        . . . * . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, "X"),  # thin hane: the paper's one-sided pattern, only for the side of the marked X stone
    ("cut1", """
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . O * . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, "XO"),
    ("cut1", """
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . O - O . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, ""),  # O already guards the cut from the right: the paper's exception
    ("cut1", """
        . . . . . . .
        . . . . . . .
        . . X O . . .
        . . O - . . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
     """, ""),  # ... or from below
    ("cut2", """
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . O * O . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
     """, "XO"),
    ("cut2", """
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . O - O . .
        . . . O . . .
        . . . . . . .
        . . . . . . .
     """, ""),  # an O stone on the far row spoils it
    ("edge", """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . . * O . .
     """, "XO"),  # block the side connection, on the first line
    ("edge", """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . . - O . .
        . . . . . . .
        . . . . . . .
     """, ""),  # the same shape away from the edge is no edge pattern
    ("edge", """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . X . . . .
        . . O * . . .
     """, "XO"),  # chase along the edge
]


@pytest.mark.parametrize(("family", "diagram", "movers"), CASES)
def test_each_family_matches_where_it_should_in_every_symmetry_and_colour(family: str, diagram: str,
                                                                        movers: str) -> None:
    for grid in symmetric_diagrams(diagram):
        for swap in (False, True):
            board, marks = build(grid, swap)
            x_colour = WHITE if swap else BLACK
            for mover in (BLACK, WHITE):
                should = ("X" if mover == x_colour else "O") in movers
                for p in marks.get("*", []):
                    assert (family in families_at(board, p, mover)) == should, (grid, swap, mover)
                    # The union table the playouts read agrees.
                    assert pattern_tables()[mover][neighbourhood_code(board.color, board.ring[p])] or not should
                for p in marks.get("-", []):
                    assert family not in families_at(board, p, mover), (grid, swap, mover)


def test_protected_cut_and_spoiled_cut_match_no_family_at_all() -> None:
    for diagram in (CASES[4][1], CASES[5][1], CASES[7][1]):
        board, marks = build(symmetric_diagrams(diagram)[0])
        for mover in (BLACK, WHITE):
            assert families_at(board, marks["-"][0], mover) == set()


def test_an_empty_neighbourhood_and_a_full_table_size() -> None:
    board = PlayoutBoard(9)
    centre = board.geometry.points[4 * 9 + 4]
    assert families_at(board, centre, BLACK) == set()
    assert all(len(table) == 4 ** 8 for table in pattern_tables()[1:])
    assert {pattern.family for pattern in PATTERNS} == set(FAMILIES)


# -- pattern moves in the playouts ---------------------------------------------------------------------------------

CUT_IN_ATARI = """
    . . . . . .
    . X O O . .
    . O * X O .
    . O X O . .
    . . . . . .
    . . . . . .
"""


def test_pattern_moves_refuse_self_atari_only_when_asked_and_never_an_illegal_point() -> None:
    # '*' is a cut-1 point for Black; playing it joins two black stones into a chain with one liberty (C5).
    board, marks = build(symmetric_diagrams(CUT_IN_ATARI)[0])
    cut = marks["*"][0]
    last = board.geometry.points[1 * 6 + 2]  # White's C5 stone next to it
    assert "cut1" in families_at(board, cut, BLACK)
    assert board.bad_self_atari(cut, BLACK)
    assert cut in board.pattern_moves(BLACK, last)
    assert cut not in board.pattern_moves(BLACK, last, no_self_atari=True)
    # With the last black liberty filled too the cut is suicide: never offered.
    board.play(board.geometry.points[4 * 6 + 2], WHITE)
    assert "cut1" in families_at(board, cut, BLACK) and not board.is_legal(cut, BLACK)
    assert cut not in board.pattern_moves(BLACK, last)
    assert board.pattern_moves(BLACK, PASS) == []


def test_a_pattern_answer_is_played_before_any_random_move() -> None:
    # White's last move D5 between two black stones: hane points on both sides of it (the enclosing hane D4, and
    # the hanes and bends around the three stones), nothing else on the board.
    diagram = """
        . . . . . . .
        . . . . . . .
        . . X O X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """
    board, _ = build(symmetric_diagrams(diagram)[0])
    points = board.geometry.points
    last = points[2 * 7 + 3]
    expected = {points[y * 7 + x] for y, x in ((1, 2), (1, 3), (1, 4), (3, 2), (3, 3), (3, 4))}
    assert set(board.pattern_moves(BLACK, last)) == expected
    assert all("hane" in families_at(board, p, BLACK) for p in expected)
    for seed in range(40):
        trial = board.copy()
        first: dict[int, int] = {}
        play_out(trial, BLACK, random.Random(seed).random, last=last, max_moves=1, patterns=True, first=first)
        assert set(first) <= expected and len(first) == 1
    # Light playouts pick one of those 6 of 46 points only by chance (about 5 times in 40).
    hits = 0
    for seed in range(40):
        trial = board.copy()
        first = {}
        play_out(trial, BLACK, random.Random(seed).random, last=last, max_moves=1, first=first)
        hits += bool(set(first) & expected)
    assert hits < 15


@settings(max_examples=40, deadline=None)
@given(size=st.integers(2, 9), data=st.data())
def test_seeded_pattern_playouts_stay_legal_and_consistent(size: int, data: st.DataObject) -> None:
    stones = data.draw(st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=size * size, max_size=size * size))
    board = PlayoutBoard.from_stones(stones, size)
    if not all(libs for libs in board.libs if libs is not None):
        return  # a chain without liberties: no real game reaches it
    seed = data.draw(st.integers(0, 2**32 - 1))
    tactical, no_self_atari = data.draw(st.booleans()), data.draw(st.booleans())
    rng = random.Random(seed)
    color, last, passes, moves = BLACK, PASS, 0, 0
    # The playout loop step by step, checking each pattern answer before it is played.
    while passes < 2 and moves < 3 * size * size:
        before = board.copy()
        candidates = board.pattern_moves(color, last, no_self_atari)
        for p in candidates:
            assert board.is_legal(p, color) and not board.is_true_eye(p, color)
            assert not (no_self_atari and board.bad_self_atari(p, color))
        first: dict[int, int] = {}
        play_out(board, color, rng.random, last=last, max_moves=1, tactical=tactical, no_self_atari=no_self_atari,
                 patterns=True, first=first)
        p = next(iter(first), PASS)
        assert p == PASS or before.is_legal(p, color)
        if candidates and not (tactical and before.urgent_moves(color, last)):
            assert p in candidates
        assert_consistent(board)
        passes = passes + 1 if p == PASS else 0
        color, last, moves = 3 - color, p, moves + 1


def test_the_spec_switches_patterns_on_and_the_evaluator_runs_them() -> None:
    evaluator = PlayoutEvaluator.from_spec("playouts:light:noselfatari:patterns", seed=3)
    assert evaluator.patterns and evaluator.no_self_atari and not evaluator.tactical
    assert not PlayoutEvaluator.from_spec("playouts:noselfatari").patterns
    stats = run_playouts(PlayoutPosition(size=7, stones=(0,) * 49, komi=0.5), 20, random.Random(4), patterns=True)
    assert stats.playouts == 20 and stats.wins + stats.draws + stats.losses == 20
