"""KataGo's parameter names, config files and -override-config, read once for every front end."""

from __future__ import annotations

from pathlib import Path

import pytest

from miai.engine.config import Config
from miai.engine.katago_config import (
    KatagoConfigError,
    apply_katago,
    closest_key,
    kind,
    load_configs,
    parse_override_list,
    read_katago_config,
    read_katago_configs,
)


def test_katago_config_files_are_key_value_lines_with_comments(tmp_path: Path) -> None:
    path = tmp_path / "a.cfg"
    path.write_text("# comment\n\nmaxVisits = 400   # trailing\nlogDir=logs\nmaxVisits = 300\n")
    assert read_katago_config(path) == {"maxVisits": "300", "logDir": "logs"}
    path.write_text("maxVisits 400\n")
    with pytest.raises(KatagoConfigError, match="line 1"):
        read_katago_config(path)
    with pytest.raises(KatagoConfigError, match="cannot read"):
        read_katago_config(tmp_path / "missing.cfg")
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(KatagoConfigError, match="not a text file"):
        read_katago_config(path)


def test_several_files_merge_in_order(tmp_path: Path) -> None:
    first, second = tmp_path / "a.cfg", tmp_path / "b.cfg"
    first.write_text("maxVisits = 400\nrules = chinese\n")
    second.write_text("maxVisits = 50\nlagBuffer = 2\n")
    assert read_katago_configs([first, second]) == {"maxVisits": "50", "rules": "chinese", "lagBuffer": "2"}
    assert read_katago_configs([second, first])["maxVisits"] == "400"


def test_override_lists() -> None:
    assert parse_override_list("a=1, b = two,,c=") == {"a": "1", "b": "two", "c": ""}
    with pytest.raises(KatagoConfigError):
        parse_override_list("a=1,b")


def test_kinds_of_names() -> None:
    assert kind("maxVisits") == "mapped" and kind("numSearchThreads") == "mapped"
    assert kind("search.max_visits") == "miai"
    assert kind("logDir") == "mapped" and kind("logToStderr") == "silent"
    assert kind("playoutDoublingAdvantage") == "katago-only"
    assert kind("maxVisit") == "unknown"


def test_values_are_converted_as_katago_means_them() -> None:
    config = Config()
    assert apply_katago(config, "maxVisits", "400").search.max_visits == 400
    assert apply_katago(config, "maxTime", "1e20").search.max_time == 0.0  # KataGo's "no limit"
    assert apply_katago(config, "nnCacheSizePowerOfTwo", 10).net.cache_size == 1024
    assert apply_katago(config, "nnRandomize", "false").net.symmetry == "fixed"
    assert apply_katago(config, "useLcbForSelection", False).search.use_lcb is False
    assert apply_katago(config, "search.batch_size", "8").search.batch_size == 8
    for name, value in [("maxVisits", "0"), ("maxVisits", "many"), ("nnCacheSizePowerOfTwo", "41"),
                        ("cpuctExploration", "-1"), ("useLcbForSelection", "maybe")]:
        with pytest.raises(KatagoConfigError):
            apply_katago(config, name, value)
    with pytest.raises(KatagoConfigError, match="not a parameter miai can set"):
        apply_katago(config, "playoutDoublingAdvantage", "1")


def test_probable_typos_name_the_closest_key() -> None:
    assert closest_key("maxVisit") == "maxVisits"
    assert closest_key("maxvisits") == "maxVisits"
    assert closest_key("numSearchThread") == "numSearchThreads"
    assert closest_key("reportAnalysisWinrateAs", extra=["reportAnalysisWinratesAs"]) == "reportAnalysisWinratesAs"
    assert closest_key("completelyDifferent") is None


def test_gtp_example_keys_map_onto_miai_options(tmp_path: Path) -> None:
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text("rules = japanese\nallowResignation = false\nresignThreshold = -0.80\nresignConsecTurns = 5\n"
                   "ponderingEnabled = true\nlagBuffer = 2.5\ndefaultBoardSize = 13\nmaxTime = 7\n"
                   "logDir = gtp_logs\ncudaDeviceToUseThread0 = 0\n")
    loaded = load_configs([cfg])
    config = loaded.config
    assert config.gtp.rules == "japanese" and config.gtp.board_size == 13
    assert config.player.resign_threshold == 0.0  # allowResignation = false, wherever it stands in the file
    assert config.player.resign_consecutive == 5 and config.player.ponder and config.player.lag_buffer == 2.5
    assert config.search.max_time == 7.0
    assert loaded.unsupported == ("cudaDeviceToUseThread0",) and loaded.unknown == ()
    assert {"gtp.rules", "player.resign_threshold", "search.max_time"} <= loaded.chosen
    assert load_configs([], ["resignThreshold=-0.8"]).config.player.resign_threshold == pytest.approx(0.1)


def test_rules_key_by_key(tmp_path: Path) -> None:
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text("koRule = SIMPLE\nscoringRule = TERRITORY\ntaxRule = SEKI\nmultiStoneSuicideLegal = false\n"
                   "whiteHandicapBonus = 0\n")
    assert load_configs([cfg]).config.gtp.rules == "japanese"
    cfg.write_text("rules = chinese\nhasButton = true\n")
    assert '"hasButton": true' in load_configs([cfg]).config.gtp.rules


def test_configs_merge_in_order_then_overrides_then_sets(tmp_path: Path) -> None:
    first, second, toml = tmp_path / "a.cfg", tmp_path / "b.cfg", tmp_path / "c.toml"
    first.write_text("maxVisits = 400\nlagBuffer = 3\nmaxVisit = 5\nplayoutDoublingAdvantage = 1\n")
    second.write_text("maxVisits = 50\nfooBar = 1\n")
    toml.write_text("[player]\nlag_buffer = 4.0\n")
    loaded = load_configs([first, second])
    assert (loaded.config.search.max_visits, loaded.config.player.lag_buffer) == (50, 3.0)
    assert loaded.unknown == (("maxVisit", "maxVisits"), ("fooBar", None))
    assert loaded.warnings() == ["config keys miai does not use (no effect): playoutDoublingAdvantage",
                                 "unknown config key maxVisit, probably a typo of maxVisits",
                                 "unknown config key fooBar"]
    assert load_configs([second, first]).config.search.max_visits == 400
    assert load_configs([first, toml]).config.player.lag_buffer == 4.0
    assert load_configs([toml, first]).config.player.lag_buffer == 3.0
    loaded = load_configs([first], ["maxVisits=7"], ["search.max_visits=9"])
    assert loaded.config.search.max_visits == 9
    assert load_configs([first], ["maxVisits=7"]).config.search.max_visits == 7
    assert load_configs(["analysis"]).config == load_configs(["analysis.toml"]).config  # bundled by name


def test_load_errors_name_the_file_or_option(tmp_path: Path) -> None:
    cfg = tmp_path / "a.cfg"
    cfg.write_text("maxVisits = -3\n")
    with pytest.raises(KatagoConfigError, match=f"config {cfg}: maxVisits: must be a positive integer"):
        load_configs([cfg])
    with pytest.raises(KatagoConfigError, match="-override-config: resignThreshold: must be a number from -1 to 0"):
        load_configs([], ["resignThreshold=0.5"])
    with pytest.raises(KatagoConfigError, match="max_visitz"):
        load_configs([], [], ["search.max_visitz=3"])
    with pytest.raises(KatagoConfigError, match="no such file"):
        load_configs([tmp_path / "missing.toml"])
