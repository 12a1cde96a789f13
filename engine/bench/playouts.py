"""Random playouts from the empty board (``miai bench playouts``), and the search driving the playout evaluator.

Each playout is what the playout evaluator does per playout (miai.nets.playouts.benchmark_playouts): copy the
board, play light (or, tactical, capture/escape) random moves to two passes, find the owners of every point and
score. The search figure runs the engine's search with the playout evaluator (one playout per visit) from the empty
board for the same time.
"""

from __future__ import annotations

import time

from miai.engine.bench.harness import BenchResult
from miai.engine.config import SearchConfig
from miai.engine.search import Search
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.playouts import PlayoutEvaluator, benchmark_playouts

__all__ = ["bench_playouts", "bench_playout_search"]


def bench_playouts(size: int, seconds: float, seed: int = 1, *, tactical: bool = False) -> list[BenchResult]:
    """Playouts per wall and per CPU second, and moves per second, on an empty `size` board."""
    run = benchmark_playouts(size, seconds, seed, tactical=tactical)
    name = f"playouts {size}x{size}{' tactical' if tactical else ''}"
    details: dict[str, object] = {"size": size, "moves_per_playout": round(run.moves_per_playout, 1),
                                  "cpu_seconds": run.cpu_seconds}
    return [
        BenchResult(f"{name}: playouts", run.playouts_per_second, "games/s", run.seconds, run.playouts, details),
        BenchResult(f"{name}: playouts per CPU second", run.playouts_per_cpu_second, "games/cpu-s", run.seconds,
                    run.playouts, details),
        BenchResult(f"{name}: moves", run.playouts_per_second * run.moves_per_playout, "moves/s", run.seconds,
                    run.moves, details),
    ]


def bench_playout_search(size: int, seconds: float, seed: int, rule: str, *, tactical: bool = False
                         ) -> list[BenchResult]:
    """Visits per wall and per CPU second of one search from the empty board with the playout evaluator."""
    config = SearchConfig(selection=rule, max_visits=0, max_time=seconds, seed=seed)
    search = Search(PlayoutEvaluator(seed=seed, tactical=tactical), config)
    search.set_root(GameState(size, Rules.preset("chinese"), 7.5))
    cpu_start = time.process_time()
    visits = search.run().root.visits
    cpu = time.process_time() - cpu_start
    name = f"playouts {size}x{size}: search {rule}"
    # Visits over the budget, as a controller giving the search `seconds` sees it.
    return [BenchResult.from_count(f"{name} visits", visits, seconds, "visits/s", size=size, rule=rule),
            BenchResult.from_count(f"{name} visits per CPU second", visits, cpu, "visits/cpu-s", size=size,
                                   rule=rule)]
