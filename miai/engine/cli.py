"""The ``miai`` command line: the composition root that wires config -> evaluator -> search -> player -> GTP.

Subcommands: ``gtp`` (play or analyse through GTP), ``convert`` (KataGo model -> ONNX), ``bench`` (rules, playout,
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
from miai.engine.config import Config, ConfigError, apply_overrides, load_config

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
    """An evaluator for ``model``: ``default``, ``playouts[:N][:priors]``, ``uniform``, an .onnx or KataGo file.

    Raises:
        click.ClickException: the model cannot be loaded (the message names the file and the problem).
    """
    from miai.nets import EvaluatorError, load_evaluator
    from miai.nets.bundled import load_bundled
    from miai.nets.playouts import PlayoutError, PlayoutEvaluator

    try:
        if model == "default" and default_net() is None:
            click.echo(NO_DEFAULT_NET, err=True)
            return PlayoutEvaluator.from_spec("playouts:4", seed=config.search.seed or None)
        net = config.net
        options = {"intra_op_threads": net_threads(config), "providers": net.providers,
                   "allow_cpu_fallback": net.allow_cpu_fallback, "precision": net.precision}
        if model == "default":  # one bundled net per range of board sizes
            return load_bundled(DEFAULT_NET_DIR, cache_capacity=net.cache_size, **options)
        if PlayoutEvaluator.is_spec(model):
            return PlayoutEvaluator.from_spec(model, seed=config.search.seed or None)
        return load_evaluator(model, cache_capacity=net.cache_size,
                              progress=_progress_callback("converting") if progress else None, **options)
    except (OSError, EvaluatorError, PlayoutError, ValueError) as exc:
        raise click.ClickException(f"cannot load model {model}: {exc}") from exc


def net_threads(config: Config) -> int:
    """onnxruntime threads for one net call: ``net.threads``, or one per CPU core (at most 4) when 0."""
    return config.net.threads or max(1, min(os.cpu_count() or 1, 4))


def playout_defaults(config: Config, evaluator: Any, config_path: str | None, sets: tuple[str, ...]) -> Config:
    """Classic Monte-Carlo settings when the evaluator is random playouts, unless the user chose otherwise.

    PUCT trusts the policy, and a playout evaluator's policy is uniform: with noisy one-playout values PUCT then
    commits to whichever moves got lucky first. UCB1-TUNED tries every move once and explores by the observed
    variance, and the final move is the most visited one (no LCB), as classic MCTS engines did.
    """
    from miai.nets.playouts import PlayoutEvaluator

    if not isinstance(evaluator, PlayoutEvaluator):
        return config
    chosen = " ".join(sets) + (Path(config_path).read_text(encoding="utf-8") if config_path else "")
    overrides = [item for key, item in (("selection", "search.selection=ucb1-tuned"),
                                         ("use_lcb", "search.use_lcb=false")) if key not in chosen]
    return apply_overrides(config, overrides)


def _progress_callback(label: str) -> Any:
    """A converter progress callback, ``callback(fraction_done, stage)``, that draws a bar on stderr."""
    finished = False

    def callback(fraction: float, stage: str = "", *_: Any) -> None:
        nonlocal finished
        if finished:
            return
        width = 30
        filled = int(width * max(0.0, min(fraction, 1.0)))
        click.echo(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {int(100 * fraction):3d}% {stage:<10}",
                   err=True, nl=False)
        if fraction >= 1.0:
            finished = True
            click.echo("", err=True)

    return callback


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
@click.option("--model", default=None, help="KataGo model (.bin.gz, .txt.gz), .onnx file, or playouts[:N][:priors].")
@click.option("--config", "config_path", default=None, type=click.Path(dir_okay=False),
              help="TOML config (see configs/default.toml).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override a config key, e.g. search.max_visits=800.")
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25), help="Board size at start.")
@click.option("--komi", default=7.5, show_default=True, type=float, help="Komi at start.")
@click.option("--rules", default="tromp-taylor", show_default=True, help="Rules preset at start.")
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
    sys.exit(session.run())


@main.command()
@click.argument("source", type=click.Path(exists=True, dir_okay=False))
@click.argument("target", type=click.Path(dir_okay=False))
@click.option("--board-size", default=None, type=click.IntRange(2, 25),
              help="Fix the board size in the ONNX graph (default: dynamic).")
def convert(source: str, target: str, board_size: int | None) -> None:
    """Convert a KataGo model file (versions 8-17) to ONNX."""
    from miai.nets.convert import convert_model

    try:
        convert_model(source, target, board_size=board_size, progress=_progress_callback("converting"))
    except Exception as exc:  # every converter error carries a message naming the file and the problem
        raise click.ClickException(f"cannot convert {source}: {exc}") from exc
    click.echo(f"wrote {target}", err=True)


from miai.engine import cli_tools  # noqa: E402  (registers bench and match on `main`)
from miai.engine import cli_train  # noqa: E402,F401  (registers `miai train` on `main`)

__all__ = ["main", "build_evaluator", "default_net", "NO_DEFAULT_NET", "cli_tools"]

