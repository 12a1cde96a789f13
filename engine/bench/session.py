"""onnxruntime session settings and batch sizes on a converted net, as ratios to a baseline (``miai bench session``).

Every variant is a session built one way (see VARIANTS) on the bare net with real positions' features as inputs.
Rounds are interleaved (every variant and batch once per round) so that the load of other processes on a shared
machine falls on all of them alike; each cell is the median evals/s over the rounds, per wall second and per CPU
second of this process, with its ratio to the first variant at the same batch size.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from miai.engine.bench.harness import BenchResult
from miai.engine.bench.nets import random_positions
from miai.nets import features
from miai.nets.loading import converted_path, is_katago_model

__all__ = ["VARIANTS", "bench_session"]


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


# name -> (uses the net converted for this board size?, options from the thread count and board size)
VARIANTS: dict[str, tuple[bool, Callable[[int, int], ort.SessionOptions]]] = {
    "base": (False, lambda t, s: _options(t)),
    "override": (False, lambda t, s: _options(t, size=s)),
    "override+spin": (False, lambda t, s: _options(t, size=s, spin=True)),
    "spin": (False, lambda t, s: _options(t, spin=True)),
    "fixed": (True, lambda t, s: _options(t)),
    "fixed+spin": (True, lambda t, s: _options(t, spin=True)),
    "extended": (False, lambda t, s: _options(t, opt="extended")),
    "basic": (False, lambda t, s: _options(t, opt="basic")),
    "no-arena": (False, lambda t, s: _options(t, arena=False)),
    "parallel": (False, lambda t, s: _options(t, parallel=True, inter=2)),
    "threads1": (False, lambda t, s: _options(1)),
}


def bench_session(net: str, size: int, threads: int, batches: Sequence[int], variants: Sequence[str], rounds: int,
                  seconds: float) -> list[BenchResult]:
    """Median evals/s (wall and per CPU second) of each variant at each batch size, with ratios to the first.

    `net` is a KataGo model file (converted through the cache) or an ONNX file (used as it is; the ``fixed``
    variants then need a KataGo file).

    Raises:
        ValueError: an unknown variant, or a fixed-size variant on an ONNX file.
    """
    sessions = {name: _session(net, name, size, threads) for name in variants}
    feeds = {b: _feeds(size, size, b) for b in batches}
    rates: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for batch in batches:
            for name, session in sessions.items():
                rates.setdefault((name, batch), []).append(_rate(session, feeds[batch], batch, seconds))
    base = variants[0]
    results: list[BenchResult] = []
    for batch in batches:
        base_wall, base_cpu = (statistics.median(r[k] for r in rates[base, batch]) for k in (0, 1))
        for name in variants:
            wall, cpu = (statistics.median(r[k] for r in rates[name, batch]) for k in (0, 1))
            label = f"session {size}x{size} batch {batch} {name}"
            details = {"size": size, "batch": batch, "threads": threads, "variant": name, "rounds": rounds}
            span = seconds * rounds
            results += [BenchResult(f"{label}: evals", wall, "evals/s", span, 0, details),
                        BenchResult(f"{label}: over {base}", wall / base_wall, "ratio", span, 0, details),
                        BenchResult(f"{label}: evals per CPU second", cpu, "evals/cpu-s", span, 0, details),
                        BenchResult(f"{label}: per CPU second over {base}", cpu / base_cpu, "ratio", span, 0,
                                    details)]
    return results


def _session(net: str, name: str, size: int, threads: int) -> Any:
    if name not in VARIANTS:
        raise ValueError(f"unknown session variant {name!r} (known: {', '.join(VARIANTS)})")
    fixed, build = VARIANTS[name]
    if is_katago_model(net):
        path = converted_path(net, board_size=size if fixed else None)
    elif fixed:
        raise ValueError(f"variant {name!r} converts the net for one board size: it needs a KataGo model file")
    else:
        path = Path(net)
    return ort.InferenceSession(str(path), build(threads, size), providers=["CPUExecutionProvider"])


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
