"""Compiles the search's hot modules with mypyc when the install can; everything else about the package is in
pyproject.toml.

The modules are those of ``miai.go.native.COMPILED`` (go/native.py, which also chooses at run time between them and
their Python source). ``MIAI_COMPILE``: ``1`` compiles them (in an editable install too; a failure is an error),
``0`` never does; unset, a regular install (``pip install .``, a wheel) compiles them when mypy (a build requirement)
and a C compiler are at hand and says in one line of the build log why not when they are not, and an editable
install keeps the Python source (docs/development.md: a developer edits it).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
SOURCE_TREE = Path("build") / "mypyc-src"  # the packages under their installed names, for mypy (relative to ROOT)


def compiled_modules() -> tuple[str, ...]:
    """``miai.go.native.COMPILED``, read from the file (the package is not installed yet)."""
    spec = importlib.util.spec_from_file_location("_miai_native", ROOT / "go" / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.COMPILED)


MODULES = compiled_modules()
GROUP = "miai"  # mypyc's group: one shared library, miai__mypyc, holds the code of all of them


def say(line: str) -> None:
    print(f"miai: {line}", file=sys.stderr, flush=True)


class BuildMypyc(build_ext):
    """build_ext whose extensions, named in setup() below, get their C code from mypyc when the build runs (or
    are dropped, and the modules stay Python)."""

    def run(self) -> None:
        wanted = os.environ.get("MIAI_COMPILE", "").strip()
        planned, self.extensions = self.extensions, []
        if wanted == "0":
            return say("MIAI_COMPILE=0: the search's modules stay Python")
        if self.editable_mode and wanted != "1":
            return say("editable install: the search's modules stay Python (MIAI_COMPILE=1 compiles them)")
        try:
            self.check_compiler()
            self.extensions = self.fill(planned)
            super().run()
        except Exception as exc:  # no compiler, no mypy, a mypyc refusal: the install goes on in Python
            for ext in planned:
                Path(self.get_ext_fullpath(ext.name)).unlink(missing_ok=True)
            self.extensions = []
            if wanted == "1":
                raise
            detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
            return say(f"the search's modules stay Python, not compiled: {detail}")
        say(f"compiled {len(self.extensions) - 1} modules with mypyc")

    def fill(self, planned: list[Extension]) -> list[Extension]:
        """``planned`` (setuptools has prepared them) with the sources and flags of the extensions mypyc makes of
        the compiled modules, their C written under build/."""
        try:
            from mypyc.build import mypycify
        except ImportError as exc:
            raise RuntimeError(f"mypy is not installed ({exc})") from None
        build_py = self.get_finalized_command("build_py")
        tree = ROOT / SOURCE_TREE
        shutil.rmtree(tree, ignore_errors=True)
        for package in self.distribution.packages or ():
            target = tree.joinpath(*package.split("."))
            target.mkdir(parents=True)
            for source in Path(ROOT, build_py.get_package_dir(package)).glob("*.py"):
                shutil.copy2(source, target / source.name)
        paths = [str(SOURCE_TREE.joinpath(*name.split(".")).with_suffix(".py")) for name in MODULES]
        # Module names are paths below the tree (miai/go/board.py is miai.go.board): mypy's explicit package bases.
        os.environ["MYPYPATH"] = str(SOURCE_TREE)
        try:
            made = {ext.name: ext for ext in mypycify(["--explicit-package-bases", *paths], opt_level="3",
                                                      group_name=GROUP)}
        except SystemExit as exc:  # mypyc reports type errors, then exits
            raise RuntimeError(f"mypyc refused the modules (exit {exc.code})") from None
        if set(made) != {ext.name for ext in planned}:
            raise RuntimeError(f"mypyc made the extensions {sorted(made)}, not the ones planned")
        for ext in planned:
            for field in ("sources", "include_dirs", "define_macros", "undef_macros", "library_dirs", "libraries",
                          "runtime_library_dirs", "extra_objects", "extra_compile_args", "extra_link_args",
                          "export_symbols", "depends", "language"):
                setattr(ext, field, getattr(made[ext.name], field))
        return planned

    def check_compiler(self) -> None:
        """Raise unless a C compiler builds against Python's headers here (before compiling a dozen modules)."""
        from distutils.ccompiler import new_compiler
        from distutils.sysconfig import customize_compiler, get_python_inc

        compiler: Any = new_compiler()
        customize_compiler(compiler)
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.c"
            probe.write_text("#include <Python.h>\nint miai_probe(void) { return 0; }\n")
            try:
                compiler.compile([str(probe)], output_dir=folder, include_dirs=[get_python_inc()])
            except Exception as exc:
                raise RuntimeError(f"no working C compiler ({exc})") from None


# The extensions mypyc makes: the group's shared library and one small module per compiled module. Named here, so that
# setuptools prepares them as it prepares any extension; BuildMypyc gives them their C code or drops them.
setup(ext_modules=[Extension(name, sources=[]) for name in (f"{GROUP}__mypyc", *MODULES)],
      cmdclass={"build_ext": BuildMypyc})
