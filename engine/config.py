"""Engine configuration: frozen dataclasses, TOML files and ``key=value`` overrides.

Every option is declared exactly once, as a dataclass field built with :func:`option`. That one declaration gives
the TOML key (``[search] max_visits = 400``), the command-line override (``--set search.max_visits=400``), the GTP
``kata-set-param`` / ``kata-get-param`` name, the help text and the range check.

>>> cfg = apply_overrides(Config(), ["search.max_visits=200", "search.graph=false"])
>>> cfg.search.max_visits, cfg.search.graph
(200, False)
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import tomllib
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from miai.go.coords import MAX_SIZE, MIN_SIZE
from miai.go.oserrors import describe
from miai.go.rules import Rules


__all__ = [
    "ConfigError",
    "option",
    "SearchConfig",
    "PlayerConfig",
    "GtpSection",
    "NetConfig",
    "LogConfig",
    "Config",
    "OptionInfo",
    "load_config",
    "resolve_config",
    "BUNDLED_CONFIGS",
    "apply_overrides",
    "set_option",
    "get_option",
    "list_options",
    "parse_value",
    "katago_names",
    "to_toml",
]


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


def _section_name(cls: type) -> str:
    """The TOML section a config dataclass is read from (``SearchConfig`` -> ``search``, ``GtpSection`` -> ``gtp``):
    messages name the key the user wrote, never the class."""
    return cls.__name__.removesuffix("Config").removesuffix("Section").lower()


def _validate(obj: Any) -> None:
    """Check every field of a config dataclass against its declared type, range and choices."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        kind = hints[f.name]
        name = f"{_section_name(type(obj))}.{f.name}"
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
    # Batching: leaves collected under virtual loss, evaluated in one call.
    batch_size: int = option(16, "most leaves evaluated per evaluator call (capped by the evaluator's max_batch)",
                             min=1, max=1024)
    # Leaves in flight distort the search (virtual loss); KataGo's few search threads keep only a handful in flight.
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
    # Selection: PUCT (KataGo) or, for comparison, the classic UCB rules of miai.engine.selection.
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
                                             "under territory scoring (engine/ending.py)", min=-1.0, max=1.0,
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
        _validate(self)


@dataclass(frozen=True, slots=True)
class PlayerConfig:
    """How the GTP player uses the search: resignation, the clock's lag reserve, pondering."""

    # KataGo's GTP resigns by default (allowResignation, resignThreshold -0.90 as a win-loss value); so does miai,
    # by the same rule (engine/resign.py).
    resign_threshold: float = option(0.05, "resign when the winrate stays below this (0 = never resign)",
                                     min=0.0, max=0.5, katago="resignThreshold")
    resign_consecutive: int = option(3, "moves in a row below resign_threshold before resigning", min=1,
                                     katago="resignConsecTurns")
    resign_min_score_difference: float = option(
        0.0, "never resign while behind by fewer points than this (0 = the score does not matter)", min=0.0,
        katago="resignMinScoreDifference")
    resign_min_moves_per_board_area: float = option(
        0.0, "never resign before this many moves per point of the board (0.25: move 90 on 19x19)", min=0.0,
        max=1.0, katago="resignMinMovesPerBoardArea")
    dynamic_pda_cap_per_opp_lead: float = option(
        0.045, "handicap play: the side that starts behind searches with a playout doubling advantage of up to this "
        "much per point behind, adjusted to keep its winrate near 5-25% (genmove only; 0 = off; docs/search.md)",
        min=0.0, max=0.5, katago="dynamicPlayoutDoublingAdvantageCapPerOppLead")
    lag_buffer: float = option(1.0, "seconds kept in reserve against network/GUI lag on every move", min=0.0,
                               katago="lagBuffer")
    ponder: bool = option(False, "keep searching on the opponent's time", katago="ponderingEnabled")

    def __post_init__(self) -> None:
        _validate(self)


# The [gtp] section is what the composition root (engine/cli) hands the GTP layer as its GtpConfig; the search
# imports this module, so it names no GTP type. GtpConfig's own defaults, for sessions built without a config,
# are these (tests/engine/test_config.py keeps them equal).
@dataclass(frozen=True, slots=True)
class GtpSection:
    """What ``miai gtp`` starts with; its command-line flags (``--size``, ``--komi``, ...) override these."""

    name: str = option("miai", "engine name answered to GTP `name` (one word)")
    board_size: int = option(19, "board size at start (--size)", min=MIN_SIZE, max=MAX_SIZE,
                             katago="defaultBoardSize")
    komi: float = option(7.5, "komi at start (--komi)")
    rules: str = option("tromp-taylor", "rules at start: a preset, or JSON or a compact string as for "
                        "kata-set-rules (--rules); controllers may change them later", katago="rules")
    analysis_interval_cs: int = option(100, "interval of analysis output when the command gives none "
                                       "(centiseconds)", min=0)
    exit_on_game_over: bool = option(False, "end the session after answering kgs-game_over (for a kgsGtp that "
                                     "starts the engine for every game)")
    ogs_chat_to_stderr: bool = option(False, "after every genmove write KataGo's MALKOVICH: line (visits, winrate, "
                                      "score lead, PV) on stderr, which gtp2ogs posts to OGS's chat",
                                      katago="ogsChatToStderr")

    def __post_init__(self) -> None:
        _validate(self)
        if not self.name or any(c.isspace() for c in self.name):
            raise ConfigError(f"gtp.name must be one word, got {self.name!r}")
        try:
            Rules.parse(self.rules)  # a preset name, JSON or a compact string, as GTP's kata-set-rules takes
        except ValueError as exc:
            raise ConfigError(f"gtp.rules: {exc}") from exc


@dataclass(frozen=True, slots=True)
class NetConfig:
    """Which net the CLI loads and how (passed to ``miai.nets.load_evaluator``)."""

    model: str = option("default", "path of an .onnx or KataGo model, or the name of a bundled net")
    cache_size: int = option(1 << 16, "evaluation cache entries (0 = no cache)", min=0)
    cache_reserve: bool = option(False, "take the evaluation cache's whole memory when a board size is first set up, "
                                 "instead of as it fills (memory flat from the first move, as a server bot wants)")
    # KataGo keys its NN cache by the situation, not the moves that led there (NNInputs::getHash): a transposition
    # reuses the evaluation made with the other move order's history planes. 89 of 100 reference searches then
    # spend every visit as KataGo's, against 82 keyed by the whole input (docs/search.md).
    cache_key: str = option("situation", "what the evaluation cache keys a position by: situation (stones, player, "
                            "ko, rules, komi, pass state; as KataGo) or input (every net input, history included)",
                            choices=("situation", "input"))
    threads: int = option(0, "onnxruntime threads per net call (0 = one per CPU core, at most 4), or playout "
                             "processes sharing a batch with --model playouts (0 = one)", min=0)
    # KataGo evaluates each position under one random symmetry of the board (its nnRandomize), so that the net's
    # small asymmetries average out over the search instead of biasing it one way.
    symmetry: str = option("random", "board symmetry the net sees: random (one per evaluation, as KataGo), "
                           "fixed (the identity) or average (all eight, 8x the work)",
                           choices=("random", "fixed", "average"))
    policy_optimism: float = option(1.0, "blend of the optimistic policy head, for nets that have one (v12 and later)",
                                    min=0.0, max=1.0, katago="policyOptimism")
    # KataGo's GTP evaluates the root with less of the optimistic policy (min(policyOptimism, 0.2)): the moves tried
    # first at the root follow the plain policy more, while the rest of the search hunts for refutations.
    root_policy_optimism: float = option(0.2, "the same blend at a search's root, at most policy_optimism "
                                         "(rootPolicyOptimism)", min=0.0, max=1.0, katago="rootPolicyOptimism")
    passing_hacks: bool = option(True, "KataGo's passing hacks in the search's evaluations: the pass prior capped at "
                                 "95%, and a pass that would end the game without a win hidden from the net",
                                 katago="enablePassingHacks")
    # auto measures once per net and CPU which backend and precision is fastest within the accuracy gate, and keeps
    # the answer in the cache directory (miai.nets.backends; docs/config.md "Which backend").
    backend: str = option("auto", "what runs the net: onnxruntime, openvino (the openvino extra) or auto (the "
                          "fastest here, measured once per net and kept)", choices=("auto", "onnxruntime", "openvino"))
    precision: str = option("auto", "what the net computes in: fp32, bf16 or fp16 (OpenVINO, on CPUs that have them), "
                            "or auto (fp32, or bf16/fp16 where they pass the accuracy gate and are faster)",
                            choices=("auto", "fp32", "bf16", "fp16"))
    providers: tuple[str, ...] = option(("CPUExecutionProvider",), "onnxruntime execution providers in order of "
                                        "preference, e.g. CUDAExecutionProvider,CPUExecutionProvider (docs/config.md: GPU)")
    allow_cpu_fallback: bool = option(True, "a requested provider that is not installed: warn and use the CPU "
                                      "(false: refuse to start)")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Log files as KataGo writes them: one per run in a folder, with the GTP traffic and each move's search.
    What goes to stderr is set by ``--log-level`` instead."""

    dir: str = option("", "folder for a log file per run, named by its start time (created if missing; ~ is the "
                      "home folder; empty: no log file unless log.file)", katago="logDir")
    file: str = option("", "one log file that every run appends to (instead of log.dir)", katago="logFile")
    gtp: bool = option(True, "the log file records every GTP command and answer", katago="logAllGTPCommunication")
    search_info: bool = option(True, "the log file records each genmove's search: visits, time, the best moves and "
                               "their principal variations", katago="logSearchInfo")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True, slots=True)
class Config:
    """The whole engine configuration, one section per table in the TOML file."""

    search: SearchConfig = field(default_factory=SearchConfig)
    player: PlayerConfig = field(default_factory=PlayerConfig)
    gtp: GtpSection = field(default_factory=GtpSection)
    net: NetConfig = field(default_factory=NetConfig)
    log: LogConfig = field(default_factory=LogConfig)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Config:
        """Build a config from nested mappings (a parsed TOML file); unknown keys raise ``ConfigError``."""
        sections = _sections(cls)
        tables: dict[str, dict[str, Any]] = {}
        for name, value in data.items():
            if name not in sections:
                raise ConfigError(_unknown(name, sections))
            if not isinstance(value, Mapping):
                raise ConfigError(f"[{name}] must be a table")
            tables[name] = dict(value)
        return cls(**{name: _section_from_dict(sections[name], table, name) for name, table in tables.items()})

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Nested plain dict of every option, the inverse of :meth:`from_dict`."""
        return {name: dataclasses.asdict(getattr(self, name)) for name in _sections(type(self))}


@dataclass(frozen=True, slots=True)
class OptionInfo:
    """One option as listed by ``list_options``: its dotted key, type name, default, help, range and choices."""

    key: str
    type: str
    default: Any
    help: str
    min: float | None
    max: float | None
    choices: tuple[str, ...] | None


def _sections(cls: type) -> dict[str, type]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _unknown(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown config key {name!r}{hint}"


def _section_from_dict(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(_unknown(f"{prefix}.{key}", (f"{prefix}.{n}" for n in names)))
    return cls(**data)


# The example configs ship inside the package, so ``--config analysis`` works from any directory.
BUNDLED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # configs, installed or not


def bundled_config_names() -> list[str]:
    """The names ``--config`` accepts besides file paths (``analysis``, ``default``, ...)."""
    return sorted(p.stem for p in BUNDLED_CONFIGS.glob("*.toml"))


def resolve_config(path: str | Path) -> Path:
    """The file ``--config`` means: an existing file as given, else a bundled config by name (``analysis`` or
    ``analysis.toml``).

    Raises:
        ConfigError: it is neither (the message lists the bundled names).
    """
    given = Path(path)
    if given.is_file():
        return given
    bundled = BUNDLED_CONFIGS / f"{given.name.removesuffix('.toml')}.toml"
    if given.name == str(path) and bundled.is_file():  # a bare name, not a path into some directory
        return bundled
    if given.is_dir():
        raise ConfigError(f"config {path} is a directory, not a TOML file")
    if given.name != str(path):
        raise ConfigError(f"config {path}: {describe(FileNotFoundError(), given)}")
    names = ", ".join(bundled_config_names())
    raise ConfigError(f"config {path}: no such file, and no bundled config has that name ({names})")


def load_config(path: str | Path | None = None, overrides: Iterable[str] = ()) -> Config:
    """Read a TOML config (a file, or a bundled config by name; the defaults when ``path`` is None), then apply
    ``key=value`` overrides.

    Raises:
        ConfigError: the file cannot be found, read or parsed, or a key or value is invalid.
    """
    config = Config() if path is None else Config.from_dict(_read_toml(path))
    return apply_overrides(config, overrides)


def toml_options(path: str | Path) -> dict[str, Any]:
    """A TOML config's options as ``{"section.key": value}`` (a file, or a bundled config by name), checked as
    :func:`load_config` checks them, to apply over other configs in order.

    Raises:
        ConfigError: as :func:`load_config`.
    """
    data = _read_toml(path)
    Config.from_dict(data)  # unknown keys and bad values, named as in a single config
    return {f"{section}.{name}": value for section, table in data.items() for name, value in table.items()}


def _read_toml(path: str | Path) -> dict[str, Any]:
    path = resolve_config(path)
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot parse config {path}: {exc}") from exc


def apply_overrides(config: Config, overrides: Iterable[str]) -> Config:
    """Apply ``section.key=value`` strings in order, as given to ``--set``; returns a new config."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"override {item!r} is not of the form section.key=value")
        config = set_option(config, key.strip(), value.strip())
    return config


def _split_key(config: Config, key: str) -> tuple[str, str, dataclasses.Field[Any], type]:
    section, dot, name = key.partition(".")
    sections = _sections(type(config))
    if not dot:
        # A bare name is accepted when exactly one section has it (kata-set-param style: "max_visits").
        owners = [s for s, cls in sections.items() if _has_field(cls, section)]
        if len(owners) != 1:
            raise ConfigError(_unknown(key, _all_keys(config)))
        section, name = owners[0], section
    if section not in sections:
        raise ConfigError(_unknown(key, _all_keys(config)))
    cls = sections[section]
    for f in dataclasses.fields(cls):
        if f.name == name:
            return section, name, f, typing.get_type_hints(cls)[name]
    raise ConfigError(_unknown(key, _all_keys(config)))


def _has_field(cls: type, name: str) -> bool:
    """True if the config dataclass ``cls`` has a field called ``name``."""
    return any(f.name == name for f in dataclasses.fields(cls))


def _all_keys(config: Config) -> list[str]:
    return [info.key for info in list_options(config)]


def parse_value(text: str, kind: type) -> Any:
    """Convert override text to a field's type: ints, floats, booleans (true/false/1/0/yes/no) and strings.

    Raises:
        ConfigError: the text does not parse as ``kind``.
    """
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            raise ValueError(text)
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind == STRINGS:  # "A,B" or a TOML-like ["A", "B"]
            return tuple(w.strip().strip("'\"") for w in text.strip().strip("[]").split(",") if w.strip())
    except ValueError as exc:
        raise ConfigError(f"cannot read {text!r} as {_KIND_NAMES.get(kind, kind.__name__)}") from exc
    return text.strip().strip('"')


# What parse_value says it expected, in a user's words.
_KIND_NAMES: dict[type, str] = {int: "an integer", float: "a number", bool: "true or false"}


def set_option(config: Config, key: str, value: Any) -> Config:
    """Return a copy of ``config`` with one option changed; ``value`` may be text (parsed) or already typed."""
    section, name, _field, kind = _split_key(config, key)
    if isinstance(value, str) and kind is not str:
        try:
            value = parse_value(value, kind)
        except ConfigError as exc:
            raise ConfigError(f"{section}.{name}: {exc}") from None
    new_section = dataclasses.replace(getattr(config, section), **{name: value})
    return dataclasses.replace(config, **{section: new_section})


def get_option(config: Config, key: str) -> Any:
    """The current value of ``section.key`` (or a bare key that only one section has)."""
    section, name, _field, _kind = _split_key(config, key)
    return getattr(getattr(config, section), name)


def list_options(config: Config | None = None) -> list[OptionInfo]:
    """Every option with its current value as ``default`` (or the built-in default when ``config`` is None)."""
    config = config or Config()
    out = []
    for section, cls in _sections(type(config)).items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            meta = f.metadata
            out.append(OptionInfo(
                key=f"{section}.{f.name}", type=hints[f.name].__name__,
                default=getattr(getattr(config, section), f.name), help=meta.get("help", ""),
                min=meta.get("min"), max=meta.get("max"), choices=meta.get("choices")))
    return out


def katago_names(config: Config | None = None) -> dict[str, str]:
    """KataGo's parameter names (``maxVisits``, ...) mapped to miai's dotted keys, from the option declarations."""
    config = config or Config()
    out = {}
    for section, cls in _sections(type(config)).items():
        for f in dataclasses.fields(cls):
            name = f.metadata.get("katago")
            if name:
                out[name] = f"{section}.{f.name}"
    return out


def to_toml(config: Config, keys: Iterable[str], header: str = "") -> str:
    """The options ``keys`` (``section.key``) of ``config`` as miai's TOML, grouped by section in declaration order,
    each after a comment with its help text; ``header`` comes first as ``#`` comment lines. :func:`load_config` reads
    the text back to the same values (``miai tune`` writes its config with it)."""
    wanted = set(keys)
    unknown = wanted - {info.key for info in list_options(config)}
    if unknown:
        raise ConfigError(_unknown(sorted(unknown)[0], _all_keys(config)))
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for section, cls in _sections(type(config)).items():
        names = [f.name for f in dataclasses.fields(cls) if f"{section}.{f.name}" in wanted]
        if not names:
            continue
        lines += ["", f"[{section}]"]
        for f in dataclasses.fields(cls):
            if f.name in names:
                value = getattr(getattr(config, section), f.name)
                lines += [f"# {f.metadata.get('help', '')}", f"{f.name} = {_toml_value(value)}"]
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_value(value: Any) -> str:
    """One option value in TOML: booleans, numbers, strings (JSON's escapes are TOML's) and lists of strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))
