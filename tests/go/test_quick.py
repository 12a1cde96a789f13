"""Fast differential check of GameState against the reference board over random games (smoke level)."""

from __future__ import annotations

import random

import pytest

from miai.go.coords import PASS
from miai.go.rules import Rules
from miai.go.state import GameState
from tests.go.reference_board import ReferenceGame


@pytest.mark.parametrize("preset", ["tromp-taylor", "chinese", "new-zealand", "aga"])
@pytest.mark.parametrize("size", [4, 5])
def test_random_games_match_reference(preset: str, size: int) -> None:
    rng = random.Random(f"{preset}/{size}")
    for _ in range(4):
        state = GameState(size, Rules.preset(preset))
        ref = ReferenceGame(size, Rules.preset(preset))
        for _ in range(60):
            legal = state.legal_moves()
            assert legal == [m for m in range(size * size) if ref.legality(m) is None]
            assert state.banned_points() == ref.banned()
            assert state.position_hash == ref.hash()
            assert list(state.liberties()) == ref.liberties()
            move = rng.choice(legal + [PASS] if rng.random() > 0.05 else [PASS])
            state.push(move)
            ref.play(move)
            if state.is_over():
                break
