"""``miai train``: distil a KataGo teacher into miai's own small net (data, fit, export).

Every file goes under ``~/.cache/miai/train`` (or ``$MIAI_TRAIN_DIR``), never into the repository;
``export`` writes the ONNX net and its manifest where you ask. See docs/training.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from miai.engine.cli.compose import build_evaluator, load_config_or_fail

if TYPE_CHECKING:
    from miai.engine.selfplay import SearchBudget
    from miai.go.coords import Color
    from miai.go.sgf import SgfGame
    from miai.nets.train.dataset import ShardSet
    from miai.nets.train.model import ModelConfig, StudentNet
    from miai.nets.train.trainer import LossWeights, TrainConfig


TEACHER_HELP = ("Teacher net: a KataGo model (.bin.gz) or .onnx file, or a KaTrain version (1.9.3: g170e b15c192, "
                "1.14.0: b18c384nbt; downloaded once). miai's nets were distilled from g170 b6c96 "
                "(g170-b6c96-s175395328-d26788732.bin.gz, one of KataGo's published nets: "
                "https://katagotraining.org/networks/).")
STEP_OPTION = click.option("--step", default=None, type=click.IntRange(1),
                           help="A checkpoint the run kept (fit --keep-every) instead of its latest.")


class _TrainGroup(click.Group):
    """Turns the training package's errors (a missing run or checkpoint, a damaged shard) into one line."""

    def invoke(self, ctx: click.Context) -> Any:
        from miai.nets.train import TrainError

        try:
            return super().invoke(ctx)
        except TrainError as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=_TrainGroup)
def train() -> None:
    """Train miai's own net by distilling a KataGo teacher (needs the `train` extra: torch)."""


@train.command("gen")
@click.option("--data", "data_name", default="default", show_default=True, help="Data set name (a directory).")
@click.option("--teacher", required=True, help=TEACHER_HELP)
@click.option("--source", type=click.Choice(["selfplay", "kifu"]), default="selfplay", show_default=True)
@click.option("--size", default=9, show_default=True, type=click.IntRange(5, 19), help="Board size.")
@click.option("--positions", default=100_000, show_default=True, type=click.IntRange(1), help="Positions to add.")
@click.option("--minutes", default=0.0, show_default=True, type=click.FloatRange(0), help="Time limit (0 = none).")
@click.option("--kifu", default=None, type=click.Path(dir_okay=False),
              help="Real games for --source kifu: a text file, one game a line (id<TAB>;B[pd];W[dd]...).")
@click.option("--parallel", default=32, show_default=True, type=click.IntRange(1), help="Positions per teacher call.")
@click.option("--temperature", default=0.8, show_default=True, type=click.FloatRange(0.05), help="Self-play.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1), help="onnxruntime threads.")
@click.option("--lookahead", default=0, show_default=True, type=click.IntRange(0),
              help="Improve the policy targets by evaluating this many likeliest moves one ply deeper (0 = raw "
                   "policy; costs that many more evaluations a position).")
@click.option("--lookahead-value", is_flag=True,
              help="With --lookahead: back the value targets up from the same moves too (at no extra cost).")
@click.option("--search", "search_visits", default=0, show_default=True, type=click.IntRange(0),
              help="Self-play only: search each position with miai's search over the teacher for this many root "
                   "visits, and take the policy, value and score targets from that search (0 = none).")
@click.option("--cheap", "cheap", default=None, metavar="VISITS:SHARE",
              help="With --search: play this share of the moves after a search of VISITS only and store them not "
                   "(KataGo's playout cap randomisation, e.g. 100:0.75 with --search 600): more games in the time.")
@click.option("--player", default=None, metavar="NET",
              help="With --search: the games are played by miai's search over NET (a model as `miai gtp --model` "
                   "takes, e.g. the student being trained), moves chosen as `miai gtp` chooses them, and the teacher "
                   "labels each position raw (or with --lookahead): on-policy targets, where the student's own play "
                   "goes.")
@click.option("--opponent", default=None, metavar="NET",
              help="With --player: the player meets miai's search over NET (e.g. the teacher) instead of itself, "
                   "colours alternating game by game; every position is labelled as with --player alone.")
@click.option("--opponent-search", "opponent_visits", default=0, show_default=True, type=click.IntRange(0),
              help="With --opponent: its search's visits a move (0 = the player's --search; --cheap applies to the "
                   "player only).")
def gen(data_name: str, teacher: str, source: str, size: int, positions: int, minutes: float, kifu: str | None,
        parallel: int, temperature: float, seed: int, threads: int, lookahead: int, lookahead_value: bool,
        search_visits: int, cheap: str | None, player: str | None, opponent: str | None,
        opponent_visits: int) -> None:
    """Add teacher-labelled positions to a data set (resumable: it only adds shards)."""
    from miai.nets.evaluator import EvaluatorError
    from miai.nets.loading import load_evaluator
    from miai.nets.train import datagen
    from miai.nets.train.paths import data_dir

    from miai.nets.train import TrainError

    if source == "kifu" and kifu is None:
        raise click.UsageError("--source kifu needs --kifu FILE (real games, one a line)")
    if lookahead_value and not lookahead:
        raise click.UsageError("--lookahead-value needs --lookahead N (the moves whose values it backs up)")
    if player is not None and not search_visits:
        raise click.UsageError("--player needs --search V (the visits of the player's search a move)")
    if opponent is None and opponent_visits:
        raise click.UsageError("--opponent-search needs --opponent NET")
    if opponent is not None and player is None:
        raise click.UsageError("--opponent needs --player NET (the side whose games it joins)")
    if search_visits and (source != "selfplay" or (lookahead and player is None)):
        raise click.UsageError("--search takes self-play positions only, and replaces --lookahead (unless --player)")
    budget = _search_budget(search_visits, cheap)
    try:
        evaluator = load_evaluator(_teacher_path(teacher), intra_op_threads=threads, max_batch=max(parallel, 1))
    except (OSError, ValueError, EvaluatorError) as exc:  # the message names the file
        raise click.ClickException(f"cannot load the teacher: {exc}") from exc
    try:
        labeler = datagen.Teacher(evaluator)
    except TrainError as exc:
        raise click.ClickException(str(exc)) from exc
    directory = data_dir(data_name)
    improve = datagen.Lookahead(children=lookahead, mix_value=lookahead_value) if lookahead else None
    tag = f"-q{lookahead}{'v' if lookahead_value else ''}" if lookahead else ""  # shard names say which targets
    if source == "selfplay":
        config = datagen.SelfPlayConfig(size=size, parallel_games=parallel, temperature=temperature, seed=seed,
                                        lookahead=improve)
        if search_visits:
            against = None if opponent is None else (opponent, _search_budget(opponent_visits or search_visits, None))
            batches = _searched_self_play(labeler, config, player or str(_teacher_path(teacher)), budget, threads,
                                          labelled_by_search=player is None, opponent=against)
            cheap_tag = f"c{budget.cheap_visits}" if budget.cheap_visits else ""
            tag += f"-{'p' if player else 'm'}{search_visits}{cheap_tag}"
            tag += f"-o{against[1].visits}" if against else ""
        else:
            batches = datagen.self_play_positions(labeler, config)
        prefix = f"selfplay{tag}-s{seed}"
    else:
        kifu_config = datagen.KifuConfig(path=str(kifu), batch=parallel, seed=seed, lookahead=improve)
        batches = datagen.kifu_positions(labeler, kifu_config, size)
        prefix = f"kifu{tag}-s{seed}"
    writer = datagen.ShardWriter(directory, prefix, size)
    interactive, reported = sys.stderr.isatty(), 0.0
    with click.progressbar(length=positions, label=f"{source} {size}x{size}", file=sys.stderr,
                           show_pos=True, show_eta=True) as bar:
        done = 0

        def progress(state: datagen.GenProgress) -> None:
            nonlocal done, reported
            bar.update(state.positions - done)
            done = state.positions
            if not interactive and state.seconds - reported >= 60:  # a log line a minute in nohup logs
                reported = state.seconds
                click.echo(f"{done} positions in {state.seconds:.0f} s", err=True)

        result = datagen.generate(batches, writer, positions=positions, max_seconds=minutes * 60, progress=progress)
    click.echo(f"added {result.positions} positions to {directory} in {result.seconds:.0f} s "
               f"({result.positions / max(result.seconds, 1e-9):.1f}/s)", err=True)


@train.command("fit")
@click.option("--data", "data_name", default="default", show_default=True,
              help="Data set name, or several separated by commas to train on them as one (a,b).")
@click.option("--run", "run_name", default="default", show_default=True, help="Run name (checkpoint directory).")
@click.option("--steps", default=3000, show_default=True, type=click.IntRange(1), help="Optimizer steps.")
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(1))
@click.option("--lr", default=2e-3, show_default=True, type=click.FloatRange(0, min_open=True))
@click.option("--sizes", default="9:0.7,13:0.15,19:0.15", show_default=True,
              help="Board sizes and the share of batches of each; sizes not named are left out.")
@click.option("--blocks", default=None, type=click.IntRange(1),
              help="Residual blocks (default 5, or the --start-from net's; more than it has grows it).")
@click.option("--channels", default=None, type=click.IntRange(8),
              help="Trunk channels (default 48, or the --start-from net's; more than it has grows it).")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1), help="torch threads.")
@click.option("--minutes", default=0.0, show_default=True, type=click.FloatRange(0),
              help="Stop once the run has trained this long in all, counting the time of the run it started from "
                   "(checked at each checkpoint, every 2 minutes); run again with more to go on; 0 = run all steps.")
@click.option("--holdout", default=512, show_default=True, type=click.IntRange(0),
              help="Positions per size kept out of training (the first ones; see `miai train eval`).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--loss-weights", default="", metavar="TERM=W,...",
              help="Weights of the loss terms, e.g. value=2 (terms: policy, value, score, ownership; default 1, 1, "
                   "0.5, 1).")
@click.option("--keep-every", default=0, show_default=True, type=click.IntRange(0),
              help="Also keep the checkpoint of every this many steps, for `export --step` or `eval --step` (0 = the "
                   "latest only).")
@click.option("--start-from", "start_from", default=None,
              help="A new run starts from this run's checkpoint (weights, optimizer, step count) instead of scratch, "
                   "or from a net `miai train export` wrote (an .onnx file such as miai's bundled nets: its weights, "
                   "batch norms recalibrated on the data, step 0). With more --blocks or --channels than the net "
                   "has, it is grown first into a larger net computing the same outputs (step 0).")
def fit(data_name: str, run_name: str, steps: int, batch_size: int, lr: float, sizes: str, blocks: int | None,
        channels: int | None, threads: int, minutes: float, holdout: int, seed: int, loss_weights: str,
        keep_every: int, start_from: str | None) -> None:
    """Train the student on a data set; resumes from the run's checkpoint when there is one."""
    from miai.nets.train import TrainError
    from miai.nets.train.paths import run_dir
    from miai.nets.train.trainer import CHECKPOINT, TrainConfig, train as run_training

    config = TrainConfig(steps=steps, batch_size=batch_size, lr=lr, size_weights=_size_weights(sizes),
                         threads=threads, seed=seed, holdout=holdout, keep_every=keep_every,
                         losses=_loss_weights(loss_weights))
    if start_from is not None and not (run_dir(run_name) / CHECKPOINT).is_file():
        if start_from.endswith(".onnx") or blocks is not None or channels is not None:
            _start_from_net(start_from, config, _data_dirs(data_name), run_dir(run_name), blocks, channels)
        else:
            _copy_checkpoint(run_dir(start_from, create=False), run_dir(run_name))
    _check_resumed_size(run_dir(run_name) / CHECKPOINT, blocks, channels)
    model = _model_config(blocks, channels)
    directory = run_dir(run_name)
    interactive = sys.stderr.isatty()
    with click.progressbar(length=steps, label="training", file=sys.stderr, show_pos=True, show_eta=True,
                           item_show_func=lambda x: x) as bar:
        seen = 0

        def progress(step: int, total: int, losses: Mapping[str, float]) -> None:
            nonlocal seen
            summary = " ".join(f"{k}={v:.3f}" for k, v in losses.items())
            bar.update(step - seen, summary)
            seen = step
            if not interactive and step % 100 == 0:
                click.echo(f"step {step}/{total} {summary}", err=True)

        try:
            ckpt = run_training(config, _data_dirs(data_name), directory, model, max_seconds=minutes * 60,
                                progress=progress)
        except TrainError as exc:
            raise click.ClickException(str(exc)) from exc
    click.echo(f"checkpoint: {ckpt}", err=True)
    _say_why_stopped_early(ckpt, steps, minutes)


def _say_why_stopped_early(checkpoint: Path, steps: int, minutes: float) -> None:
    """A run stopped by --minutes before its steps says so: the limit counts the run's whole training time (with a
    --start-from run's), which a resumed run may already have used up."""
    from miai.nets.train.trainer import load_checkpoint

    done = load_checkpoint(checkpoint)[1]
    if int(done["step"]) < steps:
        click.echo(f"stopped at step {done['step']} of {steps}: the run has trained "
                   f"{float(done['elapsed']) / 60:.1f} minutes in all, --minutes {minutes:g}; run again with a larger "
                   "--minutes to go on", err=True)


def _check_resumed_size(checkpoint: Path, blocks: int | None, channels: int | None) -> None:
    """Refuse --blocks/--channels that differ from the checkpoint a run resumes: it would go on at its own size."""
    from miai.nets.train.trainer import load_checkpoint

    if (blocks is None and channels is None) or not checkpoint.is_file():
        return
    have = load_checkpoint(checkpoint)[0].config
    if blocks not in (None, have.blocks) or channels not in (None, have.channels):
        raise click.ClickException(
            f"{checkpoint} holds {have.blocks} blocks of {have.channels} channels, so the run would resume at that "
            f"size, not --blocks {blocks or have.blocks} --channels {channels or have.channels}; name a new --run "
            f"(with --start-from {checkpoint.parent.name} to grow it)")


def _model_config(blocks: int | None, channels: int | None) -> ModelConfig:
    """The student of ``blocks`` x ``channels`` (None: ``ModelConfig``'s); heads and pooling scale with the trunk."""
    from miai.nets.train.model import ModelConfig

    blocks, channels = blocks or ModelConfig.blocks, channels or ModelConfig.channels
    return ModelConfig(blocks=blocks, channels=channels, gpool_channels=channels // 4,
                       head_channels=max(8, channels // 2), value_hidden=channels)


def _start_from_net(source: str, config: TrainConfig, data_directory: list[Path], run_directory: Path,
                    blocks: int | None, channels: int | None) -> None:
    """Seed a new run with the weights of an exported student or of a run, grown when asked for a larger one."""
    from miai.nets.train import TrainError
    from miai.nets.train.manifest import origin_of
    from miai.nets.train.onnx_import import student_from_onnx
    from miai.nets.train.paths import run_dir
    from miai.nets.train.trainer import CHECKPOINT, load_checkpoint, start_from_net

    try:
        if source.endswith(".onnx"):
            if not Path(source).is_file():
                raise click.ClickException(f"--start-from: no such file: {source}")
            net, origin = student_from_onnx(Path(source)), origin_of(Path(source))
        else:
            net, data = load_checkpoint(run_dir(source, create=False) / CHECKPOINT)  # names the path when missing
            origin = {"run": source, "steps": data["step"]}
            if data.get("origin"):
                origin["started_from"] = data["origin"]
        if (blocks, channels) != (None, None):
            net, origin = _grown(net, origin, blocks or net.config.blocks, channels or net.config.channels)
        checkpoint = start_from_net(net, config, data_directory, run_directory, origin)
    except TrainError as exc:
        raise click.ClickException(f"--start-from: {exc}") from exc
    size = f"{net.config.blocks} blocks of {net.config.channels} channels"
    click.echo(f"starting from {source} as {size} (batch norms recalibrated; step 0): {checkpoint}", err=True)


def _grown(net: StudentNet, origin: dict[str, Any], blocks: int, channels: int) -> tuple[StudentNet, dict[str, Any]]:
    """``net`` grown to ``blocks`` x ``channels`` (heads and pooling scale as in a new net, never below the
    source's), and ``origin`` saying so; ``net`` itself when it already has that size."""
    import dataclasses

    from miai.nets.train.grow import grow

    source = net.config
    scaled = _model_config(blocks, channels)
    wanted = dataclasses.replace(
        scaled, gpool_channels=max(scaled.gpool_channels, source.gpool_channels),
        head_channels=max(scaled.head_channels, source.head_channels),
        value_hidden=max(scaled.value_hidden, source.value_hidden),
        gpool_blocks=source.gpool_blocks, initial_kernel=source.initial_kernel)
    if wanted == source:
        return net, origin
    return grow(net, wanted), {**origin, "grown_from": {"blocks": source.blocks, "channels": source.channels}}


def _copy_checkpoint(source: Path, target: Path) -> None:
    """Seed run ``target`` with ``source``'s checkpoint and log (a fine-tuning run continues its step count)."""
    import shutil

    from miai.nets.train.trainer import CHECKPOINT

    if not (source / CHECKPOINT).is_file():
        raise click.ClickException(f"--start-from: no checkpoint in {source}")
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / CHECKPOINT, target / CHECKPOINT)
    if (source / "log.jsonl").is_file():
        shutil.copyfile(source / "log.jsonl", target / "log.jsonl")
    click.echo(f"starting from {source / CHECKPOINT}", err=True)


@train.command("export")
@click.option("--run", "run_name", default="default", show_default=True, help="Run name.")
@click.option("--output", default=None, type=click.Path(dir_okay=False),
              help="The .onnx file to write (default: <run dir>/<name>.onnx); a manifest goes next to it.")
@click.option("--name", "net_name", default="miai-student", show_default=True, help="Model name in the metadata.")
@click.option("--command", "command_text", default="", help="The command(s) that produced the net (manifest).")
@click.option("--board-sizes", default=None, metavar="LO-HI",
              help="Board sizes a bundled net plays by default, e.g. 2-10 (manifest; default: all).")
@STEP_OPTION
def export(run_name: str, output: str | None, net_name: str, command_text: str, board_sizes: str | None,
           step: int | None) -> None:
    """Export a run's checkpoint as an ONNX net for `miai gtp --model`, plus its JSON manifest."""
    from miai.nets.train.manifest import write_manifest
    from miai.nets.train.paths import run_dir

    sizes = _size_range(board_sizes) if board_sizes else None
    directory = run_dir(run_name, create=False)
    target = Path(output) if output else directory / f"{net_name}.onnx"
    manifest = write_manifest(_checkpoint(directory, step), target, net_name, command_text, board_sizes=sizes)
    click.echo(f"wrote {target} and {manifest}", err=True)


def _checkpoint(directory: Path, step: int | None) -> Path:
    """A run's latest checkpoint, or the one it kept at ``step`` (``fit --keep-every``)."""
    from miai.nets.train.trainer import CHECKPOINT, kept_checkpoint, kept_steps

    if step is None:
        return directory / CHECKPOINT
    path = kept_checkpoint(directory, step)
    if not path.is_file():
        kept = kept_steps(directory)
        raise click.ClickException(f"{directory.name} kept no checkpoint at step {step} (kept: "
                                   f"{', '.join(map(str, kept)) or 'none; see fit --keep-every'})")
    return path


def _size_range(text: str) -> tuple[int, int]:
    from miai.nets.bundled import MAX_SIZE, MIN_SIZE

    try:
        lo, hi = (int(part) for part in text.split("-"))
    except ValueError:
        raise click.BadParameter(f"expected LO-HI such as 2-10, not {text!r}", param_hint="--board-sizes") from None
    if not MIN_SIZE <= lo <= hi <= MAX_SIZE:
        raise click.BadParameter(f"sizes must satisfy {MIN_SIZE} <= LO <= HI <= {MAX_SIZE}, not {text!r}",
                                 param_hint="--board-sizes")
    return lo, hi


@train.command("record")
@click.argument("net", type=click.Path(exists=True, dir_okay=False))
@click.argument("summaries", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--key", required=True, help="Name of the measurement in the manifest.")
@click.option("--note", default="", help="A remark stored with it.")
@click.option("--add", is_flag=True,
              help="Add the games to those already stored under KEY (a schedule resumed in a later session); "
                   "--note then says what the whole holds.")
def record(net: str, summaries: tuple[str, ...], key: str, note: str, add: bool) -> None:
    """Store `miai match --json` SUMMARIES in NET's manifest (measured.matches.KEY); several files are parts of
    one schedule (e.g. two streams of games side by side) and are added up."""

    from miai.match.summary import combine_entries, result_entry
    from miai.nets.train import TrainError
    from miai.nets.train.manifest import record_match

    if add and not note:
        raise click.UsageError("--add needs a --note saying what the whole schedule now holds")
    try:
        entry = record_match(Path(net), key, result_entry([Path(s) for s in summaries]), note,
                             merge=combine_entries if add else None)
    except (TrainError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(entry, indent=2))


@train.command("played")
@click.option("--sgf", "sgf_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="Games as `miai match --sgf-dir` writes them (players named '... (A)' and '... (B)').")
@click.option("--engine", type=click.Choice(["A", "B"]), default="A", show_default=True,
              help="Whose positions: the engine that played --net.")
@click.option("--net", "net_file", required=True, help="The net that engine played (.onnx or a KataGo model).")
@click.option("--teacher", required=True, help=TEACHER_HELP)
def played(sgf_dir: str, engine: str, net_file: str, teacher: str) -> None:
    """How far a net's winrate is from the teacher's on the positions of its played games, after its own moves and
    after its opponent's, by moves played (JSON on stdout): where the net's search steers into positions its
    value overrates, the gap after its own moves leans its way."""
    from miai.go.errors import SgfError
    from miai.go.sgf import read_sgf_file
    from miai.nets.evaluator import EvaluatorError
    from miai.nets.loading import load_evaluator
    from miai.nets.train.metrics import one_board_size, played_value_gaps

    paths = sorted(Path(sgf_dir).glob("*.sgf"))
    try:
        records = [read_sgf_file(path) for path in paths]
    except SgfError as exc:
        raise click.ClickException(str(exc)) from exc
    for record in records:  # an old file's quirks, repaired: one line each
        for warning in record.warnings:
            click.echo(f"warning: {warning}", err=True)
    games = [(record, color) for record in records for color, name in _players(record) if name.endswith(f"({engine})")]
    if not games:
        raise click.ClickException(f"{sgf_dir}: no game names a player '... ({engine})' (PB or PW, as `miai match` "
                                   "writes them)")
    try:
        one_board_size(games)  # before loading the nets: a teacher may take a while to convert or download
    except ValueError as exc:
        raise click.ClickException(f"{sgf_dir}: {exc}") from exc
    try:
        net, judge = load_evaluator(net_file), load_evaluator(_teacher_path(teacher))
    except (OSError, ValueError, EvaluatorError) as exc:  # the message names the file
        raise click.ClickException(f"cannot load a net: {exc}") from exc
    try:
        gaps = played_value_gaps(net, judge, games)
    except (SgfError, EvaluatorError) as exc:  # an illegal move in a record; a net that does not play its size
        raise click.ClickException(f"{sgf_dir}: {exc}") from exc
    click.echo(json.dumps({"games": len(games), **gaps}, indent=2))


def _players(record: SgfGame) -> list[tuple[Color, str]]:
    """(colour, name) of a record's two players, names as PB and PW give them ('' where missing)."""
    from miai.go.coords import Color

    return [(Color.BLACK, record.black_player or ""), (Color.WHITE, record.white_player or "")]


@train.command("eval")
@click.option("--data", "data_name", default="default", show_default=True,
              help="Data set name (several separated by commas: the hold-out is the first one's).")
@click.option("--run", "run_name", default="default", show_default=True, help="Run name.")
@click.option("--net", "net_file", default=None, type=click.Path(dir_okay=False),
              help="Instead of a run: a net `miai train export` wrote (.onnx), such as miai's bundled nets.")
@click.option("--holdout", default=512, show_default=True, type=click.IntRange(1),
              help="Held-out positions per size (the first ones of the data set; training skips them).")
@click.option("--zero-inputs", "zero_inputs", default="", metavar="FAMILY,...",
              help="Set these input families to zero first (e.g. ladders): what the net draws from them.")
@click.option("--teacher", "teacher", default=None,
              help="Instead of a student: measure this teacher (a KataGo model or KaTrain version) the same way, "
                   "as the floor on raw targets or the search's distance from the raw net on search targets.")
@STEP_OPTION
def evaluate(data_name: str, run_name: str, net_file: str | None, holdout: int, zero_inputs: str,
             teacher: str | None, step: int | None) -> None:
    """Compare a run's checkpoint (or --net, or --teacher itself) with the targets on held-out positions (JSON on
    stdout)."""
    from miai.nets import features
    from miai.nets.train.paths import run_dir

    zeroed = [name.strip() for name in zero_inputs.split(",") if name.strip()]
    for name in zeroed:
        try:
            features.family_planes(name)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--zero-inputs") from exc
    if teacher is not None:  # numpy and onnxruntime only: no torch needed
        if net_file is not None or zeroed or step is not None:
            raise click.UsageError("--teacher measures the teacher alone (no --net, --step or --zero-inputs)")
        _echo_metrics(_teacher_metrics(teacher, data_name, holdout))
        return
    from miai.nets.train.onnx_import import student_from_onnx
    from miai.nets.train.trainer import holdout_metrics, load_checkpoint

    if net_file is not None:
        if step is not None:
            raise click.BadParameter("--step picks a run's kept checkpoint; a --net file has none", param_hint="--step")
        if not Path(net_file).is_file():
            raise click.BadParameter(f"no such file: {net_file}", param_hint="--net")
        net = student_from_onnx(Path(net_file))
    else:
        net, _ = load_checkpoint(_checkpoint(run_dir(run_name, create=False), step))
    _echo_metrics(holdout_metrics(net, _holdout_shards(data_name, holdout), holdout, zeroed))


def _teacher_metrics(teacher: str, data_name: str, holdout: int) -> Mapping[int, Any]:
    """``teacher_holdout_metrics`` of the teacher ``teacher`` names on the data sets' held-out positions."""
    from miai.nets.evaluator import EvaluatorError
    from miai.nets.loading import load_evaluator
    from miai.nets.train import TrainError, datagen
    from miai.nets.train.metrics import teacher_holdout_metrics

    try:
        labeler = datagen.Teacher(load_evaluator(_teacher_path(teacher)))
    except (OSError, ValueError, EvaluatorError, TrainError) as exc:
        raise click.ClickException(f"cannot load the teacher: {exc}") from exc
    return teacher_holdout_metrics(labeler, _holdout_shards(data_name, holdout), holdout)


def _holdout_shards(data_name: str, holdout: int) -> ShardSet:
    """The data sets ``data_name`` names, loaded, their first ``holdout`` positions of each size held out."""
    from miai.nets.train.dataset import ShardSet

    shards = ShardSet(_data_dirs(data_name), holdout=holdout)
    shards.refresh()
    return shards


def _echo_metrics(metrics: Mapping[int, Any]) -> None:
    """Per-size metrics as JSON on stdout (sizes as keys)."""
    click.echo(json.dumps({str(size): values for size, values in metrics.items()}, indent=2))


def _search_budget(visits: int, cheap: str | None) -> SearchBudget:
    """``--search`` and ``--cheap VISITS:SHARE`` as a budget (usage errors name the option)."""
    from miai.engine.selfplay import SearchBudget

    if cheap is None:
        return SearchBudget(visits)
    if not visits:
        raise click.UsageError("--cheap needs --search V (the visits of the positions stored)")
    text, _, share = cheap.partition(":")
    try:
        budget = SearchBudget(visits, int(text), float(share))
    except ValueError:
        raise click.BadParameter(f"{cheap!r}: expected VISITS:SHARE, e.g. 100:0.75", param_hint="--cheap") from None
    if not 0 < budget.cheap_visits < visits or not 0.0 <= budget.cheap_share < 1.0:
        raise click.BadParameter(f"{cheap!r}: VISITS must be between 0 and --search's {visits}, SHARE in [0, 1)",
                                 param_hint="--cheap")
    return budget


def _searched_self_play(labeler: Any, config: Any, model: str, budget: SearchBudget, threads: int,
                        labelled_by_search: bool, opponent: tuple[str, SearchBudget] | None = None) -> Iterator[Any]:
    """Self-play by miai's search over ``model`` (the default config's search constants, as ``miai gtp --model
    MODEL`` plays, stopped by the budget's visits alone): labelled by that search (``model`` is the teacher), or by
    the raw teacher ``labeler`` (``model`` is a player, e.g. a student), in games against ``opponent`` (a net and
    its budget) when one is given."""
    from miai.engine.core.search import Search
    from miai.engine.selfplay import match_positions, player_self_play_positions, search_self_play_positions

    def searcher(net: str, visits: int) -> Search:
        sets = ("search.max_time=0", f"search.max_visits={visits}", f"net.threads={threads}")
        engine_config = load_config_or_fail((), sets).config
        return Search(build_evaluator(net, engine_config, progress=False), engine_config.search)  # bad file named

    player = searcher(model, budget.visits)
    if opponent is not None:
        net, opponent_budget = opponent
        against = (searcher(net, opponent_budget.visits), opponent_budget)
        return match_positions(labeler, (player, budget), against, config)
    positions = search_self_play_positions if labelled_by_search else player_self_play_positions
    return positions(labeler, player, config, budget)


def _teacher_path(teacher: str) -> Path:
    """The teacher's model file: ``teacher`` itself, or the net of the KaTrain version it names."""
    from miai.nets.katrain_nets import KatrainNetError, model_path

    try:
        return model_path(teacher)
    except KatrainNetError as exc:
        raise click.ClickException(f"cannot fetch KaTrain {teacher}'s net: {exc}") from exc


def _data_dirs(text: str) -> list[Path]:
    """The directories of the data sets named in ``a,b`` (existing ones only: a typo is not a new empty set)."""
    from miai.nets.train.paths import data_dir

    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("expected a data set name", param_hint="--data")
    directories = [data_dir(name, create=False) for name in names]
    missing = [str(d) for d in directories if not d.is_dir()]
    if missing:
        raise click.BadParameter(f"no such data set: {', '.join(missing)}", param_hint="--data")
    return directories


def _loss_weights(text: str) -> LossWeights:
    """``LossWeights`` with the terms ``text`` names (``value=2,score=1``) changed."""
    import dataclasses

    from miai.nets.train.trainer import LossWeights

    terms = [f.name for f in dataclasses.fields(LossWeights)]
    changed: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, weight = part.partition("=")
        try:
            changed[name.strip()] = float(weight)
        except ValueError:
            raise click.BadParameter(f"expected TERM=WEIGHT such as value=2, got {part!r}",
                                     param_hint="--loss-weights") from None
        if name.strip() not in terms or changed[name.strip()] < 0:
            raise click.BadParameter(f"{part!r}: terms are {', '.join(terms)}, weights >= 0",
                                     param_hint="--loss-weights")
    return LossWeights(**changed)


def _size_weights(text: str) -> tuple[tuple[int, float], ...]:
    try:
        pairs = [part.split(":") for part in text.split(",") if part.strip()]
        weights = tuple((int(size), float(weight)) for size, weight in pairs)
    except ValueError:
        raise click.BadParameter(f"expected sizes like 9:0.7,19:0.3, got {text!r}") from None
    if not weights or any(not 5 <= s <= 19 or w < 0 for s, w in weights):
        raise click.BadParameter(f"sizes must be 5..19 with weights >= 0, got {text!r}")
    return weights
