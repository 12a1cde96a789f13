"""Expansion: how the graph grows. The node a playout reaches (found by graph hash, or made; a finished game is
scored on the spot), and what a leaf becomes once the evaluator has answered: its candidate moves with their
priors, its own value and weight (miai.engine.core.leaves) and its ownership.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

import numpy as np

from miai.engine.core.config import SearchConfig
from miai.engine.core.graph import BiasEntry, Node, NodeTable, Stats
from miai.engine.core.leaves import Valuation, candidate_moves
from miai.engine.core.searchstate import GoPosition, SearchState
from miai.go.coords import PASS, Color

if TYPE_CHECKING:
    from miai.nets.protocol import Evaluation

__all__ = ["Expansion", "BiasKey"]

WHITE = Color.WHITE  # a module global: read per node, where a ``Color.WHITE`` lookup costs four times more
# Keys of game-ending passes searched on (KataGo's forceNonTerminal): apart from the scored node of the same position.
_FORCE_NON_TERMINAL: Final = 0x5F0C3E2B_9A6D41F7_C2E8B05D_7134A9E6

# A subtree value bias pattern: the mover, the previous move, this move, the local shape and ko ban around it.
BiasKey = tuple[int, int, int, tuple[int, ...]]


class Expansion:
    """Makes and evaluates the search's nodes under one config (a new config makes a new Expansion over the same
    graph).

    ``table`` holds the graph's nodes; ``bias_table`` the subtree value bias entries of the whole graph (KataGo's
    SubtreeValueBiasTable), which the graph's owner keeps and prunes when the root moves on
    (miai.engine.core.rootsetup). The :class:`~miai.engine.core.leaves.Valuation` that turns evaluations and final scores into
    node values is the run's (its dynamic score centre): each call is given it."""

    def __init__(self, config: SearchConfig, table: NodeTable, bias_table: dict[BiasKey, BiasEntry]) -> None:
        self.config = config
        self.table = table
        self.bias_table = bias_table

    def key(self, state: SearchState) -> int:
        """The table key of ``state``'s node: its graph hash, or in tree mode a fresh key from the table."""
        if self.config.graph:
            return int(state.graph_hash)
        return self.table.fresh_key()  # tree mode: every node is new

    def bias_key(self, state: SearchState, move: int, go_game: bool) -> BiasKey | None:
        """The subtree value bias pattern of ``move`` about to be played on ``state`` (KataGo: the mover, the
        previous move, this move, the 5x5 shape around it and the ko ban), or None where the bias does not apply
        (a pass, the first move of a game, the bias off, or a game other than Go: ``go_game`` false)."""
        if not self.config.subtree_value_bias_factor or move == PASS or not go_game or not state.moves:
            return None
        go = cast(GoPosition, state)  # (go_game: the root is one, and so is every scratch copy of it)
        return (int(go.to_play), go.moves[-1][1], move, go.local_pattern(move))

    def child_for(self, state: SearchState, bias_key: BiasKey | None, searched_on: bool,
                  valuation: Valuation) -> tuple[Node, bool]:
        """The node for the position just reached and whether the table had it: looked up by graph hash first,
        else made (with its subtree value bias entry when ``bias_key`` is given) and added; a finished game's value
        under ``valuation``.

        A finished game is scored exactly, unless ``searched_on`` (a game-ending pass the search goes on past,
        KataGo's forceNonTerminal): then the node is evaluated by the net like any other, and keyed apart from the
        scored node of the same position, as KataGo keys it."""
        forced = searched_on and state.is_over()
        if self.config.graph:
            key = int(state.graph_hash) ^ (_FORCE_NON_TERMINAL if forced else 0)
            found = self.table.get(key)
            if found is not None:
                return found, True
        else:
            key = self.key(state)
        node = Node(key, 1 if state.to_play == WHITE else -1)
        if state.is_over() and not forced:
            node.terminal = node.expanded = True
            node.own = node.q = valuation.terminal(float(state.score()), state.size)
        elif bias_key is not None:
            node.bias = self.bias_table.get(bias_key)
            if node.bias is None:
                node.bias = self.bias_table[bias_key] = BiasEntry(bias_key)
        self.table.add(node)
        return node, False

    def expand(self, node: Node, state: SearchState, evaluation: Evaluation, valuation: Valuation) -> None:
        """Give a leaf its moves and priors (minus own true eyes) and its own value from the evaluation under
        ``valuation``."""
        config = self.config
        moves, priors = candidate_moves(evaluation.policy, state, config.forbid_eye_filling)
        node.set_moves(moves, priors)
        amaf = evaluation.amaf
        if (amaf is not None and amaf.prior_n is not None and amaf.prior_w is not None and node.amaf_n is None
                and config.rave_equivalence > 0):
            # Gelly and Silver's prior knowledge: the heuristics' imaginary playouts start the RAVE statistics.
            node.amaf_n, node.amaf_w = amaf.prior_n.copy(), amaf.prior_w.copy()
        sign = 1 if state.to_play == WHITE else -1
        own, weight = self.own_value(state, evaluation, valuation)
        node.set_value(own, weight, config.subtree_value_bias_factor)
        if config.keep_ownership and evaluation.ownership is not None:
            # float16 halves the memory of the graph's largest per-node array; averages need no more precision.
            node.ownership = (np.asarray(evaluation.ownership, dtype=np.float32) * sign).astype(np.float16)

    @staticmethod
    def own_value(state: SearchState, evaluation: Evaluation, valuation: Valuation) -> tuple[Stats, float]:
        """A node's own value from its evaluation under ``valuation`` and the weight it carries
        (uncertainty-weighted playouts)."""
        sign = 1 if state.to_play == WHITE else -1
        own = valuation.evaluated(evaluation, sign, state.size)
        return own, valuation.weight(evaluation, own.score_mean, state.size)
