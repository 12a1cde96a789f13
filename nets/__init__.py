"""Nets: KataGo input features, symmetries, output decoding, evaluators and the model converter.

``load_evaluator(path)`` is the entry point: it accepts an ``.onnx`` file or a KataGo model file.
"""

from __future__ import annotations

from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import (
    CachingEvaluator,
    Evaluation,
    Evaluator,
    EvaluatorError,
    OnnxConfig,
    OnnxEvaluator,
    UniformEvaluator,
    WrappingEvaluator,
    innermost,
    onnx_net,
)
from miai.nets.loading import load_evaluator

__all__ = [
    "CachedEvaluator",
    "CachingEvaluator",
    "Evaluation",
    "Evaluator",
    "EvaluatorError",
    "OnnxConfig",
    "OnnxEvaluator",
    "UniformEvaluator",
    "WrappingEvaluator",
    "innermost",
    "onnx_net",
    "load_evaluator",
]
