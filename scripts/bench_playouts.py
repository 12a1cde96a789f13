"""Measure random playouts per second from the empty board (and from a mid-game position) on 9x9 and 19x19.

Usage: python scripts/bench_playouts.py [--seconds S] [--sizes 9,19] [--seed N]

Runs playouts with the playout evaluator's own code (miai.nets.playouts.run_playouts) in one process, one core,
for about S seconds per size, and prints playouts/s, mean moves per playout and moves/s.
"""

from __future__ import annotations

import argparse
import random
import time

from miai.nets.playouts import PlayoutPosition, board_from_position, play_out, run_playouts


def measure(size: int, seconds: float, seed: int) -> tuple[float, float]:
    """(playouts per second, mean moves per playout) over about ``seconds`` of playouts from the empty board."""
    position = PlayoutPosition(size=size, stones=(0,) * (size * size), komi=7.5)
    rng = random.Random(seed)
    template = board_from_position(position)
    moves = playouts = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(10):
            moves += play_out(template.copy(), 1, rng.random)
            playouts += 1
    elapsed = time.perf_counter() - start
    return playouts / elapsed, moves / playouts


def measure_full(size: int, seconds: float, seed: int) -> float:
    """Playouts per second including scoring and ownership (what the evaluator does per playout)."""
    position = PlayoutPosition(size=size, stones=(0,) * (size * size), komi=7.5)
    rng = random.Random(seed)
    playouts = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        playouts += run_playouts(position, 10, rng).playouts
    return playouts / (time.perf_counter() - start)


def main() -> None:
    """Parse arguments and print one line per board size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--sizes", default="9,19")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        rate, length = measure(size, args.seconds, args.seed)
        full = measure_full(size, args.seconds, args.seed)
        print(f"{size}x{size}: {rate:8.1f} playouts/s (moves only), {full:8.1f} playouts/s (scored, with ownership),"
              f" {length:6.1f} moves/playout, {rate * length:9.0f} moves/s")


if __name__ == "__main__":
    main()
