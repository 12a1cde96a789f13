"""The precision gate (miai.nets.precision): KataGo's testgpuerror statistics, its fp16 limits, the shipped games
auto's quick gate reads, and the gate run on a real evaluator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from miai.nets import precision
from miai.nets.evaluator import Evaluation, OnnxEvaluator
from miai.nets.precision import LIMITS, GateResult, errors, judge, summarise

from .tiny_nets import build_tiny_net


def _evaluation(policy: list[float], win: float, loss: float, lead: float, ownership: list[float]) -> Evaluation:
    return Evaluation(np.array(policy, dtype=np.float32), win, loss, 1.0 - win - loss, lead, 10.0, lead,
                      np.array(ownership, dtype=np.float32))


def test_each_measure_is_katagos() -> None:
    reference = _evaluation([0.7, 0.2, 0.1], 0.60, 0.38, 1.5, [0.9, -0.5, 0.0, 0.2])
    candidate = _evaluation([0.6, 0.3, 0.1], 0.62, 0.34, 2.0, [0.8, -0.5, 0.1, 0.2])
    found = errors([reference], [candidate])
    # winrate: half the change in win - loss (0.22 -> 0.28) plus the change in no-result (0.02 -> 0.04).
    assert found["winrate"][0] == pytest.approx(0.5 * 0.06 + 0.02)
    assert found["lead"][0] == pytest.approx(0.5)
    assert found["top_policy"][0] == pytest.approx(0.1)  # the reference's top move, 0.7 -> 0.6
    kl = 0.7 * np.log(0.7 / 0.6) + 0.2 * np.log(0.2 / 0.3)
    assert found["policy_kl"][0] == pytest.approx(kl, rel=1e-5)
    # ownership: one sample per point
    assert found["ownership"] == pytest.approx([0.1, 0.0, 0.1, 0.0], abs=1e-6)


def test_percentiles_are_katagos_elements_of_the_sorted_samples() -> None:
    values = np.arange(200, dtype=np.float64)[::-1]  # unsorted on purpose
    stats = summarise({"lead": values})["lead"]
    assert stats == {"mean": pytest.approx(99.5), "p90": 179.0, "p99": 197.0, "max": 199.0}


def test_the_limits_are_katagos_fp16_limits() -> None:
    assert LIMITS == {"winrate": (0.02, 0.05), "lead": (1.0, 3.0), "top_policy": (0.025, 0.06),
                      "policy_kl": (0.002, 0.004), "ownership": (0.035, 0.2)}


def test_a_candidate_fails_on_the_99th_percentile_or_on_the_maximum_with_its_share_of_the_limit() -> None:
    within = {"winrate": {"mean": 0.001, "p90": 0.005, "p99": 0.019, "max": 0.049}}
    assert judge(within) == {}
    tail = {"lead": {"mean": 0.1, "p90": 0.3, "p99": 0.9, "max": 3.3}}
    assert judge(tail) == {"lead max": 1.1}
    broad = {"ownership": {"mean": 0.01, "p90": 0.03, "p99": 0.07, "max": 0.1}}
    assert judge(broad) == {"ownership p99": 2.0}
    result = GateResult("openvino bf16, batch 16", 10, {**within, **tail})
    assert not result.passed
    table = precision.format_table([result])
    assert "FAILS: lead max 1.1x" in table and "openvino bf16, batch 16" in table
    lead_row = next(line for line in table.splitlines() if " lead " in line)
    assert lead_row.split()[-2:] == ["0.90", "1.10"]  # p99 and max as shares of their limits


def test_the_shipped_games_are_miais_own_legal_games_of_each_size() -> None:
    games = precision.shipped_games()
    for size in (9, 13, 19):
        states = precision.states_of_games(games, size, 150)
        assert len(states) == 150, size  # enough for auto's quick gate
        assert all(s.size == size for s in states)
    states = precision.states_of_games(games, 19, 50, seed=3)
    assert len(states) == 50 and len({len(s.moves) for s in states}) > 10  # spread over the games


def test_the_gate_on_a_real_net_passes_itself_and_fails_a_different_net(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "a.onnx")
    other = build_tiny_net(tmp_path / "b.onnx", seed=1)
    reference = OnnxEvaluator(str(net), max_batch=8)
    states = precision.states_of_games(precision.shipped_games(), 9, 24)
    results = precision.run_gate(reference, {"same": OnnxEvaluator(str(net), max_batch=8),
                                             "other": OnnxEvaluator(str(other), max_batch=8)}, states, 8)
    assert [r.name for r in results] == ["same, batch 1", "same, batch 8", "other, batch 1", "other, batch 8"]
    assert all(r.positions == 24 for r in results)
    assert results[0].passed and results[1].passed
    assert results[1].stats["winrate"]["max"] < 1e-5
    assert not results[2].passed and not results[3].passed
