"""Seeded self-play games stay the same move for move: the search's behaviour is pinned across refactors.

tests/engine/data/seeded_games.jsonl holds games recorded by tests/tools/record_games.py before the search was split
into its files (issue 63): KataGo's g170 b6 net under the default rules with root noise and temperature, under the
graph's other rules (leaky descent, stale updates over parents or ancestors, a tree, the classic final choice), and
random playouts under UCB1 with RAVE and UCB1-TUNED. Each is replayed here from its seed; a change of any selection,
backup or move-choice rule changes some move.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.outside import needs_shared, shared
from tests.tools.record_games import GAMES, NET, play

DATA = Path(__file__).parent / "data" / "seeded_games.jsonl"
RECORDED = {game["name"]: game for game in map(json.loads, DATA.read_text().splitlines())}


def test_every_setup_has_a_recorded_game() -> None:
    assert sorted(RECORDED) == sorted(GAMES)
    assert all(len(game["moves"]) >= 20 for game in RECORDED.values())


@pytest.mark.slow
@needs_shared(NET)
@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_seeded_game_is_played_move_for_move_as_recorded(name: str) -> None:
    assert play(name, shared(".")) == RECORDED[name]
