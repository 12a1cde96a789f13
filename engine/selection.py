"""Child-selection formulas for the search: PUCT, UCB1 and UCB1-TUNED.

Pure functions, no search state: the search (graph or tree) hands in the statistics of one node's edges and gets
back the index of the edge to descend. Notation, shared by every formula here:

- ``P``: the parent's visit count, i.e. the sum of the visits of its edges (plus its own evaluation for PUCT).
- ``p``: the **edge** visits of the child considered. In a graph search a child reached by several parents has more
  visits than any one edge; the formulas use the edge count, as KataGo's graph search does for PUCT.
- ``r``: the mean reward of the edge in ``[0, 1]``, from the point of view of the player choosing at the parent
  (1 = that player wins). :func:`reward_from_value` maps a value in ``[-1, 1]`` (win minus loss) to it.
- ``q``: for PUCT, the edge's value in whatever utility scale the search uses (typically ``[-1, 1]``).

Formulas:

- UCB1 (Auer, Cesa-Bianchi and Fischer 2002; UCT, Kocsis and Szepesvari 2006): ``r + c * sqrt(ln P / p)``.
  The textbook constant is ``c = sqrt(2)``.
- UCB1-TUNED (same paper; MoGo used it for Go): ``r + c * sqrt((ln P / p) * min(cap, V))`` with the variance bound
  ``V = s2 - r^2 + sqrt(c_var * ln P / p)``, where ``s2`` is the mean squared reward (``s2 = r`` for 0/1 rewards,
  which gives the familiar ``r - r^2``). The paper's constants are ``c = 1``, ``cap = 1/4``, ``c_var = 2``.
- PUCT (AlphaGo Zero; KataGo's variant of the constant): ``q + c(P) * prior * sqrt(P) / (1 + p)`` with
  ``c(P) = c_puct + c_puct_log * ln((P + c_puct_base) / c_puct_base)``.

UCB1 and UCB1-TUNED cannot score an edge that was never tried (``p = 0``): those edges are taken first, in random
order (:func:`pick_untried`), as classic Monte-Carlo Go programs did. PUCT scores untried edges through the prior
and the search's first-play-urgency value, so it needs no such rule.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

__all__ = [
    "SelectionConfig",
    "SelectionError",
    "SelectionRule",
    "pick_untried",
    "puct_exploration",
    "puct_score",
    "utility_stdev_factor",
    "reward_from_value",
    "select_edge",
    "selection_scores",
    "ucb1_score",
    "ucb1_tuned_score",
    "untried_order",
]


class SelectionError(ValueError):
    """A selection rule name or constant is invalid, or the statistics handed in are inconsistent."""


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

    @property
    def tries_untried_first(self) -> bool:
        """True for the UCB rules, which must visit every edge once before their score is defined."""
        return self is not SelectionRule.PUCT


@dataclass(frozen=True)
class SelectionConfig:
    """The selection rule and its exploration constants (the ``search.selection*`` config keys)."""

    rule: SelectionRule = SelectionRule.PUCT
    # PUCT: exploration constant and its slow logarithmic growth with the parent's visits (KataGo's defaults).
    c_puct: float = 1.0
    c_puct_log: float = 0.45
    c_puct_base: float = 500.0
    # UCB1: the multiplier of sqrt(ln P / p); sqrt(2) is the textbook value for rewards in [0, 1].
    c_ucb1: float = math.sqrt(2.0)
    # UCB1-TUNED: multiplier of the whole bonus, cap on the variance bound (1/4 is the largest variance of a reward
    # in [0, 1]), and the constant inside the variance's own confidence term.
    c_tuned: float = 1.0
    tuned_variance_cap: float = 0.25
    tuned_c_var: float = 2.0

    def __post_init__(self) -> None:
        if isinstance(self.rule, str) and not isinstance(self.rule, SelectionRule):
            object.__setattr__(self, "rule", SelectionRule.parse(self.rule))
        for name in ("c_puct", "c_puct_log", "c_ucb1", "c_tuned", "tuned_variance_cap", "tuned_c_var"):
            if not getattr(self, name) >= 0.0:
                raise SelectionError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.c_puct_base > 0.0:
            raise SelectionError(f"c_puct_base must be > 0, got {self.c_puct_base}")


def reward_from_value(value: float) -> float:
    """Map a value in ``[-1, 1]`` (win minus loss, from the chooser's view) to a UCB reward in ``[0, 1]``."""
    return 0.5 * (value + 1.0)


def ucb1_score(reward: float, edge_visits: int, parent_visits: int, c: float = math.sqrt(2.0)) -> float:
    """UCB1: ``reward + c * sqrt(ln(parent_visits) / edge_visits)``.

    Raises:
        SelectionError: if ``edge_visits < 1`` (untried edges have no score; see :func:`pick_untried`) or
            ``parent_visits < edge_visits``.
    """
    _check_counts(edge_visits, parent_visits)
    return reward + c * math.sqrt(math.log(parent_visits) / edge_visits)


def ucb1_tuned_score(
    reward: float,
    edge_visits: int,
    parent_visits: int,
    *,
    reward_sq: float | None = None,
    c: float = 1.0,
    variance_cap: float = 0.25,
    c_var: float = 2.0,
) -> float:
    """UCB1-TUNED: ``reward + c * sqrt((ln P / p) * min(variance_cap, V))``.

    ``V = reward_sq - reward**2 + sqrt(c_var * ln P / p)`` bounds the reward's variance; ``reward_sq`` is the mean of
    the squared rewards and defaults to ``reward`` (exact for 0/1 rewards: the variance is then ``r - r^2``).

    Raises:
        SelectionError: if ``edge_visits < 1`` or ``parent_visits < edge_visits``.
    """
    _check_counts(edge_visits, parent_visits)
    second_moment = reward if reward_sq is None else reward_sq
    log_ratio = math.log(parent_visits) / edge_visits
    # max(0, ...) guards against a rounding error making the empirical variance slightly negative.
    variance = max(0.0, second_moment - reward * reward)
    bound = variance + math.sqrt(c_var * log_ratio)
    return reward + c * math.sqrt(log_ratio * min(variance_cap, bound))


def puct_exploration(parent_visits: float, c_puct: float = 1.0, c_log: float = 0.45, base: float = 500.0) -> float:
    """KataGo's exploration constant: ``c_puct + c_log * ln((parent_visits + base) / base)``."""
    return c_puct + c_log * math.log((parent_visits + base) / base)


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


def puct_score(q: float, prior: float, edge_visits: float, parent_visits: float, c: float) -> float:
    """PUCT: ``q + c * prior * sqrt(parent_visits) / (1 + edge_visits)``; ``c`` from :func:`puct_exploration`."""
    return q + c * prior * math.sqrt(parent_visits) / (1.0 + edge_visits)


def untried_order(count: int, rng: random.Random) -> list[int]:
    """The order in which a UCB search tries ``count`` fresh edges: a uniformly random permutation of their indices.

    Equivalent to calling :func:`pick_untried` once per playout; useful to a search that prefers to fix the order
    when it expands the node.
    """
    order = list(range(count))
    rng.shuffle(order)
    return order


def pick_untried(edge_visits: Sequence[float] | np.ndarray, rng: random.Random) -> int | None:
    """Index of a uniformly random edge with zero visits, or None when every edge has been tried.

    Choosing uniformly among the remaining untried edges on each call tries them all, one per call, in a uniformly
    random order; picking at random (not the first) also spreads a batch of concurrent playouts over different edges.
    """
    untried = [i for i, visits in enumerate(edge_visits) if visits <= 0]
    if not untried:
        return None
    return untried[rng.randrange(len(untried))]


def selection_scores(
    config: SelectionConfig,
    parent_visits: float,
    edge_visits: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    priors: Sequence[float] | np.ndarray | None = None,
    values_sq: Sequence[float] | np.ndarray | None = None,
) -> np.ndarray:
    """Score every edge of a node under ``config.rule`` (vectorised form of the scalar functions above).

    ``values`` are per edge, from the chooser's view: for PUCT the search's Q in its own utility scale (the search
    substitutes its first-play-urgency value for unvisited edges before calling); for the UCB rules mean rewards in
    ``[0, 1]``. ``values_sq`` (UCB1-TUNED only) are mean squared rewards; omitted, 0/1 rewards are assumed.
    Unvisited edges score ``+inf`` under the UCB rules.

    Raises:
        SelectionError: PUCT without priors, or arrays of different lengths.
    """
    visits = np.asarray(edge_visits, dtype=np.float64)
    value = np.asarray(values, dtype=np.float64)
    if value.shape != visits.shape:
        raise SelectionError(f"{value.shape[0]} values for {visits.shape[0]} edges")
    if config.rule is SelectionRule.PUCT:
        if priors is None:
            raise SelectionError("PUCT needs priors")
        prior = np.asarray(priors, dtype=np.float64)
        c = puct_exploration(parent_visits, config.c_puct, config.c_puct_log, config.c_puct_base)
        return value + c * prior * math.sqrt(parent_visits) / (1.0 + visits)
    tried = visits > 0
    log_ratio = np.full(visits.shape, np.inf)
    log_ratio[tried] = math.log(max(parent_visits, 1.0)) / visits[tried]
    if config.rule is SelectionRule.UCB1:
        bonus = config.c_ucb1 * np.sqrt(log_ratio)
    else:
        second = value if values_sq is None else np.asarray(values_sq, dtype=np.float64)
        variance = np.maximum(0.0, second - value * value)
        bound = np.minimum(config.tuned_variance_cap, variance + np.sqrt(config.tuned_c_var * log_ratio))
        with np.errstate(invalid="ignore"):
            bonus = config.c_tuned * np.sqrt(log_ratio * bound)
    return np.where(tried, value + bonus, np.inf)


def select_edge(
    config: SelectionConfig,
    rng: random.Random,
    parent_visits: float,
    edge_visits: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    priors: Sequence[float] | np.ndarray | None = None,
    values_sq: Sequence[float] | np.ndarray | None = None,
) -> int:
    """Index of the edge to descend: for UCB rules a random untried edge if any, else the best score.

    Arguments as in :func:`selection_scores`. Ties between equal best scores go to the lowest index, so the search
    stays deterministic for a fixed ``rng`` seed.

    Raises:
        SelectionError: if the node has no edges, or as :func:`selection_scores`.
    """
    if len(edge_visits) == 0:
        raise SelectionError("cannot select among zero edges")
    if config.rule.tries_untried_first:
        fresh = pick_untried(edge_visits, rng)
        if fresh is not None:
            return fresh
    return int(np.argmax(selection_scores(config, parent_visits, edge_visits, values, priors, values_sq)))


def _check_counts(edge_visits: float, parent_visits: float) -> None:
    if edge_visits < 1:
        raise SelectionError("an edge with no visits has no UCB score; try untried edges first")
    if parent_visits < edge_visits:
        raise SelectionError(f"parent visits {parent_visits} < edge visits {edge_visits}")
