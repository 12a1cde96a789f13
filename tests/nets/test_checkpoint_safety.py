"""Checkpoints are read with torch's weights-only unpickler: what `miai train` writes reads back whole, and a pickle
that carries code is refused in one line without running it. Skipped without torch (the `train` extra)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch, the training extra: pip install -e '.[train]'")
torch.set_num_threads(1)

from miai.nets.train import TrainError  # noqa: E402
from miai.nets.train.model import ModelConfig, StudentNet  # noqa: E402
from miai.nets.train.trainer import TrainConfig, load_checkpoint, read_checkpoint  # noqa: E402
from miai.nets.train import trainer  # noqa: E402

TINY = ModelConfig(blocks=2, channels=16, gpool_channels=4, gpool_blocks=(1,), head_channels=8, value_hidden=16)


def written_checkpoint(path: Path) -> tuple[StudentNet, torch.optim.Optimizer]:
    """A checkpoint as the training loop writes it, after an optimizer step (so AdamW has state to keep)."""
    net = StudentNet(TINY)
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    loss = sum(parameter.square().sum() for parameter in net.parameters())
    loss.backward()
    optimizer.step()
    rng = np.random.default_rng(5)
    rng.random(3)
    trainer._save(path, trainer._payload(net, optimizer, 7, 12.5, rng, TrainConfig(), {9: 100, 19: 20},
                                         {"file": "start.onnx", "sha256": "ab" * 32}))
    return net, optimizer


def test_a_checkpoint_round_trips_under_the_weights_only_reader(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    net, optimizer = written_checkpoint(path)
    loaded, data = load_checkpoint(path)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), loaded.state_dict().values()))
    resumed = torch.optim.AdamW(loaded.parameters(), lr=1e-3)
    resumed.load_state_dict(data["optimizer"])
    assert resumed.state_dict()["param_groups"] == optimizer.state_dict()["param_groups"]
    assert (data["step"], data["elapsed"], data["data"], data["origin"]["file"]) == (7, 12.5, {9: 100, 19: 20},
                                                                                      "start.onnx")
    rng = np.random.default_rng()
    rng.bit_generator.state = data["numpy_rng"]
    expected = np.random.default_rng(5)
    expected.random(3)
    assert rng.random() == expected.random()
    assert data["train_config"] == TrainConfig().to_json()


class Payload:
    """What a hostile file carries: unpickling it calls os.mkdir (any callable would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.mkdir, (str(self.marker),)


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_a_pickle_carrying_code_is_refused_in_one_line_and_not_run(tmp_path: Path, writer: str) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "checkpoint.pt"
    if writer == "torch.save":
        torch.save({"model": Payload(marker), "step": 1}, path)
    else:
        path.write_bytes(pickle.dumps(Payload(marker), protocol=2))  # a bare pickle, as torch's own protocol
    with pytest.raises(TrainError) as refused:
        read_checkpoint(path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: refused: it holds a reference to posix.mkdir, which a miai checkpoint never "
                              "does")
    assert not marker.exists()  # the code did not run


def test_a_file_that_is_no_checkpoint_says_so(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    path.write_bytes(b"not a checkpoint at all")
    with pytest.raises(TrainError, match=f"{path}: "):
        read_checkpoint(path)
