"""Decoding a batch of net outputs row by row (the old way) against all rows at once (``miai bench decode``).

The evaluator decodes the whole batch at once when every board fills the net's buffer and no symmetry is applied
(the search's case). Both decodings run on the same outputs of one batch of 16 random positions per board size,
are checked to give the same evaluations, then timed in interleaved rounds (the machine may be shared); the median
round counts.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np

from miai.engine.bench.harness import BenchResult
from miai.engine.bench.nets import random_positions
from miai.nets.evaluator import Evaluation, OnnxEvaluator, _Encoded, _evaluation

__all__ = ["BATCH", "DecodingsDiffer", "bench_decode"]

BATCH = 16
ROUNDS = 5


class DecodingsDiffer(RuntimeError):
    """The two decodings gave different evaluations (a bug, not a speed figure)."""


def bench_decode(path: str, sizes: Sequence[int] = (9, 19), budget: float = 0.3) -> list[BenchResult]:
    """Microseconds per position of each decoding and their ratio, per board size, on the ONNX net at `path`.

    Raises:
        DecodingsDiffer: the two decodings disagree.
    """
    evaluator = OnnxEvaluator(path, intra_op_threads=1)
    results: list[BenchResult] = []
    for size in sizes:
        per_row, whole = _decoders(evaluator, size)
        for a, b in zip(per_row(), whole()):
            if not (np.allclose(a.policy, b.policy) and abs(a.lead - b.lead) < 1e-9):
                raise DecodingsDiffer(f"{size}x{size}: the row-by-row and whole-batch decodings differ")
        rounds: dict[str, list[float]] = {"per row": [], "whole": []}
        for _ in range(ROUNDS):
            rounds["per row"].append(_microseconds_per_position(per_row, budget))
            rounds["whole"].append(_microseconds_per_position(whole, budget))
        row, batch = statistics.median(rounds["per row"]), statistics.median(rounds["whole"])
        name = f"decode {size}x{size} batch {BATCH}"
        details: dict[str, object] = {"size": size, "batch": BATCH, "rounds": ROUNDS}
        results += [BenchResult(f"{name}: per row", row, "us/pos", budget * ROUNDS, BATCH, details),
                    BenchResult(f"{name}: whole batch", batch, "us/pos", budget * ROUNDS, BATCH, details),
                    BenchResult(f"{name}: per row over whole", row / batch, "ratio", budget * ROUNDS, BATCH, details)]
    return results


def _decoders(evaluator: OnnxEvaluator, size: int
              ) -> tuple[Callable[[], list[Evaluation]], Callable[[], list[Evaluation]]]:
    """The two ways of decoding one batch of outputs of `size` positions: row by row, and whole."""
    encoded = [_Encoded(s, False) for s in random_positions(size, BATCH, seed=1)]
    feeds = {"input_spatial": np.stack([e.spatial for e in encoded]),
             "input_global": np.stack([e.global_ for e in encoded])}
    outputs = dict(zip(evaluator._outputs, evaluator.session.run(None, feeds)))

    def per_row() -> list[Evaluation]:
        return [_evaluation(evaluator._decode_row(outputs, k, e, 0, size, 0.0), 0) for k, e in enumerate(encoded)]

    def whole() -> list[Evaluation]:
        batch = evaluator._decode_whole(outputs, encoded, 0.0)
        return [_evaluation(batch, k) for k in range(len(encoded))]

    return per_row, whole


def _microseconds_per_position(work: Callable[[], list[Evaluation]], budget: float) -> float:
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < budget:
        done += len(work())
    return (time.perf_counter() - start) / done * 1e6
