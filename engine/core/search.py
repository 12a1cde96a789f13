"""Monte-Carlo graph search (MCGS) in batches, after KataGo's "Monte-Carlo Graph Search from First Principles".

The search's concerns have a file each, as KataGo spreads its Search over helper files: selection (which edge a
playout takes: miai.engine.core.selection), playouts (one descent from the root to a leaf: miai.engine.core.playout),
expansion and evaluation (the nodes a playout reaches, what a leaf becomes: miai.engine.core.expansion, leaves),
backup (miai.engine.core.backup), move choice (miai.engine.core.movechoice, snapshot) and what the search reports about
itself (miai.engine.core.searchstats); the root's set-up and what is kept from one move to the next have theirs too
(miai.engine.core.rootsetup, KataGo's beginSearch and makeMove). This module holds the :class:`Search` they serve: its
config, and its runs (miai.engine.core.run), batch by batch, with the net running one batch while the next is collected
(``search.overlap``).

Values are stored from White's view (see graph.py); the utility of a position is
``win_loss_factor * (win - loss) + static * atan-score + dynamic * atan(score - centre)`` (docs/search.md).
The search knows the net only through the Evaluator protocol of miai.nets.evaluator and never imports onnxruntime.
"""

from __future__ import annotations

import logging
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any, Final

import numpy as np

from miai.engine.core.backup import Backup
from miai.engine.core.config import SearchConfig
from miai.engine.core.expansion import Expansion
from miai.engine.core.graph import Node, NodeTable, StaleUpdate, Weighting
from miai.engine.core.movechoice import (AvoidUntil, best_move, block_root_moves, both, move_filter, symmetric_duplicates,
                                   without)
from miai.engine.core.playout import Leaf, Playouts
from miai.engine.core.rootsetup import RootSetup
from miai.engine.core.run import Limits, Run
from miai.engine.core.searchstate import SearchPosition, SearchState
from miai.engine.core.searchstats import Counters, Transpositions, counter_stats, graph_dump, transposition_stats
from miai.engine.core.selection import Selector
from miai.engine.core.snapshot import PASS, Snapshot, build_snapshot
from miai.go.coords import Color
from miai.nets.protocol import (CachingEvaluator, Evaluation, Evaluator, Finish, StagedEvaluator, innermost,
                                 start_evaluation)

__all__ = ["Search", "SearchError", "SearchState", "leaves_per_batch", "symmetric_duplicates", "PASS"]

log = logging.getLogger(__name__)
_OVERLAP_SWITCH_INTERVAL: Final = 0.0005  # seconds; see Search._loop_overlapped


class SearchError(RuntimeError):
    """The search was used wrongly (e.g. run() before set_root())."""


class Search:
    """A reusable Monte-Carlo graph search: ``set_root(state)``, then ``run(...)`` as often as needed."""

    def __init__(self, evaluator: Evaluator, config: SearchConfig | None = None) -> None:
        self.evaluator = evaluator
        config = config or SearchConfig()
        seed = config.seed or None
        self._rng = random.Random(seed)
        self._count = Counters()
        # The graph, its root and what else is kept from move to move (miai.engine.core.rootsetup).
        self._setup = RootSetup(config, self._count, np.random.default_rng(seed))
        self.config = config
        self._lock = threading.RLock()  # one run at a time (pondering thread vs. GTP thread); re-entrant for callbacks
        self._last: Run | None = None  # the last run begun: its root facts serve snapshots until the next one

    # ------------------------------------------------------------------------------------------- root and reuse
    @property
    def root(self) -> Node | None:
        """The root node (None before the first run and after the graph is cleared)."""
        return self._setup.root

    @property
    def table(self) -> NodeTable:
        """The graph's nodes, the root excepted."""
        return self._setup.table

    @property
    def config(self) -> SearchConfig:
        """The search parameters (replace them with ``set_config``)."""
        return self._config

    @config.setter
    def config(self, config: SearchConfig) -> None:
        self._config = config
        self._selector = Selector(config, self._rng)
        stale = StaleUpdate(config.stale_update)
        self._weighting = Weighting(
            value_weight_exponent=config.value_weight_exponent, noise_pruning=config.use_noise_pruning,
            noise_prune_utility_scale=config.noise_prune_utility_scale,
            bias_factor=config.subtree_value_bias_factor,
            bias_weight_exponent=config.subtree_value_bias_weight_exponent)
        keep = stale is not StaleUpdate.PATH
        self._setup.keep_parent_links(keep)
        self._expansion = Expansion(config, self._setup.table, self._setup.bias_table)
        self._playouts = Playouts(config, self._selector, self._expansion, Backup(self._weighting, stale), self._rng,
                                  self._count, keep)

    def set_config(self, config: SearchConfig) -> None:
        """Switch to a new config; the graph is cleared when graph/tree mode changes."""
        if config.graph != self.config.graph:
            self.clear()
        self.config = config

    def clear(self) -> None:
        """Forget the whole graph (the root position stays)."""
        self._setup.clear()

    def set_root(self, state: SearchPosition) -> None:
        """Search from ``state`` next. The graph is reused when ``state`` extends the previous root by moves that the
        graph contains (then unreachable nodes are swept); otherwise it is cleared (miai.engine.core.rootsetup says
        what is kept)."""
        with self._lock:
            self._setup.move_to(state, self.config)

    # -------------------------------------------------------------------------------------------------- run
    def run(
        self,
        stop: threading.Event | None = None,
        on_progress: Callable[[Snapshot], None] | None = None,
        *,
        max_visits: int | None = None,
        max_playouts: int | None = None,
        max_time: float | None = None,
        progress_interval: float = 1.0,
        avoid: Collection[int] = (),
        allow: Collection[int] | None = None,
        avoid_until: AvoidUntil | None = None,
        step_seconds: float = 0.0,
    ) -> Snapshot:
        """Search until a limit is reached or ``stop`` is set; returns the final snapshot.

        Limits default to the config's (0 = none). ``on_progress`` gets a snapshot every ``progress_interval``
        seconds. With every limit 0 and no ``stop``, the search stops at ``config.max_nodes`` nodes.
        The run ends within ``max_time``: no step (a batch collected, evaluated and backed up) is begun that would
        end past it, judging by the last step's length, or by ``step_seconds`` before the first step.
        ``avoid`` / ``allow`` restrict the root moves for this run (kata-analyze avoid/allow; e.g. avoid PASS while
        cleaning up dead stones); the snapshots of the run show only the permitted moves. ``avoid_until``: the
        analysis's avoid/allow at every depth (its depth 0 joins ``avoid``/``allow`` at the root).
        """
        with self._lock:
            ran = self._run(stop, on_progress, max_visits, max_playouts, max_time, progress_interval, avoid, allow,
                            avoid_until, step_seconds)
            if ran is None:
                return self._snapshot(None, 0, 0.0)  # a toy game's end has no moves (a finished Go game is searched on)
            run, elapsed = ran
            return self._snapshot(run, run.playouts, elapsed)

    def ponder(self, stop: threading.Event) -> None:
        """Search until ``stop`` is set (or the graph reaches ``config.max_nodes``), as :meth:`run` with no limits,
        without the final snapshot: pondering keeps the graph for the next genmove and reads nothing of it.

        The ponder search is stopped when the controller's next command arrives, and that command (the move's clock
        commands, the ``genmove``) waits until it has stopped: a snapshot of a large graph (20 ms for 3,000 visits
        on 19x19, several times that on a busy machine) would be built on the move's clock for nothing.
        """
        with self._lock:
            self._run(stop, on_progress=None, max_visits=0, max_playouts=0, max_time=0.0, progress_interval=1.0,
                      avoid=(), allow=None, avoid_until=None, step_seconds=0.0)

    def _run(self, stop: threading.Event | None, on_progress: Callable[[Snapshot], None] | None,
             max_visits: int | None, max_playouts: int | None, max_time: float | None, progress_interval: float,
             avoid: Collection[int], allow: Collection[int] | None, avoid_until: AvoidUntil | None,
             step_seconds: float) -> tuple[Run, float] | None:
        """One run of :meth:`run` (the lock held): the run and its seconds, or None at a toy game's end."""
        setup = self._setup
        if setup.state is None:
            raise SearchError("set_root() must be called before run()")
        cfg = self.config
        visits_cap = cfg.max_visits if max_visits is None else max_visits
        playouts_cap = cfg.max_playouts if max_playouts is None else max_playouts
        time_cap = cfg.max_time if max_time is None else max_time
        start = time.monotonic()  # (the root's evaluation counts against the time cap)
        if setup.state.is_over() and not setup.go:
            return None
        permitted = move_filter(avoid, allow)
        if avoid_until is not None:
            permitted = both(permitted, avoid_until.permitted(Color(setup.state.to_play), 0))
        root, facts = setup.begin(cfg, self.evaluator, self._expansion, self._weighting, permitted)
        blocked = block_root_moves(root, without(permitted, self._symmetric_duplicates(permitted)))
        run = Run(root, facts, Limits(visits_cap, playouts_cap, time_cap, cfg.max_nodes), start=start,
                  stop=stop, batch=lambda visits: leaves_per_batch(cfg, self.evaluator.max_batch, visits),
                  graph_size=setup.table.__len__, snapshot=self._snapshot, on_progress=on_progress,
                  interval=progress_interval, step_seconds=step_seconds,
                  avoid_until=avoid_until if avoid_until is not None and avoid_until.depth > 1 else None)
        self._last = run
        try:
            self._loop(run)
        finally:
            self._playouts.settle()  # every scratch state back at the root
            for edge in blocked:
                edge.illegal = False
        elapsed = run.elapsed
        playouts = run.playouts
        self._count.last_run = {"playouts": playouts, "seconds": round(elapsed, 4),
                                "playouts_per_second": round(playouts / elapsed, 1) if elapsed > 0 else 0.0}
        return run, elapsed

    def _symmetric_duplicates(self, permitted: Callable[[int], bool] | None) -> frozenset[int]:
        """KataGo's rootSymmetryPruning: on a root position that some board symmetries leave unchanged, every move
        but one of each set of symmetric moves (``symmetric_duplicates``), unless the user's filter bans that one."""
        state = self._setup.state
        if not self.config.root_symmetry_pruning or state is None:
            return frozenset()
        symmetries = state.symmetries()
        if len(symmetries) < 2:
            return frozenset()
        return symmetric_duplicates(state.size, state.to_play, symmetries, permitted)

    def _loop(self, run: Run) -> None:
        """Search until ``run``'s budget is spent: one batch at a time, or overlapped where the evaluator can."""
        batch = leaves_per_batch(self.config, self.evaluator.max_batch)
        scratch = self._setup.scratch_states(2 * batch if self.config.overlap else batch)
        # Only where the evaluator under the caches and routers can split a batch: one that cannot (random playouts)
        # would give staler batches with nothing running beside them.
        if self.config.overlap and isinstance(innermost(self.evaluator, run.facts.size), StagedEvaluator):
            self._loop_overlapped(run, batch, scratch)
            return
        collect, apply = self._playouts.collect, self._playouts.apply
        while (n := run.budget()) > 0:
            done, leaves = collect(run, scratch[:n])
            if not done and not leaves:
                break  # no playout can make progress (every root move is illegal or forbidden)
            run.collected(done, len(leaves))
            if leaves:
                apply(run, leaves, self._evaluate(leaves))
                run.applied(len(leaves))
            run.report()

    def _loop_overlapped(self, run: Run, batch: int, scratch: list[SearchPosition]) -> None:
        """Collect one batch while the net runs the previous one (``search.overlap``); the two batches use separate
        scratch states. The evaluator's ``start`` encodes a batch in this thread and runs the net in its own, which
        holds no GIL (``miai.nets.evaluator.StagedEvaluator``): the search's Python and the net share the cores
        instead of taking turns. An evaluator that cannot split a batch evaluates it whole when it is started."""
        halves = [scratch[:batch], scratch[batch:2 * batch]]
        flight: deque[tuple[list[Leaf], Finish]] = deque()  # started batches, oldest first (two at most)
        leaves: list[Leaf] = []  # the batch just collected, not yet started
        collect, apply = self._playouts.collect, self._playouts.apply
        turn = 0
        # The net's thread needs the GIL back the moment onnxruntime returns; with CPython's default switch interval
        # (5 ms, about half a b6c96 batch on 9x9) it waits that long for this thread to yield.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, _OVERLAP_SWITCH_INTERVAL))
        try:
            while True:
                n = run.budget()
                done, leaves = collect(run, halves[turn][:n]) if n > 0 else (0, [])
                run.collected(done, len(leaves))
                started = bool(leaves)
                if started:
                    flight.append((leaves, start_evaluation(self.evaluator, [x.state for x in leaves])))
                    leaves = []
                if flight and (len(flight) == 2 or not started):
                    evaluations = self._wait(run, flight[0][1])
                    if evaluations is None:
                        break  # the time is up (or the run was stopped) before the net answered
                    finished = flight.popleft()[0]
                    apply(run, finished, evaluations)
                    run.applied(len(finished))
                elif not started and (n <= 0 or not done):
                    break  # a limit was reached, or no playout can make progress
                turn ^= 1
                run.report()
            while flight:
                self._abandon(run, flight.popleft()[0])
        except BaseException:
            # Wait for the net before touching its states, then undo every playout still in flight.
            for batch_leaves, finish in flight:
                try:
                    finish()
                except Exception as exc:  # the search is failing already: its own error is the one raised
                    log.debug("a batch in flight failed too: %s", exc)
                self._playouts.abort(batch_leaves)
            self._playouts.abort(leaves)
            raise
        finally:
            sys.setswitchinterval(interval)

    @staticmethod
    def _wait(run: Run, finish: Finish) -> list[Evaluation] | None:
        """A started batch's evaluations, or None when ``run`` expired before the net answered."""
        while True:
            try:
                return finish(run.wait_limit())
            except TimeoutError:
                if run.expired():
                    return None

    def _abandon(self, run: Run, leaves: list[Leaf]) -> None:
        """Give up the playouts of a batch the net has not finished, without waiting for it: their virtual loss is
        taken back, and their scratch states, which the net's thread may still be reading, are dropped (the next
        run copies fresh ones)."""
        self._playouts.abandon(leaves)
        run.abandoned(len(leaves))
        self._setup.drop_scratch([leaf.state for leaf in leaves])
        self._count.batches_abandoned += 1

    def _evaluate(self, leaves: list[Leaf]) -> list[Evaluation]:
        try:
            return list(self.evaluator.evaluate([leaf.state for leaf in leaves]))
        except BaseException:
            self._playouts.abort(leaves)
            raise

    # ------------------------------------------------------------------------------------------- snapshots
    def snapshot(self) -> Snapshot:
        """The current analysis (root info and one entry per visited root move)."""
        with self._lock:
            return self._snapshot(None, 0, 0.0)

    def _snapshot(self, run: Run | None, playouts: int, elapsed: float) -> Snapshot:
        """The analysis now; ``run``: the run in progress or just ended, whose root filter applies (None: all root
        moves). The last run's ending bonus and dame rule steer the move choice until the next run begins."""
        last = self._last
        facts = run.facts if run is not None else None if last is None else replace(last.facts, permitted=None)
        state = self._setup.state
        if state is None:
            raise SearchError("set_root() must be called before snapshot()")
        return build_snapshot(self.root, state, self.config, playouts, elapsed, facts)

    def best_move(self, snapshot: Snapshot) -> int:
        """The move to play from ``snapshot``: order 0 (LCB/visits), or sampled when a temperature is configured
        (miai.engine.core.movechoice). With no move searched it is the root's best prior that the last run's root filter
        permits (avoid/allow hold for the move played as for the moves searched)."""
        size = self._setup.state.size if self._setup.state else 19
        last = self._last
        permitted = last.facts.permitted if last is not None and last.root is self.root else None
        return best_move(snapshot, self.config, size, self._rng, self.root, permitted)

    # ------------------------------------------------------------------------------------------- reports
    @property
    def batches(self) -> int:
        """Evaluator calls since the search was made (``stats()``'s ``eval_batches``, without walking the graph as
        ``stats()`` does: a genmove reads it on the clock)."""
        return self._count.eval_batches

    @property
    def net_evals(self) -> int:
        """Positions the evaluator was asked for since the search was made (``stats()``'s ``net_evals``; KataGo's
        logSearchInfo "NN rows" counts the same, less its cache's hits)."""
        return self._count.net_evals

    def stats(self) -> dict[str, Any]:
        """Counters for ``miai-search_stats`` (one JSON object)."""
        out = counter_stats(self._count, self.root, self.table)
        trans = self._last.trans if self._last is not None else Transpositions()
        out["transpositions"] = transposition_stats(trans, self.table, self.config.stale_update)
        if isinstance(self.evaluator, CachingEvaluator):
            out["cache_hits"] = self.evaluator.hits
        return out

    def graph_dump(self, move_text: Callable[[int], str] = str) -> dict[str, Any]:
        """The graph reachable from the root as plain data, moves written by ``move_text`` (``miai-graph_dump``;
        schema in docs/gtp.md)."""
        with self._lock:
            return graph_dump(self.root, self.config.graph, move_text)


def leaves_per_batch(config: SearchConfig, max_batch: int, root_visits: int | None = None) -> int:
    """Leaves a batch collects when the root has ``root_visits`` visits (None: the most it ever collects): one per
    ``visits_per_batch_leaf`` root visits, up to ``batch_size`` and the evaluator's ``max_batch``. A batch of leaves
    under virtual loss is chosen with less information than one leaf at a time; early in a search, when every visit
    changes the picture, that costs more than the faster evaluation of a big batch gains."""
    batch = max(1, min(config.batch_size, max_batch))
    per_leaf = config.visits_per_batch_leaf
    if root_visits is None or not per_leaf:
        return batch
    return max(1, min(batch, 1 + root_visits // per_leaf))

