"""Where training files live: outside the repository, under the user's cache directory."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["train_root", "data_dir", "run_dir"]


def train_root() -> Path:
    """``$MIAI_TRAIN_DIR`` (when set and not empty) or ``~/.cache/miai/train`` (created on demand)."""
    root = Path(os.environ.get("MIAI_TRAIN_DIR") or Path.home() / ".cache" / "miai" / "train").expanduser()
    root.mkdir(parents=True, exist_ok=True)
    return root


def data_dir(name: str, create: bool = True) -> Path:
    """Directory holding the shards of the data set ``name`` (made unless ``create`` is False)."""
    path = train_root() / "data" / name
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def run_dir(name: str, create: bool = True) -> Path:
    """Directory holding the checkpoints and logs of the training run ``name`` (made unless ``create`` is False:
    reading a run that does not exist must not leave an empty one behind)."""
    path = train_root() / "runs" / name
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path
