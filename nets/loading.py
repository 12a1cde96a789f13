"""``load_evaluator``: an evaluator from an ONNX file or a KataGo model file.

KataGo model files (``.bin.gz``, ``.bin``, ``.txt.gz``, ``.txt``) are converted to ONNX once and
kept in the user's cache directory (``$MIAI_CACHE_DIR/nets`` or ``~/.cache/miai/nets``, see
``miai.nets.convert.convert_cached``), named by the file's SHA-256, the board size and the
converter's version, so a second start with the same model is immediate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from miai.nets import features
from miai.nets.evaluator import CachedEvaluator, Evaluator, EvaluatorError, OnnxConfig, OnnxEvaluator, UniformEvaluator
from miai.go.oserrors import describe

KATAGO_SUFFIXES = (".bin.gz", ".bin", ".txt.gz", ".txt")


def is_katago_model(path: str | Path) -> bool:
    """Whether ``path`` names a KataGo model file (by its suffix)."""
    return str(path).lower().endswith(KATAGO_SUFFIXES)


def converted_path(
    model: str | Path,
    *,
    board_size: int | None = None,
    directory: str | Path | None = None,
    progress: Callable[..., Any] | None = None,
) -> Path:
    """The ONNX conversion of a KataGo model file, converting it now if it is not cached yet
    (``miai.nets.convert.convert_cached``: keyed by SHA-256, board size, converter version)."""
    from miai.nets import convert

    source = Path(model)
    if not source.is_file():
        raise FileNotFoundError(f"no such model file: {source}")
    return convert.convert_cached(source, board_size=board_size, cache_dir=directory, progress=progress)


def load_evaluator(
    path_or_name: str | Path,
    *,
    board_size: int | None = None,
    cache_capacity: int = 0,
    directory: str | Path | None = None,
    progress: Callable[..., Any] | None = None,
    precision: str = "fp32",
    cache_key: str = "input",
    **options: Any,
) -> Evaluator:
    """An evaluator for ``path_or_name``.

    Args:
        path_or_name: an ``.onnx`` file, a KataGo model file (converted once and cached), or
            ``"uniform"`` for the uniform test evaluator.
        board_size: for KataGo files, fix the converted net's board size (None = dynamic).
        cache_capacity: if positive, wrap the evaluator in an LRU ``CachedEvaluator``.
        cache_key: how that cache keys positions: a name of ``features.CACHE_KEYS`` ("input", "situation").
        directory: conversion cache directory (default: the user's cache, see above).
        progress: passed to the converter (e.g. a progress-bar callback).
        precision: "fp32", or "int8" for the statically quantised copy (made once and cached beside the
            fp32 file, see ``miai.nets.quantize``).
        **options: ``OnnxConfig`` fields (symmetry_mode, symmetry, max_batch, intra_op_threads,
            policy_optimism, seed, with_ownership, providers, allow_cpu_fallback).

    Raises:
        FileNotFoundError: the file does not exist.
        EvaluatorError: the file is neither ONNX nor a KataGo model, or cannot be loaded.
    """
    name = str(path_or_name)
    evaluator: Evaluator
    if name == "uniform":
        evaluator = UniformEvaluator(max_batch=int(options.get("max_batch", 64)))
    else:
        path = Path(name).expanduser()
        if path.is_dir():
            raise EvaluatorError(f"{path}: is a directory, not a net file")
        if not path.is_file():
            raise FileNotFoundError(f"{path}: {describe(FileNotFoundError(), path)}")
        model_bytes = None
        if is_katago_model(path):
            from miai.nets import convert

            converted = convert.convert_cached_or_in_memory(path, board_size=board_size, cache_dir=directory,
                                                            progress=progress)
            path, model_bytes = (path, converted) if isinstance(converted, bytes) else (converted, None)
        elif path.suffix.lower() != ".onnx":
            raise EvaluatorError(f"{path}: expected an .onnx file or a KataGo model ({', '.join(KATAGO_SUFFIXES)})")
        if precision == "int8":
            from miai.nets.quantize import quantized_path

            if model_bytes is not None:
                raise EvaluatorError("net.precision=int8 needs a writable cache directory for the quantised copy")

            path = quantized_path(path, directory)
            model_bytes = None  # the quantised copy is read from its own file
        elif precision != "fp32":
            raise EvaluatorError(f"precision must be fp32 or int8, not {precision!r}")
        evaluator = OnnxEvaluator(str(path), OnnxConfig(**options), model_bytes=model_bytes)
    if cache_capacity > 0:
        evaluator = CachedEvaluator(evaluator, cache_capacity, features.CACHE_KEYS[cache_key])
    return evaluator
