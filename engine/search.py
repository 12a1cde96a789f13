"""Monte-Carlo graph search (MCGS) in batches, after KataGo's "Monte-Carlo Graph Search from First Principles".

The search's concerns have a file each, as KataGo spreads its Search over helper files: selection (which edge a
playout takes: miai.engine.selection), playouts (one descent from the root to a leaf: miai.engine.playout),
expansion and evaluation (the nodes a playout reaches, what a leaf becomes: miai.engine.expansion, leaves),
backup (miai.engine.backup), move choice (miai.engine.movechoice, snapshot) and what the search reports about
itself (miai.engine.searchstats). This module holds the :class:`Search` they serve: its config, its root (kept
from one move to the next), and its runs, batch by batch, with the net running one batch while the next is
collected (``search.overlap``).

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
from typing import Any, Final

import numpy as np

from miai.engine.backup import Backup
from miai.engine.config import SearchConfig
from miai.engine.ending import ending_bonus
from miai.engine.expansion import BiasKey, Expansion
from miai.engine.graph import BiasEntry, Node, NodeTable, StaleUpdate, Stats, Weighting, relink, revalue
from miai.engine.leaves import Valuation, candidate_moves, own_eye_mask
from miai.engine.movechoice import best_move, block_root_moves, move_filter, symmetric_duplicates, without
from miai.engine.playout import Leaf, Playouts
from miai.engine.run import Limits, RootFacts, Run
from miai.engine.searchstate import GoPosition, SearchState
from miai.engine.searchstats import Counters, Transpositions, counter_stats, graph_dump, transposition_stats
from miai.engine.selection import Selector
from miai.engine.snapshot import PASS, Snapshot, build_snapshot
from miai.go.coords import Color
from miai.go.rules import KoRule, Scoring
from miai.nets.evaluator import (CachingEvaluator, Evaluation, Evaluator, Finish, RootEvaluator, StagedEvaluator,
                                 evaluate_root, innermost, start_evaluation)

__all__ = ["Search", "SearchError", "SearchState", "leaves_per_batch", "own_eye_mask", "symmetric_duplicates", "PASS"]

WHITE = Color.WHITE  # a module global: read per node, where a ``Color.WHITE`` lookup costs four times more
log = logging.getLogger(__name__)
_OVERLAP_SWITCH_INTERVAL: Final = 0.0005  # seconds; see Search._loop_overlapped


class SearchError(RuntimeError):
    """The search was used wrongly (e.g. run() before set_root())."""


class Search:
    """A reusable Monte-Carlo graph search: ``set_root(state)``, then ``run(...)`` as often as needed."""

    def __init__(self, evaluator: Evaluator, config: SearchConfig | None = None) -> None:
        self.evaluator = evaluator
        self.table = NodeTable()
        self.root: Node | None = None
        self._keep_parents = False  # parent links, only for search.stale_update other than "path"
        config = config or SearchConfig()
        seed = config.seed or None
        self._rng = random.Random(seed)
        self._np_rng = np.random.default_rng(seed)
        self._count = Counters()
        self._bias_table: dict[BiasKey, BiasEntry] = {}  # the graph's subtree value bias entries
        # The last run's valuation (its dynamic score centre): a new root is expanded under it, before its own
        # run's centre, which is read off the root's value, is known.
        self._valuation = Valuation(config)
        self.config = config
        self._root_state: Any = None  # (a SearchState; Any, as the scratch states the evaluator reads)
        self._scratch: list[Any] = []
        self._noised: Node | None = None
        self._superko = False  # the root's rules: superko can make a known edge illegal on another path
        self._go = False  # the root is a Go game (GoPosition): Go's own rules apply
        self._lock = threading.RLock()  # one run at a time (pondering thread vs. GTP thread); re-entrant for callbacks
        self._last: Run | None = None  # the last run begun: its root facts serve snapshots until the next one

    # ------------------------------------------------------------------------------------------- root and reuse
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
        if keep != self._keep_parents and self.root is not None:
            relink(self.root, self.table, keep)  # parent lists appear (or go) with the option
        self._keep_parents = keep
        self._expansion = Expansion(config, self.table, self._bias_table)
        self._playouts = Playouts(config, self._selector, self._expansion, Backup(self._weighting, stale), self._rng,
                                  self._count, keep)

    def set_config(self, config: SearchConfig) -> None:
        """Switch to a new config; the graph is cleared when graph/tree mode changes."""
        if config.graph != self.config.graph:
            self.clear()
        self.config = config

    def clear(self) -> None:
        """Forget the whole graph (the root position stays)."""
        self.table.clear()
        self._bias_table.clear()
        self.root = None
        self._noised = None

    def set_root(self, state: SearchState) -> None:
        """Search from ``state`` next. The graph is reused when ``state`` extends the previous root by moves that the
        graph contains (then unreachable nodes are swept); otherwise it is cleared."""
        with self._lock:
            kept = self._reuse(state) if self.config.reuse_tree else None
            if kept is None:
                self.clear()
            else:
                self._count.trees_reused += 1
            self._scratch = self._advance_scratch(state)
            self._root_state = state.copy()
            if self.root is not None:
                # An edge found illegal on some path (superko) may be legal from the real game's history.
                for edge in self.root.edges:
                    if edge.illegal and state.is_legal(edge.move):
                        edge.illegal = False
            self._superko = state.rules.ko is not KoRule.SIMPLE
            self._go = isinstance(state, GoPosition)

    def _advance_scratch(self, state: SearchState) -> list[Any]:
        """The scratch states moved on to ``state`` by pushing the new moves (much cheaper than copying a long
        game), or none when ``state`` does not extend the old root (they are then copied afresh in run())."""
        old = self._root_state
        if old is None or not self._scratch or not _same_game(old, state):
            return []
        extra = list(state.moves)[len(old.moves):]
        try:
            for scratch in self._scratch:
                for color, move in extra:
                    scratch.push(move, color)
        except (ValueError, TypeError):
            return []  # e.g. a toy state without colours: copy instead
        return self._scratch

    def _reuse(self, state: SearchState) -> Node | None:
        old = self._root_state
        if old is None or self.root is None or not _same_game(old, state):
            return None
        if self.config.conservative_pass and isinstance(state, GoPosition) and state.pass_ends_game_outright():
            # As KataGo: the graph scored this root's game-ending pass deeper down; searched on from the root now.
            return None
        node: Node | None = self.root
        for color, move in list(state.moves)[len(old.moves):]:
            if node is None or node.sign != (1 if color == WHITE else -1):
                return None
            edge = node.edge_for(move)
            node = edge.child if edge is not None else None
        if node is None or node.terminal or (self.config.graph and node.key != state.graph_hash):
            return None
        if node is not self.root:
            self.table.discard(node.key)  # the root lives outside the table
            self.root = node
            # KataGo's makeMove makes the new root a copy without its subtree value bias entry and deletes the node
            # it copied, which takes its share out of the entry as for any node freed.
            node.release_bias(self.config.subtree_value_bias_free_prop)
            freed = self.table.sweep(node)
            relink(node, self.table, self._keep_parents)
            for gone in freed:
                gone.release_bias(self.config.subtree_value_bias_free_prop)
            # Like KataGo's clearUnusedSynchronous: keep the entries some remaining node uses.
            kept = {n.bias.key: n.bias for n in (node, *self.table) if n.bias is not None}
            self._bias_table.clear()
            self._bias_table.update(kept)
            self._count.nodes_freed += len(freed)
        return node

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
        step_seconds: float = 0.0,
    ) -> Snapshot:
        """Search until a limit is reached or ``stop`` is set; returns the final snapshot.

        Limits default to the config's (0 = none). ``on_progress`` gets a snapshot every ``progress_interval``
        seconds. With every limit 0 and no ``stop``, the search stops at ``config.max_nodes`` nodes.
        The run ends within ``max_time``: no step (a batch collected, evaluated and backed up) is begun that would
        end past it, judging by the last step's length, or by ``step_seconds`` before the first step.
        ``avoid`` / ``allow`` restrict the root moves for this run (kata-analyze avoid/allow; e.g. avoid PASS while
        cleaning up dead stones); the snapshots of the run show only the permitted moves.
        """
        if self._root_state is None:
            raise SearchError("set_root() must be called before run()")
        cfg = self.config
        visits_cap = cfg.max_visits if max_visits is None else max_visits
        playouts_cap = cfg.max_playouts if max_playouts is None else max_playouts
        time_cap = cfg.max_time if max_time is None else max_time
        with self._lock:
            start = time.monotonic()  # (the root's evaluation counts against the time cap)
            if self._root_state.is_over() and not self._go:
                return self._snapshot(None, 0, 0.0)  # a toy game's end has no moves (a finished Go game is searched on)
            root, ending, dame = self._prepare_root()
            permitted = move_filter(avoid, allow)
            facts = RootFacts(self._root_state.size, self._go, self._superko, self._valuation, permitted,
                              ending, dame)
            blocked = block_root_moves(root, without(permitted, self._symmetric_duplicates(permitted)))
            run = Run(root, facts, Limits(visits_cap, playouts_cap, time_cap, cfg.max_nodes), start=start,
                      stop=stop, batch=lambda visits: leaves_per_batch(cfg, self.evaluator.max_batch, visits),
                      graph_size=self.table.__len__, snapshot=self._snapshot, on_progress=on_progress,
                      interval=progress_interval, step_seconds=step_seconds)
            self._last = run
            try:
                self._loop(run)
            finally:
                for edge in blocked:
                    edge.illegal = False
            elapsed = run.elapsed
            playouts = run.playouts
            self._count.last_run = {"playouts": playouts, "seconds": round(elapsed, 4),
                                    "playouts_per_second": round(playouts / elapsed, 1) if elapsed > 0 else 0.0}
            return self._snapshot(run, playouts, elapsed)

    def _symmetric_duplicates(self, permitted: Callable[[int], bool] | None) -> frozenset[int]:
        """KataGo's rootSymmetryPruning: on a root position that some board symmetries leave unchanged, every move
        but one of each set of symmetric moves (``symmetric_duplicates``), unless the user's filter bans that one."""
        state = self._root_state
        if not self.config.root_symmetry_pruning or state is None:
            return frozenset()
        symmetries = state.symmetries()
        if len(symmetries) < 2:
            return frozenset()
        return symmetric_duplicates(state.size, state.to_play, symmetries, permitted)

    def _loop(self, run: Run) -> None:
        """Search until ``run``'s budget is spent: one batch at a time, or overlapped where the evaluator can."""
        batch = leaves_per_batch(self.config, self.evaluator.max_batch)
        slots = 2 * batch if self.config.overlap else batch
        while len(self._scratch) < slots:
            self._scratch.append(self._root_state.copy())
        # Only where the evaluator under the caches and routers can split a batch: one that cannot (random playouts)
        # would give staler batches with nothing running beside them.
        if self.config.overlap and isinstance(innermost(self.evaluator, self._root_state.size), StagedEvaluator):
            self._loop_overlapped(run, batch)
            return
        collect, apply = self._playouts.collect, self._playouts.apply
        while (n := run.budget()) > 0:
            done, leaves = collect(run, self._scratch[:n])
            if not done and not leaves:
                break  # no playout can make progress (every root move is illegal or forbidden)
            run.collected(done, len(leaves))
            if leaves:
                apply(run, leaves, self._evaluate(leaves))
                run.applied(len(leaves))
            run.report()

    def _loop_overlapped(self, run: Run, batch: int) -> None:
        """Collect one batch while the net runs the previous one (``search.overlap``); the two batches use separate
        scratch states. The evaluator's ``start`` encodes a batch in this thread and runs the net in its own, which
        holds no GIL (``miai.nets.evaluator.StagedEvaluator``): the search's Python and the net share the cores
        instead of taking turns. An evaluator that cannot split a batch evaluates it whole when it is started."""
        halves = [self._scratch[:batch], self._scratch[batch:2 * batch]]
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
                    evaluations = flight[0][1]()
                    finished = flight.popleft()[0]
                    apply(run, finished, evaluations)
                    run.applied(len(finished))
                elif not started and (n <= 0 or not done):
                    break  # a limit was reached, or no playout can make progress
                turn ^= 1
                run.report()
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

    def _evaluate(self, leaves: list[Leaf]) -> list[Evaluation]:
        try:
            return list(self.evaluator.evaluate([leaf.state for leaf in leaves]))
        except BaseException:
            self._playouts.abort(leaves)
            raise

    # ------------------------------------------------------------------------------------------ root set-up
    def _prepare_root(self) -> tuple[Node, dict[int, float], np.ndarray | None]:
        """Create and evaluate the root if needed, fix the dynamic score centre, add root noise once. Returns the
        root, its moves' ending bonus and, where fillDameBeforePass applies, the root's net ownership."""
        state = self._root_state
        expansion = self._expansion
        if self.root is None:
            self.root = Node(expansion.key(state), 1 if state.to_play == WHITE else -1)
            self._count.nodes_created += 1
        root = self.root
        evaluation = reinstall = None
        if not root.expanded:
            evaluation = self._evaluate_root(state)
            expansion.expand(root, state, evaluation, self._valuation)
            root.recompute(self._weighting)
        elif isinstance(self.evaluator, RootEvaluator):
            # A root kept from the last search was evaluated as an inner node: KataGo evaluates it again as a root
            # (maybeRecomputeExistingNNOutput), for the root's own policy optimism; installed below.
            evaluation = reinstall = self._evaluate_root(state)
        ending, ownership = self._ending_bonus(state, evaluation)
        # KataGo centres the dynamic score utility on the root's expected score, pulled a little towards 0.
        expected = root.score_mean
        centre = expected * (1.0 - self.config.dynamic_score_center_zero_weight)
        # ... but never more than one dynamic scale (times the board's side) away from the expected score.
        cap = self.config.dynamic_score_center_scale * state.size
        centre = min(expected + cap, max(expected - cap, centre))
        self._valuation = valuation = Valuation(self.config, centre)
        # Every value already in the graph (the root's own one included, made before the centre was known) is
        # worked out again against the new centre, as KataGo does when a search begins.
        if self.config.dynamic_score_utility_factor or self.config.subtree_value_bias_factor:
            size = state.size
            self._count.revalued_nodes += revalue(root, lambda own: valuation.refreshed(own, size), self._weighting)
        if reinstall is not None:
            self._reinstall_root(root, state, reinstall)
        if self.config.root_noise and self._noised is not root:
            self._add_root_noise(root)
            self._noised = root
        dame = ownership if self.config.fill_dame_before_pass and self._territory() else None
        return root, ending, dame

    def _reinstall_root(self, root: Node, state: Any, evaluation: Evaluation) -> None:
        """Give a kept root its evaluation as a root, after the graph was revalued: KataGo recomputes its stats
        (beginSearch) with the evaluation it had as an inner node and installs the new one at the first playout,
        priors and own value alike, which the root's statistics take in from the first backup on."""
        moves, priors = candidate_moves(evaluation.policy, state, self.config.forbid_eye_filling)
        root.replace_priors(dict(zip(moves.tolist(), priors.tolist())))
        root.own, root.own_weight = Expansion.own_value(state, evaluation, self._valuation)
        self._noised = None  # (the new priors need their noise again)

    def _evaluate_root(self, state: Any) -> Evaluation:
        self._count.net_evals += 1
        self._count.eval_batches += 1
        return evaluate_root(self.evaluator, state, self.config.conservative_pass)

    def _ending_bonus(self, state: Any, evaluation: Evaluation | None) -> tuple[dict[int, float], np.ndarray | None]:
        """KataGo's root ending bonus of each root move (engine/ending.py) and the root's own net ownership it is read
        from (the root evaluated again if a kept root has no evaluation at hand, as KataGo does for it), which the
        dame rule of the move choice reads too."""
        cfg = self.config
        wanted = cfg.root_ending_bonus_points or (cfg.fill_dame_before_pass and self._territory())
        if not wanted or not isinstance(state, GoPosition):
            return {}, None
        if evaluation is None:
            evaluation = self._evaluate_root(state)
        if evaluation.ownership is None:  # (an evaluator without ownership: asking again would not help)
            return {}, None
        ownership = np.asarray(evaluation.ownership, dtype=np.float64)
        return ending_bonus(state, ownership, cfg.root_ending_bonus_points), ownership

    def _add_root_noise(self, root: Node) -> None:
        moves = list(root.all_priors())
        if not moves:
            return
        alpha = self.config.root_noise_concentration / len(moves)
        noise = self._np_rng.dirichlet([alpha] * len(moves))
        w = self.config.root_noise_weight
        root.replace_priors({m: (1 - w) * p + w * float(x) for (m, p), x in zip(moves, noise)})

    # ------------------------------------------------------------------------------------------- snapshots
    def snapshot(self) -> Snapshot:
        """The current analysis (root info and one entry per visited root move)."""
        with self._lock:
            return self._snapshot(None, 0, 0.0)

    def _snapshot(self, run: Run | None, playouts: int, elapsed: float) -> Snapshot:
        """The analysis now; ``run``: the run in progress or just ended, whose root filter applies (None: all root
        moves). The last run's ending bonus and dame rule steer the move choice until the next run begins."""
        last = self._last
        ending = last.ending_utility if last is not None and last.ending else None
        dame = last.facts.dame if last is not None else None
        return build_snapshot(self.root, self._root_state, self.config, playouts, elapsed,
                              run.permitted if run is not None else None, ending, dame)

    def _territory(self) -> bool:
        """Whether the root is a Go game scored by territory (KataGo's fillDameBeforePass applies)."""
        return self._go and self._root_state.rules.scoring == Scoring.TERRITORY

    def best_move(self, snapshot: Snapshot) -> int:
        """The move to play from ``snapshot``: order 0 (LCB/visits), or sampled when a temperature is configured
        (miai.engine.movechoice)."""
        size = self._root_state.size if self._root_state else 19
        return best_move(snapshot, self.config, size, self._rng, self.root, None)

    # ------------------------------------------------------------------------------------------- reports
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


def _same_game(old: SearchState, new: SearchState) -> bool:
    """True when ``new`` can be the old root plus moves: same size, komi, rules, setup and move prefix."""
    if (old.size, old.komi, old.rules, old.handicap) != (new.size, new.komi, new.rules, new.handicap):
        return False
    if old.setup != new.setup:  # other setup stones: another game
        return False
    old_moves, new_moves = list(old.moves), list(new.moves)
    return len(new_moves) >= len(old_moves) and new_moves[:len(old_moves)] == old_moves
