"""Board commands: size, clearing, komi, rules, play, undo and the showboard diagram."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from miai.go.coords import MAX_SIZE, MIN_SIZE, PASS, Color, parse_color, parse_gtp, to_gtp
from miai.go.errors import GoError, IllegalMoveError
from miai.go.rules import Rules
from miai.go.state import GameState

from ..args import COLOR, FLOAT, STRING, UINT, VERTEX, many, named, optional
from ..errors import CANNOT_UNDO, ILLEGAL_MOVE, UNACCEPTABLE_SIZE, GtpError, GtpSyntaxError
from ..table import CommandTable

if TYPE_CHECKING:
    from ..context import Session

table = CommandTable()

# kgs-rules names (kgsGtp) to miai's presets. KGS plays Chinese rules with positional superko: KataGo's
# chinese-kgs (its plain "chinese" has a simple ko rule).
KGS_RULES = {"chinese": "chinese-kgs", "aga": "aga", "japanese": "japanese", "new_zealand": "new-zealand"}


@table.command("boardsize", named(UINT, "size"), optional(named(UINT, "height")), mutates=True)
def boardsize(s: Session, size: int, height: int | None) -> str:
    """Empty board of the new size (``boardsize W H`` from gtp2ogs works when W = H)."""
    if height is not None and height != size:
        raise GtpError(UNACCEPTABLE_SIZE, f"{size}x{height}: miai's boards are square (sizes {MIN_SIZE}..{MAX_SIZE})")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise GtpError(UNACCEPTABLE_SIZE, f"sizes {MIN_SIZE}..{MAX_SIZE}, square boards only")
    s.new_game(size=size)
    return ""


@table.command("rectangular_boardsize", named(UINT, "width"), optional(named(UINT, "height")), mutates=True)
def rectangular_boardsize(s: Session, width: int, height: int | None) -> str:
    """KataGo's name for ``boardsize W H``: square sizes only here (miai's rules core is square), a rectangle is
    refused with that reason."""
    return boardsize(s, width, height)


@table.command("clear_board", mutates=True)
def clear_board(s: Session) -> str:
    """Empty the board; size, komi and rules stay."""
    s.new_game()
    return ""


@table.command("komi", named(FLOAT, "komi"), mutates=True)
def komi(s: Session, value: float) -> str:
    """Set komi, keeping the game."""
    if abs(value) > 1000:
        raise GtpSyntaxError(f"komi {value} out of range")
    s.state.komi = value
    return ""


@table.command("get_komi")
def get_komi(s: Session) -> str:
    """The komi in force (KataGo's extension), as ``komi`` takes it."""
    return f"{s.state.komi:g}"


@table.command("play", COLOR, VERTEX, mutates=True)
def play(s: Session, color: Color, move: int) -> str:
    """Play a move for either colour (the same colour twice in a row is allowed, as handicap needs)."""
    try:
        s.state.push(move, color)
    except IllegalMoveError as error:
        raise GtpError(ILLEGAL_MOVE, f"{to_gtp(move, s.state.size)}: {error.reason.name.lower()}") from error
    return ""


@table.command("set_position", many(named(STRING, "color_vertex")), mutates=True)
def set_position(s: Session, tokens: list[str]) -> str:
    """KataGo's ``set_position B D4 W Q16 ...``: an empty board with these stones and no history (size, komi and
    rules stay; Black to move). Nothing changes when a pair is bad or stones overlap or have no liberty."""
    size = s.state.size
    black, white = _stone_pairs(tokens, size)
    points = black + white
    twice = sorted({point for point in points if points.count(point) > 1})
    if twice:
        raise GtpError("illegal stone placements", "two stones on " + ", ".join(to_gtp(p, size) for p in twice))
    placed = GameState(size, s.state.rules, s.state.komi)
    try:
        placed.set_stones(black, white)
    except GoError as error:
        raise GtpError("illegal stone placements", "a chain would have no liberty") from error
    s.state = placed
    return ""


def _stone_pairs(tokens: list[str], size: int) -> tuple[list[int], list[int]]:
    """The black and the white points of ``COLOR VERTEX`` pairs.

    Raises:
        GtpSyntaxError: an odd number of tokens, or a colour or vertex (a pass too) that does not parse.
    """
    expected = f"expected COLOR VERTEX pairs, got '{' '.join(tokens)}'"
    if len(tokens) % 2:
        raise GtpSyntaxError(expected)
    stones: dict[Color, list[int]] = {Color.BLACK: [], Color.WHITE: []}
    for color_text, vertex_text in zip(tokens[::2], tokens[1::2]):
        try:
            color = parse_color(color_text)
        except ValueError as error:
            raise GtpSyntaxError(f"{expected}: invalid color '{color_text}'") from error
        try:
            point = parse_gtp(vertex_text, size)
        except ValueError as error:
            raise GtpSyntaxError(f"{expected}: invalid vertex '{vertex_text}'") from error
        if point == PASS:
            raise GtpSyntaxError(f"{expected}: a pass is not a stone")
        stones[color].append(point)
    return stones[Color.BLACK], stones[Color.WHITE]


@table.command("undo", mutates=True)
def undo(s: Session) -> str:
    """Take back the last move (setup and handicap stones cannot be undone)."""
    if not s.state.moves:
        raise GtpError(CANNOT_UNDO, "no move to undo")
    s.state.pop()
    return ""


@table.command("kgs-rules", named(STRING, "rules"), mutates=True)
def kgs_rules(s: Session, name: str) -> str:
    """kgsGtp's rules names: chinese, aga, japanese, new_zealand."""
    preset = KGS_RULES.get(name.lower())
    if preset is None:
        raise GtpError(f"unknown rules '{name}'", "expected one of " + ", ".join(KGS_RULES))
    s.rebuild(rules=Rules.preset(preset))
    return ""


@table.command("kata-set-rules", many(named(STRING, "rules")), mutates=True)
def kata_set_rules(s: Session, tokens: list[str]) -> str:
    """Every form KataGo accepts: a preset name or alias (tromp-taylor, chinese, aga-button, nz, ...), a JSON
    object of KataGo rule keys, or KataGo's compact string (koSIMPLEscoreAREA...). Komi stays."""
    if not tokens:
        raise GtpSyntaxError("expected a rules preset name or a JSON object")
    s.rebuild(rules=parse_rules(" ".join(tokens)))
    return ""


@table.command("kata-set-rule", named(STRING, "key"), named(STRING, "value"), mutates=True)
def kata_set_rule(s: Session, key: str, value: str) -> str:
    """Change one rule by its KataGo JSON key (ko, scoring, tax, suicide, hasButton, whiteHandicapBonus,
    friendlyPassOk); the other rules and komi stay."""
    try:
        rules = s.state.rules.updated(key, value)
    except ValueError as error:
        raise GtpError(f"invalid rule '{key} {value}'", str(error)) from error
    s.rebuild(rules=rules)
    return ""


@table.command("kata-get-rules")
def kata_get_rules(s: Session) -> str:
    """The current rules as KataGo's JSON object."""
    return json.dumps(s.state.rules.to_json(), sort_keys=True)


def parse_rules(text: str) -> Rules:
    """``Rules`` from any form ``kata-set-rules`` accepts (see ``Rules.parse``).

    Raises:
        GtpError: unknown preset or invalid JSON/rule values (quoted).
    """
    try:
        return Rules.parse(text)
    except (ValueError, KeyError, TypeError) as error:
        problem = "invalid" if text.lstrip().startswith("{") else "unknown"
        raise GtpError(f"{problem} rules '{text}'", str(error)) from error


@table.command("showboard")
def showboard(s: Session) -> str:
    """A text diagram starting on the line after ``=`` (as GNU Go does), X = Black, O = White."""
    return "\n" + board_diagram(s)


def board_diagram(s: Session) -> str:
    """The board with coordinates on all sides, the last move in parentheses, and the game's status below."""
    state = s.state
    size = state.size
    header = "   " + " ".join(to_gtp(x, size)[0] for x in range(size))
    stones = state.stones()
    last = state.moves[-1][1] if state.moves else PASS
    rows = [header]
    for y in range(size):
        points = range(y * size, (y + 1) * size)
        cells = "".join(
            _separator(point, last, first=(point == points[0])) + ".XO"[int(stones[point])] for point in points
        )
        closing = ")" if last == points[-1] else " "
        rows.append(f"{size - y:2d}{cells}{closing}{size - y}")
    rows.append(header)
    rows.append(
        f"Black (X) captured {state.captures(Color.BLACK)}, White (O) captured {state.captures(Color.WHITE)}; "
        f"komi {state.komi:g}; rules {state.rules.name}; {state.to_play.name.capitalize()} to play"
    )
    return "\n".join(rows)


def _separator(point: int, last: int, *, first: bool) -> str:
    """The character before a point: ``(`` before the last move, ``)`` after it, else a space."""
    if point == last:
        return "("
    if point - 1 == last and not first and last != PASS:
        return ")"
    return " "
