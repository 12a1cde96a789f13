"""The one board geometry of miai: padded index maps and neighbour tables, and the one flood fill.

Every board of miai (``Board``, the ladder reader's ``ScratchBoard``, the playouts' ``PlayoutBoard``) stores its
colours in a **padded** list: a point ``(x, y)`` lives at ``(y + 1) * stride + x + 1`` with ``stride = size + 1``.
There is one padding row above and one below, and one shared padding column that serves as both the right edge of
a row and the left edge of the next, plus one padding point at the very end; so the four neighbours of a point
``p`` are ``p - stride``, ``p - 1``, ``p + 1``, ``p + stride`` and every diagonal of a board point is a valid index
(the upper left corner's upper left diagonal is index 0, which therefore never names a board point). Padding
points hold ``BORDER``.

>>> g = board_geometry(3)
>>> g.stride, g.length, g.points[:3], g.flat[g.points[4]]
(4, 21, (5, 6, 7), 4)
>>> g.neighbours[5], g.on_board[5]
((1, 4, 6, 9), (6, 9))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

BORDER = 3
"""The colour of a padding point (``Color`` covers the board's own points: 0 empty, 1 black, 2 white)."""


@dataclass(frozen=True, eq=False)
class BoardGeometry:
    """Index tables of the padded board of one size (``height`` rows of ``size`` points), shared by every board.

    Attributes:
        size: points per row.
        height: rows (equal to ``size`` except in tests of rectangular reading boards).
        stride: distance between vertically adjacent padded indices, ``size + 1``.
        length: number of padded indices, ``(height + 2) * stride + 1``.
        points: padded index of each flat move, in flat order.
        flat: flat move of each padded index (-1 on padding).
        offsets: steps to the four neighbours: up, left, right, down.
        neighbours: the four padded neighbours (padding included) of each board point, in ``offsets`` order;
            empty on padding points, which are never the centre of a move.
        on_board: the neighbours of each board point that are board points themselves (same order).
        diagonals: the four padded diagonals of each board point (upper left, upper right, lower left, lower right).
        flat_neighbours: the orthogonal neighbours of each flat move as flat moves (up, left, right, down).
    """

    size: int
    height: int
    stride: int
    length: int
    points: tuple[int, ...]
    flat: tuple[int, ...]
    offsets: tuple[int, int, int, int]
    neighbours: tuple[tuple[int, ...], ...]
    on_board: tuple[tuple[int, ...], ...]
    diagonals: tuple[tuple[int, ...], ...]
    flat_neighbours: tuple[tuple[int, ...], ...]

    def loc(self, move: int) -> int:
        """Padded index of a flat move."""
        return self.points[move]


@lru_cache(maxsize=64)
def board_geometry(size: int, height: int | None = None) -> BoardGeometry:
    """The padded tables of a ``size`` x ``height`` board (``height`` defaults to ``size``), cached."""
    rows = size if height is None else height
    stride = size + 1
    length = (rows + 2) * stride + 1
    points = tuple((y + 1) * stride + x + 1 for y in range(rows) for x in range(size))
    flat = [-1] * length
    for move, p in enumerate(points):
        flat[p] = move
    offsets = (-stride, -1, 1, stride)
    neighbours: list[tuple[int, ...]] = [()] * length
    on_board: list[tuple[int, ...]] = [()] * length
    diagonals: list[tuple[int, ...]] = [()] * length
    for p in points:
        neighbours[p] = tuple(p + off for off in offsets)
        on_board[p] = tuple(q for q in neighbours[p] if flat[q] >= 0)
        diagonals[p] = (p - stride - 1, p - stride + 1, p + stride - 1, p + stride + 1)
    flat_neighbours = tuple(tuple(flat[q] for q in on_board[p]) for p in points)
    return BoardGeometry(
        size, rows, stride, length, points, tuple(flat), offsets, tuple(neighbours), tuple(on_board),
        tuple(diagonals), flat_neighbours,
    )


@lru_cache(maxsize=32)
def symmetric_points(size: int) -> tuple[tuple[int, ...], ...]:
    """For each of the 8 symmetries of a ``size`` x ``size`` board, where every flat point lands: KataGo's numbering,
    bit 1 flips the rows, bit 2 the columns, bit 4 transposes after the flips (nets/symmetry.py says more).

    >>> symmetric_points(3)[5][1]  # (y=0, x=1): flip rows to (2, 1), transpose to (1, 2)
    5
    """
    table = []
    for symmetry in range(8):
        images = []
        for move in range(size * size):
            y, x = divmod(move, size)
            if symmetry & 1:
                y = size - 1 - y
            if symmetry & 2:
                x = size - 1 - x
            if symmetry & 4:
                y, x = x, y
            images.append(y * size + x)
        table.append(tuple(images))
    return tuple(table)


def neighbor_table(size: int) -> tuple[tuple[int, ...], ...]:
    """Orthogonal neighbours of every flat point of a ``size`` x ``size`` board (up, left, right, down).

    >>> neighbor_table(3)[4]
    (1, 3, 5, 7)
    """
    return board_geometry(size).flat_neighbours


def flood(colors: Sequence[int], neighbours: Sequence[Sequence[int]], start: int) -> tuple[list[int], set[int]]:
    """The connected component of ``start``'s colour and its border: the one flood fill of miai.

    ``colors`` and ``neighbours`` index the same points (flat or padded). Returns the points reachable from
    ``start`` through points of its colour, in breadth-first order with neighbours taken in table order (callers
    that read moves off a chain rely on that order), and the set of adjacent points of any other colour: the
    liberties and opposing stones of a chain, the bordering stones of an empty region.

    >>> flood([1, 1, 0,  2, 1, 0,  0, 0, 0], neighbor_table(3), 0)
    ([0, 1, 4], {2, 3, 5, 7})
    """
    color = colors[start]
    members = [start]
    seen = {start}
    border: set[int] = set()
    index = 0
    while index < len(members):
        for adj in neighbours[members[index]]:
            if colors[adj] == color:
                if adj not in seen:
                    seen.add(adj)
                    members.append(adj)
            else:
                border.add(adj)
        index += 1
    return members, border
