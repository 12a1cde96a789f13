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
    assert kind("logDir") == "silent"
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
