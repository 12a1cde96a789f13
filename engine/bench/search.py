"""Search speed against raw evaluator speed, measured in the same run (``miai bench --model``).

The search's goal is to keep the net busy: playouts/s should come close to what the evaluator alone does at
the same batch size. Both are measured here on the same positions source, one after the other.
"""

from __future__ import annotations

import random
import time
from typing import Any

from miai.engine.bench.rules import BenchResult, random_game
from miai.engine.config import SearchConfig
from miai.engine.search import Search
from miai.go.rules import Rules
from miai.go.state import GameState

__all__ = ["bench_raw_evals", "bench_search"]


def _opening(size: int, plies: int, seed: int) -> GameState:
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
    states = [_opening(size, rng.randrange(0, size * 2), rng.randrange(1 << 30)) for _ in range(batch * batches)]
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
    state = _opening(size, size, seed)
    search = Search(evaluator, config)
    search.set_root(state)
    snapshot = search.run(None, None, max_visits=0, max_playouts=0, max_time=seconds)
    stats = search.stats()
    playouts = snapshot.playouts
    return BenchResult.from_count(f"search {size}x{size}: playouts (batch {config.batch_size})", playouts,
                                  snapshot.elapsed, "playouts/s", size=size, net_evals=stats["net_evals"],
                                  nodes=stats["nodes"])
