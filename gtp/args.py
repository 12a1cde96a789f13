"""Argument schemas: each command declares its arguments once, and the table checks arity and types.

An :class:`Arg` names an argument (for error messages) and knows how to parse one token; ``optional`` and
``many`` mark trailing optional and variadic arguments. :func:`bind` turns the tokens of a command into
Python values or raises :class:`~miai.gtp.errors.GtpSyntaxError` quoting what was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from miai.go.coords import Color, parse_color, parse_gtp

from .errors import GtpSyntaxError

Parser = Callable[[str, int], Any]
"""Parse one token given the current board size; raise ``ValueError`` on bad input."""


@dataclass(frozen=True)
class Arg:
    """One declared argument: a name for messages, a parser, and whether it may be omitted or repeated."""

    name: str
    parse: Parser
    optional: bool = False
    variadic: bool = False

    def describe(self) -> str:
        """The argument as shown in usage text: ``color``, ``[move_number]``, ``vertex...``."""
        text = self.name + ("..." if self.variadic else "")
        return f"[{text}]" if self.optional else text


def optional(arg: Arg) -> Arg:
    """The same argument, allowed to be absent (trailing positions only); the handler then gets ``None``."""
    return replace(arg, optional=True)


def many(arg: Arg) -> Arg:
    """The same argument repeated any number of times (last position only); the handler gets a list."""
    return replace(arg, variadic=True)


def _parse_uint(token: str, _size: int) -> int:
    if not (token.isascii() and token.isdigit()):
        raise ValueError("not an unsigned integer")
    return int(token)


def _parse_int(token: str, _size: int) -> int:
    return int(token)


def _parse_float(token: str, _size: int) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _parse_bool(token: str, _size: int) -> bool:
    lowered = token.lower()
    if lowered not in ("true", "false"):
        raise ValueError("not true/false")
    return lowered == "true"


def _parse_color(token: str, _size: int) -> Color:
    return parse_color(token)


def _parse_string(token: str, _size: int) -> str:
    return token


UINT = Arg("int", _parse_uint)
INT = Arg("int", _parse_int)
FLOAT = Arg("float", _parse_float)
BOOL = Arg("bool", _parse_bool)
COLOR = Arg("color", _parse_color)
VERTEX = Arg("vertex", parse_gtp)
STRING = Arg("string", _parse_string)


def named(arg: Arg, name: str) -> Arg:
    """The same parser under a more telling name (``Arg`` names appear in usage and error messages)."""
    return replace(arg, name=name)


def usage(command: str, schema: Sequence[Arg]) -> str:
    """``play color vertex``: the command with its declared arguments."""
    return " ".join([command, *(arg.describe() for arg in schema)])


def bind(command: str, schema: Sequence[Arg], tokens: Sequence[str], size: int) -> list[Any]:
    """Parse ``tokens`` against ``schema``; one value per declared argument (``None``/list for optional/variadic).

    Raises:
        GtpSyntaxError: wrong number of arguments, or a token its parser rejects (the token is quoted).
    """
    required = sum(1 for arg in schema if not (arg.optional or arg.variadic))
    variadic = bool(schema) and schema[-1].variadic
    if len(tokens) < required or (not variadic and len(tokens) > len(schema)):
        raise GtpSyntaxError(f"expected '{usage(command, schema)}', got {len(tokens)} argument(s)")
    values: list[Any] = []
    for position, arg in enumerate(schema):
        if arg.variadic:
            values.append([_parse_one(arg, token, size) for token in tokens[position:]])
        elif position < len(tokens):
            values.append(_parse_one(arg, tokens[position], size))
        else:
            values.append(None)
    return values


def _parse_one(arg: Arg, token: str, size: int) -> Any:
    try:
        return arg.parse(token, size)
    except (ValueError, OverflowError) as error:
        raise GtpSyntaxError(f"invalid {arg.name} '{token}'") from error
