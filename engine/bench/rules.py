"""Benchmarks: each is a function returning `BenchResult`s; a table printer and a JSON writer show them.

A benchmark runs for a wall-clock budget and reports a rate (`value` in `unit`, e.g. moves/s). The rules
benchmark lives here; the search's playouts/s and the nets' evals/s plug in by returning `BenchResult`s too, and
`miai bench` prints whatever list it collects:

    results = bench_rules(9, seconds=2.0) + search_bench(...) + net_bench(...)
    print_table(results)
    write_json(results, "bench.json")
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

__all__ = ["BenchResult", "bench_rules", "random_game", "print_table", "write_json", "machine_info"]


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


def bench_rules(size: int = 9, seconds: float = 2.0, *, seed: int = 0, rules: str = "tromp-taylor") -> list[BenchResult]:
    """Rules speed on `size`x`size`: push+pop of random legal games, and legal_moves() calls, per second.

    Random games are generated first (untimed); then for `seconds` each (two figures), replay them: push every
    move (legality checked) and pop them all back; and list the legal moves in every position of one game.
    """
    rng = random.Random(seed)
    games = [random_game(size, rng, rules) for _ in range(8)]
    push_pop, push_pop_time = _time_loop(seconds, lambda: _replay(size, rules, games))
    listing, listing_time = _time_loop(seconds, lambda: _list_moves(size, rules, games[0]))
    details = {"size": size, "rules": rules, "games": len(games), "mean_game_length": sum(map(len, games)) / len(games)}
    return [
        BenchResult(f"rules {size}x{size}: push+pop", push_pop / push_pop_time, "moves/s", push_pop_time, push_pop,
                    details),
        BenchResult(f"rules {size}x{size}: legal_moves", listing / listing_time, "calls/s", listing_time, listing,
                    details),
    ]


def _time_loop(budget: float, work: Callable[[], int]) -> tuple[int, float]:
    """Call `work()` (which returns a count) until `budget` seconds have passed; return (count, seconds)."""
    count, start = 0, time.perf_counter()
    while True:
        count += work()
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            return count, elapsed


def _replay(size: int, rules: str, games: Sequence[list[int]]) -> int:
    state = GameState(size, Rules.preset(rules), 7.5)
    done = 0
    for moves in games:
        for move in moves:
            state.push(move)
        for _ in moves:
            state.pop()
        done += len(moves)
    return done


def _list_moves(size: int, rules: str, moves: list[int]) -> int:
    state = GameState(size, Rules.preset(rules), 7.5)
    for move in moves:
        state.legal_moves()
        state.push(move)
    return len(moves)


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
    print(f"{'benchmark':<{width}}  {'rate':>12}  {'unit':<9} {'seconds':>7}", file=out)
    for r in results:
        rate = f"{r.value:>12,.3f}" if r.unit == "ratio" else f"{r.value:>12,.1f}"  # ratios need decimals
        print(f"{r.name:<{width}}  {rate}  {r.unit:<9} {r.seconds:>7.2f}", file=out)


def write_json(results: Sequence[BenchResult], path: str | Path) -> None:
    """Write results plus machine_info() as JSON to `path`."""
    data = {"machine": machine_info(), "results": [asdict(r) for r in results]}
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
