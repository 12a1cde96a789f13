"""Scoring: area, territory with dead stones, Tromp-Taylor, komi, handicap bonus, tax, result strings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.go.coords import parse_gtp
from miai.go.rules import Rules, Tax
from miai.go.scoring import area, dead_chains, empty_regions, territory
from miai.go.state import GameState
from tests.go.fixtures import parse_board, state_from_board

# A White stone (B4) dead in Black's area and a Black stone (F3) dead in White's area.
BOARD = """
6 . . X O . .
5 . . X O . .
4 . O X O . .
3 X X X O . X
2 . . X O . .
1 . . X O . .
  A B C D E F
"""
DEAD = [parse_gtp("B4", 6), parse_gtp("F3", 6)]


def test_tromp_taylor_counts_every_stone_alive() -> None:
    state = state_from_board(BOARD, "tromp-taylor", komi=7.5)
    # Black: 9 stones + the 4 points A1-B2; the top left touches the White stone, the right side the Black one.
    assert state.tromp_taylor_score() == 7 - 13 + 7.5
    assert state.score() == state.tromp_taylor_score()


def test_area_scoring_with_dead_stones() -> None:
    state = state_from_board(BOARD, "chinese", komi=7.5)
    assert state.score(DEAD) == 18 - 18 + 7.5
    assert GameState.result_string(state.score(DEAD)) == "W+7.5"


def test_territory_scoring_counts_dead_stones_as_prisoners() -> None:
    state = state_from_board(BOARD, "japanese", komi=6.5)
    # Black: 10 points + 1 prisoner; White: 12 points + 1 prisoner.
    assert state.score(DEAD) == (12 + 1) - (10 + 1) + 6.5


def test_territory_scoring_counts_captures() -> None:
    state = state_from_board(". X O .\nX O . O\n. X O .\n. . . .", "japanese", komi=0)
    before = state.score()
    state.push(parse_gtp("C3", 4))  # Black takes the ko stone on B3
    assert state.captures(1) == 1
    # One prisoner, B3 becomes Black territory, and C3 is no longer White territory.
    assert state.score() == before - 3


@pytest.mark.parametrize(("komi", "result"), [(0, "0"), (-3, "B+3"), (0.5, "W+0.5"), (-0.5, "B+0.5"), (2.25, "W+2.25")])
def test_komi_and_result_strings(komi: float, result: str) -> None:
    state = state_from_board(BOARD, "chinese", komi=komi)
    assert GameState.result_string(state.score(DEAD)) == result


@pytest.mark.parametrize(("preset", "bonus"), [("chinese", 3), ("aga", 2), ("tromp-taylor", 0), ("japanese", 0)])
def test_handicap_bonus(preset: str, bonus: int) -> None:
    state = GameState(9, Rules.preset(preset), komi=0.5)
    state.fixed_handicap(3)
    if preset == "japanese":
        assert state.score() == -78 + 0.5  # territory: the 78 empty points, no bonus
    else:
        assert state.score() == -81 + 0.5 + bonus
        assert state.tromp_taylor_score() == -81 + 0.5 + bonus


def test_tax_all_charges_each_group_up_to_two_eyes() -> None:
    _, colors = parse_board(BOARD)
    for move in DEAD:
        colors[move] = 0
    assert area(colors, 6) == (18, 18)
    # Black's group encloses two regions (pays 2), White's group one (pays 1).
    assert area(colors, 6, Tax.ALL) == (16, 17)
    assert territory(colors, 6, Tax.ALL) == (8, 11)


def test_stone_scoring_counts_a_finished_game_as_katago() -> None:
    # KataGo's count (BoardHistory::countAreaScoreWhiteMinusBlack): two points off each independent-life area,
    # however many eyes: Black's two eye regions and White's one cost both two points, so the 18-18 area stands.
    assert state_from_board(BOARD, "stone-scoring", komi=7.5).score(DEAD) == 7.5
    # The two inner groups in seki touch the dame C7: they keep their stones (Black 4, White 5) but neither their
    # eyes nor a tax; the outer groups keep everything and pay two each. Black 22 + 4, White 15 + 5.
    assert state_from_board(SEKI_WITH_EYES, "stone-scoring", komi=7.5).score() == 20 - 26 + 7.5


def test_empty_regions_and_neutral_points() -> None:
    size, colors = parse_board("X . O\n. . .\n. . .")
    regions = empty_regions(colors, size)
    assert len(regions) == 1 and regions[0][1] == 0 and len(regions[0][0]) == 7
    assert area([0] * 4, 2) == (0, 0)  # an empty board belongs to nobody


# Black's inner group (A7 eye) and White's inner group (E7 eye) share the liberty C7: a seki with one eye each.
SEKI_WITH_EYES = """
7 . X . O . O X
6 X X X O O O X
5 O O O X X X X
4 O . O X . . X
3 O O O X . . X
2 . . O X X X X
1 . . O X . . .
  A B C D E F G
"""


def test_seki_tax_does_not_count_eyes_of_groups_in_seki() -> None:
    size, colors = parse_board(SEKI_WITH_EYES)
    assert territory(colors, size) == (8, 6)
    assert territory(colors, size, Tax.SEKI) == (7, 5)
    japanese = state_from_board(SEKI_WITH_EYES, "japanese", komi=0.5)
    assert japanese.score() == 5 - 7 + 0.5


def test_seki_tax_leaves_ordinary_positions_alone() -> None:
    """Unfilled neutral points between live groups are not seki: nothing is taxed."""
    size, colors = parse_board(BOARD)
    assert territory(colors, size, Tax.SEKI) == territory(colors, size)
    _, no_dead = parse_board(BOARD)
    for move in DEAD:
        no_dead[move] = 0
    assert territory(no_dead, size, Tax.SEKI) == territory(no_dead, size) == (10, 12)


@settings(max_examples=200, deadline=None)
@given(size=st.integers(2, 9), data=st.data())
@pytest.mark.slow
def test_area_and_territory_partition_the_board(size: int, data: st.DataObject) -> None:
    """On any board: black area + white area + neutral points = all points, and area minus territory is the stones."""
    colors = data.draw(st.lists(st.sampled_from([0, 0, 1, 2]), min_size=size * size, max_size=size * size))
    black_area, white_area = area(colors, size)
    black_terr, white_terr = territory(colors, size)
    neutral = sum(len(region) for region, owner in empty_regions(colors, size) if owner == 0)
    assert black_area + white_area + neutral == size * size
    assert black_area - black_terr == colors.count(1) and white_area - white_terr == colors.count(2)
    for tax in (Tax.SEKI, Tax.ALL):
        taxed = territory(colors, size, tax)
        assert 0 <= taxed[0] <= black_terr and 0 <= taxed[1] <= white_terr


# A Black chain of three (B2-B4) shut in by White; the net is sure of two of its stones and unsure of the third.
SHUT_IN = """
5 . O . . .
4 O X O . .
3 O X O . .
2 O X O . .
1 . . O . .
  A B C D E
"""


def test_dead_chains_lifts_a_chain_whole_and_its_points_count_for_the_captor() -> None:
    state = state_from_board(SHUT_IN, "chinese", komi=0.5)
    colors = state.board.colors()
    ownership = [0.0] * 25  # Black's view
    ownership[parse_gtp("B4", 5)] = 0.1
    for vertex in ("B3", "B2"):
        ownership[parse_gtp(vertex, 5)] = -0.9
    for point, color in enumerate(colors):
        if color == 2:
            ownership[point] = -1.0
    chain = sorted(parse_gtp(v, 5) for v in ("B4", "B3", "B2"))
    assert dead_chains(colors, 5, ownership, 0.3) == chain
    # Lifted whole, the chain's points are White's: 25 points and komi. Judged stone by stone, B4 would stay and
    # B3, B2 and the corner below them would reach both colours and count for nobody.
    assert state.score(chain) == 25.5
    assert state.score([parse_gtp("B3", 5), parse_gtp("B2", 5)]) == 19.5


def test_dead_chains_keeps_chains_of_doubtful_ownership() -> None:
    state = state_from_board(SHUT_IN, "chinese", komi=0.5)
    colors = state.board.colors()
    doubtful = [0.2 if color == 2 else -0.2 if color == 1 else 0.0 for color in colors]
    assert dead_chains(colors, 5, doubtful, 0.3) == []
    assert dead_chains(colors, 5, doubtful, 0.0) == sorted(p for p, c in enumerate(colors) if c)
