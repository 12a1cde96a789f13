"""Which build of the search's hot modules runs: the one mypyc compiled at install time, or their Python source.

``pip install .`` compiles the modules named in :data:`COMPILED` with mypyc (setup.py) when mypy and a C compiler
are at hand: the board, the superko history and the game state, and the search core's graph, selection and descent,
about 2-2.5x the playouts per CPU second of CPython (docs/benchmarks.md). Each then exists twice in the install, as
its source (``board.py``) and as an extension module beside it, which Python's import system prefers. ``miai.go``'s
``__init__`` calls :func:`choose` before any of them is imported, and it decides once per process:

- ``MIAI_PURE_PYTHON=1`` (which also keeps numba's kernels out, :mod:`miai.go.compiled`): the Python source of all
  of them, as on a machine without a compiler. CI runs the fast tier this way too.
- an extension module older than its source, outside site-packages (an editable install compiled with
  ``MIAI_COMPILE=1`` whose sources were edited since): the Python source of all of them, with one line on stderr,
  so that a developer never runs code that is not what the file says.
- otherwise what the import system finds: the extension modules when the install built them, the source if not.

All or none: compiled modules call each other's classes and functions directly, so a Python ``Board`` handed to the
compiled search would be refused (a TypeError), and a compiled graph would keep calling the compiled board.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_ENV = "MIAI_PURE_PYTHON"
"""Set to 1 for no compiled code at all: these modules' Python source, and no numba kernels or playouts."""

COMPILED = (
    "miai.go.board", "miai.go.geometry", "miai.go.state", "miai.go.superko", "miai.go.zobrist",
    "miai.engine.core.backup", "miai.engine.core.ending", "miai.engine.core.expansion", "miai.engine.core.graph",
    "miai.engine.core.leaves", "miai.engine.core.movechoice", "miai.engine.core.playout",
    "miai.engine.core.rootsetup", "miai.engine.core.run", "miai.engine.core.scorevalue",
    "miai.engine.core.searchstats", "miai.engine.core.selection", "miai.engine.core.snapshot",
)
"""The modules setup.py compiles. Not: search.py (tests subclass and patch ``Search``; no gain measured),
config.py and results.py (dataclass validation, a float subclass), rules.py (its frozen dataclass would not pickle),
searchstate.py (runtime-checkable protocols)."""


def pure_python() -> bool:
    """True when ``MIAI_PURE_PYTHON`` asks for the Python code everywhere."""
    return os.environ.get(PURE_ENV, "").strip() not in ("", "0")


class PythonSource:
    """A finder that imports the modules of :data:`COMPILED` from their ``.py`` file, past any extension module."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The source file's spec for a compiled module; None (the usual finders) for every other module."""
        if fullname not in COMPILED or path is None:
            return None
        for folder in path:
            source = os.path.join(folder, fullname.rpartition(".")[2] + ".py")
            if os.path.isfile(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def stale_sources(folders: dict[str, Sequence[str]]) -> list[str]:
    """Source files newer than the extension module built from them, in ``folders`` (package -> its ``__path__``)
    outside site-packages; extension modules in site-packages were installed with their sources, never edited."""
    stale = []
    for name in COMPILED:
        package, _, module = name.rpartition(".")
        for folder in folders.get(package, ()):
            if {"site-packages", "dist-packages"} & set(Path(folder).parts):
                continue
            source = os.path.join(folder, module + ".py")
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                built = os.path.join(folder, module + suffix)
                if os.path.isfile(built) and os.path.isfile(source) and \
                        os.stat(source).st_mtime > os.stat(built).st_mtime:
                    stale.append(source)
    return stale


def choose(go_path: Sequence[str]) -> None:
    """Decide, once, whether the compiled modules or their source run (``go_path``: ``miai.go.__path__``)."""
    if any(isinstance(finder, PythonSource) for finder in sys.meta_path):
        return
    if pure_python():
        sys.meta_path.insert(0, PythonSource())
        return
    # miai.engine.core's folders, found without importing it: the packages lie side by side under miai/.
    core = [os.path.join(os.path.dirname(folder), "engine", "core") for folder in go_path]
    stale = stale_sources({"miai.go": list(go_path), "miai.engine.core": [f for f in core if os.path.isdir(f)]})
    if stale:
        print(f"miai: {os.path.realpath(stale[0])} changed since it was compiled: running the Python source (pip install again to "
              f"compile it)", file=sys.stderr)
        sys.meta_path.insert(0, PythonSource())


def running() -> str:
    """``compiled (mypyc)`` when the compiled modules run in this process, else ``Python``."""
    import miai.go.board

    suffix = os.path.splitext(miai.go.board.__file__ or "")[1]
    return "compiled (mypyc)" if suffix in (".so", ".pyd") else "Python"
