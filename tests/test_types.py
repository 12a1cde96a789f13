"""mypy --strict over the installed layers (pyproject's [tool.mypy]; `.ci/run` runs the same command).

mypy reads the package the strict editable install links under build/ (the `miai` namespace has no py.typed, so
each layer is named), from the repository root so that pyproject.toml configures it. The test also checks that
mypy saw every module, not a stale or empty install.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
LAYERS = ("go", "nets", "gtp", "engine", "match")
COMMAND = [sys.executable, "-m", "mypy", *(arg for layer in LAYERS for arg in ("-p", f"miai.{layer}"))]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e '.[dev]')")
def test_mypy_strict() -> None:
    done = subprocess.run(COMMAND, cwd=REPO, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    # "Success: no issues found in N source files", or "Found ... (checked N source files)".
    checked = re.search(r"(?:no issues found in|checked) (\d+) source files?", output)
    assert checked, f"mypy did not run:\n{output}"
    modules = sum(1 for layer in LAYERS for _ in (REPO / layer).rglob("*.py"))
    assert int(checked.group(1)) >= modules, f"mypy checked {checked.group(1)} files, the layers have {modules}: " \
        "reinstall (pip install -e) after adding a module"
    errors = [line for line in output.splitlines() if re.search(r"\.py:\d+: error:", line)]
    assert not errors and done.returncode == 0, "mypy --strict:\n" + output
