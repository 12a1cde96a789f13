"""``miai match``: engine-vs-engine games over GTP, the command behind every strength figure miai reports."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

import click

from miai.engine.cli.compose import RULES, RULES_HELP, Parsed, build_evaluator, config_options, load_config_or_fail

if TYPE_CHECKING:
    from miai.engine.config import Config
    from miai.go.clock import TimeControl
    from miai.match.elo import SprtConfig
    from miai.match.runner import DeadStones


@click.command()
@click.option("--black", "black_cmd", required=True, help="Engine A's command line (Black in game 1).")
@click.option("--white", "white_cmd", required=True, help="Engine B's command line.")
@click.option("--games", default=2, show_default=True, type=click.IntRange(1),
              help="Games to play (colours alternate, so an even number gives each engine Black equally often).")
@click.option("--first-game", default=1, show_default=True, type=click.IntRange(1),
              help="Resume a schedule: play games N..--games with the openings and colours they have in a full run.")
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 25), help="Board size of every game.")
@click.option("--komi", default=7.5, show_default=True, type=float,
              help="Komi given to White (sent to both engines and used by the referee's count).")
@click.option("--handicap", default=0, show_default=True, type=click.IntRange(0), help="Fixed handicap stones for Black.")
@click.option("--max-moves", default=None, type=click.IntRange(1), help="Score the game after this many moves.")
@click.option("--sprt", default=None, type=Parsed("ELO0,ELO1[,ALPHA,BETA]", lambda text: _parse_sprt(text)),
              help="Run an SPRT of engine A (logistic Elo; pentanomial over game pairs when colours alternate; "
                   "alpha = beta = 0.05 unless given) and stop when it decides.")
@click.option("--rules", default="chinese", show_default=True, type=RULES, help=RULES_HELP + " Used by the referee and sent to "
              "engines that know kata-set-rules.")
@click.option("--time", "times", default=None, type=Parsed("SPEC[,SPEC...]", lambda text: _parse_times(text)),
              help="Clock per engine, in seconds: M (absolute), M+B/S (Canadian), M+PxB (byo-yomi: P periods of B), "
                   "M+If (Fischer: I added a move); several separated by commas are used in turn, game by game.")
@click.option("--visits", default=None, type=click.IntRange(1), help="Sent as kata-set-param maxVisits.")
@click.option("--openings", default=None, type=click.Path(exists=True), help="Openings file or SGF directory.")
@click.option("--sgf-dir", default=None, type=click.Path(file_okay=False), help="Write one SGF per game here.")
@click.option("--alternate/--no-alternate", default=True, show_default=True, help="Swap colours every game.")
@click.option("--move-timeout", default=600.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds before a genmove counts as a hang.")
@click.option("--start-timeout", default=120.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds a freshly started engine may take to answer its first command (loading a net).")
@click.option("--dead-model", default=None,
              help="Net whose ownership marks dead stones when the engines' scores disagree (default: all alive; "
                   "--config/--set's [net] section says how it runs).")
@config_options
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False),
              help="Write the summary as JSON (rewritten after every game).")
@click.option("--log-dir", default=None, type=click.Path(file_okay=False), help="Keep the engines' stderr here.")
@click.option("--concurrency", default=1, show_default=True, type=click.IntRange(1),
              help="Games played at once, each by its own pair of engines (they share the machine's cores).")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Play the games as tasks on the Dask cluster whose scheduler is at ADDRESS (tls://host:port), or "
                   "'auto' (the scheduler-address of Dask's configuration): one game per worker thread, both engines "
                   "on the worker; needs the [cluster] extra (docs/match.md).")
@click.option("--cluster-security", default=None, metavar="CA,CERT,KEY",
              help="PEM files for a tls:// scheduler: the cluster's certificate authority, and this driver's "
                   "certificate and key signed by it (default: distributed.comm.tls in Dask's configuration).")
@click.option("--cluster-insecure", is_flag=True,
              help="Allow an unencrypted tcp:// scheduler: whoever reaches it runs code on every worker and on this "
                   "driver; only on a machine and network no one else can reach.")
def match(black_cmd: str, white_cmd: str, games: int, first_game: int, size: int, komi: float, handicap: int, max_moves: int | None,
          sprt: SprtConfig | None, rules: str, times: tuple[TimeControl, ...] | None,
          visits: int | None, openings: str | None, sgf_dir: str | None, alternate: bool, move_timeout: float,
          start_timeout: float, dead_model: str | None, config_paths: tuple[str, ...], overrides: tuple[str, ...],
          sets: tuple[str, ...],
          json_path: str | None, log_dir: str | None, concurrency: int, cluster: str | None,
          cluster_security: str | None, cluster_insecure: bool) -> None:
    """Play GTP engines against each other and report wins, Elo with a 95% interval and how games ended.

    The engines are configured by their own command lines; --config and --set configure what miai itself runs
    here, the referee's --dead-model net (its [net] section; search.seed seeds its random symmetries). With
    --sgf-dir, every finished game is also appended to results.jsonl there, and rerunning the same command plays
    only the games missing from it.
    """
    from miai.match.runner import MatchConfig, MatchError, run_match
    from miai.match.summary import GameRecord, MatchSummary, ProgressPrinter

    try:
        config = MatchConfig(games=games, first_game=first_game, size=size, komi=komi, handicap=handicap, max_moves=max_moves,
                             sprt=sprt, rules=rules, alternate=alternate, times=times or (), visits=visits,
                             openings=openings, sgf_dir=sgf_dir, move_timeout=move_timeout, start_timeout=start_timeout,
                             log_dir=log_dir, concurrency=concurrency)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if cluster and concurrency != 1:
        raise click.ClickException("--concurrency is for games on this machine; with --cluster, each worker thread "
                                   "plays one game at a time (start workers with --nthreads)")
    if (cluster_security or cluster_insecure) and not cluster:
        raise click.ClickException("--cluster-security and --cluster-insecure go with --cluster")
    # Bad --config/--set fail before any game starts.
    judge_config = load_config_or_fail(config_paths, sets, overrides).config
    judge = functools.partial(dead_stone_judge, dead_model, judge_config) if dead_model else None
    printer = ProgressPrinter(total=games - first_game + 1)

    def progress(record: GameRecord, summary: MatchSummary) -> None:
        printer(record, summary)
        if json_path:  # after every game, so that a match stopped early keeps the games it played
            summary.write_json(json_path)

    try:
        if cluster:
            from miai.match.cluster import ClusterSecurity, ClusterStats, run_cluster_match

            stats = ClusterStats()
            security = ClusterSecurity.parse(cluster_security) if cluster_security else None
            summary = run_cluster_match(black_cmd, white_cmd, config, cluster, dead_stones=judge, progress=progress,
                                        on_running=printer.running, stats=stats, security=security,
                                        insecure=cluster_insecure)
        else:
            summary = run_match(black_cmd, white_cmd, config, dead_stones=judge() if judge else None,
                                progress=progress, on_move=printer.move)
    except MatchError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        printer.close()
    if cluster:
        click.echo(stats.format(), err=True)
    click.echo(summary.format())
    if json_path:
        summary.write_json(json_path)
    sys.stdout.flush()


def _parse_sprt(text: str) -> SprtConfig:
    """ELO0,ELO1[,ALPHA,BETA] as an SprtConfig.

    Raises:
        ValueError: not two or four numbers, or numbers the test cannot take.
    """
    from miai.match.elo import SprtConfig

    parts = text.split(",")
    if len(parts) not in (2, 4):
        raise ValueError(f"expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA, got {text!r}")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"expected numbers, got {text!r}") from None
    return SprtConfig(*numbers)


def _parse_times(text: str) -> tuple[TimeControl, ...]:
    """``--time``: clocks separated by commas (TimeControl.parse_spec's errors say what is wrong with which)."""
    from miai.go.clock import TimeControl

    return tuple(TimeControl.parse_spec(spec) for spec in text.split(","))


def dead_stone_judge(model: str, config: Config) -> DeadStones:
    """The referee's dead-stone judge from a net (built where the games are counted: here, or on each worker)."""
    from miai.match.runner import ownership_dead_stones

    return ownership_dead_stones(build_evaluator(model, config))
