"""The compiled kernels (miai.go.compiled) against the Python they replace, on many random positions: identical
ladder planes (KataGo planes 14 and 17, move budgets and ko bans included) and identical chain liberties."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from miai.go import benson, compiled
from miai.go.coords import PASS
from miai.go.ladders import ladder_planes, ladder_planes_python, state_ko_point
from miai.go.rules import Rules
from miai.go.state import GameState

pytestmark = pytest.mark.skipif(not compiled.ENABLED, reason="numba is not installed or MIAI_PURE_PYTHON is set")


def fight_positions(size: int, moves: int, seed: int) -> list[GameState]:
    """Every position of a random legal game whose moves mostly land near the last one: fights leave chains with
    one and two liberties, ladders, captures and kos far more often than uniform moves."""
    rng = random.Random(seed)
    state = GameState(size, Rules.preset("chinese"), 7.5)
    positions = []
    for _ in range(moves):
        legal = state.legal_moves()
        if not legal or state.is_over():
            break
        near = legal
        if state.moves and state.moves[-1][1] != PASS:
            last = state.moves[-1][1]
            near = [m for m in legal if abs(m % size - last % size) + abs(m // size - last // size) <= 2] or legal
        state.push(rng.choice(near if rng.random() < 0.7 else legal))
        positions.append(state.copy())
    return positions


def planes_alike(state: GameState, **options: int) -> tuple[int, int]:
    """Assert both readings of ``state`` agree, for both sides to move; returns (laddered stones, working moves)."""
    stones = np.asarray(state.stones(), dtype=np.int8)
    ko = state_ko_point(state)
    found = [0, 0]
    for to_play in (1, 2):
        want = ladder_planes_python(stones, state.size, to_play, ko, **options)
        got = compiled.ladder_planes(stones, state.size, to_play, ko, **options)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (
            f"{state.size}x{state.size} after {len(state.moves)} moves, {to_play} to play, ko {ko}, {options}:\n"
            f"{stones.reshape(state.size, state.size)}")
        found[0] += int(want[0].sum())
        found[1] += int(want[1].sum())
    return found[0], found[1]


@pytest.mark.parametrize(("size", "seed"), [(7, 1), (9, 2), (13, 3), pytest.param(19, 4, marks=pytest.mark.slow)])
def test_ladder_planes_equal_the_python_reading_along_fights(size: int, seed: int) -> None:
    totals = np.zeros(2, dtype=int)
    for state in fight_positions(size, size * size, seed)[::2]:
        totals += planes_alike(state)
    assert totals.min() > 0, "the positions should hold laddered chains and working moves"


@pytest.mark.parametrize("budget", [1, 3, 8, 20, 60])
def test_over_budget_searches_answer_alike(budget: int) -> None:
    """A search that runs out of moves answers "not laddered" on both paths, after exactly as many moves."""
    for state in fight_positions(9, 70, 10 + budget)[20::3]:
        planes_alike(state, max_moves=budget)


def test_ko_bans_apply_alike() -> None:
    """Positions just after a ko capture (the attacker's first move may be the banned point)."""
    kos = 0
    for seed in range(25):
        for state in fight_positions(7, 60, 100 + seed):
            if state_ko_point(state) is not None:
                kos += 1
                planes_alike(state)
    assert kos >= 5


def test_ladder_planes_use_the_kernel_and_check_their_input() -> None:
    stones = np.asarray(fight_positions(9, 40, 7)[-1].stones(), dtype=np.int8)
    assert all(np.array_equal(a, b) for a, b in zip(ladder_planes(stones, 9, 1), compiled.ladder_planes(stones, 9, 1)))
    with pytest.raises(ValueError, match="expected 81"):
        ladder_planes(stones[:80], 9, 1)


@pytest.mark.parametrize("size", [5, 9, 19])
def test_chain_liberties_equal_the_board(size: int) -> None:
    for state in fight_positions(size, min(size * size, 120), size)[::3]:
        want = state.board.liberties()
        got = compiled.chain_liberties(np.asarray(state.stones(), dtype=np.int8), size)
        assert got.dtype == want.dtype and np.array_equal(got, want)


SWITCHES = [dict(zip(("non_pass_alive_stones", "safe_big_territories", "unsafe_big_territories", "multi_stone_suicide"),
                     flags)) for flags in itertools.product((False, True), repeat=4)]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_area_equals_the_python_benson_on_random_arrays(size: int) -> None:
    """Any array (chains without liberties too), every switch combination."""
    rng = random.Random(size)
    for _ in range(40):
        stones = np.array(rng.choices((0, 1, 2), (2, 1, 1), k=size * size), dtype=np.int8)
        for switches in SWITCHES:
            want = benson.calculate_area_python(stones, size, **switches)
            assert np.array_equal(compiled.calculate_area(stones, size, **switches), want), (stones, switches)


@pytest.mark.parametrize(("size", "seed"), [(7, 1), (9, 2)])
def test_area_equals_the_python_benson_along_games_that_fill_the_board(size: int, seed: int) -> None:
    """Random games played to the end without filling their own eyes: pass-alive groups, seki, dead stones."""
    rng = random.Random(seed)
    state = GameState(size, Rules.preset("chinese"), 7.5)
    alive = 0
    while not state.is_over() and len(state.moves) < 3 * size * size:
        legal = [m for m in state.legal_moves() if any(state.color_at(n) != state.to_play for n in _around(m, size))]
        state.push(rng.choice(legal) if legal else PASS)
        stones = np.asarray(state.stones(), dtype=np.int8)
        for switches in SWITCHES[::5]:
            want = benson.calculate_area_python(stones, size, **switches)
            assert np.array_equal(compiled.calculate_area(stones, size, **switches), want), (stones, switches)
        alive += int(benson.calculate_area_python(stones, size).any())
    assert alive > 0, "the game should reach pass-alive groups"


def _around(move: int, size: int) -> list[int]:
    y, x = divmod(move, size)
    return [(y + dy) * size + x + dx for dy, dx in ((0, 1), (1, 0), (0, -1), (-1, 0))
            if 0 <= y + dy < size and 0 <= x + dx < size]
