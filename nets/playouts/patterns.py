"""MoGo's 3x3 playout patterns, as lookup tables over an integer code of a point's eight neighbours.

Source: S. Gelly, Y. Wang, R. Munos, O. Teytaud, "Modification of UCT with Patterns in Monte-Carlo Go", INRIA
research report RR-6062 (2006), section 3.2 and its figures of hane, cut and edge patterns. A pattern describes
the 3x3 neighbourhood of an empty candidate point (the centre); in MoGo's playouts the candidates are the empty
points next to the opponent's last move, and a matching one is played before any random move. The patterns below
are our rendering of the paper's figures in this module's notation; the colours are interchangeable (a cutting
point is worth playing for either side), except the thin hane, which the paper matches only for the side whose
stone it marks. The paper also marks a few edge patterns as one-sided; that detail is not modelled here.

Notation (rows top to bottom, the centre is always the empty candidate):

- ``X``: a stone of one colour, ``O``: a stone of the other, ``.``: empty, ``#``: off the board, ``?``: anything;
- ``x``: anything but ``O`` (an ``X`` stone, empty or off the board), ``o``: anything but ``X``.

A neighbourhood is coded as ``sum(state_i << 2 * i)`` over the eight neighbours in :data:`RING_ORDER` (upper left,
up, upper right, left, right, lower left, down, lower right), with the padded board's own states (0 empty, 1 black,
2 white, 3 off the board): 4**8 codes. For each side to move a 65,536-byte table says which codes match some
pattern in any of the eight rotations and reflections, with either colour assignment; building it enumerates the
codes of every pattern once (a fraction of a second, on first use, so net mode never pays for it).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

from miai.go.geometry import BORDER, board_geometry

EMPTY, BLACK, WHITE = 0, 1, 2

# The eight neighbours as (row, column) offsets from the centre, in the order of the code's 2-bit digits.
RING_ORDER: tuple[tuple[int, int], ...] = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


@dataclass(frozen=True)
class Pattern:
    """One 3x3 pattern: its family (hane, cut1, cut2, edge), a name, its rows and whether it is one-sided.

    ``cells`` are the three rows in the notation of the module docstring. ``mover_is_x``: the pattern matches only
    when the ``X`` colour is to play (the paper's marked stone); otherwise for either side to move.
    """

    family: str
    name: str
    cells: tuple[str, str, str]
    mover_is_x: bool = False


PATTERNS: tuple[Pattern, ...] = (
    # Hane: playing diagonally next to an opponent stone that touches one's own, around the head of the stones.
    Pattern("hane", "enclosing hane", ("XOX", "...", "???")),
    Pattern("hane", "non-cutting hane", ("XO.", "...", "?.?")),
    Pattern("hane", "magari (bend)", ("XO?", "X..", "?.?")),
    Pattern("hane", "thin hane", ("XOO", "...", "?.?"), mover_is_x=True),
    # Cut 1: the diagonal cut between X and the two O stones. The paper states it as three patterns, the first
    # matching and neither of the others ("XO? O.O ???" and "XO? O.? ?O?", same orientation): no O stone right of
    # or below the centre, which is what the two ``x`` cells say.
    Pattern("cut1", "diagonal cut", ("XO?", "O.x", "?x?")),
    # Cut 2: cutting between two O stones under an X stone, with no O stone on the far row.
    Pattern("cut2", "cut between two stones", ("?X?", "O.O", "xxx")),
    # Edge: the first line, with the edge as the bottom row.
    Pattern("edge", "chase along the edge", ("X.?", "O.?", "###")),
    Pattern("edge", "block the side cut", ("OX?", "X.O", "###")),
    Pattern("edge", "block the side connection", ("?X?", "o.O", "###")),
    Pattern("edge", "descend (sagari)", ("?XO", "o.o", "###")),
    Pattern("edge", "cut on the edge", ("?OX", "X.O", "###")),
)

FAMILIES: tuple[str, ...] = ("hane", "cut1", "cut2", "edge")


def _cell_states(symbol: str, x: int, o: int) -> tuple[int, ...]:
    """The board states a pattern cell accepts with ``X`` as colour ``x`` and ``O`` as colour ``o``."""
    table = {
        "X": (x,), "O": (o,), ".": (EMPTY,), "#": (BORDER,), "?": (EMPTY, BLACK, WHITE, BORDER),
        "x": (EMPTY, x, BORDER), "o": (EMPTY, o, BORDER),
    }
    if symbol not in table:
        raise ValueError(f"unknown pattern symbol {symbol!r}")
    return table[symbol]


def _symmetries() -> list[tuple[int, ...]]:
    """For each of the 8 rotations/reflections, where each ring position's cell comes from (ring indices)."""
    # The 2x2 integer matrices (a, b, c, d) mapping (row, column) to (a row + b column, c row + d column): the four
    # rotations and the four reflections of the square.
    matrices = ((1, 0, 0, 1), (0, 1, -1, 0), (-1, 0, 0, -1), (0, -1, 1, 0),
                (1, 0, 0, -1), (-1, 0, 0, 1), (0, 1, 1, 0), (0, -1, -1, 0))
    return [tuple(RING_ORDER.index((a * r + b * c, cc * r + d * c)) for r, c in RING_ORDER)
            for a, b, cc, d in matrices]


def _codes(cells: tuple[str, str, str], x: int, o: int) -> set[int]:
    """Every neighbourhood code that ``cells`` matches in any orientation with ``X`` = ``x``, ``O`` = ``o``."""
    if cells[1][1] != ".":
        raise ValueError(f"the centre of a pattern must be empty: {cells}")
    symbols = [cells[r + 1][c + 1] for r, c in RING_ORDER]
    codes: set[int] = set()
    for source in _symmetries():
        # Ring position i of the rotated pattern shows the original cell source[i].
        choices = [_cell_states(symbols[source[i]], x, o) for i in range(8)]
        for states in itertools.product(*choices):
            codes.add(sum(state << (2 * i) for i, state in enumerate(states)))
    return codes


def _pattern_codes(pattern: Pattern, mover: int) -> set[int]:
    """Codes matched by ``pattern`` for ``mover`` to play, over both colour assignments unless it is one-sided."""
    codes: set[int] = set()
    for x in (BLACK, WHITE):
        if not pattern.mover_is_x or x == mover:
            codes |= _codes(pattern.cells, x, 3 - x)
    return codes


@lru_cache(maxsize=None)
def family_codes(family: str, mover: int) -> frozenset[int]:
    """The neighbourhood codes that match a pattern of ``family`` for ``mover`` (1 or 2) to play."""
    if family not in FAMILIES or mover not in (BLACK, WHITE):
        raise ValueError(f"no pattern family {family!r} for colour {mover}")
    codes: set[int] = set()
    for pattern in PATTERNS:
        if pattern.family == family:
            codes |= _pattern_codes(pattern, mover)
    return frozenset(codes)


@lru_cache(maxsize=None)
def pattern_tables() -> tuple[bytes, bytes, bytes]:
    """65,536-byte tables indexed by the side to move, ``(unused, black's, white's)``: 1 where a neighbourhood
    code matches a pattern of any family. Indexing bytes is cheaper in the playout loop than hashing into a set."""
    tables = []
    for mover in (BLACK, WHITE):
        table = bytearray(4 ** 8)
        for family in FAMILIES:
            for code in family_codes(family, mover):
                table[code] = 1
        tables.append(bytes(table))
    return b"", tables[0], tables[1]


@lru_cache(maxsize=64)
def rings(size: int) -> tuple[tuple[int, ...], ...]:
    """The eight padded neighbours of each board point of a ``size`` board in :data:`RING_ORDER` (empty tuples
    off the board). Every one is a valid index of the padded colour list (padding reads as off the board)."""
    geometry = board_geometry(size)
    stride = geometry.stride
    table: list[tuple[int, ...]] = [()] * geometry.length
    for p in geometry.points:
        table[p] = tuple(p + r * stride + c for r, c in RING_ORDER)
    return tuple(table)


def neighbourhood_code(color: list[int], ring: tuple[int, ...]) -> int:
    """The code of the neighbourhood whose eight padded points are ``ring`` on the padded ``color`` list."""
    a, b, c, d, e, f, g, h = ring
    return (color[a] | color[b] << 2 | color[c] << 4 | color[d] << 6 | color[e] << 8 | color[f] << 10
            | color[g] << 12 | color[h] << 14)
