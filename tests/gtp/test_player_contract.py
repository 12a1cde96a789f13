"""A player implementing only the three abstract methods is enough for every command to answer sensibly."""

from __future__ import annotations

import threading

import pytest

from miai.go.coords import PASS, Color
from miai.go.state import GameState
from miai.gtp.player import AnalysisSnapshot, AnalyzeRequest, Emit, GenmoveResult, Player

from .fakes import Driver


class MinimalPlayer(Player):
    def genmove(self, state: GameState, color: Color, *, cleanup: bool = False,
                analysis: AnalyzeRequest | None = None, emit: Emit | None = None) -> GenmoveResult:
        return PASS

    def analyze(self, state: GameState, color: Color, request: AnalyzeRequest, emit: Emit,
                stop: threading.Event) -> None:
        emit(AnalysisSnapshot(moves=()))

    def final_status(self, state: GameState) -> list[int]:
        return []


def test_player_is_abstract() -> None:
    with pytest.raises(TypeError):
        Player()  # type: ignore[abstract]


def test_a_minimal_player_serves_every_command() -> None:
    driver = Driver(MinimalPlayer())
    assert driver.fail("kata-raw-nn 0").startswith("no neural net available")
    assert driver.fail("kata-get-param x").startswith("unknown parameter 'x'")
    assert driver.fail("kata-set-param x 1").startswith("unknown parameter 'x'")
    assert driver.ok("miai-search_stats") == "{}"
    assert driver.ok("time_settings 10 5 1") == "" and driver.ok("time_left b 10 0") == ""
    assert driver.ok("kgs-time_settings byoyomi 10 5 3") == ""
    assert driver.ok("clear_cache") == ""
    assert driver.ok("genmove b") == "pass"
    assert driver.ok("final_score") == "W+7.5"
    # an analysis with no candidate moves writes no info line: just the head and the blank line
    assert driver.raw("3 kata-analyze b 1") == "=3\n\n"
    assert driver.raw("lz-genmove_analyze w 1") == "=\nplay pass\n\n"
    driver.ok("clear_board")
    assert len(driver.ok("place_free_handicap 4").split()) == 4
