"""GNU Go's board query commands: is_legal, all_legal, list_stones, captures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from miai.go.coords import PASS, Color, to_gtp

from ..args import COLOR, VERTEX
from ..table import CommandTable

if TYPE_CHECKING:
    from ..context import Session

table = CommandTable()


@table.command("is_legal", COLOR, VERTEX)
def is_legal(s: Session, color: Color, move: int) -> str:
    """``1`` if ``color`` may play ``move`` now, else ``0`` (a pass is always legal)."""
    return "1" if move == PASS or s.state.is_legal(move, color) else "0"


@table.command("all_legal", COLOR)
def all_legal(s: Session, color: Color) -> str:
    """Every board point ``color`` may play now, on one line."""
    size = s.state.size
    return " ".join(to_gtp(move, size) for move in sorted(s.state.legal_moves(color)))


@table.command("list_stones", COLOR)
def list_stones(s: Session, color: Color) -> str:
    """Every stone of ``color``, on one line."""
    size = s.state.size
    stones = s.state.stones()
    return " ".join(to_gtp(point, size) for point in range(size * size) if stones[point] == int(color))


@table.command("captures", COLOR)
def captures(s: Session, color: Color) -> str:
    """How many stones ``color`` has captured."""
    return str(s.state.captures(color))
