"""Training data in memory: shards grouped by board size, random batches with random symmetries.

Numpy only. A batch holds positions of one board size (no padding needed); which size each batch
has is drawn with the configured weights among the sizes present. ``refresh()`` picks up shards
written since the last call, so training can start while data generation still runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from miai.nets.train import TrainError
from miai.nets.train.datagen import Labels, unpack_spatial

__all__ = ["Batch", "ShardSet", "apply_symmetry"]

_FIELDS = ("spatial", "global_", "policy", "value", "score", "ownership")


@dataclass
class Batch:
    """Float32 arrays ready for the net: spatial [N,22,s,s], global [N,19], policy [N,s*s+1],
    value [N,3], score [N,3], ownership [N,s,s]."""

    size: int
    spatial: np.ndarray
    global_: np.ndarray
    policy: np.ndarray
    value: np.ndarray
    score: np.ndarray
    ownership: np.ndarray


def apply_symmetry(board: np.ndarray, symmetry: int) -> np.ndarray:
    """One of the 8 board symmetries on the last two axes (bit 2 transpose, bit 0 flip rows,
    bit 1 flip columns), applied the same way to inputs and targets."""
    if symmetry & 4:
        board = np.swapaxes(board, -1, -2)
    if symmetry & 1:
        board = board[..., ::-1, :]
    if symmetry & 2:
        board = board[..., :, ::-1]
    return board


def load_shard(path: Path) -> Labels:
    """One ``.npz`` shard written by ``datagen.ShardWriter``."""
    with np.load(path) as data:
        missing = [f for f in (*_FIELDS, "size") if f not in data.files]
        if missing:
            raise TrainError(f"{path}: not a training shard (missing {missing})")
        return Labels(size=int(data["size"]), **{f: data[f] for f in _FIELDS})


class ShardSet:
    """Every shard of one or more data directories, held in memory per board size."""

    def __init__(
        self, directory: Path | Sequence[Path], size_weights: Mapping[int, float] | None = None, holdout: int = 0
    ) -> None:
        """``directory``: one data directory, or several read in the order given (so that several data
        sets train as one). ``size_weights``: the share of batches of each board size; sizes it does
        not name are never sampled (without weights, every size alike). ``holdout``: the first
        ``holdout`` positions of each size (of the first directory holding that size) are kept out of
        training batches and served by ``validation`` instead."""
        self.directories = [Path(directory)] if isinstance(directory, (str, Path)) else [Path(d) for d in directory]
        if not self.directories:
            raise TrainError("no data directory given")
        self.size_weights = dict(size_weights or {})
        self.holdout = holdout
        self._loaded: set[str] = set()
        self._parts: dict[int, list[Labels]] = {}
        self._merged: dict[int, Labels] = {}

    def refresh(self) -> int:
        """Load shards not seen yet; returns how many were added."""
        added = 0
        for path in (p for d in self.directories for p in sorted(d.glob("*.npz"))):
            if str(path) in self._loaded or ".tmp" in path.name:
                continue
            labels = load_shard(path)
            self._parts.setdefault(labels.size, []).append(labels)
            self._loaded.add(str(path))
            added += 1
        if added:
            self._merged = {size: Labels.concat(parts) for size, parts in self._parts.items()}
            self._parts = {size: [merged] for size, merged in self._merged.items()}
        return added

    def describe(self) -> str:
        """The directories, for messages."""
        return ", ".join(str(d) for d in self.directories)

    def counts(self) -> dict[int, int]:
        """Positions held per board size."""
        return {size: len(labels) for size, labels in sorted(self._merged.items())}

    def _size_probabilities(self) -> tuple[list[int], np.ndarray]:
        sizes = [s for s, n in sorted(self.counts().items()) if n > self.holdout]
        if not sizes:
            raise TrainError(f"no training data in {self.describe()}")
        # A size the weights leave out stays out, even when another job is adding shards of it meanwhile.
        default = 0.0 if self.size_weights else 1.0
        weights = np.array([self.size_weights.get(s, default) for s in sizes], dtype=np.float64)
        if weights.sum() <= 0:
            asked = sorted(self.size_weights)
            raise TrainError(f"no training data of the sizes asked for ({asked}) in {self.describe()}")
        return sizes, weights / weights.sum()

    def sample(self, batch_size: int, rng: np.random.Generator, augment: bool = True) -> Batch:
        """A random batch of one board size, under one random symmetry when ``augment``."""
        sizes, probs = self._size_probabilities()
        size = sizes[int(rng.choice(len(sizes), p=probs))]
        labels = self._merged[size]
        rows = rng.integers(self.holdout, len(labels), size=batch_size)
        return self._batch(labels, np.sort(rows), int(rng.integers(8)) if augment else 0)

    def validation(self, size: int, count: int) -> Batch | None:
        """The held-out positions of ``size`` (at most ``count``), identity symmetry."""
        labels = self._merged.get(size)
        if labels is None or self.holdout == 0:
            return None
        rows = np.arange(min(count, self.holdout, len(labels)))
        return self._batch(labels, rows, 0)

    @staticmethod
    def _batch(labels: Labels, rows: np.ndarray, symmetry: int) -> Batch:
        size, area = labels.size, labels.size * labels.size
        spatial = apply_symmetry(unpack_spatial(labels.spatial[rows], size), symmetry)
        policy = labels.policy[rows].astype(np.float32)
        board = apply_symmetry(policy[:, :area].reshape(-1, size, size), symmetry).reshape(-1, area)
        ownership = apply_symmetry(labels.ownership[rows].astype(np.float32).reshape(-1, size, size), symmetry)
        return Batch(
            size=size,
            spatial=np.ascontiguousarray(spatial),
            global_=labels.global_[rows].astype(np.float32),
            policy=np.ascontiguousarray(np.concatenate([board, policy[:, area:]], axis=1)),
            value=labels.value[rows].astype(np.float32),
            score=labels.score[rows].astype(np.float32),
            ownership=np.ascontiguousarray(ownership),
        )
