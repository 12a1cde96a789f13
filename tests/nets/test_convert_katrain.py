"""The KaTrain nets (b15c192 v8, b18c384nbt v14 nested bottleneck, b10c384 v15 transformer)
converted and checked against KataGo 1.17.2 on the quiet reference positions.

The nets are downloaded once from PyPI into ~/.cache/miai (see miai.nets.katrain_nets), about 290 MB, so these
tests run only with MIAI_DOWNLOAD_NETS=1 (tests/conftest.py) and skip with the reason when the download is
impossible (offline). KataGo's outputs for them are committed in tests/nets/reference/.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from miai.nets import katrain_nets
from miai.nets.katago import AttentionBlock, NestedBottleneckBlock, RMSNorm, load_model
from miai.nets.katrain_nets import KatrainNetError, fetch_katrain_net

from .test_convert import check_reference_file

pytestmark = pytest.mark.slow  # (downloads, and converts nets of 10 to 40 blocks)


def katrain_net(version: str) -> Path:
    try:
        return fetch_katrain_net(version)
    except KatrainNetError as exc:
        pytest.skip(f"KaTrain {version} net unavailable: {exc}")


@pytest.mark.download
def test_b15_resnet_matches_katago() -> None:
    net = katrain_net("1.9.3")
    assert check_reference_file("pub_b15.jsonl", net, dynamic=False) >= 4


@pytest.mark.download
def test_b18_nested_bottleneck_matches_katago() -> None:
    net = katrain_net("1.14.0")
    desc = load_model(net)
    assert desc.version == 14
    assert all(isinstance(b, NestedBottleneckBlock) for b in desc.trunk.blocks)
    assert check_reference_file("pub_nbt.jsonl", net, dynamic=True) >= 2


@pytest.mark.download
def test_b10_transformer_matches_katago() -> None:
    net = katrain_net("1.20.0")
    desc = load_model(net)
    assert desc.version == 15
    assert isinstance(desc.trunk.tip_norm, RMSNorm) and desc.trunk.tip_norm.spatial
    first = desc.trunk.blocks[0]
    assert isinstance(first, NestedBottleneckBlock) and isinstance(first.blocks[0], AttentionBlock)
    assert check_reference_file("pub_tf.jsonl", net, dynamic=True) >= 2


# -- fetch_katrain_net without the network ------------------------------------------------------------


def fake_wheel(folder: Path, version: str, payload: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"KaTrain-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("katrain/models/__init__.py", "")
        archive.writestr("katrain/models/tiny-net.bin.gz", payload)
        archive.writestr("katrain/other/readme.txt", "not a model")
    return wheel


def test_fetch_extracts_from_a_downloaded_wheel_and_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path))
    fake_wheel(tmp_path / "downloads", "0.0.1", b"model bytes")
    path = fetch_katrain_net("0.0.1")
    assert path == tmp_path / "katrain" / "0.0.1" / "tiny-net.bin.gz"
    assert path.read_bytes() == b"model bytes"
    assert fetch_katrain_net("0.0.1") == path


def test_fetch_downloads_with_pip_when_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path))
    calls: list[list[str]] = []

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        calls.append(command)
        fake_wheel(Path(command[command.index("-d") + 1]), "0.0.2", b"downloaded")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(katrain_nets.subprocess, "run", fake_run)
    assert fetch_katrain_net("0.0.2").read_bytes() == b"downloaded"
    assert "download" in calls[0] and "katrain==0.0.2" in calls[0] and "--no-deps" in calls[0]


def test_fetch_offline_raises_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path))

    def offline(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        return subprocess.CompletedProcess(command, 1, "", "ERROR: Could not find a version (network unreachable)")

    monkeypatch.setattr(katrain_nets.subprocess, "run", offline)
    with pytest.raises(KatrainNetError, match="pip could not download katrain==0.0.3"):
        fetch_katrain_net("0.0.3")


def test_fetch_rejects_a_wheel_without_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path))
    (tmp_path / "downloads").mkdir()
    with zipfile.ZipFile(tmp_path / "downloads" / "katrain-0.0.4-py3-none-any.whl", "w") as archive:
        archive.writestr("katrain/__init__.py", "")
    with pytest.raises(KatrainNetError, match="holds no model"):
        fetch_katrain_net("0.0.4")
