"""`miai train gen / fit / eval / export` end to end on a tiny data set (needs torch and the teacher)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

pytest.importorskip("torch", reason="needs torch, the training extra: pip install -e '.[train]'")

from miai.engine.cli.main import main  # noqa: E402
from miai.go.state import GameState  # noqa: E402
from miai.nets.loading import load_evaluator  # noqa: E402
from miai.nets.train.manifest import verify_manifest  # noqa: E402
from tests.outside import needs_shared, shared  # noqa: E402

TEACHER = shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")


@pytest.mark.slow
@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_gen_fit_eval_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path / "train"))
    runner = CliRunner()

    def run(*args: str) -> str:
        result = runner.invoke(main, ["train", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    run("gen", "--data", "d", "--teacher", str(TEACHER), "--size", "7", "--positions", "24", "--parallel", "8")
    shards = sorted((tmp_path / "train" / "data" / "d").glob("*.npz"))
    assert [s.name for s in shards] == ["selfplay-s0-07-00000.npz"]
    run("fit", "--data", "d", "--run", "r", "--steps", "3", "--blocks", "1", "--channels", "8", "--sizes", "7:1",
        "--holdout", "8")
    assert (tmp_path / "train" / "runs" / "r" / "checkpoint.pt").is_file()
    metrics = json.loads(run("eval", "--data", "d", "--run", "r", "--holdout", "8"))
    assert set(metrics) == {"7"} and 0.0 <= metrics["7"]["top1"] <= 1.0
    target = tmp_path / "net" / "tiny.onnx"
    run("export", "--run", "r", "--output", str(target), "--name", "tiny", "--command", "miai train fit ...")
    manifest = verify_manifest(target)
    assert manifest["training"]["steps_done"] == 3
    assert manifest["data"]["positions_per_size"] == {"7": 24}
    (evaluation,) = load_evaluator(target).evaluate([GameState(7)])
    assert evaluation.policy.shape == (50,)
    # A fine-tuning run starts from r's checkpoint and continues its step count; r itself is untouched.
    # It trains on two data sets as one (the second a copy of the first under another name).
    shutil.copytree(tmp_path / "train" / "data" / "d", tmp_path / "train" / "data" / "e")
    run("fit", "--data", "d,e", "--run", "r2", "--start-from", "r", "--steps", "5", "--sizes", "7:1", "--holdout", "8")
    run("export", "--run", "r2", "--output", str(tmp_path / "net" / "tuned.onnx"), "--name", "tuned")
    tuned = verify_manifest(tmp_path / "net" / "tuned.onnx")
    assert tuned["training"]["steps_done"] == 5 and tuned["data"]["positions_per_size"] == {"7": 48}
    assert verify_manifest(target)["training"]["steps_done"] == 3
    # --minutes counts the run's whole training time: a limit it has already used stops it at the next checkpoint,
    # and the command says so rather than ending as if done.
    stopped = run("fit", "--data", "d", "--run", "r2", "--steps", "50", "--sizes", "7:1", "--holdout", "8",
                  "--minutes", "0.0001", "--keep-every", "1")
    assert "stopped at step 6 of 50" in stopped and "larger --minutes" in stopped


def test_bad_size_weights_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["train", "fit", "--sizes", "9:x"])
    assert result.exit_code != 0 and "sizes" in result.output


def test_start_from_a_run_without_checkpoint_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["train", "fit", "--run", "new", "--start-from", "missing"])
    assert result.exit_code != 0 and "no checkpoint" in result.output


def test_a_missing_data_set_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path))
    (tmp_path / "data" / "here").mkdir(parents=True)
    result = CliRunner().invoke(main, ["train", "fit", "--data", "here,typo", "--run", "new"])
    assert result.exit_code != 0 and "no such data set" in result.output and "typo" in result.output
    assert not (tmp_path / "data" / "typo").exists()


def test_a_katrain_version_names_its_cached_net_as_teacher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--teacher 1.9.3` is KaTrain 1.9.3's net from the cache (here a broken file: the error names it)."""
    from miai.nets.katrain_nets import KATRAIN_NETS

    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path / "train"))
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    cached = tmp_path / "cache" / "katrain" / "1.9.3" / KATRAIN_NETS["1.9.3"]
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not a model")
    result = CliRunner().invoke(main, ["train", "gen", "--data", "d", "--teacher", "1.9.3", "--positions", "8"])
    assert result.exit_code != 0 and "cannot load the teacher" in result.output and cached.name in result.output


def test_fit_grows_a_net_into_a_larger_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--start-from net.onnx --blocks 3 --channels 24` trains a larger net that starts as the smaller one."""
    from miai.nets.train.datagen import ShardWriter
    from miai.nets.train.export import export_onnx
    from miai.nets.train.model import ModelConfig, StudentNet
    from miai.nets.train.trainer import load_checkpoint
    from tests.nets.test_train import fake_labels, random_states

    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path / "train"))
    data = tmp_path / "train" / "data" / "d"
    data.mkdir(parents=True)
    ShardWriter(data, "r", 7, shard_size=1).add(fake_labels(random_states(7, 40)))
    small = tmp_path / "small.onnx"
    export_onnx(StudentNet(ModelConfig(blocks=2, channels=16, gpool_blocks=(1,))).eval(), small, "small")
    runner = CliRunner()
    args = ["train", "fit", "--data", "d", "--start-from", str(small), "--steps", "2", "--batch-size", "8",
            "--sizes", "7:1", "--holdout", "0"]
    shrink = runner.invoke(main, [*args, "--run", "s", "--channels", "8"])
    assert shrink.exit_code != 0 and "cannot shrink" in shrink.output
    result = runner.invoke(main, [*args, "--run", "g", "--blocks", "3", "--channels", "24"])
    assert result.exit_code == 0, result.output
    net, checkpoint = load_checkpoint(tmp_path / "train" / "runs" / "g" / "checkpoint.pt")
    assert (net.config.blocks, net.config.channels, net.config.gpool_blocks) == (3, 24, (1,))
    assert checkpoint["step"] == 2 and checkpoint["origin"]["grown_from"] == {"blocks": 2, "channels": 16}
    # Run g exists now: another size for it is refused rather than silently resumed at 3x24.
    resized = runner.invoke(main, [*args, "--run", "g", "--channels", "32", "--steps", "4"])
    assert resized.exit_code != 0 and "24 channels" in resized.output and "--run" in resized.output
    assert load_checkpoint(tmp_path / "train" / "runs" / "g" / "checkpoint.pt")[1]["step"] == 2
    resumed = runner.invoke(main, [*args, "--run", "g", "--channels", "24", "--steps", "4"])
    assert resumed.exit_code == 0, resumed.output


def test_fit_keeps_checkpoints_to_export_or_evaluate_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`fit --keep-every 2` keeps steps 2 and 4 beside the latest; `export --step 2` writes that net, and a step
    not kept is refused with the ones that were."""
    from miai.nets.train.datagen import ShardWriter
    from miai.nets.train.trainer import load_checkpoint
    from tests.nets.test_train import fake_labels, random_states

    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path / "train"))
    data = tmp_path / "train" / "data" / "d"
    data.mkdir(parents=True)
    ShardWriter(data, "r", 7, shard_size=1).add(fake_labels(random_states(7, 40)))
    runner = CliRunner()
    fit = runner.invoke(main, ["train", "fit", "--data", "d", "--run", "k", "--steps", "5", "--keep-every", "2",
                               "--blocks", "1", "--channels", "8", "--batch-size", "8", "--sizes", "7:1",
                               "--holdout", "8", "--loss-weights", "value=2.5"])
    assert fit.exit_code == 0, fit.output
    run = tmp_path / "train" / "runs" / "k"
    assert load_checkpoint(run / "checkpoint.pt")[1]["train_config"]["losses"] == {
        "policy": 1.0, "value": 2.5, "score": 0.5, "ownership": 1.0}
    assert sorted(p.name for p in run.glob("checkpoint*.pt")) == ["checkpoint-000002.pt", "checkpoint-000004.pt",
                                                                 "checkpoint.pt"]
    export = runner.invoke(main, ["train", "export", "--run", "k", "--step", "2", "--output", str(tmp_path / "k2.onnx")])
    assert export.exit_code == 0, export.output
    assert verify_manifest(tmp_path / "k2.onnx")["training"]["steps_done"] == 2
    evaluated = runner.invoke(main, ["train", "eval", "--data", "d", "--run", "k", "--step", "4", "--holdout", "8"])
    assert evaluated.exit_code == 0 and "top1" in evaluated.output
    missing = runner.invoke(main, ["train", "export", "--run", "k", "--step", "3"])
    assert missing.exit_code != 0 and "no checkpoint at step 3 (kept: 2, 4)" in missing.output


def test_eval_takes_an_exported_net_and_zeroes_input_families(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`eval --net FILE` measures an exported net without a run; `--zero-inputs stones` blinds it to the stones
    (its losses change); an unknown family is refused naming the known ones; evaluating a run that does not
    exist names it and leaves no empty run directory behind."""
    from miai.nets.train.datagen import ShardWriter
    from tests.nets.test_train import fake_labels, random_states

    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path / "train"))
    data = tmp_path / "train" / "data" / "d"
    data.mkdir(parents=True)
    ShardWriter(data, "r", 7, shard_size=1).add(fake_labels(random_states(7, 24)))
    runner = CliRunner()

    def ok(*args: str) -> str:
        result = runner.invoke(main, ["train", *args])
        assert result.exit_code == 0, result.output
        return result.output

    ok("fit", "--data", "d", "--run", "k", "--steps", "3", "--blocks", "1", "--channels", "8", "--batch-size", "8",
       "--sizes", "7:1", "--holdout", "8")
    ok("export", "--run", "k", "--output", str(tmp_path / "k.onnx"))
    from_run = json.loads(ok("eval", "--data", "d", "--run", "k", "--holdout", "8"))["7"]
    from_file = json.loads(ok("eval", "--data", "d", "--net", str(tmp_path / "k.onnx"), "--holdout", "8"))["7"]
    assert from_file["policy"] == pytest.approx(from_run["policy"], abs=1e-3)
    blind = json.loads(ok("eval", "--data", "d", "--net", str(tmp_path / "k.onnx"), "--holdout", "8",
                          "--zero-inputs", "stones,ladders"))["7"]
    assert blind["policy"] != pytest.approx(from_file["policy"], abs=1e-4)
    unknown = runner.invoke(main, ["train", "eval", "--data", "d", "--run", "k", "--zero-inputs", "ladder"])
    assert unknown.exit_code != 0 and "no input family 'ladder'" in unknown.output and "ladders" in unknown.output
    missing = runner.invoke(main, ["train", "eval", "--data", "d", "--run", "nosuch", "--holdout", "8"])
    assert missing.exit_code != 0 and "nosuch" in missing.output and "Traceback" not in missing.output
    assert not (tmp_path / "train" / "runs" / "nosuch").exists()
    exported = runner.invoke(main, ["train", "export", "--run", "nosuch", "--output", str(tmp_path / "x.onnx")])
    assert exported.exit_code != 0 and not (tmp_path / "train" / "runs" / "nosuch").exists()
