from __future__ import annotations

import pytest

from .fakes import Driver, FakePlayer


@pytest.fixture
def player() -> FakePlayer:
    return FakePlayer()


@pytest.fixture
def driver(player: FakePlayer) -> Driver:
    return Driver(player)
