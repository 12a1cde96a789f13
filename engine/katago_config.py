"""KataGo's parameter names and config files, one home for every front end (``miai gtp``, ``miai analysis``, GTP's
``kata-set-param``).

KataGo's config files are lines of ``key = value`` with ``#`` comments; ``-override-config`` takes ``k=v,k=v``.
Every KataGo parameter name falls in one of these kinds (:func:`kind`):

- ``mapped``: miai has the same setting under another name (``maxVisits`` -> ``search.max_visits``); the names
  declared on miai's options (``katago=`` in engine/config.py) plus the few below whose value is converted on the way
  (``nnCacheSizePowerOfTwo`` is a power of two, ``resignThreshold`` a win-loss utility, ...);
- ``miai``: a dotted key (``search.max_visits``) is miai's own option and is accepted wherever KataGo's names are;
- ``silent``: settings of KataGo's own logging and files that need no word when miai does not use them;
- ``katago-only``: KataGo parameters (cpp/program/setup.cpp and the example configs, v1.17.2) miai has no
  equivalent for: accepted and named once as having no effect;
- ``unknown``: anything else, a probable typo when a known name is close (:func:`closest_key`), as KataGo warns.

Front ends add their own keys on top (the analysis engine's ``reportAnalysisWinratesAs``, ...); a key they handle
themselves is theirs, whatever :func:`kind` says.

>>> from miai.engine.config import Config
>>> apply_katago(Config(), "maxVisits", "400").search.max_visits
400
>>> closest_key("maxVisit")
'maxVisits'
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from miai.engine.config import (
    Config, ConfigError, apply_overrides, katago_names, parse_value, set_option, toml_options,
)
from miai.go.rules import Rules

__all__ = ["KatagoConfigError", "read_katago_config", "read_katago_configs", "parse_override_list", "MAPPED",
           "KATAGO_ONLY", "SILENT", "Kind", "kind", "miai_key", "apply_katago", "closest_key", "number",
           "LoadedConfig", "load_configs", "is_toml"]


class KatagoConfigError(ValueError):
    """A KataGo config file, override or value miai cannot use (the message names the file or the key)."""


# KataGo's rules given key by key (a config without ``rules``): each changes one part of gtp.rules, as the
# rules JSON keys of kata-set-rules do.
_RULE_PARTS = {"koRule": "ko", "scoringRule": "scoring", "taxRule": "tax", "multiStoneSuicideLegal": "suicide",
               "hasButton": "hasButton", "whiteHandicapBonus": "whiteHandicapBonus",
               "friendlyPassOk": "friendlyPassOk"}

# KataGo name -> miai config key: the names declared on miai's options (config.katago_names), plus the KataGo
# settings whose miai counterpart is not the same knob under another name (their values are converted in
# apply_katago).
MAPPED: Mapping[str, str] = {
    **katago_names(),
    **{name: "gtp.rules" for name in _RULE_PARTS},
    "allowResignation": "player.resign_threshold",  # false: a threshold of 0, which never resigns
    # KataGo's search threads are playouts in flight; miai's closest equivalent is the leaves per net batch.
    "numSearchThreads": "search.batch_size",
    "numSearchThreadsPerAnalysisThread": "search.batch_size",
    "nnCacheSizePowerOfTwo": "net.cache_size",  # 2 ** value entries
    "nnRandomize": "net.symmetry",  # true: a random symmetry per evaluation; false: the identity
}
_POWER_OF_TWO = frozenset({"nnCacheSizePowerOfTwo"})
# Accepted without a word: they only steer KataGo's logging and files.
SILENT = frozenset({"homeDataDir", "logToStderr", "logToStdout", "logAllRequests", "logAllResponses",
                    "logErrorsAndWarnings", "logTimeStamp", "logConfigContents",
                    "warnUnusedFields"})
# KataGo parameters (cpp/program/setup.cpp and the example configs, v1.17.2) that miai has no equivalent for.
KATAGO_ONLY = frozenset("""
alwaysComputePassAliveUnderSuicideRules antiMirror autoAvoidRepeatDir avoidRepeatedPatternUtility chosenMovePrune
chosenMoveSubtract chosenMoveTemperatureOnlyBelowProb conservativePass cpuctUtilityStdevPrior
cpuctUtilityStdevPriorWeight cpuctUtilityStdevScale cudaDisableWarmup debugSkipNeuralNet defaultBoardSize
defaultBoardXSize defaultBoardYSize deviceToUse deviceToUseModel deviceToUseThread drawEquivalentWinsForWhite
enableMorePassingHacks enablePassingHacks endgameTurnTimeDecay evalCacheMinVisits fillDameBeforePass fpuLossProp
fpuParentWeight fpuParentWeightByVisitedPolicy fpuParentWeightByVisitedPolicyPow futileVisitsThreshold gpuToUse
gpuToUseModel gpuToUseThread graphSearchCatchUpProp graphSearchRepBound humanSLChosenMoveIgnorePass
humanSLChosenMovePiklLambda humanSLChosenMoveProp humanSLCpuctExploration humanSLCpuctPermanent
humanSLOppExploreProbWeightful humanSLOppExploreProbWeightless humanSLPlaExploreProbWeightful
humanSLPlaExploreProbWeightless humanSLProfile humanSLRootExploreProbWeightful humanSLRootExploreProbWeightless
ignoreAllHistory ignorePreRootHistory inputsUseNHWC lagBuffer maxBoardSizeForNNBuffer maxBoardXSizeForNNBuffer
maxBoardYSizeForNNBuffer maxPlayoutsPondering maxTimePondering maxVisitsPondering midgameTimeFactor
midgameTurnPeakTime minPlayoutsPerThread nnForcedSymmetry nnMaxBatchSize nnMutexPoolSizePowerOfTwo
nnPolicyTemperature nnRandSeed nnRandomize noResultUtilityForWhite nodeTableShardsPowerOfTwo noisePruneUtilityScale
noisePruningCap numBots numEigenThreadsPerModel numNNServerThreadsPerModel numVirtualLossesPerThread
obviousMovesPolicyEntropyTolerance obviousMovesPolicySurpriseTolerance obviousMovesTimeFactor
overallocateTimeFactor playoutDoublingAdvantage playoutDoublingAdvantagePla policyOptimism requireMaxBoardSize
rootDesiredPerChildVisitsCoeff rootEndingBonusPoints rootFpuLossProp rootNumSymmetriesToSample rootPolicyOptimism
rootPruneUselessMoves rootSymmetryPruning searchFactorAfterOnePass searchFactorAfterTwoPass searchRandSeed
subtreeValueBiasFactor subtreeValueBiasFreeProp subtreeValueBiasWeightExponent treeReuseCarryOverTimeFactor
uncertaintyCoeff uncertaintyExponent uncertaintyMaxWeight useEvalCache useFP16 useNoisePruning useNonBuggyLcb
useUncertainty valueWeightExponent forDeterministicTesting assumeMultipleStartingBlackMovesAreHandicap
preventCleanupPhase quitWithoutWaiting
avoidMYTDaggerHack searchFactorWhenWinning searchFactorWhenWinningThreshold ignoreGTPAndForceKomi genmoveAntiMirror
delayMoveScale delayMoveMax avoidSgfPatternUtility avoidSgfPatternLambda avoidSgfPatternMinTurnNumber
avoidSgfPatternMaxFiles avoidSgfPatternAllowedNames avoidSgfPatternDirs logSearchInfoForChosenMove
startupPrintMessageToStderr ogsChatToStderr reportAnalysisWinratesAs rootPolicyTemperature rootPolicyTemperatureEarly
numAnalysisThreads fpuUseParentAverage mutexPoolSize useNHWC
""".split()) - set(MAPPED)
# Settings of KataGo's GPU and CPU backends (cudaDeviceToUseThread0, openclReTunePerBoardSize, ...): miai's nets run
# on onnxruntime or OpenVINO, set up by net.backend and net.providers.
_BACKEND_PREFIXES = ("cuda", "opencl", "trt", "metal", "coreml", "eigen")

Kind = Literal["mapped", "miai", "silent", "katago-only", "unknown"]


def read_katago_config(path: str | Path) -> dict[str, str]:
    """A KataGo config file as ``{key: value}`` (text values; later lines win, as in KataGo).

    Raises:
        KatagoConfigError: the file cannot be read, or a line is neither blank, a comment nor ``key = value``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise KatagoConfigError(f"cannot read config {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise KatagoConfigError(f"cannot read config {path}: not a text file ({exc.reason})") from exc
    values: dict[str, str] = {}
    for number_, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise KatagoConfigError(f"config {path} line {number_}: expected key = value, got {raw.strip()!r}")
        values[key.strip()] = value.strip()
    return values


def read_katago_configs(paths: Iterable[str | Path]) -> dict[str, str]:
    """Several config files merged in order: a key in a later file replaces the same key of an earlier one.

    Raises:
        KatagoConfigError: as :func:`read_katago_config`.
    """
    values: dict[str, str] = {}
    for path in paths:
        values.update(read_katago_config(path))
    return values


def parse_override_list(text: str) -> dict[str, str]:
    """``-override-config`` text: ``k=v,k=v`` (spaces around either side allowed).

    Raises:
        KatagoConfigError: an item is not ``key=value``.
    """
    values: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise KatagoConfigError(f"-override-config: expected key=value, got {item.strip()!r}")
        values[key.strip()] = value.strip()
    return values


def kind(name: str) -> Kind:
    """What miai does with a parameter of this name (see the module's docstring)."""
    if name in MAPPED:
        return "mapped"
    if "." in name:
        return "miai"
    if name in SILENT:
        return "silent"
    if name in KATAGO_ONLY or name.startswith(_BACKEND_PREFIXES):
        return "katago-only"
    return "unknown"


def miai_key(name: str) -> str | None:
    """The miai option a KataGo name (or a dotted miai key) sets, or None."""
    if name in MAPPED:
        return MAPPED[name]
    return name if "." in name else None


def closest_key(name: str, extra: Iterable[str] = ()) -> str | None:
    """The known KataGo name (or ``extra`` name) an unknown key is most probably a typo of, or None."""
    known = [*MAPPED, *SILENT, *KATAGO_ONLY, *extra]
    by_case = {key.lower(): key for key in known}
    if name.lower() in by_case:  # KataGo's names are case-sensitive: maxvisits is a typo of maxVisits
        return by_case[name.lower()]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return close[0] if close else None


def apply_katago(config: Config, name: str, value: Any) -> Config:
    """``config`` with one KataGo-named (or dotted miai) setting applied; text from a config file and typed JSON
    values both work.

    Raises:
        KatagoConfigError: the name sets no miai option (``kind`` is not mapped or miai), or the value is out of
            range or of the wrong type (the message says what is wrong; callers name the key, as they name its
            file or command).
    """
    key = miai_key(name)
    if key is None:
        raise KatagoConfigError("not a parameter miai can set")
    try:
        return _apply(config, name, key, value)
    except KatagoConfigError:
        raise
    except (ConfigError, ValueError, TypeError) as exc:
        raise KatagoConfigError(str(exc)) from exc


def _apply(config: Config, name: str, key: str, value: Any) -> Config:
    if name in _POWER_OF_TWO:
        power = int(number(value))
        if not 0 <= power <= 40:
            raise KatagoConfigError(f"must be an integer from 0 to 40, got {value!r}")
        return set_option(config, key, 1 << power)
    if key in ("search.max_visits", "search.max_playouts") and name != key:
        # KataGo allows up to 2^50; miai reads 0 as "no limit", so huge values stay huge.
        count = int(number(value))
        if count < 1:
            raise KatagoConfigError(f"must be a positive integer, got {value!r}")
        return set_option(config, key, count)
    if key == "search.max_time" and name != key:
        seconds = number(value)
        if seconds < 0:
            raise KatagoConfigError(f"must be >= 0, got {value!r}")
        # KataGo's "1e20 seconds" means no limit, which miai writes as 0.
        return set_option(config, key, 0.0 if seconds >= 1e9 else seconds)
    if name == "nnRandomize":
        return set_option(config, key, "random" if parse_value(_text(value), bool) else "fixed")
    if name == "resignThreshold":
        # KataGo's threshold is a win-loss utility from -1 to 1; miai's a winrate: (1 + utility) / 2.
        utility = number(value)
        if not -1.0 <= utility <= 0.0:
            raise KatagoConfigError(f"must be a number from -1 to 0 (a win-loss utility), got {value!r}")
        return set_option(config, key, (1.0 + utility) / 2.0)
    if name == "allowResignation":
        allowed = parse_value(_text(value), bool)
        return config if allowed else set_option(config, key, 0.0)
    if name == "rules":
        try:
            Rules.parse(_text(value))  # named with the file and key here, not when the GTP session starts
        except ValueError as exc:
            raise KatagoConfigError(str(exc)) from None
    if name in _RULE_PARTS:
        try:
            rules = Rules.parse(config.gtp.rules).updated(_RULE_PARTS[name], _text(value))
        except ValueError as exc:
            raise KatagoConfigError(str(exc)) from None
        return set_option(config, key, rules.matching_preset() or json.dumps(rules.to_json()))
    return set_option(config, key, _text(value))


def _text(value: Any) -> Any:
    """JSON booleans and numbers as miai's parser expects them; strings unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def number(value: Any) -> float:
    """A finite number from config text or a JSON number.

    Raises:
        KatagoConfigError: it is not one (booleans are not numbers).
    """
    if isinstance(value, bool):
        raise KatagoConfigError(f"expected a number, got {value!r}")
    try:
        result = float(parse_value(value, float)) if isinstance(value, str) else float(value)
    except (ConfigError, TypeError, ValueError) as exc:
        raise KatagoConfigError(f"expected a number, got {value!r}") from exc
    if not math.isfinite(result):
        raise KatagoConfigError(f"expected a finite number, got {value!r}")
    return result


@dataclass(frozen=True)
class LoadedConfig:
    """miai's config from config files and overrides, with what the user set and what had no effect."""

    config: Config
    chosen: frozenset[str]  # miai keys a file or an override set (so that mode defaults leave them alone)
    unsupported: tuple[str, ...] = ()  # KataGo's keys miai has no equivalent for: no effect
    unknown: tuple[tuple[str, str | None], ...] = ()  # (key, the known key it is probably a typo of)

    def warnings(self) -> list[str]:
        """One line for the keys with no effect, one per unknown key (naming the probable typo), as KataGo warns."""
        lines = []
        if self.unsupported:
            lines.append("config keys miai does not use (no effect): " + ", ".join(self.unsupported))
        for key, close in self.unknown:
            lines.append(f"unknown config key {key}" + (f", probably a typo of {close}" if close else ""))
        return lines


def is_toml(path: str | Path) -> bool:
    """True if ``--config`` names a miai TOML config: a ``*.toml`` file, or a bundled config's name (a name that is
    not a file); any other file is read in KataGo's ``key = value`` format."""
    return str(path).endswith(".toml") or not Path(path).is_file()


def load_configs(paths: Iterable[str | Path] = (), overrides: Iterable[str] = (),
                 sets: Sequence[str] = ()) -> LoadedConfig:
    """miai's defaults, then each config file in order (miai TOML or KataGo's format, see :func:`is_toml`), then
    ``overrides`` (``-override-config``: ``k=v,k=v`` with KataGo's or miai's names), then ``sets`` (``--set
    section.key=value``). A key set twice keeps its last value, as when KataGo merges several ``-config`` files.

    Raises:
        KatagoConfigError: a file cannot be read or parsed, or a key or value is invalid (naming the file or the
            option and the key).
    """
    config, chosen = Config(), set[str]()
    unsupported: dict[str, None] = {}
    unknown: dict[str, str | None] = {}
    resign: tuple[str, str] | None = None  # allowResignation applies after resignThreshold, wherever it is written

    def katago(pairs: Mapping[str, str], where: str) -> None:
        nonlocal config, resign
        for name, value in pairs.items():
            what = kind(name)
            if what == "katago-only":
                unsupported[name] = None
            elif what == "unknown":
                unknown[name] = closest_key(name)
            elif name == "allowResignation":
                resign = (value, where)
            elif what != "silent":
                try:
                    config = apply_katago(config, name, value)
                except KatagoConfigError as exc:
                    raise KatagoConfigError(f"{where}: {name}: {exc}") from None
                chosen.add(MAPPED.get(name, name))

    for path in paths:
        if is_toml(path):
            try:
                for key, value in toml_options(path).items():
                    config = set_option(config, key, value)
                    chosen.add(key)
            except ConfigError as exc:
                raise KatagoConfigError(str(exc)) from None
        else:
            katago(read_katago_config(path), f"config {path}")
    for text in overrides:
        katago(parse_override_list(text), "-override-config")
    if resign is not None:
        value, where = resign
        try:
            config = apply_katago(config, "allowResignation", value)
        except KatagoConfigError as exc:
            raise KatagoConfigError(f"{where}: allowResignation: {exc}") from None
        chosen.add(MAPPED["allowResignation"])
    try:
        config = apply_overrides(config, sets)
    except ConfigError as exc:
        raise KatagoConfigError(str(exc)) from None
    chosen.update(item.partition("=")[0].strip() for item in sets)
    return LoadedConfig(config, frozenset(chosen), tuple(unsupported), tuple(unknown.items()))
