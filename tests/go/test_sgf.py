"""SGF reading and writing: properties, escapes, variations, passes, setup, loadsgf semantics, round
trips, and malformed inputs that must raise SgfError naming the problem and its position."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS, Color, parse_gtp
from miai.go.errors import SgfError
from miai.go.rules import KoRule, Rules
from miai.go.sgf import (
    SgfGame,
    format_sgf,
    load_sgf,
    parse_collection,
    parse_rules_text,
    read_sgf_file,
    rules_text,
    write_sgf,
)
from miai.go.state import GameState
from tests.outside import needs_shared, shared

B, W = Color.BLACK, Color.WHITE
TOM = shared("data/tom/all.kifu")


def test_root_properties() -> None:
    game = load_sgf(
        "(;FF[4]GM[1]SZ[13]KM[-2.5]RU[Japanese]HA[0]PB[Alice]PW[Bob]RE[W+R]DT[2026-11-21]"
        "C[hello];B[dd];W[jj])"
    )
    assert (game.size, game.komi, game.rules, game.handicap) == (13, -2.5, "Japanese", 0)
    assert (game.black_player, game.white_player, game.result, game.date) == ("Alice", "Bob", "W+R", "2026-11-21")
    assert game.root_comment == "hello"
    assert game.moves == [(B, 3 * 13 + 3), (W, 9 * 13 + 9)]


def test_defaults_without_properties() -> None:
    game = load_sgf("(;B[pd])")
    assert game.size == 19 and game.komi is None and game.rules is None
    assert game.moves == [(B, parse_gtp("Q16", 19))]


def test_passes_empty_and_tt() -> None:
    game = load_sgf("(;SZ[19];B[];W[tt];B[ss])")
    assert game.moves == [(B, PASS), (W, PASS), (B, 360)]


def test_tt_is_a_point_on_big_boards() -> None:
    game = load_sgf("(;SZ[21];B[tt];W[])")
    assert game.moves == [(B, 19 * 21 + 19), (W, PASS)]


def test_escapes_and_soft_line_breaks() -> None:
    game = load_sgf("(;C[a\\]b\\\\c\\\nd\ne];B[aa]C[x\\:y])")
    assert game.root_comment == "a]b\\cd\ne"
    assert game.comments == ["x:y"]


def test_multiple_values_and_rectangles() -> None:
    game = load_sgf("(;SZ[5]AB[aa][bb:cc]AW[ee];B[ed])")
    assert game.setup_black == [0, 6, 7, 11, 12]
    assert game.setup_white == [24]


def test_add_empty_and_setup_in_second_node() -> None:
    game = load_sgf("(;SZ[5]AB[aa][bb];AE[aa]AW[cc];B[dd])")
    assert game.setup_black == [6] and game.setup_white == [12]


def test_variations_are_parsed_and_only_the_main_line_is_kept() -> None:
    text = "(;SZ[9];B[ee](;W[cc];B[gg](;W[cg])(;W[gc]))(;W[gg]))"
    trees = parse_collection(text)
    assert len(trees[0].variations) == 2
    assert load_sgf(text).moves == [(B, 40), (W, 20), (B, 60), (W, 56)]


def test_only_the_first_game_of_a_collection() -> None:
    game = load_sgf("(;SZ[9];B[aa])\n(;SZ[13];B[bb])")
    assert game.size == 9


def test_lower_case_letters_in_old_identifiers_are_ignored() -> None:
    game = load_sgf("(;SZ[5]AddBlack[aa];B[bb])")
    assert game.setup_black == [0]


def test_player_to_move() -> None:
    assert load_sgf("(;SZ[5]AB[aa]PL[W])").player_to_move == W


def test_whitespace_and_bom_around_tokens() -> None:
    game = load_sgf("\ufeff ( ;SZ [5]\n KM[0.5] ;B [cc] \n;W[dd] ) \n")
    assert game.size == 5 and game.komi == 0.5 and len(game.moves) == 2


# --- to_state ------------------------------------------------------------------------------------


def test_to_state_plays_the_moves_with_rules_and_komi() -> None:
    game = load_sgf("(;SZ[9]KM[5]RU[Chinese];B[ee];W[cc];B[gg])")
    state = game.to_state()
    assert state.rules == Rules.preset("chinese")
    assert state.komi == 5.0
    assert state.color_at(40) == B and state.color_at(20) == W and state.to_play == W


def test_to_state_move_number_is_the_position_before_that_move() -> None:
    game = load_sgf("(;SZ[9];B[ee];W[cc];B[gg])")
    assert [m for _, m in game.to_state(move_number=2).moves] == [40]
    assert game.to_state(move_number=1).moves == []
    assert len(game.to_state(move_number=99).moves) == 3


def test_to_state_handicap_gives_white_the_move() -> None:
    state = load_sgf("(;SZ[9]HA[2]AB[cc][gg])").to_state()
    assert state.handicap == 2 and state.to_play == W


def test_unknown_rules_fall_back_and_override_wins() -> None:
    assert load_sgf("(;SZ[9]RU[Ing];B[ee])").to_state().rules == Rules.preset("goe")  # KataGo's name for Ing
    game = load_sgf("(;SZ[9]RU[Ing-Goe-1996];B[ee])")
    assert game.to_state().rules == Rules.preset("tromp-taylor")
    assert game.to_state(rules="japanese").rules == Rules.preset("japanese")
    assert game.to_state(rules="japanese").komi == 6.5  # no KM: the preset's komi


def test_illegal_move_names_the_move() -> None:
    game = load_sgf("(;SZ[5];B[cc];W[cc])")
    with pytest.raises(SgfError, match=r"move 2 \(WHITE 'cc'\)"):
        game.to_state()


def test_setup_after_moves_applies_where_it_stands() -> None:
    """Setup after moves (as GNU Go loads it): the moves before it are the game until it is reached; from there the
    position after it starts the history."""
    game = load_sgf("(;SZ[5];B[cc];W[dd];AB[aa];B[ee])")
    assert len(game.to_state(move_number=2).moves) == 1
    before_b = game.to_state(move_number=3)
    assert before_b.moves == [] and before_b.color_at(0) == B and before_b.color_at(12) == B
    assert game.to_state().moves == [(B, 24)]


# --- writing and round trips ----------------------------------------------------------------------


def test_write_state_round_trip_with_handicap_result_and_comments() -> None:
    state = GameState(size=9, rules=Rules.preset("japanese"), komi=0.5)
    state.fixed_handicap(2)
    for vertex in ("E5", "D4", "pass", "F6"):
        state.push(parse_gtp(vertex, 9))
    text = write_sgf(state, "W+3.5", comments=["first] one", None, "a pass", None], black_player="b\\x")
    assert "RE[W+3.5]" in text and "RU[japanese]" in text and "HA[2]" in text and "KM[0.5]" in text
    game = load_sgf(text)
    assert game.comments == ["first] one", None, "a pass", None]
    assert game.black_player == "b\\x"
    again = game.to_state()
    assert again.moves == state.moves
    assert again.stones().tolist() == state.stones().tolist()
    assert again.position_hash == state.position_hash and again.handicap == 2 and again.to_play == state.to_play


def test_write_setup_stones_and_white_first() -> None:
    state = GameState(size=7, rules=Rules.preset("chinese"), komi=7)
    state.set_stones([0, 8], [48])
    state.push(24, W)
    game = load_sgf(write_sgf(state))
    assert game.setup_black == [0, 8] and game.setup_white == [48]
    assert game.player_to_move == W and game.moves == [(W, 24)]


def test_format_sgf_round_trip_of_a_game_record() -> None:
    game = SgfGame(
        size=19, komi=6.5, rules="Japanese", handicap=3, setup_black=[60, 72, 288], moves=[(W, 300), (B, PASS)],
        comments=["c1", None], black_player="X", white_player="Y", result="B+R", date="2026", root_comment="r",
    )
    assert load_sgf(format_sgf(game)) == game


text_values = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=30)


@settings(max_examples=150, deadline=None)
@given(comment=text_values, name=text_values)
@pytest.mark.slow
def test_any_text_survives_a_round_trip(comment: str, name: str) -> None:
    game = SgfGame(size=9, komi=7.0, moves=[(B, 40)], comments=[comment], black_player=name)
    back = load_sgf(format_sgf(game))
    assert back.comments == [comment] and back.black_player == name


@needs_shared("data/tom/all.kifu")
@pytest.mark.slow
def test_real_games_replay() -> None:
    with TOM.open(encoding="utf-8") as kifu:
        lines = [next(kifu) for _ in range(60)]
    for line in lines:
        game_id, moves = line.rstrip("\n").split("\t", 1)
        game = load_sgf(f"(;GM[1]SZ[19]KM[6.5]RU[Chinese]{moves})")
        state = game.to_state()
        assert len(state.moves) == len(game.moves) > 50, game_id


# --- malformed input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no game tree"),
        ("   ", "no game tree"),
        ("garbage(;B[aa])", r"unexpected 'g' \(expected '\('\) at line 1, column 1"),
        ("(;B[aa](;W[bb]]", r"unexpected '\]' in the game tree opened at line 1, column 8"),
        ("(;B[aa", r"unterminated property value \(missing '\]'\) at line 1, column 4"),
        ("(B[aa])", "a game tree must start with a node ';'"),
        ("(;SZ[9]\n;B)", "property B has no value at line 2, column 2"),
        ("(;SZ[x])", "SZ is not a number: 'x'"),
        ("(;SZ[1])", r"SZ 1 is outside 2\.\.25"),
        ("(;SZ[30])", r"SZ 30 is outside 2\.\.25"),
        ("(;SZ[19:13])", "rectangular"),
        ("(;KM[seven])", "KM is not a number"),
        ("(;HA[two])", "HA is not a number"),
        ("(;GM[2])", "not 1 \\(Go\\)"),
        ("(;SZ[9];B[zz])", "B is not a move .*off the 9x9 board"),
        ("(;SZ[9]\n\n;W[a])", "W is not a move .* at line 3, column 3"),
        ("(;SZ[9]AB[aa][j])", "AB has a bad point"),
        ("(;SZ[9]AB[])", "AB has a bad point"),
        ("(;PL[X])", "PL is not B or W"),
        ("(;sz[9])", "has no upper-case letter"),
    ],
)
def test_malformed_sgf_raises_with_problem_and_position(text: str, message: str) -> None:
    with pytest.raises(SgfError, match=message):
        load_sgf(text)


def test_sgf_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        load_sgf("(;B[aa")


def test_first_player_from_pl_or_the_first_move() -> None:
    assert load_sgf("(;SZ[5]AB[aa]PL[W])").to_state().to_play == W
    state = load_sgf("(;SZ[5]AB[aa];W[cc];B[dd])").to_state(move_number=1)
    assert state.to_play == W and state.moves == []
    assert load_sgf("(;SZ[5]AB[aa];W[cc];B[dd])").to_state().to_play == W


def test_player_before_follows_the_record() -> None:
    game = load_sgf("(;SZ[5];B[aa];B[bb];W[cc])")
    assert game.player_before(2) == B  # two Black moves in a row: the record says Black again
    assert game.player_before(3) == W
    assert game.player_before() == B
    assert load_sgf("(;SZ[9]HA[2]AB[cc][gg])").player_before() == W
    assert load_sgf("(;SZ[9]PL[W])").player_before() == W


def test_read_sgf_file_decodes_by_charset(tmp_path: Path) -> None:
    latin = tmp_path / "latin.sgf"
    latin.write_bytes("(;CA[ISO-8859-1]SZ[9]PB[Jos\xe9])".encode("latin-1"))
    assert read_sgf_file(latin).black_player == "Jos\xe9"
    utf8 = tmp_path / "utf8.sgf"
    utf8.write_bytes("\ufeff(;SZ[9]PW[\u674e])".encode("utf-8"))
    assert read_sgf_file(utf8).white_player == "\u674e"
    unknown = tmp_path / "unknown.sgf"
    unknown.write_bytes(b"(;CA[no-such-charset]SZ[9]C[\xff])")
    assert read_sgf_file(unknown).root_comment == "\xff"


def test_read_sgf_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SgfError, match="cannot read SGF file"):
        read_sgf_file(tmp_path / "missing.sgf")
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;SZ[9];B[zz])")
    with pytest.raises(SgfError, match=r"bad\.sgf: malformed SGF: B is not a move"):
        read_sgf_file(bad)


sgf_soup = st.text(alphabet="();[]\\:ABWEPLCSZKMHRUtadsz019.- \n", max_size=60)


@settings(max_examples=400, deadline=None)
@given(text=sgf_soup)
@pytest.mark.slow
def test_arbitrary_input_either_loads_or_raises_sgf_error(text: str) -> None:
    try:
        game = load_sgf(text)
    except SgfError:
        return
    try:
        state = game.to_state()
    except SgfError:
        return
    assert len(state.moves) == len(game.moves)


_VALUES = st.sampled_from(["", "aa", "bb", "cc", "ab", "tt", "zz", "aa:bb", "5", "9", "0", "x", "6.5", "B", "W", "\\]"])
_PROPERTY = st.builds(lambda ident, values: ident + "".join(f"[{v}]" for v in values),
                      st.sampled_from(["B", "W", "AB", "AW", "AE", "SZ", "KM", "HA", "PL", "C", "RU"]),
                      st.lists(_VALUES, min_size=1, max_size=3))
_POINT = st.builds(lambda x, y: x + y, st.sampled_from("abcde"), st.sampled_from("abcde")) | st.sampled_from(["", "tt"])
_MOVE = st.builds(lambda color, point: f";{color}[{point}]", st.sampled_from("BW"), _POINT)
_NODE = _MOVE | _MOVE | _MOVE | st.builds(lambda props: ";" + "".join(props), st.lists(_PROPERTY, max_size=3))


@st.composite
def sgf_trees(draw: st.DrawFn, depth: int = 0) -> str:
    nodes = "".join(draw(st.lists(_NODE, min_size=1, max_size=12)))
    variations = draw(st.lists(sgf_trees(depth + 1), max_size=2)) if depth < 2 else []
    return "(" + nodes + "".join(variations) + ")"


@settings(max_examples=300, deadline=None)
@given(text=st.builds(lambda size, tree: "(;SZ[" + size + "]" + tree[2:], st.sampled_from(["5", "9"]), sgf_trees()))
@pytest.mark.slow
def test_structured_random_records_load_or_raise_sgf_error(text: str) -> None:
    try:
        game = load_sgf(text)
    except SgfError:
        return
    try:
        state = game.to_state()
    except SgfError:
        return
    # Setup after moves starts the history where it stands (as GNU Go sets it up): the moves before it are gone.
    start = max((setup.after for setup in game.later_setup), default=0)
    assert len(state.moves) == len(game.moves) - start
    again = load_sgf(write_sgf(state))
    assert again.moves == game.moves[start:]


def test_katago_rules_strings_are_understood_and_written() -> None:
    custom = replace(Rules.preset("chinese"), ko=KoRule.SITUATIONAL, multi_stone_suicide=True)
    state = GameState(size=9, rules=custom, komi=6)
    text = write_sgf(state)
    assert "RU[koSITUATIONALscoreAREAtaxNONEsui1whbNfpok1]" in text
    assert load_sgf(text).to_state().rules == custom
    japanese = load_sgf("(;SZ[9]RU[koSIMPLEscoreTERRITORYtaxSEKIsui0])").to_state().rules
    assert japanese == Rules.preset("japanese")
    assert load_sgf("(;SZ[9]RU[NZ])").to_state().rules == Rules.preset("new-zealand")
    button = parse_rules_text("koSIMPLEscoreAREAtaxNONEsui0button1")
    assert button is not None and button.has_button and button.ko is KoRule.SIMPLE
    assert rules_text(button) == "koSIMPLEscoreAREAtaxNONEsui0button1"
    assert parse_rules_text("koSIMPLE scorebogus") is None
    assert parse_rules_text("koSIMPLEscoreAREAtaxALLsui0fpok1komi7.5") == Rules.preset("stone-scoring")
    assert rules_text(Rules.preset("aga")) == "aga"
