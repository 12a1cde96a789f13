"""OS errors in a user's words: every layer that opens a file the user named reports failures the same way.

``str(OSError)`` reads ``[Errno 2] No such file or directory: '/a/b.sgf'``: a number, the C library's phrase and the
path again. Messages say which input failed already, so this module gives only the problem (``no such directory
/a``). It imports nothing of miai and sits in go/, the leaf layer, so every layer may use it.
"""

from __future__ import annotations

import errno
from pathlib import Path

__all__ = ["describe"]


def describe(error: OSError, path: str | Path | None = None) -> str:
    """The problem behind ``error`` for ``path`` (default: the error's own file name), without errno or path noise.

    >>> describe(FileNotFoundError(errno.ENOENT, "No such file or directory", "/nonexistent/x.sgf"))
    'no such directory /nonexistent'
    """
    name = path if path is not None else error.filename
    target = Path(name) if name else None
    if isinstance(error, FileNotFoundError) or error.errno == errno.ENOENT:
        if target is not None and not target.parent.exists():
            return f"no such directory {_first_missing(target.parent)}"
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(error, NotADirectoryError):
        return "a part of the path is a file, not a directory"
    if isinstance(error, PermissionError):
        return "permission denied"
    if error.errno == errno.ENOSPC:
        return "the disk is full"
    if error.strerror:
        return error.strerror[0].lower() + error.strerror[1:]
    return str(error)


def _first_missing(directory: Path) -> Path:
    """The outermost directory of ``directory`` that does not exist (the one the user must create)."""
    missing = directory
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    return missing
