"""The GTP layer's error hierarchy.

A handler signals failure by raising :class:`GtpError`; only the session loop turns it into ``? reply``.
Standard GTP failure texts (spec section 6) lead the message, and the reason follows in ``detail``: the reply is
``cannot load file: game.sgf: line 3, column 9: ...``, as KataGo puts its reasons in the reply. Two texts stay
alone in the reply, with the reason on stderr only, because controllers compare them exactly: ``illegal move``
(gomill forfeits the opponent on it) and ``unknown command``.
"""

from __future__ import annotations

# The failure texts the GTP v2 specification defines; controllers may match them exactly.
UNKNOWN_COMMAND = "unknown command"
SYNTAX_ERROR = "syntax error"
UNACCEPTABLE_SIZE = "unacceptable size"
ILLEGAL_MOVE = "illegal move"
CANNOT_UNDO = "cannot undo"
CANNOT_SCORE = "cannot score"
CANNOT_LOAD_FILE = "cannot load file"
BOARD_NOT_EMPTY = "board not empty"
INVALID_STONE_COUNT = "invalid number of stones"
BAD_VERTEX_LIST = "bad vertex list"


# Failure texts controllers match exactly: the reply is the text alone (its reason goes to stderr).
EXACT_TEXTS = frozenset({UNKNOWN_COMMAND, ILLEGAL_MOVE})


class GtpError(Exception):
    """A command failed: ``message`` says what failed (a standard text where GTP has one), ``detail`` (optional)
    why; :attr:`reply` is the ``?`` response."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    @property
    def reply(self) -> str:
        """The ``?`` response's text, on one line: ``message: detail``, or the message alone for the texts
        controllers compare exactly (:data:`EXACT_TEXTS`)."""
        text = self.message
        if self.detail and self.message not in EXACT_TEXTS and self.detail not in self.message:
            text = f"{self.message}: {self.detail}"
        return " ".join(text.split()) or "failed"

    @property
    def reason_in_reply(self) -> bool:
        """Whether :attr:`reply` carries ``detail`` (otherwise the session logs it on stderr)."""
        return not self.detail or self.message not in EXACT_TEXTS


class GtpSyntaxError(GtpError):
    """The command's arguments could not be parsed (``? syntax error``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(SYNTAX_ERROR, detail)
