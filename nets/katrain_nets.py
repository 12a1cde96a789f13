"""KataGo nets shipped inside KaTrain wheels on PyPI, fetched on demand for tests and benchmarks.

`fetch_katrain_net("1.9.3")` downloads the wheel with pip (``pip download --no-deps``) into
``~/.cache/miai/downloads``, extracts the model under ``katrain/models/`` into
``~/.cache/miai/katrain/<version>/`` and returns its path; later calls reuse both. Nothing is
downloaded when the extracted file is already there.

| KaTrain | net |
|---|---|
| 1.9.3 | g170e-b15c192 (v8 resnet, 15 blocks x 192) |
| 1.14.0 | kata1-b18c384nbt (nested bottleneck resnet) |
| 1.20.0 | b10c384h6nbttflrs (nested bottleneck transformer) |
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from miai.nets.cachedir import UnsafeCacheError, cache_root, private_dir

__all__ = ["KATRAIN_NETS", "KatrainNetError", "fetch_katrain_net", "model_path", "cache_root"]

# Known nets, so a fresh cache can be checked without opening the wheel.
KATRAIN_NETS = {
    "1.9.3": "g170e-b15c192-s1672170752-d466197061.bin.gz",
    "1.14.0": "kata1-b18c384nbt-s6582191360-d3422816034.bin.gz",
    "1.20.0": "b10c384h6nbttflrs.bin.gz",
}

_MODEL_DIR = "katrain/models/"
_PIP_TIMEOUT_S = 900


class KatrainNetError(RuntimeError):
    """The net could not be fetched (no network, no pip, unknown version, odd wheel)."""


def model_path(name: str) -> Path:
    """``name`` as a model file, or, when it is a known KaTrain version, that wheel's net (fetched once).

    Raises:
        KatrainNetError: a KaTrain version whose net cannot be fetched.
    """
    return fetch_katrain_net(name) if name in KATRAIN_NETS else Path(name)


def fetch_katrain_net(version: str) -> Path:
    """Path of the KataGo model inside KaTrain ``version``'s wheel, downloading it if needed.

    Raises:
        KatrainNetError: the wheel cannot be downloaded or holds no model.
    """
    try:  # never read a net another user could have planted (nets.cachedir)
        target_dir = private_dir(cache_root() / "katrain" / version)
        private_dir(_downloads())
    except UnsafeCacheError as exc:
        raise KatrainNetError(str(exc)) from exc
    known = KATRAIN_NETS.get(version)
    if known is not None and (target_dir / known).is_file():
        return target_dir / known
    wheel = _find_wheel(version) or _download_wheel(version)
    return _extract_model(wheel, target_dir)


def _downloads() -> Path:
    return cache_root() / "downloads"


def _find_wheel(version: str) -> Path | None:
    folder = _downloads()
    if not folder.is_dir():
        return None
    for candidate in sorted(folder.iterdir()):
        name = candidate.name.lower()
        if name.startswith(f"katrain-{version}-") and name.endswith(".whl"):
            return candidate
    return None


def _download_wheel(version: str) -> Path:
    folder = _downloads()
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += [f"katrain=={version}", "-d", str(folder)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KatrainNetError(f"could not run pip to download katrain=={version}: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise KatrainNetError(f"pip could not download katrain=={version} (offline?): {' | '.join(tail)}")
    wheel = _find_wheel(version)
    if wheel is None:
        raise KatrainNetError(f"pip reported success but no katrain {version} wheel is in {folder}")
    return wheel


def _extract_model(wheel: Path, target_dir: Path) -> Path:
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = archive.infolist()
            models = [i for i in names if i.filename.startswith(_MODEL_DIR) and i.filename.endswith(".bin.gz")]
            if not models:
                raise KatrainNetError(f"{wheel.name} holds no model under {_MODEL_DIR}")
            info = max(models, key=lambda i: i.file_size)
            target = target_dir / Path(info.filename).name
            # A private temporary name: concurrent test processes may extract at the same time.
            fd, partial = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target_dir)
            try:
                with archive.open(info) as src, os.fdopen(fd, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                os.replace(partial, target)
            except BaseException:
                Path(partial).unlink(missing_ok=True)
                raise
            return target
    except zipfile.BadZipFile as exc:
        raise KatrainNetError(f"{wheel} is not a valid wheel ({exc}); delete it and retry") from exc
