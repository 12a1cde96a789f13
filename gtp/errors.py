"""The GTP layer's error hierarchy.

A handler signals failure by raising :class:`GtpError`; only the session loop turns it into ``? message``.
Standard GTP failure texts (spec section 6) are kept verbatim in the message, and any extra explanation goes into
``detail``, which the session writes to stderr (where Sabaki's console and a human at a terminal see it) so that
controllers that compare the failure text exactly (gomill on ``illegal move``) keep working.
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


class GtpError(Exception):
    """A command failed; ``message`` becomes the ``?`` response, ``detail`` (optional) goes to stderr."""

    def __init__(self, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class GtpSyntaxError(GtpError):
    """The command's arguments could not be parsed (``? syntax error``)."""

    def __init__(self, detail: str) -> None:
        super().__init__(SYNTAX_ERROR, detail)
