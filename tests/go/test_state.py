"""GameState behaviour: push/pop, errors, setup and handicap, history boards, copies."""

from __future__ import annotations

import numpy as np
import pytest

from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.errors import IllegalMoveError, IllegalReason, InvalidMoveError, SetupError
from miai.go.rules import Rules
from miai.go.state import GameState, fixed_handicap_points, max_fixed_handicap
from tests.go.fixtures import render, state_from_board

B, W = Color.BLACK, Color.WHITE


def play(state: GameState, *vertices: str) -> GameState:
    for v in vertices:
        state.push(parse_gtp(v, state.size))
    return state


def test_push_pop_round_trip_and_errors() -> None:
    state = GameState(9)
    with pytest.raises(IndexError):
        state.pop()
    play(state, "E5")
    with pytest.raises(IllegalMoveError) as err:
        play(state, "E5")
    assert err.value.reason is IllegalReason.OCCUPIED
    with pytest.raises(InvalidMoveError):
        state.push(81)
    with pytest.raises(InvalidMoveError):
        state.legality(-2)
    assert state.pop() == (B, parse_gtp("E5", 9))
    assert state.moves == [] and state.to_play is B
    assert not state.stones().any()


def test_same_colour_may_play_twice() -> None:
    state = GameState(9)
    state.push(parse_gtp("C3", 9), B)
    state.push(parse_gtp("G7", 9), B)
    assert state.to_play is W
    assert state.moves == [(B, parse_gtp("C3", 9)), (B, parse_gtp("G7", 9))]
    with pytest.raises(InvalidMoveError):
        state.push(parse_gtp("E5", 9), Color.EMPTY)
    with pytest.raises(InvalidMoveError):
        state.push(PASS, Color.EMPTY)


def test_passes_end_the_game_and_a_move_resets_the_count() -> None:
    state = GameState(9)
    state.push(PASS)
    assert state.consecutive_passes == 1 and not state.is_over()
    play(state, "E5")
    assert state.consecutive_passes == 0
    state.push(PASS)
    state.push(PASS)
    assert state.is_over()
    state.pop()
    assert not state.is_over()


def test_board_reads() -> None:
    state = play(GameState(5), "B2", "C2", "B3")
    stones = state.stones()
    assert stones.dtype == np.int8 and stones.shape == (25,)
    assert state.color_at(parse_gtp("C2", 5)) is W
    assert state.chain(parse_gtp("B2", 5)) == sorted([parse_gtp("B2", 5), parse_gtp("B3", 5)])
    assert state.chain(parse_gtp("A1", 5)) == []
    libs = state.liberties()
    assert libs.dtype == np.int16
    assert libs[parse_gtp("B2", 5)] == 5 and libs[parse_gtp("C2", 5)] == 3 and libs[parse_gtp("A1", 5)] == 0


def test_captures_and_board_history() -> None:
    state = state_from_board(
        """
        . X O .
        X O . O
        . X O .
        . . . .
        """,
        "chinese",
    )
    start = state.stones().copy()
    play(state, "C3")  # Black takes the ko stone at B3
    after_capture = state.stones().copy()
    play(state, "D1", "C1")
    assert state.captures(B) == 1 and state.captures(W) == 0
    assert np.array_equal(state.board_history(0), state.stones())
    assert np.array_equal(state.board_history(2), after_capture)
    assert np.array_equal(state.board_history(3), start)
    assert np.array_equal(state.board_history(50), start)  # before the start: the earliest board


def test_board_history_restores_suicided_stones() -> None:
    state = state_from_board(". X O .\nX X O .\nO O O .\n. . . .", "tromp-taylor")
    before = state.stones().copy()
    play(state, "A4")  # multi-stone suicide
    assert np.array_equal(state.board_history(1), before)


def test_legal_moves_for_either_colour() -> None:
    state = state_from_board(". X .\nX . .\n. . .", "chinese")
    corner = parse_gtp("A3", 3)
    assert corner in state.legal_moves(B) and corner not in state.legal_moves(W)
    assert state.is_legal(corner, B) and not state.is_legal(corner, W)
    assert len(state.legal_moves()) == 7  # Black may fill its own eye
    assert len(state.legal_moves(W)) == 6



@pytest.mark.parametrize("rules", ["chinese", "tromp-taylor", "japanese"])
def test_legal_mask_is_the_legal_moves_and_pass_as_arrays_the_caller_may_write(rules: str) -> None:
    rng = np.random.default_rng(7)
    state = GameState(7, Rules.preset(rules))
    for _ in range(60):
        mask = state.legal_mask()
        area = state.size * state.size
        assert mask.dtype == np.bool_ and mask.shape == (area + 1,) and mask[area]
        assert np.flatnonzero(mask[:area]).tolist() == sorted(state.legal_moves())
        assert np.array_equal(state.stones(), [int(state.color_at(m)) for m in range(area)])
        state.stones()[0] = 3  # a copy: the board does not change
        mask[0] = not mask[0]
        assert int(state.color_at(0)) != 3
        moves = state.legal_moves()
        state.push(int(rng.choice(moves)) if moves else PASS)

GNUGO_19 = {
    2: "Q16 D4",
    3: "D16 Q16 D4",
    4: "D16 Q16 D4 Q4",
    5: "D16 Q16 K10 D4 Q4",
    6: "D16 Q16 D10 Q10 D4 Q4",
    7: "D16 Q16 D10 K10 Q10 D4 Q4",
    8: "D16 K16 Q16 D10 Q10 D4 K4 Q4",
    9: "D16 K16 Q16 D10 K10 Q10 D4 K4 Q4",
}


@pytest.mark.parametrize("n", range(2, 10))
def test_fixed_handicap_19x19_matches_gnugo(n: int) -> None:
    state = GameState(19)
    points = state.fixed_handicap(n)
    assert " ".join(to_gtp(m, 19) for m in points) == GNUGO_19[n]
    assert state.handicap == n and state.to_play is W
    assert sorted(int(m) for m in np.flatnonzero(state.stones() == 1)) == points


def test_fixed_handicap_other_sizes() -> None:
    def names(size: int, n: int) -> str:
        return " ".join(to_gtp(m, size) for m in fixed_handicap_points(size, n))

    assert names(9, 2) == "G7 C3"
    assert names(9, 3) == "C7 G7 C3"
    assert names(9, 9) == "C7 E7 G7 C5 E5 G5 C3 E3 G3"
    assert names(13, 4) == "D10 K10 D4 K4"
    assert names(13, 5) == "D10 K10 G7 D4 K4"
    assert names(7, 4) == "C5 E5 C3 E3"
    assert [max_fixed_handicap(n) for n in (5, 6, 7, 8, 9, 10, 19, 25)] == [0, 0, 4, 4, 9, 4, 9, 9]


@pytest.mark.parametrize(("size", "n"), [(19, 1), (19, 10), (7, 5), (10, 5), (5, 2), (19, 0)])
def test_invalid_fixed_handicap(size: int, n: int) -> None:
    with pytest.raises(SetupError, match="invalid handicap"):
        GameState(size).fixed_handicap(n)


def test_handicap_needs_an_empty_board() -> None:
    state = play(GameState(9), "E5")
    with pytest.raises(SetupError, match="board not empty"):
        state.fixed_handicap(2)
    state = GameState(9)
    state.set_stones([parse_gtp("E5", 9)], [])
    with pytest.raises(SetupError, match="board not empty"):
        state.set_handicap([parse_gtp("C3", 9)])


def test_free_handicap() -> None:
    state = GameState(9)
    points = [parse_gtp(v, 9) for v in ("C3", "G7", "E5")]
    state.set_handicap(points)
    assert state.handicap == 3 and state.to_play is W and state.moves == []
    for bad in ([], [points[0], points[0]]):
        with pytest.raises(SetupError):
            GameState(9).set_handicap(bad)


def test_set_stones_rules() -> None:
    state = GameState(5)
    with pytest.raises(SetupError):
        state.set_stones([0], [0])
    with pytest.raises(SetupError):
        state.set_stones([1, 5], [0])  # the white corner stone would have no liberty
    play(state, "C3")
    with pytest.raises(SetupError):
        state.set_stones([0], [])
    with pytest.raises(SetupError):
        state.set_to_play(W)


def test_copy_is_independent_and_identical() -> None:
    state = GameState(9, Rules.preset("aga"), komi=0.5)
    state.fixed_handicap(2)
    play(state, "E5", "D5", "pass")
    copy = state.copy()
    assert (copy.graph_hash, copy.situation_hash, copy.position_hash) == (
        state.graph_hash,
        state.situation_hash,
        state.position_hash,
    )
    assert copy.moves == state.moves and copy.handicap == 2 and copy.to_play is state.to_play
    play(copy, "C5")
    assert render(copy) != render(state)
    assert len(state.moves) == 3


def test_pass_alive_area_and_area_map_follow_the_rules() -> None:
    """A Black group with two eyes in the corner is pass-alive with its eyes; the lone White stone is not."""
    state = state_from_board(
        """
        . X . X . .
        X X X X . .
        . . . . . .
        . . . . O .
        . . . . . .
        . . . . . .
        """,
        "chinese",
    )
    alive = state.pass_alive_area()
    assert alive.dtype == np.int8
    assert set(np.flatnonzero(alive == 1)) == {0, 1, 2, 3, 6, 7, 8, 9}
    assert not (alive == 2).any()
    area = state.area_map()
    assert area[parse_gtp("E3", 6)] == 2  # under area scoring other stones count as their own colour
    assert (state_from_board(render(state), "japanese").area_map() == 0).all()  # territory: planes stay empty


def test_numpy_moves_are_stored_as_ints() -> None:
    state = GameState(9)
    state.push(np.int64(40))
    assert state.moves == [(B, 40)] and type(state.moves[0][1]) is int


def test_copy_and_komi_change_keep_the_superko_history() -> None:
    """Send two, return one under tromp-taylor: after three moves the fourth repeats the start and is banned; the
    ban survives copy() and a komi change (both rebuild the history)."""
    state = state_from_board("O . X . O\nX X O O O\n. . . . .\n. . . . .\n. . . . .", "tromp-taylor")
    for vertex in ("D5", "B5", "C5"):
        state.push(parse_gtp(vertex, 5))
    corner = parse_gtp("A5", 5)
    assert state.legality(corner) is IllegalReason.SUPERKO
    copy = state.copy()
    assert copy.legality(corner) is IllegalReason.SUPERKO and copy.banned_points() == [corner]
    state.komi = 0.5
    assert state.legality(corner) is IllegalReason.SUPERKO and state.banned_points() == [corner]


# On 3x3 under simple ko: Black passes, then a capture and two recaptures bring back the very same stones with
# Black to move (B2 A2 B3 B1, pass, A3 A1 A2).
REPEAT_3X3 = ["B2", "A2", "B3", "B1", "pass", "A3", "A1", "A2"]


def test_a_pass_repeating_an_earlier_pass_ends_the_game_under_simple_ko() -> None:
    state = play(GameState(3, Rules.preset("chinese")), *REPEAT_3X3)
    assert state.to_play == B and state.consecutive_passes == 0
    assert state.pass_repeats_position() and state.pass_ends_game()
    state.push(PASS)
    assert state.is_over() and state.consecutive_passes == 1 and state.moves_this_phase() == 1
    state.pop()
    assert not state.is_over() and state.pass_repeats_position()
    # Positional superko keeps no such rule (and forbids this cycle anyway): only two passes end the game.
    superko = play(GameState(3, Rules.preset("tromp-taylor")), *REPEAT_3X3[:6])
    assert not superko.pass_repeats_position() and not superko.pass_ends_game()


def test_the_button_pass_takes_half_a_point_and_does_not_count() -> None:
    state = GameState(9, Rules.preset("aga-button"), komi=7.0)
    assert state.button_available and not state.pass_ends_game()
    assert state.tromp_taylor_score() == 7.0 - 0.5  # scored now: the player to move (Black) gets it
    state.push(PASS)  # Black takes the button
    assert not state.button_available and state.button_bonus() == -0.5 and state.consecutive_passes == 0
    state.push(PASS)
    assert not state.is_over() and state.pass_ends_game()
    state.push(PASS)
    assert state.is_over() and state.score() == 7.0 - 0.5
    for _ in range(3):
        state.pop()
    assert state.button_available and state.situation_hash == GameState(9, Rules.preset("aga-button"), 7.0).situation_hash
    play(state, "E5")
    state.push(PASS)  # White takes it
    assert state.button_bonus() == 0.5 and state.score() == 7.0 + 0.5 - 81


def test_taking_the_button_clears_the_superko_history() -> None:
    # A situational-superko cycle that is forbidden without the button becomes legal once someone took it,
    # because KataGo treats every position after the button as new (boardhistory.cpp, makeBoardMoveAssumeLegal).
    moves = ["B2", "A2", "B3", "B1", "pass", "A3", "A1"]
    plain = play(GameState(3, Rules.preset("aga")), *moves)
    assert plain.legality(parse_gtp("A2", 3)) == IllegalReason.SUPERKO
    button = play(GameState(3, Rules.preset("aga-button")), *moves)
    assert button.is_legal(parse_gtp("A2", 3))
    button.pop(), button.pop(), button.pop()
    button.pop()  # the button pass: the old history comes back
    assert button.button_available


def test_moves_this_phase_restart_at_the_game_end() -> None:
    state = play(GameState(9), "E5", "pass", "pass")
    assert state.is_over() and state.moves_this_phase() == 1
    play(state, "D4", "pass")
    assert state.moves_this_phase() == 3 and not state.is_over()
    state.pop(), state.pop()
    assert state.moves_this_phase() == 1
    state.pop()
    assert state.moves_this_phase() == 2


def test_local_pattern_marks_stones_in_atari_and_the_edge() -> None:
    # KataGo's subtree value bias groups positions by the 5x5 around a move, marking stones whose chain has one
    # liberty (LocalPatternHasher); off-board points are 3 here, and the ko point comes last.
    state = play(GameState(9), "E5", "D5", "A9", "F5")  # Black E5 keeps E4 and E6
    before = state.local_pattern(parse_gtp("E4", 9))
    assert len(before) == 26 and before.count(1) == 1 and 1 + 4 not in before and 3 not in before
    play(state, "A8", "E6")  # White E6: Black E5 is left with E4 alone
    after = state.local_pattern(parse_gtp("E4", 9))
    assert after.count(1 + 4) == 1 and 1 not in after[:25]
    corner = state.local_pattern(parse_gtp("A1", 9))
    assert corner[:25].count(3) == 16  # 25 points minus the 3x3 on the board


@pytest.mark.parametrize("preset", ["tromp-taylor", "new-zealand", "japanese"])
def test_give_turn_keeps_stones_and_undo_and_copy_agree(preset: str) -> None:
    """give_turn (an SGF PL after moves): the other player moves on the same stones; copy keeps it, pop undoes the
    last move as before, and the hashes are those of a position with that player to move."""
    state = GameState(9, Rules.preset(preset))
    play(state, "E5", "C3", "G7")
    before = (state.position_hash, state.situation_hash, state.graph_hash)
    state.give_turn(B)
    assert state.to_play == B and state.position_hash == before[0] and state.situation_hash != before[1]
    copy = state.copy()
    assert (copy.to_play, copy.situation_hash, copy.graph_hash) == (B, state.situation_hash, state.graph_hash)
    play(state, "D4")
    state.pop()
    assert (state.to_play, state.situation_hash) == (B, copy.situation_hash)
    state.pop()
    assert state.to_play == B and len(state.moves) == 2 and state.color_at(parse_gtp("G7", 9)) == Color.EMPTY
    with pytest.raises(SetupError):
        state.give_turn(Color.EMPTY)


def test_push_without_superko_plays_only_what_superko_alone_forbids() -> None:
    """A record of a game played without superko (SGF readers replay it): superko is waived, simple ko is not."""
    state = GameState(9, Rules.preset("tromp-taylor"))
    for vertex in "C8 C9 C7 B8 A7 A8 B7 A9 B9 A8 A9".split():
        play(state, vertex)
    banned = parse_gtp("B8", 9)
    assert state.legality(banned) == IllegalReason.SUPERKO
    state.push(banned, superko=False)
    assert state.color_at(banned) == W and len(state.moves) == 12
    play(state, "E5")
    state.push(parse_gtp("D5", 9), superko=False)  # a legal move is played as usual
    state.pop()
    state.pop()
    state.pop()
    assert len(state.moves) == 11 and state.legality(banned) == IllegalReason.SUPERKO


def test_fresh_copy_keeps_the_stones_and_drops_the_history() -> None:
    """A finished game's stones searched for themselves: same stones, the side given to move, no moves or passes."""
    state = GameState(9)
    for vertex in ("E5", "C3", "pass", "pass"):
        state.push(parse_gtp(vertex, 9), state.to_play)
    assert state.is_over()
    fresh = state.fresh_copy(Color.WHITE)
    assert (fresh.stones() == state.stones()).all()
    assert fresh.to_play == Color.WHITE and not fresh.moves and not fresh.is_over()
    assert state.moves and state.is_over()  # the game itself is untouched
