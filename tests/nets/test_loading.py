"""load_evaluator: ONNX files, KataGo files converted once into a cache, and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from miai.go.state import GameState
from miai.nets import load_evaluator
from miai.nets import loading
from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import EvaluatorError, OnnxEvaluator, UniformEvaluator

from tests.outside import needs_shared

from .reference_cases import NETS_DIR
from .tiny_nets import build_tiny_net

B6 = NETS_DIR / "g170-b6c96-s175395328-d26788732.bin.gz"


def test_onnx_uniform_and_cache_wrapping(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "tiny.onnx")
    assert isinstance(load_evaluator(net), OnnxEvaluator)
    assert isinstance(load_evaluator("uniform"), UniformEvaluator)
    cached = load_evaluator(net, cache_capacity=100, max_batch=4, symmetry=3)
    assert isinstance(cached, CachedEvaluator) and cached.max_batch == 4
    assert isinstance(cached.inner, OnnxEvaluator) and cached.inner.config.symmetry == 3


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_evaluator(tmp_path / "missing.onnx")
    other = tmp_path / "net.pb"
    other.write_bytes(b"x")
    with pytest.raises(EvaluatorError, match="expected an .onnx file"):
        load_evaluator(other)
    with pytest.raises(TypeError):
        load_evaluator(build_tiny_net(tmp_path / "t.onnx"), no_such_option=1)


@needs_shared(f"nets/{B6.name}")
def test_katago_file_is_converted_once_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from miai.nets import convert

    calls: list[str] = []
    real = convert.load_model

    def counting(src, progress=None):  # type: ignore[no-untyped-def]
        calls.append(str(src))  # every conversion reads the KataGo file once
        return real(src, progress=progress)

    monkeypatch.setattr(convert, "load_model", counting)
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    first = load_evaluator(B6)
    second = load_evaluator(B6)
    assert len(calls) == 1
    assert isinstance(first, OnnxEvaluator) and first.path == second.path  # type: ignore[union-attr]
    cached = Path(first.path)  # type: ignore[union-attr]
    assert cached.parent == tmp_path / "cache" / "nets"
    assert loading.is_katago_model(B6) and not loading.is_katago_model(cached)
    assert not list(cached.parent.glob("*.part"))  # no leftovers of the atomic write
    # A fixed board size is a different cache entry.
    fixed = load_evaluator(B6, board_size=9)
    assert len(calls) == 2 and fixed.path != first.path  # type: ignore[union-attr]
    assert fixed.evaluate([GameState(size=9)])[0].policy.shape == (82,)
