"""The lean playout board and random playouts: rules, eye test, scoring, ownership."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS, Color
from miai.nets.playouts import (
    PlayoutBoard,
    PlayoutError,
    PlayoutPosition,
    board_from_position,
    final_score,
    play_out,
    run_playouts,
)

EMPTY, BLACK, WHITE = Color.EMPTY, Color.BLACK, Color.WHITE


def parse(diagram: str) -> tuple[int, tuple[int, ...]]:
    """(size, flat stones) from rows of ``. X O`` (X black, O white), top row first."""
    rows = [line.split() for line in diagram.strip().splitlines()]
    size = len(rows)
    assert all(len(row) == size for row in rows), "diagram must be square"
    codes = {".": EMPTY, "X": BLACK, "O": WHITE}
    return size, tuple(codes[c] for row in rows for c in row)


def board(diagram: str) -> PlayoutBoard:
    size, stones = parse(diagram)
    return PlayoutBoard.from_stones(stones, size)


def pt(b: PlayoutBoard, x: int, y: int) -> int:
    """Padded index of column x, row y (row 0 on top)."""
    return b.geometry.points[y * b.geometry.size + x]


def flat_colors(b: PlayoutBoard) -> list[int]:
    return [b.color[p] for p in b.geometry.points]


def reference_chains(b: PlayoutBoard) -> dict[int, tuple[frozenset[int], frozenset[int]]]:
    """Flood-fill chains and liberties from the colours alone: point -> (stones, liberties)."""
    result: dict[int, tuple[frozenset[int], frozenset[int]]] = {}
    for p in b.geometry.points:
        colour = b.color[p]
        if colour in (EMPTY,) or p in result:
            continue
        stones, libs, stack = {p}, set(), [p]
        while stack:
            q = stack.pop()
            for n in b.geometry.neighbours[q]:
                if b.color[n] == EMPTY:
                    libs.add(n)
                elif b.color[n] == colour and n not in stones:
                    stones.add(n)
                    stack.append(n)
        for q in stones:
            result[q] = (frozenset(stones), frozenset(libs))
    return result


def assert_consistent(b: PlayoutBoard) -> None:
    """The incremental chains, liberties and empty list agree with a from-scratch flood fill."""
    for p, (stones, libs) in reference_chains(b).items():
        root = b.head[p]
        assert set(b.members[root]) == stones  # type: ignore[arg-type]
        assert b.libs[root] == libs
    assert sorted(b.empties) == sorted(p for p in b.geometry.points if b.color[p] == EMPTY)


# -- board rules ------------------------------------------------------------------------------------------------


def test_capture_and_liberties() -> None:
    b = board("""
        . X . .
        X O X .
        . . . .
        . . . .
    """)
    white = pt(b, 1, 1)
    assert b.liberties(white) == 1
    assert b.is_legal(pt(b, 1, 2), BLACK)
    b.play(pt(b, 1, 2), BLACK)
    assert b.color[white] == EMPTY
    assert b.captures[BLACK] == 1
    assert b.liberties(pt(b, 1, 2)) == 4  # gained the captured point
    assert_consistent(b)


def test_suicide_is_illegal_but_capturing_is_not() -> None:
    b = board("""
        . X . .
        X . . .
        . . O .
        . . . .
    """)
    assert not b.is_legal(pt(b, 0, 0), WHITE)  # single-stone suicide
    assert b.is_legal(pt(b, 0, 0), BLACK)
    b2 = board("""
        . X O .
        X O . .
        O . . .
        . . . .
    """)
    # White at A4 has no liberty but captures the two black stones in atari: legal.
    assert b2.is_legal(pt(b2, 0, 0), WHITE)
    b2.play(pt(b2, 0, 0), WHITE)
    assert b2.color[pt(b2, 1, 0)] == EMPTY and b2.color[pt(b2, 0, 1)] == EMPTY
    assert_consistent(b2)


def test_simple_ko_bans_immediate_recapture_only() -> None:
    b = board("""
        . X O .
        X O . O
        . X O .
        . . . .
    """)
    b.play(pt(b, 2, 1), BLACK)  # captures the white stone at B3
    assert b.color[pt(b, 1, 1)] == EMPTY
    assert b.ko == pt(b, 1, 1)
    assert not b.is_legal(pt(b, 1, 1), WHITE)
    b.play(pt(b, 3, 3), WHITE)  # a ko threat elsewhere lifts the ban
    assert b.ko == PASS
    assert b.is_legal(pt(b, 1, 1), WHITE)


def test_merging_chains_keeps_liberties_right() -> None:
    b = board("""
        X . X . .
        . . . . .
        X . X . .
        . . . . .
        . . . . .
    """)
    b.play(pt(b, 1, 0), BLACK)
    b.play(pt(b, 1, 2), BLACK)
    b.play(pt(b, 1, 1), BLACK)  # joins all six stones
    assert b.liberties(pt(b, 0, 0)) == b.liberties(pt(b, 2, 2)) == len(b.libs[b.head[pt(b, 1, 1)]])  # type: ignore[arg-type]
    assert len({b.head[pt(b, x, y)] for x, y in [(0, 0), (2, 0), (0, 2), (2, 2), (1, 1)]}) == 1
    assert_consistent(b)


def test_random_playouts_keep_board_consistent() -> None:
    rng = random.Random(42)
    for size in (5, 9):
        b = PlayoutBoard.from_stones((0,) * size * size, size)
        color, passes = BLACK, 0
        for _ in range(3 * size * size):
            p = b.draw_move(color, rng.random)
            if p == PASS:
                passes += 1
                b.play(PASS, color)
                if passes == 2:
                    break
            else:
                passes = 0
                b.place(p, color)
            assert_consistent(b)
            color = 3 - color
        assert passes == 2


def test_copy_is_independent() -> None:
    b = board("""
        . X . .
        X O X .
        . . . .
        . . . .
    """)
    c = b.copy()
    c.play(pt(c, 1, 2), BLACK)
    assert b.color[pt(b, 1, 1)] == WHITE and b.liberties(pt(b, 1, 1)) == 1
    assert_consistent(b)
    assert_consistent(c)


# -- eyes ---------------------------------------------------------------------------------------------------------


def test_centre_eye_tolerates_one_opponent_diagonal_not_two() -> None:
    one = board("""
        . . . . .
        . O X X .
        . X . X .
        . X X X .
        . . . . .
    """)
    assert one.is_true_eye(pt(one, 2, 2), BLACK)
    assert not one.is_true_eye(pt(one, 2, 2), WHITE)
    two = board("""
        . . . . .
        . O X O .
        . X . X .
        . X X X .
        . . . . .
    """)
    assert not two.is_true_eye(pt(two, 2, 2), BLACK)


def test_edge_and_corner_eyes_tolerate_no_opponent_diagonal() -> None:
    edge = board("""
        X . X . .
        . X X . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert edge.is_true_eye(pt(edge, 1, 0), BLACK)
    false_edge = board("""
        X . X . .
        O X X . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert not false_edge.is_true_eye(pt(false_edge, 1, 0), BLACK)
    corner = board("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert corner.is_true_eye(pt(corner, 0, 0), BLACK)
    false_corner = board("""
        . X . . .
        X O . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    assert not false_corner.is_true_eye(pt(false_corner, 0, 0), BLACK)


def test_point_with_an_empty_or_opponent_neighbour_is_no_eye() -> None:
    b = board("""
        . X . . .
        X . X . .
        . X O . .
        . . . . .
        . . . . .
    """)
    assert b.is_true_eye(pt(b, 0, 0), BLACK)  # corner: the empty diagonal does not spoil it
    assert b.is_true_eye(pt(b, 1, 1), BLACK)  # centre: one white diagonal is tolerated
    assert not b.is_true_eye(pt(b, 1, 0), BLACK)  # empty neighbour
    assert not b.is_true_eye(pt(b, 2, 0), BLACK)  # empty neighbours
    assert not b.is_true_eye(pt(b, 2, 1), BLACK)  # occupied


TWO_LIVE_GROUPS = """
    . X O . O
    X X O O O
    X X O O O
    X . X O O
    X X X O .
"""


def test_playout_policy_never_fills_own_true_eyes() -> None:
    # Each side's only empty points are its own two true eyes or the other side's (suicide): both must pass.
    b = board(TWO_LIVE_GROUPS)
    rng = random.Random(0)
    for _ in range(20):
        assert b.draw_move(BLACK, rng.random) == PASS
        assert b.draw_move(WHITE, rng.random) == PASS
    assert sorted(b.empties) == sorted([pt(b, 0, 0), pt(b, 1, 3), pt(b, 3, 0), pt(b, 4, 4)])


def test_playout_policy_avoids_a_true_eye_but_may_fill_a_false_one() -> None:
    true_eye = board("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    false_eye = board("""
        . X . . .
        X O . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    rng = random.Random(1)
    chosen_true = {true_eye.copy().draw_move(BLACK, rng.random) for _ in range(300)}
    chosen_false = {false_eye.copy().draw_move(BLACK, rng.random) for _ in range(300)}
    corner = pt(true_eye, 0, 0)
    assert corner not in chosen_true
    assert corner in chosen_false
    # Every other empty point (22 empty, less the true eye) is a candidate: the draws cover them all.
    assert len(chosen_true) == 21 and len(chosen_false) == 22


def test_no_playout_move_fills_the_movers_true_eye() -> None:
    rng = random.Random(5)
    for _ in range(20):
        b = PlayoutBoard.from_stones((0,) * 49, 7)
        color, passes = BLACK, 0
        while passes < 2:
            eyes = {p for p in b.empties if b.is_true_eye(p, color)}
            p = b.draw_move(color, rng.random)
            assert p not in eyes
            if p == PASS:
                passes += 1
                b.play(PASS, color)
            else:
                passes = 0
                b.place(p, color)
            color = 3 - color
        # At the end every empty point is an eye or a suicide point for both players: a finished game.
        for p in b.empties:
            for mover in (BLACK, WHITE):
                assert b.is_true_eye(p, mover) or not b.is_legal(p, mover)


# -- scoring ------------------------------------------------------------------------------------------------------


def test_area_score_of_a_finished_position() -> None:
    size, stones = parse(TWO_LIVE_GROUPS)
    b = PlayoutBoard.from_stones(stones, size)
    owners = b.owners()
    assert owners.count(BLACK) == 12 and owners.count(WHITE) == 13 and owners.count(EMPTY) == 0
    position = PlayoutPosition(size=size, stones=stones, komi=0.5)
    assert final_score(b, owners, position) == pytest.approx(13 - 12 + 0.5)


def test_territory_score_counts_empty_points_and_prisoners() -> None:
    size, stones = parse(TWO_LIVE_GROUPS)
    b = PlayoutBoard.from_stones(stones, size)
    # 2 points of territory each; Black captured 5 stones earlier, White 1; komi 6.5 for White.
    position = PlayoutPosition(size=size, stones=stones, komi=6.5, territory=True, captures=(5, 1))
    assert final_score(b, b.owners(), position) == pytest.approx((2 + 1) - (2 + 5) + 6.5)


def test_dame_between_groups_belongs_to_nobody() -> None:
    b = board("""
        X X . O O
        X X . O O
        X X . O O
        X X . O O
        X X . O O
    """)
    owners = b.owners()
    assert owners.count(BLACK) == 10 and owners.count(WHITE) == 10 and owners.count(EMPTY) == 5


def test_playout_from_a_board_black_owns_entirely() -> None:
    # Black stones everywhere but two separate eyes: nothing can happen, both pass, Black owns all 25 points.
    size, stones = parse("""
        . X X X X
        X X X X X
        X X X X X
        X X X X X
        X X X X .
    """)
    for to_play in (BLACK, WHITE):
        position = PlayoutPosition(size=size, stones=stones, to_play=to_play, komi=7.5)
        stats = run_playouts(position, 5, random.Random(0))
        me_black = to_play == BLACK
        assert stats.playouts == 5
        assert stats.win_rate == (1.0 if me_black else 0.0)
        assert stats.score_mean == pytest.approx((25 - 7.5) if me_black else -(25 - 7.5))
        assert stats.score_stdev == pytest.approx(0.0)
        assert list(stats.ownership()) == [1.0 if me_black else -1.0] * 25


def test_playout_ends_after_two_passes_counting_passes_already_made() -> None:
    size, stones = parse(TWO_LIVE_GROUPS)
    b = PlayoutBoard.from_stones(stones, size)
    assert play_out(b.copy(), BLACK, random.Random(0).random) == 2
    assert play_out(b.copy(), BLACK, random.Random(0).random, passes=1) == 1
    assert play_out(b.copy(), BLACK, random.Random(0).random, passes=2) == 0


def test_banned_points_apply_to_the_first_move_only() -> None:
    size = 3
    stones = (0,) * 9
    b = PlayoutBoard.from_stones(stones, size)
    all_but_one = frozenset(p for p in b.geometry.points if p != pt(b, 1, 1))
    rng = random.Random(3)
    assert b.copy().draw_move(BLACK, rng.random, all_but_one) == pt(b, 1, 1)
    assert b.copy().draw_move(BLACK, rng.random, frozenset(b.geometry.points)) == PASS


def test_move_cap_stops_a_playout() -> None:
    b = PlayoutBoard.from_stones((0,) * 81, 9)
    assert play_out(b, BLACK, random.Random(0).random, max_moves=10) == 10
    assert len(b.empties) == 71


def test_position_validation() -> None:
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=3, stones=(0,) * 8)
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=3, stones=(0,) * 9, to_play=0)
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=3, stones=(0,) * 8 + (4,))
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=1, stones=(0,))
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=3, stones=(0,) * 9, banned=(9,))
    with pytest.raises(PlayoutError):
        PlayoutPosition(size=3, stones=(0,) * 9, last_move=9)


def test_board_from_position_matches_stones() -> None:
    size, stones = parse(TWO_LIVE_GROUPS)
    b = board_from_position(PlayoutPosition(size=size, stones=stones))
    assert flat_colors(b) == list(stones)
    assert_consistent(b)


def test_benchmark_reports_whole_playouts() -> None:
    from miai.nets.playouts import benchmark_playouts

    result = benchmark_playouts(5, seconds=0.01, seed=2)
    assert result.playouts >= 10 and result.playouts % 10 == 0
    # A playout from the empty 5x5 board fills most points (all but the eyes) and stops at the 3 * area cap.
    assert 15 < result.moves_per_playout < 3 * 25
    assert result.playouts_per_second > 0 and result.cpu_seconds > 0


# -- tactical playouts --------------------------------------------------------------------------------------------


def test_urgent_capture_of_the_last_move_in_atari() -> None:
    b = board("""
        . . . . .
        . X O . .
        X O . . .
        . X . . .
        . . . . .
    """)
    last = pt(b, 1, 2)  # White's B3 is in atari: its last liberty is C3
    assert b.urgent_moves(BLACK, last) == [pt(b, 2, 2)]
    assert b.urgent_moves(BLACK, PASS) == []
    assert b.urgent_moves(WHITE, last) == []  # only the opponent's move is answered


def test_urgent_escape_when_extending_gains_liberties() -> None:
    b = board("""
        . . . . .
        . . O . .
        . O X . .
        . . O . .
        . . . . .
    """)
    last = pt(b, 2, 3)  # White's C2 put the black stone in atari: D3 extends it to three liberties
    assert b.urgent_moves(BLACK, last) == [pt(b, 3, 2)]


def test_no_escape_into_a_dead_end_but_a_counter_capture() -> None:
    b = board("""
        . . . . .
        . X O O .
        . O X . .
        . X O O .
        . . . . .
    """)
    # White's C2 put Black's C3 in atari. Extending at D3 would leave one liberty (E3): no escape. But White's B3,
    # touching C3, is itself in atari: capturing it at A3 is the answer.
    moves = b.urgent_moves(BLACK, pt(b, 2, 3))
    assert moves == [pt(b, 0, 2)]


def test_tactical_playouts_keep_the_board_consistent_and_eyes_intact() -> None:
    rng = random.Random(9)
    for _ in range(10):
        b = PlayoutBoard.from_stones((0,) * 49, 7)
        color, passes, last = BLACK, 0, PASS
        while passes < 2:
            eyes = {p for p in b.empties if b.is_true_eye(p, color)}
            urgent = b.urgent_moves(color, last)
            assert not eyes & set(urgent)
            p = urgent[0] if urgent else b.draw_move(color, rng.random)
            if urgent:
                b.empties.remove(p)
            if p == PASS:
                passes += 1
                b.play(PASS, color)
            else:
                passes = 0
                b.place(p, color)
            assert_consistent(b)
            color, last = 3 - color, p


def test_tactical_playouts_save_a_group_that_light_ones_often_lose() -> None:
    # White has just put Black's four stones in atari with D5 (x=3, y=2); extending at D4 gives them three
    # liberties. Light playouts find it only by luck; tactical ones always extend first.
    size, stones = parse("""
        . . . . . . .
        . O O O . . .
        O X X O . . .
        O X X . . . .
        . O O . . . .
        . . . . . . .
        . . . . . . .
    """)
    flat_last = 2 * 7 + 3
    position = PlayoutPosition(size=size, stones=stones, to_play=BLACK, komi=0.5, last_move=flat_last)
    light = run_playouts(position, 200, random.Random(1))
    tactical = run_playouts(position, 200, random.Random(1), tactical=True)
    assert tactical.ownership()[2 * 7 + 1] > light.ownership()[2 * 7 + 1] + 0.2


@pytest.mark.parametrize("size", [2, 5, 9, 19, 25])
def test_padded_geometry_matches_the_grid(size: int) -> None:
    geometry = PlayoutBoard(size).geometry
    on_board = set(geometry.points)
    for move, p in enumerate(geometry.points):
        y, x = divmod(move, size)
        assert geometry.flat[p] == move
        for table, steps in ((geometry.neighbours, ((1, 0), (-1, 0), (0, 1), (0, -1))),
                             (geometry.diagonals, ((1, 1), (-1, 1), (1, -1), (-1, -1)))):
            expected = {(x + dx, y + dy) for dx, dy in steps if 0 <= x + dx < size and 0 <= y + dy < size}
            indices = table[p]
            assert all(0 <= q < geometry.length for q in indices)
            assert {divmod(geometry.flat[q], size)[::-1] for q in indices if q in on_board} == expected
            # Off-board neighbours and diagonals are padding, which reads as the edge.
            assert all(PlayoutBoard(size).color[q] == 3 for q in indices if q not in on_board)


# -- properties over random positions -----------------------------------------------------------------------------


def _valid(b: PlayoutBoard) -> bool:
    """No chain without liberties (a position a real game can reach)."""
    return all(libs for libs in b.libs if libs is not None)


@settings(max_examples=40, deadline=None)
@given(size=st.integers(2, 7), data=st.data())
def test_any_valid_position_plays_out_consistently(size: int, data: st.DataObject) -> None:
    stones = data.draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=size * size, max_size=size * size))
    b = PlayoutBoard.from_stones(stones, size)
    if not _valid(b):
        return
    assert_consistent(b)
    seed = data.draw(st.integers(0, 2**32 - 1))
    to_play = data.draw(st.sampled_from([BLACK, WHITE]))
    tactical = data.draw(st.booleans())
    position = PlayoutPosition(size=size, stones=tuple(stones), to_play=to_play, komi=0.5)
    played = play_out(b, to_play, random.Random(seed).random, tactical=tactical)
    assert played <= 3 * size * size
    assert_consistent(b)
    owners = b.owners()
    # Every point has one owner or none; the score is the owner difference plus komi.
    assert len(owners) == size * size
    assert final_score(b, owners, position) == owners.count(WHITE) - owners.count(BLACK) + 0.5
    if played < 3 * size * size:
        # A finished playout leaves no point that either side would still play.
        for p in b.empties:
            for mover in (BLACK, WHITE):
                assert b.is_true_eye(p, mover) or not b.is_legal(p, mover)


def test_draw_is_uniform_over_acceptable_points() -> None:
    # 22 empty points; the corner is Black's true eye, so 21 are acceptable, each with probability 1/21.
    b = board("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    rng = random.Random(21)
    counts: dict[int, int] = {}
    draws = 21 * 300
    for _ in range(draws):
        trial = b.copy()
        p = trial.draw_move(BLACK, rng.random)
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 21 and pt(b, 0, 0) not in counts
    # 300 expected per point; a binomial standard deviation is about 17, so 5 sigma each way.
    assert all(215 < n < 385 for n in counts.values())


# -- no self-atari ------------------------------------------------------------------------------------------------

def test_no_self_atari_refuses_putting_two_stones_in_atari_but_allows_a_throw_in_and_captures() -> None:
    b = board("""
        . . . . .
        . O O O .
        O X X . .
        . O O O .
        . . . . .
    """)
    extend = pt(b, 3, 2)  # Black D3: B3-C3-D3 would keep one liberty (E3), nothing captured
    assert b.bad_self_atari(extend, BLACK) and b.is_legal(extend, BLACK)
    rng = random.Random(2)
    drawn = {b.copy().draw_move(BLACK, rng.random, no_self_atari=True) for _ in range(400)}
    assert extend not in drawn and len(drawn) > 10
    assert extend in {b.copy().draw_move(BLACK, rng.random) for _ in range(400)}  # light playouts play it
    throw_in = pt(b, 0, 1)  # Black A4: a lone stone with one liberty (nakade, ko): still allowed
    assert not b.bad_self_atari(throw_in, BLACK)
    assert not b.bad_self_atari(extend, WHITE)  # White D3 captures B3-C3: never refused
