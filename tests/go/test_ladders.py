"""Ladder reading (KataGo planes 14-17) on hand-made positions, and a differential test of the pruned
search against a plain minimax over the same ladder moves on random positions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from miai.go.coords import PASS
from miai.go.ladders import (
    ScratchBoard,
    is_ladder_captured,
    ladder_planes,
    ladder_working_moves,
    laddered_stones,
    simple_ko_point,
    state_ko_point,
)
from miai.go.rules import Rules
from miai.go.state import GameState

_CHARS = {".": 0, "X": 1, "O": 2}
BLACK, WHITE = 1, 2


def parse(diagram: str) -> tuple[np.ndarray, int]:
    """A square diagram (X black, O white, . empty; top row first) as a flat stones array."""
    rows = [line.split() for line in diagram.strip().splitlines()]
    assert all(len(row) == len(rows) for row in rows), "diagram must be square"
    return np.array([_CHARS[c] for row in rows for c in row], dtype=np.int8), len(rows)


def at(x: int, y: int, size: int) -> int:
    return y * size + x


# White C7 is in atari and runs towards the lower right, where nothing helps it.
LADDER = """
. . . . . . . . .
. . X X . . . . .
. X O . . . . . .
. . X . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


def test_working_ladder_marks_the_chain() -> None:
    stones, size = parse(LADDER)
    laddered, working = ladder_planes(stones, size, BLACK)
    assert np.flatnonzero(laddered).tolist() == [at(2, 2, size)]
    assert not working.any()  # a one-liberty chain has no "working moves": it is already in atari


def test_ladder_breaker_on_the_path_saves_the_chain() -> None:
    stones, size = parse(LADDER)
    stones[at(6, 7, size)] = WHITE  # G2 sits on the ladder's diagonal
    assert not laddered_stones(stones, size).any()


def test_attacker_stone_on_the_path_does_not_break_it() -> None:
    stones, size = parse(LADDER)
    stones[at(6, 7, size)] = BLACK
    assert laddered_stones(stones, size)[at(2, 2, size)]


def test_two_liberty_chain_and_its_working_move() -> None:
    stones, size = parse(LADDER)
    stones[at(2, 3, size)] = 0  # now White C7 has two liberties: C6 starts the ladder, D7 does not
    laddered, working = ladder_planes(stones, size, BLACK)
    assert np.flatnonzero(laddered).tolist() == [at(2, 2, size)]
    assert np.flatnonzero(working).tolist() == [at(2, 3, size)]


def test_working_moves_only_against_the_opponent() -> None:
    stones, size = parse(LADDER)
    stones[at(2, 3, size)] = 0
    laddered, working = ladder_planes(stones, size, WHITE)  # White to move: the chain is its own
    assert laddered[at(2, 2, size)]
    assert not working.any()


def test_edge_ladder_along_the_first_line() -> None:
    stones, size = parse("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        X X . . . . .
        X O . . . . .
    """)
    laddered = laddered_stones(stones, size)
    assert np.flatnonzero(laddered).tolist() == [at(1, 6, size)]
    board = ScratchBoard(stones, size)
    assert is_ladder_captured(board, board.loc(at(1, 6, size)))


def test_defender_escapes_by_capturing_an_attacker_in_atari() -> None:
    stones, size = parse(LADDER)
    stones[at(1, 3, size)] = WHITE
    # Once White extends to D6, Black C6 is left with one liberty (C5): White captures it and escapes.
    assert not laddered_stones(stones, size)[at(2, 2, size)]
    board = ScratchBoard(stones, size)
    board.play(board.loc(at(3, 2, size)), WHITE)
    board.play(board.loc(at(4, 2, size)), BLACK)
    board.play(board.loc(at(3, 3, size)), WHITE)
    assert len(board.liberties(board.loc(at(2, 3, size)))) == 1


def test_chain_with_three_liberties_is_never_laddered() -> None:
    stones, size = parse("""
        . . . . .
        . . . . .
        . . O . .
        . . . . .
        . . . . .
    """)
    assert not laddered_stones(stones, size).any()


def test_both_colours_are_marked() -> None:
    # Black's corner stone is in atari and cannot escape; White's ladder works too.
    stones, size = parse(LADDER.replace(". . . . . . . . .\n. . X X", "X O . . . . . . .\n. O X X", 1))
    laddered = laddered_stones(stones, size)
    assert laddered[at(0, 0, size)] and laddered[at(2, 2, size)]


def test_ko_ban_applies_to_the_attackers_first_move() -> None:
    stones, size = parse(LADDER)
    stones[at(2, 3, size)] = 0
    target = ScratchBoard(stones, size).loc(at(2, 2, size))
    free = ladder_working_moves(ScratchBoard(stones, size), target)
    banned = ladder_working_moves(ScratchBoard(stones, size, ko_point=at(2, 3, size)), target)
    assert [ScratchBoard(stones, size).point(m) for m in free] == [at(2, 3, size)]
    assert banned == []
    laddered, working = ladder_planes(stones, size, BLACK, ko_point=at(2, 3, size))
    assert not laddered.any() and not working.any()


def test_simple_ko_point_after_a_ko_capture() -> None:
    before, size = parse("""
        . X O .
        X O . O
        . X O .
        . . . .
    """)
    after = before.copy()
    after[at(2, 1, size)] = BLACK
    after[at(1, 1, size)] = 0  # Black captured the White stone at B3 by playing C3
    assert simple_ko_point(before, after, at(2, 1, size), size) == at(1, 1, size)
    assert simple_ko_point(before, after, -1, size) is None
    quiet = before.copy()
    quiet[at(3, 3, size)] = BLACK
    assert simple_ko_point(before, quiet, at(3, 3, size), size) is None


def test_wrong_length_is_rejected() -> None:
    with pytest.raises(ValueError, match="expected 81"):
        ladder_planes(np.zeros(80, dtype=np.int8), 9, BLACK)


# --- differential test ----------------------------------------------------------------------


class _TooBig(Exception):
    pass


def reference_captured(board: ScratchBoard, target: int, defender_to_move: bool, budget: list[int]) -> bool:
    """Plain minimax over ladder moves: no bounds, no move ordering, no pruning shortcuts."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    defender = board.colors[target]
    attacker = 3 - defender
    stones, libs = board.chain(target)
    if defender_to_move:
        if len(libs) >= 2 or board.ko != -1:
            return False
        moves = set(libs)
        for capture_libs in board.atari_neighbours(stones):
            moves |= capture_libs
        player = defender
    else:
        if len(libs) <= 1:
            return True
        if len(libs) >= 3:
            return False
        moves, player = set(libs), attacker
    outcomes = []
    for move in sorted(moves):
        if board.is_legal(move, player):
            record = board.play(move, player)
            outcomes.append(reference_captured(board, target, not defender_to_move, budget))
            board.undo(record)
    return all(outcomes) if defender_to_move else any(outcomes)


def random_position(size: int, rng: random.Random, moves: int) -> np.ndarray:
    board = ScratchBoard([0] * (size * size), size)
    player = BLACK
    for _ in range(moves):
        legal = [board.loc(p) for p in range(size * size) if board.is_legal(board.loc(p), player)]
        board.play(rng.choice(legal), player)
        player = 3 - player
    return np.array([board.colors[board.loc(p)] for p in range(size * size)], dtype=np.int8)


def reference_working_moves(board: ScratchBoard, target: int) -> list[int] | None:
    """The attacker's first moves after which the plain minimax captures; None when too big to solve."""
    attacker = 3 - board.colors[target]
    working = []
    for move in sorted(board.liberties(target)):
        if board.is_legal(move, attacker):
            record = board.play(move, attacker)
            saved_ko, board.ko = board.ko, -1
            try:
                captured = len(board.liberties(target)) == 1 and reference_captured(board, target, True, [20_000])
            except _TooBig:
                return None
            finally:
                board.ko = saved_ko
                board.undo(record)
            if captured:
                working.append(move)
    return working


@pytest.mark.slow
def test_pruned_search_agrees_with_plain_minimax() -> None:
    rng = random.Random(11)
    compared = {1: 0, 2: 0}
    positive = {1: 0, 2: 0}
    for _ in range(120):
        size = rng.choice([6, 7, 9])
        stones = random_position(size, rng, rng.randint(size, size * 4))
        board = ScratchBoard(stones, size)
        seen: set[int] = set()
        for point in range(size * size):
            loc = board.loc(point)
            if board.colors[loc] == 0 or loc in seen:
                continue
            chain, libs = board.chain(loc)
            seen.update(chain)
            if len(libs) == 1:
                board.ko = -1
                try:
                    expected = reference_captured(board, loc, True, [20_000])
                except _TooBig:
                    continue
                assert is_ladder_captured(board, loc) == expected, f"size {size}, point {point}\n{stones}"
            elif len(libs) == 2:
                reference = reference_working_moves(board, loc)
                if reference is None:
                    continue
                assert ladder_working_moves(board, loc) == reference, f"size {size}, point {point}\n{stones}"
                expected = bool(reference)
            else:
                continue
            compared[len(libs)] += 1
            positive[len(libs)] += expected
    for libs in (1, 2):
        assert compared[libs] > 100 and 0 < positive[libs] < compared[libs], (compared, positive)


# --- the scratch board against GameState ----------------------------------------------------------


def test_scratch_board_plays_like_game_state() -> None:
    """Under simple ko without suicide the reading board must agree with the rules engine: legal moves,
    captures and the ko point (also as recovered from two consecutive boards by ``state_ko_point``)."""
    rng = random.Random(5)
    ko_seen = 0
    for size in (5, 7, 9):
        state = GameState(size=size, rules=Rules.preset("chinese"))
        board = ScratchBoard(state.stones(), size)
        for _ in range(250):
            player = int(state.to_play)
            legal = [p for p in range(size * size) if board.is_legal(board.loc(p), player)]
            assert legal == sorted(state.legal_moves()), f"legal moves differ on {size}x{size}"
            expected_ko = state_ko_point(state)
            assert (board.point(board.ko) if board.ko != -1 else None) == expected_ko
            ko_seen += expected_ko is not None
            move = rng.choice(legal) if legal and rng.random() > 0.05 else PASS
            state.push(move)
            if move == PASS:
                board.ko = -1
            else:
                board.play(board.loc(move), player)
            assert [board.colors[board.loc(p)] for p in range(size * size)] == state.stones().tolist()
    assert ko_seen > 0


def test_search_over_its_move_budget_answers_not_laddered() -> None:
    stones, size = parse(LADDER)
    board = ScratchBoard(stones, size)
    target = board.loc(at(2, 2, size))
    assert is_ladder_captured(board, target)  # the ladder runs about a dozen moves
    assert not is_ladder_captured(board, target, max_moves=5)
    assert not ladder_planes(stones, size, BLACK, max_moves=5)[0].any()
    assert [board.colors[board.loc(p)] for p in range(size * size)] == stones.tolist()  # board restored
