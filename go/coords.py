"""Every coordinate conversion of miai, in one place.

A **move** is a plain ``int``: the flat index ``y * size + x`` of a board point, with ``y = 0`` the top row and
``x = 0`` the leftmost column, or ``PASS = -1``. This is KataGo's policy order, so a move is its own policy index;
the pass policy index is ``size * size``.

Conversion table for a 19x19 board:

============  ==========  ===========  ======  =========
point         flat move   GTP vertex   SGF     policy
============  ==========  ===========  ======  =========
upper left    0           A19          aa      0
upper right   18          T19          sa      18
lower left    342         A1           as      342
lower right   360         T1           ss      360
pass          -1          pass         "" (tt) 361
============  ==========  ===========  ======  =========

GTP columns skip the letter ``I``; GTP rows count from the bottom (1) up. SGF counts both axes from the top left
with letters ``a..y``; the empty value (and ``tt`` on boards up to 19x19) means pass.

>>> parse_gtp("D4", 19), to_gtp(288, 19)
(288, 'D4')
>>> to_gtp(parse_gtp("j10", 19), 19)
'J10'
>>> parse_sgf("dp", 19) == parse_gtp("D4", 19)
True
>>> to_sgf(PASS, 19), policy_index(PASS, 19)
('', 361)
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeAlias

from miai.go.errors import InvalidMoveError

Move: TypeAlias = int

PASS: Move = -1
MIN_SIZE = 2
MAX_SIZE = 25
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
_SGF_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class Color(IntEnum):
    """Point or player colour; ``EMPTY`` doubles as "no player"."""

    EMPTY = 0
    BLACK = 1
    WHITE = 2

    @property
    def opponent(self) -> Color:
        """The other player (``EMPTY`` stays ``EMPTY``).

        >>> Color.BLACK.opponent
        <Color.WHITE: 2>
        """
        return Color((3 - self.value) % 3)


_COLOR_NAMES = {"b": Color.BLACK, "black": Color.BLACK, "w": Color.WHITE, "white": Color.WHITE}


def parse_color(text: str) -> Color:
    """Parse a GTP colour (``b``, ``w``, ``black``, ``white``, any case).

    Raises:
        InvalidMoveError: for anything else.

    >>> parse_color("White")
    <Color.WHITE: 2>
    """
    try:
        return _COLOR_NAMES[text.strip().lower()]
    except KeyError:
        raise InvalidMoveError(f"invalid color: {text!r}") from None


def check_size(size: int) -> int:
    """Return ``size`` if miai supports it (``MIN_SIZE..MAX_SIZE``).

    Raises:
        ValueError: for an unsupported board size.
    """
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} outside {MIN_SIZE}..{MAX_SIZE}")
    return size


def parse_gtp(text: str, size: int) -> Move:
    """Parse a GTP vertex such as ``Q16`` or ``pass`` (case-insensitive; no column ``I``).

    Raises:
        InvalidMoveError: for a malformed vertex or one off the board.

    >>> parse_gtp("A19", 19), parse_gtp("PASS", 9)
    (0, -1)
    """
    vertex = text.strip().upper()
    if vertex == "PASS":
        return PASS
    if len(vertex) < 2 or vertex[0] not in GTP_COLUMNS or not vertex[1:].isdigit():
        raise InvalidMoveError(f"invalid vertex: {text!r}")
    x = GTP_COLUMNS.index(vertex[0])
    row = int(vertex[1:])
    if x >= size or not 1 <= row <= size:
        raise InvalidMoveError(f"vertex off the {size}x{size} board: {text!r}")
    return (size - row) * size + x


def to_gtp(move: Move, size: int) -> str:
    """Format a move as an upper-case GTP vertex, ``pass`` for a pass.

    >>> to_gtp(0, 9), to_gtp(80, 9), to_gtp(PASS, 9)
    ('A9', 'J1', 'pass')
    """
    if move == PASS:
        return "pass"
    y, x = divmod(move, size)
    return f"{GTP_COLUMNS[x]}{size - y}"


def parse_sgf(text: str, size: int) -> Move:
    """Parse an SGF point (``""`` and, on boards up to 19x19, ``tt`` are pass).

    Raises:
        InvalidMoveError: for a malformed point or one off the board.

    >>> parse_sgf("ab", 9), parse_sgf("tt", 19), parse_sgf("", 25)
    (9, -1, -1)
    """
    point = text.strip()
    if point == "" or (point == "tt" and size <= 19):
        return PASS
    if len(point) != 2 or point[0] not in _SGF_LETTERS or point[1] not in _SGF_LETTERS:
        raise InvalidMoveError(f"invalid SGF point: {text!r}")
    x, y = _SGF_LETTERS.index(point[0]), _SGF_LETTERS.index(point[1])
    if x >= size or y >= size:
        raise InvalidMoveError(f"SGF point off the {size}x{size} board: {text!r}")
    return y * size + x


def to_sgf(move: Move, size: int) -> str:
    """Format a move as an SGF point; a pass is the empty string.

    >>> to_sgf(0, 19), to_sgf(360, 19)
    ('aa', 'ss')
    """
    if move == PASS:
        return ""
    y, x = divmod(move, size)
    return _SGF_LETTERS[x] + _SGF_LETTERS[y]


def policy_index(move: Move, size: int) -> int:
    """The index of a move in a ``size*size + 1`` policy vector (pass last).

    >>> policy_index(5, 9), policy_index(PASS, 9)
    (5, 81)
    """
    return size * size if move == PASS else move


def xy(move: Move, size: int) -> tuple[int, int]:
    """The ``(x, y)`` of a board move, ``y = 0`` at the top.

    >>> xy(parse_gtp("C3", 9), 9)
    (2, 6)
    """
    y, x = divmod(move, size)
    return x, y


def from_xy(x: int, y: int, size: int) -> Move:
    """The flat move at column ``x`` and row ``y`` (``y = 0`` at the top).

    >>> from_xy(2, 6, 9)
    56
    """
    return y * size + x
