"""ASCII board fixtures: diagrams read like GTP ``showboard`` (row numbers left, column letters below).

``X`` is black, ``O`` white, ``.`` (or ``+``) empty. Axis labels are optional and ignored.

    9 . . . . . . . . .
    8 . . X O . . . . .
    ...
      A B C D E F G H J
"""

from __future__ import annotations

from miai.go.coords import Color
from miai.go.rules import Rules
from miai.go.state import GameState

_SYMBOLS = {"X": 1, "O": 2, ".": 0, "+": 0}


def parse_board(diagram: str) -> tuple[int, list[int]]:
    """(size, flat colours) of a diagram; rows top to bottom."""
    rows = []
    for line in diagram.strip("\n").splitlines():
        cells = [tok for tok in line.split() if tok in _SYMBOLS]
        if cells:
            rows.append([_SYMBOLS[tok] for tok in cells])
    size = len(rows)
    if any(len(row) != size for row in rows):
        raise ValueError(f"diagram is not square: {[len(r) for r in rows]}")
    return size, [v for row in rows for v in row]


def state_from_board(
    diagram: str, rules: Rules | str = "tromp-taylor", to_play: Color = Color.BLACK, komi: float = 7.5
) -> GameState:
    """A GameState whose setup stones are the diagram, with ``to_play`` to move."""
    size, colors = parse_board(diagram)
    if isinstance(rules, str):
        rules = Rules.preset(rules)
    state = GameState(size, rules, komi=komi)
    state.set_stones([m for m, v in enumerate(colors) if v == 1], [m for m, v in enumerate(colors) if v == 2])
    state.set_to_play(to_play)
    return state


def render(state: GameState) -> str:
    """The board as a diagram in the same notation (no axis labels)."""
    stones = state.stones()
    rows = []
    for y in range(state.size):
        rows.append(" ".join(".XO"[int(v)] for v in stones[y * state.size : (y + 1) * state.size]))
    return "\n".join(rows)
