"""``miai bench`` and ``miai match``: the commands that produce every speed and strength figure miai reports."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import click

from miai.engine.cli.compose import CONFIG_HELP, RULES_HELP, build_evaluator, config_options, load_config_or_fail


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"expected sizes like 9,19, got {text!r}") from None
    if not sizes or any(not 2 <= s <= 25 for s in sizes):
        raise click.BadParameter(f"sizes must be in 2..25, got {text!r}")
    return sizes


@click.command()
@click.option("--model", default=None, help="Also benchmark this net: raw evals/s and search playouts/s.")
@click.option("--sizes", default="9,19", show_default=True, help="Comma-separated board sizes.")
@click.option("--seconds", default=3.0, show_default=True, type=click.FloatRange(0.1), help="Seconds per figure.")
@click.option("--config", "config_path", default=None, type=click.Path(dir_okay=False), help=CONFIG_HELP)
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Config override, e.g. search.batch_size=32.")
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False), help="Also write JSON here.")
@click.option("--skip", multiple=True, type=click.Choice(["rules", "playouts", "search"]), help="Leave a part out.")
@click.option("--versus", "versus", default=None, metavar="KATAGO",
              help="Instead: KataGo binary to race on --model (a KataGo file) at fixed --visits; see docs/benchmarks.md.")
@click.option("--visits", default=400, show_default=True, type=click.IntRange(1), help="--versus: visits per search.")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1),
              help="--versus: KataGo's numSearchThreads and miai's net.threads.")
@click.option("--positions", default=4, show_default=True, type=click.IntRange(1), help="--versus: positions searched.")
@click.option("--batches", default="1,2,4,8,16,32", show_default=True,
              help="--versus: batch sizes of the bare-net measurement (the best one counts).")
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1),
              help="--versus / --compare: interleaved rounds per engine or value; the median round counts.")
@click.option("--compare", "compare", default=None, metavar="KEY=V1,V2,...",
              help="Instead: search playouts/s on --model with one option at each value (e.g. "
                   "search.stale_update=path,parents,ancestors), interleaved, as ratios to the first value.")
def bench(model: str | None, sizes: str, seconds: float, config_path: str | None, sets: tuple[str, ...],
          json_path: str | None, skip: tuple[str, ...], versus: str | None, visits: int, threads: int,
          positions: int, batches: str, repeats: int, compare: str | None) -> None:
    """Measure rules, playout, net and search speed; print a table (and JSON with --json)."""
    from miai.engine.bench.rules import BenchResult, bench_rules, print_table, write_json
    from miai.engine.bench.search import bench_raw_evals, bench_search
    from miai.nets.playouts import benchmark_playouts

    config = load_config_or_fail(config_path, sets)
    if versus is not None:
        results = _bench_versus(versus, model, config, _sizes(sizes), visits, threads, positions,
                                _batch_sizes(batches), seconds, repeats)
        print_table(results)
        if json_path:
            write_json(results, json_path)
        return
    evaluator = build_evaluator(model, config) if model else None
    if compare is not None:
        if evaluator is None:
            raise click.UsageError("--compare needs --model (a net, or 'playouts')")
        results = _bench_compare(compare, evaluator, config, _sizes(sizes), seconds, repeats)
        print_table(results)
        if json_path:
            write_json(results, json_path)
        return
    results: list[BenchResult] = []
    for size in _sizes(sizes):
        if "rules" not in skip:
            results += bench_rules(size, seconds)
        if "playouts" not in skip:
            run = benchmark_playouts(size, seconds)
            results.append(BenchResult.from_count(f"playouts {size}x{size}: random games", run.playouts,
                                                  run.seconds, "games/s", moves=run.moves))
        if evaluator is not None and "search" not in skip:
            # Both are measured without the eval cache, so every playout really costs a net evaluation.
            inner = getattr(evaluator, "inner", evaluator)
            raw = bench_raw_evals(inner, size, config.search.batch_size, seconds)
            found = bench_search(inner, config.search, size, seconds)
            ratio = found.value / raw.value if raw.value else 0.0
            results += [raw, dataclasses.replace(found, details={**found.details, "ratio_to_raw": round(ratio, 3)})]
            results.append(BenchResult(f"search {size}x{size}: playouts/s over raw evals/s", ratio, "ratio",
                                       found.seconds, found.count))
    print_table(results)
    if json_path:
        write_json(results, json_path)


def _bench_compare(spec: str, evaluator: Any, config: Any, sizes: list[int], seconds: float,
                   repeats: int) -> list[Any]:
    """``miai bench --compare KEY=V1,V2``: the search's playouts/s with the option at each value, the values taking
    turns for ``repeats`` rounds (so load on a shared machine falls on all alike); median rounds, ratio to V1."""
    from miai.engine.bench.rules import BenchResult
    from miai.engine.bench.search import bench_search
    from miai.engine.config import ConfigError, set_option

    key, _, values_text = spec.partition("=")
    values = [v.strip() for v in values_text.split(",") if v.strip()]
    if not key or len(values) < 2:
        raise click.BadParameter(f"expected KEY=V1,V2,... with two values or more, got {spec!r}")
    try:
        configs = [set_option(config, key.strip(), value) for value in values]
    except ConfigError as error:
        raise click.BadParameter(str(error)) from None
    inner = getattr(evaluator, "inner", evaluator)  # no eval cache: every playout costs an evaluation
    results: list[BenchResult] = []
    for size in sizes:
        rounds: list[list[BenchResult]] = [[] for _ in values]
        for _ in range(repeats):
            for runs, cfg in zip(rounds, configs):
                runs.append(bench_search(inner, cfg.search, size, seconds))
        medians = [sorted(runs, key=lambda r: r.value)[len(runs) // 2] for runs in rounds]
        base = medians[0].value
        for value, median, runs in zip(values, medians, rounds):
            name = f"search {size}x{size}: {key}={value}"
            results.append(dataclasses.replace(median, name=name, details={
                **median.details, "rounds": [round(r.value, 1) for r in runs]}))
            if median is not medians[0]:
                results.append(BenchResult(f"{name}: playouts/s over {values[0]}'s",
                                           median.value / base if base else 0.0, "ratio", median.seconds,
                                           median.count))
    return results


def _batch_sizes(text: str) -> list[int]:
    try:
        batches = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise click.BadParameter(f"expected batch sizes like 1,8,32, got {text!r}") from None
    if not batches or any(b < 1 for b in batches):
        raise click.BadParameter(f"batch sizes must be positive, got {text!r}")
    return batches


def _bench_versus(binary: str, model: str | None, config: Any, sizes: list[int], visits: int, threads: int,
                  positions: int, batches: list[int], seconds: float, repeats: int) -> list[Any]:
    """``miai bench --versus``: KataGo and miai on the same net, then the bare net; see miai.engine.bench.versus."""
    import shutil

    from miai.engine.bench.versus import VersusError, VersusSetup, bench_bare_net, race, versus_rows
    from miai.nets.loading import is_katago_model

    if model is None or not is_katago_model(model):
        raise click.UsageError("--versus needs --model MODEL.bin.gz (a KataGo model file, so both engines run the "
                               "same net)")
    if shutil.which(binary) is None:
        raise click.UsageError(f"--versus: no executable KataGo at {binary}")
    config = dataclasses.replace(config, net=dataclasses.replace(config.net, threads=threads))
    evaluator = build_evaluator(model, config)
    inner = getattr(evaluator, "inner", evaluator)
    results: list[Any] = []
    for size in sizes:
        setup = VersusSetup(size=size, visits=visits, threads=threads, positions=positions)
        try:
            theirs, mine = race(binary, model, evaluator, config.search, setup, repeats)
        except VersusError as exc:
            raise click.ClickException(str(exc)) from exc
        bare = bench_bare_net(inner.session, size, batches, seconds)
        results += [theirs, mine, *bare, *versus_rows(theirs, mine, bare)]
    return results


@click.command()
@click.option("--black", "black_cmd", required=True, help="Engine A's command line (Black in game 1).")
@click.option("--white", "white_cmd", required=True, help="Engine B's command line.")
@click.option("--games", default=2, show_default=True, type=click.IntRange(1),
              help="Games to play (colours alternate, so an even number gives each engine Black equally often).")
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 25), help="Board size of every game.")
@click.option("--komi", default=7.5, show_default=True, type=float,
              help="Komi given to White (sent to both engines and used by the referee's count).")
@click.option("--handicap", default=0, show_default=True, type=click.IntRange(0), help="Fixed handicap stones for Black.")
@click.option("--max-moves", default=None, type=click.IntRange(1), help="Score the game after this many moves.")
@click.option("--sprt", default=None, metavar="ELO0,ELO1", help="Run an SPRT of engine A and stop when it decides.")
@click.option("--rules", default="chinese", show_default=True, help=RULES_HELP + " Used by the referee and sent to "
              "engines that know kata-set-rules.")
@click.option("--time", "time_spec", default=None, help="Clock per engine: MAIN[+BYOYOMI/STONES] in seconds.")
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
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False), help="Write the summary as JSON.")
@click.option("--log-dir", default=None, type=click.Path(file_okay=False), help="Keep the engines' stderr here.")
def match(black_cmd: str, white_cmd: str, games: int, size: int, komi: float, handicap: int, max_moves: int | None,
          sprt: str | None, rules: str, time_spec: str | None,
          visits: int | None, openings: str | None, sgf_dir: str | None, alternate: bool, move_timeout: float,
          start_timeout: float, dead_model: str | None, config_path: str | None, sets: tuple[str, ...],
          json_path: str | None, log_dir: str | None) -> None:
    """Play GTP engines against each other and report wins, Elo with a 95% interval and how games ended.

    The engines are configured by their own command lines; --config and --set configure what miai itself runs
    here, the referee's --dead-model net (its [net] section; search.seed seeds its random symmetries).
    """
    from miai.match.elo import SprtConfig
    from miai.match.runner import MatchConfig, MatchError, TimeControl, ownership_dead_stones, run_match

    try:
        sprt_config = None
        if sprt:
            elo0, _, elo1 = sprt.partition(",")
            sprt_config = SprtConfig(float(elo0), float(elo1))
        config = MatchConfig(games=games, size=size, komi=komi, handicap=handicap, max_moves=max_moves,
                             sprt=sprt_config, rules=rules, alternate=alternate,
                             time=TimeControl.parse(time_spec) if time_spec else None, visits=visits,
                             openings=openings, sgf_dir=sgf_dir, move_timeout=move_timeout, start_timeout=start_timeout,
                             log_dir=log_dir)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    own_config = load_config_or_fail(config_path, sets)  # bad --config/--set fail before any game starts
    dead = None
    if dead_model:
        dead = ownership_dead_stones(build_evaluator(dead_model, own_config))
    try:
        summary = run_match(black_cmd, white_cmd, config, dead_stones=dead)
    except MatchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(summary.format())
    if json_path:
        summary.write_json(json_path)
    sys.stdout.flush()
