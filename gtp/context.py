"""The session as a command handler sees it: what the handlers in ``commands/`` may read and do.

:class:`~miai.gtp.session.GtpSession` is the one implementation. The handlers are typed on this protocol, not on
the session, so the session can import its command table without the handlers importing it back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from miai.go.rules import Rules
from miai.go.state import GameState

from .config import GtpConfig
from .player import Player
from .table import CommandTable


class Session(Protocol):
    """One GTP conversation, from inside a command."""

    state: GameState  # the game; a handler that builds a new one (loadsgf, set_position) assigns it
    player: Player  # asked for decisions only (genmove, analysis, time, parameters)
    config: GtpConfig  # the settings the session started with
    table: CommandTable  # every command served, for list_commands and known_command

    @property
    def stop_event(self) -> threading.Event:
        """Set while input is pending: the stop signal of a running analysis."""
        ...

    def log(self, message: str) -> None:
        """A diagnostic line on stderr (never stdout)."""
        ...

    def write_stderr(self, line: str) -> None:
        """One line on stderr as it is, for the bridges that read stderr (gtp2ogs's chat lines)."""
        ...

    def request_quit(self) -> None:
        """End the session after the current response."""
        ...

    def open_stream(self) -> None:
        """Write the head of a streamed response (``=id``); the handler then emits lines and returns the last."""
        ...

    def stream_writer(self) -> tuple[Callable[[str], None], Callable[[], None]]:
        """``(emit_line, close)`` for the lines of an open response, safe from any thread."""
        ...

    def input_interrupts(self) -> AbstractContextManager[None]:
        """While it lasts, any input line (not only ``quit``) stops the player's search."""
        ...

    def new_game(self, size: int | None = None, rules: Rules | None = None, komi: float | None = None) -> None:
        """Replace the game by an empty board, keeping whatever is not given."""
        ...

    def rebuild(self, rules: Rules | None = None, komi: float | None = None) -> None:
        """Replay the current game under new rules or komi (``GtpError`` if it is illegal under them)."""
        ...

    def any_stones_or_moves(self) -> bool:
        """Whether the board has a stone or the game a move."""
        ...
