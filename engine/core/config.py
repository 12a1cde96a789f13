"""The search's configuration (:class:`SearchConfig`), and how every config section declares its options.

Every option is declared exactly once, as a dataclass field built with :func:`option`: the TOML key, the
command-line override, the GTP ``kata-set-param`` name, the help text and the range check all come from it
(miai.engine.config reads files and overrides for every section; the search's section lives here, beside the search
that reads it, so that the search core needs nothing of the apps around it).
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ConfigError", "STRINGS", "SearchConfig", "check_fields", "option", "section_name"]


class ConfigError(ValueError):
    """A configuration file, key or value is invalid."""


# The one list type options may have: a list of strings (a TOML array, or comma-separated in --set).
STRINGS = tuple[str, ...]


def option(
    default: Any,
    help: str,
    *,
    min: float | None = None,
    max: float | None = None,
    choices: tuple[str, ...] | None = None,
    katago: str | None = None,
) -> Any:
    """Declare a config field with its help text, allowed range (checked in ``__post_init__``), where KataGo has
    the same parameter KataGo's name for it (accepted by ``kata-set-param`` and KataGo-style configs)."""
    meta = {"help": help, "min": min, "max": max, "choices": choices, "katago": katago}
    return field(default=default, metadata=meta)


def section_name(cls: type) -> str:
    """The TOML section a config dataclass is read from (``SearchConfig`` -> ``search``, ``GtpSection`` -> ``gtp``):
    messages name the key the user wrote, never the class."""
    return cls.__name__.removesuffix("Config").removesuffix("Section").lower()


def check_fields(obj: Any) -> None:
    """Check every field of a config dataclass against its declared type, range and choices."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        kind = hints[f.name]
        name = f"{section_name(type(obj))}.{f.name}"
        if kind is bool and not isinstance(value, bool):
            raise ConfigError(f"{name} must be a boolean, got {value!r}")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(f"{name} must be an integer, got {value!r}")
        if kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ConfigError(f"{name} must be finite, got {value!r}")
            object.__setattr__(obj, f.name, float(value))
        if kind is str and not isinstance(value, str):
            raise ConfigError(f"{name} must be a string, got {value!r}")
        if kind == STRINGS:
            if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value):
                raise ConfigError(f"{name} must be a list of strings, got {value!r}")
            object.__setattr__(obj, f.name, tuple(value))
        lo, hi, choices = f.metadata.get("min"), f.metadata.get("max"), f.metadata.get("choices")
        if lo is not None and value < lo:
            raise ConfigError(f"{name} must be >= {lo}, got {value!r}")
        if hi is not None and value > hi:
            raise ConfigError(f"{name} must be <= {hi}, got {value!r}")
        if choices is not None and value not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Monte-Carlo graph search parameters (KataGo's names in the help where one exists). 0 means "no limit"."""

    # Limits: the search stops at the first one reached.
    max_visits: int = option(0, "stop when the root has this many visits (0 = no limit)", min=0,
                             katago="maxVisits")
    max_playouts: int = option(0, "stop after this many playouts in one run (0 = no limit)", min=0, katago="maxPlayouts")
    # 0.9 s keeps a move within one second, GTP round trip included; with no visit cap it ends every move.
    max_time: float = option(0.9, "stop after this many seconds (0 = no limit); clocks may lower it", min=0.0, katago="maxTime")
    max_nodes: int = option(500_000, "stop growing the graph at this many nodes (about 2-5 kB each on 19x19)",
                            min=1)
    # Batching: leaves collected under virtual loss, evaluated in one call. Leaves in flight distort the search as
    # KataGo's search threads do (about 6-7 Elo each at 800 visits): overlapped batches of 16 lost 166 Elo to batches
    # of 2 at equal visits, and 4 weighs that against speed best (docs/benchmarks.md, "Leaves in flight"). On a GPU, where
    # a big batch is much faster, `miai tune` weighs the two.
    batch_size: int = option(4, "most leaves evaluated per evaluator call (capped by the evaluator's max_batch)",
                             min=1, max=1024)
    visits_per_batch_leaf: int = option(
        64, "grow the batch by one leaf per this many root visits, up to batch_size (0 = always batch_size)", min=0)
    # The search's Python and the net's run share the two cores: 1.15-1.25x the visits a second (docs/benchmarks.md).
    overlap: bool = option(True, "collect and encode the next batch while the net runs the previous one in its own "
                           "thread (false: one batch at a time)")
    # Graph semantics.
    graph: bool = option(True, "share transpositions through the node table; false = a pure tree", katago="useGraphSearch")
    child_visits_exceed_edge: str = option(
        "stop", "when the chosen child has more visits than its edge: stop (add an edge visit), continue, leaky",
        choices=("stop", "continue", "leaky"))
    leak_probability: float = option(0.1, "leaky mode: probability of descending anyway (graphSearchCatchUpLeakProb)",
                                     min=0.0, max=1.0, katago="graphSearchCatchUpLeakProb")
    # Values off the playout path go stale (KataGo's GraphSearch notes suggest the remedies): docs/search.md.
    stale_update: str = option(
        "path", "after a playout, recompute the nodes on its path only (path), also the other parents of each of them "
        "(parents), or every ancestor in topological order (ancestors)", choices=("path", "parents", "ancestors"))
    # RAVE (Gelly & Silver 2007, MoGo): all-moves-as-first values from the playouts blended into the UCB rules.
    rave_equivalence: float = option(
        0.0, "RAVE for playout evaluators under the UCB rules: beta = sqrt(k / (3 n + k)) weighs a move's AMAF value "
        "against its own after n visits (MoGo's k; 0 = off; set it when the evaluator is built)", min=0.0)
    rave_exploration: float = option(
        0.0, "RAVE: multiplier of sqrt(ln P / (n + 1)) added to the blended value (MoGo found 0 best with RAVE)",
        min=0.0)
    # Selection: PUCT (KataGo) or, for comparison, the classic UCB rules of miai.engine.core.selection.
    selection: str = option("puct", "child selection rule: puct, ucb1 or ucb1-tuned (untried moves first)",
                            choices=("puct", "ucb1", "ucb1-tuned"))
    ucb1_exploration: float = option(1.4142135623730951, "UCB1: multiplier of sqrt(ln P / p) (sqrt 2 = textbook)",
                                     min=0.0)
    ucb1_tuned_exploration: float = option(1.0, "UCB1-TUNED: multiplier of the whole exploration bonus", min=0.0)
    cpuct_exploration: float = option(1.0, "cpuctExploration", min=0.0, katago="cpuctExploration")
    cpuct_exploration_log: float = option(0.45, "cpuctExplorationLog: growth of cpuct with visits", min=0.0, katago="cpuctExplorationLog")
    cpuct_exploration_base: float = option(500.0, "cpuctExplorationBase", min=1.0, katago="cpuctExplorationBase")
    fpu_reduction: float = option(0.2, "fpuReductionMax: unvisited children start below the parent's value",
                                  min=0.0, max=2.0, katago="fpuReductionMax")
    root_fpu_reduction: float = option(0.1, "rootFpuReductionMax", min=0.0, max=2.0, katago="rootFpuReductionMax")
    # KataGo's refinements of PUCT (cpp/search/searchexplorehelpers.cpp; defaults of cpp/program/setup.cpp for GTP).
    cpuct_utility_stdev_prior: float = option(
        0.40, "prior utility stdev of a node; exploration scales with the observed stdev relative to it",
        min=1e-8, max=10.0, katago="cpuctUtilityStdevPrior")
    cpuct_utility_stdev_prior_weight: float = option(
        2.0, "weight (in visits) of that prior stdev", min=0.0, max=100.0, katago="cpuctUtilityStdevPriorWeight")
    cpuct_utility_stdev_scale: float = option(
        0.85, "how far the exploration constant follows the utility stdev (0 = fixed cpuct)", min=0.0, max=1.0,
        katago="cpuctUtilityStdevScale")
    fpu_parent_weight_by_visited_policy: bool = option(
        True, "first-play value blends the parent's net utility in while little policy mass is visited",
        katago="fpuParentWeightByVisitedPolicy")
    fpu_parent_weight_by_visited_policy_pow: float = option(
        2.0, "power of the visited policy mass in that blend", min=0.0, max=5.0,
        katago="fpuParentWeightByVisitedPolicyPow")
    fpu_loss_prop: float = option(0.0, "pull the first-play value this far towards a loss", min=0.0, max=1.0,
                                  katago="fpuLossProp")
    wide_root_noise: float = option(
        0.0, "analysis breadth: root priors to the power 1/(4w+1), and half the root moves get a random bonus of "
        "w * |N(0,1)| utility at each selection (KataGo's analysis engine uses 0.04)", min=0.0, max=5.0,
        katago="wideRootNoise")
    # How children's values are averaged into a node (cpp/search/searchupdatehelpers.cpp).
    value_weight_exponent: float = option(
        0.25, "down-weight children whose value is below the node's by t-CDF(z)^exponent (0 = plain averages)",
        min=0.0, max=1.0, katago="valueWeightExponent")
    use_noise_pruning: bool = option(
        True, "take weight off worse children that got far more than their policy share",
        katago="useNoisePruning")
    noise_prune_utility_scale: float = option(0.15, "utility gap scale of noise pruning", min=0.001, max=10.0,
                                              katago="noisePruneUtilityScale")
    use_uncertainty: bool = option(
        True, "weight each net evaluation by its predicted short-term error (nets of model version 9 and later)",
        katago="useUncertainty")
    uncertainty_coeff: float = option(0.25, "uncertainty weighting coefficient", min=0.0001, max=1.0,
                                      katago="uncertaintyCoeff")
    uncertainty_exponent: float = option(1.0, "uncertainty weighting exponent", min=0.0, max=2.0,
                                         katago="uncertaintyExponent")
    uncertainty_max_weight: float = option(8.0, "largest weight one evaluation can get", min=1.0, max=100.0,
                                           katago="uncertaintyMaxWeight")
    subtree_value_bias_factor: float = option(
        0.45, "correct a net value by the mean error seen for the same local move pattern elsewhere in the graph",
        min=0.0, max=1.0, katago="subtreeValueBiasFactor")
    subtree_value_bias_weight_exponent: float = option(
        0.85, "weight of a node's correction: its children's weight to this power", min=0.0, max=1.0,
        katago="subtreeValueBiasWeightExponent")
    subtree_value_bias_free_prop: float = option(
        0.8, "share of a freed node's correction removed from the table", min=0.0, max=1.0,
        katago="subtreeValueBiasFreeProp")
    # Utility = win/loss + score terms.
    win_loss_utility_factor: float = option(1.0, "winLossUtilityFactor", min=0.0, katago="winLossUtilityFactor")
    static_score_utility_factor: float = option(0.1, "staticScoreUtilityFactor (atan of the score, centred on 0)",
                                                min=0.0, katago="staticScoreUtilityFactor")
    dynamic_score_utility_factor: float = option(0.3, "dynamicScoreUtilityFactor (atan centred on the root score)",
                                                 min=0.0, katago="dynamicScoreUtilityFactor")
    static_score_scale: float = option(2.0, "static score utility scale, times sqrt(board area) points", min=0.01)
    dynamic_score_center_scale: float = option(0.75, "dynamicScoreCenterScale, times sqrt(board area)", min=0.01, katago="dynamicScoreCenterScale")
    dynamic_score_center_zero_weight: float = option(0.2, "dynamicScoreCenterZeroWeight: pull the centre to 0",
                                                     min=0.0, max=1.0, katago="dynamicScoreCenterZeroWeight")
    # Root noise (self-play only).
    root_noise: bool = option(False, "add Dirichlet noise to the root priors", katago="rootNoiseEnabled")
    root_noise_concentration: float = option(10.83, "rootDirichletNoiseTotalConcentration", min=0.01, katago="rootDirichletNoiseTotalConcentration")
    root_noise_weight: float = option(0.25, "rootDirichletNoiseWeight", min=0.0, max=1.0, katago="rootDirichletNoiseWeight")
    # Pass and eye handling.
    root_symmetry_pruning: bool = option(True, "on a root position that board symmetries leave unchanged (an empty "
                                         "board, symmetric handicap stones), search one move of each symmetric set",
                                         katago="rootSymmetryPruning")
    more_passing_hacks: bool = option(True, "where a pass would end the game, look at both passing and playing on "
                                      "once each, without counting the visit (enableMorePassingHacks)",
                                      katago="enableMorePassingHacks")
    conservative_pass: bool = option(True, "a pass from the root that would end the game is searched on instead of "
                                     "scored, and the root's net evaluation is shown no game about to end "
                                     "(conservativePass; on in KataGo's GTP and analysis engine)",
                                     katago="conservativePass")
    root_ending_bonus_points: float = option(0.5, "points a root move loses for doing nothing at the end of a game: "
                                             "filling sure own territory, playing into the opponent's, passing "
                                             "under territory scoring (engine/core/ending.py)", min=-1.0, max=1.0,
                                             katago="rootEndingBonusPoints")
    fill_dame_before_pass: bool = option(True, "under territory scoring, do not pass while a move that is not in the "
                                         "opponent's sure area does as well (fill the dame first; "
                                         "fillDameBeforePass, on in KataGo's GTP)", katago="fillDameBeforePass")
    # Off in net mode, as KataGo (whose search offers every legal move); on in playout mode (compose.playout_defaults).
    forbid_eye_filling: bool = option(False, "never fill one's own single-point true eye (unless nothing else but "
                                      "pass); playout mode turns it on")
    # Move choice.
    final_choice: str = option(
        "katago", "the move played: katago (KataGo's play selection values, LCB below), visits (most edge visits) or "
        "wins (most wins: edge visits times winrate, the textbook MCTS rule)", choices=("katago", "visits", "wins"))
    use_lcb: bool = option(True, "choose among well-visited moves by lower confidence bound (useLcbForSelection)", katago="useLcbForSelection")
    lcb_stdevs: float = option(5.0, "lcbStdevs", min=0.0, katago="lcbStdevs")
    min_visit_prop_for_lcb: float = option(0.15, "minVisitPropForLCB", min=0.0, max=1.0, katago="minVisitPropForLCB")
    temperature: float = option(0.0, "chosenMoveTemperature late in the game (0 = the best move by "
                                "search.final_choice)", min=0.0, katago="chosenMoveTemperature")
    temperature_early: float = option(0.0, "chosenMoveTemperatureEarly at move 0", min=0.0, katago="chosenMoveTemperatureEarly")
    temperature_halflife: float = option(19.0, "moves for the temperature to halve towards the late value",
                                         min=0.1, katago="chosenMoveTemperatureHalflife")
    # Analysis and reuse.
    keep_ownership: bool = option(True, "store the net's ownership per node to report averaged ownership")
    pv_length: int = option(13, "analysisPVLen", min=1, max=100, katago="analysisPVLen")
    reuse_tree: bool = option(True, "keep the subgraph of the played move between moves")
    seed: int = option(0, "random seed for noise, leaky descent and temperature (0 = from the OS)", min=0)

    def __post_init__(self) -> None:
        check_fields(self)
