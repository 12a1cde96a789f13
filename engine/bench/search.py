"""Search speed against raw evaluator speed, measured in the same run (``miai bench --model``), and the search's
own overhead from the empty board (``miai bench search``).

The search's goal is to keep the net busy: playouts/s should come close to what the evaluator alone does at
the same batch size. Both are measured here on the same positions source, one after the other. With evaluators
that cost (almost) nothing (``UniformEvaluator``, ``FreeEvaluator``), what is left is the search's own cost.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from miai.engine.bench.harness import BenchResult, random_game
from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, UniformEvaluator

__all__ = ["opening", "bench_raw_evals", "bench_search", "FreeEvaluator", "bench_search_overhead",
           "bench_search_against_net"]


def opening(size: int, plies: int, seed: int) -> GameState:
    """A position a few random plies into a game, so the search does not start from the empty board."""
    state = GameState(size, Rules.preset("chinese"), 7.5)
    for move in random_game(size, random.Random(seed), "chinese", max_moves=plies):
        state.push(move)
    return state


def bench_raw_evals(evaluator: Any, size: int, batch: int, seconds: float, *, seed: int = 0) -> BenchResult:
    """Evaluations per second of ``evaluator`` alone on batches of ``batch`` distinct positions."""
    rng = random.Random(seed)
    # Distinct positions, so neither an evaluation cache nor the feature encoder's ladder cache can help much.
    batches = 16
    states = [opening(size, rng.randrange(0, size * 2), rng.randrange(1 << 30)) for _ in range(batch * batches)]
    evaluator.evaluate(states[:batch])  # warm-up: session start, first allocation
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        offset = (count // batch) % batches * batch
        evaluator.evaluate(states[offset:offset + batch])
        count += batch
    elapsed = time.perf_counter() - start
    return BenchResult.from_count(f"net {size}x{size}: raw evals (batch {batch})", count, elapsed, "evals/s",
                                  size=size, batch=batch)


def bench_search(evaluator: Any, config: SearchConfig, size: int, seconds: float, *,
                 seed: int = 0) -> BenchResult:
    """Playouts per second of the graph search over ``evaluator`` for about ``seconds``."""
    state = opening(size, size, seed)
    search = Search(evaluator, config)
    search.set_root(state)
    snapshot = search.run(None, None, max_visits=0, max_playouts=0, max_time=seconds)
    stats = search.stats()
    playouts = snapshot.playouts
    return BenchResult.from_count(f"search {size}x{size}: playouts (batch {config.batch_size})", playouts,
                                  snapshot.elapsed, "playouts/s", size=size, net_evals=stats["net_evals"],
                                  nodes=stats["nodes"])


class FreeEvaluator:
    """A fixed softmax policy over empty points (like a net's: a few moves take most of the mass), even value.

    It costs almost nothing, so a search over it measures the search's own overhead.
    """

    max_batch = 64

    def __init__(self, size: int) -> None:
        self.logits = np.random.default_rng(0).normal(size=size * size + 1).astype(np.float32) * 2.5

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        """The same policy for every state, its occupied points masked out."""
        out = []
        for state in states:
            logits = self.logits.copy()
            logits[:-1][state.stones() != 0] = -np.inf
            p = np.exp(logits - logits.max())
            out.append(Evaluation((p / p.sum()).astype(np.float32), 0.5, 0.5, 0.0, 0.0, 5.0, 0.0, None))
        return out


def bench_search_overhead(size: int, visits: int, batch: int, overlap: bool) -> list[BenchResult]:
    """Playouts/s of `visits`-visit searches from the empty board with the ``uniform`` evaluator (which lists legal
    moves in Python) and the ``free`` one (what remains is the search's own overhead)."""
    return [_search_rate(name, evaluator, size, visits, batch, overlap, max_time=0.0)
            for name, evaluator in (("uniform", UniformEvaluator()), ("free", FreeEvaluator(size)))]


def bench_search_against_net(net: Any, size: int, visits: int, batch: int, overlap: bool, repeat: int,
                             raw_seconds: float = 5.0) -> list[BenchResult]:
    """`repeat` interleaved rounds (so that load changes hit both alike) of the net's raw evals/s on a batch of
    opening positions and a `visits`-visit search's playouts/s over it, with their ratio."""
    results: list[BenchResult] = []
    for _ in range(repeat):
        raw = _raw_rate(net, size, batch, raw_seconds)
        found = _search_rate("net", net, size, visits, batch, overlap)
        ratio = found.value / raw.value if raw.value else 0.0
        results += [raw, found, BenchResult(f"search {size}x{size} net: playouts/s over raw evals/s", ratio, "ratio",
                                            found.seconds, found.count)]
    return results


def _search_rate(name: str, evaluator: Any, size: int, visits: int, batch: int, overlap: bool,
                 max_time: float | None = None) -> BenchResult:
    """Playouts/s of one ``visits``-visit search from the empty board; ``max_time`` 0 lifts the config's time cap,
    so that every run does the same work (the details then carry ``per_cpu_second``, steadier than wall-clock
    rates on a loaded machine)."""
    config = SearchConfig(max_visits=visits, batch_size=batch, overlap=overlap, seed=1)
    if max_time is not None:
        config = replace(config, max_time=max_time)
    search = Search(evaluator, config)
    search.set_root(GameState(size))
    start, cpu = time.perf_counter(), time.process_time()
    snapshot = search.run()
    cpu = time.process_time() - cpu
    return BenchResult.from_count(f"search {size}x{size} {name}: playouts", snapshot.playouts,
                                  time.perf_counter() - start, "playouts/s", size=size, visits=visits, batch=batch,
                                  overlap=overlap, cpu_seconds=cpu,
                                  per_cpu_second=snapshot.playouts / cpu if cpu > 0 else 0.0)


def _raw_rate(evaluator: Any, size: int, batch: int, seconds: float) -> BenchResult:
    """Evaluations per second of one batch of positions a few random moves (fewer than 12) into a game."""
    rng = random.Random(1)
    states = []
    for _ in range(batch):
        state = GameState(size)
        for _ in range(rng.randrange(12)):
            state.push(rng.choice(state.legal_moves()))
        states.append(state)
    evaluator.evaluate(states)  # warm-up
    start, count = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        evaluator.evaluate(states)
        count += batch
    return BenchResult.from_count(f"search {size}x{size} net: raw evals (batch {batch})", count,
                                  time.perf_counter() - start, "evals/s", size=size, batch=batch)
