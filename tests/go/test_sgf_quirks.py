"""Game records as they are found: the quirks of files from older programs and servers load, each repair one
warning naming the file, line and column, and the position is the one the file means (GNU Go's, where it runs).

The files in tests/go/sgf_quirks/ were written by hand for these tests, one quirk each (old-server.sgf several,
as such files have them). Round trips: what miai writes reads back without a warning, and the same game written
with quirks reads back as the same game with one warning per quirk."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS, Color, parse_gtp, to_gtp, to_sgf
from miai.go.errors import SetupError, SgfError
from miai.go.rules import Rules
from miai.go.sgf import SgfGame, game_from_state, load_sgf, read_sgf_file, write_sgf
from miai.go.state import GameState
from .gnugo_client import GNUGO, gnugo

QUIRKS = Path(__file__).parent / "sgf_quirks"


@dataclass(frozen=True)
class Expected:
    """What a quirky file must give: the stones, who plays next, komi, and the warnings (without the file name)."""

    black: str
    white: str
    to_play: Color
    komi: float
    warnings: tuple[str, ...]


EXPECTED = {
    "repeated-setup.sgf": Expected("D16 D4 Q16", "P3 R4", Color.BLACK, 0.5, (
        "line 3, column 7: AB repeated in one node: the points are joined",
    )),
    "both-moves.sgf": Expected("E5 G3 G7", "C3 C7", Color.WHITE, 7.0, (
        "line 2, column 7: B[ee] and W[cc] in one node: the 2 moves are played in file order",
        "line 4, column 7: W[cg] and B[gg] in one node: the 2 moves are played in file order",
    )),
    "repeated-root.sgf": Expected("E5", "D7", Color.BLACK, 6.5, (
        "line 1, column 13: GM repeated in one node with the same value",
        "line 1, column 23: SZ repeated in one node with the same value",
        "line 1, column 35: KM repeated in one node: the first value, '6.5', counts ('0.5' ignored)",
    )),
    "header-again.sgf": Expected("E5 G3 G7", "C3 C7", Color.WHITE, 5.5, (
        "line 3, column 2: GM after the root is ignored (it belongs in the root)",
        "line 3, column 7: FF after the root is ignored (it belongs in the root)",
        "line 3, column 12: SZ after the root is ignored (it belongs in the root)",
        "line 3, column 17: KM[5.5] repeated in a later node is ignored: the first, KM[5.5] at line 1, column 18, counts",
        "line 3, column 24: PB[Alice] repeated in a later node is ignored: the first, PB[Alice] at line 1, column 25, "
        "counts",
        "line 3, column 33: PW[Bob] repeated in a later node is ignored: the first, PW[Bob] at line 1, column 34, counts",
    )),
    "trailing-text.sgf": Expected("E5 G5", "C5", Color.WHITE, 7.0, (
        "line 3, column 1: text after the game tree is ignored ('Downloaded from an o...')",
    )),
    "broken-second-game.sgf": Expected("E5", "C7", Color.BLACK, 7.0, (
        "line 2, column 1: the game tree here is ignored: it cannot be read (unterminated property value "
        "(missing ']') at line 2, column 26)",
    )),
    "long-names.sgf": Expected("C3 C7 G3", "E5 G7", Color.WHITE, 5.5, (
        "line 1, column 3: property name GaMe read as GM (an FF[1-3] long name)",
        "line 1, column 10: property name FileFormat read as FF (an FF[1-3] long name)",
        "line 1, column 23: property name SiZe read as SZ (an FF[1-3] long name)",
        "line 1, column 30: property name KoMi read as KM (an FF[1-3] long name)",
        "line 2, column 1: property name AddBlack read as AB (an FF[1-3] long name)",
        "line 2, column 17: property name AddWhite read as AW (an FF[1-3] long name)",
        "line 2, column 29: property name PLayer read as PL (an FF[1-3] long name)",
        "line 3, column 2: property name White read as W (an FF[1-3] long name)",
        "line 3, column 12: property name Black read as B (an FF[1-3] long name)",
    )),
    "no-ff-gm.sgf": Expected("E5", "D6", Color.BLACK, 7.0, (
        "line 1, column 2: no GM in the root: read as a game of Go (GM[1])",
        "line 1, column 2: no FF in the root: read as FF[4] (older forms accepted)",
    )),
    "tt-pass.sgf": Expected("Q16", "D16 D4", Color.BLACK, 5.5, (
        "line 2, column 14: B[tt] read as a pass (FF[3]'s pass; FF[4] writes B[])",
        "line 2, column 26: B[tt] read as a pass (FF[3]'s pass; FF[4] writes B[])",
        "line 2, column 32: W[tt] read as a pass (FF[3]'s pass; FF[4] writes W[])",
    )),
    "setup-after-moves.sgf": Expected("E5 G3 G5 G7", "C3 C7 D6 E7", Color.WHITE, 7.0, (
        "line 3, column 2: AB and AW after move 4: set there; the position after it starts the game's history, as "
        "GNU Go sets it up (the moves before it cannot be undone)",
    )),
    "superko-repeat.sgf": Expected("A7 B7 C7 C8 E5", "A8 B8 C9", Color.WHITE, 6.5, (
        "line 3, column 2: move 12 (White B8) repeats an earlier position, which positional superko forbids under "
        "the tromp-taylor rules: played all the same (the game was played without superko)",
    )),
    "missing-paren.sgf": Expected("E5 E7 G3", "C3 C7 G5", Color.BLACK, 7.0, (
        "line 4, column 1: the file ends before the game tree opened at line 1, column 1 is closed: the missing ')' "
        "is added",
    )),
    "pl-after-move.sgf": Expected("E5 G3", "C7", Color.BLACK, 7.0, (
        "line 3, column 2: PL[B] after the last move (3): Black is to play, as PL says (as GNU Go and Sabaki read "
        "it), not White",
    )),
    "old-server.sgf": Expected("D16 D4 Q16 R14", "P3 Q4 R4", Color.BLACK, 0.5, (
        "line 1, column 31: GM repeated in one node with the same value",
        "line 1, column 71: AB repeated in one node: the points are joined",
        "line 3, column 7: W[oq] and B[qf] in one node: the 2 moves are played in file order",
        "line 5, column 1: text after the game tree is ignored ('Game over.')",
    )),
}


def stones(state: GameState, color: Color) -> str:
    points = state.stones()
    return " ".join(sorted(to_gtp(p, state.size) for p in range(state.size * state.size) if points[p] == color))


def test_every_quirk_file_has_its_expectation() -> None:
    assert sorted(path.name for path in QUIRKS.glob("*.sgf")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_quirky_file_gives_its_position_and_warnings(name: str) -> None:
    expected, path = EXPECTED[name], QUIRKS / name
    game = read_sgf_file(path)
    state = game.to_state()  # a move only superko forbids is found (and warned about) when the moves are played
    assert [str(w) for w in game.warnings] == [f"{path}: {w}" for w in expected.warnings]
    assert (stones(state, Color.BLACK), stones(state, Color.WHITE)) == (expected.black, expected.white)
    assert game.player_before() == expected.to_play == state.to_play
    assert game.komi == expected.komi


@pytest.mark.gnugo
@pytest.mark.skipif(not GNUGO.exists(), reason=f"GNU Go not installed at {GNUGO} (apt-get install gnugo)")
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_quirky_file_gives_gnu_gos_position(name: str) -> None:
    """GNU Go 3.8 reads every one of these files: its stones, colour to move and komi are miai's."""
    path = QUIRKS / name
    game = read_sgf_file(path)
    state = game.to_state()
    with gnugo() as engine:
        assert engine.send(f"loadsgf {path}") == game.player_before().name.lower()
        for color in (Color.BLACK, Color.WHITE):
            theirs = " ".join(sorted(engine.send(f"list_stones {color.name.lower()}").split()))
            assert theirs == stones(state, color), f"{color.name} stones of {name}"
        assert float(engine.send("get_komi")) == game.komi


# The four irregular records of issue 72 that GNU Go 3.8 loads: loadsgf FILE MOVE at every move number must give
# GNU Go's stones and colour to move.
IRREGULAR = ["setup-after-moves.sgf", "superko-repeat.sgf", "missing-paren.sgf", "pl-after-move.sgf"]


@pytest.mark.slow
@pytest.mark.gnugo
@pytest.mark.skipif(not GNUGO.exists(), reason=f"GNU Go not installed at {GNUGO} (apt-get install gnugo)")
@pytest.mark.parametrize("name", IRREGULAR)
def test_irregular_record_loads_as_gnu_go_loads_it_at_every_move(name: str) -> None:
    path = QUIRKS / name
    game = read_sgf_file(path)
    with gnugo() as engine:
        for number in [*range(1, len(game.moves) + 3), None]:
            where = f"{name} before move {number}"
            state = game.to_state(number)
            command = f"loadsgf {path}" + ("" if number is None else f" {number}")
            assert engine.send(command) == state.to_play.name.lower() == game.player_before(number).name.lower(), where
            for color in (Color.BLACK, Color.WHITE):
                theirs = " ".join(sorted(engine.send(f"list_stones {color.name.lower()}").split()))
                assert theirs == stones(state, color), f"{color.name} stones of {where}"


def test_setup_after_moves_is_applied_in_order_where_it_stands() -> None:
    """AE empties, AB and AW set (over whatever stood there, as FF[4] says); a later setup node applies after an
    earlier one; the moves after it are played on the new position, and the history starts there."""
    text = "(;GM[1]FF[4]SZ[9];B[ee];W[cc];AE[ee]AB[cc][gg];W[ec];AW[gg];B[ge])"
    game = load_sgf(text, source="edit.sgf")
    assert [w.message.split(":")[0] for w in game.warnings] == ["AE and AB after move 2", "AW after move 3"]
    state = game.to_state()
    assert (stones(state, Color.BLACK), stones(state, Color.WHITE)) == ("C7 G5", "E7 G3")
    assert state.moves == [(Color.BLACK, game.moves[-1][1])] and state.to_play == Color.WHITE
    before = game.to_state(3)  # before W E7: the first setup is applied, the second not yet
    assert (stones(before, Color.BLACK), stones(before, Color.WHITE), before.to_play) == ("C7 G3", "", Color.WHITE)
    assert game.to_state(2).moves == [(Color.BLACK, game.moves[0][1])]  # before the setup: the game as played


def test_setup_after_moves_that_leaves_a_chain_without_liberties_is_refused() -> None:
    game = load_sgf("(;GM[1]FF[4]SZ[9];B[aa];W[ee];AW[ba][ab])")
    with pytest.raises(SgfError, match="invalid SGF setup stones after move 2"):
        game.to_state()
    assert game.to_state(2).moves  # the position before it still loads


def test_a_move_only_superko_forbids_is_played_once_warned_and_keeps_the_history() -> None:
    game = read_sgf_file(QUIRKS / "superko-repeat.sgf")
    for number in (13, 13, None):  # set up several times: one warning
        state = game.to_state(number)
    assert len(game.warnings) == 1 and "move 12 (White B8)" in str(game.warnings[0])
    assert len(state.moves) == 13
    state.pop()
    assert len(state.moves) == 12  # the replayed move can be undone like any other
    assert game.to_state(12).is_legal(game.moves[11][1]) is False  # the rules of the state still forbid it
    simple = read_sgf_file(QUIRKS / "superko-repeat.sgf")
    simple.to_state(rules="japanese")  # under simple ko the move is legal: nothing to say
    assert simple.warnings == []


def test_other_illegal_moves_are_still_refused() -> None:
    with pytest.raises(SgfError, match=r"illegal SGF move 3 \(BLACK 'ee'\)"):
        load_sgf("(;GM[1]FF[4]SZ[9];B[ee];W[cc];B[ee])").to_state()


def test_pl_after_the_last_move_gives_the_turn_and_the_state_keeps_it() -> None:
    state = read_sgf_file(QUIRKS / "pl-after-move.sgf").to_state()
    assert state.to_play == Color.BLACK and len(state.moves) == 3
    assert state.copy().to_play == Color.BLACK and state.copy().situation_hash == state.situation_hash
    state.push(parse_gtp("C3", state.size))  # Black plays on
    assert state.to_play == Color.WHITE
    state.pop()
    assert state.to_play == Color.BLACK and len(state.moves) == 3  # back to the given turn
    state.pop()  # undo Black G3: Black's turn before it, as in the game
    assert state.to_play == Color.BLACK and len(state.moves) == 2


def test_pl_after_a_move_followed_by_a_move_is_overruled_by_it_with_a_warning() -> None:
    game = load_sgf("(;GM[1]FF[4]SZ[9];B[ee];PL[B];W[cc])")
    assert game.player_before() == Color.BLACK and game.to_state().to_play == Color.BLACK
    assert [w.message for w in game.warnings] == [
        "PL[B] after move 1 is overruled by move 2 (White): the moves' colours say who plays"]
    same = load_sgf("(;GM[1]FF[4]SZ[9];B[ee];PL[W];W[cc];PL[B])")  # PLs that agree with the moves: nothing to say
    assert same.warnings == [] and same.to_state().to_play == Color.BLACK


def test_a_missing_final_parenthesis_closes_every_open_tree_with_one_warning() -> None:
    game = load_sgf("(;GM[1]FF[4]SZ[9];B[ee](;W[cc];B[gg](;W[cg]", source="cut.sgf")
    assert [str(w) for w in game.warnings] == [
        "cut.sgf: line 1, column 44: the file ends before 3 game trees (the first opened at line 1, column 1) are "
        "closed: the 3 missing ')' are added"]
    assert len(game.moves) == 4


@pytest.mark.parametrize(("text", "message"), [
    ("(;GM[1]FF[4]SZ[9];B[ee];SZ[13];W[cc])", r"SZ after the root gives another board size \(13, not 9\) "
                                             r"at line 1, column 27"),
    ("(;GM[1]FF[4]sz[9])", "property identifier 'sz' has no upper-case letter"),
    ("(;GM[1]FF[4]SZ[9];B[ee]W[zz])", "W is not a move .*off the 9x9 board"),
    ("(;GM[1]FF[4]SZ[9];B[ee]B[ee])", None),  # read (two moves), then refused when played: the point is taken
    ("(;GM[1]FF[4]SZ[9];B[ee", r"unterminated property value \(missing '\]'\)"),  # cut inside a value
    ("(;GM[1]FF[4]SZ[9];B[ee]]", r"unexpected '\]' in the game tree"),
    ("Game record\n(;GM[1]FF[4]SZ[9];B[ee])", r"unexpected 'G' \(expected '\('\) at line 1, column 1"),
    ("(;GM[1]GM[2]SZ[9])", None),  # the first GM counts: read as Go, with a warning
    ("(;GM[2]GM[1]SZ[9])", r"GM is '2', not 1 \(Go\)"),
    ("(;GM[1]FF[4]SZ[21];B[tt];W[tt])", r"illegal SGF move 2 \(WHITE 'tt'\)"),  # a point on 21x21: taken
])
def test_what_cannot_be_understood_is_still_refused(text: str, message: str | None) -> None:
    if message is None:
        game = load_sgf(text)
        assert game.warnings
        if game.moves:
            with pytest.raises(SgfError, match="illegal SGF move 2"):
                game.to_state()
        return
    with pytest.raises(SgfError, match=message):
        load_sgf(text).to_state()


def test_game_info_in_a_later_node_is_read_without_a_warning() -> None:
    """FF[4] lets the game information sit in a node of its own after the root: not a quirk."""
    game = load_sgf("(;GM[1]FF[4]SZ[9];PB[Alice]KM[6.5];B[ee])")
    assert (game.black_player, game.komi, game.warnings) == ("Alice", 6.5, [])


def test_a_node_comment_goes_to_its_last_move_and_repeats_are_joined() -> None:
    game = load_sgf("(;GM[1]FF[4]SZ[9]C[one]C[two];B[ee]W[cc]C[both])")
    assert game.root_comment == "one\ntwo" and game.comments == [None, "both"]
    assert [w.message for w in game.warnings] == [
        "C repeated in one node: the texts are joined",
        "B[ee] and W[cc] in one node: the 2 moves are played in file order",
    ]


def test_setup_pl_after_the_root_and_pl_after_moves() -> None:
    game = load_sgf("(;GM[1]FF[4]SZ[9];AB[cc]PL[W];W[ee];PL[W];B[gg])")
    assert game.player_to_move == Color.WHITE and len(game.moves) == 2
    assert [w.message for w in game.warnings] == [
        "PL[W] after move 1 is overruled by move 2 (Black): the moves' colours say who plays"]


# --- round trips ----------------------------------------------------------------------------------------


@st.composite
def played_games(draw: st.DrawFn, max_size: int = 25) -> GameState:
    """A legal game: a size, rules and komi, perhaps handicap or setup stones, then random legal moves and passes."""
    size = draw(st.sampled_from([s for s in (2, 3, 5, 7, 9, 13, 19, 20, 25) if s <= max_size]))
    rules = Rules.preset(draw(st.sampled_from(["chinese", "japanese", "tromp-taylor", "aga", "new-zealand"])))
    state = GameState(size=size, rules=rules, komi=draw(st.sampled_from([0.0, 0.5, 5.5, 6.5, 7.0, 7.5, -3.0])))
    start = draw(st.sampled_from(["empty", "handicap", "setup"]))
    if start == "handicap" and size >= 7:
        state.fixed_handicap(draw(st.integers(2, 4)))
    elif start == "setup":
        points = draw(st.lists(st.integers(0, size * size - 1), unique=True, max_size=6))
        black, white = points[: len(points) // 2], points[len(points) // 2 :]
        try:
            state.set_stones(black, white)
        except SetupError:  # a chain without liberties: start from the empty board instead
            pass
    for _ in range(draw(st.integers(0, 30))):
        if state.is_over():
            break
        legal = state.legal_moves(state.to_play)
        choice = draw(st.integers(0, len(legal)))  # len(legal): a pass
        state.push(legal[choice] if choice < len(legal) else PASS)
    return state


def same_game(read: GameState, played: GameState) -> None:
    assert read.moves == played.moves
    assert read.stones().tolist() == played.stones().tolist()
    assert (read.to_play, read.komi, read.rules, read.handicap) == (played.to_play, played.komi, played.rules,
                                                                   played.handicap)
    assert read.position_hash == played.position_hash


@settings(max_examples=200, deadline=None)
@given(state=played_games())
@pytest.mark.slow
def test_what_miai_writes_reads_back_as_the_same_game_without_a_warning(state: GameState) -> None:
    game = load_sgf(write_sgf(state, "B+R"))
    assert game.warnings == []
    same_game(game.to_state(), state)


LONG_NAMES = {"B": "Black", "W": "White", "AB": "AddBlack", "AW": "AddWhite", "SZ": "SiZe", "KM": "KoMi",
              "GM": "GaMe", "FF": "FileFormat", "PL": "PLayer", "HA": "HAndicap", "RU": "RUles"}


def quirky_text(game: SgfGame, quirks: st.DataObject) -> tuple[str, int]:
    """The game written as old programs write: random quirks, and how many warnings they must give."""
    warnings = 0

    def name(ident: str) -> str:
        nonlocal warnings
        if ident in LONG_NAMES and quirks.draw(st.booleans()):
            warnings += 1
            return LONG_NAMES[ident]
        return ident

    root = []
    for ident in ("GM", "FF"):
        if quirks.draw(st.booleans()):
            root.append(f"{name(ident)}[{'1' if ident == 'GM' else '3'}]")
        else:
            warnings += 1  # no GM / no FF
    if "GM[1]" in root and quirks.draw(st.booleans()):
        root.append("GM[1]")  # a repeat with the same value
        warnings += 1
    root.append(f"{name('SZ')}[{game.size}]{name('KM')}[{game.komi:g}]{name('RU')}[{game.rules}]")
    if game.handicap:
        root.append(f"{name('HA')}[{game.handicap}]")
    for ident, points in (("AB", game.setup_black), ("AW", game.setup_white)):
        values = [f"[{to_sgf(p, game.size)}]" for p in points]
        if len(values) >= 2 and quirks.draw(st.booleans()):  # the list split into two properties
            root.append(f"{name(ident)}{''.join(values[:1])}{name(ident)}{''.join(values[1:])}")
            warnings += 1
        elif values:
            root.append(name(ident) + "".join(values))
    if game.player_to_move is not None:
        root.append(f"{name('PL')}[{'B' if game.player_to_move == Color.BLACK else 'W'}]")
    nodes, in_node = [], 0
    for color, move in game.moves:
        ident = "B" if color == Color.BLACK else "W"
        point = to_sgf(move, game.size)
        if move == PASS and game.size <= 19 and quirks.draw(st.booleans()):
            point = "tt"
            warnings += 1
        prop = f"{name(ident)}[{point}]"
        if nodes and in_node == 1 and quirks.draw(st.booleans()):  # two moves in one node
            nodes[-1] += prop
            in_node = 2
            warnings += 1
        else:
            nodes.append(";" + prop)
            in_node = 1
    text = "(;" + "".join(root) + "\n" + "\n".join(nodes) + ")\n"
    if quirks.draw(st.booleans()):
        text += "Game saved by an old server.\n"
        warnings += 1
    return text, warnings


@settings(max_examples=200, deadline=None)
@given(state=played_games(), quirks=st.data())
@pytest.mark.slow
def test_the_same_game_written_with_quirks_reads_back_the_same_with_a_warning_each(
    state: GameState, quirks: st.DataObject
) -> None:
    text, warnings = quirky_text(game_from_state(state), quirks)
    game = load_sgf(text, source="quirky.sgf")
    assert len(game.warnings) == warnings, (text, [str(w) for w in game.warnings])
    assert all(str(w).startswith("quirky.sgf: line ") for w in game.warnings)
    same_game(game.to_state(), state)
