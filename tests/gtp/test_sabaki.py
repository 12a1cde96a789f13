"""Drive the engine with @sabaki/gtp (npm), the GTP client library Sabaki uses: pipelined startup, state
tracker syncs with handicap, passes and undo, genmove_analyze, lz-/kata-analyze parsed with Sabaki's grammar
and stopped by the next command (which must still be answered), and a clean quit.

Needs node, npm and ``npm install`` in tests/gtp/js (CI's .ci/run does it); skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

JS_DIR = Path(__file__).parent / "js"
FAKE_ENGINE = Path(__file__).parent / "fake_engine.py"


def _skip_reason() -> str | None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm not installed"
    if not (JS_DIR / "node_modules" / "@sabaki" / "gtp").is_dir():
        return "tests/gtp/js/node_modules missing: run `npm install` in tests/gtp/js"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))]


def miai_command() -> list[str] | None:
    """``miai gtp`` on a tiny playout evaluator, if the CLI is installed and answers --help."""
    executable = Path(sys.executable).parent / "miai"
    program = str(executable) if executable.exists() else shutil.which("miai")
    if program is None:
        return None
    check = subprocess.run([program, "gtp", "--help"], capture_output=True, text=True, timeout=60)
    if check.returncode != 0:
        return None
    return [program, "gtp", "--model", "playouts", "--size", "9", "--set", "search.max_visits=30"]


def run_sabaki_driver(command: list[str]) -> dict[str, object]:
    env = dict(os.environ, MIAI_GTP_COMMAND=json.dumps(command))
    done = subprocess.run(["node", "sabaki_test.js"], cwd=JS_DIR, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_sabaki_drives_the_session_with_a_fake_player() -> None:
    summary = run_sabaki_driver([sys.executable, str(FAKE_ENGINE)])
    assert summary["name"] == "miai" and summary["exitCode"] == 0
    assert summary["lz-analyze"] >= 3 and summary["kata-analyze"] >= 3  # type: ignore[operator]


def test_sabaki_drives_miai_gtp() -> None:
    command = miai_command()
    if command is None:
        pytest.skip("the `miai gtp` command is not available")
    summary = run_sabaki_driver(command)
    assert summary["exitCode"] == 0 and summary["syncs"] == 4
