"""The nets that ship with miai (``nets/default/``) and the choice of one per board size.

Each ``<name>.onnx`` there has a manifest ``<name>.json`` (``miai.nets.train.manifest``). Its optional
``board_sizes`` entry ``[lo, hi]`` names the boards the net plays by default; without it the net serves
every size. When several nets serve a size the narrowest range wins, so a specialist (say a net tuned for
9x9) takes its sizes and a general net the rest.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from miai.nets import features
from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import (Evaluation, Evaluator, EvaluatorError, Finish, evaluate_root,
                                 set_playout_advantage, start_evaluation)

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition

__all__ = ["BUNDLED_DIR", "BundledNet", "SizeRoutedEvaluator", "bundled_nets", "load_bundled", "net_for_size"]

BUNDLED_DIR = Path(__file__).resolve().parent / "default"
MIN_SIZE, MAX_SIZE = 2, 25


@dataclass(frozen=True, slots=True)
class BundledNet:
    """A shipped net and the board sizes it serves by default."""

    path: Path
    min_size: int = MIN_SIZE
    max_size: int = MAX_SIZE

    def serves(self, size: int) -> bool:
        return self.min_size <= size <= self.max_size


def bundled_nets(directory: Path = BUNDLED_DIR) -> list[BundledNet]:
    """The ``.onnx`` nets in ``directory`` with their size ranges (from the manifests), sorted by name.

    Raises:
        EvaluatorError: a manifest's ``board_sizes`` is not a ``[lo, hi]`` pair of sizes.
    """
    nets = []
    for path in sorted(directory.glob("*.onnx")) if directory.is_dir() else []:
        manifest = path.with_suffix(".json")
        sizes = json.loads(manifest.read_text(encoding="utf-8")).get("board_sizes") if manifest.is_file() else None
        if sizes is None:
            nets.append(BundledNet(path))
            continue
        if (not isinstance(sizes, list) or len(sizes) != 2 or not all(isinstance(s, int) for s in sizes)
                or not MIN_SIZE <= sizes[0] <= sizes[1] <= MAX_SIZE):
            raise EvaluatorError(f"{manifest.name}: board_sizes must be [lo, hi] with {MIN_SIZE} <= lo <= hi "
                                 f"<= {MAX_SIZE}, not {sizes!r}")
        nets.append(BundledNet(path, sizes[0], sizes[1]))
    return nets


def net_for_size(nets: Sequence[BundledNet], size: int) -> BundledNet | None:
    """The net that plays ``size``: the narrowest range that contains it (the first by name on a tie)."""
    candidates = [net for net in nets if net.serves(size)]
    return min(candidates, key=lambda n: n.max_size - n.min_size) if candidates else None


class SizeRoutedEvaluator:
    """Evaluates every position with the net chosen for its board size; each net loads on first use."""

    def __init__(self, nets: Sequence[BundledNet], load: Callable[[Path], Evaluator], max_batch: int = 16) -> None:
        self.nets = list(nets)
        self.max_batch = max_batch
        self._load = load
        self._loaded: dict[Path, Evaluator] = {}
        self._lock = threading.Lock()  # a GTP thread (kata-raw-nn) and the search may both load
        self._advantage: tuple[int, float] = (0, 0.0)

    def route(self, size: int) -> Evaluator:
        """The evaluator for ``size``x``size`` boards.

        Raises:
            EvaluatorError: no bundled net serves this size.
        """
        net = net_for_size(self.nets, size)
        if net is None:
            raise EvaluatorError(f"no bundled net plays {size}x{size}; pass one with --model")
        with self._lock:
            if net.path not in self._loaded:
                loaded = self._loaded[net.path] = self._load(net.path)
                set_playout_advantage(loaded, *self._advantage)
            return self._loaded[net.path]

    def evaluate_root(self, state: NetPosition, conservative_pass: bool = False) -> Evaluation:
        """See ``RootEvaluator``: by the net for the board's size."""
        return evaluate_root(self.route(int(state.size)), state, conservative_pass)

    def set_playout_advantage(self, color: int, value: float) -> None:
        """See ``AdvantageEvaluator``: every net loaded now or later."""
        with self._lock:
            self._advantage = (color, value)
            for evaluator in self._loaded.values():
                set_playout_advantage(evaluator, color, value)

    def evaluator_for(self, size: int) -> Evaluator:
        """See ``WrappingEvaluator``: the net chosen for ``size`` (``route``)."""
        return self.route(size)

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``: one call per board size present, results in the input order."""
        results: list[Evaluation | None] = [None] * len(states)
        for size, indices in _by_size(states).items():
            evaluations = self.route(size).evaluate([states[i] for i in indices])
            for i, evaluation in zip(indices, evaluations):
                results[i] = evaluation
        return [r for r in results if r is not None]

    def start(self, states: Sequence[NetPosition]) -> Finish:
        """See ``StagedEvaluator``: each board size's states started on its net, results in the input order."""
        started = [(indices, start_evaluation(self.route(size), [states[i] for i in indices]))
                   for size, indices in _by_size(states).items()]

        def finish(timeout: float | None = None) -> list[Evaluation]:
            deadline = None if timeout is None else time.monotonic() + timeout
            results: list[Evaluation | None] = [None] * len(states)
            for indices, part in started:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                for i, evaluation in zip(indices, part(left)):
                    results[i] = evaluation
            return [r for r in results if r is not None]

        return finish


def _by_size(states: Sequence[NetPosition]) -> dict[int, list[int]]:
    """The indices of the states of each board size, in order."""
    by_size: dict[int, list[int]] = {}
    for i, state in enumerate(states):
        by_size.setdefault(int(state.size), []).append(i)
    return by_size


def load_bundled(directory: Path = BUNDLED_DIR, *, cache_capacity: int = 0, cache_key: str = "input",
                 **options: Any) -> Evaluator:
    """An evaluator over the bundled nets: the net itself when one ships, else a ``SizeRoutedEvaluator``.

    ``options`` go to ``load_evaluator`` (``OnnxConfig`` fields); ``cache_capacity`` > 0 puts one
    cache in front of everything, keyed by ``cache_key`` (see ``load_evaluator``).

    Raises:
        FileNotFoundError: ``directory`` holds no net.
    """
    from miai.nets.loading import load_evaluator

    nets = bundled_nets(directory)
    if not nets:
        raise FileNotFoundError(f"no bundled net in {directory}")
    if len(nets) == 1:
        return load_evaluator(nets[0].path, cache_capacity=cache_capacity, cache_key=cache_key, **options)
    router = SizeRoutedEvaluator(nets, lambda path: load_evaluator(path, **options),
                                 max_batch=int(options.get("max_batch", 16)))
    if cache_capacity <= 0:
        return router
    return CachedEvaluator(router, cache_capacity, features.CACHE_KEYS[cache_key])
