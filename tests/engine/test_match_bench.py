"""The benchmark harness (miai.engine.bench.harness) and the quick rules figures: results, random games, table and JSON (no speed assertions)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

from miai.engine.bench.harness import BenchResult, print_table, random_game, write_json
from miai.engine.bench.rules import bench_rules
from miai.go.rules import Rules
from miai.go.state import GameState


def test_random_games_are_legal_reproducible_and_leave_eyes() -> None:
    first = random_game(7, random.Random(5))
    assert first == random_game(7, random.Random(5))
    state = GameState(7, Rules.preset("tromp-taylor"), 7.5)
    for move in first:
        state.push(move)  # raises if the referee disagrees
    assert 10 < len(first) < 3 * 49
    # It stopped because no legal move was left but eye-filling ones: every empty point is such an eye.
    me = state.to_play
    for move in state.legal_moves():
        y, x = divmod(move, 7)
        around = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        assert all(state.color_at(b * 7 + a) == me for a, b in around if 0 <= a < 7 and 0 <= b < 7)


def test_bench_rules_reports_consistent_rates() -> None:
    results = bench_rules(5, seconds=0.1)
    assert [r.name for r in results] == ["rules 5x5: push+pop", "rules 5x5: legal_moves"]
    for r in results:
        assert r.count > 0 and r.seconds >= 0.1
        assert r.value == pytest.approx(r.count / r.seconds)
        assert r.details["size"] == 5


def test_from_count() -> None:
    r = BenchResult.from_count("search 9x9: playouts", 500, 2.0, "playouts/s", visits=500)
    assert (r.value, r.details) == (250.0, {"visits": 500})


def test_table_and_json(tmp_path: Path) -> None:
    results = [BenchResult("a", 1234.5, "moves/s", 1.0, 1234), BenchResult("longer name", 2.0, "evals/s", 3.0, 6)]
    out = io.StringIO()
    print_table(results, out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["benchmark", "rate", "unit", "seconds"]
    assert lines[1].split() == ["a", "1,234.5", "moves/s", "1.00"]
    assert lines[2].split() == ["longer", "name", "2.0", "evals/s", "3.00"]
    path = tmp_path / "bench.json"
    write_json(results, path)
    data = json.loads(path.read_text())
    assert [r["name"] for r in data["results"]] == ["a", "longer name"]
    assert data["machine"]["cpus"] >= 1 and data["machine"]["python"]
