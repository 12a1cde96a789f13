"""KataGo's configuration (config files, -override-config, overrideSettings) read onto miai's settings."""

from __future__ import annotations


import pytest

from miai.engine.analysis.settings import apply_settings, base_settings
from miai.engine.katago_config import KatagoConfigError


def test_mapped_analysis_unsupported_and_unknown_keys() -> None:
    base, _ = base_settings(None)
    assert base.config.search.max_time == 0.0  # no time limit unless configured, as KataGo's analysis engine
    applied = apply_settings(base, {
        "maxVisits": "123", "maxTime": 1e20, "numSearchThreads": 4, "nnCacheSizePowerOfTwo": "10",
        "useLcbForSelection": False, "reportAnalysisWinratesAs": "white", "wideRootNoise": 0.04,
        "analysisPVLen": 7, "numAnalysisThreads": 3, "search.cpuct_exploration": "1.5", "homeDataDir": "/x",
        "playoutDoublingAdvantage": 1.0, "humanSLProfile": "rank_3d", "fooBar": 1})
    s = applied.settings
    assert (s.config.search.max_visits, s.config.search.max_time, s.config.search.batch_size) == (123, 0.0, 4)
    assert s.config.net.cache_size == 1024 and s.config.search.use_lcb is False
    assert s.config.search.cpuct_exploration == 1.5
    assert (s.perspective, s.wide_root_noise, s.pv_len, s.analysis_threads) == ("WHITE", 0.04, 7, 3)
    assert sorted(applied.unsupported) == ["humanSLProfile", "playoutDoublingAdvantage"]
    assert applied.unknown == ["fooBar"]


def test_net_randomisation_and_option_names_declared_on_the_options() -> None:
    base, _ = base_settings(None)
    assert apply_settings(base, {"nnRandomize": "false"}).settings.config.net.symmetry == "fixed"
    assert apply_settings(base, {"nnRandomize": True}).settings.config.net.symmetry == "random"
    applied = apply_settings(base, {"useNoisePruning": False, "subtreeValueBiasFactor": 0.0})
    assert applied.unsupported == [] and applied.settings.config.search != base.config.search


def test_engine_wide_keys_do_nothing_per_query() -> None:
    base, _ = base_settings(None)
    applied = apply_settings(base, {"numAnalysisThreads": 4, "nnRandomize": False}, per_query=True)
    assert sorted(applied.unsupported) == ["nnRandomize", "numAnalysisThreads"] and applied.settings == base


@pytest.mark.parametrize("key, value", [("maxVisits", 0), ("maxTime", -1), ("reportAnalysisWinratesAs", "RED"),
                                        ("wideRootNoise", -0.1), ("rootPolicyTemperature", 0), ("maxVisits", "x"),
                                        ("cpuctExploration", -1), ("useLcbForSelection", "maybe")])
def test_bad_values_name_the_key(key: str, value: object) -> None:
    base, _ = base_settings(None)
    with pytest.raises(KatagoConfigError, match=key):
        apply_settings(base, {key: value})
