"""What every ``miai`` subcommand shares: the ``--config``/``--override-config``/``--set`` options, loading configs,
building the evaluator a model names, the progress bar.

The subcommands (``main``, ``tools``, ``bench``, ``train``, ``analysis``) import this module; it imports none of
them. ``config_options`` declares the config options once for ``gtp``, ``match`` and ``bench`` (``analysis`` has its
own ``-config``, which also takes the analysis engine's own keys).

KataGo's single-dash spellings (``-model``, ``-config``, ``-override-config``) are declared beside the double-dash
ones: click reads an option name of more than one letter after a single dash as a long option, so ``-config`` is
never taken for ``-c -o -n ...``.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from miai.engine.config import Config, GtpSection, apply_overrides, bundled_config_names
from miai.engine.katago_config import KatagoConfigError, LoadedConfig, load_configs
from miai.go.rules import Rules
from miai.go.oserrors import describe

if TYPE_CHECKING:
    from miai.gtp.config import GtpConfig

# The nets miai ships: .onnx files with a JSON manifest each, in nets/default (see miai.nets.bundled).
DEFAULT_NET_DIR = Path(__file__).resolve().parents[2] / "nets" / "default"  # nets/default, installed or not
NO_DEFAULT_NET = (
    "miai: no trained default net ships with this version yet, so miai plays with random playouts (weak); "
    "pass a net with --model FILE (a KataGo .bin.gz/.txt.gz model or an .onnx file), "
    "e.g. miai gtp --model g170-b6c96-s175395328-d26788732.bin.gz"
)


def default_net() -> Path | None:
    """The first bundled net, if any is installed (``nets/default/*.onnx``; miai.nets.bundled picks one per size)."""
    from miai.nets.bundled import bundled_nets

    nets = bundled_nets(DEFAULT_NET_DIR)
    return nets[0].path if nets else None


def build_evaluator(model: str, config: Config, *, progress: bool = True) -> Any:
    """An evaluator for ``model``: ``default``, a playout spec (``PlayoutEvaluator.from_spec``), ``uniform``, an
    .onnx or KataGo file, or a folder of nets with manifests (as ``nets/default``).

    Raises:
        click.ClickException: the model cannot be loaded (the message names the file and the problem).
    """
    from miai.nets import EvaluatorError, load_evaluator
    from miai.nets.bundled import bundled_nets, load_bundled
    from miai.nets.playouts import PlayoutError, PlayoutEvaluator

    bar = ProgressBar("converting", note=" (once per net: the result is cached)") if progress else None
    try:
        if model == "default" and default_net() is None:
            click.echo(NO_DEFAULT_NET, err=True)
            return PlayoutEvaluator.from_spec("playouts:4", seed=config.search.seed or None)
        options = net_options(config)
        report = functools.partial(click.echo, err=True)
        cache: dict[str, Any] = {"cache_capacity": config.net.cache_size, "cache_key": config.net.cache_key}
        if model == "default":  # one bundled net per range of board sizes
            return load_bundled(DEFAULT_NET_DIR, report=report, **cache, **options)
        folder = Path(model).expanduser()
        if folder.is_dir():  # a folder of nets with manifests, like nets/default
            if not bundled_nets(folder):
                raise EvaluatorError("is a directory, not a net file (nor a folder of nets with manifests, "
                                     "like nets/default)")
            return load_bundled(folder, report=report, **cache, **options)
        if PlayoutEvaluator.is_spec(model):
            return PlayoutEvaluator.from_spec(model, seed=config.search.seed or None,
                                              amaf=config.search.rave_equivalence > 0, workers=config.net.threads or 1)
        return load_evaluator(model, progress=bar, report=report, **cache, **options)
    except (OSError, EvaluatorError, PlayoutError, ValueError) as exc:
        raise click.ClickException(f"cannot load model {model}: {problem(exc, model)}") from exc
    finally:
        if bar is not None:
            bar.close()


def gtp_settings(section: GtpSection, ponder: bool) -> GtpConfig:
    """The GTP layer's settings from the config's [gtp] section and ``player.ponder`` (the section has checked
    every value)."""
    from miai.gtp.config import GtpConfig

    return GtpConfig(name=section.name, board_size=section.board_size, komi=section.komi, rules=section.rules,
                     ponder=ponder, analysis_interval_cs=section.analysis_interval_cs,
                     exit_on_game_over=section.exit_on_game_over, ogs_chat_to_stderr=section.ogs_chat_to_stderr)


def problem(error: Exception, path: str) -> str:
    """An error's text without the path it starts with (the caller's message names the file already), and an OS
    error without errno numbers."""
    if isinstance(error, OSError) and error.errno is not None:
        return describe(error, path)
    text = str(error)
    for prefix in (f"{path}: ", f"{Path(path).expanduser()}: "):
        text = text.removeprefix(prefix)
    return text


def net_options(config: Config) -> dict[str, Any]:
    """The ``OnnxConfig`` fields the ``[net]`` section sets."""
    net = config.net
    return {"intra_op_threads": net_threads(config), "encode_threads": net.encode_threads or os.cpu_count() or 1,
            "symmetry_mode": net.symmetry,
            "policy_optimism": net.policy_optimism,
            "root_policy_optimism": min(net.root_policy_optimism, net.policy_optimism),
            "passing_hacks": net.passing_hacks, "seed": config.search.seed or None,
            "providers": net.providers, "allow_cpu_fallback": net.allow_cpu_fallback, "backend": net.backend,
            "precision": net.precision}


def net_threads(config: Config) -> int:
    """onnxruntime threads for one net call: ``net.threads``, or one per CPU core (at most 4) when 0."""
    return config.net.threads or max(1, min(os.cpu_count() or 1, 4))


def playout_defaults(config: Config, evaluator: Any, chosen: frozenset[str]) -> Config:
    """Classic Monte-Carlo settings when the evaluator is random playouts, unless the user chose otherwise.

    PUCT trusts the policy, and a playout evaluator's policy is uniform: with noisy one-playout values PUCT then
    commits to whichever moves got lucky first. UCB1-TUNED tries every move once and explores by the observed
    variance, and the final move is the most visited one (no LCB), as classic MCTS engines did; as they did, the
    tree never fills its own true eyes (a uniform prior gives such moves as many tries as any other). RAVE (MoGo's
    all-moves-as-first values, ``search.rave_equivalence`` 1000) won 8-0 against plain UCB1-TUNED at equal playouts
    (docs/benchmarks.md), so it is on too; the evaluator then records first moves. With the playouts in this
    process a batch of leaves buys no speed (each is played on its own), while every leaf chosen under the virtual
    loss of the others is chosen on less information and a third of the descents collide; so one leaf at a time,
    the textbook's sequential MCTS (``search.batch_size`` 1), unless worker processes share the batches.
    """
    from miai.nets.playouts import PlayoutEvaluator

    if not isinstance(evaluator, PlayoutEvaluator):
        return config
    defaults = [("search.selection", "ucb1-tuned"), ("search.use_lcb", "false"), ("search.rave_equivalence", "1000"),
                ("search.forbid_eye_filling", "true")]
    if evaluator.workers == 1:
        defaults.append(("search.batch_size", "1"))
    config = apply_overrides(config, [f"{key}={value}" for key, value in defaults if key not in chosen])
    evaluator.amaf = config.search.rave_equivalence > 0
    return config


class ProgressBar:
    """A converter progress callback, ``bar(fraction_done, stage)``, drawing on stderr.

    On a terminal the bar redraws in place; in a log (stderr not a terminal) carriage returns would pile up, so it
    writes one line when it starts and one when it is done. `close` ends an unfinished bar's line, so an error
    printed next starts on a line of its own.
    """

    width = 30

    def __init__(self, label: str, stream: Any = None, note: str = "") -> None:
        self.label = label
        self.note = note
        self.stream = stream if stream is not None else sys.stderr
        self.animate = self.stream.isatty()
        self.started = self.finished = False

    def __call__(self, fraction: float, stage: str = "", *_: Any) -> None:
        if self.finished:
            return
        done = fraction >= 1.0
        if self.animate:
            filled = int(self.width * max(0.0, min(fraction, 1.0)))
            self._write(f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {int(100 * fraction):3d}% "
                        f"{stage:<10}" + ("\n" if done else ""))
        elif not self.started or done:
            self._write(f"{self.label}: {'done' if done else 'started' + self.note}\n")
        self.started, self.finished = True, done

    def close(self) -> None:
        """End the bar's line if it is still open (an error interrupted it)."""
        if self.started and not self.finished and self.animate:
            self._write("\n")
        self.finished = True

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


MODEL_HELP = ("The net that plays: a KataGo model file (.bin.gz, .bin, .txt.gz; converted to ONNX once and cached), "
              "an .onnx file, or playouts[:N][:priors][:tactical][:noselfatari][:patterns][:largepatterns]"
              "[:knowledge][:locality][:thirdline][:light][:python] for no net (docs/playouts.md). "
              "Default: miai's bundled nets. "
              "KataGo's nets are published at https://katagotraining.org/networks/.")
RULES_HELP = (f"Rules: a preset ({', '.join(Rules.preset_names())}), or a JSON object or compact string as "
              "for kata-set-rules.")
CONFIG_HELP = ("Config file: miai's TOML (*.toml, or the name of a config installed with miai: "
               f"{', '.join(bundled_config_names())}; 'default' lists every option) or KataGo's key = value "
               "format (gtp_example.cfg's keys mapped onto miai's). Repeatable: later files override earlier ones.")
OVERRIDE_HELP = ("KataGo's -override-config: keys to set after the config files, KataGo's names or miai's "
                 "(maxVisits=400,search.batch_size=8). Repeatable.")
SET_HELP = "Override a config key, e.g. search.max_visits=800 (repeatable; applied last)."

_Command = TypeVar("_Command", bound=Callable[..., Any])


if TYPE_CHECKING:  # newer click (8.5) types ParamType by the values it returns and reads; older ones are not generic
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class Parsed(_ParamType):
    """A command-line value read by a parser whose ValueError says in the user's words what is wrong: click then
    prints its own one-line error naming the option (``Invalid value for '--time': ...``)."""

    def __init__(self, metavar: str, parse: Callable[[str], Any]) -> None:
        self.name = metavar
        self.parse = parse

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return self.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, already parsed
        try:
            return self.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _rules_name(text: str) -> str:
    """``text`` if it names rules (kata-set-rules' forms), kept as text for the config."""
    Rules.parse(text)
    return text


RULES = Parsed("RULES", _rules_name)


def config_options(command: _Command) -> _Command:
    """Give a command ``-config``/``--config`` (as ``config_paths``), ``-override-config``/``--override-config``
    (as ``overrides``) and ``--set`` (as ``sets``), declared here once."""
    command = click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help=SET_HELP)(command)
    command = click.option("-override-config", "--override-config", "overrides", multiple=True, metavar="K=V,K=V",
                           help=OVERRIDE_HELP)(command)
    return click.option("-config", "--config", "config_paths", multiple=True, type=click.Path(dir_okay=False),
                        help=CONFIG_HELP)(command)


def load_config_or_fail(config_paths: tuple[str, ...] = (), sets: tuple[str, ...] = (),
                        overrides: tuple[str, ...] = (), *, warn: bool = True) -> LoadedConfig:
    """The config the config options name (KataGo's keys with no effect in miai named once on stderr).

    Raises:
        click.ClickException: it cannot be read, or a key or value is invalid (the message says which).
    """
    try:
        loaded = load_configs(config_paths, overrides, sets)
    except KatagoConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if warn:
        for line in loaded.warnings():
            click.echo(f"miai: {line}", err=True)
    return loaded
