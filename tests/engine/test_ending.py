"""KataGo's root ending bonus (rootEndingBonusPoints; Search::getEndingWhiteScoreBonus), worked by hand.

The board (5x5, Black to move; X Black, O White):

    5  . . X . .
    4  X . X . .
    3  . . X . .
    2  . O X . .
    1  . . X . .
       A B C D E

With points = 0.5, a move the mover surely owns (ownership >= 0.95) that touches no opponent stone and joins no weak
chains loses 0.5 * (own - 0.95) / 0.05 points; one on the opponent's sure points that captures nothing loses
0.5 * (-0.95 - own) / 0.05. The result is in White's points, so Black's losses come out positive.
"""

from __future__ import annotations

import numpy as np
import pytest

from miai.engine.core.ending import ending_bonus
from miai.engine.core.leaves import Valuation
from miai.engine.config import SearchConfig
from miai.engine.core.scorevalue import expected_score_value
from miai.go.coords import PASS, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState


def _state(rules: str = "tromp-taylor", white_to_move: bool = False) -> GameState:
    state = GameState(5, Rules.preset(rules), 7.5)
    black = [parse_gtp(v, 5) for v in ("C1", "C2", "C3", "C4", "C5", "A4")]
    state.set_stones(black, [parse_gtp("B2", 5)])
    if white_to_move:
        state.set_to_play(2)
    return state


def _ownership(values: dict[str, float]) -> np.ndarray:
    own = np.zeros(25, dtype=np.float32)
    for vertex, value in values.items():
        own[parse_gtp(vertex, 5)] = value
    return own


def test_sure_own_points_and_sure_opponent_points_lose_points() -> None:
    own = _ownership({"A5": 0.97, "E5": -1.0, "D3": 0.5, "E1": -0.9})
    bonus = ending_bonus(_state(), own, 0.5)
    assert bonus == {parse_gtp("A5", 5): pytest.approx(0.5 * 0.02 / 0.05, abs=1e-6),
                     parse_gtp("E5", 5): pytest.approx(0.5, abs=1e-6)}  # D3 and E1 are not sure


def test_moves_next_to_the_opponent_or_joining_weak_chains_are_spared() -> None:
    # B1 and B3 touch White's B2; B4 joins A4 to the C column (neither pass-alive); A1 would be penalised.
    own = _ownership({"B1": 1.0, "B3": 1.0, "B4": 1.0, "A1": 1.0})
    assert ending_bonus(_state(), own, 0.5) == {parse_gtp("A1", 5): pytest.approx(0.5)}


def test_a_capture_on_the_opponents_points_is_spared_under_area_scoring_only() -> None:
    state = GameState(5, Rules.preset("tromp-taylor"), 7.5)
    state.set_stones([parse_gtp(v, 5) for v in ("A2", "C2", "B3")], [parse_gtp("B2", 5)])  # White B2 in atari
    own = _ownership({"B1": -1.0, "E5": -1.0})
    assert ending_bonus(state, own, 0.5) == {parse_gtp("E5", 5): pytest.approx(0.5)}
    japanese = GameState(5, Rules.preset("japanese"), 6.5)
    japanese.set_stones([parse_gtp(v, 5) for v in ("A2", "C2", "B3")], [parse_gtp("B2", 5)])
    assert ending_bonus(japanese, own, 0.5) == {parse_gtp("B1", 5): pytest.approx(0.5),
                                                parse_gtp("E5", 5): pytest.approx(0.5),
                                                PASS: pytest.approx(0.5 * 2 / 3)}  # territory: pass loses 2/3


def test_white_to_move_keeps_the_sign_and_the_button_pass_loses_half() -> None:
    own = _ownership({"E5": 1.0})
    assert ending_bonus(_state(white_to_move=True), own, 0.5) == {parse_gtp("E5", 5): pytest.approx(-0.5)}
    button = _state("aga-button")
    assert ending_bonus(button, _ownership({}), 0.5) == {PASS: pytest.approx(0.25)}
    button.push(PASS)  # Black took the button: no bonus on White's pass
    assert ending_bonus(button, _ownership({}), 0.5) == {}


def test_nothing_under_a_ko_ban_or_without_points() -> None:
    # White takes the ko at C3 (capturing D3); Black may not retake at D3 now: KataGo then leaves every move alone.
    state = GameState(5, Rules.preset("tromp-taylor"), 7.5)
    state.set_stones([parse_gtp(v, 5) for v in ("B3", "C4", "C2", "D3")],
                     [parse_gtp(v, 5) for v in ("D4", "E3", "D2")])
    state.set_to_play(2)
    state.push(parse_gtp("C3", 5))
    assert state.banned_points() == [parse_gtp("D3", 5)]
    own = _ownership({"E5": -1.0, "A5": 1.0})
    assert ending_bonus(state, own, 0.5) == {}
    assert ending_bonus(_state(), own, 0.0) == {}
    assert ending_bonus(_state(), _ownership({"E5": -0.94, "A5": 0.94}), 0.5) == {}


def test_the_score_utility_diff_is_the_difference_of_the_two_expected_values() -> None:
    config = SearchConfig()
    valuation = Valuation(config, score_center=3.0)
    mean, mean_sq, delta = 4.0, 4.0 ** 2 + 2.5 ** 2, 0.5
    expected = (config.static_score_utility_factor * (expected_score_value(4.5, 2.5, 0.0, config.static_score_scale, 9)
                                                      - expected_score_value(4.0, 2.5, 0.0, config.static_score_scale, 9))
                + config.dynamic_score_utility_factor
                * (expected_score_value(4.5, 2.5, 3.0, config.dynamic_score_center_scale, 9)
                   - expected_score_value(4.0, 2.5, 3.0, config.dynamic_score_center_scale, 9)))
    assert valuation.score_utility_diff(mean, mean_sq, delta, 9) == pytest.approx(expected, abs=1e-12)
    assert valuation.score_utility_diff(mean, mean_sq, 0.0, 9) == 0.0


def _row(move: int, weight: float, utility: float, score: float, edge_visits: int = 100) -> dict[str, object]:
    return {"move": move, "weight": weight, "edge_visits": edge_visits, "utility": utility, "score_mean": score,
            "score_lead": score}


def test_fill_dame_before_pass_suppresses_a_pass_that_a_dame_move_matches() -> None:
    """KataGo's fillDameBeforePass (shouldSuppressPass): under territory scoring the root's pass is not chosen while
    a well-searched move, not inside the opponent's sure area, does within 0.1 utility and half a point."""
    from miai.engine.core.snapshot import _pass_suppressed

    ownership = np.zeros(25)
    ownership[parse_gtp("E5", 5)] = -1.0  # White's sure point, no sure point of the mover's next to it
    dame = parse_gtp("C3", 5)
    rows = [_row(PASS, 100.0, 0.30, 2.0), _row(dame, 50.0, 0.25, 1.6)]
    assert _pass_suppressed(rows, ownership, 5)  # type: ignore[arg-type]
    worse = [_row(PASS, 100.0, 0.30, 2.0), _row(dame, 50.0, 0.15, 1.6)]  # 0.15 below the pass's utility
    assert not _pass_suppressed(worse, ownership, 5)  # type: ignore[arg-type]
    thin = [_row(PASS, 100.0, 0.30, 2.0), _row(dame, 19.0, 0.30, 2.0)]  # weight below 2 * sqrt(100)
    assert not _pass_suppressed(thin, ownership, 5)  # type: ignore[arg-type]
    inside = [_row(PASS, 100.0, 0.30, 2.0), _row(parse_gtp("E5", 5), 50.0, 0.30, 2.0)]
    assert not _pass_suppressed(inside, ownership, 5)  # type: ignore[arg-type]
    ownership[parse_gtp("D5", 5)] = 1.0  # ... unless it touches the mover's own sure area
    assert _pass_suppressed(inside, ownership, 5)  # type: ignore[arg-type]

