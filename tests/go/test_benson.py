"""Benson pass-alive stones and territory, and KataGo's area map (planes 18/19), on hand-made positions,
plus two properties on random positions: agreement with a literal set-based transcription of Benson's
definition, and that the opponent's moves can never take anything away from pass-alive status."""

from __future__ import annotations

import random

import numpy as np
import pytest

from miai.go.benson import area_map, area_map_for_rules, pass_alive
from miai.go.geometry import neighbor_table
from miai.go.ladders import ScratchBoard

_CHARS = {".": 0, "X": 1, "O": 2}


def parse(diagram: str) -> tuple[np.ndarray, int]:
    """A square diagram (X black, O white, . empty; top row first) as a flat stones array."""
    rows = [line.split() for line in diagram.strip().splitlines()]
    assert all(len(row) == len(rows) for row in rows), "diagram must be square"
    return np.array([_CHARS[c] for row in rows for c in row], dtype=np.int8), len(rows)


def marks(diagram: str) -> np.ndarray:
    """An expected ownership diagram (X/O/. as 1/2/0)."""
    return parse(diagram)[0]


TWO_EYES = """
. X . X O .
X X X X O .
O O O O O .
. . . . . .
. . . . . .
. . . . . .
"""

# Same shape, but the stone at D6 is a separate chain in atari: the eye at C6 is false.
FALSE_EYE = """
. X . X O .
X X X O O .
O O O O . .
. . . . . .
. . . . . .
. . . . . .
"""


def test_two_eyes_are_pass_alive_with_their_eyes() -> None:
    stones, size = parse(TWO_EYES)
    expected = marks("""
        X X X X . .
        X X X X . .
        . . . . . .
        . . . . . .
        . . . . . .
        . . . . . .
    """)
    assert pass_alive(stones, size).tolist() == expected.tolist()


def test_false_eye_group_is_not_pass_alive() -> None:
    stones, size = parse(FALSE_EYE)
    assert not pass_alive(stones, size).any()


def test_one_eye_is_not_pass_alive() -> None:
    stones, size = parse("""
        . X O . .
        X X O . .
        O O O . .
        . . . . .
        . . . . .
    """)
    assert not pass_alive(stones, size).any()


def test_two_chains_sharing_two_eyes_are_both_alive() -> None:
    # The lone corner stone and the larger chain each touch both eyes, so each has two vital regions.
    stones, size = parse("""
        X . X O .
        . X X O .
        X X O O .
        O O O . .
        . . . . .
    """)
    result = pass_alive(stones, size)
    assert (result[stones == 1] == 1).all()
    assert result[1] == 1 and result[5] == 1  # both eyes are Black's territory


def test_seki_is_not_pass_alive_but_the_surrounding_walls_are() -> None:
    # Black's B7-C7 + A6-D6 (eye A7) and White's E7-F7 + E6-G6 (eye G7) share the liberty D7 and touch
    # nothing else: whoever plays D7 puts both in atari and loses the race, so neither does (a seki).
    # The walls below have two eyes each.
    stones, size = parse("""
        . X X . O O .
        X X X X O O O
        O O O O X X X
        O O O O X X X
        . O . O X . X
        O O O O X X X
        . O . O X . X
    """)
    result = pass_alive(stones, size)
    assert not result[:14].any()
    assert (result[14:] == np.where(np.arange(14, 49) % 7 < 4, 2, 1)).all()
    board = ScratchBoard(stones, size)
    for player in (1, 2):  # the shared liberty is self-atari for both sides
        record = board.play(board.loc(3), player)
        assert len(board.liberties(board.loc(3))) == 1
        board.undo(record)


def test_big_enclosed_region_is_not_territory_but_area_map_gives_it() -> None:
    stones, size = parse("""
        . X . X .
        X X X X X
        . . . . .
        . . . . .
        . . . . .
    """)
    alive = pass_alive(stones, size)
    assert (alive[:10] == 1).all()  # the wall and its three eyes
    assert not alive[10:].any()  # fifteen points with many interior points: not pass-alive territory
    assert (area_map(stones, size) == 1).all()  # but bordered by pass-alive Black only


def test_dead_stone_inside_small_territory_is_marked_for_the_owner() -> None:
    # White's stone at A5 sits in a two-point region whose points all touch the Black wall.
    stones, size = parse("""
        O . X . X
        X X X X X
        . . . . .
        . . . . .
        . . . . .
    """)
    alive = pass_alive(stones, size)
    assert alive[0] == 1 and alive[1] == 1


def test_opponent_stone_in_big_region_blocks_territory() -> None:
    stones, size = parse("""
        . X . X .
        X X X X X
        . . . . .
        . . O . .
        . . . . .
    """)
    result = area_map(stones, size)
    assert (result[:10] == 1).all()
    assert result[17] == 2  # the White stone counts as its own colour
    assert (result[[10, 11, 12, 13, 14, 15, 16, 18, 19]] == 0).all()  # empty points touching both colours


def test_suicide_rule_changes_vitality_of_a_region_with_an_opponent_stone() -> None:
    # The corner region {A5 (White), B5, A4} has empty points adjacent to Black, but the White stone is not:
    # with multi-stone suicide legal White could refill it, so the region is not vital (KataGo's rule).
    stones, size = parse("""
        O . X . X
        . X X X X
        X X O O O
        X O O . .
        X O . . .
    """)
    vital_without_suicide = pass_alive(stones, size, multi_stone_suicide=False)
    vital_with_suicide = pass_alive(stones, size, multi_stone_suicide=True)
    black_top = [2, 6, 7, 8, 9]
    assert (vital_without_suicide[black_top] == 1).all()
    assert not vital_with_suicide[black_top].any()


def test_area_map_counts_stones_and_single_colour_regions() -> None:
    stones, size = parse(FALSE_EYE)
    expected = marks("""
        X X X X O O
        X X X O O O
        O O O O O O
        O O O O O O
        O O O O O O
        O O O O O O
    """)
    assert area_map(stones, size).tolist() == expected.tolist()


def test_area_map_of_empty_board_is_empty() -> None:
    assert not area_map(np.zeros(81, dtype=np.int8), 9).any()


def test_area_map_is_zero_under_territory_scoring() -> None:
    stones, size = parse(TWO_EYES)
    assert not area_map(stones, size, territory_scoring=True).any()


def test_area_map_with_tax_drops_territory_of_areas_touching_dame() -> None:
    # Stone-scoring (area scoring with a tax): an area touching a dame point counts only its stones.
    stones, size = parse("""
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        . X . O .
    """)
    assert area_map(stones, size).reshape(5, 5)[0].tolist() == [1, 1, 0, 2, 2]
    assert area_map(stones, size, tax="all").reshape(5, 5)[0].tolist() == [0, 1, 0, 2, 0]
    assert area_map(stones, size, tax="seki").reshape(5, 5)[0].tolist() == [0, 1, 0, 2, 0]


def test_area_map_with_tax_keeps_areas_with_independent_life() -> None:
    stones, size = parse("""
        . X O .
        . X O .
        . X O .
        . X O .
    """)
    assert area_map(stones, size, tax="all").tolist() == area_map(stones, size).tolist()
    assert (area_map(stones, size, tax="all").reshape(4, 4)[:, 0] == 1).all()


def test_area_map_for_rules_reads_the_rules_switches() -> None:
    from miai.go.rules import Rules, Scoring, Tax

    stones, size = parse(TWO_EYES)
    territory = Rules(scoring=Scoring.TERRITORY, tax=Tax.NONE, multi_stone_suicide=False)
    assert not area_map_for_rules(stones, size, territory).any()
    assert area_map_for_rules(stones, size, Rules(scoring=Scoring.AREA)).tolist() == area_map(
        stones, size, multi_stone_suicide=True).tolist()
    assert area_map_for_rules(stones, size, Rules(tax=Tax.ALL)).tolist() == area_map(
        stones, size, multi_stone_suicide=True, tax="all").tolist()


def test_wrong_length_is_rejected() -> None:
    with pytest.raises(ValueError, match="expected 25"):
        pass_alive([0] * 24, 5)


# --- random positions ------------------------------------------------------------------------


def literal_benson(stones: np.ndarray, size: int, player: int, suicide_legal: bool) -> set[int]:
    """Benson's definition transcribed with sets, no bookkeeping: the pass-alive stones of ``player``."""
    nbrs = neighbor_table(size)
    colors = stones.tolist()

    def flood(start: int, inside) -> frozenset[int]:
        seen, todo = {start}, [start]
        while todo:
            for adj in nbrs[todo.pop()]:
                if adj not in seen and inside(adj):
                    seen.add(adj)
                    todo.append(adj)
        return frozenset(seen)

    chains = {flood(p, lambda q: colors[q] == player) for p in range(size * size) if colors[p] == player}
    regions = {flood(p, lambda q: colors[q] != player) for p in range(size * size) if colors[p] == 0}

    def touches(points: frozenset[int], chain: frozenset[int]) -> bool:
        return any(adj in chain for point in points for adj in nbrs[point])

    def vital(region: frozenset[int], chain: frozenset[int]) -> bool:
        relevant = [p for p in region if suicide_legal or colors[p] == 0]
        return all(any(adj in chain for adj in nbrs[p]) for p in relevant)

    alive = set(chains)
    while True:
        healthy = [r for r in regions if all(not touches(r, c) for c in chains - alive)]
        survivors = {c for c in alive if sum(vital(r, c) for r in healthy) >= 2}
        if survivors == alive:
            return {p for chain in alive for p in chain}
        alive = survivors


def random_playout(size: int, rng: random.Random, fill: float) -> np.ndarray:
    """A position from random legal play that never fills its own single-point eyes (so groups live)."""
    board = ScratchBoard([0] * (size * size), size)
    player = 1
    for _ in range(int(size * size * fill)):
        candidates = [board.loc(p) for p in range(size * size)]
        rng.shuffle(candidates)
        for loc in candidates:
            own_eye = all(board.colors[loc + off] in (player, 3) for off in board.offsets)
            if not own_eye and board.is_legal(loc, player):
                board.play(loc, player)
                break
        player = 3 - player
    return np.array([board.colors[board.loc(p)] for p in range(size * size)], dtype=np.int8)


@pytest.mark.parametrize("suicide_legal", [False, True])
@pytest.mark.slow
def test_matches_literal_definition_on_random_positions(suicide_legal: bool) -> None:
    rng = random.Random(20261121)
    alive_seen = 0
    for trial in range(60):
        size = rng.choice([5, 6, 7])
        stones = random_playout(size, rng, fill=rng.choice([0.6, 1.5, 3.0]))
        result = pass_alive(stones, size, multi_stone_suicide=suicide_legal)
        for player in (1, 2):
            expected = literal_benson(stones, size, player, suicide_legal)
            got = {p for p in range(size * size) if stones[p] == player and result[p] == player}
            assert got == expected, f"trial {trial}, player {player}"
            alive_seen += len(expected)
    assert alive_seen > 100  # the generator does produce living groups


@pytest.mark.slow
def test_opponent_moves_never_reduce_pass_alive_marks() -> None:
    # Pass-alive means exactly this: while its owner passes, no sequence of opponent moves captures those
    # stones or makes the territory usable; so every mark must survive every opponent move.
    rng = random.Random(7)
    checked = 0
    for _ in range(40):
        size = rng.choice([5, 6, 7])
        stones = random_playout(size, rng, fill=rng.choice([1.5, 3.0]))
        for player in (1, 2):
            before = pass_alive(stones, size) == player
            if not before.any():
                continue
            board = ScratchBoard(stones, size)
            for _ in range(12):
                legal = [board.loc(p) for p in range(size * size) if board.is_legal(board.loc(p), 3 - player)]
                if not legal:
                    break
                board.play(rng.choice(legal), 3 - player)
                board.ko = -1  # the owner passes, which lifts any ko ban
                after_stones = np.array([board.colors[board.loc(p)] for p in range(size * size)])
                after = pass_alive(after_stones, size) == player
                assert after[before].all(), "an opponent move spoiled pass-alive marks"
                checked += 1
    assert checked > 100


def _balance(rows: list[str]) -> int:
    from miai.go.benson import independent_life_region_balance

    size = len(rows)
    stones = np.array([{"X": 1, "O": 2}.get(c, 0) for row in rows for c in row.split()], dtype=np.int8)
    return independent_life_region_balance(stones, size, area_map(stones, size))


def test_independent_life_region_balance_counts_regions_of_each_colour() -> None:
    """KataGo's whiteMinusBlackIndependentLifeRegionCount, by hand: connected one-owner areas that touch no dame
    and hold no stone of their owner in atari count +1 for White, -1 for Black."""
    lone_black = [". . . . .", ". . . . .", ". . X . .", ". . . . .", ". . . . ."]
    assert _balance(lone_black) == -1
    assert _balance([row.replace("X", "O") for row in lone_black]) == 1
    split = [". X O . ."] * 5  # Black owns columns A-B, White C-E: one region each
    assert _balance(split) == 0
    with_dame = [". X . O ."] * 5  # column C is dame: both areas touch it, so both count as seki
    assert _balance(with_dame) == 0
    two_black = [". X O X ."] * 5  # Black: A-B and D-E are two regions (C is White's), White: C alone
    assert _balance(two_black) == -1
