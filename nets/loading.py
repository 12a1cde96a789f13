"""``load_evaluator``: an evaluator from an ONNX file or a KataGo model file.

KataGo model files (``.bin.gz``, ``.bin``, ``.txt.gz``, ``.txt``) are converted to ONNX once and
kept in the user's cache directory (``$MIAI_CACHE_DIR/nets`` or ``~/.cache/miai/nets``, see
``miai.nets.convert.convert_cached``), named by the file's SHA-256, the board size and the
converter's version, so a second start with the same model is immediate.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any, Callable

from miai.nets import backends, features
from miai.nets import precision as gate  # a module name loading's `precision` arguments would hide
from miai.nets.cache import CachedEvaluator
from miai.nets.cachedir import UnsafeCacheError, private_dir
from miai.nets.evaluator import Evaluator, EvaluatorError, OnnxConfig, OnnxEvaluator, UniformEvaluator
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
    backend: str = "onnxruntime",
    precision: str = "fp32",
    cache_key: str = "input",
    report: Callable[[str], None] | None = None,
    **options: Any,
) -> Evaluator:
    """An evaluator for ``path_or_name``.

    Args:
        path_or_name: an ``.onnx`` file, a KataGo model file (converted once and cached), or
            ``"uniform"`` for the uniform test evaluator.
        board_size: for KataGo files, fix the converted net's board size (None = dynamic).
        cache_capacity: if positive, wrap the evaluator in a ``CachedEvaluator``.
        cache_key: how that cache keys positions: a name of ``features.CACHE_KEYS`` ("input", "situation").
        directory: conversion cache directory (default: the user's cache, see above).
        progress: passed to the converter (e.g. a progress-bar callback).
        backend: "onnxruntime", "openvino" or "auto" (``miai.nets.backends``).
        precision: "fp32", "bf16", "fp16" or "auto" (``miai.nets.backends``).
        report: called with one line saying what ``auto`` chose, when there was a choice to make.
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
        path, model_bytes = _onnx_source(path, board_size, directory, progress)
        if backend == "auto" or precision == "auto":
            backend, precision = _auto(path, model_bytes, backend, precision, directory, report, options)
        backends.check_available(backend, precision)
        evaluator = OnnxEvaluator(str(path), OnnxConfig(backend=backend, precision=precision, **options),
                                  model_bytes=model_bytes)
    if cache_capacity > 0:
        evaluator = CachedEvaluator(evaluator, cache_capacity, features.CACHE_KEYS[cache_key])
    return evaluator


def _onnx_source(path: Path, board_size: int | None, directory: str | Path | None,
                 progress: Callable[..., Any] | None) -> tuple[Path, bytes | None]:
    """The ONNX net of a model file: an .onnx file itself, or a KataGo model's conversion (its cached file, or its
    bytes when the cache cannot keep it)."""
    if is_katago_model(path):
        from miai.nets import convert

        converted = convert.convert_cached_or_in_memory(path, board_size=board_size, cache_dir=directory,
                                                        progress=progress)
        return (path, converted) if isinstance(converted, bytes) else (converted, None)
    if path.suffix.lower() != ".onnx":
        raise EvaluatorError(f"{path}: expected an .onnx file or a KataGo model ({', '.join(KATAGO_SUFFIXES)})")
    return path, None


def gate_passing_pairs(path_or_name: str | Path, *, board_size: int | None = None,
                       directory: str | Path | None = None, progress: Callable[..., Any] | None = None,
                       options: dict[str, Any] | None = None) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The (backend, precision) pairs that can run the net of a model file here and pass the precision gate (the
    ones ``auto`` chose among: its kept measurement, or a new one), and why the others are out.

    Raises:
        FileNotFoundError: the file does not exist.
        EvaluatorError: the file is not a net, or nothing can run it here.
    """
    path = Path(path_or_name).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {describe(FileNotFoundError(), path)}")
    path, model_bytes = _onnx_source(path, board_size, directory, progress)
    choice = auto_choice(path, model_bytes, directory=directory, options=options)
    if not choice.rates:  # the only candidate here: nothing to measure
        return [(choice.backend, choice.precision)], dict(choice.rejected)
    pairs = [(backend, precision) for backend, precision in (pair.split() for pair in choice.rates)]
    return pairs, dict(choice.rejected)


def _auto(path: Path, model_bytes: bytes | None, backend: str, precision: str, directory: str | Path | None,
          report: Callable[[str], None] | None, options: dict[str, Any]) -> tuple[str, str]:
    """``auto``'s (backend, precision) for this net, said in one line to ``report`` when there was a choice."""
    choice = auto_choice(path, model_bytes, backend, precision, directory, options)
    if report is not None and choice.rates:
        report(choice.describe())
    return choice.backend, choice.precision


def auto_choice(path: Path, model_bytes: bytes | None = None, backend: str = "auto", precision: str = "auto",
                directory: str | Path | None = None, options: dict[str, Any] | None = None) -> backends.Choice:
    """What ``auto`` picks for the ONNX net at ``path`` (or ``model_bytes``) with these ``OnnxConfig`` options:
    the only candidate (``rates`` empty), the measurement kept in the cache directory, or a new one
    (``miai.nets.precision.choose``), then kept there.

    Raises:
        EvaluatorError: nothing can run the net here.
    """
    from miai.nets import convert

    options = options or {}
    pairs, rejected = backends.candidates(backend, precision)
    if not pairs:
        raise EvaluatorError("; ".join(rejected.values()) or f"net.backend={backend} net.precision={precision}: "
                             "nothing can run it here")
    if len(pairs) == 1:
        return backends.Choice(*pairs[0], {}, rejected)
    digest = (hashlib.sha256(model_bytes).hexdigest() if model_bytes is not None else convert._file_digest(path))
    threads = int(options.get("intra_op_threads", 1))
    where = backends.choice_path(digest, threads, Path(directory) if directory else convert.default_cache_dir())
    keep = True
    try:
        private_dir(where.parent)
        choice = backends.read_choice(where)
    except UnsafeCacheError as exc:  # a planted answer must not choose the backend: measure, keep nothing
        if model_bytes is None:  # (else the conversion has just refused the same cache, in one line)
            logging.getLogger("miai").warning("%s; net.backend=auto measures again at every start", exc)
        choice, keep = None, False
    except OSError:
        choice = None  # the folder cannot be made: measured, and write_choice says it cannot keep it
    if choice is None or (choice.backend, choice.precision) not in pairs:
        measuring = {**options, "symmetry_mode": "fixed", "symmetry": 0, "max_batch": 16}

        def open_pair(b: str, p: str) -> OnnxEvaluator:
            return OnnxEvaluator(str(path), OnnxConfig(backend=b, precision=p, **measuring), model_bytes=model_bytes)

        choice = gate.choose(pairs, rejected, open_pair)
        if keep:
            backends.write_choice(where, choice)
    return choice
