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
- ``write_sgf(state, result=...)`` and ``format_sgf(game)`` write a game back, always as strict FF[4].

Reading is liberal, as the FF[4] specification advises and as GNU Go reads: the quirks of files written by
older programs and servers are repaired, and each repair is reported as an ``SgfWarning`` in
``SgfGame.warnings`` (file, line, column and what was done) for the caller to show:

- a property repeated in one node is one property: AB/AW/AE points and C texts are joined, B and W moves are
  all played, and of any other property the first value counts;
- B and W in one node are both played, in file order;
- a root property repeated in a later node (SZ, KM, ...) is ignored: the first counts, as in GNU Go;
- text after the first game tree is ignored;
- FF[1-3] long names with lower-case letters (``AddBlack``) are read by their capitals (``AB``);
- a root without GM or FF is read as an FF[4] game of Go;
- ``B[tt]`` is a pass on boards up to 19x19 (FF[3]'s pass; FF[4] writes ``B[]``);
- AB/AW/AE after moves are applied where they stand (``later_setup``), a PL after the last move says who plays
  (``player_after_moves``), a missing final ``)`` is added, and a move that only superko forbids is played when
  the position is set up (``to_state`` warns then): as GNU Go 3.8 loads such records.

What cannot be understood raises ``miai.go.errors.SgfError`` with a message naming the problem and where.

>>> game = load_sgf("(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese];B[ee];W[]C[pass])")
>>> game.size, game.komi, game.rules, game.moves, game.comments, game.warnings
(9, 7.0, 'Chinese', [(<Color.BLACK: 1>, 40), (<Color.WHITE: 2>, -1)], [None, 'pass'], [])
>>> [str(w) for w in load_sgf("(;GM[1]FF[4]SZ[9]AB[cc]AB[gg];W[ee])", source="old.sgf").warnings]
['old.sgf: line 1, column 24: AB repeated in one node: the points are joined']
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from miai.go.coords import MAX_SIZE, MIN_SIZE, PASS, Color, parse_sgf, to_gtp, to_sgf
from miai.go.errors import GoError, IllegalMoveError, IllegalReason, InvalidMoveError, SgfError

if TYPE_CHECKING:
    from miai.go.state import GameState


# ---------------------------------------------------------------------------------------------
# Syntax: text -> trees of nodes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SgfWarning:
    """One repair the reader made to read a file as it is: where (1-based line and column; 0 for a game not read
    from text), what it did, and the file when the caller named it. ``str()`` gives the line to show: ``old.sgf: line 3, column 9: ...``."""

    line: int
    column: int
    message: str
    source: str | None = None

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}: {self.message}" if self.line else self.message
        return f"{self.source}: {where}" if self.source else where


@dataclass(slots=True)
class SgfProperty:
    """One property: identifier, its values (escapes resolved) and the offset of its first value.

    A property repeated in one node is kept as one: the values of the repeats are appended to ``values`` and
    the offsets of their identifiers listed in ``repeats`` (the reader warns about them). ``start`` is the offset
    of the identifier as written, ``name`` the identifier as written (``AddBlack`` for ``AB`` in FF[1-3] files).
    """

    ident: str
    values: list[str]
    offset: int
    start: int = 0
    name: str = ""
    repeats: list[int] = field(default_factory=list)


@dataclass(slots=True)
class SgfNode:
    """One node: its properties by identifier (repeats merged, see ``SgfProperty``), and its B and W properties
    as written, in file order (``moves``), since a node may hold several."""

    properties: dict[str, SgfProperty] = field(default_factory=dict)
    offset: int = 0
    moves: list[SgfProperty] = field(default_factory=list)

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


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _where(text: str, offset: int) -> str:
    """Human position of a character offset: ``line L, column C``."""
    line, column = _line_column(text, offset)
    return f"line {line}, column {column}"


def _malformed(text: str, problem: str, offset: int) -> SgfError:
    """The error for text that cannot be understood: the problem and where."""
    line, column = _line_column(text, offset)
    return SgfError(f"malformed SGF: {problem} at line {line}, column {column}", problem=problem, line=line,
                    column=column)


class _Warner:
    """Collects the repairs made while reading one text, each with its position."""

    def __init__(self, text: str, warnings: list[SgfWarning], source: str | None) -> None:
        self.text = text
        self.warnings = warnings
        self.source = source

    def __call__(self, message: str, offset: int) -> None:
        line, column = _line_column(self.text, offset)
        self.warnings.append(SgfWarning(line, column, message, self.source))


class _Parser:
    """Recursive-descent parser over the SGF grammar (Collection = GameTree+)."""

    def __init__(self, text: str, warn: _Warner) -> None:
        self.text = text
        self.pos = 0
        self.warn = warn
        self.unclosed: list[int] = []  # where the trees closed at the end of the file were opened, innermost first

    def error(self, problem: str, offset: int | None = None) -> SgfError:
        return _malformed(self.text, problem, self.pos if offset is None else offset)

    def skip_space(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        self.pos = match.end()

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def collection(self) -> list[SgfTree]:
        if self.peek() != "(":
            if self.peek():
                raise self.error(f"unexpected {self.peek()!r} (expected '(')")
            raise self.error("no game tree (the file must start with '(;')")
        trees = [self.game_tree()]
        while self.peek() == "(":
            start = self.pos
            try:
                trees.append(self.game_tree())
            except SgfError as exc:  # only the first game is played: a broken later one must not refuse the file
                self.warn(f"the game tree here is ignored: it cannot be read ({exc.problem} at line {exc.line}, "
                          f"column {exc.column})", start)
                return trees
        if self.unclosed:  # one warning for all the trees the end of the file left open
            count, outer = len(self.unclosed), _where(self.text, self.unclosed[-1])
            trees_left = "the game tree" if count == 1 else f"{count} game trees (the first"
            opened = f"opened at {outer}" + ("" if count == 1 else ")")
            added = "the missing ')' is added" if count == 1 else f"the {count} missing ')' are added"
            self.warn(f"the file ends before {trees_left} {opened} {'is' if count == 1 else 'are'} closed: {added}",
                      self.pos)
        if self.peek():
            rest = self.text[self.pos :].split("\n", 1)[0].strip()
            excerpt = rest if len(rest) <= 20 else rest[:20] + "..."
            self.warn(f"text after the game tree is ignored ({excerpt!r})", self.pos)
        return trees

    def game_tree(self) -> SgfTree:
        start = self.pos
        self.pos += 1  # the '('
        if self.peek() != ";":
            raise self.error("a game tree must start with a node ';'")
        nodes = []
        text = self.text
        move_node = _MOVE_NODE.match
        while self.peek() == ";":
            # Fast path for runs of the commonest node, one move and nothing else (a training data reader goes
            # through millions): ';' B or W, one value without escapes, then the next node or the end of a tree.
            match = move_node(text, self.pos)
            if match is None:
                nodes.append(self.node())
                continue
            while match is not None:
                ident, value = match.group(1, 2)
                prop = SgfProperty(ident, [value], match.start(2) - 1, match.start(1), ident)
                nodes.append(SgfNode({ident: prop}, match.start(), [prop]))
                self.pos = match.end()
                match = move_node(text, self.pos)
        variations = []
        while self.peek() == "(":
            variations.append(self.game_tree())
        if not self.peek():  # the file ends after a whole node: only the closing ')' is missing, as GNU Go reads it
            self.unclosed.append(start)
            return SgfTree(nodes, variations)
        if self.peek() != ")":
            raise self.error(f"unexpected {self.peek()!r} in the game tree opened at {_where(self.text, start)}")
        self.pos += 1
        return SgfTree(nodes, variations)

    def node(self) -> SgfNode:
        node = SgfNode(offset=self.pos)
        self.pos += 1  # the ';'
        text = self.text
        while True:
            self.skip_space()
            # Fast path for the common property (upper-case identifier, values without escapes): training data
            # readers go through tens of millions of them.
            match = _PLAIN_PROPERTY.match(text, self.pos)
            if match is not None and match.group(1).isupper():
                ident = match.group(1)
                prop = SgfProperty(ident, _PLAIN_VALUE.findall(match.group(2)), match.start(2), self.pos, ident)
                self.pos = match.end()
            elif self.pos < len(text) and text[self.pos].isalpha():
                prop = self.prop()
            else:
                return node
            if prop.ident in ("B", "W"):
                node.moves.append(prop)
            known = node.properties.get(prop.ident)
            if known is None:
                node.properties[prop.ident] = prop
            else:  # one property for both (new: ``moves`` keeps each); the reader says what the repeat means
                node.properties[prop.ident] = SgfProperty(known.ident, known.values + prop.values, known.offset,
                                                          known.start, known.name, [*known.repeats, prop.start])

    def prop(self) -> SgfProperty:
        start = self.pos
        text = self.text
        while self.pos < len(text) and text[self.pos].isalpha():
            self.pos += 1
        name = text[start : self.pos]
        # FF[1-3] allowed lower-case letters inside identifiers (e.g. "AddBlack" for AB); FF[4] says to read them
        # by their capitals.
        ident = "".join(c for c in name if c.isupper())
        if not ident:
            raise self.error(f"property identifier {name!r} has no upper-case letter", start)
        if ident != name:
            self.warn(f"property name {name} read as {ident} (an FF[1-3] long name)", start)
        if self.peek() != "[":
            raise self.error(f"property {ident} has no value", start)
        values = []
        offset = self.pos
        while self.peek() == "[":
            values.append(self.value())
        return SgfProperty(ident, values, offset, start, name)

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
_SPACE = re.compile(r"[\s\ufeff]*")
_MOVE_NODE = re.compile(r";\s*([BW])\s*\[([^\]\\]*)\]\s*(?=[;()])")
# An identifier and its values when none holds an escape (else the general path reads them); the lookahead makes
# a value with an escape after plain ones fail the whole match.
_PLAIN_PROPERTY = re.compile(r"([A-Za-z]+)\s*((?:\[[^\]\\]*\]\s*)+)(?!\[)")
_PLAIN_VALUE = re.compile(r"\[([^\]\\]*)\]")


def parse_collection(text: str, warnings: list[SgfWarning] | None = None, source: str | None = None) -> list[SgfTree]:
    """Parse SGF text into its game trees (variations kept).

    The syntax repairs (long property names, text or an unreadable game after the first game tree) are appended
    to ``warnings`` when it is given; repeated properties are merged into one ``SgfProperty`` (see there).

    Raises:
        SgfError: for malformed text, naming the problem and its line and column.
    """
    return _Parser(text, _Warner(text, [] if warnings is None else warnings, source)).collection()


# ---------------------------------------------------------------------------------------------
# Semantics: the main line as a Go game
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaterSetup:
    """AB, AW or AE in a node after the first move: the points it sets (``Color.EMPTY`` for AE), in the order they
    are applied, after ``after`` moves of the main line."""

    after: int
    points: tuple[tuple[int, Color], ...]


@dataclass(frozen=True)
class _Origin:
    """The text a game was read from, the file's name, and the offset of each move's property: the warnings found
    only when the moves are played (``SgfGame.to_state``) name where the move is, as the reader's do."""

    text: str
    source: str | None
    move_offsets: list[int]

    def warning(self, move_index: int, message: str) -> SgfWarning:
        line, column = _line_column(self.text, self.move_offsets[move_index])
        return SgfWarning(line, column, message, self.source)


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
    later_setup: list[LaterSetup] = field(default_factory=list)  # AB/AW/AE after moves, in file order
    player_after_moves: Color | None = None  # a PL after the last move: who plays then (GNU Go and Sabaki honour it)
    # The repairs made to read the record (load_sgf, and to_state for what shows only when the moves are played);
    # not part of the game, so not compared.
    warnings: list[SgfWarning] = field(default_factory=list, compare=False)
    origin: _Origin | None = field(default=None, repr=False, compare=False)

    def to_state(self, move_number: int | None = None, rules: Any = None) -> GameState:
        """The position before move ``move_number`` (1-based; None = after the last move), as GTP
        ``loadsgf`` does (and as GNU Go 3.8 loads it), with ``player_before(move_number)`` to move.

        ``rules`` overrides RU (a ``Rules`` or a preset name); an RU that names no known preset falls
        back to ``GameState``'s default rules.

        Setup after moves (``later_setup``) is applied where it stands; the position after it starts the state's
        history, as GNU Go's setup does (earlier moves cannot be undone). A move that only superko forbids is
        played all the same, with a warning added to ``warnings`` naming the rule: the record's game was played
        without superko (GNU Go's default), and it is what happened.

        Raises:
            SgfError: when a move is illegal under the rules (other than by superko), or setup is impossible.
        """
        from miai.go.rules import Rules
        from miai.go.state import GameState

        chosen = self._rules(rules, Rules)
        state = GameState(size=self.size, rules=chosen, komi=self._komi(chosen, Rules))
        self._apply_setup(state)
        count = len(self.moves) if move_number is None else max(0, min(move_number - 1, len(self.moves)))
        # Who moves first: the first move's colour, else PL (e.g. White after setup stones).
        first = self.moves[0][0] if self.moves else self.player_to_move
        if first is not None and first != state.to_play:
            state.set_to_play(first)
        later = [setup for setup in self.later_setup if setup.after <= count]
        for index, (color, move) in enumerate(self.moves[:count]):
            while later and later[0].after == index:
                state = _set_up_after_moves(state, later.pop(0))
            self._replay(state, index, color, move)
        for setup in later:
            state = _set_up_after_moves(state, setup)
        player = self.player_before(move_number)
        if self.moves and player != state.to_play:  # PL after the last move, or one colour twice in a row
            state.give_turn(player)
        return state

    def _replay(self, state: GameState, index: int, color: Color, move: int) -> None:
        """Play move ``index`` (0-based) of the record; one that only superko forbids is played with a warning."""
        try:
            state.push(move, color)
            return
        except IllegalMoveError as exc:
            if exc.reason is not IllegalReason.SUPERKO:
                raise self._illegal(index, color, move, exc) from exc
        except GoError as exc:
            raise self._illegal(index, color, move, exc) from exc
        state.push(move, color, superko=False)
        rules = state.rules
        message = (f"move {index + 1} ({color.name.capitalize()} {to_gtp(move, self.size)}) repeats an earlier "
                   f"position, which {rules.ko.name.lower()} superko forbids under the {rules_text(rules)} rules: "
                   "played all the same (the game was played without superko)")
        warning = self.origin.warning(index, message) if self.origin is not None else SgfWarning(0, 0, message)
        if warning not in self.warnings:  # once, however often the position is set up
            self.warnings.append(warning)
            self.warnings.sort(key=lambda w: (w.line, w.column))

    def _illegal(self, index: int, color: Color, move: int, exc: GoError) -> SgfError:
        return SgfError(f"illegal SGF move {index + 1} ({color.name} {to_sgf(move, self.size)!r}): {exc}")

    def player_before(self, move_number: int | None = None) -> Color:
        """Who is to move in the position ``to_state(move_number)`` according to the record: the colour of
        move ``move_number`` when it exists (GNU Go's ``loadsgf`` answer), else a PL after the last move, else the
        player after the last move, else PL, else White after handicap stones and Black otherwise."""
        count = len(self.moves) if move_number is None else max(0, min(move_number - 1, len(self.moves)))
        if count < len(self.moves):
            return self.moves[count][0]
        if self.moves and self.player_after_moves is not None:
            return self.player_after_moves
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


def _set_up_after_moves(state: GameState, setup: LaterSetup) -> GameState:
    """The position after setup placed after moves: the stones with the setup's points set, as the start of a
    fresh history (as GNU Go's setup clears its move history), with the same player to move.

    Raises:
        SgfError: when the setup leaves a chain without liberties.
    """
    from miai.go.state import GameState

    colors = state.stones().tolist()
    for point, color in setup.points:
        colors[point] = int(color)
    fresh = GameState(state.size, state.rules, state.komi, state.rep_bound)
    fresh.handicap = state.handicap
    try:
        fresh.set_stones([p for p, c in enumerate(colors) if c == Color.BLACK],
                         [p for p, c in enumerate(colors) if c == Color.WHITE])
    except GoError as exc:
        raise SgfError(f"invalid SGF setup stones after move {setup.after}: {exc}") from exc
    fresh.set_to_play(state.to_play)
    return fresh


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


def _value_error(text: str, prop: SgfProperty, problem: str) -> SgfError:
    return _malformed(text, f"{prop.ident} {problem}", prop.offset)


# Root properties (FF[4]: only in the root) and game-info properties that miai reads: of either, the first
# occurrence counts, in one node as across nodes, as GNU Go reads them (it takes the first of a node's list and
# the root's game info): it is what the program that wrote the game started with, where a repeat is most often
# a header written again after an adjournment or by a merge of files.
_ROOT_ONLY = ("FF", "GM", "SZ", "CA", "AP", "ST")
_GAME_INFO = ("KM", "HA", "RU", "PB", "PW", "RE", "DT")
_FIRST_COUNTS = frozenset((*_ROOT_ONLY, *_GAME_INFO, "PL"))
# The setup properties, in the order a node's are applied (FF[4] forbids one point in two of them in one node).
_SETUP = (("AE", Color.EMPTY), ("AB", Color.BLACK), ("AW", Color.WHITE))
# Properties whose repeats in one node are joined (other properties miai does not read are joined too).
_JOINED = {"AB": "points", "AW": "points", "AE": "points", "C": "texts"}


@functools.cache
def _sgf_moves(size: int) -> dict[str, int]:
    """Every SGF point of a board and the pass as miai writes them, to their moves (``parse_sgf`` without its
    checks, for the points that need none)."""
    return {to_sgf(p, size): p for p in range(size * size)} | {"": PASS}


class _GameReader:
    """Reads the main line of a parsed game into an ``SgfGame``, repairing what it can (each repair a warning)."""

    def __init__(self, text: str, warn: _Warner) -> None:
        self.text = text
        self.warn = warn
        self.seen: dict[str, SgfProperty] = {}  # game-info properties read so far, by identifier
        self.moves: dict[str, int] = {}  # SGF point -> move on the game's board, as miai writes them
        self.move_offsets: list[int] = []  # where each move's property starts, in move order
        self.later_players: list[tuple[int, Color, SgfProperty]] = []  # PL after moves: moves before it, player

    def read(self, nodes: list[SgfNode]) -> SgfGame:
        root = nodes[0]
        self.check_repeats(root)
        game = SgfGame(size=self.size(root))
        self.moves = _sgf_moves(game.size)
        self.read_root(game, root)
        self.read_setup(game, root)
        self.read_moves(game, root)
        for node in nodes[1:]:
            moves = node.moves
            if len(moves) == 1 and len(node.properties) == 1 and len(moves[0].values) == 1:
                self.read_move(game, moves[0], moves[0].values[0])  # the usual node: one move, nothing else
                game.comments.append(None)
                continue
            self.check_repeats(node)
            self.read_later_info(game, node)
            self.read_setup(game, node)
            self.read_moves(game, node)
        self.read_later_players(game)
        return game

    # -- one node's repeats

    def check_repeats(self, node: SgfNode) -> None:
        """One warning per property repeated in a node (or a single-valued one given several values); B and W are
        for ``read_moves`` to describe."""
        for prop in node.properties.values():
            if prop.ident in ("B", "W"):
                continue
            if prop.ident in _FIRST_COUNTS and (prop.repeats or len(prop.values) > 1):
                self.first_value_counts(prop)
            elif prop.repeats:
                joined = _JOINED.get(prop.ident, "values")
                self.warn(f"{prop.ident} repeated in one node: the {joined} are joined", prop.repeats[0])

    def first_value_counts(self, prop: SgfProperty) -> None:
        first, others = prop.values[0], [v for v in prop.values[1:] if v != prop.values[0]]
        ignored = f" ({', '.join(repr(v) for v in others)} ignored)" if others else ""
        if prop.repeats:
            same = " with the same value" if not others else f": the first value, {first!r}, counts{ignored}"
            self.warn(f"{prop.ident} repeated in one node{same}", prop.repeats[0])
        else:
            self.warn(f"{prop.ident} has {len(prop.values)} values: the first, {first!r}, counts{ignored}", prop.offset)

    # -- the root and game information

    def size(self, node: SgfNode) -> int:
        prop = node.properties.get("SZ")
        if prop is None:
            return 19
        value = prop.values[0].strip()
        if ":" in value:
            width, _, height = value.partition(":")
            if width.strip() != height.strip():
                raise _value_error(self.text, prop, f"is rectangular ({value}); only square boards are supported")
            value = width
        try:
            size = int(value)
        except ValueError:
            raise _value_error(self.text, prop, f"is not a number: {value!r}") from None
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise _value_error(self.text, prop, f"{size} is outside {MIN_SIZE}..{MAX_SIZE}")
        return size

    def read_root(self, game: SgfGame, root: SgfNode) -> None:
        game_type = root.get("GM")
        if game_type is None:
            self.warn("no GM in the root: read as a game of Go (GM[1])", root.offset)
        elif game_type.strip() not in ("1", ""):
            raise _value_error(self.text, root.properties["GM"], f"is {game_type!r}, not 1 (Go)")
        version = root.get("FF")
        if version is None:
            self.warn("no FF in the root: read as FF[4] (older forms accepted)", root.offset)
        elif version.strip() not in ("1", "2", "3", "4"):
            self.warn(f"FF[{version}] is no known version (1 to 4): read as FF[4]", root.properties["FF"].offset)
        if "PL" in root.properties:
            game.player_to_move = self.player(root.properties["PL"])
        self.read_info(game, root, _GAME_INFO)
        game.root_comment = self.text_of(root, "C") if not root.moves else None

    def read_info(self, game: SgfGame, node: SgfNode, idents: Sequence[str]) -> None:
        """Fill the game-info fields of ``idents`` present in ``node`` (first values)."""
        for ident in idents:
            prop = node.properties.get(ident)
            if prop is None:
                continue
            self.seen[ident] = prop
            value = prop.values[0]
            if ident == "KM":
                game.komi = self.number(prop, float)
            elif ident == "HA":
                game.handicap = self.number(prop, int)
            else:
                setattr(game, _INFO_FIELDS[ident], value)

    def read_later_info(self, game: SgfGame, node: SgfNode) -> None:
        """Root and game-info properties after the root: a game-info node of its own is read (FF[4] allows one
        anywhere); what repeats the root or an earlier node is ignored, with a warning."""
        if len(node.properties) == len(node.moves) == 1:  # the usual node: one move and nothing else
            return
        for ident in _ROOT_ONLY:
            prop = node.properties.get(ident)
            if prop is None:
                continue
            if ident == "SZ" and self.size(node) != game.size:
                raise _value_error(self.text, prop, f"after the root gives another board size "
                                                    f"({self.size(node)}, not {game.size})")
            self.warn(f"{ident} after the root is ignored (it belongs in the root)", prop.start)
        fresh = []
        for ident in _GAME_INFO:
            prop = node.properties.get(ident)
            if prop is None:
                continue
            first = self.seen.get(ident)
            if first is None:
                fresh.append(ident)
            else:
                self.warn(f"{ident}[{prop.values[0]}] repeated in a later node is ignored: the first, "
                          f"{ident}[{first.values[0]}] at {_where(self.text, first.start)}, counts", prop.start)
        self.read_info(game, node, fresh)
        prop = node.properties.get("PL")
        if prop is not None:
            before_moves = not node.moves or prop.start < node.moves[0].start
            if before_moves and not game.moves:  # a setup node's PL: who plays after that setup
                game.player_to_move = self.player(prop)
            else:  # placed by the number of moves before it (a node's moves count when written before the PL)
                after = len(game.moves) + (0 if before_moves else self.node_move_count(node))
                self.later_players.append((after, self.player(prop), prop))

    @staticmethod
    def node_move_count(node: SgfNode) -> int:
        return sum(len(prop.values) for prop in node.moves)

    def read_later_players(self, game: SgfGame) -> None:
        """PL after moves, as GNU Go and Sabaki read it: a PL after the last move says who plays then; one followed
        by a move of the other colour is overruled by that move. A warning each where it changes who plays."""
        for after, player, prop in self.later_players:
            if after < len(game.moves):
                color = game.moves[after][0]
                if color != player:
                    self.warn(f"PL[{prop.values[0]}] after move {after} is overruled by move {after + 1} "
                              f"({color.name.capitalize()}): the moves' colours say who plays", prop.start)
                continue
            natural = game.moves[-1][0].opponent
            game.player_after_moves = player
            if player != natural:
                self.warn(f"PL[{prop.values[0]}] after the last move ({after}): {player.name.capitalize()} is to "
                          f"play, as PL says (as GNU Go and Sabaki read it), not {natural.name.capitalize()}",
                          prop.start)

    def number(self, prop: SgfProperty, kind: type) -> Any:
        try:
            return kind(prop.values[0].strip())
        except ValueError:
            raise _value_error(self.text, prop, f"is not a number: {prop.values[0]!r}") from None

    def player(self, prop: SgfProperty) -> Color:
        value = prop.values[0].strip().upper()
        if value in ("B", "1"):
            return Color.BLACK
        if value in ("W", "2"):
            return Color.WHITE
        raise _value_error(self.text, prop, f"is not B or W: {value!r}")

    @staticmethod
    def text_of(node: SgfNode, ident: str) -> str | None:
        """A text property's value, the values of its repeats joined by line breaks."""
        prop = node.properties.get(ident)
        return "\n".join(prop.values) if prop else None

    # -- setup and moves

    def points(self, prop: SgfProperty, size: int) -> list[int]:
        """The points of a point-list property, compressed rectangles ``aa:cc`` expanded."""
        points: list[int] = []
        for value in prop.values:
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
                raise _value_error(self.text, prop, f"has a bad point ({exc})") from None
        return points

    def read_setup(self, game: SgfGame, node: SgfNode) -> None:
        """Apply AB/AW/AE of one node (before its moves); setup after the first move is kept to be applied there,
        with a warning (FF[4] means setup for diagrams and problems, but editors write it into games)."""
        props = node.properties
        present = [(ident, color) for ident, color in _SETUP if ident in props]
        if not present:
            return
        changes = [(point, color) for ident, color in present for point in self.points(props[ident], game.size)]
        if game.moves:
            game.later_setup.append(LaterSetup(len(game.moves), tuple(changes)))
            idents = " and ".join(ident for ident, _ in present)
            self.warn(f"{idents} after move {len(game.moves)}: set there; the position after it starts the game's "
                      "history, as GNU Go sets it up (the moves before it cannot be undone)",
                      min(props[ident].start for ident, _ in present))
            return
        board = {p: Color.BLACK for p in game.setup_black} | {p: Color.WHITE for p in game.setup_white}
        board.update(changes)
        game.setup_black = sorted(p for p, c in board.items() if c == Color.BLACK)
        game.setup_white = sorted(p for p, c in board.items() if c == Color.WHITE)

    def read_moves(self, game: SgfGame, node: SgfNode) -> None:
        """Append the node's B and W moves, in file order, with the node's comment on its last move."""
        moves = node.moves
        if not moves:
            return
        if len(moves) == 1 and len(moves[0].values) == 1:  # the usual node
            played = [(moves[0], moves[0].values[0])]
        else:
            played = [(prop, value) for prop in moves for value in prop.values]
        if len(played) > 1:
            named = [f"{prop.ident}[{value}]" for prop, value in played]
            where = node.moves[1].start if len(node.moves) > 1 else node.moves[0].offset
            self.warn(f"{', '.join(named[:-1])} and {named[-1]} in one node: the {len(played)} moves are played "
                      "in file order", where)
        for prop, value in played:
            self.read_move(game, prop, value)
            game.comments.append(None)
        game.comments[-1] = self.text_of(node, "C")

    def read_move(self, game: SgfGame, prop: SgfProperty, value: str) -> None:
        """Append one move (its comment is for the caller to append)."""
        move = self.moves.get(value)
        if move is None:  # not written as miai writes it: spaces, tt, or not a point
            try:
                move = parse_sgf(value, game.size)
            except InvalidMoveError as exc:
                raise _value_error(self.text, prop, f"is not a move ({exc})") from None
            if value.strip() == "tt" and move == PASS:
                self.warn(f"{prop.ident}[tt] read as a pass (FF[3]'s pass; FF[4] writes {prop.ident}[])", prop.start)
        game.moves.append((Color.BLACK if prop.ident == "B" else Color.WHITE, move))
        self.move_offsets.append(prop.start)


_INFO_FIELDS = {"RU": "rules", "PB": "black_player", "PW": "white_player", "RE": "result", "DT": "date"}


def load_sgf(text: str, source: str | None = None) -> SgfGame:
    """Read the first game of an SGF collection (its main line) into an ``SgfGame``.

    The repairs made to read it (see the module's docstring) are in the game's ``warnings``, in file order, each
    naming ``source`` (the file) when it is given.

    Raises:
        SgfError: for SGF that cannot be understood (syntax or values), naming the problem and its position.
    """
    warnings: list[SgfWarning] = []
    warn = _Warner(text, warnings, source)
    trees = _Parser(text, warn).collection()
    reader = _GameReader(text, warn)
    game = reader.read(trees[0].main_line())
    game.warnings = sorted(warnings, key=lambda w: (w.line, w.column))
    game.origin = _Origin(text, source, reader.move_offsets)
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
    """``load_sgf`` of a file (see ``decode_sgf`` for the encoding); its warnings name the file.

    Raises:
        SgfError: when the file cannot be read or is malformed (the message names the file).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SgfError(f"cannot read SGF file {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        return load_sgf(decode_sgf(data), source=str(path))
    except SgfError as exc:
        raise SgfError(f"{path}: {exc}", problem=exc.problem, line=exc.line, column=exc.column) from exc


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
