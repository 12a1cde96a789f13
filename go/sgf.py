"""SGF (FF[4]) reading and writing for Go games.

miai writes its own small parser rather than using a library: the grammar is tiny (trees of nodes of
``IDENT[value]...`` properties), the well-known Python libraries (sgfmill, the ``sgf`` package) are
either unmaintained or add a dependency for a few dozen lines, and an in-house parser lets every error
name the problem *and* the line and column, which is what a GTP ``loadsgf`` user needs to see.

- ``parse_collection(text)`` parses every game tree, variations included, into ``SgfTree`` objects.
- ``load_sgf(text)`` reads the first game's root and main line (the first variation at each branch)
  into an ``SgfGame``: size, komi, rules, handicap, setup stones, moves (passes as ``B[]`` or, on
  boards up to 19x19, ``B[tt]``), player to move, names, result, date and move comments.
- ``SgfGame.to_state(move_number)`` builds a ``GameState`` with GTP ``loadsgf`` semantics.
- ``write_sgf(state, result=...)`` and ``format_sgf(game)`` write a game back.

Every malformed input raises ``miai.go.errors.SgfError`` with a message naming the problem and where.

>>> game = load_sgf("(;GM[1]SZ[9]KM[7]RU[Chinese];B[ee];W[]C[pass])")
>>> game.size, game.komi, game.rules, game.moves, game.comments
(9, 7.0, 'Chinese', [(<Color.BLACK: 1>, 40), (<Color.WHITE: 2>, -1)], [None, 'pass'])
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from miai.go.coords import MAX_SIZE, MIN_SIZE, PASS, Color, parse_sgf, to_sgf
from miai.go.errors import GoError, InvalidMoveError, SgfError

if TYPE_CHECKING:
    from miai.go.state import GameState


# ---------------------------------------------------------------------------------------------
# Syntax: text -> trees of nodes
# ---------------------------------------------------------------------------------------------


@dataclass
class SgfProperty:
    """One property: identifier, its values (escapes resolved) and the offset of its first value."""

    ident: str
    values: list[str]
    offset: int


@dataclass
class SgfNode:
    """One node: its properties in file order (an identifier appears at most once)."""

    properties: dict[str, SgfProperty] = field(default_factory=dict)
    offset: int = 0

    def get(self, ident: str) -> str | None:
        """The first value of a property, or None when absent."""
        prop = self.properties.get(ident)
        return prop.values[0] if prop else None


@dataclass
class SgfTree:
    """A game tree: a sequence of nodes followed by its variations (the first is the main line)."""

    nodes: list[SgfNode]
    variations: list[SgfTree]

    def main_line(self) -> list[SgfNode]:
        """The nodes of the main line: this sequence, then the first variation's, recursively."""
        nodes = list(self.nodes)
        tree = self
        while tree.variations:
            tree = tree.variations[0]
            nodes.extend(tree.nodes)
        return nodes


def _where(text: str, offset: int) -> str:
    """Human position of a character offset: ``line L, column C``."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


class _Parser:
    """Recursive-descent parser over the SGF grammar (Collection = GameTree+)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, problem: str, offset: int | None = None) -> SgfError:
        where = _where(self.text, self.pos if offset is None else offset)
        return SgfError(f"malformed SGF: {problem} at {where}")

    def skip_space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and (text[pos].isspace() or text[pos] == "\ufeff"):
            pos += 1
        self.pos = pos

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def collection(self) -> list[SgfTree]:
        trees = []
        while self.peek() == "(":
            trees.append(self.game_tree())
        if self.peek():
            raise self.error(f"unexpected {self.peek()!r} (expected '(')")
        if not trees:
            raise self.error("no game tree (the file must start with '(;')")
        return trees

    def game_tree(self) -> SgfTree:
        start = self.pos
        self.pos += 1  # the '('
        if self.peek() != ";":
            raise self.error("a game tree must start with a node ';'")
        nodes = []
        while self.peek() == ";":
            nodes.append(self.node())
        variations = []
        while self.peek() == "(":
            variations.append(self.game_tree())
        if self.peek() != ")":
            found = repr(self.peek()) if self.peek() else "end of file"
            raise self.error(f"unexpected {found} in the game tree opened at {_where(self.text, start)}")
        self.pos += 1
        return SgfTree(nodes, variations)

    def node(self) -> SgfNode:
        node = SgfNode(offset=self.pos)
        self.pos += 1  # the ';'
        while self.peek().isalpha():
            prop = self.prop()
            if prop.ident in node.properties:
                raise self.error(f"property {prop.ident} repeated in one node", prop.offset)
            node.properties[prop.ident] = prop
        return node

    def prop(self) -> SgfProperty:
        start = self.pos
        text = self.text
        while self.pos < len(text) and text[self.pos].isalpha():
            self.pos += 1
        # FF[3] allowed lower-case letters inside identifiers (e.g. "AddBlack" for AB); they carry no meaning.
        ident = "".join(c for c in text[start : self.pos] if c.isupper())
        if not ident:
            raise self.error(f"property identifier {text[start:self.pos]!r} has no upper-case letter", start)
        if self.peek() != "[":
            raise self.error(f"property {ident} has no value", start)
        values = []
        offset = self.pos
        while self.peek() == "[":
            values.append(self.value())
        return SgfProperty(ident, values, offset)

    def value(self) -> str:
        start = self.pos
        self.pos += 1  # the '['
        text = self.text
        out = []
        while True:
            # Copy plain runs in one slice: only ']' and '\\' need attention.
            match = _VALUE_SPECIAL.search(text, self.pos)
            if match is None:
                raise self.error("unterminated property value (missing ']')", start)
            out.append(text[self.pos : match.start()])
            self.pos = match.start() + 1
            if match.group() == "]":
                return "".join(out)
            if self.pos >= len(text):
                raise self.error("unterminated property value (missing ']')", start)
            escaped = text[self.pos]
            if escaped == "\r" and text.startswith("\r\n", self.pos):
                self.pos += 1  # soft line break: backslash + CRLF vanishes
            elif escaped not in "\r\n":
                out.append(escaped)
            self.pos += 1


_VALUE_SPECIAL = re.compile(r"[\]\\]")


def parse_collection(text: str) -> list[SgfTree]:
    """Parse SGF text into its game trees (variations kept).

    Raises:
        SgfError: for malformed text, naming the problem and its line and column.
    """
    return _Parser(text).collection()


# ---------------------------------------------------------------------------------------------
# Semantics: the main line as a Go game
# ---------------------------------------------------------------------------------------------


@dataclass
class SgfGame:
    """A Go game read from (or to be written to) SGF. Points are flat moves, passes ``PASS``."""

    size: int = 19
    komi: float | None = None
    rules: str | None = None  # RU as written, e.g. "Japanese", "Chinese", "tromp-taylor"
    handicap: int = 0
    setup_black: list[int] = field(default_factory=list)
    setup_white: list[int] = field(default_factory=list)
    moves: list[tuple[Color, int]] = field(default_factory=list)
    comments: list[str | None] = field(default_factory=list)  # one per move
    player_to_move: Color | None = None  # PL of the root
    black_player: str | None = None
    white_player: str | None = None
    result: str | None = None
    date: str | None = None
    root_comment: str | None = None
    later_setup: list[int] = field(default_factory=list)  # move counts at which AB/AW/AE appear mid-game

    def to_state(self, move_number: int | None = None, rules: Any = None) -> GameState:
        """The position before move ``move_number`` (1-based; None = after the last move), as GTP
        ``loadsgf`` does.

        ``rules`` overrides RU (a ``Rules`` or a preset name); an RU that names no known preset falls
        back to ``GameState``'s default rules.

        Raises:
            SgfError: when a move is illegal under the rules, or setup stones appear mid-game before it.
        """
        from miai.go.rules import Rules
        from miai.go.state import GameState

        chosen = self._rules(rules, Rules)
        state = GameState(size=self.size, rules=chosen, komi=self._komi(chosen, Rules))
        self._apply_setup(state)
        count = len(self.moves) if move_number is None else max(0, min(move_number - 1, len(self.moves)))
        if any(index < count for index in self.later_setup):
            raise SgfError(f"setup stones (AB/AW/AE) after move {min(self.later_setup)} are not supported")
        # Who moves first: the first move's colour, else PL (e.g. White after setup stones).
        first = self.moves[0][0] if self.moves else self.player_to_move
        if first is not None and first != state.to_play:
            state.set_to_play(first)
        for number, (color, move) in enumerate(self.moves[:count], start=1):
            try:
                state.push(move, color)
            except GoError as exc:
                raise SgfError(f"illegal SGF move {number} ({color.name} {to_sgf(move, self.size)!r}): {exc}") from exc
        return state

    def player_before(self, move_number: int | None = None) -> Color:
        """Who is to move in the position ``to_state(move_number)`` according to the record: the colour of
        move ``move_number`` when it exists (GNU Go's ``loadsgf`` answer), else the player after the last
        move, else PL, else White after handicap stones and Black otherwise."""
        count = len(self.moves) if move_number is None else max(0, min(move_number - 1, len(self.moves)))
        if count < len(self.moves):
            return self.moves[count][0]
        if self.moves:
            return self.moves[-1][0].opponent
        if self.player_to_move is not None:
            return self.player_to_move
        return Color.WHITE if self.handicap >= 2 and self.setup_black and not self.setup_white else Color.BLACK

    def _rules(self, rules: Any, rules_cls: Any) -> Any:
        if rules is not None:
            return rules_cls.preset(rules) if isinstance(rules, str) else rules
        if self.rules:
            parsed = parse_rules_text(self.rules)
            if parsed is not None:
                return parsed
        return rules_cls.preset("tromp-taylor")

    def _komi(self, rules: Any, rules_cls: Any) -> float:
        """KM when given, else the preset's default komi (7.5 for custom rules)."""
        if self.komi is not None:
            return self.komi
        try:
            return float(rules_cls.default_komi(rules.name))
        except ValueError:
            return 7.5

    def _apply_setup(self, state: GameState) -> None:
        if not self.setup_black and not self.setup_white:
            return
        try:
            if self.handicap >= 2 and not self.setup_white and len(self.setup_black) == self.handicap:
                state.set_handicap(list(self.setup_black))
            else:
                state.set_stones(list(self.setup_black), list(self.setup_white))
        except GoError as exc:
            raise SgfError(f"invalid SGF setup stones: {exc}") from exc


# RU spellings seen in the wild that are not miai preset names.
_RU_ALIASES = {"jp": "japanese", "cn": "chinese", "kr": "korean", "nz": "new-zealand", "ogs": "chinese-ogs"}

def parse_rules_text(text: str) -> Any:
    """The ``Rules`` an RU value names: a preset name (or a common alias such as ``NZ``), or KataGo's compact
    ``ko..score..tax..sui..`` string (KataGo writes rules that match no preset that way); None when it names
    neither."""
    from miai.go.rules import Rules

    key = text.strip()
    try:
        return Rules.preset(_RU_ALIASES.get(key.lower(), key))
    except ValueError:
        pass
    try:
        return Rules.from_compact(key, allow_komi=True)
    except ValueError:
        return None


def rules_text(rules: Any) -> str:
    """RU text for ``rules``: its preset name, or KataGo's string for rules that match no preset."""
    from miai.go.rules import Rules

    if rules.name != "custom" and Rules.preset(rules.name) == rules:
        return str(rules.name)
    preset = rules.matching_preset()
    if preset is not None:
        return str(preset)
    text = f"ko{rules.ko.name}score{rules.scoring.name}tax{rules.tax.name}sui{int(rules.multi_stone_suicide)}"
    if rules.has_button:
        text += "button1"
    if rules.white_handicap_bonus != "0":
        text += f"whb{rules.white_handicap_bonus}"
    if rules.friendly_pass_ok:
        text += "fpok1"
    return text


def _value_error(node: SgfNode, ident: str, problem: str, text: str) -> SgfError:
    where = _where(text, node.properties[ident].offset)
    return SgfError(f"malformed SGF: {ident} {problem} at {where}")


def _points(node: SgfNode, ident: str, size: int, text: str) -> list[int]:
    """The points of a point-list property, compressed rectangles ``aa:cc`` expanded."""
    points: list[int] = []
    for value in node.properties[ident].values:
        try:
            if ":" in value:
                first, last = (parse_sgf(part, size) for part in value.split(":", 1))
                if first == PASS or last == PASS:
                    raise InvalidMoveError(f"pass in a rectangle: {value!r}")
                (y0, x0), (y1, x1) = divmod(first, size), divmod(last, size)
                points.extend(y * size + x for y in range(min(y0, y1), max(y0, y1) + 1)
                              for x in range(min(x0, x1), max(x0, x1) + 1))
            else:
                point = parse_sgf(value, size)
                if point == PASS:
                    raise InvalidMoveError(f"empty point {value!r}")
                points.append(point)
        except InvalidMoveError as exc:
            raise _value_error(node, ident, f"has a bad point ({exc})", text) from None
    return points


def _number(node: SgfNode, ident: str, text: str, kind: type) -> Any:
    value = node.get(ident)
    assert value is not None
    try:
        return kind(value.strip())
    except ValueError:
        raise _value_error(node, ident, f"is not a number: {value!r}", text) from None


def _read_size(root: SgfNode, text: str) -> int:
    if "SZ" not in root.properties:
        return 19
    value = (root.get("SZ") or "").strip()
    if ":" in value:
        width, _, height = value.partition(":")
        if width.strip() != height.strip():
            raise _value_error(root, "SZ", f"is rectangular ({value}); only square boards are supported", text)
        value = width
    try:
        size = int(value)
    except ValueError:
        raise _value_error(root, "SZ", f"is not a number: {value!r}", text) from None
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise _value_error(root, "SZ", f"{size} is outside {MIN_SIZE}..{MAX_SIZE}", text)
    return size


def _read_root(game: SgfGame, root: SgfNode, text: str) -> None:
    """Fill the game-info fields from the root node."""
    game_type = root.get("GM")
    if game_type is not None and game_type.strip() not in ("1", ""):
        raise _value_error(root, "GM", f"is {game_type!r}, not 1 (Go)", text)
    if "KM" in root.properties:
        game.komi = _number(root, "KM", text, float)
    if "HA" in root.properties:
        game.handicap = _number(root, "HA", text, int)
    if "PL" in root.properties:
        game.player_to_move = _player(root, "PL", text)
    game.rules = root.get("RU")
    game.black_player = root.get("PB")
    game.white_player = root.get("PW")
    game.result = root.get("RE")
    game.date = root.get("DT")


def _player(node: SgfNode, ident: str, text: str) -> Color:
    value = (node.get(ident) or "").strip().upper()
    if value in ("B", "1"):
        return Color.BLACK
    if value in ("W", "2"):
        return Color.WHITE
    raise _value_error(node, ident, f"is not B or W: {value!r}", text)


def _read_setup(game: SgfGame, node: SgfNode, text: str, before_moves: bool) -> None:
    """Apply AB/AW/AE of one node; setup after the first move is only recorded."""
    if not any(ident in node.properties for ident in ("AB", "AW", "AE")):
        return
    if not before_moves:
        game.later_setup.append(len(game.moves))
        return
    board: dict[int, Color] = {p: Color.BLACK for p in game.setup_black} | {p: Color.WHITE for p in game.setup_white}
    for ident, color in (("AE", Color.EMPTY), ("AB", Color.BLACK), ("AW", Color.WHITE)):
        if ident in node.properties:
            for point in _points(node, ident, game.size, text):
                board[point] = color
    game.setup_black = sorted(p for p, c in board.items() if c == Color.BLACK)
    game.setup_white = sorted(p for p, c in board.items() if c == Color.WHITE)


def _read_move(game: SgfGame, node: SgfNode, text: str) -> None:
    """Append the node's B or W move (with its comment) to the game."""
    has_black, has_white = "B" in node.properties, "W" in node.properties
    if has_black and has_white:
        raise SgfError(f"malformed SGF: a node has both B and W moves at {_where(text, node.offset)}")
    if not (has_black or has_white):
        return
    ident = "B" if has_black else "W"
    try:
        move = parse_sgf(node.get(ident) or "", game.size)
    except InvalidMoveError as exc:
        raise _value_error(node, ident, f"is not a move ({exc})", text) from None
    game.moves.append((Color.BLACK if has_black else Color.WHITE, move))
    game.comments.append(node.get("C"))


def load_sgf(text: str) -> SgfGame:
    """Read the first game of an SGF collection (its main line) into an ``SgfGame``.

    Raises:
        SgfError: for malformed SGF (syntax or values), naming the problem and its position.
    """
    trees = parse_collection(text)
    nodes = trees[0].main_line()
    root = nodes[0]
    game = SgfGame(size=_read_size(root, text))
    _read_root(game, root, text)
    game.root_comment = root.get("C") if not ("B" in root.properties or "W" in root.properties) else None
    for node in nodes:
        _read_setup(game, node, text, before_moves=not game.moves)
        _read_move(game, node, text)
    return game


_CHARSET = re.compile(rb"CA\s*\[([^\]]*)\]")


def decode_sgf(data: bytes) -> str:
    """Text of an SGF file: a UTF-8 byte-order mark wins, then the CA[] charset, then UTF-8, then Latin-1
    (which never fails, so old files in unknown 8-bit encodings still load)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    match = _CHARSET.search(data)
    candidates = [match.group(1).decode("ascii", errors="ignore").strip()] if match else []
    for encoding in [*candidates, "utf-8"]:
        try:
            return data.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return data.decode("latin-1")


def read_sgf_file(path: str | os.PathLike[str]) -> SgfGame:
    """``load_sgf`` of a file (see ``decode_sgf`` for the encoding).

    Raises:
        SgfError: when the file cannot be read or is malformed (the message names the file).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SgfError(f"cannot read SGF file {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        return load_sgf(decode_sgf(data))
    except SgfError as exc:
        raise SgfError(f"{path}: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def _escape(value: str) -> str:
    """Escape a text value: backslash and closing bracket get a backslash."""
    return value.replace("\\", "\\\\").replace("]", "\\]")


def _prop(ident: str, values: Sequence[str]) -> str:
    return ident + "".join(f"[{_escape(v)}]" for v in values)


def _format_komi(komi: float) -> str:
    return str(int(komi)) if float(komi).is_integer() else repr(float(komi))


def format_sgf(game: SgfGame, program: str = "miai") -> str:
    """Write an ``SgfGame`` as FF[4] SGF text (one line per node after the root)."""
    root = [_prop("FF", ["4"]), _prop("GM", ["1"]), _prop("CA", ["UTF-8"]), _prop("AP", [program]),
            _prop("SZ", [str(game.size)])]
    if game.komi is not None:
        root.append(_prop("KM", [_format_komi(game.komi)]))
    optional = (("RU", game.rules), ("PB", game.black_player), ("PW", game.white_player),
                ("DT", game.date), ("RE", game.result), ("C", game.root_comment))
    if game.handicap:
        root.append(_prop("HA", [str(game.handicap)]))
    root.extend(_prop(ident, [value]) for ident, value in optional if value is not None)
    for ident, points in (("AB", game.setup_black), ("AW", game.setup_white)):
        if points:
            root.append(_prop(ident, [to_sgf(p, game.size) for p in points]))
    if game.player_to_move is not None:
        root.append(_prop("PL", ["B" if game.player_to_move == Color.BLACK else "W"]))
    lines = ["(;" + "".join(root)]
    for index, (color, move) in enumerate(game.moves):
        node = ";" + _prop("B" if color == Color.BLACK else "W", [to_sgf(move, game.size)])
        comment = game.comments[index] if index < len(game.comments) else None
        if comment is not None:
            node += _prop("C", [comment])
        lines.append(node)
    return "\n".join(lines) + ")\n"


def game_from_state(
    state: GameState,
    result: str | None = None,
    *,
    comments: Sequence[str | None] | None = None,
    black_player: str | None = None,
    white_player: str | None = None,
    date: str | None = None,
) -> SgfGame:
    """The ``SgfGame`` of a ``GameState``: setup from its earliest board, then its moves."""
    moves = [(Color(color), move) for color, move in state.moves]
    initial = state.board_history(len(moves))
    first_player = moves[0][0] if moves else Color(state.to_play)
    return SgfGame(
        size=state.size,
        komi=float(state.komi),
        rules=rules_text(state.rules),
        handicap=int(state.handicap),
        setup_black=[int(p) for p, c in enumerate(initial) if c == Color.BLACK],
        setup_white=[int(p) for p, c in enumerate(initial) if c == Color.WHITE],
        moves=moves,
        comments=list(comments) if comments is not None else [None] * len(moves),
        # PL only when White starts (handicap or setup), as most programs expect.
        player_to_move=first_player if first_player == Color.WHITE else None,
        black_player=black_player,
        white_player=white_player,
        result=result,
        date=date,
    )


def write_sgf(
    state: GameState,
    result: str | None = None,
    *,
    comments: Sequence[str | None] | None = None,
    black_player: str | None = None,
    white_player: str | None = None,
    date: str | None = None,
    program: str = "miai",
) -> str:
    """SGF text of a game: SZ, KM, RU (preset name), HA, AB/AW setup, PL, RE, then every move
    with an optional comment per move (``comments[i]`` belongs to move ``i``)."""
    game = game_from_state(state, result, comments=comments, black_player=black_player,
                           white_player=white_player, date=date)
    return format_sgf(game, program=program)
