"""int8 copies of converted nets (``net.precision = "int8"``), made once and cached beside the fp32 file.

onnxruntime's static quantisation (QDQ format, per-channel signed 8-bit weights, unsigned 8-bit activations)
fixes every activation's range beforehand from calibration positions. Only the trunk's 3x3 convolutions are
quantised (most of the work); the first convolution (it reads the 0/1 input planes) and the heads stay fp32:
quantising those too cost far more accuracy (on KataGo's b6 reference positions the lead moved by 9 points on
average, against 0.24 points this way). Those come from the net itself: short
games it plays by sampling its own policy on 9x9 and 19x19 boards, so the ranges are those of real-looking
positions. (Dynamic quantisation, which needs no calibration, runs KataGo's convolutions as ConvInteger, which
was 3-5 times slower than fp32 here; static QLinearConv was about 1.8 times faster per CPU second.)
The copy is named after the fp32 file plus ``-int8-q<QUANT_VERSION>``: a newer quantisation recipe makes a new
copy, and an fp32 file that changes (a new converter version) gets a new name anyway. Its accuracy against fp32
on KataGo's reference positions is in docs/benchmarks.md.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["QUANT_VERSION", "quantized_path", "quantize_int8"]

QUANT_VERSION = 2


def quantized_path(fp32: str | Path, directory: str | Path | None = None) -> Path:
    """The int8 copy of the ONNX net ``fp32``, quantising it now if it is not there yet.

    The copy goes beside ``fp32`` when that directory is writable, else into ``directory`` (default: the
    conversion cache, ``miai.nets.convert.default_cache_dir``).
    """
    from miai.nets import convert

    source = Path(fp32)
    name = f"{source.stem}-int8-q{QUANT_VERSION}.onnx"
    beside = source.parent / name
    if beside.is_file():
        return beside
    if os.access(source.parent, os.W_OK):
        target = beside
    else:  # e.g. a net installed read-only: key the copy by the file's content
        cache = Path(directory) if directory is not None else convert.default_cache_dir()
        target = cache / f"{source.stem}-{convert._file_digest(source)[:16]}-int8-q{QUANT_VERSION}.onnx"
        if target.is_file():
            return target
    quantize_int8(source, target)
    return target


def quantize_int8(source: str | Path, target: str | Path, *, seed: int = 0) -> None:
    """Write the statically quantised copy of ``source`` to ``target`` atomically (calibrated as above)."""
    import logging

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    trunk = trunk_convolutions(source)
    if not trunk:  # an empty list would tell onnxruntime to quantise every node
        raise ValueError(f"{source}: no named 3x3 trunk convolutions to quantise; use net.precision = \"fp32\"")
    feeds = calibration_feeds(source, seed=seed)

    class Reader(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime is untyped: its base class is Any
        def __init__(self) -> None:
            self.items = iter(feeds)

        def get_next(self) -> dict[str, Any] | None:
            return next(self.items, None)

    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(fd)
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs advice on model pre-processing to the root logger
    try:
        # The model's metadata (model version, score multipliers) survives quantisation.
        quantize_static(str(source), tmp, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8,
                        nodes_to_quantize=trunk)
        os.replace(tmp, target)
    finally:
        root.setLevel(level)
        for leftover in (tmp, tmp.replace(".onnx", "-inferred.onnx"), "augmented_model.onnx"):
            if os.path.exists(leftover) and leftover != str(target):
                os.unlink(leftover)


def trunk_convolutions(source: str | Path) -> list[str]:
    """Names of the 3x3 Conv nodes of an ONNX net that do not read a graph input directly."""
    import onnx

    model = onnx.load(str(source))
    shapes = {t.name: tuple(t.dims) for t in model.graph.initializer}
    inputs = {i.name for i in model.graph.input}
    return [n.name for n in model.graph.node
            if n.op_type == "Conv" and n.name and n.input[0] not in inputs and shapes.get(n.input[1], ())[-2:] == (3, 3)]


def calibration_feeds(source: str | Path, *, seed: int = 0, sizes: tuple[int, ...] = (9, 19), games: int = 2,
                      plies: int = 60, every: int = 4) -> list[dict[str, Any]]:
    """Net inputs of positions from short games the fp32 net ``source`` plays against itself.

    Moves are sampled from its policy (so games differ); every ``every``-th position is kept. A net with a fixed
    board size plays on that size only.
    """
    import numpy as np

    from miai.go.coords import PASS
    from miai.go.rules import Rules
    from miai.go.state import GameState
    from miai.nets import features
    from miai.nets.evaluator import OnnxEvaluator

    evaluator = OnnxEvaluator(str(source), max_batch=1)
    rng = np.random.default_rng(seed)
    fixed = evaluator.info.nn_len
    feeds = []
    for size in (fixed,) if fixed else sizes:
        for _ in range(games):
            state = GameState(size, Rules.preset("chinese"), 7.5)
            for ply in range(plies):
                if state.is_over():
                    break
                if ply % every == 0:
                    spatial, global_ = features.encode(state)
                    feeds.append({"input_spatial": features.place(spatial, fixed or size)[None],
                                  "input_global": global_[None]})
                policy = evaluator.evaluate([state])[0].policy.astype(np.float64)
                move = int(rng.choice(len(policy), p=policy / policy.sum()))
                state.push(PASS if move == size * size else move)  # the policy's last entry is pass
    return feeds
