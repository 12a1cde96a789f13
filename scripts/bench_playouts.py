"""Measure random playouts per second from the empty board on 9x9 and 19x19 (one process, one core).

Usage: /work/venv/bin/python scripts/bench_playouts.py [--seconds S] [--sizes 9,19] [--seed N]

Each playout is what the playout evaluator does per playout (miai.nets.playouts.benchmark_playouts): copy the
board, play light random moves to two passes, find the owners of every point and score.
"""

from __future__ import annotations

import argparse

from miai.nets.playouts import benchmark_playouts


def main() -> None:
    """Parse arguments and print one line per board size."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per board size")
    parser.add_argument("--sizes", default="9,19", help="comma-separated board sizes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        result = benchmark_playouts(size, args.seconds, args.seed)
        print(f"{size}x{size}: {result.playouts_per_second:8.1f} playouts/s, "
              f"{result.moves_per_playout:6.1f} moves/playout, "
              f"{result.playouts_per_second * result.moves_per_playout:9.0f} moves/s "
              f"({result.playouts} playouts in {result.seconds:.1f} s)")


if __name__ == "__main__":
    main()
