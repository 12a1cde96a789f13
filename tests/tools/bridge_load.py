"""Replay the server bridges' clocks (tests/gtp/test_server_bridges.py) many times on a busy machine, and count the
genmoves that ran over the time the server's clock held for them.

Usage (from the repository root):
    python tests/tools/bridge_load.py                         # 10 runs, 2 spinning processes per core beside
    python tests/tools/bridge_load.py --runs 3 --per-core 0   # a quiet machine (as quiet as others leave it)
    python tests/tools/bridge_load.py --sets server:uniform server:net
    python tests/tools/bridge_load.py --runs 10 --sets server:net --trace bridge-trace   # keep the traces

Each run replays every scenario once (board sizes and colours taken in turn, as the slow tests do) for each set
``CONFIG:EVALUATOR`` (``uniform``: no net; ``net``: the bundled net), while ``--per-core`` processes per core spin
beside the engine (tests/busy.py). It prints each run's late genmoves and its worst one (wall time over the limit),
then the totals; it exits 1 when any genmove was late. With ``--trace DIR`` each run's engines log at debug level
into DIR (one file a run and set: every command's arrival, start and answer, and each move's phases, stamped on the
machine's monotonic clock, beside the bridge's own stamps), and each late move's lines are printed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.*

from tests.busy import busy_cores  # noqa: E402
from tests.gtp.test_server_bridges import Timing, replay, rotated  # noqa: E402

SETS = ("server:uniform", "default:uniform", "server:net", "default:net")


def one_run(sets: list[str], trace: Path | None, run: int) -> list[tuple[str, Timing, Path | None]]:
    """Every scenario once for each set, each timing with its set's name and trace file."""
    timings: list[tuple[str, Timing, Path | None]] = []
    for name in sets:
        config, evaluator = name.split(":")
        path = None if trace is None else trace / f"run{run:02d}-{name.replace(':', '-')}.log"
        timings += [(name, t, path) for t in replay(config, None if evaluator == "net" else evaluator, rotated(),
                                                    path)]
    return timings


def traced(path: Path, timing: Timing) -> list[str]:
    """The trace's lines from the first stamped after the move's clock commands were written (less half a second)
    to the bridge's own line for the move."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    end = next((i for i, line in enumerate(lines)
                if line.startswith("bridge: ") and f"written {timing.written:.4f}" in line), len(lines) - 1)
    first = end
    for i in range(end, -1, -1):
        words = lines[i].split()
        stamps = [float(w) for w in words[2:3] + words[4:5] if _number(w)]
        if stamps and stamps[0] < timing.written - 0.5:
            break
        first = i
    return lines[first:end + 1]


def _number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return "." in word


@contextlib.contextmanager
def bursts(per_core: int, seed: int = 1) -> Iterator[int]:
    """``per_core`` more spinning processes per core that run in bursts (2-10 s on, 5-30 s off, at random, as other
    users' jobs start and end) while the block runs; yields how many."""
    count = per_core * (os.cpu_count() or 1)
    spinners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"], stdin=subprocess.DEVNULL)
                for _ in range(count)]
    done = threading.Event()

    def toggle(spinner: subprocess.Popen[bytes], rng: random.Random) -> None:
        while True:
            spinner.send_signal(signal.SIGSTOP)
            if done.wait(rng.uniform(5.0, 30.0)):
                return
            spinner.send_signal(signal.SIGCONT)
            if done.wait(rng.uniform(2.0, 10.0)):
                return

    threads = [threading.Thread(target=toggle, args=(s, random.Random(seed + i)), daemon=True)
               for i, s in enumerate(spinners)]
    try:
        for thread in threads:
            thread.start()
        yield count
    finally:
        done.set()
        for thread in threads:
            thread.join()
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--per-core", type=int, default=2, help="spinning processes per core beside the engine")
    parser.add_argument("--sets", nargs="+", default=list(SETS), help="CONFIG:EVALUATOR, evaluator uniform or net")
    parser.add_argument("--bursts", type=int, default=0, help="more processes per core that spin in bursts")
    parser.add_argument("--trace", type=Path, default=None, help="keep the engines' debug logs in this folder")
    args = parser.parse_args()
    if args.trace is not None:
        args.trace.mkdir(parents=True, exist_ok=True)
    total: list[Timing] = []
    began = time.monotonic()
    with busy_cores(args.per_core) as spinning, bursts(args.bursts) as bursting:
        print(f"{spinning} spinning processes on {os.cpu_count()} cores, {bursting} more in bursts; load average "
              f"{os.getloadavg()[0]:.1f}")
        for run in range(1, args.runs + 1):
            named = one_run(args.sets, args.trace, run)
            timings = [t for _, t, _ in named]
            total += timings
            late = [(name, t, path) for name, t, path in named if t.over]
            name, worst, _ = max(named, key=lambda entry: entry[1].seconds - entry[1].limit)
            print(f"run {run}: {len(late)} of {len(timings)} late; closest: {name} {worst} "
                  f"(load average {os.getloadavg()[0]:.1f})", flush=True)
            for name, timing, path in late:
                print(f"    late: {name} {timing}", flush=True)
                for line in traced(path, timing) if path is not None else []:
                    print(f"        {line}", flush=True)
    over = [t for t in total if t.over]
    margins = sorted(t.limit - t.seconds for t in total)
    print(f"{len(total)} genmoves in {args.runs} runs ({time.monotonic() - began:.0f} s): {len(over)} late; "
          f"smallest margin {margins[0]:+.2f} s, median {margins[len(margins) // 2]:+.2f} s")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
