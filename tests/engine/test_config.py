"""Config dataclasses: validation, TOML files, overrides, and configs/*.toml kept in step with the code."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest

from miai.engine.config import (
    Config,
    ConfigError,
    GtpSection,
    PlayerConfig,
    SearchConfig,
    katago_names,
    apply_overrides,
    get_option,
    to_toml,
    list_options,
    load_config,
    set_option,
)

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def test_overrides_parse_each_field_type() -> None:
    cfg = apply_overrides(Config(), ["search.max_visits=200", "search.graph=false", "search.max_time=1.5",
                                     "search.child_visits_exceed_edge=leaky", "net.model=b6.onnx"])
    assert cfg.search.max_visits == 200 and cfg.search.graph is False and cfg.search.max_time == 1.5
    assert cfg.search.child_visits_exceed_edge == "leaky" and cfg.net.model == "b6.onnx"
    assert Config().search.max_visits == 0  # the original is unchanged (frozen, copied)


@pytest.mark.parametrize("override, message", [
    ("search.max_visit=3", "did you mean 'search.max_visits'"),
    ("search.max_visits=-1", "^search.max_visits must be >= 0, got -1$"),
    ("search.max_visits=many", "^search.max_visits: cannot read 'many' as an integer$"),
    ("search.graph=maybe", "^search.graph: cannot read 'maybe' as true or false$"),
    ("search.max_time=soon", "^search.max_time: cannot read 'soon' as a number$"),
    ("net.cache_size=-5", "^net.cache_size must be >= 0, got -5$"),
    ("search.child_visits_exceed_edge=sometimes", "one of stop, continue, leaky"),
    ("search.leak_probability=1.5", "<= 1.0"),
    ("search.max_time=nan", "finite"),
    ("max_visits", "section.key=value"),
])
def test_bad_overrides_are_rejected_with_a_clear_message(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_overrides(Config(), [override])


def test_constructor_validates_types() -> None:
    with pytest.raises(ConfigError):
        SearchConfig(max_visits=True)  # a bool is not a count
    with pytest.raises(ConfigError):
        SearchConfig(graph=1)  # type: ignore[arg-type]
    assert SearchConfig(max_time=2).max_time == 2.0  # ints are fine where floats are expected


def test_bare_keys_and_get_option() -> None:
    cfg = set_option(Config(), "max_visits", "77")  # kata-set-param style
    assert get_option(cfg, "search.max_visits") == 77 == get_option(cfg, "max_visits")
    assert set_option(cfg, "search.max_time", 3.0).search.max_time == 3.0


def test_load_config_reads_toml_then_applies_overrides(tmp_path: Path) -> None:
    path = tmp_path / "my.toml"
    path.write_text("[search]\nmax_visits = 50\ngraph = false\n")
    cfg = load_config(path, ["search.max_visits=60"])
    assert cfg.search.max_visits == 60 and cfg.search.graph is False
    path.write_text("[search]\nmax_vists = 50\n")
    with pytest.raises(ConfigError, match="did you mean"):
        load_config(path)
    path.write_text("[serch]\n")
    with pytest.raises(ConfigError, match="unknown config key 'serch'"):
        load_config(path)
    path.write_text("[search\n")
    with pytest.raises(ConfigError, match="cannot parse"):
        load_config(path)
    with pytest.raises(ConfigError, match="missing.toml: no such file$"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="no-dir/x.toml: no such directory .*no-dir$"):
        load_config(tmp_path / "no-dir" / "x.toml")
    with pytest.raises(ConfigError, match=r"no bundled config has that name \(analysis, default"):
        load_config("analysys")


def test_to_dict_round_trips() -> None:
    cfg = apply_overrides(Config(), ["search.batch_size=8"])
    assert Config.from_dict(cfg.to_dict()) == cfg


def test_default_toml_lists_every_option_with_its_default() -> None:
    with open(CONFIGS / "default.toml", "rb") as handle:
        data = tomllib.load(handle)
    assert Config.from_dict(data) == Config()
    in_file = {f"{section}.{key}" for section, table in data.items() for key in table}
    assert in_file == {info.key for info in list_options()}


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path) -> None:
    assert isinstance(load_config(path), Config)


def test_every_option_has_help() -> None:
    for info in list_options():
        assert info.help, info.key
    assert all(dataclasses.is_dataclass(c) for c in (Config, SearchConfig))


def test_player_options_have_one_spelling(tmp_path: Path) -> None:
    # They were [search] options in 0.1.0 development; the old spelling is an unknown key like any other.
    with pytest.raises(ConfigError, match="unknown config key 'search.ponder'"):
        set_option(Config(), "search.ponder", "true")
    toml = tmp_path / "old.toml"
    toml.write_text("[search]\nlag_buffer = 3.0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="search.lag_buffer"):
        load_config(toml)
    with pytest.raises(ConfigError, match="unknown config key 'net.ponder'"):
        set_option(Config(), "net.ponder", "true")


def test_katago_names_follow_the_options_to_their_new_section() -> None:
    names = katago_names()
    assert names["resignThreshold"] == "player.resign_threshold" and names["ponderingEnabled"] == "player.ponder"
    assert names["maxVisits"] == "search.max_visits"


def test_gtp_section_defaults_are_the_gtp_layers_and_bad_values_are_config_errors() -> None:
    from miai.engine.cli.compose import gtp_settings
    from miai.gtp.config import GtpConfig

    assert gtp_settings(GtpSection(), ponder=False) == GtpConfig()
    gtp = apply_overrides(Config(), ["gtp.board_size=9", "gtp.komi=6.5", "gtp.rules=japanese", "player.ponder=true"])
    made = gtp_settings(gtp.gtp, ponder=gtp.player.ponder)
    assert (made.board_size, made.komi, made.rules, made.ponder) == (9, 6.5, "japanese", True)
    with pytest.raises(ConfigError, match="gtp.board_size must be <= 25"):
        set_option(Config(), "gtp.board_size", "26")
    with pytest.raises(ConfigError, match="^gtp.rules: unknown rules: 'no-such-rules'"):
        set_option(Config(), "gtp.rules", "no-such-rules")
    with pytest.raises(ConfigError, match="^gtp.name must be one word"):
        GtpSection(name="two words")


def test_to_toml_writes_what_load_config_reads_back(tmp_path: Path) -> None:
    cfg = apply_overrides(Config(), ["search.batch_size=4", "search.max_time=2.5", "player.ponder=true",
                                     'gtp.name=bot"x', "net.providers=A,B", "gtp.komi=6"])
    every = [info.key for info in list_options(cfg)]
    path = tmp_path / "all.toml"
    path.write_text(to_toml(cfg, every, "a header\nof two lines"), encoding="utf-8")
    assert load_config(path) == cfg
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# a header\n# of two lines\n")
    assert "# keep searching on the opponent's time\nponder = true\n" in text
    some = tmp_path / "some.toml"
    some.write_text(to_toml(cfg, ["search.batch_size"]), encoding="utf-8")
    assert tomllib.loads(some.read_text(encoding="utf-8")) == {"search": {"batch_size": 4}}
    with pytest.raises(ConfigError, match="unknown config key 'search.batch'"):
        to_toml(cfg, ["search.batch"])
