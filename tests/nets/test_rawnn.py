"""kata-raw-nn: White-view numbers and KataGo's text layout."""

from __future__ import annotations

import math

import numpy as np
import pytest

from miai.go.coords import Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, OnnxEvaluator
from miai.nets.rawnn import format_raw_nn, parse_symmetry, raw_nn, white_view

from .tiny_nets import build_tiny_net


def small_game(moves: list[tuple[Color, str]], size: int = 3) -> GameState:
    state = GameState(size=size, rules=Rules.preset("chinese"), komi=7.5)
    for color, vertex in moves:
        state.push(parse_gtp(vertex, size), color)
    return state


def hand_evaluation(size: int) -> Evaluation:
    area = size * size
    policy = np.zeros(area + 1, dtype=np.float32)
    policy[[0, 2]] = 0.25
    policy[area] = 0.5
    ownership = np.linspace(-1, 1, area).astype(np.float32)
    return Evaluation(policy, 0.7, 0.25, 0.05, 3.0, 10.0, 2.5, ownership, var_time_left=12.0)


def test_parse_symmetry() -> None:
    assert parse_symmetry("all") == list(range(8))
    assert parse_symmetry("5") == [5]
    for bad in ("8", "-1", "x"):
        with pytest.raises(ValueError):
            parse_symmetry(bad)


def test_white_view_flips_values_when_black_is_to_move() -> None:
    state = small_game([(Color.BLACK, "B2"), (Color.WHITE, "A1")])  # black to move
    evaluation = hand_evaluation(3)
    view = white_view(state, evaluation, 0)
    assert (view["white_win"], view["white_loss"]) == (0.25, 0.7)
    assert view["white_lead"] == -2.5 and view["white_score_selfplay"] == -3.0
    assert view["white_score_selfplay_sq"] == pytest.approx(9.0 + 100.0)
    assert view["white_ownership"][0] == pytest.approx(1.0)
    # Occupied points are illegal: NaN in the policy, as KataGo prints them.
    assert math.isnan(view["policy"][4]) and math.isnan(view["policy"][6])
    assert view["policy"][0] == 0.25 and view["policy_pass"] == 0.5

    white_to_move = small_game([(Color.BLACK, "B2")])
    same = white_view(white_to_move, evaluation, 0)
    assert (same["white_win"], same["white_lead"]) == (0.7, 2.5)


def test_text_layout_is_katago_s() -> None:
    state = small_game([(Color.BLACK, "B2")])  # white to move; B2 (flat 4) is illegal
    text = format_raw_nn([white_view(state, hand_evaluation(3), 2)], 3)
    expected = "\n".join(
        [
            "symmetry 2",
            "whiteWin 0.700000",
            "whiteLoss 0.250000",
            "noResult 0.050000",
            "whiteLead 2.500",
            "whiteScoreSelfplay 3.000",
            "whiteScoreSelfplaySq 109.000",
            "varTimeLeft 12.000",
            "shorttermWinlossError -1.000",
            "shorttermScoreError -1.000",
            "policy",
            "0.250000 0.000000 0.250000 ",
            "0.000000     NAN 0.000000 ",
            "0.000000 0.000000 0.000000 ",
            "policyPass 0.500000 ",
            "whiteOwnership",
            "-1.0000000 -0.7500000 -0.5000000 ",
            "-0.2500000 0.0000000 0.2500000 ",
            "0.5000000 0.7500000 1.0000000",
        ]
    )
    assert text == expected


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> OnnxEvaluator:
    return OnnxEvaluator(str(build_tiny_net(tmp_path_factory.mktemp("nets") / "tiny.onnx")))


def test_all_symmetries_give_one_block_each(tiny: OnnxEvaluator) -> None:
    state = small_game([(Color.BLACK, "D4"), (Color.WHITE, "E5")], size=7)
    results = raw_nn(tiny, state, parse_symmetry("all"))
    assert [r["symmetry"] for r in results] == list(range(8))
    text = format_raw_nn(results, 7)
    blocks = text.split("\n\n")
    assert len(blocks) == 8 and all(b.startswith(f"symmetry {k}\n") for k, b in enumerate(blocks))
    for k, block in enumerate(blocks):
        single = tiny.evaluate_with([state], [[k]], 0.0)[0]
        lines = block.splitlines()
        win = float(lines[1].split()[1])
        assert win == pytest.approx(single.loss, abs=1e-6)  # black to move: White wins when Black loses
        grid = [row.split() for row in lines[lines.index("policy") + 1 : lines.index("policy") + 8]]
        assert grid[3][3] == "NAN" and grid[2][4] == "NAN"  # D4 (row 3) and E5 (row 2) are occupied
        assert float(grid[0][0]) == pytest.approx(single.policy[0], abs=1e-6)


def test_optimism_reaches_the_net(tiny: OnnxEvaluator) -> None:
    state = small_game([(Color.BLACK, "D4")], size=7)
    plain = raw_nn(tiny, state, [0], 0.0)[0]
    optimistic = raw_nn(tiny, state, [0], 1.0)[0]
    assert not np.allclose(np.nan_to_num(plain["policy"]), np.nan_to_num(optimistic["policy"]))
    assert plain["white_win"] == optimistic["white_win"]
