"""The small error hierarchy of the rules layer.

``GoError`` is the root; every subclass is also a ``ValueError`` so callers that only know the standard library can
still catch bad input.
"""

from __future__ import annotations

from enum import Enum


class IllegalReason(Enum):
    """Why a move on the board is not allowed."""

    OCCUPIED = "occupied"
    SUICIDE = "suicide"
    KO = "ko"
    SUPERKO = "superko"


class GoError(Exception):
    """Root of every error the rules layer raises on purpose."""


class InvalidMoveError(GoError, ValueError):
    """A move, vertex or colour could not be parsed (syntax, not legality)."""


class IllegalMoveError(GoError, ValueError):
    """A well-formed move that the rules forbid; ``reason`` says which rule."""

    def __init__(self, reason: IllegalReason, message: str | None = None) -> None:
        super().__init__(message or f"illegal move ({reason.value})")
        self.reason = reason


class SetupError(GoError, ValueError):
    """Setup that cannot be applied: handicap on a non-empty board, bad handicap count, bad stone lists."""


class SgfError(GoError, ValueError):
    """A malformed SGF file; the message names the problem. Where the text is malformed, ``problem`` is the message
    without its position and ``line`` and ``column`` (1-based) the position, for callers that place it themselves."""

    def __init__(self, message: str, *, problem: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        super().__init__(message)
        self.problem = message if problem is None else problem
        self.line = line
        self.column = column
