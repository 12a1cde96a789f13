"""miai's cache folder: where converted nets, KaTrain's nets and ``auto``'s measurements are kept, private to the user.

A net is code for the machine that runs it (an ONNX file names the files it reads, and a planted net plays what its
author wants), so a folder that another user can write to must not be read from: as ssh refuses a key file others
can read, ``private_dir`` refuses a cache folder that others can write to (or that belongs to another user), with
one line naming the folder and the fix. The folders miai creates are private (mode 0700).

>>> cache_root().name
'miai'
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UnsafeCacheError", "cache_root", "private_dir"]


class UnsafeCacheError(ValueError):
    """A cache folder that others can write to, or that belongs to another user: nothing in it is used."""


def cache_root() -> Path:
    """$MIAI_CACHE_DIR, else $XDG_CACHE_HOME/miai, else ~/.cache/miai."""
    env = os.environ.get("MIAI_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "miai"


def private_dir(folder: Path) -> Path:
    """``folder``, created private to the user (mode 0700, and so every folder above it that is missing), after
    checking, as ssh checks the folders above a key file, that neither it nor any folder above it can be written by
    another user (who could swap in a folder of their own).

    Raises:
        UnsafeCacheError: ``folder`` or a folder above it is writable by group or others (a sticky folder above it,
            such as /tmp, excepted: there others cannot replace what is yours), or belongs to a user other than you
            or root.
        OSError: the folder cannot be created (a read-only home, a file in the way).
    """
    chain = (folder, *folder.parents)
    for path in chain:  # what exists, before making anything in it
        if path.is_dir():
            _check(folder, path)
    missing = [path for path in chain if not path.exists()]
    for path in reversed(missing):  # outermost first, each private from the start (mkdir's parents use the umask)
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process: checked below
            pass
    for path in missing:
        _check(folder, path)
    return folder


def _check(folder: Path, path: Path) -> None:
    """Refuse ``folder`` when ``path`` (itself or a folder above it) is not safe from other users."""
    if not hasattr(os, "getuid"):  # no POSIX owners and modes (Windows): nothing to compare
        return
    info = path.stat()
    where = "it" if path == folder else str(path)
    if info.st_uid not in (os.getuid(), 0):
        raise UnsafeCacheError(f"refusing the cache folder {folder}: {where} belongs to another user (uid "
                               f"{info.st_uid}), who could plant a net in it; use a folder of your own "
                               "(set MIAI_CACHE_DIR)")
    sticky = path != folder and info.st_mode & stat.S_ISVTX
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not sticky:
        who = "others" if info.st_mode & stat.S_IWOTH else "its group" if path == folder else "the group"
        raise UnsafeCacheError(f"refusing the cache folder {folder}: {who} can write to {where} (mode "
                               f"{stat.S_IMODE(info.st_mode):04o}) and could plant a net in it; run `chmod go-w "
                               f"{path}` or set MIAI_CACHE_DIR to a folder of your own")
