"""The layering of DESIGN.md, enforced over every module's imports.

go imports nothing of miai; nets and gtp import go only; engine may import anything. The search core
(engine/search.py, engine/graph.py) sees nets only through the Evaluator interface, so it never imports
onnxruntime. The top-level package (miai/__init__.py) imports no layer, or importing miai.go would drag the others in;
top-level entry points such as miai/__main__.py may import anything.

Imports are read statically (ast), including imports inside functions and `if TYPE_CHECKING:` blocks, and relative
imports are resolved; a second test checks at run time that importing all of go/ loads no other layer.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "miai"

# Which miai layers each layer may import (besides itself).
ALLOWED = {
    "go": set(),
    "nets": {"go"},
    "gtp": {"go"},
    "engine": {"go", "nets", "gtp"},
}
# Third-party modules a file must not import: (file relative to miai/, forbidden top-level module).
FORBIDDEN_THIRD_PARTY = [
    ("engine/search.py", "onnxruntime"),
    ("engine/graph.py", "onnxruntime"),
]


def module_name(path: Path, root: Path) -> str:
    """Dotted module name of a file under `root` (the miai package directory)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path) -> set[str]:
    """Every module a file imports, as absolute dotted names (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, package)
            found.add(base)
            # `from miai import go` imports the subpackage miai.go (but `from miai import __version__` does not).
            found.update(f"{base}.{alias.name}" for alias in node.names if _is_module(f"{base}.{alias.name}", root))
    return found


def _is_module(dotted: str, root: Path) -> bool:
    """Whether a dotted miai name is a module or package under `root` (rather than a name inside one)."""
    parts = dotted.split(".")
    if parts[0] != root.name:
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
    for path in sorted(root.rglob("*.py")):
        source = module_name(path, root)
        own = layer_of(source)
        for target in sorted(imported_modules(path, root)):
            target_layer = layer_of(target)
            if target_layer is None or target_layer == own:
                continue
            if source == "miai":  # miai/__init__.py runs on every import of any layer
                problems.append(f"{source} (the top-level package) imports {target}")
            elif own in ALLOWED and target_layer not in ALLOWED[own]:
                problems.append(f"{source} ({own}) imports {target} ({target_layer})")
        rel = path.relative_to(root).as_posix()
        for file, banned in FORBIDDEN_THIRD_PARTY:
            if rel == file and any(t == banned or t.startswith(banned + ".") for t in imported_modules(path, root)):
                problems.append(f"{source} imports {banned}")
    return problems


def test_miai_respects_the_layering() -> None:
    problems = violations(PACKAGE_ROOT)
    assert not problems, "layering violations:\n" + "\n".join(problems)


def test_every_layer_exists_and_is_scanned() -> None:
    # Guards the test above against silently scanning nothing (e.g. after a move of the package).
    scanned = {layer_of(module_name(p, PACKAGE_ROOT)) for p in PACKAGE_ROOT.rglob("*.py")}
    assert set(ALLOWED) <= scanned


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_checker_catches_back_edges_relative_imports_and_onnxruntime(tmp_path: Path) -> None:
    root = tmp_path / "miai"
    _write(root, "__init__.py", "")
    _write(root, "go/__init__.py", "")
    _write(root, "go/state.py", "from ..engine import search\n")  # relative back-edge
    _write(root, "nets/features.py", "import miai.gtp.session\n")  # sideways
    _write(root, "gtp/session.py", "def f():\n    from miai.go import coords\n")  # allowed, inside a function
    _write(root, "engine/search.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import onnxruntime\n")
    _write(root, "engine/cli.py", "import onnxruntime\nfrom miai import nets, gtp\n")  # allowed
    _write(root, "go/coords.py", "from miai import __version__\nfrom .. import go\n")  # allowed: not a layer
    problems = violations(root)
    assert problems == [
        "miai.engine.search imports onnxruntime",
        "miai.go.state (go) imports miai.engine (engine)",
        "miai.go.state (go) imports miai.engine.search (engine)",
        "miai.nets.features (nets) imports miai.gtp.session (gtp)",
    ]


def test_top_level_package_may_not_import_a_layer(tmp_path: Path) -> None:
    root = tmp_path / "miai"
    _write(root, "__init__.py", "from miai import engine\n")
    _write(root, "__main__.py", "from miai.engine.cli import main\n")  # an entry point: allowed
    _write(root, "engine/__init__.py", "")
    assert violations(root) == ["miai (the top-level package) imports miai.engine"]


@pytest.mark.timeout(120)
def test_importing_go_loads_no_other_layer() -> None:
    modules = sorted(
        module_name(p, PACKAGE_ROOT) for p in (PACKAGE_ROOT / "go").rglob("*.py") if p.name != "__main__.py"
    )
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('miai.') and not m.startswith('miai.go'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=100)
    assert out.stdout.strip() == ""
