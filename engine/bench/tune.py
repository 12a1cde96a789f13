"""``miai tune``'s measurement: which net threads, search batch size and backend/precision give the search the most
visits per second on this machine, as KataGo's ``benchmark`` picks its number of search threads.

Each setting is timed by ``bench_search`` (the search as ``miai gtp`` runs it, without the evaluation cache, so
every playout costs a net evaluation) from a position a few moves into a game. The settings are searched one axis at
a time, each stage starting from the best so far: the backend and precision (only the pairs that pass the precision
gate), then the net threads, then the batch size. Within a stage the candidates take turns for ``rounds`` rounds, so
load from other processes falls on all alike, and a setting's best round counts (load only ever slows a round down).
During the measurement every batch is full from the first playout (``search.visits_per_batch_leaf = 0``): the figure
is what the batch size gives once the search has grown its batches to it.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from miai.engine.bench.search import bench_search, opening
from miai.engine.config import SearchConfig

__all__ = ["Setting", "Trial", "tune", "chosen", "print_trials"]


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
    """A setting measured in a stage (``backend``, ``threads`` or ``batch``: the axis it varied), and its best
    round: visits (playouts) per second of the search."""

    stage: str
    setting: Setting
    visits_per_second: float
    rounds: tuple[float, ...]


# Opens the evaluator of (backend, precision, threads), without any evaluation cache.
OpenNet = Callable[[str | None, str | None, int], Any]


def tune(open_net: OpenNet, pairs: Sequence[tuple[str, str]], threads: Sequence[int], batches: Sequence[int],
         size: int, seconds: float, rounds: int, search: SearchConfig | None = None,
         progress: Callable[[str], None] | None = None) -> list[Trial]:
    """Every setting measured, stage by stage, best first within each; the last stage's first is the choice.

    ``pairs`` is empty for an evaluator that has no backend to choose (the uniform one), ``threads`` holds 0 alone
    where threads are not tuned. The starting point of each axis is its first value; ``batches`` larger than the
    evaluator's ``max_batch`` are left out (the search would cap them).
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

    def stage(name: str, candidates: list[Setting]) -> Setting:
        found: dict[Setting, list[float]] = {setting: [] for setting in candidates}
        for _ in range(rounds):
            for setting in candidates:
                found[setting].append(measure(setting))
        ranked = sorted(candidates, key=lambda s: -max(found[s]))
        trials.extend(Trial(name, s, max(found[s]), tuple(found[s])) for s in ranked)
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
    stage("batch", [dataclasses.replace(best, batch=b) for b in fitting])
    return trials


def chosen(trials: Sequence[Trial]) -> Trial:
    """The setting ``tune`` settled on: the best of its last stage."""
    return next(t for t in trials if t.stage == trials[-1].stage)


def print_trials(trials: Sequence[Trial], stream: TextIO | None = None) -> None:
    """The table of what was tried, stage by stage: the axis varied, the setting, visits/s (its best round) and the
    ratio to the best of its stage (the settings of a stage were measured in turn, so they compare fairly)."""
    out = stream if stream is not None else sys.stdout
    best = {t.stage: t.visits_per_second for t in reversed(trials)}  # each stage's first (its best)
    width = max([len(t.setting.describe()) for t in trials] + [7])
    print(f"{'stage':<7}  {'setting':<{width}}  {'visits/s':>10}  {'ratio':>5}", file=out)
    for trial in trials:
        top = best[trial.stage]
        ratio = trial.visits_per_second / top if top else 0.0
        print(f"{trial.stage:<7}  {trial.setting.describe():<{width}}  {trial.visits_per_second:>10,.1f}  "
              f"{ratio:>5.2f}", file=out)
