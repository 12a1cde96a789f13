"""Monte-Carlo graph search (MCGS) in batches, after KataGo's "Monte-Carlo Graph Search from First Principles".

One playout descends from the root by PUCT over **edge** visits, playing moves on a scratch GameState (one per slot
of the batch, copied from the root once per root, never one per node) and undoing them afterwards. It ends in one of:

- a new leaf: queued for the evaluator with virtual loss on its path; when the batch comes back the leaf gets its
  own value U (N = 1) and every node above it is recomputed from its children (see miai.engine.graph);
- a terminal node (two passes): its exact score counts once more;
- a child that already has more visits than the edge leading to it (a transposition): by config stop there and only
  add an edge visit ("stop", KataGo's default), always descend ("continue"), or descend with a probability ("leaky");
- a child already on the current path (a cycle): add an edge visit and stop.

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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, Protocol, Self

import numpy as np

from miai.engine.config import SearchConfig
from miai.engine.ending import ending_bonus
from miai.engine.graph import (
    BiasEntry, Edge, Node, NodeTable, StaleUpdate, Stats, Weighting, link, refresh_ancestors, refresh_parents, relink,
    revalue,
)
from miai.go.coords import Color
from miai.go.geometry import symmetric_points
from miai.go.rules import KoRule, Rules, Scoring
from miai.go.state import GameState
from miai.nets.evaluator import (CachingEvaluator, Finish, RootEvaluator, StagedEvaluator, evaluate_root, innermost,
                                 start_evaluation)
from miai.engine.leaves import Valuation, candidate_moves, own_eye_mask
from miai.engine.selection import SelectionRule, Selector, passing_hack_edge
from miai.engine.snapshot import PASS, Snapshot, build_snapshot, choose_move, move_temperature

if TYPE_CHECKING:
    from miai.nets.evaluator import Amaf, Evaluation

__all__ = ["Search", "SearchError", "leaves_per_batch", "own_eye_mask", "PASS"]

WHITE = Color.WHITE  # a module global: read per node, where a ``Color.WHITE`` lookup costs four times more


class SearchError(RuntimeError):
    """The search was used wrongly (e.g. run() before set_root())."""


class SearchState(Protocol):
    """The part of miai.go.state.GameState the search uses (tests may pass a toy game with the same members).

    ``size``, ``komi``, ``rules``, ``handicap``, ``setup`` and ``moves`` tell whether a new root continues the old
    one's game (graph reuse); ``rules.ko`` whether superko can make a known edge illegal on another path.
    """

    @property
    def size(self) -> int: ...
    @property
    def komi(self) -> float: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def handicap(self) -> int: ...
    @property
    def setup(self) -> object: ...
    @property
    def moves(self) -> Sequence[tuple[int, int]]: ...
    @property
    def to_play(self) -> int: ...
    @property
    def graph_hash(self) -> int: ...
    def play_unchecked(self, move: int) -> None: ...
    def pop(self) -> Any: ...
    def is_legal(self, move: int) -> bool: ...
    def is_over(self) -> bool: ...
    def pass_ends_game(self) -> bool: ...
    def symmetries(self) -> list[int]: ...
    def score(self) -> float: ...
    def copy(self) -> Self: ...


class Evaluator(Protocol):
    """miai.nets.evaluator.Evaluator as the search sees it."""

    max_batch: int

    def evaluate(self, states: Sequence[Any]) -> list[Evaluation]: ...


@dataclass(slots=True)
class _Leaf:
    """A playout waiting for its leaf's evaluation: the path (with virtual loss) and the scratch state at the leaf."""

    path: list[Node]
    edges: list[Edge]
    state: Any
    cut: int = -1  # edges[cut] was taken without an edge visit (passing hack): back up only the edges below it


class _Collision(Enum):
    COLLISION = 0


_COLLISION: Final = _Collision.COLLISION  # a playout that hit a leaf already waiting in this batch
log = logging.getLogger(__name__)
_OVERLAP_SWITCH_INTERVAL: Final = 0.0005  # seconds; see Search._loop_overlapped
# Keys of game-ending passes searched on (KataGo's forceNonTerminal): apart from the scored node of the same position.
_FORCE_NON_TERMINAL: Final = 0x5F0C3E2B_9A6D41F7_C2E8B05D_7134A9E6


class ExceedRule(Enum):
    """What a playout does at a child that has more visits than the edge it came by (``search.child_visits_exceed_edge``;
    a transposition): stop there and only add an edge visit (KataGo's default), always descend, or descend with
    ``search.leak_probability``."""

    STOP = "stop"
    CONTINUE = "continue"
    LEAKY = "leaky"


_STOP: Final = ExceedRule.STOP  # module globals: read per descent step
_CONTINUE: Final = ExceedRule.CONTINUE


@dataclass
class _Counters:
    playouts: int = 0
    net_evals: int = 0
    eval_batches: int = 0
    transposition_hits: int = 0
    stopped_early: int = 0
    leaky_descents: int = 0
    cycle_stops: int = 0
    terminal_visits: int = 0
    collisions: int = 0
    illegal_edges: int = 0
    nodes_created: int = 0
    nodes_freed: int = 0
    trees_reused: int = 0
    revalued_nodes: int = 0  # nodes whose values were worked out again when a search began (new score centre)
    passing_hack_playouts: int = 0  # playouts sent down a pass or a non-pass move by search.more_passing_hacks
    last_run: dict[str, float] = field(default_factory=dict)


@dataclass
class _Transpositions:
    """Transposition statistics of one run (``miai-search_stats``): playouts that passed through a node with several
    parents or linked an edge to a node already in the table, and the depths of those links (table hits)."""

    playouts: int = 0
    met: int = 0
    hit_depths: dict[int, int] = field(default_factory=dict)
    refreshed: int = 0  # nodes recomputed off the playout path (search.stale_update)


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
        self.config = config
        self._root_state: Any = None
        self._scratch: list[Any] = []
        self._tree_ids = 0
        self._valuation = Valuation(self.config)
        self._noised: Node | None = None
        self._permitted: Callable[[int], bool] | None = None  # root move filter of the current run
        self._superko = False
        self._count = _Counters()
        self._trans = _Transpositions()
        self._met = False  # the current playout met a transposition
        self._lock = threading.RLock()  # one run at a time (pondering thread vs. GTP thread); re-entrant for callbacks
        # Subtree value bias entries by local pattern (KataGo's SubtreeValueBiasTable), shared by the whole graph.
        self._bias_table: dict[tuple[Any, ...], BiasEntry] = {}
        self._ending: dict[int, float] = {}  # the root moves' ending bonus, White's points (engine/ending.py)
        self._root_ownership: np.ndarray | None = None  # the root's net ownership, its mover's view

    # ------------------------------------------------------------------------------------------- root and reuse
    @property
    def config(self) -> SearchConfig:
        """The search parameters (replace them with ``set_config``)."""
        return self._config

    @config.setter
    def config(self, config: SearchConfig) -> None:
        self._config = config
        self._selector = Selector(config, self._rng)
        self._exceed = ExceedRule(config.child_visits_exceed_edge)
        stale = StaleUpdate(config.stale_update)
        self._refresh = {StaleUpdate.PATH: None, StaleUpdate.PARENTS: refresh_parents,
                         StaleUpdate.ANCESTORS: refresh_ancestors}[stale]
        self._weighting = Weighting(
            value_weight_exponent=config.value_weight_exponent, noise_pruning=config.use_noise_pruning,
            noise_prune_utility_scale=config.noise_prune_utility_scale,
            bias_factor=config.subtree_value_bias_factor,
            bias_weight_exponent=config.subtree_value_bias_weight_exponent)
        keep = stale is not StaleUpdate.PATH
        if keep != self._keep_parents and self.root is not None:
            relink(self.root, self.table, keep)  # parent lists appear (or go) with the option
        self._keep_parents = keep

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
        if self.config.conservative_pass and isinstance(state, GameState) and state.pass_ends_game_outright():
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
            self._bias_table = {n.bias.key: n.bias for n in (node, *self.table) if n.bias is not None}
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
    ) -> Snapshot:
        """Search until a limit is reached or ``stop`` is set; returns the final snapshot.

        Limits default to the config's (0 = none). ``on_progress`` gets a snapshot every ``progress_interval``
        seconds. With every limit 0 and no ``stop``, the search stops at ``config.max_nodes`` nodes.
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
            start = time.monotonic()
            if self._root_state.is_over() and not isinstance(self._root_state, GameState):
                return self._snapshot(0, 0.0)  # a toy game's end has no moves (a finished Go game is searched on)
            self._prepare_root()
            self._trans = _Transpositions()
            self._permitted = _move_filter(avoid, allow)
            blocked = self._block_root_moves(_without(self._permitted, self._symmetric_duplicates()))
            try:
                playouts = self._loop(start, stop, on_progress, visits_cap, playouts_cap, time_cap,
                                      progress_interval)
            finally:
                for edge in blocked:
                    edge.illegal = False
            elapsed = time.monotonic() - start
            self._count.last_run = {"playouts": playouts, "seconds": round(elapsed, 4),
                                    "playouts_per_second": round(playouts / elapsed, 1) if elapsed > 0 else 0.0}
            snapshot = self._snapshot(playouts, elapsed)
            self._permitted = None
            return snapshot

    def _symmetric_duplicates(self) -> frozenset[int]:
        """KataGo's rootSymmetryPruning: on a root position that some board symmetries leave unchanged, every move
        but one of each set of symmetric moves (``symmetric_duplicates``), unless the user's filter bans that one."""
        state = self._root_state
        if not self.config.root_symmetry_pruning or state is None:
            return frozenset()
        symmetries = state.symmetries()
        if len(symmetries) < 2:
            return frozenset()
        return symmetric_duplicates(state.size, state.to_play, symmetries, self._permitted)

    def _block_root_moves(self, permitted: Callable[[int], bool] | None) -> list[Edge]:
        """Mark the root's forbidden moves as illegal edges for this run (untouched ones are touched first, out of
        prior order, so the permitted untouched moves keep their order); returns the edges to unblock after."""
        root = self.root
        if permitted is None or root is None:
            return []
        rest = range(root.next_index, len(root.moves))
        banned = [i for i in rest if not permitted(int(root.moves[i]))]
        if banned:
            kept = [i for i in rest if permitted(int(root.moves[i]))]
            order = np.array(banned + kept, dtype=np.int64)
            root.moves[root.next_index:] = root.moves[order]
            root.priors[root.next_index:] = root.priors[order]
            for _ in banned:
                root.touch_next()
        blocked = [e for e in root.edges if not e.illegal and not permitted(e.move)]
        for edge in blocked:
            edge.illegal = True
        return blocked

    def _loop(self, start: float, stop: threading.Event | None, on_progress: Callable[[Snapshot], None] | None,
              visits_cap: int, playouts_cap: int, time_cap: float, interval: float) -> int:
        batch = leaves_per_batch(self.config, self.evaluator.max_batch)
        slots = 2 * batch if self.config.overlap else batch
        while len(self._scratch) < slots:
            self._scratch.append(self._root_state.copy())
        root = self.root
        assert root is not None
        playouts = 0
        next_report = start + interval
        hack_start = self._count.passing_hack_playouts

        def budget(in_flight: int = 0) -> int:
            if stop is not None and stop.is_set():
                return 0
            now = time.monotonic()
            if (time_cap and now - start >= time_cap) or len(self.table) >= self.config.max_nodes:
                return 0
            left = leaves_per_batch(self.config, self.evaluator.max_batch, root.visits)
            if visits_cap:
                left = min(left, visits_cap - root.visits - in_flight)
            if playouts_cap:  # (the passing hack's playouts do not count, as in KataGo)
                left = min(left, playouts_cap - playouts + self._count.passing_hack_playouts - hack_start)
            return max(0, left)

        def report() -> None:
            nonlocal next_report
            if on_progress is not None and time.monotonic() >= next_report:
                next_report = time.monotonic() + interval
                on_progress(self._snapshot(playouts, time.monotonic() - start))

        # Only where the evaluator under the caches and routers can split a batch: one that cannot (random playouts)
        # would give staler batches with nothing running beside them.
        if self.config.overlap and isinstance(innermost(self.evaluator, self._root_state.size), StagedEvaluator):
            return self._loop_overlapped(batch, budget, report)
        while (n := budget()) > 0:
            done, leaves = self._collect(self._scratch[:n])
            if not done and not leaves:
                break  # no playout can make progress (every root move is illegal or forbidden)
            playouts += done + len(leaves)
            if leaves:
                self._apply(leaves, self._evaluate(leaves))
            report()
        return playouts

    def _loop_overlapped(self, batch: int, budget: Callable[[int], int], report: Callable[[], None]) -> int:
        """Collect one batch while the net runs the previous one (``search.overlap``); the two batches use separate
        scratch states. The evaluator's ``start`` encodes a batch in this thread and runs the net in its own, which
        holds no GIL (``miai.nets.evaluator.StagedEvaluator``): the search's Python and the net share the cores
        instead of taking turns. An evaluator that cannot split a batch evaluates it whole when it is started."""
        halves = [self._scratch[:batch], self._scratch[batch:2 * batch]]
        playouts = 0
        flight: deque[tuple[list[_Leaf], Finish]] = deque()  # started batches, oldest first (two at most)
        leaves: list[_Leaf] = []  # the batch just collected, not yet started
        turn = 0
        # The net's thread needs the GIL back the moment onnxruntime returns; with CPython's default switch interval
        # (5 ms, about half a b6c96 batch on 9x9) it waits that long for this thread to yield.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, _OVERLAP_SWITCH_INTERVAL))
        try:
            while True:
                n = budget(sum(len(f[0]) for f in flight))
                done, leaves = self._collect(halves[turn][:n]) if n > 0 else (0, [])
                playouts += done + len(leaves)
                started = bool(leaves)
                if started:
                    flight.append((leaves, start_evaluation(self.evaluator, [x.state for x in leaves])))
                    leaves = []
                if flight and (len(flight) == 2 or not started):
                    evaluations = flight[0][1]()
                    self._apply(flight.popleft()[0], evaluations)
                elif not started and (n <= 0 or not done):
                    break  # a limit was reached, or no playout can make progress
                turn ^= 1
                report()
        except BaseException:
            # Wait for the net before touching its states, then undo every playout still in flight.
            for batch_leaves, finish in flight:
                try:
                    finish()
                except Exception as exc:  # the search is failing already: its own error is the one raised
                    log.debug("a batch in flight failed too: %s", exc)
                self._abort_leaves(batch_leaves)
            self._abort_leaves(leaves)
            raise
        finally:
            sys.setswitchinterval(interval)
        return playouts

    def _raw_evaluate(self, states: list[Any]) -> list[Evaluation]:
        return list(self.evaluator.evaluate(states))

    def _evaluate(self, leaves: list[_Leaf]) -> list[Evaluation]:
        try:
            return self._raw_evaluate([leaf.state for leaf in leaves])
        except BaseException:
            self._abort_leaves(leaves)
            raise

    def _abort_leaves(self, leaves: list[_Leaf]) -> None:
        """Undo the virtual loss and scratch moves of playouts whose evaluation failed, so the graph stays sound."""
        for leaf in leaves:
            leaf.path[-1].pending = False
            for node in leaf.path:
                node.virtual_loss -= 1
            for _ in leaf.edges:
                leaf.state.pop()

    # ------------------------------------------------------------------------------------------ root set-up
    def _prepare_root(self) -> None:
        """Create and evaluate the root if needed, fix the dynamic score centre, add root noise once."""
        state = self._root_state
        if self.root is None:
            self.root = Node(self._key(state), 1 if state.to_play == WHITE else -1)
            self._count.nodes_created += 1
        root = self.root
        evaluation = reinstall = None
        if not root.expanded:
            evaluation = self._evaluate_root(state)
            self._expand(root, state, evaluation)
            root.recompute(self._weighting)
        elif isinstance(self.evaluator, RootEvaluator):
            # A root kept from the last search was evaluated as an inner node: KataGo evaluates it again as a root
            # (maybeRecomputeExistingNNOutput), for the root's own policy optimism; installed below.
            evaluation = reinstall = self._evaluate_root(state)
        self._ending, self._root_ownership = self._ending_bonus(state, evaluation)
        self._selector.ending = self._ending
        self._selector.ending_utility = self._ending_utility
        # KataGo centres the dynamic score utility on the root's expected score, pulled a little towards 0.
        expected = root.score_mean
        centre = expected * (1.0 - self.config.dynamic_score_center_zero_weight)
        # ... but never more than one dynamic scale (times the board's side) away from the expected score.
        cap = self.config.dynamic_score_center_scale * state.size
        centre = min(expected + cap, max(expected - cap, centre))
        self._valuation = Valuation(self.config, centre)
        # Every value already in the graph (the root's own one included, made before the centre was known) is
        # worked out again against the new centre, as KataGo does when a search begins.
        if self.config.dynamic_score_utility_factor or self.config.subtree_value_bias_factor:
            valuation, size = self._valuation, state.size
            self._count.revalued_nodes += revalue(root, lambda own: valuation.refreshed(own, size), self._weighting)
        if reinstall is not None:
            self._reinstall_root(root, state, reinstall)
        if self.config.root_noise and self._noised is not root:
            self._add_root_noise(root)
            self._noised = root

    def _reinstall_root(self, root: Node, state: Any, evaluation: Evaluation) -> None:
        """Give a kept root its evaluation as a root, after the graph was revalued: KataGo recomputes its stats
        (beginSearch) with the evaluation it had as an inner node and installs the new one at the first playout,
        priors and own value alike, which the root's statistics take in from the first backup on."""
        moves, priors = candidate_moves(evaluation.policy, state, self.config.forbid_eye_filling)
        root.replace_priors(dict(zip(moves.tolist(), priors.tolist())))
        root.own, root.own_weight = self._own_value(state, evaluation)
        self._noised = None  # (the new priors need their noise again)

    def _own_value(self, state: Any, evaluation: Evaluation) -> tuple[Stats, float]:
        """A node's own value from its evaluation and the weight it carries (uncertainty-weighted playouts)."""
        sign = 1 if state.to_play == WHITE else -1
        own = self._valuation.evaluated(evaluation, sign, state.size)
        return own, self._valuation.weight(evaluation, own.score_mean, state.size)

    def _evaluate_root(self, state: Any) -> Evaluation:
        self._count.net_evals += 1
        self._count.eval_batches += 1
        return evaluate_root(self.evaluator, state, self.config.conservative_pass)

    def _ending_bonus(self, state: Any, evaluation: Evaluation | None) -> tuple[dict[int, float], np.ndarray | None]:
        """KataGo's root ending bonus of each root move (engine/ending.py) and the root's own net ownership it is read
        from (the root evaluated again if a kept root has no evaluation at hand, as KataGo does for it), which the
        dame rule of the move choice reads too."""
        cfg = self.config
        wanted = cfg.root_ending_bonus_points or (cfg.fill_dame_before_pass and _territory(state))
        if not wanted or not isinstance(state, GameState):
            return {}, None
        if evaluation is None:
            evaluation = self._evaluate_root(state)
        if evaluation.ownership is None:  # (an evaluator without ownership: asking again would not help)
            return {}, None
        ownership = np.asarray(evaluation.ownership, dtype=np.float64)
        return ending_bonus(state, ownership, cfg.root_ending_bonus_points), ownership

    def _ending_utility(self, move: int, stats: Stats) -> float:
        """The utility (White's view) a root child with statistics ``stats`` gains from ``move``'s ending bonus."""
        bonus = self._ending.get(move)
        if not bonus:
            return 0.0
        return self._valuation.score_utility_diff(stats.score_mean, stats.score_sq, bonus, self._root_state.size)

    def _add_root_noise(self, root: Node) -> None:
        moves = list(root.all_priors())
        if not moves:
            return
        alpha = self.config.root_noise_concentration / len(moves)
        noise = self._np_rng.dirichlet([alpha] * len(moves))
        w = self.config.root_noise_weight
        root.replace_priors({m: (1 - w) * p + w * float(x) for (m, p), x in zip(moves, noise)})

    def _key(self, state: Any) -> int:
        if self.config.graph:
            return int(state.graph_hash)
        self._tree_ids += 1
        return -self._tree_ids  # tree mode: every node is new; negative keys never clash with hashes

    # ------------------------------------------------------------------------------------------- playouts
    def _collect(self, states: list[Any]) -> tuple[int, list[_Leaf]]:
        """Run one playout per scratch state; returns (playouts finished without the net, leaves to evaluate)."""
        done = 0
        leaves: list[_Leaf] = []
        for state in states:
            self._met = False
            result = self._descend(state)
            if result is not _COLLISION:
                self._trans.playouts += 1
                self._trans.met += self._met
            if result is None:
                done += 1
            elif result is _COLLISION:
                self._count.collisions += 1
                break  # the rest of the batch would mostly collide again; evaluate what we have
            else:
                leaves.append(result)
        self._count.playouts += done + len(leaves)
        return done, leaves

    def _descend(self, state: Any) -> _Leaf | _Collision | None:
        """One playout from the root on ``state``. Returns a _Leaf to evaluate, _COLLISION, or None if finished."""
        exceed = self._exceed
        choose = self._selector.choose
        hacks = self.config.more_passing_hacks and self._selector.rule is SelectionRule.PUCT  # (KataGo's PUCT only)
        node = root = self.root
        assert node is not None
        path = [node]
        edges: list[Edge] = []
        on_path = {id(node)}
        node.virtual_loss += 1
        cut = -1
        while True:
            if node.terminal:
                node.visits += 1  # each visit of a terminal node adds its exact result once more
                node.weight += 1.0
                node.weight_sq += 1.0
                self._count.terminal_visits += 1
                self._finish(state, path, edges, cut)
                return None
            if not node.expanded:
                if node.pending:
                    self._unwind(state, path, edges)
                    return _COLLISION
                node.pending = True
                return _Leaf(path, edges, state, cut)
            weightless = False
            edge = choose(node, node is root)
            if edge is not None and hacks and self._permitted is None:
                forced = passing_hack_edge(node, state, edge)
                if forced is not None:
                    edge, weightless, cut = forced, True, len(edges)
                    self._count.passing_hack_playouts += 1
            if edge is None:  # no playable move (impossible in Go, where pass is always an edge)
                if node is self.root:
                    self._unwind(state, path, edges)
                    return _COLLISION
                # Like the stop rule: count the edge into this node once more with the node's current value.
                path.pop().virtual_loss -= 1
                self._finish(state, path, edges, cut)
                return None
            move = edge.move
            if move != PASS and (edge.child is None or self._superko) and not state.is_legal(move):
                edge.illegal = True  # e.g. superko on this path: skip the edge from now on
                self._count.illegal_edges += 1
                continue
            bias_key = self._bias_key(state, move) if edge.child is None else None
            # KataGo's forceNonTerminal: a pass that ends the game is searched on, not scored, from the root under
            # conservativePass and anywhere as a friendly pass (tested before the move, as KataGo does).
            searched_on = edge.child is None and move == PASS and isinstance(state, GameState) and (
                (node is self.root and self.config.conservative_pass and state.pass_ends_game_outright())
                or state.pass_is_friendly())
            state.play_unchecked(move)
            child = edge.child
            if child is None:
                child = edge.child = self._child_for(state, bias_key, len(path), searched_on)
                link(node, child, self._keep_parents)
                node.visited_mass += edge.prior  # (KataGo: the policy of every child made so far, in flight too)
            elif child.in_edges > 1:
                self._met = True
            if id(child) in on_path:
                edges.append(edge)
                self._count.cycle_stops += 1
                self._finish(state, path, edges, cut)
                return None
            # A visit without an edge visit goes on down: it is meant to add child visits beyond the edge's.
            if child.visits > edge.visits and exceed is not _CONTINUE and not child.terminal and not weightless:
                if exceed is _STOP or self._rng.random() >= self.config.leak_probability:
                    edges.append(edge)
                    self._count.stopped_early += 1
                    self._finish(state, path, edges, cut)
                    return None
                self._count.leaky_descents += 1
            child.virtual_loss += 1
            path.append(child)
            edges.append(edge)
            on_path.add(id(child))
            node = child

    def _bias_key(self, state: Any, move: int) -> tuple[Any, ...] | None:
        """The subtree value bias pattern of ``move`` about to be played on ``state`` (KataGo: the mover, the
        previous move, this move, the 5x5 shape around it and the ko ban), or None where the bias does not apply
        (a pass, the first move of a game, the bias off, or a toy game state)."""
        if (not self.config.subtree_value_bias_factor or move == PASS or not isinstance(state, GameState)
                or not state.moves):
            return None
        return (int(state.to_play), state.moves[-1][1], move, state.local_pattern(move))

    def _child_for(self, state: Any, bias_key: tuple[Any, ...] | None = None, depth: int = 0,
                   searched_on: bool = False) -> Node:
        """The node for the position just reached: looked up by graph hash first, else created (with its subtree
        value bias entry when ``bias_key`` is given).

        A finished game is scored exactly, unless ``searched_on`` (a game-ending pass the search goes on past,
        KataGo's forceNonTerminal): then the node is evaluated by the net like any other, and keyed apart from the
        scored node of the same position, as KataGo keys it."""
        forced = searched_on and state.is_over()
        if self.config.graph:
            key = int(state.graph_hash) ^ (_FORCE_NON_TERMINAL if forced else 0)
            found = self.table.get(key)
            if found is not None:
                self._count.transposition_hits += 1
                self._met = True
                depths = self._trans.hit_depths
                depths[depth] = depths.get(depth, 0) + 1
                return found
        else:
            key = self._key(state)
        node = Node(key, 1 if state.to_play == WHITE else -1)
        if state.is_over() and not forced:
            node.terminal = node.expanded = True
            node.own = node.q = self._valuation.terminal(float(state.score()), state.size)
        elif bias_key is not None:
            node.bias = self._bias_table.get(bias_key)
            if node.bias is None:
                node.bias = self._bias_table[bias_key] = BiasEntry(bias_key)
        self.table.add(node)
        self._count.nodes_created += 1
        return node

    def _finish(self, state: Any, path: list[Node], edges: list[Edge], cut: int = -1) -> None:
        """Back up a playout that needs no evaluation (the edges below ``cut``, see ``_Leaf``) and undo its moves on
        the scratch state."""
        _backup(path, edges, self._weighting, cut)
        refresh = self._refresh
        if refresh is not None:
            path = path[cut + 1:]
            refreshed = refresh(path, self._weighting)
            if refreshed:
                self._trans.refreshed += refreshed
                # A refreshed node may be a child of a path node updated before it (a transposition, or a cycle
                # under "ancestors"): go over the path once more so the root is always exact.
                for node in reversed(path):
                    node.recompute(self._weighting)
        for _ in edges:
            state.pop()
        return None

    def _unwind(self, state: Any, path: list[Node], edges: list[Edge]) -> None:
        for node in path:
            node.virtual_loss -= 1
        for _ in edges:
            state.pop()

    def _apply(self, leaves: list[_Leaf], evaluations: list[Evaluation]) -> None:
        """Expand each evaluated leaf, back its value up and return its scratch state to the root."""
        self._count.net_evals += len(leaves)
        self._count.eval_batches += 1
        for leaf, evaluation in zip(leaves, evaluations):
            node = leaf.path[-1]
            self._expand(node, leaf.state, evaluation)
            node.pending = False
            if evaluation.amaf is not None and self.config.rave_equivalence > 0:
                _add_amaf(leaf.path, leaf.edges, evaluation.amaf)
            self._finish(leaf.state, leaf.path, leaf.edges, leaf.cut)

    # ---------------------------------------------------------------------------------------------- values
    def _expand(self, node: Node, state: Any, evaluation: Evaluation) -> None:
        """Give a leaf its moves and priors (minus own true eyes) and its own value from the evaluation."""
        moves, priors = candidate_moves(evaluation.policy, state, self.config.forbid_eye_filling)
        node.set_moves(moves, priors)
        amaf = evaluation.amaf
        if (amaf is not None and amaf.prior_n is not None and amaf.prior_w is not None and node.amaf_n is None
                and self.config.rave_equivalence > 0):
            # Gelly and Silver's prior knowledge: the heuristics' imaginary playouts start the RAVE statistics.
            node.amaf_n, node.amaf_w = amaf.prior_n.copy(), amaf.prior_w.copy()
        sign = 1 if state.to_play == WHITE else -1
        own, weight = self._own_value(state, evaluation)
        node.set_value(own, weight, self.config.subtree_value_bias_factor)
        if self.config.keep_ownership and evaluation.ownership is not None:
            # float16 halves the memory of the graph's largest per-node array; averages need no more precision.
            node.ownership = (np.asarray(evaluation.ownership, dtype=np.float32) * sign).astype(np.float16)

    # ------------------------------------------------------------------------------------------- snapshots
    def snapshot(self) -> Snapshot:
        """The current analysis (root info and one entry per visited root move)."""
        with self._lock:
            return self._snapshot(0, 0.0)

    def _snapshot(self, playouts: int, elapsed: float) -> Snapshot:
        dame = self._root_ownership if self.config.fill_dame_before_pass and _territory(self._root_state) else None
        return build_snapshot(self.root, self._root_state, self.config, playouts, elapsed, self._permitted,
                              self._ending_utility if self._ending else None, dame)

    # ------------------------------------------------------------------------------------------ move choice
    def best_move(self, snapshot: Snapshot) -> int:
        """The move to play from ``snapshot``: order 0 (LCB/visits), or sampled when a temperature is configured."""
        cfg = self.config
        if not snapshot.moves:
            return self._policy_move()
        temperature = move_temperature(snapshot.move_number, cfg.temperature_early, cfg.temperature,
                                       cfg.temperature_halflife, self._root_state.size if self._root_state else 19)
        return choose_move(snapshot, temperature, self._rng)

    def _policy_move(self) -> int:
        """With no child visited (a one-visit search), the root's highest-prior move, as the raw policy plays;
        pass when the root was never expanded (a finished game)."""
        root = self.root
        if root is None or not len(root.moves) and not root.edges:
            return PASS
        candidates = [(e.prior, e.move) for e in root.edges if not e.illegal]
        candidates += list(zip(root.priors[root.next_index:].tolist(), root.moves[root.next_index:].tolist()))
        permitted = self._permitted
        candidates = [c for c in candidates if permitted is None or permitted(int(c[1]))]
        return int(max(candidates)[1]) if candidates else PASS

    def stats(self) -> dict[str, Any]:
        """Counters for ``miai-search_stats`` (one JSON object)."""
        c = self._count
        out: dict[str, Any] = {
            "visits": self.root.visits if self.root is not None else 0,
            "nodes": len(self.table) + (1 if self.root is not None else 0),
            "playouts": c.playouts, "net_evals": c.net_evals, "eval_batches": c.eval_batches,
            "transposition_hits": c.transposition_hits, "stopped_early": c.stopped_early,
            "leaky_descents": c.leaky_descents, "cycle_stops": c.cycle_stops, "terminal_visits": c.terminal_visits,
            "collisions": c.collisions, "illegal_edges": c.illegal_edges, "nodes_created": c.nodes_created,
            "nodes_freed": c.nodes_freed, "trees_reused": c.trees_reused, "revalued_nodes": c.revalued_nodes,
            "passing_hack_playouts": c.passing_hack_playouts, "last_run": dict(c.last_run),
        }
        out["transpositions"] = self._transposition_stats()
        if isinstance(self.evaluator, CachingEvaluator):
            out["cache_hits"] = self.evaluator.hits
        return out

    def _transposition_stats(self) -> dict[str, Any]:
        """The last run's transposition statistics and the graph's shared nodes now."""
        t = self._trans
        hits = sum(t.hit_depths.values())
        shared = [node.in_edges for node in self.table if node.in_edges > 1]
        return {
            "playouts": t.playouts, "met": t.met, "share": round(t.met / t.playouts, 4) if t.playouts else 0.0,
            "table_hits": hits,
            "hit_depth_mean": round(sum(d * n for d, n in t.hit_depths.items()) / hits, 2) if hits else 0.0,
            "hit_depth_max": max(t.hit_depths, default=0),
            "hit_depths": [t.hit_depths.get(d, 0) for d in range(max(t.hit_depths, default=-1) + 1)],
            "nodes_with_several_parents": len(shared), "most_parents": max(shared, default=0),
            "stale_update": self.config.stale_update, "refreshed_nodes": t.refreshed,
        }

    def graph_dump(self, move_text: Callable[[int], str] = str) -> dict[str, Any]:
        """The graph reachable from the root as plain data, moves written by ``move_text`` (``miai-graph_dump``;
        schema in docs/gtp.md)."""
        with self._lock:
            root = self.root
            if root is None:
                return {"root": None, "graph": self.config.graph, "nodes": []}
            nodes = []
            seen = {id(root)}
            queue = deque([root])
            while queue:  # breadth first from the root: nodes in order of first reach
                node = queue.popleft()
                nodes.append(_node_data(node, move_text))
                for child in node.children():
                    if id(child) not in seen:
                        seen.add(id(child))
                        queue.append(child)
            return {"root": _key_text(root.key), "graph": self.config.graph, "nodes": nodes}


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


def _backup(path: list[Node], edges: list[Edge], weighting: Weighting, cut: int = -1) -> None:
    """Add one visit to each edge taken below ``edges[cut]`` and recompute the nodes above it, bottom-up; release
    virtual loss on the whole path.

    ``edges[i]`` leads from ``path[i]``; the last edge may lead to a node outside ``path`` (stop rule or cycle),
    whose own statistics are then left unchanged. A playout that took ``edges[cut]`` without an edge visit (the
    passing hack) leaves that edge and every node above it as they were, as KataGo does."""
    for i in range(len(edges) - 1, cut, -1):
        edges[i].visits += 1
        path[i].recompute(weighting)
    for node in path:
        node.virtual_loss -= 1


def _add_amaf(path: list[Node], edges: list[Edge], amaf: Amaf) -> None:
    """Add a playout's all-moves-as-first statistics to every node of its path, deepest first: a node counts the
    points its side to move played first after it, in the tree (the path's own moves, which come first and so
    override the playout's) or in the playout; rewards from that side's view."""
    first = amaf.first.copy()
    white_wins = amaf.white_wins.copy()
    for i in range(len(path) - 1, -1, -1):
        node = path[i]
        row = 1 if node.sign > 0 else 0  # the side to move: 1 White, 0 Black
        if i < len(edges) and edges[i].move >= 0:
            point = edges[i].move
            first[:, point] = 0.0
            white_wins[:, point] = 0.0
            first[row, point] = amaf.playouts
            white_wins[row, point] = amaf.white_win_total
        if node.amaf_n is None or node.amaf_w is None:
            node.amaf_n = np.zeros(first.shape[1])
            node.amaf_w = np.zeros(first.shape[1])
        node.amaf_n += first[row]
        node.amaf_w += white_wins[row] if row == 1 else first[row] - white_wins[row]


def _key_text(key: int) -> str:
    """A node key as JSON text: the graph hash in hex (tree mode: a negative serial number)."""
    return f"{key:#x}" if key >= 0 else str(key)


def _node_data(node: Node, move_text: Callable[[int], str]) -> dict[str, Any]:
    """One node of ``Search.graph_dump``: its statistics (White's view) and its touched edges."""
    return {
        "key": _key_text(node.key), "to_play": "W" if node.sign > 0 else "B", "visits": node.visits,
        "weight": round(node.weight, 4), "utility": round(node.utility, 5), "winloss": round(node.winloss, 5),
        "lead": round(node.lead, 3), "net_utility": round(node.own.utility, 5), "terminal": node.terminal,
        "expanded": node.expanded, "parents": node.in_edges,
        "edges": [{"move": move_text(edge.move), "prior": round(edge.prior, 5), "visits": edge.visits,
                   "child": None if edge.child is None else _key_text(edge.child.key), "illegal": edge.illegal}
                  for edge in node.edges],
        "untouched_moves": len(node.moves) - node.next_index,
    }


def _move_filter(avoid: Collection[int], allow: Collection[int] | None) -> Callable[[int], bool] | None:
    """A predicate for permitted root moves, or None when everything is permitted."""
    if not avoid and allow is None:
        return None
    avoided = frozenset(avoid)
    allowed = None if allow is None else frozenset(allow)
    return lambda move: move not in avoided and (allowed is None or move in allowed)


def _without(permitted: Callable[[int], bool] | None, banned: frozenset[int]) -> Callable[[int], bool] | None:
    """``permitted`` with the moves of ``banned`` taken out."""
    if not banned:
        return permitted
    return lambda move: move not in banned and (permitted is None or permitted(move))


def symmetric_duplicates(size: int, to_play: int, symmetries: Sequence[int],
                         permitted: Callable[[int], bool] | None = None) -> frozenset[int]:
    """The points that are symmetric copies of a point kept for the search (``markDuplicateMoveLocs``,
    nninputs.cpp). The points are walked in KataGo's order, so that the kept ones are the first move in the upper
    right for Black and the lower left for White ("natural openings result in white on the left and black on the
    right"): for Black columns right to left, each top to bottom; for White columns left to right, each bottom to
    top. A point ``permitted`` refuses does not keep its copies out."""
    images = symmetric_points(size)
    black = to_play == int(Color.BLACK)
    columns = range(size - 1, -1, -1) if black else range(size)
    rows = range(size) if black else range(size - 1, -1, -1)
    duplicate: set[int] = set()
    for x in columns:
        for y in rows:
            point = y * size + x
            if point in duplicate or (permitted is not None and not permitted(point)):
                continue
            duplicate.update(images[s][point] for s in symmetries if images[s][point] != point)
    return frozenset(duplicate)


def _same_game(old: SearchState, new: SearchState) -> bool:
    """True when ``new`` can be the old root plus moves: same size, komi, rules, setup and move prefix."""
    if (old.size, old.komi, old.rules, old.handicap) != (new.size, new.komi, new.rules, new.handicap):
        return False
    if old.setup != new.setup:  # other setup stones: another game
        return False
    old_moves, new_moves = list(old.moves), list(new.moves)
    return len(new_moves) >= len(old_moves) and new_moves[:len(old_moves)] == old_moves


def _territory(state: Any) -> bool:
    return isinstance(state, GameState) and state.rules.scoring == Scoring.TERRITORY
