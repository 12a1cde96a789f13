"""The net cache is private to the user: created 0700, and a folder that others can write to (or that belongs to
another user) is refused with one line naming it and the fix, as ssh refuses a key file others can read. The attack
tried: a net planted in a world-writable cache is never loaded."""

from __future__ import annotations

import gzip
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from miai.nets import katrain_nets
from miai.nets.cachedir import UnsafeCacheError, cache_root, private_dir
from miai.nets.convert import cached_name, convert_cached, convert_cached_or_in_memory, convert_model
from miai.nets.katrain_nets import KatrainNetError, fetch_katrain_net

from .synthetic_models import Spec, write_model


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, whatever the test runner's: folders would be 0755 without miai asking for 0700."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_cache_and_the_folders_above_it_that_miai_makes_are_private(tmp_path: Path, umask_022: object,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "home" / "cache" / "miai"))
    folder = private_dir(cache_root() / "nets")
    assert folder.is_dir()
    assert [mode(p) for p in (folder, folder.parent, folder.parent.parent, tmp_path / "home")] == [0o700] * 4
    assert private_dir(folder) == folder  # an existing private folder is taken as it is


def test_a_model_converted_into_the_default_cache_lands_in_a_private_folder(tmp_path: Path, umask_022: object,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "small.bin"
    src.write_bytes(write_model(Spec(version=8)))
    converted = convert_cached(src)
    assert converted.parent == tmp_path / "cache" / "nets" and mode(converted.parent) == 0o700
    assert mode(tmp_path / "cache") == 0o700


@pytest.mark.parametrize(("bits", "who"), [(0o020, "its group"), (0o002, "others")])
def test_a_cache_folder_others_can_write_to_is_refused_in_one_line(tmp_path: Path, bits: int, who: str) -> None:
    folder = tmp_path / "nets"
    folder.mkdir(mode=0o700)
    folder.chmod(0o755 | bits)
    with pytest.raises(UnsafeCacheError) as refused:
        private_dir(folder)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"refusing the cache folder {folder}: {who} can write to it (mode 0{0o755 | bits:o})")
    assert f"chmod go-w {folder}" in message and "MIAI_CACHE_DIR" in message


def test_a_writable_parent_is_refused_unless_sticky(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could swap the cache folder for their own
    with pytest.raises(UnsafeCacheError) as refused:
        private_dir(shared / "nets" / "backends")
    assert str(refused.value).startswith(f"refusing the cache folder {shared / 'nets' / 'backends'}: others can "
                                         f"write to {shared} (mode 0777)")
    assert f"chmod go-w {shared}`" in str(refused.value)
    assert not (shared / "nets").exists()  # nothing made in it
    shared.chmod(0o777 | stat.S_ISVTX)  # as /tmp: others cannot rename or replace what is yours
    assert mode(private_dir(shared / "nets")) == 0o700


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_cache_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "nets"
    folder.mkdir(mode=0o700)
    os.chown(folder, 4242, -1)
    with pytest.raises(UnsafeCacheError, match=r"it belongs to another user \(uid 4242\)"):
        private_dir(folder)
    with pytest.raises(UnsafeCacheError, match=f"{folder} belongs to another user"):
        private_dir(folder / "nets")


def test_a_net_planted_in_a_world_writable_cache_is_not_loaded(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """The attack: another user writes an ONNX file where miai's conversion of a model would be cached. miai does
    not read it: it converts the model in memory and says why in one line."""
    src = tmp_path / "mine.bin"
    src.write_bytes(write_model(Spec(version=8)))
    cache = tmp_path / "cache"
    cache.mkdir()
    planted = cached_name(src, cache_dir=cache)
    other = tmp_path / "theirs.bin"
    other.write_bytes(write_model(Spec(version=8, seed=7)))
    convert_model(other, planted)  # a real net, but not the one asked for
    cache.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="miai"):
        converted = convert_cached_or_in_memory(src, cache_dir=cache)
    assert isinstance(converted, bytes) and converted != planted.read_bytes()
    expected = tmp_path / "expected.onnx"
    convert_model(src, expected)
    assert converted == expected.read_bytes()
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [f"refusing the cache folder {cache}: others can write to it (mode 0777) and could plant a net in "
                     f"it; run `chmod go-w {cache}` or set MIAI_CACHE_DIR to a folder of your own; the net is "
                     "converted in memory meanwhile"]
    with pytest.raises(UnsafeCacheError):
        convert_cached(src, cache_dir=cache)  # the path-returning form refuses outright


def test_katrain_nets_are_not_taken_from_a_cache_others_can_write_to(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    version = next(iter(katrain_nets.KATRAIN_NETS))
    target = tmp_path / "cache" / "katrain" / version
    target.mkdir(parents=True)
    (target / katrain_nets.KATRAIN_NETS[version]).write_bytes(gzip.compress(b"planted"))
    (tmp_path / "cache").chmod(0o777)
    with pytest.raises(KatrainNetError, match=f"refusing the cache folder {target}: others can write to "
                                              f"{tmp_path / 'cache'} "):
        fetch_katrain_net(version)


@pytest.mark.slow
def test_miai_gtp_with_a_world_writable_cache_says_so_once_and_plays(tmp_path: Path) -> None:
    """The user's view: one line naming the folder and the fix, then the game goes on with the net converted in
    memory (nothing read from or written to that folder)."""
    from .test_cli_models import miai

    model = tmp_path / "tiny.bin.gz"
    model.write_bytes(gzip.compress(write_model(Spec(version=8))))
    cache = tmp_path / "shared-cache"
    cache.mkdir()
    cache.chmod(0o777)
    done = miai(["gtp", "--model", model.name, "--set", "search.max_visits=8"], tmp_path,
                "boardsize 9\ngenmove b\nquit\n", MIAI_CACHE_DIR=str(cache))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n\n")[1].startswith("= ")  # genmove answered
    refusals = [line for line in done.stderr.splitlines() if "refusing the cache folder" in line]
    assert len(refusals) == 1 and str(cache) in refusals[0] and f"chmod go-w {cache}" in refusals[0]
    assert list(cache.iterdir()) == []
