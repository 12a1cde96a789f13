"""KaTrain 1.20.0, the real client, on ``miai analysis``: its own engine class starts miai with KaTrain's command
line and shipped config, analyses a short game, ponders and is stopped, gets an error for an illegal move and
shuts the engine down (katrain_driver.py does the driving in a process of its own, because Kivy reads its settings
from the environment when imported).

Needs KaTrain and the two packages its engine module imports, without KaTrain's GUI dependencies:
``pip install --no-deps katrain==1.20.0 && pip install kivy pysgf`` (.ci/run does this).
"""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

MISSING = [name for name in ("katrain", "kivy", "pysgf") if importlib.util.find_spec(name) is None]
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    bool(MISSING), reason=f"KaTrain client not installed ({', '.join(MISSING)} missing): "
                          "pip install --no-deps katrain==1.20.0 && pip install kivy pysgf")]

DRIVER = Path(__file__).with_name("katrain_driver.py")
BUNDLED_NETS = Path(__file__).resolve().parents[2] / "nets" / "default"
MIAI = Path(sys.executable).with_name("miai")


def test_katrain_analyses_ponders_and_stops_on_miai() -> None:
    if not MIAI.is_file():
        pytest.skip(f"the miai script is not installed next to {sys.executable}")
    done = subprocess.run([sys.executable, str(DRIVER), str(MIAI), str(BUNDLED_NETS)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    command = report["command"]
    assert command[:4] == [str(MIAI), "analysis", "-model", str(BUNDLED_NETS)]
    assert command[4] == "-config" and command[5].endswith("katrain/KataGo/analysis_config.cfg")
    assert command[6] == "-override-config" and command[7].startswith("homeDataDir=")

    # A failure names what the engine wrote on stderr and what KaTrain sent and got (its debug log).
    seen = "\n".join(["engine stderr:", *report["engine_stderr"], "KaTrain's log:", *report["exchange"]])
    assert report["game_complete"], seen
    for node in report["game"]:  # KaTrain asked for 40 visits with ownership and policy at every move
        assert node["visits"] == 40
        assert 0 <= node["winrate"] <= 1 and abs(node["score"]) < 81
        assert node["ownership"] == 81 and node["policy"] == 82 and node["candidates"] >= 1
    assert report["game"][0]["top"] not in (None, "pass")

    assert report["ponder_partial"] and report["ponder_stopped"], seen
    partial, final = report["ponder_visits"]
    assert 0 < partial <= final  # the stopped ponder query still delivered its last result

    assert report["illegal_answered"], seen
    (error,) = report["illegal"]
    assert error["error"] == "Illegal move 1: E5" and error["field"] == "moves"

    assert report["exited"] and report["returncode"] == -signal.SIGTERM  # KaTrain ends the engine with SIGTERM
    assert report["error_logs"] == [] and report["popups"] == []
