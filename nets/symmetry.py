"""The eight symmetries of a square Go board, numbered as KataGo numbers them.

A symmetry is an int 0..7 whose bits say what happens to a point at row ``y``, column ``x``
(row 0 is the top row, as in miai's flat move order), on an ``H x W`` board:

=====  ===============================================
 bit    effect
=====  ===============================================
 1      flip rows, ``y -> H-1-y``
 2      flip columns, ``x -> W-1-x``
 4      transpose, ``(y, x) -> (x, y)``, after the flips
=====  ===============================================

For example symmetry 5 (flip rows, then transpose) sends ``(y, x)`` to ``(x, H-1-y)``:

>>> map_point(1, 3, 5)  # (y=0, x=1) on a 3x3 board lands on (y=1, x=2)
5

This is KataGo's numbering (checked against KataGo's kata-raw-nn output for symmetries 1, 4
and 6 in tests/nets/test_reference.py).

``apply_planes`` moves the net's inputs into the symmetric frame; ``invert_points`` brings the
net's per-point outputs (policy, ownership) back to the board's frame. Symmetries 5 and 6 are each
other's inverse; every other symmetry is its own inverse.
"""

from __future__ import annotations

import numpy as np

from miai.go.geometry import symmetric_points

NUM_SYMMETRIES = 8

# Symmetry -> its inverse; only the two "transpose plus one flip" elements are not involutions.
_INVERSE = (0, 1, 2, 3, 4, 6, 5, 7)


def check_symmetry(symmetry: int) -> int:
    """Return ``symmetry`` if it is 0..7, else raise ``ValueError``."""
    if not 0 <= int(symmetry) < NUM_SYMMETRIES:
        raise ValueError(f"symmetry must be 0..7, got {symmetry}")
    return int(symmetry)


def inverse(symmetry: int) -> int:
    """The symmetry that undoes ``symmetry``."""
    return _INVERSE[check_symmetry(symmetry)]


def apply_planes(planes: np.ndarray, symmetry: int) -> np.ndarray:
    """Apply ``symmetry`` to the last two axes (rows, columns) of ``planes``.

    Works for any leading shape ([H, W], [C, H, W], [N, C, H, W]); transposition needs H == W.
    Returns a view when possible (callers copy when they write).
    """
    symmetry = check_symmetry(symmetry)
    out = planes
    if symmetry & 1:
        out = out[..., ::-1, :]
    if symmetry & 2:
        out = out[..., :, ::-1]
    if symmetry & 4:
        if out.shape[-1] != out.shape[-2]:
            raise ValueError("transposing symmetries need a square board")
        out = np.swapaxes(out, -1, -2)
    return out


def invert_planes(planes: np.ndarray, symmetry: int) -> np.ndarray:
    """Undo ``apply_planes(., symmetry)`` on the last two axes."""
    return apply_planes(planes, inverse(symmetry))


def invert_points(values: np.ndarray, size: int, symmetry: int) -> np.ndarray:
    """Undo ``symmetry`` on per-point values in flat order (``[..., size*size]``).

    A trailing pass entry (``[..., size*size + 1]``, the policy layout) is kept in place.
    """
    area = size * size
    board = values[..., :area].reshape(values.shape[:-1] + (size, size))
    board = invert_planes(board, symmetry).reshape(values.shape[:-1] + (area,))
    if values.shape[-1] == area:
        return np.ascontiguousarray(board)
    return np.concatenate([board, values[..., area:]], axis=-1)


def map_point(move: int, size: int, symmetry: int) -> int:
    """Where the point ``move`` (flat index, or a negative pass) lands under ``symmetry``."""
    if move < 0:
        return move
    return symmetric_points(size)[check_symmetry(symmetry)][move]
