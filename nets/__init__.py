"""Nets: KataGo input features, symmetries, output decoding, evaluators and the model converter.

``load_evaluator(path)`` is the entry point: it accepts an ``.onnx`` file or a KataGo model file.
"""

from __future__ import annotations

from miai.nets.evaluator import (
    CachedEvaluator,
    Evaluation,
    Evaluator,
    EvaluatorError,
    OnnxConfig,
    OnnxEvaluator,
    UniformEvaluator,
)
from miai.nets.loading import load_evaluator

__all__ = [
    "CachedEvaluator",
    "Evaluation",
    "Evaluator",
    "EvaluatorError",
    "OnnxConfig",
    "OnnxEvaluator",
    "UniformEvaluator",
    "load_evaluator",
]
