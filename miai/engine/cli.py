"""The ``miai`` command line: the composition root that wires config -> evaluator -> search -> player -> GTP.

Subcommands: ``gtp`` (play or analyse through GTP), ``analysis`` (KataGo's JSON analysis engine), ``convert`` (KataGo model -> ONNX), ``bench`` (rules, playout,
net and search speed), ``match`` (engine-vs-engine games over GTP). Nothing but GTP ever goes to stdout from
``miai gtp``; diagnostics go to stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

import click

from miai import __version__
from miai.engine.config import (
    Config, ConfigError, apply_overrides, bundled_config_names, chosen_keys, load_config,
)
from miai.go.rules import Rules
from miai.oserrors import describe

log = logging.getLogger("miai")

# The nets miai ships live here as .onnx files with a JSON manifest each (see miai.nets.bundled).
DEFAULT_NET_DIR = Path(__file__).resolve().parent.parent / "nets" / "default"
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
    """An evaluator for ``model``: ``default``, ``playouts[:N][:priors]``, ``uniform``, an .onnx or KataGo file, or a
    folder of nets with manifests (as ``miai/nets/default``).

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
        if model == "default":  # one bundled net per range of board sizes
            return load_bundled(DEFAULT_NET_DIR, cache_capacity=config.net.cache_size, **options)
        folder = Path(model).expanduser()
        if folder.is_dir():  # a folder of nets with manifests, like miai/nets/default
            if not bundled_nets(folder):
                raise EvaluatorError("is a directory, not a net file (nor a folder of nets with manifests, "
                                     "like miai/nets/default)")
            return load_bundled(folder, cache_capacity=config.net.cache_size, **options)
        if PlayoutEvaluator.is_spec(model):
            return PlayoutEvaluator.from_spec(model, seed=config.search.seed or None,
                                              amaf=config.search.rave_equivalence > 0)
        return load_evaluator(model, cache_capacity=config.net.cache_size, progress=bar, **options)
    except (OSError, EvaluatorError, PlayoutError, ValueError) as exc:
        raise click.ClickException(f"cannot load model {model}: {_problem(exc, model)}") from exc
    finally:
        if bar is not None:
            bar.close()


def _problem(error: Exception, path: str) -> str:
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
    return {"intra_op_threads": net_threads(config), "symmetry_mode": net.symmetry,
            "policy_optimism": net.policy_optimism, "seed": config.search.seed or None,
            "providers": net.providers, "allow_cpu_fallback": net.allow_cpu_fallback, "precision": net.precision}


def net_threads(config: Config) -> int:
    """onnxruntime threads for one net call: ``net.threads``, or one per CPU core (at most 4) when 0."""
    return config.net.threads or max(1, min(os.cpu_count() or 1, 4))


def playout_defaults(config: Config, evaluator: Any, config_path: str | None, sets: tuple[str, ...]) -> Config:
    """Classic Monte-Carlo settings when the evaluator is random playouts, unless the user chose otherwise.

    PUCT trusts the policy, and a playout evaluator's policy is uniform: with noisy one-playout values PUCT then
    commits to whichever moves got lucky first. UCB1-TUNED tries every move once and explores by the observed
    variance, and the final move is the most visited one (no LCB), as classic MCTS engines did. RAVE (MoGo's
    all-moves-as-first values, ``search.rave_equivalence`` 1000) won 8-0 against plain UCB1-TUNED at equal playouts
    (docs/benchmarks.md), so it is on too; the evaluator then records first moves.
    """
    from miai.nets.playouts import PlayoutEvaluator

    if not isinstance(evaluator, PlayoutEvaluator):
        return config
    try:
        chosen = chosen_keys(config_path, sets)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    defaults = (("search.selection", "ucb1-tuned"), ("search.use_lcb", "false"), ("search.rave_equivalence", "1000"))
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
              "an .onnx file, or playouts[:N][:priors][:tactical] for no net. Default: miai's bundled nets. "
              "KataGo's nets are published at https://katagotraining.org/networks/.")
RULES_HELP = (f"Rules: a preset ({', '.join(Rules.preset_names())}), or a JSON object or compact string as "
              "for kata-set-rules.")
CONFIG_HELP = ("TOML config: a file, or the name of a config installed with miai "
               f"({', '.join(bundled_config_names())}); 'default' lists every option.")


def _load_config(config_path: str | None, sets: tuple[str, ...]) -> Config:
    try:
        return load_config(config_path, sets)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group()
@click.version_option(__version__, prog_name="miai")
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["debug", "info", "warning", "error"]), help="Logging level (stderr).")
def main(log_level: str) -> None:
    """miai: a Go engine with Monte-Carlo graph search and KataGo-compatible nets."""
    logging.basicConfig(level=log_level.upper(), stream=sys.stderr, format="miai %(levelname)s %(message)s")


@main.command()
@click.option("--model", default=None, help=MODEL_HELP)
@click.option("--config", "config_path", default=None, type=click.Path(dir_okay=False),
              help=CONFIG_HELP)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key, e.g. search.max_visits=800.")
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25), help="Board size at start.")
@click.option("--komi", default=7.5, show_default=True, type=float, help="Komi at start.")
@click.option("--rules", default="tromp-taylor", show_default=True,
              help=RULES_HELP + " Controllers may change it later (kata-set-rules, SGF RU).")
@click.option("--name", default="miai", show_default=True, help="Engine name reported by GTP `name`.")
def gtp(model: str | None, config_path: str | None, sets: tuple[str, ...], size: int, komi: float, rules: str,
        name: str) -> None:
    """Speak GTP on stdin/stdout (for Sabaki, Lizzie, KaTrain, gtp2ogs, kgsGtp, twogtp, ...)."""
    from miai.engine.player import EnginePlayer
    from miai.gtp.session import GtpConfig, GtpSession

    config = _load_config(config_path, sets)
    evaluator = build_evaluator(model or config.net.model, config)
    config = playout_defaults(config, evaluator, config_path, sets)
    player = EnginePlayer(evaluator, config)
    try:
        gtp_config = GtpConfig(name=name, board_size=size, komi=komi, rules=rules, ponder=config.search.ponder)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    session = GtpSession(player, sys.stdin, sys.stdout, sys.stderr, gtp_config)
    player.warm_up(session.state)  # the net's first run on the start size, before any clock runs
    sys.exit(session.run())


@main.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--board-size", default=None, type=click.IntRange(2, 25),
              help="Fix the board size in the ONNX graph (default: dynamic).")
def convert(source: str, target: str, board_size: int | None) -> None:
    """Convert a KataGo model file (versions 8-17) to ONNX."""
    from miai.nets.convert import convert_model

    if not Path(target).resolve().parent.is_dir():  # say so before a long conversion; never create directories
        raise click.ClickException(f"cannot write {target}: {describe(FileNotFoundError(), Path(target))}")
    bar = ProgressBar("converting")
    try:
        convert_model(source, target, board_size=board_size, progress=bar)
    except Exception as exc:  # every converter error carries a message naming the file and the problem
        raise click.ClickException(f"cannot convert {source}: {_problem(exc, source)}") from exc
    finally:
        bar.close()
    click.echo(f"wrote {target}", err=True)


from miai.engine import cli_tools  # noqa: E402  (registers bench and match on `main`)
from miai.engine import cli_train  # noqa: E402,F401  (registers `miai train` on `main`)
from miai.engine import cli_analysis  # noqa: E402,F401  (registers `miai analysis` on `main`)

__all__ = ["main", "build_evaluator", "default_net", "NO_DEFAULT_NET", "cli_tools"]

