"""GTP v2 framing: input preprocessing (spec section 3.1), command parsing and response formatting.

These are pure functions on strings; the session (``miai.gtp.session``) does the I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_ID = 2**31 - 1

# Every control character except HT (\t) and LF (\n); DEL too. CR goes with them, which is what makes CRLF input
# (gtp2ogs) work.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


@dataclass(frozen=True)
class Command:
    """One parsed command line: the optional numeric id, the lower-cased name and the raw argument tokens."""

    id: int | None
    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        head = f"{self.id} " if self.id is not None else ""
        return head + " ".join((self.name, *self.args))


def preprocess(line: str) -> str | None:
    """Apply the spec's preprocessing to one input line; ``None`` for a line that must get no response.

    Removes control characters (CR included) except HT, cuts a ``#`` comment, turns HT into a space and
    collapses the result; an empty or whitespace-only line gives ``None``.

    >>> preprocess("10 play b d4  # a comment\\r\\n")
    '10 play b d4'
    >>> preprocess("   \\t ") is None
    True
    """
    line = _CONTROL.sub("", line.replace("\n", ""))
    hash_at = line.find("#")
    if hash_at >= 0:
        line = line[:hash_at]
    line = re.sub(" +", " ", line.replace("\t", " ")).strip()
    return line or None


def parse_command(line: str) -> Command:
    """Split a preprocessed, non-empty line into id, name and arguments.

    A leading token of digits is the id (when it fits GTP's 0..2^31-1); the command name is matched
    case-insensitively, so it is lower-cased here. A line holding only an id gives an empty name, which the
    session answers with ``unknown command``.

    >>> parse_command("7 PLAY B D4")
    Command(id=7, name='play', args=('B', 'D4'))
    """
    tokens = line.split()
    command_id: int | None = None
    if tokens and tokens[0].isdigit() and tokens[0].isascii() and int(tokens[0]) <= MAX_ID:
        command_id = int(tokens.pop(0))
    if not tokens:
        return Command(command_id, "", ())
    return Command(command_id, tokens[0].lower(), tuple(tokens[1:]))


def _clean_body(text: str) -> str:
    """Make ``text`` safe inside a response: no CR, no trailing spaces, no empty line after the first."""
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n")]
    return "\n".join(lines[:1] + [line for line in lines[1:] if line])


def response_head(success: bool, command_id: int | None) -> str:
    """``=``/``?`` followed by the echoed id, if the command had one."""
    return ("=" if success else "?") + ("" if command_id is None else str(command_id))


def format_response(success: bool, command_id: int | None, text: str = "") -> str:
    """A complete response: ``=id text`` or ``?id text`` and the terminating blank line.

    The content starts on the head's line after one space (GoGui reads the text after the first space), and an
    empty line can never appear inside it, since that would end the response early.

    >>> format_response(True, 3, "D4")
    '=3 D4\\n\\n'
    >>> format_response(False, None, "illegal move")
    '? illegal move\\n\\n'
    """
    return f"{response_head(success, command_id)} {_clean_body(text)}\n\n"
