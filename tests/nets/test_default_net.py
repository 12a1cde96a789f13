"""The net(s) committed in nets/default/: each loads, gives legal distributions on 9x9, 13x13
and 19x19, plays sensible opening moves, and matches its manifest (sha256, name)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from miai.go.coords import to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import legal_mask
from miai.nets.loading import load_evaluator
from miai.nets.train.manifest import manifest_path, verify_manifest

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "nets" / "default"
NETS = sorted(DEFAULT_DIR.glob("*.onnx"))

pytestmark = pytest.mark.skipif(not NETS, reason="no default net committed in nets/default")


def positions(size: int) -> list[GameState]:
    """An empty board, a few opening moves, and a position with a capture-ready chain."""
    empty = GameState(size=size, rules=Rules.preset("chinese"), komi=7.0)
    opening = empty.copy()
    rng = np.random.default_rng(size)
    for _ in range(6):
        opening.push(int(rng.choice(opening.legal_moves())))
    japanese = GameState(size=size, rules=Rules.preset("japanese"), komi=6.5)
    return [empty, opening, japanese]


@pytest.mark.parametrize("net", NETS, ids=lambda p: p.name)
def test_manifest_matches_the_file(net: Path) -> None:
    manifest = verify_manifest(net)
    assert manifest["architecture"]["parameters"] > 0
    assert manifest["teacher"].startswith("g170-b6c96")
    assert "miai train" in manifest["command"]
    assert manifest["data"]["positions_per_size"]


@pytest.mark.parametrize("net", NETS, ids=lambda p: p.name)
@pytest.mark.parametrize("size", [9, 13, 19])
def test_legal_distributions(net: Path, size: int) -> None:
    evaluator = load_evaluator(net)
    states = positions(size)
    for state, evaluation in zip(states, evaluator.evaluate(states)):
        legal = legal_mask(state)
        assert evaluation.policy.shape == (size * size + 1,)
        assert evaluation.policy.sum() == pytest.approx(1.0, abs=1e-4)
        assert np.all(evaluation.policy[~legal] == 0)
        assert np.all(np.isfinite(evaluation.policy))
        assert evaluation.win + evaluation.loss + evaluation.no_result == pytest.approx(1.0, abs=1e-6)
        assert evaluation.ownership is not None and np.all(np.abs(evaluation.ownership) <= 1)
        assert abs(evaluation.lead) < size * size


@pytest.mark.parametrize("net", NETS, ids=lambda p: p.name)
@pytest.mark.parametrize("size", [9, 19])
def test_empty_board_policy_prefers_sensible_openings(net: Path, size: int) -> None:
    """On an empty board the top moves are away from the edge (3rd-5th line on 19x19, centre
    area on 9x9), never pass, and the policy is symmetric enough that the top move's mirror
    images are also likely."""
    (evaluation,) = load_evaluator(net).evaluate([GameState(size=size, komi=7.5)])
    top = np.argsort(evaluation.policy)[::-1][:4]
    assert size * size not in top, "pass among the top moves on an empty board"
    for move in top:
        y, x = divmod(int(move), size)
        line = min(x, y, size - 1 - x, size - 1 - y) + 1
        assert (3 <= line <= 5) if size == 19 else line >= 3, f"{to_gtp(int(move), size)} on line {line}"
    assert evaluation.policy[top[0]] < 0.9  # not collapsed onto one corner


def test_manifest_for_every_net_and_no_strays() -> None:
    for net in NETS:
        assert manifest_path(net).is_file()
    for manifest in DEFAULT_DIR.glob("*.json"):
        assert (DEFAULT_DIR / json.loads(manifest.read_text())["file"]).is_file()
