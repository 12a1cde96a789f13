"""miai train, the torch parts: the student, its export and import, and the training loop.

Skipped when torch (the `train` extra) is not installed; tests/nets/test_train.py (shards, symmetries, targets)
runs without it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from miai.nets import features
from miai.nets.bundled import bundled_nets
from miai.nets.evaluator import legal_mask
from miai.nets.train import TrainError
from miai.nets.train.datagen import ShardWriter
from tests.nets.test_train import fake_labels, random_states


torch = pytest.importorskip("torch", reason="needs torch, the training extra: pip install -e '.[train]'")
pytestmark = pytest.mark.slow
# Two cores shared with other work: more than one intra-op thread makes torch spin-wait (measured
# 20x slower under load).
torch.set_num_threads(1)

from miai.nets.loading import load_evaluator  # noqa: E402
from miai.nets.train.export import export_onnx, sha256_of  # noqa: E402
from miai.nets.train.manifest import origin_of, verify_manifest, write_manifest  # noqa: E402
from miai.nets.train.model import ModelConfig, StudentNet  # noqa: E402
from miai.nets.train.trainer import LossWeights, TrainConfig, compute_losses, load_checkpoint, train  # noqa: E402

TINY = ModelConfig(blocks=2, channels=16, gpool_channels=4, gpool_blocks=(1,), head_channels=8, value_hidden=16)


def randomized(net: StudentNet) -> StudentNet:
    """Non-trivial batch-norm statistics and weights, so that export errors would show."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5, generator=gen)
                module.running_var.uniform_(0.5, 2.0, generator=gen)
                module.weight.uniform_(0.5, 1.5, generator=gen)
                module.bias.uniform_(-0.2, 0.2, generator=gen)
            if isinstance(module, torch.nn.Conv2d):
                module.weight.normal_(0.0, 0.2, generator=gen)
    return net.eval()


@pytest.mark.parametrize("size", [9, 13])
def test_export_matches_torch_outputs(tmp_path: Path, size: int) -> None:
    import onnxruntime as ort

    net = randomized(StudentNet(TINY))
    path = tmp_path / "student.onnx"
    sha = export_onnx(net, path, "tiny")
    assert sha == sha256_of(path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    states = random_states(size, 4)
    spatial = np.stack([features.encode(s)[0] for s in states])
    global_ = np.stack([features.encode(s)[1] for s in states])
    with torch.no_grad():
        expected = net(torch.from_numpy(spatial), torch.from_numpy(global_))
    got = session.run(["policy", "value", "miscvalue", "ownership"], {"input_spatial": spatial, "input_global": global_})
    for want, have in zip(expected, got):
        assert have.shape == tuple(want.shape)
        scale = max(1.0, float(np.abs(have).max()))
        np.testing.assert_allclose(have, want.numpy(), atol=2e-4 * scale)


def test_exported_net_loads_in_the_engine_and_gives_legal_distributions(tmp_path: Path) -> None:
    path = tmp_path / "student.onnx"
    export_onnx(randomized(StudentNet(TINY)), path, "tiny")
    evaluator = load_evaluator(path)
    for size in (9, 19):
        state = random_states(size, 1)[0]
        (evaluation,) = evaluator.evaluate([state])
        legal = legal_mask(state)
        assert evaluation.policy.shape == (size * size + 1,)
        assert evaluation.policy.sum() == pytest.approx(1.0, abs=1e-5)
        assert np.all(evaluation.policy[~legal] == 0)
        assert evaluation.win + evaluation.loss + evaluation.no_result == pytest.approx(1.0, abs=1e-6)


def test_training_steps_reduce_the_loss() -> None:
    torch.manual_seed(0)
    states = random_states(7, 48)
    labels = fake_labels(states)
    from miai.nets.train.dataset import ShardSet as _Set

    batch = _Set._batch(labels, np.arange(len(states)), 0)
    net = StudentNet(TINY)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    before = float(compute_losses(net, batch, LossWeights())["total"].detach())
    for _ in range(60):
        loss = compute_losses(net, batch, LossWeights())["total"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    net.eval()
    after = compute_losses(net, batch, LossWeights())
    assert float(after["total"].detach()) < 0.6 * before
    assert float(after["policy"].detach()) < 1.0  # it learnt where the target move is


def test_train_checkpoints_and_resumes(tmp_path: Path) -> None:
    """Stopping after the first step and resuming gives the same weights as one uninterrupted run."""
    data = tmp_path / "data"
    data.mkdir()
    ShardWriter(data, "r", 7, shard_size=1).add(fake_labels(random_states(7, 40)))
    config = TrainConfig(steps=6, batch_size=8, holdout=0, warmup=2, size_weights=((7, 1.0),), log_every=2,
                         checkpoint_seconds=0.0)
    straight, _ = load_checkpoint(train(config, data, tmp_path / "straight", TINY))
    run = tmp_path / "run"
    ckpt = train(config, data, run, TINY, max_seconds=1e-9)  # stops at the first checkpoint
    _, first = load_checkpoint(ckpt)
    assert int(first["step"]) == 1
    ckpt = train(config, data, run, TINY)
    net, done = load_checkpoint(ckpt)
    assert int(done["step"]) == 6
    assert done["data"] == {7: 40}
    for name, tensor in straight.state_dict().items():
        torch.testing.assert_close(net.state_dict()[name], tensor, msg=name)
    lines = (run / "log.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["step"] == 6

    onnx_path = tmp_path / "out" / "student.onnx"
    manifest_file = write_manifest(ckpt, onnx_path, "tiny", "miai train ...")
    manifest = verify_manifest(onnx_path)
    assert manifest_file.name == "student.json"
    assert manifest["architecture"]["blocks"] == 2
    assert manifest["training"]["steps_done"] == 6
    assert manifest["data"]["positions_per_size"] == {"7": 40}
    # A changed file no longer matches its manifest.
    onnx_path.write_bytes(onnx_path.read_bytes() + b"\0")
    with pytest.raises(TrainError):
        verify_manifest(onnx_path)


def _torch_outputs(net: StudentNet, spatial: np.ndarray, global_: np.ndarray) -> list[np.ndarray]:
    with torch.no_grad():
        return [t.numpy() for t in net(torch.from_numpy(spatial), torch.from_numpy(global_))]


def _inputs(size: int, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    states = random_states(size, count, seed)
    return np.stack([features.encode(s)[0] for s in states]), np.stack([features.encode(s)[1] for s in states])


def test_an_exported_net_reads_back_into_torch_computing_the_same(tmp_path: Path) -> None:
    from miai.nets.train.onnx_import import student_from_onnx

    original = randomized(StudentNet(TINY))
    path = tmp_path / "student.onnx"
    export_onnx(original, path, "tiny")
    loaded = student_from_onnx(path)
    assert loaded.config == TINY
    spatial, global_ = _inputs(9, 6)
    for want, have in zip(_torch_outputs(original, spatial, global_), _torch_outputs(loaded, spatial, global_)):
        np.testing.assert_allclose(have, want, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def test_recalibrated_norms_keep_the_function_and_make_training_mode_start_there(tmp_path: Path) -> None:
    """After recalibration the eval-mode net is unchanged, and training mode (batch statistics) on the
    calibration batch computes the same outputs: fine-tuning starts from the committed net."""
    from miai.nets.train.onnx_import import recalibrate_norms, student_from_onnx

    path = tmp_path / "student.onnx"
    export_onnx(randomized(StudentNet(TINY)), path, "tiny")
    net = student_from_onnx(path)
    spatial, global_ = _inputs(9, 16, seed=3)
    before = _torch_outputs(net, spatial, global_)
    # (a forward pass in training mode moves the running statistics, hence the copies)
    train_mode_before = _torch_outputs(copy.deepcopy(net).train(), spatial, global_)
    assert recalibrate_norms(net, [(spatial, global_)]) == 16
    after = _torch_outputs(net, spatial, global_)
    in_training = _torch_outputs(copy.deepcopy(net).train(), spatial, global_)
    for want, have, batch_stats, stale in zip(before, after, in_training, train_mode_before):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(have, want, atol=1e-4 * scale)
        np.testing.assert_allclose(batch_stats, want, atol=1e-3 * scale)
    # Without recalibration, training mode would have computed something else.
    assert max(float(np.abs(s - w).max()) for s, w in zip(train_mode_before, before)) > 1e-2


def test_a_run_starts_from_an_exported_net_and_trains_on(tmp_path: Path) -> None:
    from miai.nets.train.onnx_import import student_from_onnx
    from miai.nets.train.trainer import start_from_net

    data = tmp_path / "data"
    data.mkdir()
    ShardWriter(data, "r", 7, shard_size=1).add(fake_labels(random_states(7, 40)))
    path = tmp_path / "student.onnx"
    config = TrainConfig(steps=3, batch_size=8, holdout=0, warmup=1, size_weights=((7, 1.0),))
    write_manifest(train(config, data, tmp_path / "first", TINY), path, "first", "miai train fit --run first")
    ckpt = start_from_net(student_from_onnx(path), config, data, tmp_path / "run", origin_of(path))
    seeded, first = load_checkpoint(ckpt)
    assert int(first["step"]) == 0
    spatial, global_ = _inputs(7, 4)
    for want, have in zip(_torch_outputs(student_from_onnx(path), spatial, global_),
                          _torch_outputs(seeded, spatial, global_)):
        np.testing.assert_allclose(have, want, atol=1e-4 * max(1.0, float(np.abs(want).max())))
    ckpt = train(config, data, tmp_path / "run")
    _, done = load_checkpoint(ckpt)
    assert int(done["step"]) == 3
    # The exported net's manifest says which net the run started from, and that net's own lineage.
    write_manifest(ckpt, tmp_path / "second.onnx", "second", "miai train fit --run run --start-from student.onnx")
    origin = verify_manifest(tmp_path / "second.onnx")["started_from"]
    assert origin["file"] == "student.onnx" and origin["sha256"] == sha256_of(path)
    assert origin["command"] == "miai train fit --run first" and origin["steps"] == 3


GROWN = ModelConfig(blocks=4, channels=24, gpool_channels=6, gpool_blocks=(1,), head_channels=12, value_hidden=20)


def test_a_grown_net_computes_what_its_source_computes() -> None:
    """More blocks, wider trunk, heads and pooling: same outputs on any board (a masked corner too)."""
    from miai.nets.train.grow import grow

    source = randomized(StudentNet(TINY))
    grown = grow(source, GROWN)
    assert grown.config == GROWN and sum(p.numel() for p in grown.parameters()) > 2 * sum(
        p.numel() for p in source.parameters())
    spatial, global_ = _inputs(9, 6)
    spatial[1, 0, 7:, :] = 0.0  # a 7x9 board inside the 9x9 tensor
    for want, have in zip(_torch_outputs(source, spatial, global_), _torch_outputs(grown, spatial, global_)):
        np.testing.assert_allclose(have, want, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_a_grown_net_trains_its_new_channels() -> None:
    """The weights that read the new channels start at zero but are not stuck there."""
    from miai.nets.train.grow import grow

    net = grow(randomized(StudentNet(TINY)), GROWN)
    net.train()
    from miai.nets.train.dataset import ShardSet

    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    batch = ShardSet._batch(fake_labels(random_states(9, 16)), np.arange(16), 0)
    compute_losses(net, batch, LossWeights())["total"].backward()
    optimizer.step()
    reader = net.blocks[0].conv1.weight[:, TINY.channels:]  # block 0 reading the new trunk channels
    head = net.value.v2.weight[:, TINY.head_channels:GROWN.head_channels]
    assert float(reader.detach().abs().max()) > 0.0 and float(head.detach().abs().max()) > 0.0


@pytest.mark.parametrize("smaller", [
    ModelConfig(blocks=1, channels=16, gpool_channels=4, gpool_blocks=(1,), head_channels=8, value_hidden=16),
    ModelConfig(blocks=2, channels=12, gpool_channels=3, gpool_blocks=(1,), head_channels=8, value_hidden=16),
    ModelConfig(blocks=3, channels=24, gpool_channels=6, gpool_blocks=(0,), head_channels=12, value_hidden=20),
])
def test_growing_refuses_to_shrink_or_move_the_pooling_blocks(smaller: ModelConfig) -> None:
    from miai.nets.train.grow import grow

    with pytest.raises(TrainError, match="shrink|global-pooling"):
        grow(StudentNet(TINY), smaller)


def test_a_file_that_is_not_a_student_is_refused_with_its_name(tmp_path: Path) -> None:
    from miai.nets.train.onnx_import import student_from_onnx

    bad = tmp_path / "notes.onnx"
    bad.write_text("not a net")
    with pytest.raises(TrainError, match="notes.onnx"):
        student_from_onnx(bad)


@pytest.mark.parametrize("path", [net.path for net in bundled_nets()], ids=lambda path: path.name)
def test_the_bundled_nets_read_back_into_torch(path: Path) -> None:
    import onnxruntime as ort

    from miai.nets.train.onnx_import import student_from_onnx

    net = student_from_onnx(path)
    architecture = verify_manifest(path)["architecture"]
    assert net.config.to_json() == {k: v for k, v in architecture.items() if k in net.config.to_json()}
    spatial, global_ = _inputs(9, 4)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outputs = ["policy", "value", "miscvalue", "ownership"]
    got = session.run(outputs, {"input_spatial": spatial, "input_global": global_})
    for want, have in zip(got, _torch_outputs(net, spatial, global_)):
        np.testing.assert_allclose(have, want, atol=2e-4 * max(1.0, float(np.abs(want).max())))


def test_phase_metrics_split_agreement_by_stones_on_the_board() -> None:
    """A student that outputs the teacher's own distributions has zero KL and gap in every phase; one that is
    wrong on the fuller boards only shows it there."""
    from miai.nets.train.dataset import Batch
    from miai.nets.train.metrics import phase_metrics

    size, n = 4, 6
    spatial = np.zeros((n, 22, size, size), np.float32)
    for k in range(n):  # 0, 3, 6, ... stones: 0%, 19%, 38%, 56%, 75%, 94% of the 16 points
        spatial[k, 1].flat[: 3 * k] = 1.0
    rng = np.random.default_rng(0)
    policy = rng.dirichlet(np.ones(size * size + 1), n).astype(np.float32)
    value = rng.dirichlet(np.ones(3), n).astype(np.float32)
    batch = Batch(size, spatial, np.zeros((n, 19), np.float32), policy, value, np.zeros((n, 3), np.float32),
                  np.zeros((n, size, size), np.float32))
    exact = phase_metrics(batch, np.log(policy), np.log(value))
    assert {name: m["positions"] for name, m in exact.items()} == {"0-12%": 1, "12-25%": 1, "25-50%": 1,
                                                                 "50-100%": 3}
    assert all(m["policy_kl"] == 0 and m["value_kl"] == 0 and m["winrate_gap"] == 0 and m["top1"] == 1
               for m in exact.values())
    swapped = np.log(value[:, [1, 0, 2]])
    swapped[:3] = np.log(value[:3])  # wrong (win and loss swapped) only from half the board on
    late = phase_metrics(batch, np.log(policy), swapped)
    assert late["25-50%"]["value_kl"] == 0 and late["50-100%"]["value_kl"] > 0.01
    gaps = np.abs(value[3:, 0] - value[3:, 1]).mean()
    assert late["50-100%"]["winrate_gap"] == pytest.approx(gaps, abs=1e-4)
