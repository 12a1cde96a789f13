"""Zobrist, situation and graph hashes: pinned values, transpositions, ko, cycles and history resets."""

from __future__ import annotations

import pytest

from miai.go import zobrist
from miai.go.coords import PASS, Color, from_xy, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from tests.go.fixtures import state_from_board
from tests.go.test_ko import TRIPLE_KO_CYCLE, ko_board

B, W = Color.BLACK, Color.WHITE


def test_pinned_empty_board_hashes() -> None:
    """The tables come from a fixed seed: these values must never change (hashes may be stored or compared)."""
    assert GameState(9).position_hash == 0xA1182940C61DFB6997097EF5E481F822
    assert GameState(19).position_hash == 0x29FC0D58E38A20AA3DEDC01AEB4B94B1
    assert GameState(19).situation_hash == 0x1BF330366C0099EDBC2D81C4CEDE7189
    assert GameState(19).graph_hash == GameState(19).situation_hash


def test_stone_keys_are_distinct_and_128_bit() -> None:
    keys = [k for size in (2, 9, 19, 25) for table in zobrist.stone_keys(size)[1:] for k in table]
    distinct = set(keys)
    assert len(distinct) == 2 * 25 * 25  # a stone's key depends on colour and (x, y), not on the board size
    sizes = {zobrist.size_key(n) for n in range(2, 26)}
    assert len(sizes) == 24 and not sizes & distinct
    assert all(0 < k < 2**128 for k in distinct | sizes)
    assert max(k.bit_length() for k in distinct) == 128


def _play(state: GameState, *vertices: str) -> GameState:
    for v in vertices:
        state.push(PASS if v == "pass" else parse_gtp(v, state.size))
    return state


def test_transposed_move_orders_give_equal_hashes() -> None:
    a = _play(GameState(19), "D4", "Q16", "Q4", "D16", "K10")
    b = _play(GameState(19), "Q4", "D16", "K10", "Q16", "D4")
    assert a.position_hash == b.position_hash
    assert a.situation_hash == b.situation_hash
    assert a.graph_hash == b.graph_hash  # every open-board move has S + E > 11, so history is forgotten
    assert a.graph_hash == a.situation_hash


def test_board_size_is_part_of_the_position_hash() -> None:
    assert GameState(9).position_hash != GameState(13).position_hash
    assert GameState(9).position_hash == zobrist.size_key(9)


def test_ko_point_changes_situation_but_not_position_hash() -> None:
    """Same stones, but in one state White may not retake the ko (leela-zero's KoPntNotSame)."""
    with_ko = state_from_board(ko_board("W", 5), "chinese")
    with_ko.push(from_xy(2, 1, 5))  # Black takes the ko: White is banned from (1, 1)
    without_ko = state_from_board(ko_board("B", 5), "chinese", to_play=W)  # the same stones, set up directly
    assert with_ko.position_hash == without_ko.position_hash
    assert with_ko.situation_hash != without_ko.situation_hash
    assert with_ko.banned_points() == [from_xy(1, 1, 5)] and without_ko.banned_points() == []


def test_side_to_move_komi_and_rules_change_the_situation_hash() -> None:
    base = GameState(9, komi=7.5)
    assert GameState(9, komi=6.5).situation_hash != base.situation_hash
    assert GameState(9, Rules.preset("japanese"), komi=7.5).situation_hash != base.situation_hash
    assert GameState(9, komi=6.5).position_hash == base.position_hash
    white_first = GameState(9, komi=7.5)
    white_first.set_to_play(W)
    assert white_first.situation_hash != base.situation_hash


def test_setting_komi_rehashes_the_history() -> None:
    state = _play(GameState(9, komi=7.5), "E5", "C3", "pass")
    state.komi = 0.5
    fresh = _play(GameState(9, komi=0.5), "E5", "C3", "pass")
    assert (state.situation_hash, state.graph_hash) == (fresh.situation_hash, fresh.graph_hash)
    assert len(state.moves) == 3


def test_passes_chain_the_graph_hash() -> None:
    state = _play(GameState(9), "E5")
    before = state.graph_hash
    _play(state, "pass")
    assert state.graph_hash != state.situation_hash  # a pass never resets
    assert state.graph_hash == zobrist.chain_graph_hash(before, state.situation_hash)


@pytest.mark.parametrize("preset", ["chinese", "japanese"])
def test_ko_cycle_shorter_than_rep_bound_never_repeats_a_graph_hash(preset: str) -> None:
    """Under simple ko the triple-ko cycle returns to the same situation every 6 moves (equal H), but the graph hash
    keeps the history, so it never comes back to an earlier value: the search graph gets no short cycle."""
    state = state_from_board(ko_board("WBW", 9), preset)
    situations, graphs = [state.situation_hash], [state.graph_hash]
    for _ in range(4):
        for x, y in TRIPLE_KO_CYCLE:
            state.push(from_xy(x, y, 9))
            situations.append(state.situation_hash)
            graphs.append(state.graph_hash)
    assert situations[6] == situations[12] == situations[18] == situations[24]  # the same ko is banned each time
    assert len(set(graphs)) == len(graphs)


LARGE_CAPTURE = """
. X O . . . .
X O . O . . .
. X O . . . .
X X X X X X X
O O O O O O .
X X X X X X X
. . . . . . .
"""


def _after(prefix: list[int], last: int) -> GameState:
    state = state_from_board(LARGE_CAPTURE, "chinese")
    for move in prefix:
        state.push(move)
    state.push(last)
    return state


def test_after_a_large_capture_the_history_is_forgotten() -> None:
    """Two histories (one with two passes in it) reach the same situation by capturing six stones: S + E is far
    above 11, so the graph hashes are equal. The same histories ending with a ko capture (S + E = 2) differ."""
    capture, ko_capture = from_xy(6, 4, 7), from_xy(2, 1, 7)
    direct, delayed = _after([], capture), _after([PASS, PASS], capture)
    assert direct.captures(B) == delayed.captures(B) == 6
    assert direct.situation_hash == delayed.situation_hash
    assert direct.graph_hash == delayed.graph_hash == direct.situation_hash
    direct_ko, delayed_ko = _after([], ko_capture), _after([PASS, PASS], ko_capture)
    assert direct_ko.situation_hash == delayed_ko.situation_hash
    assert direct_ko.graph_hash != delayed_ko.graph_hash


@pytest.mark.parametrize(("rep_bound", "resets"), [(3, True), (8, True), (9, False), (11, False)])
def test_rep_bound_decides_which_moves_reset(rep_bound: int, resets: bool) -> None:
    """A Black stone in the corner of a 3x3 space walled by White: S = 1, E = 8, so S + E = 9."""
    state = GameState(7, Rules.preset("chinese"), rep_bound=rep_bound)
    state.set_stones([], [from_xy(3, y, 7) for y in range(4)] + [from_xy(x, 3, 7) for x in range(3)])
    state.push(from_xy(0, 0, 7))
    assert (state.graph_hash == state.situation_hash) is resets


def test_rep_bound_is_validated() -> None:
    with pytest.raises(ValueError):
        GameState(9, rep_bound=2)
    with pytest.raises(ValueError):
        GameState(9, rep_bound=51)


def test_random_transpositions_share_every_hash() -> None:
    """Black's and White's moves played in shuffled orders (colours still alternating) on an open 19x19 board:
    same position, situation and graph hash, because open-board moves all reset the graph hash."""
    import random

    rng = random.Random(7)
    for _ in range(20):
        points = rng.sample([m for m in range(361) if (m // 19) % 2 == 0 and m % 2 == 0], 12)  # never adjacent
        black, white = points[:6], points[6:]
        results = set()
        for _ in range(3):
            rng.shuffle(black)
            rng.shuffle(white)
            state = GameState(19)
            for b, w in zip(black, white):
                state.push(b)
                state.push(w)
            results.add((state.position_hash, state.situation_hash, state.graph_hash))
        assert len(results) == 1


def test_graph_hash_chaining_is_order_sensitive() -> None:
    """The mixer must not commute: the same states visited in another order give another graph hash."""
    g, h1, h2 = (zobrist.key(f"test/{i}") for i in range(3))
    assert zobrist.chain_graph_hash(zobrist.chain_graph_hash(g, h1), h2) != zobrist.chain_graph_hash(
        zobrist.chain_graph_hash(g, h2), h1
    )
    assert zobrist.mix128(g) != g and zobrist.mix128(g) < 2**128
    assert len({zobrist.mix128(k) >> 64 for k in range(1000)}) == 1000  # small inputs spread over the high half
