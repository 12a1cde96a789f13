"""The benchmark harness: every benchmark is a function returning `BenchResult`s; a table printer and a JSON writer
show them.

A benchmark runs for a budget (wall-clock or CPU seconds) and reports rates (`value` in `unit`, e.g. moves/s). The
modules beside this one (rules, playouts, features, nets, decode, session, search, modes, versus) each measure one
kind of thing, and `miai bench` and its subcommands print whatever list they collect:

    results = bench_rules(9, seconds=2.0) + [bench_search(...)]
    print_table(results)
    write_json(results, "bench.json")

Positions to measure on come from `random_game` here, so every benchmark draws them the same way.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from miai.go.coords import Color
from miai.go.geometry import neighbor_table
from miai.go.rules import Rules
from miai.go.state import GameState

__all__ = ["BenchResult", "random_game", "time_loop", "print_table", "write_json", "machine_info"]


@dataclass(frozen=True)
class BenchResult:
    """One measured rate: `value` `unit` (e.g. 12345.6 moves/s) over `seconds` of wall time."""

    name: str
    value: float
    unit: str
    seconds: float
    count: int  # how many units were done in `seconds`
    details: dict[str, object] = field(default_factory=dict)

    @classmethod
    def from_count(cls, name: str, count: int, seconds: float, unit: str, **details: object) -> BenchResult:
        """The rate of `count` things done in `seconds` (how other layers' benchmarks plug in)."""
        return cls(name, count / seconds if seconds > 0 else 0.0, unit, seconds, count, dict(details))


def random_game(size: int, rng: random.Random, rules: str = "tromp-taylor", max_moves: int | None = None) -> list[int]:
    """A random legal game that avoids filling its own one-point eyes, as a move list from the empty board.

    It stops when the side to move has no such move left or after `max_moves` (default 3 * size * size).
    """
    state = GameState(size, Rules.preset(rules), 7.5)
    neighbours = neighbor_table(size)
    limit = max_moves if max_moves is not None else 3 * size * size
    moves: list[int] = []
    while len(moves) < limit:
        me = state.to_play
        candidates = [m for m in state.legal_moves() if not _own_eye(state, m, me, neighbours[m])]
        if not candidates:
            break
        move = rng.choice(candidates)
        state.push(move)
        moves.append(move)
    return moves


def _own_eye(state: GameState, move: int, color: Color, neighbours: tuple[int, ...]) -> bool:
    return all(state.color_at(n) == color for n in neighbours)


def time_loop(budget: float, work: Callable[[], int]) -> tuple[int, float]:
    """Call `work()` (which returns a count) until `budget` seconds have passed; return (count, seconds)."""
    count, start = 0, time.perf_counter()
    while True:
        count += work()
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return count, elapsed


def machine_info() -> dict[str, object]:
    """Where a figure was measured: Python, platform, CPU count and the command line."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "argv": sys.argv,
    }


def print_table(results: Sequence[BenchResult], stream: TextIO | None = None) -> None:
    """Print results as an aligned table (to stdout by default)."""
    out = stream if stream is not None else sys.stdout
    width = max([len(r.name) for r in results] + [9])
    units = max([len(r.unit) for r in results] + [9])
    print(f"{'benchmark':<{width}}  {'rate':>12}  {'unit':<{units}} {'seconds':>7}", file=out)
    for r in results:
        rate = f"{r.value:>12,.3f}" if r.unit == "ratio" else f"{r.value:>12,.1f}"  # ratios need decimals
        print(f"{r.name:<{width}}  {rate}  {r.unit:<{units}} {r.seconds:>7.2f}", file=out)


def write_json(results: Sequence[BenchResult], path: str | Path) -> None:
    """Write results plus machine_info() as JSON to `path`."""
    data = {"machine": machine_info(), "results": [asdict(r) for r in results]}
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
