"""The layering of docs/development.md's "How to read the code", enforced over every module's imports.

The layers are folders at the top of the repository (go/, nets/, gtp/, engine/, match/), installed as miai.go,
miai.nets, ...: go imports nothing of miai; nets and gtp import go only; match (engine-vs-engine games over GTP)
imports go, gtp and nets; engine, the apps and the composition root, may import anything, but the search core inside it
(engine/core/) imports only go, the nets' protocol (miai.nets.protocol: the Evaluator interface, typed on what the net
reads) and itself, so it never imports onnxruntime, a concrete evaluator or an app around it.
`miai` itself is a namespace with no code of its own, so importing miai.go cannot drag the other layers in. Inside a
layer the modules import each other without circles, so each can be read after the ones it imports.

Imports are read statically (ast), including imports inside functions and `if TYPE_CHECKING:` blocks, and relative
imports are resolved; a second test checks at run time that importing all of go/ loads no other layer.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent  # the layers' folders sit here, as the `miai` namespace's contents

# Which miai layers each layer may import (besides itself).
ALLOWED = {
    "go": set(),
    "nets": {"go"},
    "gtp": {"go"},
    "match": {"go", "gtp", "nets"},
    "engine": {"go", "nets", "gtp", "match"},
}
# The search core, inside engine/, and what it may import (a module of it or below it): the apps sit around it.
CORE = "miai.engine.core"
CORE_MAY_IMPORT = ("miai.go", "miai.nets.protocol", CORE)
# Third-party modules a file must not import: (file relative to the root, forbidden top-level module).
FORBIDDEN_THIRD_PARTY = [
    ("engine/core/search.py", "onnxruntime"),
    ("engine/core/graph.py", "onnxruntime"),
]


def layer_files(root: Path) -> list[Path]:
    """Every Python file of the layers under `root` (the folder that holds go/, nets/, ... as `miai` would)."""
    return sorted(path for layer in ALLOWED for path in (root / layer).rglob("*.py"))


def module_name(path: Path, root: Path) -> str:
    """Dotted module name of a layer file under `root`: go/state.py is miai.go.state."""
    parts = ["miai", *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path, *, names_only: bool = False) -> set[str]:
    """Every module a file imports, as absolute dotted names (relative imports resolved).

    With ``names_only``, ``from package import a, b`` where a and b are both modules counts as importing a and b
    only: the file needs those modules, not what the package's ``__init__`` defines (the import circles' view).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, package)
            # `from miai import go` imports the subpackage miai.go (but `from miai import __version__` does not).
            modules = {f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}", root)}
            found.update(modules)
            if not names_only or len(modules) < len(node.names):
                found.add(base)
    return found


def _is_module(dotted: str, root: Path) -> bool:
    """Whether a dotted miai name is a module or package under `root` (rather than a name inside one)."""
    parts = dotted.split(".")
    if parts[0] != "miai":
        return False
    path = root.joinpath(*parts[1:])
    return path.is_dir() or path.with_suffix(".py").is_file()


def _resolve(node: ast.ImportFrom, package: str) -> str:
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def layer_of(module: str) -> str | None:
    """The layer (go, nets, gtp, engine) of a miai module; None for other modules, `miai` and its top-level files."""
    parts = module.split(".")
    if parts[0] != "miai" or len(parts) < 2 or parts[1] not in ALLOWED:
        return None
    return parts[1]


def violations(root: Path) -> list[str]:
    """Every import under `root` that breaks the layering, as readable strings (empty when all is well)."""
    problems = []
    for path in layer_files(root):
        source = module_name(path, root)
        own = layer_of(source)
        for target in sorted(imported_modules(path, root)):
            target_layer = layer_of(target)
            if target_layer is None or target_layer == own:
                continue
            if own in ALLOWED and target_layer not in ALLOWED[own]:
                problems.append(f"{source} ({own}) imports {target} ({target_layer})")
        if _within(source, CORE):
            for target in sorted(imported_modules(path, root)):
                if layer_of(target) is not None and not any(_within(target, allowed) for allowed in CORE_MAY_IMPORT):
                    problems.append(f"{source} (the search core) imports {target}")
        rel = path.relative_to(root).as_posix()
        for file, banned in FORBIDDEN_THIRD_PARTY:
            if rel == file and any(t == banned or t.startswith(banned + ".") for t in imported_modules(path, root)):
                problems.append(f"{source} imports {banned}")
    return problems


def _within(module: str, package: str) -> bool:
    """Whether ``module`` is ``package`` or a module under it."""
    return module == package or module.startswith(package + ".")


def import_circles(root: Path) -> list[list[str]]:
    """Every set of modules under `root` that import each other in a loop (a strongly connected component of the
    import graph, or a module that imports itself), each sorted, in order; empty when there is none."""
    files = {module_name(path, root): path for path in layer_files(root)}
    graph = {name: sorted(t for t in imported_modules(path, root, names_only=True) if t in files and t != name)
             for name, path in files.items()}
    circles = [sorted(group) for group in _strongly_connected(graph) if len(group) > 1]
    return sorted(circles)


def _strongly_connected(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of a directed graph given as adjacency lists."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            groups.append(group)

    for node in graph:
        if node not in index:
            visit(node)
    return groups


@pytest.mark.slow
def test_miai_respects_the_layering() -> None:
    problems = violations(REPO)
    assert not problems, "layering violations:\n" + "\n".join(problems)


@pytest.mark.slow
def test_no_module_imports_itself_in_a_circle() -> None:
    # Type-only and late (in-function) imports count: a circle hidden behind them still means neither module can
    # be read, tested or moved without the other.
    circles = import_circles(REPO)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(circle) for circle in circles)


def test_every_layer_exists_and_is_scanned() -> None:
    # Guards the test above against silently scanning nothing (e.g. after a move of the package).
    scanned = {layer_of(module_name(p, REPO)) for p in layer_files(REPO)}
    assert set(ALLOWED) <= scanned


def test_every_layer_is_installed_under_the_miai_namespace() -> None:
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as handle:
        setuptools = tomllib.load(handle)["tool"]["setuptools"]
    assert {f"miai.{layer}": layer for layer in ALLOWED}.items() <= setuptools["package-dir"].items()
    packages = {f"miai.{p.parent.relative_to(REPO).as_posix().replace('/', '.')}" for p in layer_files(REPO)}
    assert packages <= set(setuptools["packages"])  # every folder with code is listed, so none is left out
    assert not (REPO / "miai").exists()  # no package above the layers


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_catches_back_edges_relative_imports_and_onnxruntime(tmp_path: Path) -> None:
    root = tmp_path
    _write(root, "go/__init__.py", "")
    _write(root, "go/state.py", "from ..engine.core import search\n")  # relative back-edge
    _write(root, "nets/features.py", "import miai.gtp.session\n")  # sideways
    _write(root, "gtp/session.py", "def f():\n    from miai.go import coords\n")  # allowed, inside a function
    _write(root, "engine/core/search.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import onnxruntime\n")
    _write(root, "engine/cli.py", "import onnxruntime\nfrom miai import nets, gtp\n")  # allowed
    _write(root, "go/coords.py", "from miai import __version__\nfrom .. import go\n")  # allowed: not a layer
    problems = violations(root)
    assert problems == [
        "miai.engine.core.search imports onnxruntime",
        "miai.go.state (go) imports miai.engine.core (engine)",
        "miai.go.state (go) imports miai.engine.core.search (engine)",
        "miai.nets.features (nets) imports miai.gtp.session (gtp)",
    ]


def test_checker_keeps_the_search_core_apart_from_the_apps(tmp_path: Path) -> None:
    root = tmp_path
    _write(root, "engine/core/search.py", "from miai.engine.core import graph\nfrom miai.nets.protocol import Evaluator\n"
                                          "from miai.go.state import GameState\n")  # allowed
    _write(root, "engine/core/graph.py", "")
    _write(root, "engine/core/playout.py", "def f():\n    from miai.engine.player import EnginePlayer\n")  # an app
    _write(root, "engine/core/expansion.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                             "    from miai.nets.evaluator import OnnxEvaluator\n")  # not the protocol
    _write(root, "engine/core/snapshot.py", "from miai.gtp.player import MoveInfo\n")  # the GTP layer
    _write(root, "engine/player.py", "from miai.engine.core.search import Search\nfrom miai.gtp import player\n")
    assert violations(root) == [
        "miai.engine.core.expansion (the search core) imports miai.nets.evaluator",
        "miai.engine.core.playout (the search core) imports miai.engine.player",
        "miai.engine.core.snapshot (the search core) imports miai.gtp.player",
    ]


def test_circle_checker_sees_type_only_and_late_imports_but_not_a_package_handing_on(tmp_path: Path) -> None:
    root = tmp_path
    _write(root, "gtp/__init__.py", "")
    _write(root, "gtp/session.py", "def table():\n    from .commands import admin\n")  # late
    _write(root, "gtp/commands/__init__.py", "")
    _write(root, "gtp/commands/admin.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                          "    from ..session import GtpSession\n")  # type-only
    _write(root, "nets/__init__.py", "from miai.nets.evaluator import Evaluator\n")
    _write(root, "nets/evaluator.py", "from miai.nets import features\n")  # the submodule, not the package
    _write(root, "nets/features.py", "")
    _write(root, "match/results.py", "from miai.match.summary import GameRecord\n")
    _write(root, "match/summary.py", "from miai.match import runner\n")
    _write(root, "match/runner.py", "import miai.match.results\n")
    assert import_circles(root) == [
        ["miai.gtp.commands.admin", "miai.gtp.session"],
        ["miai.match.results", "miai.match.runner", "miai.match.summary"],
    ]


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_importing_go_loads_no_other_layer() -> None:
    modules = sorted(
        module_name(p, REPO) for p in (REPO / "go").rglob("*.py") if p.name != "__main__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('miai.') and not m.startswith('miai.go'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=100)
    assert out.stdout.strip() == ""


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_importing_the_search_needs_no_installed_package() -> None:
    # From a source tree that was never installed there is no package metadata: the search and its config must
    # import all the same (the GTP session, which reads the version, is the composition root's to load).
    code = (
        "import importlib.metadata as md, sys\n"
        "def missing(name): raise md.PackageNotFoundError(name)\n"
        "md.version = missing\n"
        "import miai.engine.core.search, miai.engine.config\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('miai.gtp.session'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
