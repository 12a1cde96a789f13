"""The choice between the mypyc-compiled modules and their Python source (miai.go.native): all or none, the source
under MIAI_PURE_PYTHON=1, and an extension module older than its source seen as stale."""

from __future__ import annotations

import importlib.machinery
import os
import subprocess
import sys
from pathlib import Path

import pytest

from miai.go import native

# Imports every compiled module and prints, for each, whether it came from an extension module.
REPORT = """
import importlib, importlib.machinery
from miai.go import native
suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
print(native.running())
for name in native.COMPILED:
    print(name, importlib.import_module(name).__file__.endswith(suffixes))
"""


def report(pure: bool) -> tuple[str, dict[str, bool]]:
    """``miai.go.native.running()`` and, per compiled module, whether it is an extension, in a fresh process."""
    env = {key: value for key, value in os.environ.items() if key != native.PURE_ENV}
    if pure:
        env[native.PURE_ENV] = "1"
    lines = subprocess.run([sys.executable, "-c", REPORT], env=env, capture_output=True, text=True, check=True,
                           timeout=120).stdout.splitlines()
    return lines[0], {name: flag == "True" for name, flag in (line.split() for line in lines[1:])}


@pytest.mark.slow
def test_the_python_source_runs_under_miai_pure_python() -> None:
    running, extension = report(pure=True)
    assert running == "Python"
    assert set(extension) == set(native.COMPILED) and not any(extension.values())


@pytest.mark.slow
def test_the_compiled_modules_run_all_or_none() -> None:
    running, extension = report(pure=False)
    assert set(extension) == set(native.COMPILED)
    assert all(extension.values()) if running == "compiled (mypyc)" else not any(extension.values())


def make_module(folder: Path, name: str, source_time: float, built_time: float) -> None:
    source = folder / f"{name}.py"
    built = folder / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    source.write_text("")
    built.write_bytes(b"")
    os.utime(source, (source_time, source_time))
    os.utime(built, (built_time, built_time))


def test_a_source_edited_after_its_build_is_stale(tmp_path: Path) -> None:
    go = tmp_path / "miai" / "go"
    go.mkdir(parents=True)
    make_module(go, "board", source_time=2000.0, built_time=1000.0)  # edited after the build
    make_module(go, "state", source_time=1000.0, built_time=2000.0)  # built after the last edit
    assert native.stale_sources({"miai.go": [str(go)]}) == [str(go / "board.py")]


def test_an_install_in_site_packages_is_never_stale(tmp_path: Path) -> None:
    go = tmp_path / "lib" / "site-packages" / "miai" / "go"
    go.mkdir(parents=True)
    make_module(go, "board", source_time=2000.0, built_time=1000.0)  # (the order pip happened to write them in)
    assert native.stale_sources({"miai.go": [str(go)]}) == []


def test_the_source_finder_serves_only_the_compiled_modules(tmp_path: Path) -> None:
    (tmp_path / "board.py").write_text("")
    (tmp_path / "sgf.py").write_text("")
    finder = native.PythonSource()
    spec = finder.find_spec("miai.go.board", [str(tmp_path)])
    assert spec is not None and spec.origin == str(tmp_path / "board.py")
    assert isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    assert finder.find_spec("miai.go.sgf", [str(tmp_path)]) is None  # never compiled: the usual finders
    assert finder.find_spec("miai.go.board", None) is None
