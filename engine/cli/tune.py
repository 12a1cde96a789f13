"""``miai tune``: the net threads, search batch size and backend/precision that play best on this machine for a
net (the most visits per second, the batch weighed against its playouts in flight), written as a config
``miai gtp --config FILE`` reads, as KataGo's ``benchmark`` and ``genconfig`` do.

genconfig's questions are options here: the board size, the time (or the visits) per move, pondering. The
measurement is miai.engine.bench.tune's; the backend/precision pairs tried are those ``net.backend=auto`` chooses
among (the ones that pass the precision gate, miai.nets.loading.gate_passing_pairs), and the file is written by
miai.engine.config.to_toml.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from pathlib import Path
from typing import Any

import click

from miai.engine.cli.bench import _counts
from miai.engine.cli.compose import DEFAULT_NET_DIR, build_evaluator, net_threads, problem

# The options the written file sets (the rest keep their defaults, or come from other --config files before it).
WRITTEN = ("gtp.board_size", "search.max_time", "search.max_visits", "search.batch_size", "player.ponder")
NET_WRITTEN = ("net.backend", "net.precision", "net.threads")
DEFAULT_BATCHES = "4,8,16,2"


def default_threads() -> list[int]:
    """Net threads to try: miai's default first (one per core, at most 4), then 1, 2, 4 and every core, up to the
    number of cores."""
    from miai.engine.config import Config

    cores = os.cpu_count() or 1
    tried = [net_threads(Config())] + [t for t in (1, 2, 4, cores) if t <= cores]
    return list(dict.fromkeys(tried))


def _net_file(model: str, size: int) -> Path | None:
    """The net file whose backends are tuned (for a folder of nets, the one that plays ``size``); None for the
    uniform test evaluator, which has none."""
    from miai.nets.bundled import bundled_nets, net_for_size
    from miai.nets.playouts import PlayoutEvaluator

    if model == "uniform":
        return None
    if PlayoutEvaluator.is_spec(model):
        raise click.BadParameter("random playouts have no net to tune; give a net file", param_hint="'--model'")
    folder = DEFAULT_NET_DIR if model == "default" else Path(model).expanduser()
    if folder.is_dir():
        net = net_for_size(bundled_nets(folder), size)
        if net is None:
            where = "miai has no bundled net" if model == "default" else f"{model} holds no net"
            raise click.ClickException(f"{where} for {size}x{size}; give one with --model")
        return net.path
    return Path(model).expanduser()


def _output_path(text: str) -> Path:
    path = Path(text).expanduser()
    if path.suffix.lower() != ".toml":
        raise ValueError(f"{text} must end in .toml (miai reads other names as KataGo's key = value format)")
    return path


@click.command("tune")
@click.option("-model", "--model", default="default", show_default=True,
              help="The net to tune for: a KataGo model file, an .onnx file, a folder of nets, or 'default' (miai's "
                   "bundled nets).")
@click.option("-o", "--output", default="tuned.toml", show_default=True, metavar="FILE.toml",
              help="The config file to write (miai's TOML).")
@click.option("--force", is_flag=True, help="Replace the output file if it exists.")
@click.option("--size", default=19, show_default=True, type=click.IntRange(2, 25),
              help="Board size to measure on and to start with (gtp.board_size).")
@click.option("--time", "move_time", default=None, type=click.FloatRange(0, min_open=True),
              help="Seconds per move (search.max_time); clocks set over GTP may lower it. [default: 0.9]")
@click.option("--visits", default=None, type=click.IntRange(1),
              help="Instead of --time: visits per move (search.max_visits), with no time limit of its own.")
@click.option("--ponder/--no-ponder", default=False, show_default=True,
              help="Keep searching on the opponent's time (player.ponder).")
@click.option("--threads", "threads_text", default=None, metavar="N,N,...",
              help="Net threads to try. [default: miai's default, 1, 2, 4 and the core count, up to the cores]")
@click.option("--batches", "batches_text", default=DEFAULT_BATCHES, show_default=True, metavar="N,N,...",
              help="Search batch sizes to try (the first is where the other stages start).")
@click.option("--seconds", default=None, type=click.FloatRange(0.05),
              help="Seconds per timed search. [default: 1, or 0.5 with --quick]")
@click.option("--quick", is_flag=True, help="One round per stage instead of two, half-second searches.")
def tune_command(model: str, output: str, force: bool, size: int, move_time: float | None, visits: int | None,
                 ponder: bool, threads_text: str | None, batches_text: str, seconds: float | None,
                 quick: bool) -> None:
    """Find the net threads, batch size and backend/precision that play best here; write a config.

    Like KataGo's benchmark and genconfig: the backend and threads with the most visits/s, then the batch size whose
    speed outweighs what its playouts in flight cost (KataGo's Elo estimate for search threads, at --time or
    --visits a move). Prints what it tried (setting, visits/s, ratio to the fastest, Elo), what it chose, and writes
    FILE.toml for miai gtp --config FILE.toml. Only backend/precision pairs that pass the precision
    gate (those net.backend=auto chooses among) are tried.
    """
    from miai.engine.bench.tune import chosen, print_trials, tune
    from miai.engine.config import Config, to_toml
    from miai.nets import EvaluatorError
    from miai.nets.evaluator import innermost
    from miai.nets.loading import gate_passing_pairs

    if move_time is not None and visits is not None:
        raise click.UsageError("give --time or --visits, not both")
    try:
        path = _output_path(output)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--output'") from None
    if path.exists() and not force:
        raise click.ClickException(f"{output} exists; give --force to replace it, or another --output")
    if not path.resolve().parent.is_dir():
        raise click.ClickException(f"cannot write {output}: its folder does not exist")
    batches = _parse(batches_text, "batch sizes", "--batches")
    net_file = _net_file(model, size)
    threads = _parse(threads_text, "thread counts", "--threads") if threads_text else default_threads()
    pairs: list[tuple[str, str]] = []
    if net_file is not None:
        try:
            pairs, _rejected = gate_passing_pairs(net_file, options={"intra_op_threads": net_threads(Config())})
        except (OSError, EvaluatorError, ValueError) as exc:
            raise click.ClickException(f"cannot load model {model}: {problem(exc, str(net_file))}") from exc
    else:
        threads = [0]  # the uniform evaluator has no threads
    base = Config()

    def open_net(backend: str | None, precision: str | None, count: int) -> Any:
        config = base
        if backend is not None and precision is not None:
            net = dataclasses.replace(base.net, backend=backend, precision=precision, threads=count, cache_size=0)
            config = dataclasses.replace(base, net=net)
        return innermost(build_evaluator(model, config, progress=False), size)

    def progress(line: str) -> None:
        click.echo(f"tune: {line}", err=True)

    rounds = 1 if quick else 2
    # The batch is weighed against the strength its leaves in flight cost at the moves' length (KataGo's benchmark).
    trials = tune(open_net, pairs, threads, batches, size, seconds or (0.5 if quick else 1.0), rounds,
                  progress=progress, move_seconds=move_time or base.search.max_time or 1.0, move_visits=visits)
    print_trials(trials)
    winner = chosen(trials)
    best = winner.setting
    search = dataclasses.replace(base.search, batch_size=best.batch)
    if visits is not None:
        search = dataclasses.replace(search, max_visits=visits, max_time=0.0)
    elif move_time is not None:
        search = dataclasses.replace(search, max_time=move_time)
    config = dataclasses.replace(base, search=search, gtp=dataclasses.replace(base.gtp, board_size=size),
                                 player=dataclasses.replace(base.player, ponder=ponder))
    keys = list(WRITTEN)
    if best.backend is not None and best.precision is not None:
        config = dataclasses.replace(config, net=dataclasses.replace(
            config.net, backend=best.backend, precision=best.precision, threads=best.threads))
        keys += NET_WRITTEN
    if model != "default":
        written_model = model if model == "uniform" else str(Path(model).expanduser().resolve())
        config = dataclasses.replace(config, net=dataclasses.replace(config.net, model=written_model))
        keys.append("net.model")
    header = (f"Written by miai tune on {time.strftime('%Y-%m-%d')} for {model} on {size}x{size}, measured on "
              f"{_machine()}.\nBest: {best.describe()}, {winner.visits_per_second:,.1f} visits/s. "
              f"Use it with: miai gtp --config {output}")
    try:
        path.write_text(to_toml(config, keys, header), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {output}: {exc.strerror or exc}") from exc
    click.echo(f"chose {best.describe()} ({winner.visits_per_second:,.1f} visits/s); wrote {output}")


def _parse(text: str, what: str, option: str) -> list[int]:
    try:
        return _counts(text, what)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint=f"'{option}'") from None


def _machine() -> str:
    from miai.nets.backends import cpu_model

    return f"{cpu_model() or platform.machine()}, {os.cpu_count() or 1} cores"
