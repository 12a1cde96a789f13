"""KataGo's configuration as the analysis engine reads it: config files, ``-override-config`` and ``overrideSettings``.

KataGo's names, config files and overrides are read by miai.engine.katago_config (shared with ``miai gtp`` and
``kata-set-param``). This module adds the settings the analysis front end applies itself
(``reportAnalysisWinratesAs``, ``wideRootNoise``, ``rootPolicyTemperature``, ``analysisPVLen``,
``numAnalysisThreads``) and the analysis engine's defaults (no time limit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from miai.engine.config import Config, ConfigError, load_config, set_option
from miai.engine.katago_config import KatagoConfigError, apply_katago, kind, miai_key, number, read_katago_config

__all__ = ["AnalysisSettings", "apply_settings", "base_settings", "PERSPECTIVES"]

PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")
# Visits of a query without maxVisits (KataGo's example analysis config has 500; miai's GTP capped moves at 1,600).
ANALYSIS_MAX_VISITS = 1600


# Read by the analysis front end itself.
_ANALYSIS = {"reportAnalysisWinratesAs", "wideRootNoise", "rootPolicyTemperature", "rootPolicyTemperatureEarly",
             "analysisPVLen", "numAnalysisThreads"}


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


def base_settings(config_path: str | None) -> tuple[AnalysisSettings, dict[str, str]]:
    """The starting settings: miai's defaults for analysis (no time limit), or a miai TOML config (``*.toml``);
    plus the KataGo-format ``key = value`` pairs of any other config file, still to be applied."""
    if config_path is not None and config_path.endswith(".toml"):
        try:
            return AnalysisSettings(config=load_config(config_path)), {}
        except ConfigError as exc:
            raise KatagoConfigError(str(exc)) from exc
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
        KatagoConfigError: a value is out of range or of the wrong type (the message names the key).
    """
    applied = Applied(settings)
    for key, value in values.items():
        try:
            _apply_one(applied, key, value, per_query)
        except (ConfigError, ValueError, TypeError) as exc:
            raise KatagoConfigError(f"{key}: {exc}") from exc
    return applied


def _apply_one(applied: Applied, key: str, value: Any, per_query: bool) -> None:
    settings = applied.settings
    kind_ = kind(key)
    target = miai_key(key) or ""
    if per_query and (key == "numAnalysisThreads" or target.startswith("net.")):
        applied.unsupported.append(key)  # the net and the worker threads are set up once, for every query
    elif key in _ANALYSIS:
        applied.settings = _apply_analysis(settings, key, value)
    elif kind_ == "mapped" and target.startswith(("gtp.", "player.")):
        applied.unsupported.append(key)  # a game's rules, board and resignation: queries carry or need none
    elif kind_ == "mapped" and target.startswith("log."):
        pass  # KataGo's log files (logDir, ...): the analysis engine's messages go to stderr, as KaTrain reads them
    elif kind_ in ("mapped", "miai"):
        applied.settings = dataclasses.replace(settings, config=apply_katago(settings.config, key, value))
    elif kind_ == "katago-only":
        applied.unsupported.append(key)
    elif kind_ == "unknown":
        applied.unknown.append(key)


def _apply_analysis(settings: AnalysisSettings, key: str, value: Any) -> AnalysisSettings:
    if key == "reportAnalysisWinratesAs":
        text = str(value).strip().upper()
        if text not in PERSPECTIVES:
            raise KatagoConfigError(f"must be BLACK, WHITE or SIDETOMOVE, got {value!r}")
        return dataclasses.replace(settings, perspective=text)
    if key == "wideRootNoise":
        noise = number(value)
        if not 0.0 <= noise <= 5.0:
            raise KatagoConfigError(f"must be a number from 0 to 5, got {value!r}")
        return dataclasses.replace(settings, wide_root_noise=noise)
    if key in ("rootPolicyTemperature", "rootPolicyTemperatureEarly"):
        temperature = number(value)
        if not 0.01 <= temperature <= 100.0:
            raise KatagoConfigError(f"must be a number from 0.01 to 100, got {value!r}")
        return dataclasses.replace(settings, root_policy_temperature=temperature)
    count = int(number(value))
    if key == "analysisPVLen":
        if not 1 <= count <= 1000:
            raise KatagoConfigError(f"must be an integer from 1 to 1000, got {value!r}")
        return dataclasses.replace(settings, pv_len=count)
    if not 1 <= count <= 16384:  # numAnalysisThreads
        raise KatagoConfigError(f"must be an integer from 1 to 16384, got {value!r}")
    return dataclasses.replace(settings, analysis_threads=count)


def warning_texts(applied: Applied) -> Iterable[str]:
    """The warning lines KataGo-style (one per kind) for the keys a group of settings did not use."""
    if applied.unknown:
        yield "Unknown config params: " + ",".join(sorted(applied.unknown))
    if applied.unsupported:
        yield ("Config params miai does not support (accepted, no effect): "
               + ",".join(sorted(applied.unsupported)))
