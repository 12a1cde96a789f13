"""``miai analysis``: KataGo's JSON analysis engine, with KataGo's command line.

``miai analysis -model NET -config FILE [-override-config k=v,k=v] [-human-model NET]`` is what KaTrain (and other
tools written for ``katago analysis``) start; the double-dash spellings work too. ``-config`` reads a KataGo config
file (``key = value``, ``#`` comments), or a miai TOML config when its name ends in ``.toml``. Keys miai has no use
for are named once on stderr. Nothing but responses goes to stdout.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import io
import os
import signal
import sys
from typing import TYPE_CHECKING

import click

from miai.engine.cli.compose import build_evaluator

if TYPE_CHECKING:
    from miai.engine.analysis.settings import AnalysisSettings


@click.command()
@click.option("-model", "--model", "model", default=None,
              help="KataGo model (.bin.gz, .txt.gz), .onnx file, 'default' (miai's own nets) or 'uniform'.")
@click.option("-config", "--config", "config_path", default=None, type=click.Path(dir_okay=False),
              help="KataGo analysis config (key = value), or a miai TOML config (*.toml).")
@click.option("-override-config", "--override-config", "overrides", multiple=True, metavar="K=V,K=V",
              help="Config keys to override, KataGo's names (maxVisits=400) or miai's (search.batch_size=8).")
@click.option("-human-model", "--human-model", "human_model", default=None,
              help="Accepted for KataGo compatibility; miai has no human SL model support.")
@click.option("-analysis-threads", "--analysis-threads", "threads", default=None, type=click.IntRange(1, 16384),
              help="Positions analysed at once (numAnalysisThreads).")
@click.option("-quit-without-waiting", "--quit-without-waiting", "quit_without_waiting", is_flag=True,
              help="When stdin closes, stop at once instead of finishing the queued queries.")
def analysis(model: str | None, config_path: str | None, overrides: tuple[str, ...], human_model: str | None,
             threads: int | None, quit_without_waiting: bool) -> None:
    """KataGo's JSON analysis engine: one query per line on stdin, one response per line on stdout."""
    from miai.engine.analysis.server import AnalysisServer
    from miai.engine.analysis.settings import apply_settings, base_settings
    from miai.engine.katago_config import KatagoConfigError, parse_override_list

    try:
        settings, pairs = base_settings(config_path)
        for text in overrides:
            pairs.update(parse_override_list(text))
        if threads is not None:
            if "numAnalysisThreads" in pairs:
                raise KatagoConfigError("give numAnalysisThreads in the config or -analysis-threads, not both")
            pairs["numAnalysisThreads"] = str(threads)
        applied = apply_settings(settings, pairs)
    except KatagoConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    ignored = sorted(applied.unknown + applied.unsupported)
    if ignored:
        click.echo(f"miai analysis: config keys with no effect in miai (ignored): {', '.join(ignored)}", err=True)
    if human_model:
        click.echo(f"miai analysis: -human-model {human_model} ignored (miai has no human SL model support)",
                   err=True)
    settings = _capped_threads(applied.settings)
    name = model or settings.config.net.model

    def load() -> object:
        return build_evaluator(name, settings.config, progress=False)

    if hasattr(signal, "SIGUSR1"):
        # ``kill -USR1 PID`` writes every thread's stack to stderr, even when the engine is stuck: how a client
        # that waited too long (tests/analysis/katrain_driver.py) shows where.
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    if isinstance(sys.stdin, io.TextIOWrapper):
        # A line that is not UTF-8 gets an error answer like any bad line (the server tells it by its surrogates);
        # under a strict UTF-8 locale it would otherwise end the reader, and the engine with it.
        sys.stdin.reconfigure(errors="surrogateescape")
    server = AnalysisServer(load, settings, sys.stdout, sys.stderr, model_name=name,
                            quit_without_waiting=quit_without_waiting)
    sys.exit(server.serve(sys.stdin))


def _capped_threads(settings: AnalysisSettings) -> AnalysisSettings:
    """numAnalysisThreads capped at the CPU count: Python searches share the interpreter lock, so more threads than
    cores only spread the same speed over more positions (KaTrain's config asks for 12)."""
    cores = os.cpu_count() or 1
    if settings.analysis_threads <= cores:
        return settings
    click.echo(f"miai analysis: numAnalysisThreads {settings.analysis_threads} capped at {cores} (CPU cores)",
               err=True)
    return dataclasses.replace(settings, analysis_threads=cores)
