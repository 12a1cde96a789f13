"""Converting KataGo model files to ONNX: the function behind ``miai convert IN OUT.onnx``.

`convert_model` reads a KataGo model (.bin.gz, .bin, .txt.gz, .txt), builds the ONNX graph
(see `miai.nets.onnx_export` for the interface) and writes it atomically. `convert_cached`
converts once per (file content, board size, converter version) into a cache directory, for
callers that accept KataGo files directly (``load_evaluator``, ``miai gtp --model``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from miai.nets.cachedir import UnsafeCacheError, cache_root, private_dir
from miai.nets.katago import ModelDesc, load_model
from miai.nets.onnx_export import CONVERTER_VERSION, build_onnx
from miai.go.oserrors import describe

log = logging.getLogger("miai")

__all__ = ["ConversionResult", "ProgressCallback", "convert_model", "convert_cached", "convert_cached_or_in_memory",
           "cached_name", "default_cache_dir"]

# progress(fraction_done in [0, 1], stage) with stage "reading", "building", "writing" or "done".
ProgressCallback = Callable[[float, str], None]

# Share of the progress bar each stage gets (reading dominates for big nets).
_READ_SHARE = 0.6
_BUILD_SHARE = 0.2


@dataclass(frozen=True)
class ConversionResult:
    """What `convert_model` produced."""

    path: Path
    model_name: str
    model_version: int
    board_size: int | None
    num_policy_channels: int
    bytes_written: int


def _noop(fraction: float, stage: str) -> None:
    return None


def convert_model(
    src: str | Path,
    dst: str | Path,
    board_size: int | None = None,
    progress: ProgressCallback | None = None,
) -> ConversionResult:
    """Converts the KataGo model ``src`` to the ONNX file ``dst``.

    ``board_size`` fixes H = W at conversion (slightly faster graphs); None keeps them dynamic,
    so one file serves every board size. ``progress`` receives (fraction done, stage name).

    Raises:
        FileNotFoundError: ``src`` does not exist.
        ModelFormatError: ``src`` is truncated, corrupt or not a KataGo model (names the layer and
            byte offset).
        UnsupportedModelError: the model uses a feature miai does not implement.
        ValueError: ``board_size`` is out of range.
    """
    dst = Path(dst)
    if not dst.parent.is_dir():  # fail before a long conversion, and never create directories the user did not
        raise FileNotFoundError(f"the output directory {dst.parent} does not exist")
    report = progress or _noop
    data, desc = _convert_to_bytes(src, board_size, report)
    _write_atomically(dst, data)
    report(1.0, "done")
    return _result(dst, desc, board_size, len(data))


def _convert_to_bytes(src: str | Path, board_size: int | None, report: ProgressCallback) -> tuple[bytes, ModelDesc]:
    """The serialised ONNX model of ``src`` and its description (progress up to the "writing" stage)."""
    report(0.0, "reading")
    desc = load_model(src, progress=lambda f: report(_READ_SHARE * f, "reading"))
    report(_READ_SHARE, "building")
    model = build_onnx(desc, board_size)
    report(_READ_SHARE + _BUILD_SHARE, "writing")
    return model.SerializeToString(), desc


def _result(dst: Path, desc: ModelDesc, board_size: int | None, size: int) -> ConversionResult:
    return ConversionResult(dst, desc.name, desc.version, board_size, desc.num_policy_channels, size)


def _write_atomically(dst: Path, data: bytes) -> None:
    """Writes via a temporary file in the same directory so readers never see half a model.

    mkstemp makes the file private (0600); the finished model gets the mode any new file of the user gets
    (0666 less the umask), as ``open()`` would give it.
    """
    fd, tmp = tempfile.mkstemp(prefix=dst.name + ".", suffix=".part", dir=dst.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), 0o666 & ~_umask())
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process's umask (reading it means setting it; it is restored at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_cache_dir() -> Path:
    """miai's cache directory for converted nets: $MIAI_CACHE_DIR/nets, else ~/.cache/miai/nets
    (``miai.nets.cachedir``: created private to the user, refused when others can write to it)."""
    return cache_root() / "nets"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def convert_cached(
    src: str | Path,
    board_size: int | None = None,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> Path:
    """The ONNX conversion of ``src``, converting only if not already cached.

    The cache key is the SHA-256 of the file's bytes plus the board size and
    `CONVERTER_VERSION`, so a changed file or a newer converter converts again.

    Raises: as `convert_model`; UnsafeCacheError: others can write to the cache folder
    (``miai.nets.cachedir.private_dir``).
    """
    dst = cached_name(src, board_size, cache_dir)
    private_dir(dst.parent)
    if not dst.exists():
        convert_model(src, dst, board_size=board_size, progress=progress)
    return dst


def cached_name(src: str | Path, board_size: int | None = None, cache_dir: str | Path | None = None) -> Path:
    """Where `convert_cached` keeps the conversion of ``src`` (whether or not it is there yet)."""
    src = Path(src)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    size_tag = "dyn" if board_size is None else f"{board_size}x{board_size}"
    key = f"{_file_digest(src)[:32]}-{size_tag}-c{CONVERTER_VERSION}"
    return cache / f"{src.name.split('.')[0]}-{key}.onnx"


def convert_cached_or_in_memory(
    src: str | Path,
    board_size: int | None = None,
    cache_dir: str | Path | None = None,
    progress: ProgressCallback | None = None,
) -> Path | bytes:
    """Like `convert_cached`, but when the cache cannot be written the ONNX model is returned as bytes (with a
    warning) instead of failing: a read-only home must not stop a net from playing. A cache folder that others can
    write to is not read at all (one warning line naming it and the fix, as ssh ignores a key file others can read):
    the net is converted in memory.

    Raises: as `convert_model`, except for the cache's own errors.
    """
    dst = cached_name(src, board_size, cache_dir)
    report = progress or _noop
    try:
        private_dir(dst.parent)
    except UnsafeCacheError as exc:
        log.warning("%s; the net is converted in memory meanwhile", exc)
        data, _desc = _convert_to_bytes(src, board_size, report)
        report(1.0, "done")
        return data
    except OSError:
        pass  # the folder cannot be made: the write below fails too and says so
    if dst.exists():
        return dst
    data, _desc = _convert_to_bytes(src, board_size, report)
    try:
        _write_atomically(dst, data)
    except OSError as exc:
        log.warning("cannot write the net cache %s (%s); converted in memory, so every start converts again "
                    "(set MIAI_CACHE_DIR to a writable directory)", dst.parent, describe(exc, dst))
        report(1.0, "done")
        return data
    report(1.0, "done")
    return dst
