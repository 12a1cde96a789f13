"""Benchmark of the evaluator: positions per second end to end, against the bare net.

    python -m miai.engine.bench.nets NET [--sizes 19 9] [--batches 1 8 32] [--threads 1 2] [--seconds 3] [--repeats 1]

NET is an ``.onnx`` file or a KataGo model (converted once into the cache). For every board size,
batch size and onnxruntime intra-op thread count it reports:

- ``evaluator``: ``OnnxEvaluator.evaluate`` on real positions (features, net, decoding),
- ``net only``: the same session's ``run`` on the same, already encoded inputs,
- ``features``: feature encoding alone (single-threaded Python).

Feature timings start from an empty ladder memo each call (the worst case; in a search the
boards one and two moves ago are usually memoised already).

Positions come from random legal games (fixed seed) of 40% of the board's area in moves, so
ladders, liberties and the area planes do real work.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features
from miai.nets.evaluator import OnnxConfig, OnnxEvaluator
from miai.nets.loading import converted_path, is_katago_model


@dataclass(frozen=True)
class BenchRow:
    """One measurement: ``evals`` positions in ``seconds``."""

    what: str
    size: int
    batch: int
    threads: int
    evals: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.evals / self.seconds


def random_positions(size: int, count: int, seed: int = 0) -> list[GameState]:
    """``count`` positions from random legal games on a ``size`` board."""
    rng = random.Random(seed)
    positions = []
    for _ in range(count):
        state = GameState(size=size, rules=Rules.preset("chinese"), komi=7.5)
        for _ in range(int(0.4 * size * size)):
            moves = state.legal_moves()
            if not moves:
                break
            state.push(rng.choice(moves))
        positions.append(state)
    return positions


def _timed(budget: float, work: Callable[[], int]) -> tuple[int, float]:
    work()  # warm-up: onnxruntime allocates buffers on the first run of a shape
    done, start = 0, time.perf_counter()
    while True:
        done += work()
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return done, elapsed


def bench(
    path: str, sizes: Sequence[int], batches: Sequence[int], threads: Sequence[int], seconds: float, repeats: int = 1
) -> list[BenchRow]:
    """Run every combination; see the module docstring. Thread counts are measured in turn,
    ``repeats`` times, keeping each one's best run, so that load from other processes on a
    shared machine biases none of them."""
    rows = []
    evaluators = {count: OnnxEvaluator(path, OnnxConfig(intra_op_threads=count, max_batch=max(batches))) for count in threads}
    for size in sizes:
        positions = random_positions(size, max(batches))
        n, t = _timed(seconds, lambda: len([_cold_encode(s) for s in positions]))
        rows.append(BenchRow("features", size, 1, 1, n, t))
        for batch in batches:
            group = positions[:batch]
            best: dict[tuple[str, int], BenchRow] = {}
            for _ in range(repeats):
                for count, evaluator in evaluators.items():
                    feeds = _encoded_batch(group, evaluator.info.nn_len or size)
                    run = evaluator.session.run
                    measured = {
                        "evaluator": _timed(seconds, lambda: _cold_evaluate(evaluator, group)),
                        "net only": _timed(seconds, lambda: batch if run(None, feeds) else 0),
                    }
                    for what, (n, t) in measured.items():
                        row = BenchRow(what, size, batch, count, n, t)
                        if (what, count) not in best or row.rate > best[what, count].rate:
                            best[what, count] = row
            rows.extend(best[key] for key in sorted(best))
    return rows


def _cold_encode(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    # Forget memoised ladder planes: every position pays for its own ladder reading.
    features._ladder_planes_cached.cache_clear()
    return features.encode(state)


def _cold_evaluate(evaluator: OnnxEvaluator, states: Sequence[GameState]) -> int:
    features._ladder_planes_cached.cache_clear()
    return len(evaluator.evaluate(states))


def _encoded_batch(states: Sequence[GameState], nn_len: int) -> dict[str, np.ndarray]:
    encoded = [features.encode(s) for s in states]
    spatial = np.stack([features.place(sp, nn_len) for sp, _ in encoded])
    return {"input_spatial": spatial, "input_global": np.stack([g for _, g in encoded])}


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point (prints a table)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("net")
    parser.add_argument("--sizes", type=int, nargs="+", default=[19, 9])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=1, help="best of this many runs per setting")
    args = parser.parse_args(argv)
    path = str(converted_path(args.net)) if is_katago_model(args.net) else args.net
    print(f"{'what':10} {'size':>4} {'batch':>5} {'threads':>7} {'evals/s':>9}")
    for row in bench(path, args.sizes, args.batches, args.threads, args.seconds, args.repeats):
        print(f"{row.what:10} {row.size:>4} {row.batch:>5} {row.threads:>7} {row.rate:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
