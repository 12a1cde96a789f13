"""KataGo planes 14-19 on the positions of KataGo's reference outputs (tests/outside.py), rebuilt from their moves.

The reference holds KataGo's outputs, not its inputs, so these are sanity checks; exact plane equality is
checked by the nets tests through the policy. Checked here: the positions rebuild exactly (KataGo's
illegal-move marks equal our legal moves), the planes are invariant under the 8 board symmetries, laddered
chains have one or two liberties, working moves are liberties of laddered opponent chains, the area map
respects the rules (empty under territory scoring, stones and pass-alive points otherwise), and KataGo's
policy does favour our working ladder moves where they exist."""

from __future__ import annotations

import json

import numpy as np
import pytest

from miai.go.benson import area_map_for_rules, pass_alive
from miai.go.coords import PASS, parse_color, parse_gtp
from miai.go.ladders import ladder_features, ladder_planes, laddered_stones, state_ko_point
from miai.go.rules import Rules, Scoring
from miai.go.state import GameState
from tests.outside import missing_reason, reference_file

FILES = ("pub_b6.jsonl", "pub_b15.jsonl")


def load_records() -> list[dict]:
    records = []
    for name in FILES:
        path = reference_file(name)
        if path.exists():
            records.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return records


RECORDS = load_records()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not RECORDS, reason=missing_reason("reference/pub_b6.jsonl"))]


def build(record: dict) -> GameState:
    size = record["size"]
    state = GameState(size=size, rules=Rules.preset(record["rules"]), komi=record["komi"])
    if record["handicap_stones"]:
        state.set_handicap([parse_gtp(v, size) for v in record["handicap_stones"]])
    for color, vertex in record["moves"]:
        state.push(PASS if vertex.upper() == "PASS" else parse_gtp(vertex, size), parse_color(color))
    return state


def symmetries(size: int) -> list[np.ndarray]:
    """The 8 dihedral permutations of flat points (new index -> old index)."""
    grid = np.arange(size * size).reshape(size, size)
    result = []
    for transpose in (False, True):
        for flip_y in (False, True):
            for flip_x in (False, True):
                g = grid.T if transpose else grid
                g = g[::-1] if flip_y else g
                g = g[:, ::-1] if flip_x else g
                result.append(g.reshape(-1))
    return result


@pytest.fixture(scope="module")
def positions() -> list[tuple[dict, GameState]]:
    return [(record, build(record)) for record in RECORDS]


def test_positions_rebuild_exactly(positions: list[tuple[dict, GameState]]) -> None:
    for record, state in positions:
        assert state.to_play == parse_color(record["to_play"]), record["id"]
        illegal = {p for p, value in enumerate(record["policy"]) if value < 0}
        legal = set(state.legal_moves())
        assert illegal == set(range(state.size**2)) - legal, record["id"]


def test_ladder_planes_are_symmetric(positions: list[tuple[dict, GameState]]) -> None:
    for record, state in positions:
        stones, size = state.stones(), state.size
        ko = state_ko_point(state)
        laddered, working = ladder_planes(stones, size, int(state.to_play), ko)
        for perm in symmetries(size)[1:]:
            inverse = np.argsort(perm)
            moved_ko = None if ko is None else int(inverse[ko])
            lad2, work2 = ladder_planes(stones[perm], size, int(state.to_play), moved_ko)
            assert (lad2[inverse] == laddered).all() and (work2[inverse] == working).all(), record["id"]


def test_ladder_planes_are_consistent(positions: list[tuple[dict, GameState]]) -> None:
    chains_found = moves_found = 0
    for record, state in positions:
        laddered, working = ladder_features(state)
        liberties = state.liberties()
        stones = state.stones()
        assert set(np.unique(liberties[laddered])) <= {1, 2}, record["id"]
        opponent = int(state.to_play.opponent)
        expected_working: set[int] = set()
        for point in np.flatnonzero(laddered & (stones == opponent) & (liberties == 2)):
            chain = state.chain(int(point))
            libs = {n for p in chain for n in _neighbours(p, state.size) if stones[n] == 0}
            assert working[list(libs)].any(), f"{record['id']}: laddered two-liberty chain without working move"
            expected_working |= libs
        assert set(np.flatnonzero(working)) <= expected_working, record["id"]
        for k in (1, 2):
            previous = state.board_history(k)
            marks = laddered_stones(previous, state.size, state_ko_point(state, k))
            assert (previous[marks] != 0).all(), record["id"]
        chains_found += int(laddered.any())
        moves_found += int(working.any())
    assert chains_found >= 20 and moves_found >= 15


def test_katago_policy_likes_working_ladder_moves(positions: list[tuple[dict, GameState]]) -> None:
    # Where a working ladder capture exists, KataGo's top policy move is often exactly that capture.
    hits = 0
    for record, state in positions:
        _, working = ladder_features(state)
        if working.any() and int(np.argmax(record["policy"])) in set(np.flatnonzero(working)):
            hits += 1
    assert hits >= 2


def test_area_map_follows_the_rules(positions: list[tuple[dict, GameState]]) -> None:
    for record, state in positions:
        stones, size = state.stones(), state.size
        area = area_map_for_rules(stones, size, state.rules)
        if state.rules.scoring is Scoring.TERRITORY:
            assert not area.any(), record["id"]
            continue
        alive = pass_alive(stones, size, multi_stone_suicide=state.rules.multi_stone_suicide)
        assert (area[alive > 0] == alive[alive > 0]).all(), record["id"]
        not_alive_stones = (stones > 0) & (alive == 0)
        assert (area[not_alive_stones] == stones[not_alive_stones]).all(), record["id"]
        for perm in symmetries(size)[1:]:
            moved = area_map_for_rules(stones[perm], size, state.rules)
            assert (moved[np.argsort(perm)] == area).all(), record["id"]


def _neighbours(point: int, size: int) -> list[int]:
    y, x = divmod(point, size)
    return [p for p, ok in ((point - size, y > 0), (point + size, y < size - 1),
                            (point - 1, x > 0), (point + 1, x < size - 1)) if ok]
