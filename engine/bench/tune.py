"""``miai tune``'s measurement: which net threads, search batch size and backend/precision play best on this
machine, as KataGo's ``benchmark`` picks its number of search threads.

Each setting is timed by ``bench_search`` (the search as ``miai gtp`` runs it, without the evaluation cache, so
every playout costs a net evaluation) from a position a few moves into a game. The settings are searched one axis at
a time, each stage starting from the best so far: the backend and precision (only the pairs that pass the precision
gate), then the net threads, then the batch size. The first two stages keep the fastest. The batch stage weighs speed
against strength as KataGo's ``benchmark`` weighs search threads (:func:`elo_effect`): the leaves a batch collects
under virtual loss are playouts in flight, like KataGo's threads, and each costs strength while it gives speed.
Within a stage the candidates take turns for ``rounds`` rounds, so load from other processes falls on all alike, and
a setting's best round counts (load only ever slows a round down).
During the measurement every batch is full from the first playout (``search.visits_per_batch_leaf = 0``): the figure
is what the batch size gives once the search has grown its batches to it.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from miai.engine.bench.search import bench_search, opening
from miai.engine.config import SearchConfig

__all__ = ["Setting", "Trial", "tune", "chosen", "print_trials", "elo_effect", "in_flight", "batch_elo"]

ELO_PER_DOUBLING = 250.0
"""Strength a doubling of visits per second gives (KataGo's benchmark, from lightvector's g170 test matches)."""

ELO_PER_LEAF_AT_800 = 7.0
"""Strength one more playout in flight costs at 800 visits a move (KataGo's benchmark, per search thread). Here:
16 leaves a batch against 2, overlapped (32 in flight against 4), cost 166 Elo (95% 18..289) at 800 visits on 9x9
(docs/benchmarks.md, "Leaves in flight"), about 6 a leaf."""


def in_flight(batch: int, overlap: bool) -> int:
    """Playouts under virtual loss at once: the batch being collected, and with ``search.overlap`` the one the net
    runs meanwhile."""
    return batch * (2 if overlap else 1)


def elo_effect(visits_per_second: float, leaves_in_flight: int, visits_per_move: float) -> float:
    """KataGo's estimate of a setting's strength (``BenchmarkResults::computeEloEffect``), only differences meaning
    anything: what its speed gains, less what its playouts in flight cost, which falls as moves get more visits."""
    gain = ELO_PER_DOUBLING * math.log2(max(visits_per_second, 1e-9))
    cost = leaves_in_flight * ELO_PER_LEAF_AT_800 * math.pow(1600.0 / (800.0 + visits_per_move), 0.85)
    return gain - cost


@dataclass(frozen=True, slots=True)
class Setting:
    """One candidate: what runs the net (None for an evaluator that is not an ONNX net), its threads (0: not
    tuned) and the search's batch size."""

    backend: str | None
    precision: str | None
    threads: int
    batch: int

    def describe(self) -> str:
        """The setting as the table shows it, in config keys' terms."""
        parts = [f"{self.backend} {self.precision}"] if self.backend else []
        if self.threads:
            parts.append(f"threads {self.threads}")
        return ", ".join(parts + [f"batch {self.batch}"])


@dataclass(frozen=True, slots=True)
class Trial:
    """A setting measured in a stage (``backend``, ``threads`` or ``batch``: the axis it varied), its best
    round (visits, playouts, per second of the search) and, in the batch stage, its :func:`elo_effect`."""

    stage: str
    setting: Setting
    visits_per_second: float
    rounds: tuple[float, ...]
    elo: float | None = None


# Opens the evaluator of (backend, precision, threads), without any evaluation cache.
OpenNet = Callable[[str | None, str | None, int], Any]


def batch_elo(batch: int, visits_per_second: float, overlap: bool, move_seconds: float,
              move_visits: int | None = None) -> float:
    """:func:`elo_effect` of a search batch at its speed, for moves of ``move_visits`` visits, or else of
    ``move_seconds`` at that speed."""
    per_move = move_visits if move_visits is not None else visits_per_second * move_seconds
    return elo_effect(visits_per_second, in_flight(batch, overlap), per_move)


def tune(open_net: OpenNet, pairs: Sequence[tuple[str, str]], threads: Sequence[int], batches: Sequence[int],
         size: int, seconds: float, rounds: int, search: SearchConfig | None = None,
         progress: Callable[[str], None] | None = None, move_seconds: float = 1.0,
         move_visits: int | None = None) -> list[Trial]:
    """Every setting measured, stage by stage, best first within each; the last stage's first is the choice.

    ``pairs`` is empty for an evaluator that has no backend to choose (the uniform one), ``threads`` holds 0 alone
    where threads are not tuned. The starting point of each axis is its first value; ``batches`` larger than the
    evaluator's ``max_batch`` are left out (the search would cap them). The batch stage ranks by
    :func:`elo_effect` for moves of ``move_visits`` visits, or of ``move_seconds`` at each setting's speed.
    """
    base = dataclasses.replace(search or SearchConfig(), visits_per_batch_leaf=0)
    nets: dict[tuple[str | None, str | None, int], Any] = {}
    warm: set[Setting] = set()
    trials: list[Trial] = []

    def measure(setting: Setting) -> float:
        key = (setting.backend, setting.precision, setting.threads)
        if key not in nets:
            nets[key] = open_net(*key)
        net = nets[key]
        config = dataclasses.replace(base, batch_size=setting.batch)
        if setting not in warm:  # the first run of a batch shape plans it: not timed
            net.evaluate([opening(size, size, 0)] * min(setting.batch, net.max_batch))
            warm.add(setting)
        rate = bench_search(net, config, size, seconds).value
        if progress is not None:
            progress(f"{setting.describe()}: {rate:,.1f} visits/s")
        return rate

    def stage(name: str, candidates: list[Setting], weigh: bool = False) -> Setting:
        found: dict[Setting, list[float]] = {setting: [] for setting in candidates}
        for _ in range(rounds):
            for setting in candidates:
                found[setting].append(measure(setting))
        rate = {s: max(found[s]) for s in candidates}
        elo = ({s: batch_elo(s.batch, rate[s], base.overlap, move_seconds, move_visits) for s in candidates}
               if weigh else {})
        ranked = sorted(candidates, key=lambda s: -elo.get(s, rate[s]))
        trials.extend(Trial(name, s, rate[s], tuple(found[s]), elo.get(s)) for s in ranked)
        return ranked[0]

    backend, precision = pairs[0] if pairs else (None, None)
    best = Setting(backend, precision, threads[0], batches[0])
    if len(pairs) > 1:
        best = stage("backend", [dataclasses.replace(best, backend=b, precision=p) for b, p in pairs])
    if len(threads) > 1:
        best = stage("threads", [dataclasses.replace(best, threads=t) for t in threads])
    key = (best.backend, best.precision, best.threads)
    if key not in nets:
        nets[key] = open_net(*key)
    fitting = [b for b in batches if b <= nets[key].max_batch] or [nets[key].max_batch]
    stage("batch", [dataclasses.replace(best, batch=b) for b in fitting], weigh=True)
    return trials


def chosen(trials: Sequence[Trial]) -> Trial:
    """The setting ``tune`` settled on: the best of its last stage."""
    return next(t for t in trials if t.stage == trials[-1].stage)


def print_trials(trials: Sequence[Trial], stream: TextIO | None = None) -> None:
    """The table of what was tried, stage by stage: the axis varied, the setting, visits/s (its best round), the
    ratio to the fastest of its stage (the settings of a stage were measured in turn, so they compare fairly) and,
    in the batch stage, the estimated Elo against the stage's choice."""
    out = stream if stream is not None else sys.stdout
    fastest: dict[str, float] = {}
    for t in trials:
        fastest[t.stage] = max(fastest.get(t.stage, 0.0), t.visits_per_second)
    first = {t.stage: t for t in reversed(trials)}  # each stage's first: its choice
    width = max([len(t.setting.describe()) for t in trials] + [7])
    print(f"{'stage':<7}  {'setting':<{width}}  {'visits/s':>10}  {'ratio':>5}  {'Elo':>5}", file=out)
    for trial in trials:
        top = fastest[trial.stage]
        ratio = trial.visits_per_second / top if top else 0.0
        choice = first[trial.stage].elo
        elo = "" if trial.elo is None or choice is None else f"{trial.elo - choice:+5.0f}"
        print(f"{trial.stage:<7}  {trial.setting.describe():<{width}}  {trial.visits_per_second:>10,.1f}  "
              f"{ratio:>5.2f}  {elo:>5}".rstrip(), file=out)
