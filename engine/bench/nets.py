"""Net speed: the evaluator against the bare net (``miai bench net``), and conversion plus a plain onnxruntime
session (``miai bench convert``).

``bench_net``: NET is an ``.onnx`` file or a KataGo model (converted once into the cache). For every board size,
batch size and onnxruntime intra-op thread count it reports:

- ``evaluator``: ``OnnxEvaluator.evaluate`` on real positions (features, net, decoding),
- ``net only``: the same session's ``run`` on the same, already encoded inputs,
- ``features``: feature encoding alone (single-threaded Python).

Feature timings start from an empty ladder memo each call (the worst case; in a search the
boards one and two moves ago are usually memoised already).

Positions come from random legal games (fixed seed) of 40% of the board's area in moves, so
ladders, liberties and the area planes do real work.

``bench_convert``: for each board size the KataGo net is converted with the size fixed, then a plain onnxruntime
CPU session runs random (plausible) inputs at each batch size and thread count for a fixed time. evals/s counts
positions, so a batch of 8 evaluated 10 times is 80 evals; it is given per wall second and per CPU second of this
process: on a shared, busy machine the latter stays close to what an idle machine would give with one thread (with
two threads it measures efficiency, not speed).
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort

from miai.engine.bench.harness import BenchResult
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features
from miai.nets.convert import convert_model
from miai.nets.evaluator import OnnxConfig, OnnxEvaluator
from miai.nets.loading import converted_path, is_katago_model

__all__ = ["random_positions", "bench_net", "bench_convert"]


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


def _row(what: str, size: int, batch: int, threads: int, evals: int, seconds: float) -> BenchResult:
    return BenchResult.from_count(f"{what} {size}x{size} batch {batch} threads {threads}", evals, seconds, "evals/s",
                                  what=what, size=size, batch=batch, threads=threads)


def bench_net(
    net: str, sizes: Sequence[int], batches: Sequence[int], threads: Sequence[int], seconds: float, repeats: int = 1
) -> list[BenchResult]:
    """Run every combination; see the module docstring. Thread counts are measured in turn,
    ``repeats`` times, keeping each one's best run, so that load from other processes on a
    shared machine biases none of them."""
    path = str(converted_path(net)) if is_katago_model(net) else net
    rows = []
    evaluators = {count: OnnxEvaluator(path, OnnxConfig(intra_op_threads=count, max_batch=max(batches))) for count in threads}
    for size in sizes:
        positions = random_positions(size, max(batches))
        n, t = _timed(seconds, lambda: len([_cold_encode(s) for s in positions]))
        rows.append(_row("features", size, 1, 1, n, t))
        for batch in batches:
            group = positions[:batch]
            best: dict[tuple[str, int], BenchResult] = {}
            for _ in range(repeats):
                for count, evaluator in evaluators.items():
                    feeds = _encoded_batch(group, evaluator.info.nn_len or size)
                    run = evaluator.session.run
                    measured = {
                        "evaluator": _timed(seconds, lambda: _cold_evaluate(evaluator, group)),
                        "net only": _timed(seconds, lambda: batch if run(None, feeds) else 0),
                    }
                    for what, (n, t) in measured.items():
                        row = _row(what, size, batch, count, n, t)
                        if (what, count) not in best or row.value > best[what, count].value:
                            best[what, count] = row
            rows.extend(best[key] for key in sorted(best))
    return rows


def _cold_encode(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    # Forget memoised ladder planes: every position pays for its own ladder reading.
    features.clear_ladder_memo()
    return features.encode(state)


def _cold_evaluate(evaluator: OnnxEvaluator, states: Sequence[GameState]) -> int:
    features.clear_ladder_memo()
    return len(evaluator.evaluate(states))


def _encoded_batch(states: Sequence[GameState], nn_len: int) -> dict[str, np.ndarray]:
    encoded = [features.encode(s) for s in states]
    spatial = np.stack([features.place(sp, nn_len) for sp, _ in encoded])
    return {"input_spatial": spatial, "input_global": np.stack([g for _, g in encoded])}


def bench_convert(net: str | Path, sizes: Sequence[int], batches: Sequence[int], threads: Sequence[int],
                  seconds: float) -> list[BenchResult]:
    """Conversion time per board size (milliseconds), then evals/s (wall and per CPU second) of a plain session
    on the result."""
    results: list[BenchResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            target = Path(tmp) / f"net{size}.onnx"
            start = time.perf_counter()
            converted = convert_model(net, target, board_size=size)
            took = time.perf_counter() - start
            results.append(BenchResult(f"convert {size}x{size}", took * 1e3, "ms", took, 1,
                                       {"size": size, "megabytes": round(converted.bytes_written / 1e6, 1),
                                        "model_version": converted.model_version,
                                        "onnxruntime": ort.__version__}))
            for batch in batches:
                for count in threads:
                    runs, wall, cpu = _plain_session_rate(target, size, batch, count, seconds)
                    name = f"onnxruntime {size}x{size} batch {batch} threads {count}"
                    details = {"size": size, "batch": batch, "threads": count}
                    results += [BenchResult.from_count(name, runs * batch, wall, "evals/s", **details),
                                BenchResult.from_count(f"{name} per CPU second", runs * batch, cpu, "evals/cpu-s",
                                                       **details)]
    return results


def _plain_inputs(size: int, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random (plausible) inputs: the on-board plane, random stones, komi 7.5 from White's view."""
    spatial = np.zeros((batch, 22, size, size), np.float32)
    spatial[:, 0] = 1.0
    stones = rng.integers(0, 3, size=(batch, size, size))
    spatial[:, 1] = stones == 1
    spatial[:, 2] = stones == 2
    glob = np.zeros((batch, 19), np.float32)
    glob[:, 5] = -0.375
    return {"input_spatial": spatial, "input_global": glob}


def _plain_session_rate(path: Path, size: int, batch: int, threads: int, seconds: float
                        ) -> tuple[int, float, float]:
    """(runs, wall seconds, CPU seconds) of a plain CPU session running one batch for `seconds` (3 runs at least)."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feed = _plain_inputs(size, batch, np.random.default_rng(0))
    for _ in range(2):  # warm-up: first runs allocate and pick kernels
        sess.run(None, feed)
    runs, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        sess.run(None, feed)
        runs += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and runs >= 3:
            return runs, elapsed, max(time.process_time() - cpu_start, 1e-9)
