"""Hand-made positions: simple ko, send-two-return-one, triple ko, positional vs situational superko, snapback,
multi-stone suicide, eyes and seki."""

from __future__ import annotations

import pytest

from miai.go.coords import PASS, Color, from_xy, parse_gtp
from miai.go.errors import IllegalMoveError, IllegalReason
from miai.go.state import GameState
from tests.go.fixtures import render, state_from_board

B, W = Color.BLACK, Color.WHITE

# One ko shape per three rows: "W" means White sits inside (Black can capture at column 2), "B" the reverse.
KO_ROWS = {
    "W": [". X O . .", "X O . O .", ". X O . ."],
    "B": [". X O . .", "X . X O .", ". X O . ."],
}


def ko_board(kinds: str, width: int) -> str:
    """Stacked ko shapes (three rows each), padded with empty columns to a square board."""
    rows = [row for kind in kinds for row in KO_ROWS[kind]]
    rows += [". " * 5] * (width - len(rows))
    return "\n".join(row + " ." * (width - 5) for row in rows)


def take(state: GameState, x: int, y: int, color: Color | None = None) -> None:
    state.push(from_xy(x, y, state.size), color)


def test_simple_ko_forbids_immediate_recapture_only() -> None:
    state = state_from_board(ko_board("W", 5), "chinese")
    take(state, 2, 1)  # Black captures the White stone at (1, 1)
    assert state.captures(B) == 1
    assert state.legality(from_xy(1, 1, 5)) is IllegalReason.KO
    assert state.banned_points() == [from_xy(1, 1, 5)]
    with pytest.raises(IllegalMoveError) as err:
        take(state, 1, 1)
    assert err.value.reason is IllegalReason.KO
    take(state, 4, 4)  # White plays elsewhere (a ko threat), Black answers
    take(state, 4, 3)
    assert state.legality(from_xy(1, 1, 5)) is None
    take(state, 1, 1)  # White retakes
    assert state.captures(W) == 1
    assert state.legality(from_xy(2, 1, 5)) is IllegalReason.KO


def test_a_pass_lifts_the_ko_ban() -> None:
    state = state_from_board(ko_board("W", 5), "chinese")
    take(state, 2, 1)
    state.push(PASS)
    state.push(PASS)  # Black passes too: White may now retake (the game is over, but moves stay legal)
    assert state.legality(from_xy(1, 1, 5)) is None


def test_ko_ban_is_for_the_opponent_only() -> None:
    """GTP may play the same colour twice: Black capturing, then Black again at the ko point is not a ko recapture."""
    state = state_from_board(ko_board("W", 5), "chinese")
    take(state, 2, 1)
    assert state.legality(from_xy(1, 1, 5), B) is None
    assert state.legality(from_xy(1, 1, 5), W) is IllegalReason.KO


TRIPLE_KO = ["W", "B", "W"]
TRIPLE_KO_CYCLE = [(2, 1), (1, 4), (2, 7), (1, 1), (2, 4), (1, 7)]  # B, W, B, W, B, W


@pytest.mark.parametrize("preset", ["chinese", "japanese"])
def test_triple_ko_cycles_forever_under_simple_ko(preset: str) -> None:
    state = state_from_board(ko_board("WBW", 9), preset)
    start = render(state)
    for _ in range(3):
        for x, y in TRIPLE_KO_CYCLE:
            take(state, x, y)
        assert render(state) == start
        assert state.to_play is B
    assert state.captures(B) == state.captures(W) == 9


@pytest.mark.parametrize("preset", ["tromp-taylor", "chinese-ogs", "aga", "new-zealand"])
def test_triple_ko_repetition_is_banned_by_superko(preset: str) -> None:
    state = state_from_board(ko_board("WBW", 9), preset)
    for x, y in TRIPLE_KO_CYCLE[:-1]:
        take(state, x, y)
    last = from_xy(*TRIPLE_KO_CYCLE[-1], 9)
    assert state.legality(last) is IllegalReason.SUPERKO
    assert last in state.banned_points()
    assert last not in state.legal_moves()


def test_positional_and_situational_superko_differ_after_a_pass() -> None:
    """Double ko with a pass inside the cycle: the start position comes back with the other player to move.
    Positional superko forbids that, situational superko allows it."""
    sequence = [(2, 1, B), (1, 4, W), None, (1, 1, W), (2, 4, B)]
    results = {}
    for preset in ("chinese-ogs", "aga", "chinese"):
        state = state_from_board(ko_board("WB", 7), preset)
        start = render(state)
        for step in sequence[:-1]:
            state.push(PASS) if step is None else take(state, *step)
        x, y, color = sequence[-1]
        results[preset] = state.legality(from_xy(x, y, 7), color)
        if results[preset] is None:
            take(state, x, y, color)
            assert render(state) == start and state.to_play is W
    assert results == {"chinese-ogs": IllegalReason.SUPERKO, "aga": None, "chinese": None}


# Send two, return one (the classic corner shape): Black D7 puts two stones in atari ("sends two"), White B7 takes
# them, Black C7 takes White's two corner stones back, White A7 replays its corner stone ("returns one" point):
# the start again after four moves, none of them a single-stone ko recapture.
SEND_TWO_RETURN_ONE = """
O . X . O . .
X X O O O . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""
SEND_TWO_CYCLE = ["D7", "B7", "C7", "A7"]


def test_send_two_return_one_cycles_forever_under_simple_ko() -> None:
    state = state_from_board(SEND_TWO_RETURN_ONE, "chinese")
    start = render(state)
    for _ in range(3):
        for vertex in SEND_TWO_CYCLE:
            state.push(parse_gtp(vertex, 7))
        assert render(state) == start and state.to_play is B
    assert state.captures(B) == state.captures(W) == 6


@pytest.mark.parametrize("preset", ["tromp-taylor", "chinese-ogs", "aga", "new-zealand"])
def test_send_two_return_one_is_cut_by_superko(preset: str) -> None:
    state = state_from_board(SEND_TWO_RETURN_ONE, preset)
    for vertex in SEND_TWO_CYCLE[:-1]:
        state.push(parse_gtp(vertex, 7))
    corner = parse_gtp("A7", 7)
    assert state.legality(corner) is IllegalReason.SUPERKO
    assert state.banned_points() == [corner]
    assert state.legality(parse_gtp("A5", 7)) is None  # only the repeating move is banned


def test_snapback_captures_the_capturing_group() -> None:
    state = state_from_board(
        """
        X . . O X
        X O O O X
        X X X X X
        . . . . .
        . . . . .
        """,
        "chinese",
    )
    take(state, 2, 0)  # the throw-in: White is now in atari
    assert state.board.liberty_count(from_xy(1, 1, 5)) == 1
    take(state, 1, 0)  # White captures one stone ...
    assert state.captures(W) == 1
    assert state.legality(from_xy(2, 0, 5)) is None  # ... and no ko: the snapback is legal
    take(state, 2, 0)
    assert state.captures(B) == 5
    assert render(state).splitlines()[:2] == ["X . X . X", "X . . . X"]


SUICIDE_BOARD = """
. X O .
X X O .
O O O .
. . . .
"""


@pytest.mark.parametrize(("preset", "legal"), [("tromp-taylor", True), ("new-zealand", True), ("chinese", False)])
def test_multi_stone_suicide_follows_the_rules(preset: str, legal: bool) -> None:
    state = state_from_board(SUICIDE_BOARD, preset)
    corner = from_xy(0, 0, 4)
    if not legal:
        assert state.legality(corner) is IllegalReason.SUICIDE
        return
    hash_before = state.position_hash
    state.push(corner)
    assert render(state).splitlines()[:2] == [". . O .", ". . O ."]
    assert state.captures(W) == 4  # suicided stones count as White's prisoners
    state.pop()
    assert state.position_hash == hash_before and state.captures(W) == 0


@pytest.mark.parametrize("preset", ["tromp-taylor", "new-zealand", "chinese"])
def test_single_stone_suicide_is_never_legal(preset: str) -> None:
    state = state_from_board(". X .\nX . .\n. . .", preset, to_play=W)
    assert state.legality(from_xy(0, 0, 3)) is IllegalReason.SUICIDE
    assert state.legality(from_xy(0, 0, 3), B) is None


def test_eyes_two_eyed_group_cannot_be_captured() -> None:
    state = state_from_board(
        """
        . X . X O
        X X X X O
        O O O O O
        . . . . .
        . . . . .
        """,
        "tromp-taylor",
        to_play=W,
    )
    for eye in (from_xy(0, 0, 5), from_xy(2, 0, 5)):
        assert state.legality(eye) is IllegalReason.SUICIDE  # single stone with no liberty and no capture
        assert state.legality(eye, B) is None  # Black may fill its own eye
    take(state, 0, 0, B)  # once Black fills one eye, White can capture by playing the other
    assert state.legality(from_xy(2, 0, 5), W) is None
    take(state, 2, 0, W)
    assert state.captures(W) == 7


SEKI = """
. X O . .
O X O . .
. X O . .
X X O . .
O O O . .
"""


def test_seki_both_shared_liberties_are_self_atari() -> None:
    for first, second, captured in ((B, W, 6), (W, B, 2)):
        state = state_from_board(SEKI, "chinese", to_play=first)
        take(state, 0, 0)  # either player filling a shared liberty puts their own group in atari ...
        assert state.board.liberty_count(from_xy(0, 0, 5)) == 1
        take(state, 0, 2)  # ... and the other captures it
        assert state.to_play is first and state.captures(second) == captured
        assert state.color_at(from_xy(0, 0, 5)) is Color.EMPTY


def test_seki_shared_liberties_are_neutral_in_area_scoring() -> None:
    state = state_from_board(SEKI, "chinese", komi=0)
    # Black: 5 stones. White: 8 stones + the 10 empty points of columns D-E. The two shared points count for nobody.
    assert state.score() == 18 - 5


@pytest.mark.parametrize(("preset", "expected"), [("tromp-taylor", IllegalReason.SUPERKO), ("new-zealand", None)])
def test_plain_move_can_repeat_a_position_after_a_suicide(preset: str, expected: IllegalReason | None) -> None:
    """Black suicides three stones, then puts them back one by one while White passes. The last, non-capturing
    stone recreates the start (with White to move): positional superko forbids it, situational superko does not
    (the start had Black to move)."""
    state = state_from_board(SUICIDE_BOARD, preset)
    state.push(from_xy(0, 0, 4))  # multi-stone suicide
    for x, y in ((1, 0), (0, 1)):
        state.push(PASS)
        state.push(from_xy(x, y, 4), B)
    state.push(PASS)
    last = from_xy(1, 1, 4)
    assert state.legality(last) is expected
    assert (last in state.banned_points()) is (expected is not None)
