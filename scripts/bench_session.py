"""Benchmark: onnxruntime session settings and batch sizes on a converted net, as ratios to a baseline.

Usage (from the repository root):
    python scripts/bench_session.py NET.bin.gz --size 9 --batches 1 4 8 16 32 64 --rounds 5 --seconds 1
    python scripts/bench_session.py NET.bin.gz --size 19 --variants base spin fixed --batches 16

Every variant is a session built one way (see VARIANTS) on the bare net with real positions' features as inputs.
Rounds are interleaved (every variant and batch once per round) so that the load of other processes on a
shared machine falls on all of them alike; the table shows the median evals/s of each cell over the rounds and
its ratio to the baseline variant at the same batch size.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort

from miai.nets import features
from miai.engine.bench.nets import random_positions
from miai.nets.loading import converted_path
from miai.nets.quantize import quantized_path


def _options(threads: int, *, spin: bool = False, opt: str = "all", arena: bool = True, parallel: bool = False,
             inter: int = 1, size: int = 0) -> ort.SessionOptions:
    options = ort.SessionOptions()
    if size:  # fix the dynamic net's board dimensions for this session
        options.add_free_dimension_override_by_name("H", size)
        options.add_free_dimension_override_by_name("W", size)
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = inter
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    options.execution_mode = ort.ExecutionMode.ORT_PARALLEL if parallel else ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = {
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[opt]
    options.enable_cpu_mem_arena = arena
    return options


# name -> (uses the net converted for this board size?, options builder taking the thread count and board size)
VARIANTS: dict[str, tuple[bool, Callable[..., ort.SessionOptions]]] = {
    "base": (False, lambda t: _options(t)),
    "override": (False, lambda t, s: _options(t, size=s)),
    "override+spin": (False, lambda t, s: _options(t, size=s, spin=True)),
    "spin": (False, lambda t: _options(t, spin=True)),
    "fixed": (True, lambda t: _options(t)),
    "fixed+spin": (True, lambda t: _options(t, spin=True)),
    "extended": (False, lambda t: _options(t, opt="extended")),
    "basic": (False, lambda t: _options(t, opt="basic")),
    "no-arena": (False, lambda t: _options(t, arena=False)),
    "parallel": (False, lambda t: _options(t, parallel=True, inter=2)),
    "threads1": (False, lambda t: _options(1)),
    "int8": (False, lambda t: _options(t)),  # the net.precision = "int8" copy of the dynamic net
}


def _feeds(size: int, nn_len: int, batch: int) -> dict[str, np.ndarray]:
    encoded = [features.encode(s) for s in random_positions(size, batch, seed=size)]
    return {"input_spatial": np.stack([features.place(sp, nn_len) for sp, _ in encoded]),
            "input_global": np.stack([g for _, g in encoded])}


def _rate(session: Any, feeds: dict[str, np.ndarray], batch: int, seconds: float) -> tuple[float, float]:
    """(evals per wall second, evals per CPU second of this process)."""
    session.run(None, feeds)
    count, start, cpu = 0, time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        session.run(None, feeds)
        count += batch
    return count / elapsed, count / max(time.process_time() - cpu, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("net")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument("--variants", nargs="+", default=["base", "spin", "fixed"], choices=list(VARIANTS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    sessions = {}
    for name in args.variants:
        fixed, build = VARIANTS[name]
        path = converted_path(args.net, board_size=args.size if fixed else None)
        if name == "int8":
            path = quantized_path(path)
        options = build(args.threads, args.size) if "override" in name else build(args.threads)
        sessions[name] = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {b: _feeds(args.size, args.size, b) for b in args.batches}
    rates: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for batch in args.batches:
            for name, session in sessions.items():
                rates.setdefault((name, batch), []).append(_rate(session, feeds[batch], batch, args.seconds))
    base = args.variants[0]
    print(f"{'variant':14} {'batch':>5} {'evals/s':>9} {'ratio':>6} {'evals/cpu-s':>11} {'ratio':>6}   (median of"
          f" {args.rounds}, {args.size}x{args.size}, {args.threads} threads)")
    for batch in args.batches:
        for name in args.variants:
            wall, cpu = (statistics.median(r[k] for r in rates[name, batch]) for k in (0, 1))
            base_wall, base_cpu = (statistics.median(r[k] for r in rates[base, batch]) for k in (0, 1))
            print(f"{name:14} {batch:>5} {wall:>9.1f} {wall / base_wall:>6.3f} {cpu:>11.1f} {cpu / base_cpu:>6.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
