"""Counting: legal positions on tiny boards (Tromp and Farneback's numbers), and move-tree counts ("perft")
computed by GameState and by the reference board."""

from __future__ import annotations

import itertools

import pytest

from miai.go.board import Board
from miai.go.coords import PASS
from miai.go.errors import SetupError
from miai.go.rules import Rules
from miai.go.state import GameState
from tests.go.fixtures import parse_board, state_from_board
from tests.go.reference_board import ReferenceGame


@pytest.mark.parametrize(("size", "count"), [(2, 57), (3, 12675)])
@pytest.mark.slow
def test_number_of_legal_positions(size: int, count: int) -> None:
    """OEIS A094777: colourings in which every chain has a liberty."""
    legal = 0
    for colors in itertools.product((0, 1, 2), repeat=size * size):
        try:
            Board.from_colors(size, list(colors))
        except SetupError:
            continue
        legal += 1
    assert legal == count


def perft(state: GameState, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in state.legal_moves() + [PASS]:
        state.play_unchecked(move)
        total += perft(state, depth - 1)
        state.pop()
    return total


def reference_perft(ref: ReferenceGame, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for move in [m for m in range(ref.size * ref.size) if ref.legality(m) is None] + [PASS]:
        ref.play(move)
        total += reference_perft(ref, depth - 1)
        ref.undo()
    return total


POSITION = """
. X O . .
X O . O .
. X O X .
O . X . .
. O . . .
"""


@pytest.mark.parametrize("preset", ["tromp-taylor", "chinese", "aga"])
@pytest.mark.parametrize(("diagram", "depth"), [(". . .\n. . .\n. . .", 4), (POSITION, 3)])
def test_perft_matches_reference(preset: str, diagram: str, depth: int) -> None:
    rules = Rules.preset(preset)
    state = state_from_board(diagram, rules)
    size, colors = parse_board(diagram)
    ref = ReferenceGame(size, rules, colors=list(colors))
    assert perft(state, depth) == reference_perft(ref, depth)
