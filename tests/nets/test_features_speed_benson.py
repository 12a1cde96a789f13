"""The fast area computation (planes 18/19) equals the point-by-point Benson flood on every input.

``benson.calculate_area`` skips Benson's iteration for a colour that has no chain with two vital
regions and builds regions in one pass; ``calculate_area_by_flood`` is the plain statement of the
algorithm. They must agree for every switch combination, on random arrays (including chains without
liberties, which only hand-made arrays have) and on positions of random games.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from miai.go import benson
from miai.go.geometry import neighbor_table
from miai.go.rules import Rules
from miai.go.state import GameState

SWITCHES = [
    dict(zip(("non_pass_alive_stones", "safe_big_territories", "unsafe_big_territories", "multi_stone_suicide"), flags))
    for flags in itertools.product((False, True), repeat=4)
]


def random_arrays(size: int, count: int, seed: int) -> list[np.ndarray]:
    rng = random.Random(seed)
    weights = rng.choice([(2, 1, 1), (1, 1, 1), (1, 2, 1), (3, 1, 2)])
    return [np.array(rng.choices((0, 1, 2), weights, k=size * size), dtype=np.int8) for _ in range(count)]


def game_boards(size: int, seed: int) -> list[np.ndarray]:
    """Boards of a random legal game that fills the board (eyes, seki and pass-alive groups appear)."""
    rng = random.Random(seed)
    state = GameState(size, Rules.preset("chinese"), 7.5)
    boards = []
    while not state.is_over() and len(state.moves) < 3 * size * size:
        legal = [m for m in state.legal_moves() if not _own_eye(state, m)]
        state.push(rng.choice(legal) if legal else -1)
        boards.append(state.stones())
    return boards


def _own_eye(state: GameState, move: int) -> bool:
    """All neighbours are the mover's stones: filling it would be a random player's worst habit."""
    size = state.size
    y, x = divmod(move, size)
    near = [(y + dy) * size + x + dx for dy, dx in ((0, 1), (1, 0), (0, -1), (-1, 0)) if 0 <= y + dy < size and 0 <= x + dx < size]
    return all(int(state.color_at(p)) == int(state.to_play) for p in near)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7])
@pytest.mark.slow
def test_fast_area_equals_flood_on_random_arrays(size: int) -> None:
    for stones in random_arrays(size, 150, seed=size):
        for switches in SWITCHES:
            fast = benson.calculate_area(stones, size, **switches)
            slow = benson.calculate_area_by_flood(stones, size, **switches)
            assert np.array_equal(fast, slow), (stones.reshape(size, size), switches)


@pytest.mark.parametrize(("size", "seed"), [(7, 1), (9, 2), (9, 3), (13, 4)])
@pytest.mark.slow
def test_fast_area_equals_flood_along_random_games(size: int, seed: int) -> None:
    boards = game_boards(size, seed)
    alive_seen = False
    for stones in boards[:: max(1, len(boards) // 60)] + boards[-10:]:
        for switches in SWITCHES[::3]:
            fast = benson.calculate_area(stones, size, **switches)
            assert np.array_equal(fast, benson.calculate_area_by_flood(stones, size, **switches)), switches
        alive_seen |= bool(benson.pass_alive(stones, size).any())
    assert alive_seen  # the games reach positions where the full Benson iteration decides


def test_the_quick_check_never_misses_a_pass_alive_group() -> None:
    """Whenever a colour has pass-alive stones, the check must have said "maybe"."""
    checked = 0
    for seed in range(6):
        for stones in game_boards(9, 10 + seed)[::5]:
            colors = stones.tolist()
            empties = benson._EmptyComponents(colors, neighbor_table(9))
            alive = benson.calculate_area_by_flood(stones, 9)
            for player in (1, 2):
                if ((alive == player) & (stones == player)).any():
                    assert empties.may_have_pass_alive(player)
                    checked += 1
    assert checked > 0


def test_two_eyed_group_is_found_and_a_one_eyed_group_is_not() -> None:
    two_eyes = np.array(
        [
            [0, 1, 0, 1, 2],
            [1, 1, 1, 1, 2],
            [2, 2, 2, 2, 2],
            [0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0],
        ],
        dtype=np.int8,
    ).ravel()
    empties = benson._EmptyComponents(two_eyes.tolist(), neighbor_table(5))
    assert empties.may_have_pass_alive(1)
    one_eye = two_eyes.copy()
    one_eye[2] = 1  # fill the second eye
    empties = benson._EmptyComponents(one_eye.tolist(), neighbor_table(5))
    assert not empties.may_have_pass_alive(1)
