"""What the search asks of a position: :class:`SearchState` of any game it can search (tests pass toy games),
:class:`SearchPosition` of one its evaluator reads too (the root and scratch states), and :class:`GoPosition` of a Go
game, for the rules that only Go has.

miai.go.state.GameState is both. The search tells them apart once per root (``isinstance`` on the protocol, never on
a concrete class) and then applies KataGo's Go-only rules or not: passes that end the game searched on (conservative
and friendly passes), the subtree value bias's local patterns, the root ending bonus and the dame rule, and a finished
game searched on from the root.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from miai.go.rules import Rules

from miai.nets.protocol import NetPosition

if TYPE_CHECKING:
    from miai.go.board import Board

__all__ = ["SearchState", "SearchPosition", "GoPosition", "ShowsEyes"]


class SearchState(Protocol):
    """The members of a game the search uses.

    ``size``, ``komi``, ``rules``, ``handicap``, ``setup`` and ``moves`` tell whether a new root continues the old
    one's game (graph reuse); ``rules.ko`` whether superko can make a known edge illegal on another path.
    """

    @property
    def size(self) -> int: ...
    @property
    def komi(self) -> float: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def handicap(self) -> int: ...
    @property
    def setup(self) -> object: ...
    @property
    def moves(self) -> Sequence[tuple[int, int]]: ...
    @property
    def to_play(self) -> int: ...
    @property
    def graph_hash(self) -> int: ...
    def play_unchecked(self, move: int) -> None: ...
    # Moves the scratch states on to a new root that extends the old one (a TypeError or ValueError: copied afresh).
    def push(self, move: int, color: int) -> None: ...
    def pop(self) -> object: ...
    def is_legal(self, move: int) -> bool: ...
    def is_over(self) -> bool: ...
    def pass_ends_game(self) -> bool: ...
    def symmetries(self) -> list[int]: ...
    def score(self) -> float: ...
    def copy(self) -> Self: ...


class SearchPosition(SearchState, NetPosition, Protocol):
    """A search state the evaluator reads (miai.nets.protocol.NetPosition): what the search's root copy and its
    scratch states are, handed to the evaluator at every leaf. (A toy game of the tests is evaluated by a toy
    evaluator, which reads only what that game has.)"""


@runtime_checkable
class GoPosition(SearchPosition, Protocol):
    """A Go game (miai.go.state.GameState): what the Go-only rules of the search and of engine/core/ending.py read."""

    @property
    def board(self) -> Board: ...
    @property
    def button_available(self) -> bool: ...
    def pass_ends_game_outright(self) -> bool: ...
    def pass_is_friendly(self) -> bool: ...
    def local_pattern(self, move: int, radius: int = 2) -> tuple[int, ...]: ...
    def stones(self) -> np.ndarray: ...
    def pass_alive_area(self) -> np.ndarray: ...


@runtime_checkable
class ShowsEyes(Protocol):
    """A search state that can list a player's own true eyes (GameState can; a toy game need not)."""

    @property
    def to_play(self) -> int:
        """The player to move (1 Black, 2 White)."""
        ...

    def own_eyes(self, color: int) -> list[int]:
        """Flat moves of ``color``'s single-point true eyes (``miai.go.board.Board.own_eyes``)."""
        ...
