"""The eight board symmetries: KataGo's numbering, inverses, and round trips."""

from __future__ import annotations

import numpy as np
import pytest

from miai.nets import symmetry


def board(size: int) -> np.ndarray:
    return np.arange(size * size, dtype=np.float32).reshape(size, size)


def test_bits_are_flip_rows_flip_columns_transpose() -> None:
    b = board(3)
    assert np.array_equal(symmetry.apply_planes(b, 1), b[::-1, :])
    assert np.array_equal(symmetry.apply_planes(b, 2), b[:, ::-1])
    assert np.array_equal(symmetry.apply_planes(b, 4), b.T)
    # The flips happen first, then the transpose: symmetry 5 sends (y, x) to (x, H-1-y).
    moved = symmetry.apply_planes(b, 5)
    for y in range(3):
        for x in range(3):
            assert moved[x, 2 - y] == b[y, x]


@pytest.mark.parametrize("sym", range(8))
def test_invert_undoes_apply_on_batched_planes(sym: int) -> None:
    planes = np.random.default_rng(sym).normal(size=(2, 5, 7, 7)).astype(np.float32)
    there = symmetry.apply_planes(planes, sym)
    assert np.array_equal(symmetry.invert_planes(there, sym), planes)


def test_only_five_and_six_are_not_their_own_inverse() -> None:
    assert [symmetry.inverse(s) for s in range(8)] == [0, 1, 2, 3, 4, 6, 5, 7]
    b = board(4)
    for sym in range(8):
        twice = symmetry.apply_planes(symmetry.apply_planes(b, sym), sym)
        assert np.array_equal(twice, b) == (sym not in (5, 6))


def test_the_eight_symmetries_are_distinct() -> None:
    images = {symmetry.apply_planes(board(5), s).tobytes() for s in range(8)}
    assert len(images) == 8


@pytest.mark.parametrize("sym", range(8))
def test_map_point_agrees_with_apply_planes(sym: int) -> None:
    size = 6
    b = board(size)
    moved = symmetry.apply_planes(b, sym).reshape(-1)
    for point in range(size * size):
        assert moved[symmetry.map_point(point, size, sym)] == b.reshape(-1)[point]
    assert symmetry.map_point(-1, size, sym) == -1


@pytest.mark.parametrize("sym", range(8))
def test_invert_points_keeps_pass_last(sym: int) -> None:
    size = 4
    policy = np.arange(size * size + 1, dtype=np.float32)
    # A net seeing the rotated board answers in the rotated frame; invert_points brings it back.
    rotated_answer = np.append(symmetry.apply_planes(policy[:-1].reshape(size, size), sym).reshape(-1), policy[-1])
    assert np.array_equal(symmetry.invert_points(rotated_answer, size, sym), policy)
    ownership = policy[:-1]
    rotated_owner = symmetry.apply_planes(ownership.reshape(size, size), sym).reshape(-1)
    assert np.array_equal(symmetry.invert_points(rotated_owner, size, sym), ownership)


def test_bad_symmetries_are_rejected() -> None:
    with pytest.raises(ValueError):
        symmetry.apply_planes(board(3), 8)
    with pytest.raises(ValueError):
        symmetry.apply_planes(np.zeros((3, 4)), 4)
