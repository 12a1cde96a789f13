"""KaTrain's own engine class (katrain.core.engine.KataGoEngine, KaTrain 1.20.0) driving ``miai analysis``, headless.

Run as a script: ``python katrain_driver.py MIAI_EXECUTABLE MODEL``. It does what KaTrain's GUI does through that
class: starts the engine with KaTrain's command line and its shipped analysis config, analyses every move of a short
game, ponders and stops pondering, asks for an illegal move, and shuts the engine down. It prints one JSON object
with what it saw, for tests/analysis/test_katrain.py to check.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import time
from typing import Any

# Kivy reads these when imported: no argument parsing (these are not its arguments), no logs, a scratch home.
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_NO_FILELOG", "1")
os.environ.setdefault("KIVY_HOME", tempfile.mkdtemp(prefix="kivy-home-"))

from katrain.core.constants import OUTPUT_DEBUG, OUTPUT_ERROR, OUTPUT_KATAGO_STDERR  # noqa: E402
from katrain.core.engine import KataGoEngine  # noqa: E402
from katrain.core.game_node import GameNode  # noqa: E402
from pysgf import Move  # noqa: E402

GAME = ["E5", "C3", "G7", "C6", "F3"]


class Host:
    """The part of KaTrain's app object the engine calls: log() and the recovery-popup callback."""

    def __init__(self) -> None:
        self.logs: list[tuple[float, str]] = []
        self.popups: list[Any] = []

    def log(self, message: Any, level: float = 0) -> None:
        self.logs.append((level, str(message)))

    def __call__(self, *args: Any) -> None:
        self.popups.append([str(a) for a in args])


def wait(condition: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def main(executable: str, model: str) -> dict[str, Any]:
    host = Host()
    config = {"katago": executable, "model": model, "config": "katrain/KataGo/analysis_config.cfg",
              "max_visits": 40, "fast_visits": 10, "max_time": 8.0, "wide_root_noise": 0.04,
              "_enable_ownership": True, "allow_recovery": False}
    engine = KataGoEngine(host, config)
    report: dict[str, Any] = {"command": engine.command}

    root = GameNode(properties={"SZ": 9, "KM": 7, "RU": "jp"})
    nodes = [root]
    for i, vertex in enumerate(GAME):
        nodes.append(nodes[-1].play(Move.from_gtp(vertex, player="BW"[i % 2])))
    for node in nodes:
        node.analyze(engine)
    report["game_complete"] = wait(lambda: all(n.analysis_complete for n in nodes), 180)
    if not report["game_complete"]:  # the engine writes every thread's stack to stderr (miai analysis's SIGUSR1)
        engine.katago_process.send_signal(signal.SIGUSR1)
        time.sleep(2)
    report["game"] = [{"visits": n.root_visits, "winrate": n.winrate, "score": n.score,
                       "candidates": len(n.candidate_moves), "ownership": len(n.ownership or []),
                       "policy": len(n.policy or []), "top": n.candidate_moves[0]["move"] if n.candidate_moves else None}
                      for n in nodes]

    last = nodes[-1]
    ponder = last.play(Move.from_gtp("D7", player="W"))
    ponder.analyze(engine, ponder=True)
    report["ponder_partial"] = wait(lambda: ponder.root_visits > 0, 60)
    partial_visits = ponder.root_visits
    time.sleep(0.6)
    engine.stop_pondering()
    report["ponder_stopped"] = wait(engine.is_idle, 30)
    report["ponder_visits"] = [partial_visits, ponder.root_visits]

    errors: list[dict[str, Any]] = []
    illegal = nodes[1].play(Move.from_gtp("E5", player="W"))  # E5 is Black's stone
    engine.request_analysis(illegal, callback=lambda *a: None, error_callback=errors.append)
    report["illegal_answered"] = wait(lambda: bool(errors), 30)
    report["illegal"] = errors

    process = engine.katago_process
    engine.shutdown(finish=False)
    report["exited"] = wait(lambda: process.poll() is not None, 10)
    report["returncode"] = process.poll()
    report["error_logs"] = [text for level, text in host.logs if level == OUTPUT_ERROR]
    report["popups"] = host.popups
    # What the engine wrote on stderr, and KaTrain's own record of each query sent and answered: a failure is read
    # from these.
    report["engine_stderr"] = [text for level, text in host.logs if level == OUTPUT_KATAGO_STDERR]
    report["exchange"] = [text for level, text in host.logs if level == OUTPUT_DEBUG]
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
