"""Child selection: the edge a playout takes at a node, by PUCT (KataGo's) or, for comparison, UCB1 / UCB1-TUNED.

The one home of every selection rule the search uses: :class:`Selector` is what the search calls at each node, and
the formulas below are the ones it computes. Notation, shared by every formula here:

- ``W``: a node's total child weight, the sum of :func:`~miai.engine.core.graph.edge_weights` over its edges (with plain
  weights, its edge visits); ``w``: one child's weight through its edge.
- ``P``, ``p``: the UCB rules' parent and edge visit counts (in-flight playouts counted as visits).
- ``r``: the mean reward of an edge in ``[0, 1]``, from the view of the player choosing at the parent (1 = that
  player wins): :func:`ucb_reward` maps a win-minus-loss value in ``[-1, 1]`` to it.
- ``q``: for PUCT, the child's utility from the chooser's view (the search's own utility scale).

Formulas:

- PUCT (AlphaGo Zero; KataGo's selectBestChildToDescend): ``q + scale * prior / (1 + w)`` (:func:`puct_score`), with
  ``scale = c(W) * sqrt(W + 0.01) * stdev_factor`` (:func:`exploration_scale`), ``c(W) = c_puct + c_puct_log *
  ln((W + c_puct_base) / c_puct_base)`` and KataGo's utility-stdev factor (:func:`utility_stdev_factor`). Unvisited
  moves all share the first-play value (:meth:`Selector.first_play_value`), so the best untouched move is the
  first one in prior order.
- UCB1 (Auer, Cesa-Bianchi and Fischer 2002; UCT, Kocsis and Szepesvari 2006): ``r + c * sqrt(ln P / p)``.
- UCB1-TUNED (same paper; MoGo used it for Go): ``r + c * sqrt((ln P / p) * min(1/4, V))`` with the variance bound
  ``V = s2 - r^2 + sqrt(2 ln P / p)``, where ``s2`` is the mean squared reward (``s2 = r`` for 0/1 rewards).
- RAVE (Gelly and Silver 2007) blends a move's all-moves-as-first value into UCB's reward (:meth:`Selector._rave`).

UCB1 and UCB1-TUNED cannot score an edge never tried (``p = 0``): untouched moves are taken first, in random order
(:func:`pick_untried`), as classic Monte-Carlo Go programs did.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Protocol

import numpy as np

from miai.engine.core.config import SearchConfig
from miai.engine.core.graph import Edge, Node, Stats
from miai.go.coords import PASS

__all__ = [
    "RunAtRoot", "Selector", "SelectionError", "SelectionRule", "exploration_scale", "pick_untried",
    "puct_exploration", "puct_score", "puct_weight_for", "passing_hack_edge", "ucb_reward", "ucb_scores",
    "utility_stdev_factor",
]

# UCB1-TUNED's constants (Auer et al.): the largest variance of a reward in [0, 1], and the constant inside the
# variance's own confidence term.
TUNED_VARIANCE_CAP = 0.25
TUNED_C_VAR = 2.0


class SelectionError(ValueError):
    """A selection rule name is invalid, or the statistics handed in are inconsistent."""


class SelectionRule(str, Enum):
    """Which formula chooses the edge to descend (config key ``search.selection``)."""

    PUCT = "puct"
    UCB1 = "ucb1"
    UCB1_TUNED = "ucb1-tuned"

    @classmethod
    def parse(cls, text: str) -> SelectionRule:
        """Parse a config value: ``puct``, ``ucb1`` or ``ucb1-tuned`` (case-insensitive, ``_`` accepted for ``-``).

        Raises:
            SelectionError: for any other text.
        """
        key = text.strip().lower().replace("_", "-")
        for rule in cls:
            if rule.value == key:
                return rule
        names = ", ".join(rule.value for rule in cls)
        raise SelectionError(f"unknown selection rule {text!r}; expected one of {names}")


# ------------------------------------------------------------------------------------------------------- PUCT
def puct_exploration(total_weight: float, c_puct: float = 1.0, c_log: float = 0.45, base: float = 500.0) -> float:
    """KataGo's exploration constant: ``c_puct + c_log * ln((total_weight + base) / base)``."""
    return c_puct + c_log * math.log((total_weight + base) / base)


def utility_stdev_factor(weight: float, utility: float, utility_sq: float, prior: float, prior_weight: float,
                         scale: float) -> float:
    """KataGo's dynamic exploration factor (getFpuValueForChildrenAssumeVisited): the node's utility stdev, with
    ``prior_weight`` pseudo-visits of stdev ``prior``, relative to ``prior``, followed to the extent ``scale``:
    ``1 + scale * (stdev / prior - 1)``. ``weight`` is the node's total weight, ``utility`` its mean utility and
    ``utility_sq`` the mean of squared utilities."""
    if weight <= 1.0:
        stdev = prior
    else:
        u_sq = utility * utility
        mean_sq = max(utility_sq, u_sq)
        variance = ((u_sq + prior * prior) * prior_weight + mean_sq * weight) / (prior_weight + weight - 1.0)
        stdev = math.sqrt(max(0.0, variance - u_sq))
    return 1.0 + scale * (stdev / prior - 1.0)


def exploration_scale(total_weight: float, config: SearchConfig, node: Node) -> float:
    """The multiplier of ``prior / (1 + w)`` in PUCT at ``node`` whose children weigh ``total_weight`` in all:
    ``c(W) * sqrt(W + 0.01)`` times KataGo's utility-stdev factor of the node (1 when the config turns it off)."""
    factor = 1.0
    if config.cpuct_utility_stdev_scale and node.visits > 0:
        factor = utility_stdev_factor(node.weight, node.utility, node.utility_sq, config.cpuct_utility_stdev_prior,
                                      config.cpuct_utility_stdev_prior_weight, config.cpuct_utility_stdev_scale)
    return (puct_exploration(total_weight, config.cpuct_exploration, config.cpuct_exploration_log,
                             config.cpuct_exploration_base) * math.sqrt(total_weight + 0.01) * factor)


def puct_score(utility: float, prior: float, child_weight: float, scale: float) -> float:
    """PUCT: ``utility + scale * prior / (1 + child_weight)`` (``scale`` from :func:`exploration_scale`)."""
    return utility + scale * prior / (1.0 + child_weight)


def puct_weight_for(gap: float, prior: float, scale: float) -> float:
    """The child weight at which PUCT's bonus for ``prior`` is ``gap`` (:func:`puct_score` solved for the weight;
    at most 1e100, at least 0): what KataGo's hindsight play values give a move ``gap`` below the best."""
    if gap <= 0.0:
        return 1e100
    return max(0.0, scale * prior / gap - 1.0)


# -------------------------------------------------------------------------------------------------------- UCB
def ucb_reward(winloss: float) -> float:
    """A win-minus-loss value in ``[-1, 1]`` (the chooser's view) as a UCB reward in ``[0, 1]``."""
    return 0.5 * (1.0 + winloss)


def ucb_scores(rule: SelectionRule, parent_visits: float, edge_visits: Sequence[float] | np.ndarray,
               rewards: Sequence[float] | np.ndarray, c: float,
               rewards_sq: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """UCB1 or UCB1-TUNED scores of edges with ``edge_visits`` and mean ``rewards`` in ``[0, 1]`` under a parent
    with ``parent_visits``; ``c`` multiplies the bonus. ``rewards_sq`` (UCB1-TUNED only): mean squared rewards;
    omitted, 0/1 rewards are assumed (variance ``r - r^2``). Edges never tried score ``+inf``.

    Raises:
        SelectionError: for PUCT, or arrays of different lengths.
    """
    if rule is SelectionRule.PUCT:
        raise SelectionError("PUCT has no UCB score")
    visits = np.asarray(edge_visits, dtype=np.float64)
    value = np.asarray(rewards, dtype=np.float64)
    if value.shape != visits.shape:
        raise SelectionError(f"{value.shape[0]} rewards for {visits.shape[0]} edges")
    tried = visits > 0
    log_ratio = np.full(visits.shape, np.inf)
    log_ratio[tried] = math.log(max(parent_visits, 1.0)) / visits[tried]
    if rule is SelectionRule.UCB1:
        bonus = c * np.sqrt(log_ratio)
    else:
        second = value if rewards_sq is None else np.asarray(rewards_sq, dtype=np.float64)
        variance = np.maximum(0.0, second - value * value)  # (a rounding error could make it slightly negative)
        bound = np.minimum(TUNED_VARIANCE_CAP, variance + np.sqrt(TUNED_C_VAR * log_ratio))
        with np.errstate(invalid="ignore"):
            bonus = c * np.sqrt(log_ratio * bound)
    return np.where(tried, value + bonus, np.inf)


def pick_untried(count: int, rng: random.Random) -> int:
    """Which of ``count`` untried moves a UCB rule tries now: uniformly at random. Called once per playout, it tries
    them all in a uniformly random order, and spreads a batch of concurrent playouts over different moves."""
    return rng.randrange(count)


class RunAtRoot(Protocol):
    """What selection reads of the run at whose root it chooses (miai.engine.core.run.Run), named here so that this
    module does not import the run, whose snapshots import this module's PUCT."""

    @property
    def ending(self) -> Mapping[int, float]:
        """The root moves' ending bonus (engine/core/ending.py), White's points; empty when there is none."""
        ...

    def ending_utility(self, move: int, stats: Stats) -> float:
        """The utility (White's view) a root child with statistics ``stats`` gains from ``move``'s ending bonus."""
        ...


# ------------------------------------------------------------------------------------------------ the selector
class Selector:
    """The search's choice of edge at a node under one config (``choose``), sharing the search's random source.

    At the root, ``choose`` is given the run (miai.engine.core.run.Run): its root moves' ending bonus (engine/core/ending.py)
    adds to a root child's utility as the run says (:meth:`~miai.engine.core.run.Run.ending_utility`)."""

    def __init__(self, config: SearchConfig, rng: random.Random) -> None:
        self.config = config
        self.rule = SelectionRule.parse(config.selection)
        self.rng = rng
        # Virtual loss counts as the worst utility: a loss by a huge score.
        self.loss = -(config.win_loss_utility_factor + config.static_score_utility_factor
                      + config.dynamic_score_utility_factor)
        self.rave = config.rave_equivalence > 0
        self.ucb_c = config.ucb1_exploration if self.rule is SelectionRule.UCB1 else config.ucb1_tuned_exploration
        # The rule's method, resolved once: the search calls it at every node of every playout.
        self.choose: Callable[[Node, RunAtRoot | None], Edge | None] = (
            self.puct if self.rule is SelectionRule.PUCT else self._classic)
        """The edge to descend from the expanded ``node`` (an untouched move is touched first), or None when no
        move is playable there; the second argument is the run when ``node`` is its root, else None."""

    def _classic(self, node: Node, run: RunAtRoot | None = None) -> Edge | None:
        """UCB1 or UCB1-TUNED, with RAVE where the node has all-moves-as-first statistics."""
        if self.rave and node.amaf_n is not None:
            return self._rave(node)
        return self._ucb(node)

    # -------------------------------------------------------------------------------------------- PUCT
    def puct(self, node: Node, run: RunAtRoot | None = None) -> Edge | None:
        """PUCT over the node's edges by child weight, with virtual loss and first-play urgency, as KataGo's
        selectBestChildToDescend (cpp/search/searchexplorehelpers.cpp; formulas in docs/search.md). Only the
        touched edges and the best untouched move (the next in prior order) need scoring. ``run``: the run whose
        root ``node`` is (root noise, root FPU reduction and the ending bonus apply), or None below the root."""
        is_root = run is not None
        loss = self.loss
        sign = node.sign
        # The total of edge_weights, written out; the loop below works each child's weight out again, which is
        # cheaper than keeping them in a list (a root search of 19x19 spent a fifth less time here): at the root,
        # both loops run over every touched move once per playout.
        total = 0.0
        for edge in node.edges:
            child = edge.child
            if child is not None and child.visits > 0:
                total += child.weight * (edge.visits / child.visits)
        scale = exploration_scale(total, self.config, node)
        fpu = self.first_play_value(node, is_root)
        wide = self.config.wide_root_noise if is_root else 0.0
        ending = run.ending if run is not None else None
        best: Edge | None = None
        best_value = -math.inf
        for edge in node.edges:
            if edge.illegal:
                continue
            child = edge.child
            if child is None or child.visits <= 0:
                q, child_weight = fpu, 0.0
            elif (child_weight := child.weight * (edge.visits / child.visits)) <= 0.0:
                q = fpu
            else:
                q = sign * child.utility
                if ending and edge.move in ending:
                    assert run is not None
                    q += sign * run.ending_utility(edge.move, child.q)
            if child is not None and child.virtual_loss:
                vl = float(child.virtual_loss)
                q += (loss - q) * vl / (vl + max(0.25, child_weight))
                child_weight += vl
            prior = edge.prior
            if wide:
                prior, q = self.wide_root_noise(prior, q, wide)
            value = q + scale * prior / (1.0 + child_weight)  # puct_score, written out: this loop is the search's hottest
            if value > best_value:
                best_value = value
                best = edge
        i = node.next_index
        if i < len(node.moves):
            prior, q = float(node.priors[i]), fpu
            if wide:  # (the best untouched move stands for all of them: the others have smaller flattened priors)
                prior, q = self.wide_root_noise(prior, q, wide)
            if q + scale * prior > best_value:  # (puct_score with weight 0)
                return node.touch_next()
        return best

    def first_play_value(self, node: Node, is_root: bool) -> float:
        """First-play value of the node's unvisited moves, from the side to move's view (KataGo's
        getFpuValueForChildrenAssumeVisited): the parent's value, blended with its own net utility while little
        policy mass has been visited, minus a reduction growing with the visited mass."""
        cfg = self.config
        mass = node.visited_mass
        parent = node.utility
        if cfg.fpu_parent_weight_by_visited_policy:
            blend = min(1.0, mass ** cfg.fpu_parent_weight_by_visited_policy_pow)
            parent = blend * parent + (1.0 - blend) * node.own.utility
        reduction = cfg.root_fpu_reduction if is_root else cfg.fpu_reduction
        fpu = node.sign * parent - reduction * math.sqrt(mass)
        return fpu + (self.loss - fpu) * cfg.fpu_loss_prop

    def wide_root_noise(self, prior: float, utility: float, noise: float) -> tuple[float, float]:
        """KataGo's wideRootNoise at the root (maybeApplyWideRootNoise): a flatter prior, and for half the moves
        a random utility bonus of ``noise * |N(0, 1)|``, so that analysis looks at more moves."""
        prior = prior ** (1.0 / (4.0 * noise + 1.0))
        if self.rng.random() < 0.5:
            utility += noise * abs(self.rng.gauss(0.0, 1.0))
        return prior, utility

    # --------------------------------------------------------------------------------------------- UCB
    def _touch_untried(self, node: Node) -> Edge:
        """Touch a random untouched move (:func:`pick_untried`), out of prior order."""
        i = node.next_index + pick_untried(len(node.moves) - node.next_index, self.rng)
        return _touch_at(node, i)

    def _ucb(self, node: Node) -> Edge | None:
        """UCB1 / UCB1-TUNED: a random untried move first, then the best bound over edge visits, with rewards from
        the winloss Q of the side to move (in-flight playouts count as losses)."""
        if node.has_untouched():
            return self._touch_untried(node)
        edges = [e for e in node.edges if not e.illegal and e.child is not None]
        if not edges:
            return None
        visits, rewards = [], []
        for edge in edges:
            child = edge.child
            assert child is not None
            n = edge.visits + child.virtual_loss
            reward = ucb_reward(node.sign * child.winloss) if child.visits else 0.0
            visits.append(n)
            rewards.append(reward * edge.visits / n if n else 0.0)
        parent = max(1, sum(visits))
        # Rewards are treated as win/loss outcomes, so UCB1-TUNED's variance estimate is r - r^2 (as in the formula).
        return edges[int(np.argmax(ucb_scores(self.rule, parent, visits, rewards, self.ucb_c)))]

    def _rave(self, node: Node) -> Edge | None:
        """UCB with RAVE (Gelly & Silver 2007): each move's value is ``(1 - beta) r + beta r_amaf`` with
        ``beta = sqrt(k / (3 n + k))``, plus ``rave_exploration * sqrt(ln P / (n + 1))``; untried moves (n = 0) are
        judged by their AMAF value alone (1 = try first while they have none), pass by its own value alone (tried
        once first: without it, a side that never tries passing fills its own territory at the end)."""
        assert node.amaf_n is not None and node.amaf_w is not None
        cfg = self.config
        edges = [e for e in node.edges if not e.illegal and e.child is not None]
        untried = node.moves[node.next_index:].astype(np.int64)
        moves = np.concatenate([np.array([e.move for e in edges], dtype=np.int64), untried])
        if not len(moves):
            return None
        visits = np.zeros(len(moves))
        rewards = np.zeros(len(moves))
        for i, edge in enumerate(edges):
            child = edge.child
            assert child is not None
            n = edge.visits + child.virtual_loss
            visits[i] = n
            if n and child.visits:  # in-flight playouts count as losses
                rewards[i] = ucb_reward(node.sign * child.winloss) * edge.visits / n
        board = moves >= 0
        point = np.where(board, moves, 0)
        amaf_n = np.where(board, node.amaf_n[point], 0.0)
        amaf_r = np.where(amaf_n > 0, node.amaf_w[point] / np.maximum(amaf_n, 1e-9), 1.0)
        k = cfg.rave_equivalence
        beta = np.where(board, np.sqrt(k / (3.0 * visits + k)), 0.0)
        scores = (1.0 - beta) * rewards + beta * amaf_r
        scores[~board & (visits == 0)] = 1.0  # pass has no AMAF value: tried once like any untried move, then its own
        if cfg.rave_exploration > 0:
            parent = max(1.0, float(visits.sum()))
            scores = scores + cfg.rave_exploration * np.sqrt(math.log(parent) / (visits + 1.0))
        best = int(np.argmax(scores))
        if best < len(edges):
            return edges[best]
        return _touch_at(node, node.next_index + best - len(edges))


def _touch_at(node: Node, j: int) -> Edge:
    """Touch the untouched move at index ``j`` of ``node.moves``: swapped to the front of the untouched ones."""
    i = node.next_index
    node.moves[[i, j]] = node.moves[[j, i]]
    node.priors[[i, j]] = node.priors[[j, i]]
    return node.touch_next()


# ------------------------------------------------------------------------------------------- passing hacks
def passing_hack_edge(node: Node, pass_ends_game: bool, chosen: Edge) -> Edge | None:
    """KataGo's enableMorePassingHacks (selectBestChildToDescend, searchexplorehelpers.cpp): where a pass would end
    the game and the node's edges have at least two visits, a search that has made children for other moves but
    not for pass tries pass once, and one that has made a child only for pass tries the best new move once, so that
    both ways of ending (or not ending) the game are looked at. ``pass_ends_game``: whether a pass at the node would
    end the game (the position's ``pass_ends_game()``). Returns the edge to take instead of ``chosen`` (without an
    edge visit), or None."""
    if not pass_ends_game or sum(e.visits for e in node.edges) < 2:
        return None
    made = [e for e in node.edges if e.child is not None]
    has_pass = any(e.move == PASS for e in made)
    if not has_pass and chosen.move != PASS:
        return node.edge_for(PASS) or node.touch_move(PASS)
    if has_pass and len(made) == 1 and chosen.move == PASS:
        return _best_new_move(node)
    return None


def _best_new_move(node: Node) -> Edge | None:
    """The legal non-pass move of highest prior without a child yet (touched if need be), or None."""
    waiting = [e for e in node.edges if e.child is None and not e.illegal and e.move != PASS]
    best = max(waiting, key=lambda e: e.prior, default=None)
    i = node.next_index
    if i < len(node.moves) and (best is None or float(node.priors[i]) > best.prior):
        return node.touch_move(int(node.moves[i]))
    return best
