"""The training loop: distillation losses, AdamW with warm-up and cosine decay, resumable
checkpoints (imports torch).

Losses (each averaged over the batch):
- policy: cross-entropy between the teacher's move distribution and the student's softmax over
  all points and pass (illegal moves have target 0, so the student learns to avoid them);
- value: cross-entropy to the teacher's (win, loss, no result) probabilities;
- score: Huber loss on score mean, lead (raw units of 20 points, the decoder's multiplier) and
  on softplus(stdev raw) against the teacher's stdev / 20;
- ownership: binary cross-entropy per point between (1 + teacher) / 2 and sigmoid(2 * raw), i.e.
  tanh(raw) against the teacher's ownership, averaged over the board.

A checkpoint (model, optimizer, step, random states, elapsed time) is written to the run directory
every ``checkpoint_seconds`` and at the end; ``train`` resumes from it when present.
"""

from __future__ import annotations

import json
import math
import pickle
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import torch
from torch.nn import functional as F

from miai.nets import features
from miai.nets.train import TrainError
from miai.nets.train.dataset import Batch, ShardSet
from miai.nets.train.metrics import phase_metrics
from miai.nets.train.model import ModelConfig, StudentNet

__all__ = [
    "TrainConfig", "LossWeights", "compute_losses", "train", "start_from_net", "load_checkpoint", "holdout_metrics",
    "kept_checkpoint", "kept_steps", "CHECKPOINT", "read_checkpoint",
]

CHECKPOINT = "checkpoint.pt"


def kept_checkpoint(run_directory: Path, step: int) -> Path:
    """Where a run keeps the checkpoint of ``step`` (``TrainConfig.keep_every``), to be matched or exported later."""
    return Path(run_directory) / f"checkpoint-{step:06d}.pt"


def kept_steps(run_directory: Path) -> list[int]:
    """The steps whose checkpoints a run kept, in order."""
    return sorted(int(path.stem.removeprefix("checkpoint-")) for path in Path(run_directory).glob("checkpoint-*.pt"))


SCORE_SCALE = 20.0  # the decoder multiplies raw score mean, stdev and lead by 20 (model version 8)


@dataclass(frozen=True)
class LossWeights:
    """Weights of the loss terms in the total."""

    policy: float = 1.0
    value: float = 1.0
    score: float = 0.5
    ownership: float = 1.0


@dataclass(frozen=True)
class TrainConfig:
    """One training run."""

    steps: int = 3000
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 1e-4
    warmup: int = 300
    final_lr_fraction: float = 0.05
    size_weights: tuple[tuple[int, float], ...] = ((9, 0.7), (13, 0.15), (19, 0.15))
    threads: int = 1
    seed: int = 0
    holdout: int = 512
    refresh_every: int = 200
    checkpoint_seconds: float = 120.0
    keep_every: int = 0  # also keep the checkpoint of every this many steps (``kept_checkpoint``); 0 = latest only
    log_every: int = 100
    losses: LossWeights = field(default_factory=LossWeights)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        data = asdict(self)
        data["size_weights"] = {str(s): w for s, w in self.size_weights}
        return data


def learning_rate(config: TrainConfig, step: int) -> float:
    """Linear warm-up to ``lr``, then cosine decay to ``lr * final_lr_fraction`` at ``steps``."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = min(1.0, (step - config.warmup) / max(1, config.steps - config.warmup))
    low = config.final_lr_fraction
    return config.lr * (low + (1.0 - low) * 0.5 * (1.0 + math.cos(math.pi * progress)))


def to_tensors(batch: Batch) -> dict[str, torch.Tensor]:
    """The batch's arrays as torch tensors."""
    return {
        "spatial": torch.from_numpy(batch.spatial),
        "global": torch.from_numpy(batch.global_),
        "policy": torch.from_numpy(batch.policy),
        "value": torch.from_numpy(batch.value),
        "score": torch.from_numpy(batch.score),
        "ownership": torch.from_numpy(batch.ownership),
    }


def compute_losses(net: StudentNet, batch: Batch, weights: LossWeights) -> dict[str, torch.Tensor]:
    """The loss terms and their weighted ``total`` for one batch."""
    t = to_tensors(batch)
    return _losses(net(t["spatial"], t["global"]), t, weights)


def _losses(outputs: tuple[torch.Tensor, ...], t: Mapping[str, torch.Tensor],
            weights: LossWeights) -> dict[str, torch.Tensor]:
    """The loss terms of the student's ``outputs`` against the targets ``t`` (``to_tensors``)."""
    policy, value, misc, ownership = outputs
    policy_loss = -(t["policy"] * F.log_softmax(policy[:, 0, :], dim=1)).sum(dim=1).mean()
    value_loss = -(t["value"] * F.log_softmax(value, dim=1)).sum(dim=1).mean()
    target = t["score"] / SCORE_SCALE
    score_loss = (
        F.huber_loss(misc[:, 0], target[:, 0], delta=1.0)
        + F.huber_loss(misc[:, 2], target[:, 2], delta=1.0)
        + 0.25 * F.huber_loss(F.softplus(misc[:, 1]), target[:, 1], delta=1.0)
    )
    owner_target = (1.0 + t["ownership"]) * 0.5
    ownership_loss = F.binary_cross_entropy_with_logits(2.0 * ownership[:, 0], owner_target)
    total = (
        weights.policy * policy_loss
        + weights.value * value_loss
        + weights.score * score_loss
        + weights.ownership * ownership_loss
    )
    return {"total": total, "policy": policy_loss, "value": value_loss, "score": score_loss, "ownership": ownership_loss}


def without_families(batch: Batch, names: Sequence[str]) -> Batch:
    """``batch`` with the inputs of the named families (``features.family_planes``) set to zero, in a copy: the
    batch itself keeps its stones, which ``phase_metrics`` counts."""
    if not names:
        return batch
    spatial, global_ = batch.spatial.copy(), batch.global_.copy()
    for name in names:
        is_spatial, planes = features.family_planes(name)
        (spatial if is_spatial else global_)[:, planes] = 0.0
    return replace(batch, spatial=spatial, global_=global_)


def holdout_metrics(net: StudentNet, shards: ShardSet, count: int = 512,
                    zeroed: Sequence[str] = ()) -> dict[int, dict[str, Any]]:
    """Per board size, on the held-out positions: the loss terms, how often the student's top
    move is the teacher's (``top1``), the teacher's probability of the student's top move
    (``teacher_prob``), and ``by_stones``: agreement by game phase (``phase_metrics``). ``zeroed``: input
    families (``features.family_planes``) set to zero first, to measure what the net draws from them."""
    net.eval()
    results: dict[int, dict[str, Any]] = {}
    for size in shards.counts():
        batch = shards.validation(size, count)
        if batch is None:
            continue
        with torch.no_grad():  # one forward pass for the losses and the metrics
            t = to_tensors(without_families(batch, zeroed))
            outputs = net(t["spatial"], t["global"])
            losses = _losses(outputs, t, LossWeights())
            policy_log = F.log_softmax(outputs[0][:, 0, :], dim=1).double().numpy()
            value_log = F.log_softmax(outputs[1], dim=1).double().numpy()
        student_top = policy_log.argmax(axis=1)
        rows = np.arange(len(student_top))
        results[size] = {
            **{k: round(float(v), 4) for k, v in losses.items()},
            "top1": round(float(np.mean(student_top == batch.policy.argmax(axis=1))), 4),
            "teacher_prob": round(float(np.mean(batch.policy[rows, student_top])), 4),
            "positions": len(student_top),
            "by_stones": phase_metrics(batch, policy_log, value_log),
        }
    return results


class Checkpoint(TypedDict):
    """What a checkpoint file holds (``torch.save`` of this dict)."""

    model: dict[str, torch.Tensor]  # the student's state dict
    optimizer: dict[str, Any]  # AdamW's state dict
    step: int
    elapsed: float  # seconds of training so far
    numpy_rng: Mapping[str, Any]  # the batch sampler's bit generator state
    torch_rng: torch.Tensor
    model_config: dict[str, Any]  # ModelConfig.to_json()
    train_config: dict[str, Any]  # TrainConfig.to_json()
    data: dict[int, int]  # positions per board size
    origin: dict[str, Any]  # the net a run started from (`start_from_net`), or {} for a run from scratch


def read_checkpoint(path: Path) -> Checkpoint:
    """A checkpoint's fields, read with torch's weights-only unpickler: tensors, numbers, strings and the containers
    of those (all a checkpoint holds), so a file carrying code is refused instead of run.

    Raises:
        TrainError: the file is not a checkpoint, or holds more than a checkpoint's types (named in one line).
    """
    try:
        data: Checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise TrainError(f"{path}: refused: it holds {_unsafe_part(str(exc))}, which a miai checkpoint never does "
                         "(a pickle can run code when it is read); load only checkpoints written by miai train") \
            from None
    except (OSError, RuntimeError, EOFError) as exc:
        raise TrainError(f"{path}: not a readable checkpoint ({str(exc).splitlines()[0] if str(exc) else exc!r})") \
            from exc
    return data


def _unsafe_part(message: str) -> str:
    """What torch's weights-only unpickler refused, from its message: the global it names, when it names one."""
    found = re.search(r"(?:unsupported GLOBAL|Unsupported global: GLOBAL) ([\w.]+)", message)
    return f"a reference to {found.group(1)}" if found else "objects other than tensors and plain data"


def load_checkpoint(path: Path) -> tuple[StudentNet, Checkpoint]:
    """The student stored in a checkpoint (in eval mode) and the checkpoint's other fields (``read_checkpoint``)."""
    if not Path(path).is_file():
        raise TrainError(f"no checkpoint at {path}")
    data = read_checkpoint(path)
    net = StudentNet(ModelConfig.from_json(data["model_config"]))
    net.load_state_dict(data["model"])
    net.eval()
    return net, data


def _save(path: Path, payload: Checkpoint) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # atomic: a crash never leaves a half-written checkpoint


def _payload(net: StudentNet, optimizer: torch.optim.Optimizer, step: int, elapsed: float,
             rng: np.random.Generator, config: TrainConfig, counts: dict[int, int],
             origin: dict[str, Any]) -> Checkpoint:
    return {
        "model": net.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
        "elapsed": elapsed, "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
        "model_config": net.config.to_json(), "train_config": config.to_json(), "data": counts,
        "origin": origin,
    }


def start_from_net(net: StudentNet, config: TrainConfig, data_directory: Path | Sequence[Path], run_directory: Path,
                   origin: dict[str, Any] | None = None, batches: int = 32) -> Path:
    """Seeds a run with the weights of ``net`` (e.g. a committed net read back by
    ``onnx_import.student_from_onnx``): its batch norms are recalibrated on ``batches`` training
    batches, and the run starts at step 0 with a fresh optimizer (a warm restart). ``origin``
    (what the net is: file, sha256, its manifest's lineage) goes into every checkpoint of the run and
    into the manifest of what it exports."""
    from miai.nets.train.onnx_import import recalibrate_norms

    torch.set_num_threads(config.threads)
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    shards = ShardSet(data_directory, dict(config.size_weights), holdout=config.holdout)
    shards.refresh()
    samples = (shards.sample(config.batch_size, rng) for _ in range(batches))
    recalibrate_norms(net, ((b.spatial, b.global_) for b in samples))
    optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    run_directory.mkdir(parents=True, exist_ok=True)
    path = run_directory / CHECKPOINT
    _save(path, _payload(net, optimizer, 0, 0.0, rng, config, shards.counts(), origin or {}))
    return path


Progress = Callable[[int, int, Mapping[str, float]], None]


def train(
    config: TrainConfig,
    data_directory: Path | Sequence[Path],
    run_directory: Path,
    model_config: ModelConfig | None = None,
    *,
    max_seconds: float = 0.0,
    progress: Progress | None = None,
) -> Path:
    """Train (or resume) the student on the shards in ``data_directory`` (one or several); returns the checkpoint.

    ``max_seconds`` (0 = none) stops early after a checkpoint; running again resumes.
    """
    torch.set_num_threads(config.threads)
    torch.set_flush_denormal(True)  # decayed weights go subnormal; CPU arithmetic on them is very slow
    run_directory.mkdir(parents=True, exist_ok=True)
    ckpt_path = run_directory / CHECKPOINT
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    net = StudentNet(model_config or ModelConfig())
    optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    step, elapsed = 0, 0.0
    origin: dict[str, Any] = {}
    if ckpt_path.is_file():
        data = read_checkpoint(ckpt_path)
        net = StudentNet(ModelConfig.from_json(data["model_config"]))
        net.load_state_dict(data["model"])
        optimizer = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        optimizer.load_state_dict(data["optimizer"])
        step, elapsed = int(data["step"]), float(data["elapsed"])
        origin = data.get("origin", {})
        rng.bit_generator.state = data["numpy_rng"]
        torch.set_rng_state(data["torch_rng"])
    shards = ShardSet(data_directory, dict(config.size_weights), holdout=config.holdout)
    shards.refresh()
    log_path = run_directory / "log.jsonl"

    def checkpoint() -> None:
        _save(ckpt_path, _payload(net, optimizer, step, elapsed, rng, config, shards.counts(), origin))

    net.train()
    started = time.monotonic()
    last_save = started
    running: dict[str, float] = {}
    while step < config.steps:
        if step % config.refresh_every == 0:
            shards.refresh()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(config, step)
        losses = compute_losses(net, shards.sample(config.batch_size, rng), config.losses)
        optimizer.zero_grad(set_to_none=True)
        losses["total"].backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        optimizer.step()
        step += 1
        for key, tensor in losses.items():
            value = float(tensor.detach())
            running[key] = running.get(key, value) * 0.98 + value * 0.02
        now = time.monotonic()
        if step % config.log_every == 0:
            with open(log_path, "a", encoding="utf-8") as handle:
                record = {"step": step, "elapsed": round(elapsed + now - started, 1), **running,
                          "lr": learning_rate(config, step), "data": shards.counts()}
                handle.write(json.dumps(record) + "\n")
        if progress is not None:
            progress(step, config.steps, running)
        keep = bool(config.keep_every) and step % config.keep_every == 0
        if now - last_save >= config.checkpoint_seconds or step == config.steps or keep:
            elapsed += now - started
            started = last_save = now
            checkpoint()
            if keep:
                shutil.copyfile(ckpt_path, kept_checkpoint(run_directory, step))
            if max_seconds and elapsed >= max_seconds:
                break
    elapsed += time.monotonic() - started
    checkpoint()
    return ckpt_path
