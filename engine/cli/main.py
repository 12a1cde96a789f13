"""The ``miai`` command line: the composition root that wires config -> evaluator -> search -> player -> GTP.

Subcommands: ``gtp`` (play or analyse through GTP), ``analysis`` (KataGo's JSON analysis engine), ``convert`` (KataGo
model -> ONNX), ``bench`` (every speed figure; cli/bench.py), ``match`` (engine-vs-engine games over GTP),
``train`` (miai's own nets), ``tune`` (the fastest net threads, batch and backend here, written as a config;
cli/tune.py), ``version`` (the install, the CPU and the backend; cli/version.py). The group here
imports each subcommand's module; none of them imports this one. Nothing but GTP ever goes to stdout from ``miai
gtp``; diagnostics go to stderr.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn, TypedDict

import click

from miai.engine.cli import analysis, bench, tools, train, tune, version as version_cli
from miai.engine.cli.compose import (
    MODEL_HELP, RULES, RULES_HELP, ProgressBar, build_evaluator, config_options, gtp_settings, load_config_or_fail,
    playout_defaults, problem,
)
from miai.engine.cli.logs import add_log_level, close_log_file, log_level_option, open_log_file
from miai.engine.config import ConfigError
from miai.go.oserrors import describe


class _GtpFlags(TypedDict, total=False):
    """The [gtp] settings ``miai gtp``'s flags override."""

    board_size: int
    komi: float
    rules: str
    name: str


@click.group()
@click.version_option(version("miai"), prog_name="miai")
@log_level_option(default="warning")
def main() -> None:
    """miai: a Go engine with Monte-Carlo graph search and KataGo-compatible nets."""


@main.command()
@click.option("-model", "--model", default=None, help=MODEL_HELP)
@config_options
@click.option("--size", default=None, type=click.IntRange(2, 25),
              help="Board size at start. [default: gtp.board_size of the config]")
@click.option("--komi", default=None, type=float, help="Komi at start. [default: gtp.komi of the config]")
@click.option("--rules", default=None, type=RULES,
              help=RULES_HELP + " Controllers may change it later (kata-set-rules, SGF RU). "
                   "[default: gtp.rules of the config]")
@click.option("--name", default=None, help="Engine name reported by GTP `name`. [default: gtp.name of the config]")
def gtp(model: str | None, config_paths: tuple[str, ...], overrides: tuple[str, ...], sets: tuple[str, ...],
        size: int | None, komi: float | None, rules: str | None, name: str | None) -> None:
    """Speak GTP on stdin/stdout (for Sabaki, Lizzie, KaTrain, gtp2ogs, kgsGtp, twogtp, ...).

    KataGo's command line works as it is: miai gtp -model NET -config gtp.cfg [-override-config k=v,k=v]. The
    [gtp] section of the config (KataGo's rules, defaultBoardSize) sets the start position and the name; the flags
    override it.
    """
    from miai.engine.player import EnginePlayer
    from miai.gtp.session import GtpSession

    loaded = load_config_or_fail(config_paths, sets, overrides)
    config = loaded.config
    open_log_file(config.log, "miai " + " ".join(sys.argv[1:]))
    flags: _GtpFlags = {}
    if size is not None:
        flags["board_size"] = size
    if komi is not None:
        flags["komi"] = komi
    if rules is not None:
        flags["rules"] = rules
    if name is not None:
        flags["name"] = name
    try:
        gtp_config = gtp_settings(dataclasses.replace(config.gtp, **flags), ponder=config.player.ponder)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    evaluator = build_evaluator(model or config.net.model, config)
    config = playout_defaults(config, evaluator, loaded.chosen)
    player = EnginePlayer(evaluator, config)
    session = GtpSession(player, sys.stdin, sys.stdout, sys.stderr, gtp_config)
    player.warm_up(session.state)  # the net's first run on the start size, before any clock runs
    _end_session(session.run())


def _end_session(code: int) -> NoReturn:
    """End ``miai gtp`` once its session is over (``quit`` answered, or the input closed).

    In a process of its own (stdin and stdout are the process's) the process ends at once, its log file closed and
    its streams flushed first: the graph, the evaluation cache and the net's runtime are not taken apart object by
    object, nor is the net's thread waited for while it finishes a batch the search gave up. That teardown took
    0.3-0.6 s after ``quit`` was answered on a machine with two busy processes per core, and longer with a bigger
    graph, while a controller waits for the engine to exit before it starts the next game or closes. Under a test
    runner that swaps the streams, the command returns as any other does.
    """
    if sys.stdin is not sys.__stdin__ or sys.stdout is not sys.__stdout__:
        sys.exit(code)
    close_log_file()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed stream has nothing left to flush
            pass
    os._exit(code)


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
        raise click.ClickException(f"cannot convert {source}: {problem(exc, source)}") from exc
    finally:
        bar.close()
    click.echo(f"wrote {target}", err=True)


main.add_command(bench.bench)
main.add_command(tools.match)
main.add_command(train.train)
main.add_command(analysis.analysis)
main.add_command(version_cli.version_command)
main.add_command(tune.tune_command)
add_log_level(main)  # --log-level after any sub-command too (miai gtp --log-level debug)

__all__ = ["main"]
