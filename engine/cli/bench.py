"""``miai bench``: every speed figure miai reports, and the in-process strength comparison of two search settings.

``miai bench [OPTIONS]`` measures the quick figures (or races KataGo with --versus, or compares option values with
--compare); its subcommands each run one benchmark of miai.engine.bench in detail. Every one prints a table and, with
--json FILE, writes the results and the machine they were measured on as JSON.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from miai.engine.cli.compose import build_evaluator, config_options, load_config_or_fail, playout_defaults

F = TypeVar("F", bound=Callable[..., Any])
# KataGo's g170 b6c96 net, which `miai bench convert` measures when no net is named (in the current directory).
DEFAULT_CONVERT_NET = "g170-b6c96-s175395328-d26788732.bin.gz"


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(f"expected sizes like 9,19, got {text!r}") from None
    if not sizes or any(not 2 <= s <= 25 for s in sizes):
        raise click.BadParameter(f"sizes must be in 2..25, got {text!r}")
    return sizes


def _counts(text: str, what: str) -> list[int]:
    """Comma-separated positive integers (batch sizes, thread counts)."""
    try:
        counts = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise click.BadParameter(f"expected {what} like 1,8,32, got {text!r}") from None
    if not counts or any(b < 1 for b in counts):
        raise click.BadParameter(f"{what} must be positive, got {text!r}")
    return counts


def _report(results: Sequence[Any], json_path: str | None) -> None:
    """Print the table, and write the JSON when asked."""
    from miai.engine.bench.harness import print_table, write_json

    print_table(results)
    if json_path:
        write_json(results, json_path)


def _json_option(command: F) -> F:
    return click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False),
                        help="Also write the results as JSON here.")(command)


@click.group(invoke_without_command=True)
@click.option("--model", default=None, help="Also benchmark this net: raw evals/s and search playouts/s.")
@click.option("--sizes", default="9,19", show_default=True, help="Comma-separated board sizes.")
@click.option("--seconds", default=3.0, show_default=True, type=click.FloatRange(0.1), help="Seconds per figure.")
@config_options
@_json_option
@click.option("--skip", multiple=True, type=click.Choice(["rules", "playouts", "search"]), help="Leave a part out.")
@click.option("--versus", "versus", default=None, metavar="KATAGO",
              help="Instead: KataGo binary to race on --model (a KataGo file) at fixed --visits; see docs/benchmarks.md.")
@click.option("--visits", default=400, show_default=True, type=click.IntRange(1), help="--versus: visits per search.")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1),
              help="--versus: KataGo's numSearchThreads and miai's net.threads.")
@click.option("--positions", default=6, show_default=True, type=click.IntRange(1),
              help="--versus: positions searched (the net's own games, cut from 10% to 60% of the board in moves).")
@click.option("--batches", default="1,2,4,8,16,32", show_default=True,
              help="--versus: batch sizes of the bare-net measurement (the best one counts).")
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1),
              help="--versus / --compare: interleaved rounds per engine or value; the median round counts.")
@click.option("--compare", "compare", default=None, metavar="KEY=V1,V2,...",
              help="Instead: search playouts/s on --model with one option at each value (e.g. "
                   "search.stale_update=path,parents,ancestors; a net.* option loads the net once per value), "
                   "interleaved, as ratios to the first value.")
@click.pass_context
def bench(ctx: click.Context, model: str | None, sizes: str, seconds: float, config_paths: tuple[str, ...],
          overrides: tuple[str, ...], sets: tuple[str, ...], json_path: str | None, skip: tuple[str, ...], versus: str | None, visits: int,
          threads: int, positions: int, batches: str, repeats: int, compare: str | None) -> None:
    """Measure rules, playout, net and search speed; print a table (and JSON with --json).

    Without a subcommand: the quick figures (rules, random playouts, and with --model the net's raw evals/s against
    the search's playouts/s), or the --versus race or the --compare run. The subcommands measure one thing each in
    detail; every one prints the same table and takes --json.
    """
    if ctx.invoked_subcommand is not None:
        return  # the subcommand measures; this group's own options are for the quick figures only
    from miai.engine.bench.harness import BenchResult
    from miai.engine.bench.rules import bench_rules
    from miai.engine.bench.search import bench_raw_evals, bench_search
    from miai.nets.evaluator import innermost
    from miai.nets.playouts import benchmark_playouts

    loaded = load_config_or_fail(config_paths, sets, overrides)
    config = loaded.config
    results: list[BenchResult]
    if versus is not None:
        results = _bench_versus(versus, model, config, _sizes(sizes), visits, threads, positions,
                                _counts(batches, "batch sizes"), seconds, repeats)
        _report(results, json_path)
        return
    evaluator = build_evaluator(model, config) if model else None
    if evaluator is not None:  # the search `miai gtp --model playouts` runs, not the net's
        config = playout_defaults(config, evaluator, loaded.chosen)
    if compare is not None:
        if evaluator is None or model is None:
            raise click.UsageError("--compare needs --model (a net, or 'playouts')")
        results = _bench_compare(compare, model, evaluator, config, _sizes(sizes), seconds, repeats)
        _report(results, json_path)
        return
    results = []
    for size in _sizes(sizes):
        if "rules" not in skip:
            results += bench_rules(size, seconds)
        if "playouts" not in skip:
            run = benchmark_playouts(size, seconds)
            results.append(BenchResult.from_count(f"playouts {size}x{size}: random games", run.playouts,
                                                  run.seconds, "games/s", moves=run.moves))
        if evaluator is not None and "search" not in skip:
            # Both are measured without the eval cache, so every playout really costs a net evaluation.
            inner = innermost(evaluator, size)
            raw = bench_raw_evals(inner, size, config.search.batch_size, seconds)
            found = bench_search(inner, config.search, size, seconds)
            ratio = found.value / raw.value if raw.value else 0.0
            results += [raw, dataclasses.replace(found, details={**found.details, "ratio_to_raw": round(ratio, 3)})]
            results.append(BenchResult(f"search {size}x{size}: playouts/s over raw evals/s", ratio, "ratio",
                                       found.seconds, found.count))
    _report(results, json_path)


def _bench_compare(spec: str, model: str, evaluator: Any, config: Any, sizes: list[int], seconds: float,
                   repeats: int) -> list[Any]:
    """``miai bench --compare KEY=V1,V2``: the search's playouts/s with the option at each value, the values taking
    turns for ``repeats`` rounds (so load on a shared machine falls on all alike); median rounds, ratio to V1. A
    ``net.*`` option is the net's own (threads, precision, ...): each value gets its own copy of ``model``."""
    from miai.engine.bench.harness import BenchResult
    from miai.engine.bench.search import bench_search
    from miai.engine.config import ConfigError, set_option
    from miai.nets.evaluator import innermost

    key, _, values_text = spec.partition("=")
    values = [v.strip() for v in values_text.split(",") if v.strip()]
    if not key or len(values) < 2:
        raise click.BadParameter(f"expected KEY=V1,V2,... with two values or more, got {spec!r}")
    try:
        configs = [set_option(config, key.strip(), value) for value in values]
    except ConfigError as error:
        raise click.BadParameter(str(error)) from None
    evaluators = ([build_evaluator(model, cfg) for cfg in configs] if key.strip().startswith("net.")
                  else [evaluator] * len(configs))
    results: list[BenchResult] = []
    for size in sizes:
        inners = [innermost(e, size) for e in evaluators]  # no eval cache: every playout costs an evaluation
        rounds: list[list[BenchResult]] = [[] for _ in values]
        for _ in range(repeats):
            for runs, cfg, inner in zip(rounds, configs, inners):
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


def _bench_versus(binary: str, model: str | None, config: Any, sizes: list[int], visits: int, threads: int,
                  positions: int, batches: list[int], seconds: float, repeats: int) -> list[Any]:
    """``miai bench --versus``: KataGo and miai on the same net, then the bare net; see miai.engine.bench.versus."""
    import shutil

    from miai.engine.bench.versus import VersusError, VersusSetup, bench_bare_net, race, versus_rows
    from miai.nets.evaluator import onnx_net
    from miai.nets.loading import is_katago_model

    if model is None or not is_katago_model(model):
        raise click.UsageError("--versus needs --model MODEL.bin.gz (a KataGo model file, so both engines run the "
                               "same net)")
    if shutil.which(binary) is None:
        raise click.UsageError(f"--versus: no executable KataGo at {binary}")
    config = dataclasses.replace(config, net=dataclasses.replace(config.net, threads=threads))
    evaluator = build_evaluator(model, config)
    results: list[Any] = []
    for size in sizes:
        inner = onnx_net(evaluator, size)
        if inner is None:
            raise click.UsageError("--versus needs a net run by onnxruntime")
        setup = VersusSetup(size=size, visits=visits, threads=threads, positions=positions)
        try:
            theirs, mine = race(binary, model, evaluator, config.search, setup, repeats, net=inner)
        except VersusError as exc:
            raise click.ClickException(str(exc)) from exc
        bare = bench_bare_net(inner.session, size, batches, seconds)
        results += [theirs, mine, *bare, *versus_rows(theirs, mine, bare)]
    return results




_NET = click.Path(exists=True, dir_okay=False)


@bench.command("rules")
@click.option("--games", default=20, show_default=True, type=click.IntRange(1), help="Random games per board size.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1), help="Replays of the games timed.")
@click.option("--rules", default="tromp-taylor", show_default=True, help="Rules preset.")
@click.option("--sizes", default="19,9", show_default=True, help="Comma-separated board sizes.")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--kifu", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Real 19x19 games (one a line, id<TAB>;B[pd];W[dd]...) to replay as well.")
@_json_option
def rules_command(games: int, repeat: int, rules: str, sizes: str, seed: int, kifu: str | None,
                  json_path: str | None) -> None:
    """Rules core in detail, per CPU second: board and state play+undo, graph hash, legality, legal_moves()."""
    from miai.engine.bench.rules import bench_rules_detailed, kifu_games, random_games
    from miai.go.rules import Rules

    try:
        preset = Rules.preset(rules)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--rules") from None
    results: list[Any] = []
    for size in _sizes(sizes):
        results += bench_rules_detailed(size, preset, random_games(size, preset, games, seed), repeat, "random")
    if kifu:
        results += bench_rules_detailed(19, preset, kifu_games(kifu, games, preset), repeat, "real")
    _report(results, json_path)


@bench.command("playouts")
@click.option("--seconds", default=5.0, show_default=True, type=click.FloatRange(0.01), help="Time per board size.")
@click.option("--sizes", default="9,19", show_default=True, help="Comma-separated board sizes.")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--search", "rule", default=None, type=click.Choice(["puct", "ucb1", "ucb1-tuned"]),
              help="Also time the search with the playout evaluator under this selection rule.")
@click.option("--tactical", is_flag=True, help="Capture/escape playouts instead of light ones.")
@click.option("--noselfatari", is_flag=True, help="Refuse self-atari of two or more stones in the playouts.")
@click.option("--patterns", is_flag=True, help="MoGo's 3x3 patterns around the last move in the playouts.")
@click.option("--interleave", default=0, type=click.IntRange(0),
              help="Instead: this many rounds alternating runs without and with --patterns (same other rules; "
                   "compiled where numba is installed, as the evaluator plays them, else in Python), and the ratio "
                   "of their playouts per CPU second.")
@click.option("--compiled", is_flag=True,
              help="Instead: rounds (--interleave, default 3) alternating Python and compiled playouts (the same "
                   "rules; needs the fast extra, numba), and the ratio of their playouts per CPU second.")
@_json_option
def playouts_command(seconds: float, sizes: str, seed: int, rule: str | None, tactical: bool, noselfatari: bool,
                     patterns: bool, interleave: int, compiled: bool, json_path: str | None) -> None:
    """Random playouts per second from the empty board (and the search over them with --search)."""
    from miai.engine.bench.playouts import (bench_compiled_interleaved, bench_patterns_interleaved,
                                            bench_playout_search, bench_playouts)

    if compiled:
        from miai.nets.playouts.compiled import AVAILABLE

        if not AVAILABLE:
            raise click.ClickException("--compiled needs numba: pip install 'miai[fast]'")
    results: list[Any] = []
    for size in _sizes(sizes):
        if compiled:
            results += bench_compiled_interleaved(size, seconds, seed, interleave or 3, no_self_atari=noselfatari,
                                                  tactical=tactical, patterns=patterns)
            continue
        if interleave:
            from miai.nets.playouts.compiled import AVAILABLE

            results += bench_patterns_interleaved(size, seconds, seed, interleave, tactical=tactical,
                                                  no_self_atari=noselfatari, compiled=AVAILABLE)
            continue
        results += bench_playouts(size, seconds, seed, tactical=tactical, no_self_atari=noselfatari,
                                  patterns=patterns)
        if rule:
            results += bench_playout_search(size, seconds, seed, rule, tactical=tactical)
    _report(results, json_path)


@bench.command("features")
@click.option("--sizes", default="19,9", show_default=True, help="Comma-separated board sizes.")
@click.option("--positions", default=200, show_default=True, type=click.IntRange(1), help="Positions per size.")
@click.option("--mode", default="both", show_default=True, type=click.Choice(["cold", "search", "both", "replay"]),
              help="cold: memos cleared per position; search: parent encoded first; replay: a real search's "
                   "positions (needs --net).")
@click.option("--net", default=None, type=_NET, help="Net for --mode replay and --split.")
@click.option("--search-playouts", default=1500, show_default=True, type=click.IntRange(1),
              help="Playouts of the search recorded for --mode replay.")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--kifu", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Real games for the 19x19 positions.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1),
              help="Passes per mode; the fastest counts.")
@click.option("--profile", default=None, type=int, metavar="SIZE",
              help="cProfile the run of this size (to stderr).")
@click.option("--threads", "thread_counts", default=None, metavar="N,N,...",
              help="Instead encode batches in each number of threads (interleaved rounds; ratios to the first), and "
                   "measure the share of the time that runs without the GIL.")
@click.option("--batch", default=8, show_default=True, type=click.IntRange(1), help="Positions a batch, for --threads.")
@click.option("--split", is_flag=True, help="Instead split a search's time between net and encoding (needs --net).")
@click.option("--split-seconds", default=6.0, show_default=True, type=click.FloatRange(0.01))
@click.option("--dump", default=None, type=click.Path(dir_okay=False), help="Save every encoding to this .npz...")
@click.option("--check", default=None, type=click.Path(exists=True, dir_okay=False),
              help="...and compare a later run's encodings with it exactly (exit 1 on a mismatch).")
@_json_option
def features_command(sizes: str, positions: int, mode: str, net: str | None, search_playouts: int, seed: int,
                     kifu: str | None, repeat: int, profile: int | None, thread_counts: str | None, batch: int,
                     split: bool, split_seconds: float, dump: str | None, check: str | None,
                     json_path: str | None) -> None:
    """Feature encoding (nets/features.py) in positions per second."""
    import numpy as np

    from miai.engine.bench import features

    if (split or mode == "replay") and net is None:
        raise click.UsageError(f"{'--split' if split else '--mode replay'} needs --net")
    if split:
        assert net is not None
        _report([r for size in _sizes(sizes) for r in features.search_split(size, Path(net), split_seconds)],
                json_path)
        return
    if thread_counts is not None:
        counts = _counts(thread_counts, "--threads")
        chosen = "cold" if mode == "both" else mode
        _report([r for size in _sizes(sizes)
                 for r in features.bench_threads(_feature_states(size, chosen, net, search_playouts, kifu, positions,
                                                                 seed), size, batch, counts, repeat)], json_path)
        return
    expected = dict(np.load(check)) if check else None
    results: list[Any] = []
    saved: dict[str, Any] = {}
    mismatches = 0
    for size in _sizes(sizes):
        states = _feature_states(size, mode, net, search_playouts, kifu, positions, seed)
        for one in (["cold", "search"] if mode == "both" else [mode]):
            found, encodings = features.bench_encoding(states, size, one, repeat,
                                                       profile=sys.stderr if profile == size else None)
            results += found
            saved.update(features.saved_encodings(size, encodings))
            if expected is not None:
                try:
                    mismatches += features.compare_encodings(size, encodings, expected)
                except KeyError as exc:
                    raise click.ClickException(f"{check} holds no encoding {exc} (other sizes or positions?)") from None
    _report(results, json_path)
    if dump:
        np.savez_compressed(dump, **saved)
    if expected is not None:
        click.echo(f"check against {check}: {mismatches} mismatching encodings")
        sys.exit(1 if mismatches else 0)


def _feature_states(size: int, mode: str, net: str | None, playouts: int, kifu: str | None, positions: int,
                    seed: int) -> list[Any]:
    """The positions `miai bench features` encodes on one board size."""
    from miai.engine.bench import features

    if mode == "replay":
        assert net is not None
        return features.searched_states(size, Path(net), playouts)
    if size == 19 and kifu is not None:
        return features.kifu_states(Path(kifu), positions, seed)
    return features.random_states(size, positions, seed)


@bench.command("net")
@click.argument("net", type=_NET)
@click.option("--sizes", default="19,9", show_default=True, help="Comma-separated board sizes.")
@click.option("--batches", default="1,8,32", show_default=True, help="Comma-separated batch sizes.")
@click.option("--threads", default="1,2", show_default=True, help="Comma-separated onnxruntime intra-op threads.")
@click.option("--seconds", default=3.0, show_default=True, type=click.FloatRange(0.01), help="Seconds per figure.")
@click.option("--repeats", default=1, show_default=True, type=click.IntRange(1), help="Best of this many runs.")
@_json_option
def net_command(net: str, sizes: str, batches: str, threads: str, seconds: float, repeats: int,
                json_path: str | None) -> None:
    """The evaluator (features, net, decoding) against the bare net, and feature encoding alone, in evals/s."""
    from miai.engine.bench.nets import bench_net

    _report(bench_net(net, _sizes(sizes), _counts(batches, "batch sizes"), _counts(threads, "thread counts"),
                      seconds, repeats), json_path)


@bench.command("convert")
@click.argument("net", required=False, default=None)
@click.option("--sizes", default="19,9", show_default=True, help="Comma-separated board sizes.")
@click.option("--batches", default="1,8,32", show_default=True, help="Comma-separated batch sizes.")
@click.option("--threads", default="1,2", show_default=True, help="Comma-separated onnxruntime intra-op threads.")
@click.option("--seconds", default=3.0, show_default=True, type=click.FloatRange(0.01), help="Seconds per cell.")
@_json_option
def convert_command(net: str | None, sizes: str, batches: str, threads: str, seconds: float,
                    json_path: str | None) -> None:
    """KataGo -> ONNX conversion time per board size, and a plain onnxruntime session's evals/s on the result.

    NET is a KataGo model file or a KaTrain version (1.9.3, 1.14.0, 1.20.0; downloaded once); by default KataGo's
    g170 b6c96 net in the current directory.
    """
    from miai.engine.bench.nets import bench_convert
    from miai.nets.katrain_nets import model_path

    path = model_path(net or DEFAULT_CONVERT_NET)
    if not path.is_file():
        raise click.ClickException(f"no such model file: {path}")
    _report(bench_convert(path, _sizes(sizes), _counts(batches, "batch sizes"), _counts(threads, "thread counts"),
                          seconds), json_path)


@bench.command("decode")
@click.argument("net", type=_NET)
@click.option("--sizes", default="9,19", show_default=True, help="Comma-separated board sizes.")
@_json_option
def decode_command(net: str, sizes: str, json_path: str | None) -> None:
    """Decoding a batch of 16 outputs row by row against the whole batch at once, in microseconds per position.

    NET is an ONNX file or a KataGo model file (converted once into the cache).
    """
    from miai.engine.bench.decode import DecodingsDiffer, bench_decode
    from miai.nets.loading import converted_path, is_katago_model

    path = str(converted_path(net)) if is_katago_model(net) else net
    try:
        _report(bench_decode(path, _sizes(sizes)), json_path)
    except DecodingsDiffer as exc:
        raise click.ClickException(str(exc)) from exc


@bench.command("session")
@click.argument("net", type=_NET)
@click.option("--size", default=9, show_default=True, type=click.IntRange(2, 25), help="Board size.")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1), help="onnxruntime intra-op threads.")
@click.option("--batches", default="1,4,8,16,32", show_default=True, help="Comma-separated batch sizes.")
@click.option("--variants", default="base,spin,fixed", show_default=True,
              help="Comma-separated session variants, the first the baseline: base, override, override+spin, spin, "
                   "fixed, fixed+spin, extended, basic, no-arena, parallel, threads1.")
@click.option("--rounds", default=3, show_default=True, type=click.IntRange(1), help="Interleaved rounds (median).")
@click.option("--seconds", default=1.0, show_default=True, type=click.FloatRange(0.01), help="Seconds per cell.")
@_json_option
def session_command(net: str, size: int, threads: int, batches: str, variants: str, rounds: int, seconds: float,
                    json_path: str | None) -> None:
    """onnxruntime session settings on the bare net, as ratios to the first variant (wall and per CPU second).

    NET is a KataGo model file (the fixed variants convert it for --size) or an ONNX file.
    """
    from miai.engine.bench.session import bench_session

    names = [v.strip() for v in variants.split(",") if v.strip()]
    if not names:
        raise click.BadParameter(f"expected variants like base,spin, got {variants!r}", param_hint="--variants")
    try:
        results = bench_session(net, size, threads, _counts(batches, "batch sizes"), names, rounds, seconds)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    _report(results, json_path)


@bench.command("search")
@click.option("--net", default=None, type=_NET, help="Also a real net (KataGo .bin.gz or .onnx), against its raw "
              "evals/s.")
@click.option("--visits", default=3000, show_default=True, type=click.IntRange(1),
              help="Visits per search with the uniform and free evaluators.")
@click.option("--sizes", default="9,19", show_default=True, help="Comma-separated board sizes.")
@click.option("--batch", default=16, show_default=True, type=click.IntRange(1), help="search.batch_size.")
@click.option("--overlap", is_flag=True, help="search.overlap = true.")
@click.option("--net-visits", default=600, show_default=True, type=click.IntRange(1),
              help="Visits per search with --net.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1),
              help="Interleaved raw/search rounds with --net.")
@click.option("--raw-seconds", default=5.0, show_default=True, type=click.FloatRange(0.01),
              help="Seconds of each raw evals/s measurement with --net.")
@_json_option
def search_command(net: str | None, visits: int, sizes: str, batch: int, overlap: bool, net_visits: int,
                   repeat: int, raw_seconds: float, json_path: str | None) -> None:
    """The search's own speed from the empty board: playouts/s with near-free evaluators (and a net with --net)."""
    from miai.engine.bench.search import bench_search_against_net, bench_search_overhead
    from miai.nets.loading import load_evaluator

    results: list[Any] = []
    for size in _sizes(sizes):
        results += bench_search_overhead(size, visits, batch, overlap)
        if net:
            evaluator = load_evaluator(net, board_size=size, max_batch=batch)
            results += bench_search_against_net(evaluator, size, net_visits, batch, overlap, repeat, raw_seconds)
    _report(results, json_path)


@bench.command("precision")
@click.argument("net")
@click.option("--sizes", default="19", show_default=True, help="Comma-separated board sizes.")
@click.option("--positions", default=2000, show_default=True, type=click.IntRange(1),
              help="Positions per board size (KataGo's testgpuerror: about 2,200).")
@click.option("--kifu", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Real 19x19 games (one a line, id<TAB>;B[..];W[..]...) for the 19x19 positions; without it, "
                   "and on other sizes, the net's own games with miai's search (kept in the cache directory).")
@click.option("--games", default=0, type=click.IntRange(0),
              help="Games the positions are drawn from (0: 40 positions per real game, all of a self-play game).")
@click.option("--visits", default=32, show_default=True, type=click.IntRange(1),
              help="Visits a move of the self-play games.")
@click.option("--batch", default=None, type=click.IntRange(1),
              help="The batched evaluations' size (default: the search's, search.batch_size).")
@click.option("--precisions", default="fp32,bf16,fp16", show_default=True,
              help="OpenVINO's precisions to judge (those this CPU lacks are left out, saying so).")
@click.option("--reduced-heads", is_flag=True,
              help="Also bf16/fp16 with the heads in the reduced precision too (their cost and their error).")
@click.option("--seed", default=1, show_default=True, type=int)
@click.option("--seconds", default=1.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds each candidate's bare evals/s is timed in each of three rounds (the best counts).")
@click.option("--write-games", default=None, type=click.Path(dir_okay=False),
              help="Instead: write the self-play games of --sizes (--games each) to this file, in the form of the "
                   "games auto's gate ships with (nets/gate_games.txt).")
@config_options
@_json_option
def precision_command(net: str, sizes: str, positions: int, kifu: str | None, games: int, visits: int,
                      batch: int | None, precisions: str, reduced_heads: bool, seed: int, seconds: float,
                      write_games: str | None,
                      config_paths: tuple[str, ...], sets: tuple[str, ...], overrides: tuple[str, ...],
                      json_path: str | None) -> None:
    """The precision gate, as KataGo's testgpuerror: every backend and precision this machine runs against
    onnxruntime fp32, on positions of real games under random symmetries, at batch 1 and at the search's batch.

    Prints mean, 90th and 99th percentile and maximum of the winrate, lead, top-move policy, policy KL and
    per-point ownership errors, each p99 and maximum as a share of KataGo's fp16 limit, the verdict, and every
    candidate's bare evals/s as a ratio to onnxruntime fp32's, measured in the same run. NET is a KataGo model
    file or a KaTrain version (1.9.3, 1.20.0: downloaded once).
    """
    import json

    import miai.nets.precision as gate
    from miai.engine.bench import precision as bench_gate
    from miai.engine.bench.harness import machine_info
    from miai.nets import backends, convert
    from miai.nets.evaluator import EvaluatorError
    from miai.nets.katrain_nets import KatrainNetError, model_path
    from miai.nets.loading import load_evaluator

    config = load_config_or_fail(config_paths, sets, overrides).config
    batch = batch or config.search.batch_size
    try:
        path = model_path(net)
    except KatrainNetError as exc:
        raise click.ClickException(str(exc)) from exc
    if not path.is_file():
        raise click.ClickException(f"no such model file: {path}")

    def say(line: str) -> None:
        click.echo(line, err=True)

    def open_pair(backend: str, precision: str, fp32_heads: bool = True) -> Any:
        try:
            return load_evaluator(path, backend=backend, precision=precision, fp32_heads=fp32_heads,
                                  max_batch=batch, symmetry_mode="fixed", intra_op_threads=config.net.threads)
        except (EvaluatorError, FileNotFoundError) as exc:
            raise click.ClickException(str(exc)) from exc

    reference = open_pair("onnxruntime", "fp32")
    pairs, rejected = backends.candidates("openvino", "auto")
    wanted = {p.strip() for p in precisions.split(",") if p.strip()}
    pairs = [(b, p) for b, p in pairs if p in wanted]
    rejected = {k: v for k, v in rejected.items() if k.split()[-1] in wanted}
    candidates = {" ".join(pair): open_pair(*pair) for pair in pairs}
    if reduced_heads:
        candidates.update({f"{b} {p} (heads {p})": open_pair(b, p, False) for b, p in pairs if p != "fp32"})
    digest = convert._file_digest(path)
    report: dict[str, Any] = {"machine": machine_info(), "net": path.name, "batch": batch, "sizes": {}}
    written = []
    for size in _sizes(sizes):
        real = size == 19 and kifu is not None and not write_games
        # Positions spread over many games: about 40 of each real game, all of a self-play game (about 0.6 of the
        # board's points in moves).
        count = games or (-(-positions // 40) if real else -(-positions * 5 // (3 * size * size)))
        if kifu is not None and real:
            played = bench_gate.kifu_games(Path(kifu), count, seed)
        else:
            played = bench_gate.cached_self_play_games(reference, digest, size, count, visits, seed,
                                                       convert.default_cache_dir(), say)
        if write_games:
            written += played
            continue
        states = gate.states_of_games(played, size, positions, seed)
        click.echo(f"{path.name}, {size}x{size}: {len(states)} positions of {len(played)} "
                   f"{'real games' if real else 'self-play games'}, batch 1 and {batch}; "
                   f"not run here: {', '.join(f'{k} ({v})' for k, v in rejected.items()) or 'nothing'}")
        results, rates = bench_gate.bench_precision(reference, {"onnxruntime fp32": reference, **candidates},
                                                    states, batch, say, seconds)
        click.echo(gate.format_table(results))
        base = rates["onnxruntime fp32"]
        click.echo(f"bare net evals/s at batch {batch}: " + ", ".join(
            f"{name} {rate:.1f} ({rate / base:.2f}x)" for name, rate in rates.items()))
        report["sizes"][size] = {"positions": len(states), "games": len(played), "rates": rates,
                                 "results": [dataclasses.asdict(r) | {"failures": r.failures} for r in results]}
    if write_games:
        Path(write_games).write_text(f"# {path.name}, self-play with miai's search at {visits} visits a move\n"
                                     + bench_gate.format_games(written), encoding="utf-8")
        click.echo(f"{len(written)} games written to {write_games}")
        return
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


@bench.command("modes")
@click.option("--net", required=True, type=_NET, help="The net both settings search with.")
@click.option("--a", "a", default="", help="Comma-separated search overrides for A, e.g. graph=true.")
@click.option("--b", "b", default="", help="The same for B.")
@click.option("--games", default=40, show_default=True, type=click.IntRange(2), help="Games (pairs, colours swapped).")
@click.option("--visits", default=64, show_default=True, type=click.IntRange(1), help="Visits per move.")
@click.option("--seed", default=1, show_default=True, type=int, help="Seed of the openings.")
@_json_option
def modes_command(net: str, a: str, b: str, games: int, visits: int, seed: int, json_path: str | None) -> None:
    """Strength of two search settings at equal visits: in-process 9x9 games, A's Elo over B (95% interval)."""
    from miai.engine.bench.modes import compare_modes
    from miai.engine.config import ConfigError

    try:
        results = compare_modes(net, a, b, games, visits, seed,
                                progress=lambda line: click.echo(line, err=True))
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None
    click.echo(results[0].details["summary"])
    _report(results, json_path)
