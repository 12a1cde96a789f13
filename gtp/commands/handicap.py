"""Handicap commands: fixed_handicap (GNU Go's points), place_free_handicap and set_free_handicap."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from miai.go.coords import PASS, to_gtp
from miai.go.errors import GoError
from miai.go.state import fixed_handicap_points, max_fixed_handicap

from ..args import UINT, VERTEX, many, named
from ..errors import BAD_VERTEX_LIST, BOARD_NOT_EMPTY, INVALID_STONE_COUNT, GtpError
from ..table import CommandTable

if TYPE_CHECKING:
    from ..context import Session

table = CommandTable()


def _require_empty(s: Session) -> None:
    if s.any_stones_or_moves():
        raise GtpError(BOARD_NOT_EMPTY)


def _place(s: Session, points: list[int]) -> None:
    try:
        s.state.set_handicap(points)
    except GoError as error:
        raise GtpError(BAD_VERTEX_LIST, str(error)) from error


def _vertex_list(points: list[int], size: int) -> str:
    return " ".join(to_gtp(point, size) for point in points)


@table.command("fixed_handicap", named(UINT, "stones"), mutates=True)
def fixed_handicap(s: Session, count: int) -> str:
    """Place ``count`` stones on GNU Go's fixed points and return them; White plays next."""
    _require_empty(s)
    size = s.state.size
    if not 2 <= count <= max_fixed_handicap(size):
        raise GtpError(INVALID_STONE_COUNT, f"fixed handicap on {size}x{size} is 2..{max_fixed_handicap(size)}")
    points = fixed_handicap_points(size, count)
    _place(s, points)
    return _vertex_list(points, size)


@table.command("place_free_handicap", named(UINT, "stones"), mutates=True)
def place_free_handicap(s: Session, count: int) -> str:
    """Exactly ``count`` stones on one line (gtp2ogs resigns otherwise): the player's choice if it makes one,
    else GNU Go's fixed points and then the most spread-out remaining points."""
    _require_empty(s)
    size = s.state.size
    if not 2 <= count <= size * size - 1:
        raise GtpError(INVALID_STONE_COUNT, f"free handicap on {size}x{size} is 2..{size * size - 1}")
    points = _player_points(s, count)
    if points is None:
        points = default_free_points(size, count)
    _place(s, points)
    return _vertex_list(points, size)


def _player_points(s: Session, count: int) -> list[int] | None:
    """The player's points if they are ``count`` distinct board points, else ``None`` (with a log line)."""
    chosen = s.player.free_handicap(s.state.copy(), count)
    if chosen is None:
        return None
    points = [int(point) for point in chosen]
    size = s.state.size
    if len(points) != count or len(set(points)) != count or not all(0 <= p < size * size for p in points):
        s.log(f"player's free handicap {points} is not {count} distinct points; using the default")
        return None
    return points


def default_free_points(size: int, count: int) -> list[int]:
    """``count`` distinct points: GNU Go's fixed points as far as they go, then greedily the free point farthest
    from every stone so far (Chebyshev distance), preferring points off the first line, then near the 4th line
    (3rd below 13x13), then the lowest index. O(count * size^2): even 360 stones on 19x19 are instant."""
    base = min(count, max_fixed_handicap(size))
    points = fixed_handicap_points(size, base) if base >= 2 else []
    ys, xs = np.divmod(np.arange(size * size), size)
    edge = np.minimum(np.minimum(xs, ys), np.minimum(size - 1 - xs, size - 1 - ys))
    off_edge = (edge > 0) | (size < 5)
    line_distance = np.abs(edge - (3 if size >= 13 else 2))
    free = np.ones(size * size, dtype=bool)
    nearest = np.full(size * size, 2 * size, dtype=np.int64)
    for point in points:
        free[point] = False
        nearest = np.minimum(nearest, np.maximum(np.abs(ys - ys[point]), np.abs(xs - xs[point])))
    while len(points) < count:
        # np.lexsort sorts ascending by the last key first; the best point comes last.
        order = np.lexsort((-np.arange(size * size), -line_distance, nearest, off_edge, free))
        best = int(order[-1])
        points.append(best)
        free[best] = False
        nearest = np.minimum(nearest, np.maximum(np.abs(ys - ys[best]), np.abs(xs - xs[best])))
    return points


@table.command("set_free_handicap", many(VERTEX), mutates=True)
def set_free_handicap(s: Session, points: list[int]) -> str:
    """Black stones on the given points of an empty board (at least 2, distinct, no pass); White plays next."""
    _require_empty(s)
    size = s.state.size
    if len(points) < 2 or PASS in points or len(set(points)) != len(points) or len(points) >= size * size:
        raise GtpError(BAD_VERTEX_LIST, "need 2 or more distinct board points, not all of them")
    _place(s, points)
    return ""
