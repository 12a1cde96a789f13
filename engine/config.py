"""Engine configuration: frozen dataclasses, TOML files and ``key=value`` overrides.

The search's own section, :class:`SearchConfig`, and :func:`option` live in miai.engine.core.config (the search core
reads them); this module adds the other sections and reads files and overrides for all of them.

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
import tomllib
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from miai.engine.core.config import STRINGS, ConfigError, SearchConfig, check_fields, option
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
        check_fields(self)


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
        check_fields(self)
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
    # The planes' compiled kernels (ladders, liberties, area) run without the GIL, so several threads can encode a
    # batch's positions at once; in a search the Python around them dominates and one thread is faster
    # (docs/benchmarks.md, "Encoding a batch in threads"), hence 1.
    encode_threads: int = option(1, "threads that encode a batch's positions for the net (0 = one per CPU core)",
                                 min=0)
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
        check_fields(self)


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
        check_fields(self)


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
