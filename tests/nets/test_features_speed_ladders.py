"""The fast ladder paths give exactly the planes of a reading from scratch.

``LadderMemo`` reuses a chain's reading on a board that differs from the one it was read on when no
difference lies next to a point the reading looked at; these tests compare it with reading every board
from scratch along random games (plenty of chains in atari, captures and kos).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from miai.go.coords import PASS
from miai.go.ladders import LadderMemo, ScratchBoard, ladder_planes, state_ko_point
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features

from .concurrency import run_in_threads


def random_game(size: int, moves: int, seed: int, rules: str = "chinese") -> list[GameState]:
    """Copies of every position of a random legal game (no pass while the board has room).

    Moves next to the last one are preferred: fights make chains with one or two liberties, ladders
    and kos much more common than uniform moves do.
    """
    rng = random.Random(seed)
    state = GameState(size, Rules.preset(rules), 7.5)
    positions = [state.copy()]
    for _ in range(moves):
        legal = state.legal_moves()
        if not legal or state.is_over():
            break
        near = []
        if state.moves and state.moves[-1][1] != PASS:
            last = state.moves[-1][1]
            near = [m for m in legal if abs(m % size - last % size) + abs(m // size - last // size) <= 2]
        move = rng.choice(near if near and rng.random() < 0.7 else legal)
        state.push(move if rng.random() > 0.01 else PASS)
        positions.append(state.copy())
    return positions


def scratch_planes(state: GameState, moves_ago: int = 0) -> tuple[np.ndarray, np.ndarray]:
    stones = np.asarray(state.board_history(moves_ago), dtype=np.int8)
    to_play = int(state.to_play) if moves_ago % 2 == 0 else 3 - int(state.to_play)
    return ladder_planes(stones, state.size, to_play, state_ko_point(state, moves_ago))


@pytest.mark.parametrize(("size", "seed"), [(9, 1), (9, 2), (13, 3), (19, 4)])
@pytest.mark.slow
def test_memo_along_a_game_matches_reading_from_scratch(size: int, seed: int) -> None:
    memo = LadderMemo()
    previous = None
    positions = random_game(size, size * size, seed)
    for state in positions:
        stones = state.stones()
        got = ladder_planes(stones, size, int(state.to_play), state_ko_point(state), memo=memo, previous=previous)
        want = scratch_planes(state)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), len(state.moves)
        previous = stones
    assert len(memo) == len({s.stones().tobytes() for s in positions})  # one entry per distinct board


@pytest.mark.slow
def test_memo_reuses_a_board_several_moves_away_and_under_other_ko_points() -> None:
    """Any remembered board may serve as ``previous``, and the same stones may come with a ko point."""
    rng = random.Random(5)
    positions = random_game(9, 120, 6)
    memo = LadderMemo(capacity=64)
    for k, state in enumerate(positions):
        base = positions[max(0, k - rng.randint(1, 6))]
        ladder_planes(base.stones(), 9, 1, None, memo=memo)
        stones = state.stones()
        empties = np.flatnonzero(stones == 0).tolist()
        ko = rng.choice([None, state_ko_point(state), *rng.sample(empties, min(2, len(empties)))])
        for to_play in (1, 2):
            got = ladder_planes(stones, 9, to_play, ko, memo=memo, previous=base.stones())
            want = ladder_planes(stones, 9, to_play, ko)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (k, ko, to_play)


def test_memo_forgets_the_least_recently_used_board() -> None:
    memo = LadderMemo(capacity=2)
    boards = [np.zeros(81, dtype=np.int8) for _ in range(3)]
    for k, board in enumerate(boards):
        board[k] = 1
        ladder_planes(board, 9, 1, memo=memo)
    assert len(memo) == 2
    assert memo.get((boards[0].tobytes(), 9, 9, 25_000)) is None
    assert memo.get((boards[2].tobytes(), 9, 9, 25_000)) is not None


def test_reading_records_the_points_it_looked_at() -> None:
    """A working ladder reads along its path; a change on the path is seen, one far away is not."""
    size = 9
    stones = np.zeros(size * size, dtype=np.int8)
    # White C7 (x=2, y=2) in atari, running towards the lower right (tests/go/test_ladders.py LADDER).
    for x, y in ((2, 1), (3, 1), (1, 2), (2, 3)):
        stones[y * size + x] = 1
    stones[2 * size + 2] = 2
    board = ScratchBoard(stones, size)
    ladder_planes(stones, size, 1)
    from miai.go.ladders import _iter_ladders

    (result,) = [r for r in _iter_ladders(board, 25_000).values() if r.color == 2]
    assert result.laddered
    path = {board.loc(y * size + x) for x, y in ((3, 2), (4, 4), (6, 6))}
    assert path <= result.reads
    assert board.loc(0 * size + 8) not in result.reads  # the far corner plays no part


@pytest.mark.parametrize(("size", "rules", "seed"), [(9, "chinese", 7), (9, "japanese", 8), (13, "tromp-taylor", 9)])
@pytest.mark.slow
def test_encode_with_warm_memos_equals_encode_from_scratch(size: int, rules: str, seed: int) -> None:
    """features.encode in game order (every memo warm) gives the planes of encoding each position alone."""
    positions = random_game(size, size * size, seed, rules)
    features.clear_ladder_memo()
    warm = [features.encode(s) for s in positions]
    for state, (spatial, global_) in zip(reversed(positions), reversed(warm)):
        features.clear_ladder_memo()
        alone = features.encode(state)
        assert np.array_equal(spatial, alone[0]) and np.array_equal(global_, alone[1]), len(state.moves)


def test_encoding_from_two_threads_gives_the_same_planes() -> None:
    """The shared memos are used by a search thread and a GTP thread at once."""
    games = [random_game(9, 60, seed) for seed in (11, 12)]
    features.clear_ladder_memo()
    alone = [[features.encode(s) for s in game] for game in games]
    features.clear_ladder_memo()
    together: list[list[tuple[np.ndarray, np.ndarray]]] = [[], []]

    def work(k: int) -> None:
        for _ in range(3):
            together[k] = [features.encode(s) for s in games[k]]

    assert not run_in_threads(work, 2)
    for mine, theirs in zip(alone, together):
        for (s1, g1), (s2, g2) in zip(mine, theirs):
            assert np.array_equal(s1, s2) and np.array_equal(g1, g2)


def test_a_move_far_from_a_ladder_reuses_its_reading_and_a_move_on_its_path_does_not() -> None:
    size = 9
    stones = np.zeros(size * size, dtype=np.int8)
    for x, y in ((2, 1), (3, 1), (1, 2), (2, 3)):  # White C7 in atari, laddered towards the lower right
        stones[y * size + x] = 1
    stones[2 * size + 2] = 2
    memo = LadderMemo()
    ladder_planes(stones, size, 1, memo=memo)
    key = lambda board: (board.tobytes(), size, size, 25_000)  # noqa: E731 - the memo's key layout
    loc = ScratchBoard(stones, size).loc(2 * size + 2)
    first = memo.get(key(stones))[loc]

    far = stones.copy()
    far[8 * size + 0] = 1  # A1: nowhere near the ladder
    ladder_planes(far, size, 2, memo=memo, previous=stones)
    assert memo.get(key(far))[loc] is first

    breaker = stones.copy()
    breaker[6 * size + 6] = 2  # G3: a white stone on the ladder's path
    laddered, _ = ladder_planes(breaker, size, 1, memo=memo, previous=stones)
    assert memo.get(key(breaker))[loc] is not first
    assert not laddered[2 * size + 2]  # read again, and the breaker saves the chain
