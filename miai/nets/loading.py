"""``load_evaluator``: an evaluator from an ONNX file or a KataGo model file.

KataGo model files (``.bin.gz``, ``.bin``, ``.txt.gz``, ``.txt``) are converted to ONNX once and
kept in the user's cache directory (``$MIAI_CACHE_DIR`` or ``$XDG_CACHE_HOME/miai`` or
``~/.cache/miai``, under ``nets/``), named by the file's SHA-256 and the converter's version, so a
second start with the same model is immediate.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from miai.nets.evaluator import CachedEvaluator, Evaluator, EvaluatorError, OnnxConfig, OnnxEvaluator, UniformEvaluator

KATAGO_SUFFIXES = (".bin.gz", ".bin", ".txt.gz", ".txt")


def cache_dir() -> Path:
    """Where converted nets are kept (created on first use)."""
    if os.environ.get("MIAI_CACHE_DIR"):
        root = Path(os.environ["MIAI_CACHE_DIR"])
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "miai"
    return root / "nets"


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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
    """The ONNX conversion of a KataGo model file, converting it now if it is not cached yet.

    The file name carries the model's SHA-256, the board size (or ``dyn``) and the converter
    version. Conversion writes to a temporary file and renames it, so an interrupted conversion
    never leaves a broken cache entry.
    """
    from miai.nets.convert import convert_model
    from miai.nets.onnx_export import CONVERTER_VERSION

    source = Path(model)
    if not source.is_file():
        raise FileNotFoundError(f"no such model file: {source}")
    target_dir = Path(directory) if directory is not None else cache_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    shape = "dyn" if board_size is None else str(board_size)
    target = target_dir / f"{file_sha256(source)}-{shape}-c{CONVERTER_VERSION}.onnx"
    if target.is_file():
        return target
    handle, tmp = tempfile.mkstemp(dir=target_dir, suffix=".onnx.part")
    os.close(handle)
    try:
        convert_model(str(source), tmp, board_size=board_size, progress=progress)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def load_evaluator(
    path_or_name: str | Path,
    *,
    board_size: int | None = None,
    cache_capacity: int = 0,
    directory: str | Path | None = None,
    progress: Callable[..., Any] | None = None,
    **options: Any,
) -> Evaluator:
    """An evaluator for ``path_or_name``.

    Args:
        path_or_name: an ``.onnx`` file, a KataGo model file (converted once and cached), or
            ``"uniform"`` for the uniform test evaluator.
        board_size: for KataGo files, fix the converted net's board size (None = dynamic).
        cache_capacity: if positive, wrap the evaluator in an LRU ``CachedEvaluator``.
        directory: conversion cache directory (default ``cache_dir()``).
        progress: passed to the converter (e.g. a progress-bar callback).
        **options: ``OnnxConfig`` fields (symmetry_mode, symmetry, max_batch, intra_op_threads,
            policy_optimism, seed, with_ownership).

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
        if not path.is_file():
            raise FileNotFoundError(f"no such net file: {path}")
        if is_katago_model(path):
            path = converted_path(path, board_size=board_size, directory=directory, progress=progress)
        elif path.suffix.lower() != ".onnx":
            raise EvaluatorError(f"{path}: expected an .onnx file or a KataGo model ({', '.join(KATAGO_SUFFIXES)})")
        evaluator = OnnxEvaluator(str(path), OnnxConfig(**options))
    if cache_capacity > 0:
        evaluator = CachedEvaluator(evaluator, cache_capacity)
    return evaluator
