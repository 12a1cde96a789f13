"""The README's batch-analysis example: docs/examples/analyze_sgf.py analyses every position of an SGF game."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "analyze_sgf.py"
GAME = "(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese]AB[cc]PL[W];W[ee];B[cg];W[gc];B[tt];W[gg])"


def test_every_turn_of_the_game_is_analysed_and_written(tmp_path: Path) -> None:
    sgf, out = tmp_path / "game.sgf", tmp_path / "game.jsonl"
    sgf.write_text(GAME)
    done = subprocess.run([sys.executable, str(SCRIPT), str(sgf), str(out), "--visits", "16"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["turnNumber"] for r in results] == list(range(6))
    assert all(r["id"] == "game" and r["rootInfo"]["visits"] == 16 for r in results)
    assert [r["rootInfo"]["currentPlayer"] for r in results] == ["W", "B", "W", "B", "W", "B"]
    rows = done.stdout.splitlines()
    assert rows[0].split() == ["turn", "move", "B", "win%", "B", "lead", "best", "lost"]
    assert [row.split()[1:3] for row in rows[1:]] == [["W", "E5"], ["B", "C3"], ["W", "G7"], ["B", "pass"],
                                                      ["W", "G3"]]


def test_an_illegal_game_is_one_clear_line(tmp_path: Path) -> None:
    sgf = tmp_path / "bad.sgf"
    sgf.write_text("(;GM[1]SZ[9];B[ee];W[ee])")
    done = subprocess.run([sys.executable, str(SCRIPT), str(sgf), str(tmp_path / "x.jsonl")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].endswith("Illegal move 1: E5")
