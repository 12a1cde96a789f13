"""Bundled nets: size ranges from the manifests, the narrowest range wins, routing keeps the input order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from miai.go.state import GameState
from miai.nets.bundled import BUNDLED_DIR, BundledNet, SizeRoutedEvaluator, bundled_nets, load_bundled, net_for_size
from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import EvaluatorError, UniformEvaluator, innermost
from miai.nets.loading import load_evaluator


def _net(directory: Path, name: str, sizes: object = None) -> Path:
    path = directory / f"{name}.onnx"
    path.write_bytes(b"")
    manifest = {"file": path.name} if sizes is None else {"file": path.name, "board_sizes": sizes}
    path.with_suffix(".json").write_text(json.dumps(manifest))
    return path


def test_manifest_ranges_and_the_narrowest_range_wins(tmp_path: Path) -> None:
    general, small = _net(tmp_path, "a-general"), _net(tmp_path, "b-small", [2, 10])
    nets = bundled_nets(tmp_path)
    assert nets == [BundledNet(general, 2, 25), BundledNet(small, 2, 10)]
    assert [net_for_size(nets, s).path for s in (5, 9, 10, 11, 19)] == [small, small, small, general, general]
    assert net_for_size([BundledNet(small, 2, 10)], 19) is None


@pytest.mark.parametrize("sizes", [[10, 2], [1, 9], [9], "9-19", [9, 26]])
def test_a_bad_board_sizes_entry_names_the_manifest(tmp_path: Path, sizes: object) -> None:
    _net(tmp_path, "bad", sizes)
    with pytest.raises(EvaluatorError, match="bad.json: board_sizes"):
        bundled_nets(tmp_path)


class _Tagged(UniformEvaluator):
    """A uniform evaluator whose evaluations carry a tag in ``lead``, to see which net answered."""

    def __init__(self, tag: float) -> None:
        super().__init__()
        self.tag = tag

    def evaluate(self, states):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return [replace(e, lead=self.tag) for e in super().evaluate(states)]


def test_routing_by_size_keeps_the_order_and_loads_each_net_once(tmp_path: Path) -> None:
    nets = [BundledNet(tmp_path / "small.onnx", 2, 10), BundledNet(tmp_path / "big.onnx", 11, 19)]
    loads: list[str] = []

    def load(path: Path) -> _Tagged:
        loads.append(path.name)
        return _Tagged(9.0 if path.name == "small.onnx" else 19.0)

    router = SizeRoutedEvaluator(nets, load)
    states = [GameState(9), GameState(19), GameState(7), GameState(13)]
    assert [e.lead for e in router.evaluate(states)] == [9.0, 19.0, 9.0, 19.0]
    assert [e.policy.shape[0] for e in router.evaluate(states)] == [82, 362, 50, 170]
    assert sorted(loads) == ["big.onnx", "small.onnx"]
    assert [e.lead for e in router.start(states)()] == [9.0, 19.0, 9.0, 19.0]  # a started batch: the same
    with pytest.raises(EvaluatorError, match="no bundled net plays 21x21"):
        router.evaluate([GameState(21)])


def test_innermost_finds_the_net_of_a_size_under_the_cache_and_the_router(tmp_path: Path) -> None:
    nets = [BundledNet(tmp_path / "small.onnx", 2, 10), BundledNet(tmp_path / "big.onnx", 11, 19)]
    loaded = {"small.onnx": _Tagged(9.0), "big.onnx": _Tagged(19.0)}
    evaluator = CachedEvaluator(SizeRoutedEvaluator(nets, lambda path: loaded[path.name]), 10)
    assert innermost(evaluator, 9) is loaded["small.onnx"] and innermost(evaluator, 19) is loaded["big.onnx"]
    with pytest.raises(EvaluatorError, match="21x21"):
        innermost(evaluator, 21)


@pytest.mark.skipif(len(bundled_nets()) < 2, reason="fewer than two bundled nets")
@pytest.mark.slow
def test_the_shipped_nets_answer_for_their_sizes() -> None:
    from miai.nets.evaluator import onnx_net

    evaluator = load_bundled(cache_capacity=100)
    nets = bundled_nets()
    for size in (9, 13, 19):
        state = GameState(size)
        state.push(state.legal_moves()[size])
        direct = load_evaluator(net_for_size(nets, size).path).evaluate([state])[0]
        routed = evaluator.evaluate([state])[0]
        np.testing.assert_allclose(routed.policy, direct.policy, atol=1e-6)
        assert onnx_net(evaluator, size).path == str(net_for_size(nets, size).path)
    assert BUNDLED_DIR.is_dir()
