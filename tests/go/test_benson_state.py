"""GameState's pass-alive and area-map methods agree with the pure functions under the game's rules."""

from __future__ import annotations

import numpy as np

from miai.go import benson
from miai.go.rules import Rules
from miai.go.state import GameState


def test_state_area_map_uses_the_rules() -> None:
    for preset in ("chinese", "tromp-taylor", "japanese", "stone-scoring"):
        state = GameState(9, Rules.preset(preset), 7.0)
        for move in (40, 10, 41, 11):
            state.push(move)
        expected = benson.area_map_for_rules(state.stones(), 9, state.rules)
        assert np.array_equal(state.area_map(), expected)
    territory = GameState(9, Rules.preset("japanese"), 6.5)
    territory.push(40)
    assert not territory.area_map().any()  # KataGo leaves planes 18/19 empty under territory scoring


def test_state_pass_alive_area_passes_the_suicide_rule() -> None:
    state = GameState(5, Rules.preset("tromp-taylor"), 7.5)
    state.push(12)
    expected = benson.pass_alive(state.stones(), 5, multi_stone_suicide=True)
    assert np.array_equal(state.pass_alive_area(), expected)
