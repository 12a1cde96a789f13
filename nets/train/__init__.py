"""Training miai's own small nets by distilling a KataGo teacher (``miai train``).

Modules:
- ``paths``: where data, checkpoints and exports live (``~/.cache/miai/train``, never the repo).
- ``datagen``: teacher-labelled positions (self-play and real-game positions) into shards (numpy only).
- ``dataset``: loading shards, random symmetries, batches (numpy).
- ``model``: the torch student in KataGo's layout (imports torch).
- ``trainer``: the training loop with resumable checkpoints (imports torch).
- ``export``: the student's weights as a ``miai.nets.katago.ModelDesc``, emitted by miai's own ONNX
  builder so the engine decodes it like any converted KataGo net; plus the manifest.

Only ``model``, ``trainer`` and ``export`` import torch, and only when called; the engine never does.
"""

from __future__ import annotations

__all__ = ["TrainError"]


class TrainError(RuntimeError):
    """Something in data generation, training or export cannot proceed (bad files, settings)."""
