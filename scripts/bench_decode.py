"""Benchmark: decoding a batch of net outputs row by row (the old way) against all rows at once (the evaluator's
way when every board fills the net's buffer and no symmetry is applied); checks both give the same evaluations.

Usage (from the repository root, after the net has been converted once, e.g. by `miai bench --model NET`):
    python scripts/bench_decode.py ~/.cache/miai/nets/g170-b6c96-...-dyn-c2.onnx
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from miai.engine.bench.nets import random_positions
from miai.nets.evaluator import Evaluation, OnnxEvaluator, _Encoded, _evaluation

BATCH = 16


def _microseconds_per_position(work: Callable[[], list[Evaluation]], budget: float = 0.3) -> float:
    start, done = time.perf_counter(), 0
    while time.perf_counter() - start < budget:
        done += len(work())
    return (time.perf_counter() - start) / done * 1e6


def main(path: str) -> None:
    evaluator = OnnxEvaluator(path, intra_op_threads=1)
    for size in (9, 19):
        encoded = [_Encoded(s) for s in random_positions(size, BATCH, seed=1)]
        feeds = {"input_spatial": np.stack([e.spatial for e in encoded]),
                 "input_global": np.stack([e.global_ for e in encoded])}
        outputs = dict(zip(evaluator._outputs, evaluator.session.run(None, feeds)))

        def per_row() -> list[Evaluation]:
            return [_evaluation(evaluator._decode_row(outputs, k, e, 0, size, 0.0), 0) for k, e in enumerate(encoded)]

        def whole() -> list[Evaluation]:
            batch = evaluator._decode_whole(outputs, encoded, 0.0)
            return [_evaluation(batch, k) for k in range(len(encoded))]

        for a, b in zip(per_row(), whole()):
            assert np.allclose(a.policy, b.policy) and abs(a.lead - b.lead) < 1e-9, "the two decodings differ"
        rounds: dict[str, list[float]] = {"per row": [], "whole": []}
        for _ in range(5):  # interleaved, median: the machine may be shared
            rounds["per row"].append(_microseconds_per_position(per_row))
            rounds["whole"].append(_microseconds_per_position(whole))
        row, batch = statistics.median(rounds["per row"]), statistics.median(rounds["whole"])
        print(f"{size}x{size} batch {BATCH}: decode per row {row:.1f} us/position, whole batch {batch:.1f}"
              f" us/position, ratio {row / batch:.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
