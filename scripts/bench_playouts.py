"""Measure random playouts per second from the empty board on 9x9 and 19x19 (one process, one core).

Usage: python scripts/bench_playouts.py [--seconds S] [--sizes 9,19] [--seed N] [--search RULE]
       [--tactical]

Each playout is what the playout evaluator does per playout (miai.nets.playouts.benchmark_playouts): copy the
board, play light random moves to two passes, find the owners of every point and score. With ``--search RULE``
(puct, ucb1 or ucb1-tuned) it also runs the engine's search with the playout evaluator (one playout per visit)
from the empty board for the same time and reports visits per second.
"""

from __future__ import annotations

import argparse

from miai.nets.playouts import PlayoutEvaluator, benchmark_playouts


def search_rate(size: int, seconds: float, seed: int, rule: str, tactical: bool) -> tuple[int, float, float]:
    """(visits, wall seconds, CPU seconds) of one search from the empty board with the playout evaluator."""
    import time

    from miai.engine.config import SearchConfig
    from miai.engine.search import Search
    from miai.go.rules import Rules
    from miai.go.state import GameState

    config = SearchConfig(selection=rule, max_visits=0, max_time=seconds, seed=seed)
    search = Search(PlayoutEvaluator(seed=seed, tactical=tactical), config)
    search.set_root(GameState(size, Rules.preset("chinese"), 7.5))
    cpu_start = time.process_time()
    snapshot = search.run()
    return snapshot.root.visits, seconds, time.process_time() - cpu_start


def main() -> None:
    """Parse arguments and print one line per board size."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per board size")
    parser.add_argument("--sizes", default="9,19", help="comma-separated board sizes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", choices=("puct", "ucb1", "ucb1-tuned"), help="also time the search")
    parser.add_argument("--tactical", action="store_true", help="capture/escape playouts instead of light ones")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        result = benchmark_playouts(size, args.seconds, args.seed, tactical=args.tactical)
        print(f"{size}x{size}: {result.playouts_per_second:8.1f} playouts/s "
              f"({result.playouts_per_cpu_second:.1f} per CPU second), "
              f"{result.moves_per_playout:6.1f} moves/playout, "
              f"{result.playouts_per_second * result.moves_per_playout:9.0f} moves/s "
              f"({result.playouts} playouts in {result.seconds:.1f} s)")
        if args.search:
            visits, seconds, cpu = search_rate(size, args.seconds, args.seed, args.search, args.tactical)
            print(f"{size}x{size}: search {args.search} with playouts: {visits / seconds:8.1f} visits/s "
                  f"({visits / cpu:.1f} per CPU second; {visits} visits in {seconds:.1f} s)")


if __name__ == "__main__":
    main()
