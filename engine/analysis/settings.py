"""KataGo's configuration as the analysis engine reads it: config files, ``-override-config`` and ``overrideSettings``.

KataGo's config files are lines of ``key = value`` with ``#`` comments. Each KataGo parameter falls in one of four
groups here:

- **mapped**: miai has the same setting under another name (``maxVisits`` -> ``search.max_visits``); the value
  goes into miai's :class:`~miai.engine.config.Config`;
- **analysis**: settings the analysis front end applies itself (``reportAnalysisWinratesAs``, ``wideRootNoise``,
  ``rootPolicyTemperature``, ``analysisPVLen``, ``numAnalysisThreads``);
- **known, not in miai**: KataGo parameters miai has no equivalent for (``playoutDoublingAdvantage``,
  ``antiMirror``, ...): accepted, reported once, with no effect;
- anything else is unknown (KataGo itself warns about those).

Keys with a dot (``search.max_visits``) are miai's own config keys and are accepted everywhere too.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from miai.engine.config import Config, ConfigError, katago_names, load_config, parse_value, set_option

__all__ = ["AnalysisSettings", "SettingsError", "read_katago_config", "parse_override_list", "apply_settings",
           "PERSPECTIVES"]

PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
# Visits of a query without maxVisits (KataGo's example analysis config has 500; miai's GTP capped moves at 1,600).
ANALYSIS_MAX_VISITS = 1600


class SettingsError(ValueError):
    """A setting has a value miai cannot use (the message names the key)."""


# KataGo name -> miai config key: the names declared on miai's options (config.katago_names), plus the KataGo
# settings whose miai counterpart is not the same knob under another name.
_MAPPED = {
    **katago_names(),
    # KataGo's search threads are playouts in flight; miai's closest equivalent is the leaves per net batch.
    "numSearchThreads": "search.batch_size",
    "numSearchThreadsPerAnalysisThread": "search.batch_size",
    "nnCacheSizePowerOfTwo": "net.cache_size",  # 2 ** value entries
    "nnRandomize": "net.symmetry",  # true: a random symmetry per evaluation; false: the identity
}
_POWER_OF_TWO = {"nnCacheSizePowerOfTwo"}
# Read by the analysis front end itself.
_ANALYSIS = {"reportAnalysisWinratesAs", "wideRootNoise", "rootPolicyTemperature", "rootPolicyTemperatureEarly",
             "analysisPVLen", "numAnalysisThreads"}
# Accepted without a word: they only steer KataGo's logging, files or hardware, which miai does not have.
_SILENT = {"homeDataDir", "logDir", "logFile", "logToStderr", "logToStdout", "logAllRequests", "logAllResponses",
           "logSearchInfo", "logErrorsAndWarnings", "logTimeStamp", "logConfigContents", "warnUnusedFields"}
# KataGo parameters (cpp/program/setup.cpp, v1.17.2) that miai has no equivalent for.
_KATAGO_ONLY = frozenset("""
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
""".split()) - set(_MAPPED)


@dataclass(frozen=True)
class AnalysisSettings:
    """Everything a search of the analysis engine is configured by (config file, command line, query overrides)."""

    config: Config = field(default_factory=Config)
    perspective: str = "SIDETOMOVE"  # reportAnalysisWinratesAs: whose view winrates, scores and ownership take
    wide_root_noise: float = 0.0  # wideRootNoise: passed to the search (search.wide_root_noise)
    root_policy_temperature: float = 1.0  # rootPolicyTemperature: root policy ** (1 / T), renormalised
    pv_len: int = 15  # analysisPVLen: moves after the first in each pv
    analysis_threads: int = 1  # numAnalysisThreads: positions searched at once


@dataclass
class Applied:
    """The outcome of applying a group of settings: the new settings and the keys that were not used."""

    settings: AnalysisSettings
    unknown: list[str] = field(default_factory=list)  # neither KataGo's nor miai's
    unsupported: list[str] = field(default_factory=list)  # KataGo's, with no equivalent in miai


def read_katago_config(path: str | Path) -> dict[str, str]:
    """A KataGo config file as ``{key: value}`` (text values; later lines win, as in KataGo).

    Raises:
        SettingsError: the file cannot be read, or a line is neither blank, a comment nor ``key = value``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SettingsError(f"cannot read config {path}: {exc.strerror}") from exc
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"config {path} line {number}: expected key = value, got {raw.strip()!r}")
        values[key.strip()] = value.strip()
    return values


def parse_override_list(text: str) -> dict[str, str]:
    """``-override-config`` text: ``k=v,k=v`` (spaces around either side allowed).

    Raises:
        SettingsError: an item is not ``key=value``.
    """
    values: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"-override-config: expected key=value, got {item.strip()!r}")
        values[key.strip()] = value.strip()
    return values


def base_settings(config_path: str | None) -> tuple[AnalysisSettings, dict[str, str]]:
    """The starting settings: miai's defaults for analysis (no time limit), or a miai TOML config (``*.toml``);
    plus the KataGo-format ``key = value`` pairs of any other config file, still to be applied."""
    if config_path is not None and config_path.endswith(".toml"):
        try:
            return AnalysisSettings(config=load_config(config_path)), {}
        except ConfigError as exc:
            raise SettingsError(str(exc)) from exc
    # KataGo's analysis engine has no time limit unless one is configured; a query that sets no limit at all gets
    # ANALYSIS_MAX_VISITS rather than a search without end.
    config = set_option(set_option(Config(), "search.max_time", 0.0), "search.max_visits", ANALYSIS_MAX_VISITS)
    pairs = read_katago_config(config_path) if config_path is not None else {}
    return AnalysisSettings(config=config), pairs


def apply_settings(settings: AnalysisSettings, values: Mapping[str, Any], *, per_query: bool = False) -> Applied:
    """Apply KataGo-named (or miai dotted) settings; typed JSON values and config-file text both work.

    ``per_query`` applies ``overrideSettings`` of one query: settings that only make sense for the whole engine
    (``numAnalysisThreads`` and the net's: ``nnCacheSizePowerOfTwo``, ``nnRandomize``, ...) then count as
    unsupported.

    Raises:
        SettingsError: a value is out of range or of the wrong type (the message names the key).
    """
    applied = Applied(settings)
    for key, value in values.items():
        try:
            _apply_one(applied, key, value, per_query)
        except (ConfigError, ValueError, TypeError) as exc:
            raise SettingsError(f"{key}: {exc}") from exc
    return applied


def _apply_one(applied: Applied, key: str, value: Any, per_query: bool) -> None:
    settings = applied.settings
    if per_query and (key == "numAnalysisThreads" or _MAPPED.get(key, key).startswith("net.")):
        applied.unsupported.append(key)  # the net and the worker threads are set up once, for every query
    elif key in _ANALYSIS:
        applied.settings = _apply_analysis(settings, key, value)
    elif key in _MAPPED:
        applied.settings = dataclasses.replace(settings, config=_apply_mapped(settings.config, key, value))
    elif "." in key:
        applied.settings = dataclasses.replace(settings, config=set_option(settings.config, key, _text(value)))
    elif key in _SILENT:
        pass
    elif key in _KATAGO_ONLY:
        applied.unsupported.append(key)
    else:
        applied.unknown.append(key)


def _text(value: Any) -> Any:
    """JSON booleans and numbers as miai's parser expects them; strings unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def _apply_mapped(config: Config, key: str, value: Any) -> Config:
    target = _MAPPED[key]
    if key in _POWER_OF_TWO:
        power = int(_number(value))
        if not 0 <= power <= 40:
            raise SettingsError(f"must be an integer from 0 to 40, got {value!r}")
        return set_option(config, target, 1 << power)
    if target == "search.max_visits" or target == "search.max_playouts":
        # KataGo allows up to 2^50; miai reads 0 as "no limit", so huge values stay huge.
        count = int(_number(value))
        if count < 1:
            raise SettingsError(f"must be a positive integer, got {value!r}")
        return set_option(config, target, count)
    if target == "search.max_time":
        seconds = _number(value)
        if seconds < 0:
            raise SettingsError(f"must be >= 0, got {value!r}")
        # KataGo's "1e20 seconds" means no limit, which miai writes as 0.
        return set_option(config, target, 0.0 if seconds >= 1e9 else seconds)
    if key == "nnRandomize":
        return set_option(config, target, "random" if parse_value(_text(value), bool) else "fixed")
    return set_option(config, target, _text(value))


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise SettingsError(f"expected a number, got {value!r}")
    number = float(parse_value(value, float)) if isinstance(value, str) else float(value)
    if not math.isfinite(number):
        raise SettingsError(f"expected a finite number, got {value!r}")
    return number


def _apply_analysis(settings: AnalysisSettings, key: str, value: Any) -> AnalysisSettings:
    if key == "reportAnalysisWinratesAs":
        text = str(value).strip().upper()
        if text not in PERSPECTIVES:
            raise SettingsError(f"must be BLACK, WHITE or SIDETOMOVE, got {value!r}")
        return dataclasses.replace(settings, perspective=text)
    if key == "wideRootNoise":
        noise = _number(value)
        if not 0.0 <= noise <= 5.0:
            raise SettingsError(f"must be a number from 0 to 5, got {value!r}")
        return dataclasses.replace(settings, wide_root_noise=noise)
    if key in ("rootPolicyTemperature", "rootPolicyTemperatureEarly"):
        temperature = _number(value)
        if not 0.01 <= temperature <= 100.0:
            raise SettingsError(f"must be a number from 0.01 to 100, got {value!r}")
        return dataclasses.replace(settings, root_policy_temperature=temperature)
    count = int(_number(value))
    if key == "analysisPVLen":
        if not 1 <= count <= 1000:
            raise SettingsError(f"must be an integer from 1 to 1000, got {value!r}")
        return dataclasses.replace(settings, pv_len=count)
    if not 1 <= count <= 16384:  # numAnalysisThreads
        raise SettingsError(f"must be an integer from 1 to 16384, got {value!r}")
    return dataclasses.replace(settings, analysis_threads=count)


def warning_texts(applied: Applied) -> Iterable[str]:
    """The warning lines KataGo-style (one per kind) for the keys a group of settings did not use."""
    if applied.unknown:
        yield "Unknown config params: " + ",".join(sorted(applied.unknown))
    if applied.unsupported:
        yield ("Config params miai does not support (accepted, no effect): "
               + ",".join(sorted(applied.unsupported)))
