"""Replay the server bridges' clocks (tests/gtp/test_server_bridges.py) many times on a busy machine, and count the
genmoves that ran over the time the server's clock held for them.

Usage (from the repository root):
    python tests/tools/bridge_load.py                         # 10 runs, 2 spinning processes per core beside
    python tests/tools/bridge_load.py --runs 3 --per-core 0   # a quiet machine (as quiet as others leave it)
    python tests/tools/bridge_load.py --sets server:uniform server:net

Each run replays every scenario once (board sizes and colours taken in turn, as the slow tests do) for each set
``CONFIG:EVALUATOR`` (``uniform``: no net; ``net``: the bundled net), while ``--per-core`` processes per core spin
beside the engine (tests/busy.py). It prints each run's late genmoves and its worst one (wall time over the limit),
then the totals; it exits 1 when any genmove was late.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.*

from tests.busy import busy_cores  # noqa: E402
from tests.gtp.test_server_bridges import Timing, replay, rotated  # noqa: E402

SETS = ("server:uniform", "default:uniform", "server:net", "default:net")


def one_run(sets: list[str]) -> list[tuple[str, Timing]]:
    """Every scenario once for each set, each timing with its set's name."""
    timings: list[tuple[str, Timing]] = []
    for name in sets:
        config, evaluator = name.split(":")
        timings += [(name, t) for t in replay(config, None if evaluator == "net" else evaluator, rotated())]
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--per-core", type=int, default=2, help="spinning processes per core beside the engine")
    parser.add_argument("--sets", nargs="+", default=list(SETS), help="CONFIG:EVALUATOR, evaluator uniform or net")
    args = parser.parse_args()
    total: list[Timing] = []
    began = time.monotonic()
    with busy_cores(args.per_core) as spinning:
        print(f"{spinning} spinning processes on {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
        for run in range(1, args.runs + 1):
            named = one_run(args.sets)
            timings = [t for _, t in named]
            total += timings
            late = [(name, t) for name, t in named if t.over]
            name, worst = max(named, key=lambda pair: pair[1].seconds - pair[1].limit)
            print(f"run {run}: {len(late)} of {len(timings)} late; closest: {name} {worst} "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
            for name, timing in late:
                print(f"    late: {name} {timing}", flush=True)
    over = [t for t in total if t.over]
    margins = sorted(t.limit - t.seconds for t in total)
    print(f"{len(total)} genmoves in {args.runs} runs ({time.monotonic() - began:.0f} s): {len(over)} late; "
          f"smallest margin {margins[0]:+.2f} s, median {margins[len(margins) // 2]:+.2f} s")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
