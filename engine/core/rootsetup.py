"""Root set-up and graph reuse: what the search keeps from one move to the next, and how a run's root is made ready
(KataGo's ``Search::makeMove`` and ``Search::beginSearch``).

Kept from move to move (a :class:`RootSetup`, one per search):

- the graph: its node table and its subtree value bias table. When the new root continues the old root's game by
  moves the graph holds, the node those moves reach becomes the root and what it cannot reach is swept, taking its
  share out of the bias entries (:meth:`RootSetup.move_to`, makeMove); otherwise the graph is cleared;
- the root node with its statistics, edges and children, and whether it has its root noise (never given twice);
- a copy of the root position, and the scratch states the playouts walk from it, moved on by the moves played
  rather than copied again;
- the last run's valuation (its dynamic score centre): a new root is expanded under it, before its own run's centre,
  which is read off the root's value, is known.

Made for each run (:meth:`RootSetup.begin`, beginSearch): the root's evaluation (a kept root evaluated again as a
root where the evaluator evaluates roots apart), the run's dynamic score centre and every value of the graph worked
out again against it, the root noise of a root that has none, the root moves' ending bonus, and the root's net
ownership where fillDameBeforePass applies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from miai.engine.core.config import SearchConfig
from miai.engine.core.ending import ending_bonus
from miai.engine.core.expansion import BiasKey, Expansion
from miai.engine.core.graph import BiasEntry, Node, NodeTable, Stats, Weighting, relink, revalue
from miai.engine.core.leaves import Valuation, candidate_moves
from miai.engine.core.searchstate import GoPosition, SearchPosition, SearchState
from miai.engine.core.searchstats import Counters
from miai.go.coords import Color
from miai.go.rules import KoRule, Scoring
from miai.nets.protocol import Evaluation, Evaluator, RootEvaluator, evaluate_root

__all__ = ["RootSetup", "RootFacts", "same_game"]

WHITE = Color.WHITE


@dataclass(frozen=True, slots=True)
class RootFacts:
    """What holds at a run's root for the whole run, fixed when the root is set up (:meth:`RootSetup.begin`); the
    run's playouts, its selection at the root and its snapshots read it."""

    size: int  # the board's side
    go: bool  # a Go game (miai.engine.core.searchstate.GoPosition): Go's own rules apply
    superko: bool  # superko can make a known edge illegal on another path
    valuation: Valuation  # node values under this run's dynamic score centre
    permitted: Callable[[int], bool] | None = None  # the root moves the run may search (None: all)
    ending: dict[int, float] = field(default_factory=dict)  # the root moves' ending bonus, White's points
    dame: np.ndarray | None = None  # the root's net ownership (mover's view) where fillDameBeforePass applies

    def ending_utility(self, move: int, stats: Stats) -> float:
        """The utility (White's view) a root child with statistics ``stats`` gains from ``move``'s ending bonus."""
        bonus = self.ending.get(move)
        if not bonus:
            return 0.0
        return self.valuation.score_utility_diff(stats.score_mean, stats.score_sq, bonus, self.size)


class RootSetup:
    """The search's graph and root as kept from one move to the next (see the module docstring).

    The search's config, evaluator, expansion and weighting are given to each call that needs them: a new config
    replaces them in the search, never here."""

    def __init__(self, config: SearchConfig, count: Counters, np_rng: np.random.Generator) -> None:
        self.table = NodeTable()  # the graph's nodes, the root excepted
        self.bias_table: dict[BiasKey, BiasEntry] = {}  # the graph's subtree value bias entries
        self.root: Node | None = None  # None until a run makes it, and after the graph is cleared
        self.state: SearchPosition | None = None  # a copy of the root position
        # Copies of the root position the playouts walk from (each back at the root between runs).
        self.scratch: list[SearchPosition] = []
        self.valuation = Valuation(config)  # the last run's (its dynamic score centre)
        self.superko = False  # the root's rules: superko can make a known edge illegal on another path
        self.go = False  # the root is a Go game (GoPosition): Go's own rules apply
        self.keep_parents = False  # parent links, only for search.stale_update other than "path"
        self._noised: Node | None = None  # the root that has its root noise
        self._count = count
        self._np_rng = np_rng  # root noise's source

    # ---------------------------------------------------------------------------------- the graph between moves
    def clear(self) -> None:
        """Forget the whole graph (the root position stays)."""
        self.table.clear()
        self.bias_table.clear()
        self.root = None
        self._noised = None

    def keep_parent_links(self, keep: bool) -> None:
        """Keep each node's parent list (stale updates over parents or ancestors) or drop them."""
        if keep != self.keep_parents and self.root is not None:
            relink(self.root, self.table, keep)  # parent lists appear (or go) with the option
        self.keep_parents = keep

    def move_to(self, state: SearchPosition, config: SearchConfig) -> None:
        """Make ``state`` the root (KataGo's makeMove): the graph is reused when ``state`` extends the previous root
        by moves that the graph contains (then unreachable nodes are swept), otherwise it is cleared."""
        kept = self._reuse(state, config) if config.reuse_tree else None
        if kept is None:
            self.clear()
        else:
            self._count.trees_reused += 1
        self.scratch = self._advance_scratch(state)
        self.state = state.copy()
        if self.root is not None:
            # An edge found illegal on some path (superko) may be legal from the real game's history.
            for edge in self.root.edges:
                if edge.illegal and state.is_legal(edge.move):
                    edge.illegal = False
        self.superko = state.rules.ko is not KoRule.SIMPLE
        self.go = isinstance(state, GoPosition)

    def scratch_states(self, slots: int) -> list[SearchPosition]:
        """The scratch states, at least ``slots`` of them (copies of the root position are added as needed)."""
        state = self._root_state()
        while len(self.scratch) < slots:
            self.scratch.append(state.copy())
        return self.scratch

    def drop_scratch(self, states: list[SearchPosition]) -> None:
        """Forget ``states`` (scratch states a batch given up may still be read from): fresh copies replace them."""
        gone = {id(state) for state in states}
        self.scratch = [state for state in self.scratch if id(state) not in gone]

    def territory(self) -> bool:
        """Whether the root is a Go game scored by territory (KataGo's fillDameBeforePass applies)."""
        return self.go and self._root_state().rules.scoring == Scoring.TERRITORY

    def _root_state(self) -> SearchPosition:
        """The root position (set by :meth:`move_to`, which every run's root set-up follows)."""
        state = self.state
        if state is None:
            raise RuntimeError("the search has no root position: set_root first")
        return state

    def _advance_scratch(self, state: SearchPosition) -> list[SearchPosition]:
        """The scratch states moved on to ``state`` by pushing the new moves (much cheaper than copying a long
        game), or none when ``state`` does not extend the old root (they are then copied afresh for the run)."""
        old = self.state
        if old is None or not self.scratch or not same_game(old, state):
            return []
        extra = list(state.moves)[len(old.moves):]
        try:
            for scratch in self.scratch:
                for color, move in extra:
                    scratch.push(move, color)
        except (ValueError, TypeError):
            return []  # e.g. a toy state without colours: copy instead
        return self.scratch

    def _reuse(self, state: SearchState, config: SearchConfig) -> Node | None:
        """The node of the graph that ``state`` reaches from the old root, made the root, with the graph swept to
        what it reaches; None when there is none (or KataGo would not reuse it)."""
        old = self.state
        if old is None or self.root is None or not same_game(old, state):
            return None
        if config.conservative_pass and isinstance(state, GoPosition) and state.pass_ends_game_outright():
            # As KataGo: the graph scored this root's game-ending pass deeper down; searched on from the root now.
            return None
        node: Node | None = self.root
        for color, move in list(state.moves)[len(old.moves):]:
            if node is None or node.sign != (1 if color == WHITE else -1):
                return None
            edge = node.edge_for(move)
            node = edge.child if edge is not None else None
        if node is None or node.terminal or (config.graph and node.key != state.graph_hash):
            return None
        if node is not self.root:
            self.table.discard(node.key)  # the root lives outside the table
            self.root = node
            # KataGo's makeMove makes the new root a copy without its subtree value bias entry and deletes the node
            # it copied, which takes its share out of the entry as for any node freed.
            node.release_bias(config.subtree_value_bias_free_prop)
            freed = self.table.sweep(node)
            relink(node, self.table, self.keep_parents)
            for gone in freed:
                gone.release_bias(config.subtree_value_bias_free_prop)
            # Like KataGo's clearUnusedSynchronous: keep the entries some remaining node uses.
            kept = {n.bias.key: n.bias for n in (node, *self.table) if n.bias is not None}
            self.bias_table.clear()
            self.bias_table.update(kept)
            self._count.nodes_freed += len(freed)
        return node

    # ------------------------------------------------------------------------------------------ a run's root
    def begin(self, config: SearchConfig, evaluator: Evaluator, expansion: Expansion, weighting: Weighting,
              permitted: Callable[[int], bool] | None) -> tuple[Node, RootFacts]:
        """Make the root ready for a run (KataGo's beginSearch): create and evaluate it if needed, fix the run's
        dynamic score centre (:attr:`valuation` from then on) and revalue the graph under it, add root noise once.
        Returns the root and what holds there for the run, whose root filter is ``permitted``."""
        state = self._root_state()
        if self.root is None:
            self.root = Node(expansion.key(state), 1 if state.to_play == WHITE else -1)
            self._count.nodes_created += 1
        root = self.root
        evaluation = reinstall = None
        if not root.expanded:
            evaluation = self._evaluate(evaluator, config)
            expansion.expand(root, state, evaluation, self.valuation)  # (the last run's: the centre is not known)
            root.recompute(weighting)
        elif isinstance(evaluator, RootEvaluator):
            # A root kept from the last search was evaluated as an inner node: KataGo evaluates it again as a root
            # (maybeRecomputeExistingNNOutput), for the root's own policy optimism; installed below.
            evaluation = reinstall = self._evaluate(evaluator, config)
        ending, ownership = self._ending_bonus(config, evaluator, evaluation)
        # KataGo centres the dynamic score utility on the root's expected score, pulled a little towards 0.
        expected = root.score_mean
        centre = expected * (1.0 - config.dynamic_score_center_zero_weight)
        # ... but never more than one dynamic scale (times the board's side) away from the expected score.
        cap = config.dynamic_score_center_scale * state.size
        centre = min(expected + cap, max(expected - cap, centre))
        self.valuation = valuation = Valuation(config, centre)
        # Every value already in the graph (the root's own one included, made before the centre was known) is
        # worked out again against the new centre, as KataGo does when a search begins.
        if config.dynamic_score_utility_factor or config.subtree_value_bias_factor:
            size = state.size
            self._count.revalued_nodes += revalue(root, lambda own: valuation.refreshed(own, size), weighting)
        if reinstall is not None:
            self._reinstall(root, config, reinstall)
        if config.root_noise and self._noised is not root:
            self._add_noise(root, config)
            self._noised = root
        dame = ownership if config.fill_dame_before_pass and self.territory() else None
        return root, RootFacts(state.size, self.go, self.superko, valuation, permitted, ending, dame)

    def _reinstall(self, root: Node, config: SearchConfig, evaluation: Evaluation) -> None:
        """Give a kept root its evaluation as a root, after the graph was revalued: KataGo recomputes its stats
        (beginSearch) with the evaluation it had as an inner node and installs the new one at the first playout,
        priors and own value alike, which the root's statistics take in from the first backup on."""
        state = self._root_state()
        moves, priors = candidate_moves(evaluation.policy, state, config.forbid_eye_filling)
        root.replace_priors(dict(zip(moves.tolist(), priors.tolist())))
        root.own, root.own_weight = Expansion.own_value(state, evaluation, self.valuation)
        self._noised = None  # (the new priors need their noise again)

    def _evaluate(self, evaluator: Evaluator, config: SearchConfig) -> Evaluation:
        self._count.net_evals += 1
        self._count.eval_batches += 1
        return evaluate_root(evaluator, self._root_state(), config.conservative_pass)

    def _ending_bonus(self, config: SearchConfig, evaluator: Evaluator,
                      evaluation: Evaluation | None) -> tuple[dict[int, float], np.ndarray | None]:
        """KataGo's root ending bonus of each root move (engine/core/ending.py) and the root's own net ownership it is read
        from (the root evaluated again if a kept root has no evaluation at hand, as KataGo does for it), which the
        dame rule of the move choice reads too."""
        state = self._root_state()
        wanted = config.root_ending_bonus_points or (config.fill_dame_before_pass and self.territory())
        if not wanted or not isinstance(state, GoPosition):
            return {}, None
        if evaluation is None:
            evaluation = self._evaluate(evaluator, config)
        if evaluation.ownership is None:  # (an evaluator without ownership: asking again would not help)
            return {}, None
        ownership = np.asarray(evaluation.ownership, dtype=np.float64)
        return ending_bonus(state, ownership, config.root_ending_bonus_points), ownership

    def _add_noise(self, root: Node, config: SearchConfig) -> None:
        """Dirichlet noise mixed into the root's priors (KataGo's rootNoiseEnabled)."""
        moves = list(root.all_priors())
        if not moves:
            return
        alpha = config.root_noise_concentration / len(moves)
        noise = self._np_rng.dirichlet([alpha] * len(moves))
        w = config.root_noise_weight
        root.replace_priors({m: (1 - w) * p + w * float(x) for (m, p), x in zip(moves, noise)})


def same_game(old: SearchState, new: SearchState) -> bool:
    """True when ``new`` can be the old root plus moves: same size, komi, rules, setup and move prefix."""
    if (old.size, old.komi, old.rules, old.handicap) != (new.size, new.komi, new.rules, new.handicap):
        return False
    if old.setup != new.setup:  # other setup stones: another game
        return False
    old_moves, new_moves = list(old.moves), list(new.moves)
    return len(new_moves) >= len(old_moves) and new_moves[:len(old_moves)] == old_moves
