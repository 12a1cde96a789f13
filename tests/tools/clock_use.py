"""Measure how much of each overtime period `miai gtp` uses, timing real genmoves over GTP.

Usage (from the repository root):
    python tests/tools/clock_use.py                                   # 1 s byo-yomi and 30 s / 10 Canadian, 19x19
    python tests/tools/clock_use.py --clock byoyomi --moves 30 --size 9
    python tests/tools/clock_use.py --engine ".venv/bin/miai gtp --config server"

For each clock the engine gets a fresh game and plays ``--moves`` genmoves, alternating colours (the clock
starts in overtime: no main time). Each move's time is measured from writing ``genmove`` to reading the answer,
as a controller sees it. A move's share is its time divided by the time one move may take: the byo-yomi period,
or the Canadian period divided by its stones; for Canadian the whole period used by 10 stones is shown too.
"""

from __future__ import annotations

import argparse
import statistics
import time

from miai.gtp.client import GtpEngine

CLOCKS = {
    "byoyomi": ("kgs-time_settings byoyomi 0 1 5", 1.0, 1),  # (command, period seconds, moves per period)
    "canadian": ("time_settings 0 30 10", 30.0, 10),
}


def measure(engine_command: str, clock: str, size: int, moves: int) -> list[float]:
    """Seconds of each genmove under ``clock`` on a fresh ``size`` board."""
    command, _, _ = CLOCKS[clock]
    with GtpEngine(engine_command) as engine:
        for line in (f"boardsize {size}", "clear_board", command):
            engine.send(line, timeout=60)
        times = []
        for move in range(moves):
            start = time.monotonic()
            engine.send(f"genmove {'bw'[move % 2]}", timeout=60)
            times.append(time.monotonic() - start)
    return times


def report(clock: str, times: list[float]) -> None:
    _, period, stones = CLOCKS[clock]
    per_move = period / stones
    shares = [t / per_move for t in times]
    print(f"{clock}: {len(times)} moves, {per_move:.2f} s a move; share of it used: min {min(shares):.0%} "
          f"mean {statistics.mean(shares):.0%} max {max(shares):.0%}")
    print("  seconds: " + " ".join(f"{t:.2f}" for t in times))
    if stones > 1:
        # The engine plays every other move, so one period holds its moves 0, 2, 4, ... of one colour.
        for color, own in (("b", times[0::2]), ("w", times[1::2])):
            for first in range(0, len(own) - stones + 1, stones):
                used = sum(own[first:first + stones])
                print(f"  {color} period {first // stones + 1}: {used:.2f} s of {period:.0f} s ({used / period:.0%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="miai gtp", help="the engine's command line")
    parser.add_argument("--clock", choices=sorted(CLOCKS), action="append", help="clocks to measure (default: all)")
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--moves", type=int, default=20, help="genmoves per clock (both colours together)")
    args = parser.parse_args()
    for clock in args.clock or sorted(CLOCKS):
        report(clock, measure(args.engine, clock, args.size, args.moves))


if __name__ == "__main__":
    main()
