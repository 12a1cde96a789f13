"""KataGo input-feature encoding (miai.nets.features.encode) in positions per second (``miai bench features``).

Positions: on 19x19 with a kifu file, mid-game positions of real games (one a line, ``id<TAB>;B[pd];W[dd]...``; a
random move number between 20 and 200 of each game), else random legal games as on other sizes (a fixed seed).
Modes:

- ``cold``: every memo of the feature code is cleared before each position, so each encoding reads
  the ladders and area of all three boards (now, 1 and 2 moves ago) from scratch: the worst case;
- ``search``: the position's parent (one move less) is encoded first, untimed, then the position:
  what a search sees, where a leaf's boards 1 and 2 moves ago are its parents' current boards;
- ``replay`` (needs a net): the positions a real search with that net evaluates in a number of playouts (from the
  position ``miai bench`` starts from), encoded in the same order with the memos warm, as the search's evaluator
  encodes them. The most realistic figure.

positions/s is wall-clock and per CPU second of this process (robust on a busy machine), each the best of several
passes.

``bench_threads`` encodes the positions a batch at a time, as a search's evaluator does (``BatchEncoder``), with 1, 2
or more threads in interleaved rounds (memos cleared before each pass), and measures what share of one thread's time
the compiled kernels take, which run without the GIL: the part that threads can overlap (Amdahl's law then bounds
what n threads give, 1 / ((1 - share) + share / n)).

``search_split`` instead runs a search (batch 16, no eval cache) for some seconds and splits its time: playouts/s,
the net's own evaluations/s (onnxruntime's time only, in the same run), their ratio (the search's goal), and the CPU
time ``features.encode`` takes per evaluation.
"""

from __future__ import annotations

import cProfile
import pstats
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO, cast

import numpy as np

from miai.engine.bench.harness import BenchResult
from miai.engine.bench.search import opening
from miai.engine.config import SearchConfig
from miai.nets.backends import NetSession
from miai.engine.core.search import Search
from miai.go.coords import PASS, parse_sgf
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features
from miai.nets.evaluator import Evaluation, Evaluator, OnnxEvaluator, innermost, onnx_net
from miai.nets.protocol import NetPosition
from miai.nets.loading import load_evaluator

__all__ = ["MODES", "kifu_states", "random_states", "searched_states", "search_split", "bench_encoding",
           "bench_threads", "Encodings", "compare_encodings", "saved_encodings"]

MODES = ("cold", "search", "replay")
Encodings = list[tuple[np.ndarray, np.ndarray]]


def kifu_states(kifu: Path, count: int, seed: int) -> list[GameState]:
    """``count`` mid-game 19x19 positions of real games (one per game, random move number)."""
    rng = random.Random(seed)
    states: list[GameState] = []
    with open(kifu, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if len(states) >= count:
                break
            moves = _kifu_moves(line)
            if len(moves) < 40:
                continue
            state = GameState(19, Rules.preset("chinese"), 7.5)
            stop = rng.randint(20, min(200, len(moves) - 1))
            try:
                for move in moves[:stop]:
                    state.push(move)
            except ValueError:
                continue
            states.append(state)
    return states


def _kifu_moves(line: str) -> list[int]:
    _, _, body = line.rstrip("\n").partition("\t")
    moves = []
    for token in body.split(";")[1:]:
        if len(token) < 5 or token[1] != "[":
            break
        try:
            moves.append(parse_sgf(token[2 : token.index("]")], 19))
        except ValueError:
            break
    return moves


def random_states(size: int, count: int, seed: int) -> list[GameState]:
    """``count`` positions of random legal games (uniform moves, no pass before the board fills up)."""
    rng = random.Random(seed)
    states = []
    for _ in range(count):
        state = GameState(size, Rules.preset("chinese"), 7.5)
        length = rng.randint(size * size // 4, size * size)
        for _ in range(length):
            legal = state.legal_moves()
            state.push(rng.choice(legal) if legal else PASS)
            if state.is_over():
                break
        states.append(state)
    return states


def _onnx(evaluator: Evaluator, size: int) -> OnnxEvaluator:
    """The onnxruntime net under ``evaluator``'s cache (the split times its session; no cached answers)."""
    inner = onnx_net(evaluator, size)
    if inner is None:
        raise ValueError(f"{type(innermost(evaluator, size)).__name__} is not an onnxruntime net")
    return inner


def searched_states(size: int, net: Path, playouts: int) -> list[GameState]:
    """Copies of the positions a search with ``net`` sends to the evaluator, in order."""
    recording = _Recording(_onnx(load_evaluator(str(net)), size))
    search = Search(recording, SearchConfig())
    search.set_root(opening(size, size, 0))
    search.run(None, None, max_visits=0, max_playouts=playouts)
    return recording.seen


class _Recording:
    """The net, keeping a copy of every position it is asked to evaluate."""

    def __init__(self, net: OnnxEvaluator) -> None:
        self.net = net
        self.max_batch = net.max_batch
        self.seen: list[GameState] = []

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        self.seen.extend(cast(GameState, s).copy() for s in states)  # a search from a GameState root hands GameStates
        return self.net.evaluate(states)


def search_split(size: int, net: Path, seconds: float) -> list[BenchResult]:
    """How a search's time splits between the net and feature encoding."""
    inner = _onnx(load_evaluator(str(net)), size)
    spent = {"net": 0.0, "encode": 0.0}
    session, encode = inner.session, features.encode

    class TimedSession:  # the net's session with its run timed (the rest is the session's own)
        def __getattr__(self, name: str) -> Any:
            return getattr(session, name)

        def run(self, names: Sequence[str] | None, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
            start = time.perf_counter()
            try:
                return session.run(names, feeds)
            finally:
                spent["net"] += time.perf_counter() - start

    def timed_encode(state: NetPosition, passing_hacks: bool = False, playout_advantage: float = 0.0,
                     conservative_root: bool = False) -> tuple[np.ndarray, np.ndarray]:
        start = time.thread_time()  # the evaluator encodes in a worker thread
        try:
            return encode(state, passing_hacks, playout_advantage, conservative_root)
        finally:
            spent["encode"] += time.thread_time() - start

    inner.session, features.encode = cast(NetSession, TimedSession()), timed_encode
    try:
        search = Search(inner, SearchConfig())
        search.set_root(opening(size, size, 0))
        snapshot = search.run(None, None, max_visits=0, max_playouts=0, max_time=seconds)
    finally:
        inner.session, features.encode = session, encode
    evals = search.stats()["net_evals"]
    playouts = snapshot.playouts / snapshot.elapsed
    net_rate = evals / spent["net"]
    name = f"features {size}x{size}: search split"
    details = {"size": size, "net_evals": evals}
    return [
        BenchResult(f"{name}: search playouts", playouts, "playouts/s", snapshot.elapsed,
                    snapshot.playouts, details),
        BenchResult(f"{name}: net alone", net_rate, "evals/s", spent["net"], evals, details),
        BenchResult(f"{name}: playouts over net evals", playouts / net_rate, "ratio", snapshot.elapsed, evals,
                    details),
        BenchResult(f"{name}: encode CPU per evaluation", spent["encode"] / evals * 1e3, "ms/eval", spent["encode"],
                    evals, details),
    ]


def clear_memos() -> None:
    """Forget every memo the feature code keeps between positions."""
    for name in dir(features):
        obj = getattr(features, name)
        if hasattr(obj, "cache_clear") and name.startswith("_") and not isinstance(obj, type):
            obj.cache_clear()


def _run(states: list[GameState], mode: str) -> tuple[float, float, Encodings]:
    """(wall seconds, CPU seconds, encodings) of encoding every state once in ``mode``."""
    wall = cpu = 0.0
    outputs: Encodings = []
    if mode == "replay":
        clear_memos()
        w0, c0 = time.perf_counter(), time.process_time()
        outputs = [features.encode(state) for state in states]
        return time.perf_counter() - w0, time.process_time() - c0, outputs
    for state in states:
        clear_memos()
        if mode == "search" and state.moves:
            move = state.pop()
            features.encode(state)
            state.push(move[1], move[0])
        w0, c0 = time.perf_counter(), time.process_time()
        outputs.append(features.encode(state))
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    return wall, cpu, outputs


def bench_encoding(states: list[GameState], size: int, mode: str, repeat: int, *,
                   profile: TextIO | None = None) -> tuple[list[BenchResult], Encodings]:
    """Positions per wall and per CPU second of encoding `states` in `mode`, each the best of `repeat` passes, and the
    encodings; with `profile`, one pass under cProfile whose 30 costliest functions are printed there."""
    if profile is not None:
        profiler = cProfile.Profile()
        profiler.enable()
        runs = [_run(states, mode)]
        profiler.disable()
        pstats.Stats(profiler, stream=profile).sort_stats("cumulative").print_stats(30)
    else:
        runs = [_run(states, mode) for _ in range(repeat)]
    wall = min(r[0] for r in runs)
    cpu = min(r[1] for r in runs)
    name = f"features {size}x{size} {mode}"
    details = {"size": size, "mode": mode, "positions": len(states), "passes": len(runs)}
    return ([BenchResult.from_count(f"{name}: positions", len(states), wall, "positions/s", **details),
             BenchResult.from_count(f"{name}: positions per CPU second", len(states), cpu, "pos/cpu-s", **details)],
            runs[0][2])


def compare_encodings(size: int, encodings: Encodings, expected: dict[str, np.ndarray]) -> int:
    """How many of `encodings` differ from the saved ones of the same size and index in `expected`."""
    mismatches = 0
    for k, (spatial, global_) in enumerate(encodings):
        key = f"{size}_{k}"
        same = np.array_equal(expected[key + "_s"], spatial) and np.array_equal(expected[key + "_g"], global_)
        mismatches += not same
    return mismatches


def saved_encodings(size: int, encodings: Encodings) -> dict[str, np.ndarray]:
    """`encodings` under the keys ``compare_encodings`` reads (``SIZE_INDEX_s`` and ``SIZE_INDEX_g``)."""
    saved = {}
    for k, (spatial, global_) in enumerate(encodings):
        saved[f"{size}_{k}_s"], saved[f"{size}_{k}_g"] = spatial, global_
    return saved


# The compiled kernels that run without the GIL (miai.go.compiled), by the name the encoding reaches them under.
_NOGIL_KERNELS = ("chain_liberties_padded", "ladder_planes_padded", "calculate_area_flat")


def _encode_batches(encoder: Any, states: Sequence[NetPosition], batch: int) -> float:
    """Wall seconds to encode ``states`` ``batch`` at a time, memos cleared first."""
    clear_memos()
    start = time.perf_counter()
    for first in range(0, len(states), batch):
        encoder.encode(states[first : first + batch], passing_hacks=True)
    return time.perf_counter() - start


def kernel_share(states: Sequence[NetPosition], batch: int) -> float:
    """The share of one thread's encoding time spent inside the nogil kernels (0 without numba)."""
    from miai.go import compiled
    from miai.nets.evaluator import BatchEncoder

    if not compiled.ENABLED:
        return 0.0
    inside = [0.0]
    originals = {name: getattr(compiled, name) for name in _NOGIL_KERNELS}

    def timed(kernel: Any) -> Any:
        def run(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                return kernel(*args)
            finally:
                inside[0] += time.perf_counter() - start
        return run

    encoder = BatchEncoder(1)
    _encode_batches(encoder, states, batch)  # compiles or loads the kernels first
    try:
        for name, kernel in originals.items():
            setattr(compiled, name, timed(kernel))
        total = _encode_batches(encoder, states, batch)
    finally:
        for name, kernel in originals.items():
            setattr(compiled, name, kernel)
    return inside[0] / total if total > 0 else 0.0


def bench_threads(states: Sequence[NetPosition], size: int, batch: int, threads: Sequence[int],
                  rounds: int) -> list[BenchResult]:
    """Positions/s of encoding ``states`` in batches of ``batch`` with each thread count (medians of ``rounds``
    interleaved rounds; the first count is the baseline of each ratio), and the kernels' share of one thread's time
    with Amdahl's bound for 2, 8 and 16 threads."""
    from miai.nets.evaluator import BatchEncoder

    encoders = {count: BatchEncoder(count) for count in threads}
    for encoder in encoders.values():
        _encode_batches(encoder, states[:batch], batch)  # threads started, kernels loaded
    walls: dict[int, list[float]] = {count: [] for count in threads}
    for r in range(rounds):
        order = list(threads) if r % 2 == 0 else list(reversed(threads))
        for count in order:
            walls[count].append(_encode_batches(encoders[count], states, batch))
    medians = {count: float(np.median(times)) for count, times in walls.items()}
    base = medians[threads[0]]
    name = f"features {size}x{size} batch {batch}"
    details: dict[str, object] = {"size": size, "batch": batch, "positions": len(states), "rounds": rounds}
    results = [BenchResult.from_count(f"{name}, {count} thread{'s' * (count > 1)}: positions", len(states),
                                      medians[count], "positions/s", threads=count,
                                      speedup=base / medians[count], **details) for count in threads]
    results += [BenchResult(f"{name}, {count} threads / {threads[0]}", base / medians[count], "x", medians[count],
                            len(states), dict(details, threads=count)) for count in threads[1:]]
    share = kernel_share(states, batch)
    results.append(BenchResult(f"{name}: nogil kernels' share of one thread", 100.0 * share, "%", 0.0,
                               len(states), dict(details)))
    for count in (2, 8, 16):
        bound = 1.0 / ((1.0 - share) + share / count)
        results.append(BenchResult(f"{name}: Amdahl's bound at {count} threads", bound, "x", 0.0, len(states),
                                   dict(details, threads=count)))
    return results

