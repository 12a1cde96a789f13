"""Random playouts from the empty board (``miai bench playouts``), and the search driving the playout evaluator.

Each playout is what the playout evaluator does per playout (miai.nets.playouts.benchmark_playouts): copy the
board, play light (or, tactical, capture/escape) random moves to two passes, find the owners of every point and
score. The search figure runs the engine's search with the playout evaluator (one playout per visit) from the empty
board for the same time.
"""

from __future__ import annotations

import random
import time

from miai.engine.bench.harness import BenchResult
from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.playouts import PlayoutEvaluator, PlayoutPosition, benchmark_playouts

__all__ = ["bench_compiled_interleaved", "bench_patterns_interleaved", "bench_playouts", "bench_playout_search"]


def _rules_name(tactical: bool, no_self_atari: bool, patterns: bool) -> str:
    """The playout rules as in the model spec, e.g. `` tactical noselfatari`` (empty for light playouts)."""
    flags = (("tactical", tactical), ("noselfatari", no_self_atari), ("patterns", patterns))
    return "".join(f" {name}" for name, on in flags if on)


def bench_playouts(size: int, seconds: float, seed: int = 1, *, tactical: bool = False, no_self_atari: bool = False,
                   patterns: bool = False) -> list[BenchResult]:
    """Playouts per wall and per CPU second, and moves per second, on an empty `size` board."""
    run = benchmark_playouts(size, seconds, seed, tactical=tactical, no_self_atari=no_self_atari, patterns=patterns)
    name = f"playouts {size}x{size}{_rules_name(tactical, no_self_atari, patterns)}"
    details: dict[str, object] = {"size": size, "moves_per_playout": round(run.moves_per_playout, 1),
                                  "cpu_seconds": run.cpu_seconds}
    return [
        BenchResult(f"{name}: playouts", run.playouts_per_second, "games/s", run.seconds, run.playouts, details),
        BenchResult(f"{name}: playouts per CPU second", run.playouts_per_cpu_second, "games/cpu-s", run.seconds,
                    run.playouts, details),
        BenchResult(f"{name}: moves", run.playouts_per_second * run.moves_per_playout, "moves/s", run.seconds,
                    run.moves, details),
    ]


def bench_playout_search(size: int, seconds: float, seed: int, rule: str, *, tactical: bool = False
                         ) -> list[BenchResult]:
    """Visits per wall and per CPU second of one search from the empty board with the playout evaluator."""
    config = SearchConfig(selection=rule, max_visits=0, max_time=seconds, seed=seed)
    search = Search(PlayoutEvaluator(seed=seed, tactical=tactical), config)
    search.set_root(GameState(size, Rules.preset("chinese"), 7.5))
    cpu_start = time.process_time()
    visits = search.run().root.visits
    cpu = time.process_time() - cpu_start
    name = f"playouts {size}x{size}: search {rule}"
    # Visits over the budget, as a controller giving the search `seconds` sees it.
    return [BenchResult.from_count(f"{name} visits", visits, seconds, "visits/s", size=size, rule=rule),
            BenchResult.from_count(f"{name} visits per CPU second", visits, cpu, "visits/cpu-s", size=size,
                                   rule=rule)]


def bench_patterns_interleaved(size: int, seconds: float, seed: int, rounds: int, *, tactical: bool = False,
                               no_self_atari: bool = False, compiled: bool = False) -> list[BenchResult]:
    """Playouts per CPU second without and with the 3x3 patterns, alternating ``rounds`` times in one process (a
    shared machine's load then weighs on both alike), and the ratio of the with-patterns rate to the without; on
    the compiled board (:mod:`miai.nets.playouts.compiled`) when ``compiled``, else in Python."""
    playouts = {False: 0, True: 0}
    cpu = {False: 0.0, True: 0.0}
    for _ in range(rounds):
        for patterns in (False, True):
            if compiled:
                count, spent = _time_compiled(size, seconds, seed, tactical=tactical, no_self_atari=no_self_atari,
                                              patterns=patterns)
            else:
                run = benchmark_playouts(size, seconds, seed, tactical=tactical, no_self_atari=no_self_atari,
                                         patterns=patterns)
                count, spent = run.playouts, run.cpu_seconds
            playouts[patterns] += count
            cpu[patterns] += spent
    results = []
    rates = {}
    board = "compiled" if compiled else "Python"
    for patterns in (False, True):
        rates[patterns] = playouts[patterns] / cpu[patterns] if cpu[patterns] > 0 else 0.0
        name = f"playouts {size}x{size}{_rules_name(tactical, no_self_atari, patterns)} ({board})"
        results.append(BenchResult.from_count(f"{name}: playouts per CPU second ({rounds} interleaved runs)",
                                              playouts[patterns], cpu[patterns], "games/cpu-s", size=size))
    ratio = rates[True] / rates[False] if rates[False] > 0 else 0.0
    results.append(BenchResult(f"playouts {size}x{size}: with patterns over without", ratio, "ratio",
                               rounds * seconds * 2, rounds, {"size": size}))
    return results


def _time_compiled(size: int, seconds: float, seed: int, **rules: bool) -> tuple[int, float]:
    """Compiled playouts from the empty ``size`` board for ``seconds`` of CPU time: (playouts, CPU seconds)."""
    from miai.nets.playouts.compiled import run_playouts_compiled, warm_up

    warm_up()
    position = PlayoutPosition(size=size, stones=(0,) * (size * size), komi=7.5)
    rng = random.Random(seed)
    run_playouts_compiled(position, 1, rng, **rules)  # (numba compiles on the first call: not timed)
    playouts, begin = 0, time.process_time()
    while time.process_time() - begin < seconds:
        run_playouts_compiled(position, 100, rng, **rules)
        playouts += 100
    return playouts, time.process_time() - begin


def bench_compiled_interleaved(size: int, seconds: float, seed: int, rounds: int, *, no_self_atari: bool = False,
                               tactical: bool = False, patterns: bool = False) -> list[BenchResult]:
    """Playouts per CPU second from the empty board in Python and compiled (miai.nets.playouts.compiled),
    alternating ``rounds`` times in one process, and the ratio of the compiled rate to the Python one."""
    playouts = {False: 0, True: 0}
    cpu = {False: 0.0, True: 0.0}
    for _ in range(rounds):
        python = benchmark_playouts(size, seconds, seed, no_self_atari=no_self_atari, tactical=tactical,
                                    patterns=patterns)
        playouts[False] += python.playouts
        cpu[False] += python.cpu_seconds
        count, spent = _time_compiled(size, seconds, seed, no_self_atari=no_self_atari, tactical=tactical,
                                      patterns=patterns)
        playouts[True] += count
        cpu[True] += spent
    rules = _rules_name(tactical, no_self_atari, patterns)
    results = [BenchResult.from_count(f"playouts {size}x{size}{rules}: {name} per CPU second ({rounds} interleaved "
                                      "runs)", playouts[compiled], cpu[compiled], "games/cpu-s", size=size)
               for compiled, name in ((False, "Python"), (True, "compiled"))]
    python_rate = playouts[False] / cpu[False] if cpu[False] > 0 else 0.0
    ratio = playouts[True] / cpu[True] / python_rate if python_rate > 0 and cpu[True] > 0 else 0.0
    results.append(BenchResult(f"playouts {size}x{size}{rules}: compiled over Python", ratio, "ratio",
                               rounds * seconds * 2, rounds, {"size": size}))
    return results
