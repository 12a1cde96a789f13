"""Measure how long a command that arrives while `miai gtp` ponders waits for the ponder search to stop.

Usage (from the repository root):
    python tests/tools/ponder_stop.py                        # 19x19, 5 s of pondering before each command, 4 rounds
    python tests/tools/ponder_stop.py --ponder 10 --rounds 8 --size 9

The engine runs with the server config (pondering on) and its debug log. Each round it plays a genmove, is told the
opponent's move, ponders ``--ponder`` seconds, then gets a ``time_left``: the time from that line's arrival (the
engine's reader stamps it) to the session reading it (the ponder search stopped) is on the next move's clock, as a
server counts it. Prints each round's wait in milliseconds.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[2]
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ponder", type=float, default=5.0, help="seconds of pondering before each command")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--size", type=int, default=19)
    args = parser.parse_args()
    engine = subprocess.Popen([sys.executable, "-m", "miai.engine", "gtp", "--config", "server", "--log-level",
                               "debug"], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, bufsize=1)
    assert engine.stdin is not None and engine.stdout is not None and engine.stderr is not None
    waits: list[float] = []

    def read_log(stream: TextIO) -> None:
        for line in stream:
            found = re.search(r"DEBUG ([\d.]+) read 'time_left w[^']*' \(arrived ([\d.]+)", line)
            if found:
                waits.append(float(found.group(1)) - float(found.group(2)))

    threading.Thread(target=read_log, args=(engine.stderr,), daemon=True).start()

    def ask(command: str) -> str:
        assert engine.stdin is not None and engine.stdout is not None
        engine.stdin.write(command + "\n")
        engine.stdin.flush()
        lines: list[str] = []
        while True:
            line = engine.stdout.readline()
            if not line:
                raise SystemExit(f"the engine exited after {command!r}")
            if line.strip():
                lines.append(line.strip())
            elif lines:
                return "\n".join(lines)

    ask(f"boardsize {args.size}")
    ask("clear_board")
    for round_ in range(args.rounds):
        ask("time_left b 5 1")
        ask("genmove b")
        ask(f"play w {COLUMNS[round_ % args.size]}1")
        time.sleep(args.ponder)
        ask("time_left w 5 1")
    ask("quit")
    engine.wait(30)
    print(f"{args.size}x{args.size}, {args.ponder:g} s of pondering: the command waited "
          + ", ".join(f"{wait * 1000:.0f}" for wait in waits) + " ms for the ponder search to stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
