"""`miai bench --versus`: the KataGo config, the GTP conversation and the table, against a fake KataGo (and the
real one from ../shared/peers when it runs here)."""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from miai.engine.bench.harness import BenchResult
from miai.engine.bench.versus import VersusError, VersusSetup, katago_config, race, versus_positions, versus_rows
from miai.engine.cli.main import main
from miai.engine.config import SearchConfig
from miai.go.coords import to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import UniformEvaluator
from tests.nets.synthetic_models import Spec, write_model

FAKE = Path(__file__).with_name("fake_katago.py")
ROOT = Path(__file__).resolve().parents[2]
KATAGO = ROOT.parent / "shared" / "peers" / "katago"
B6 = ROOT.parent / "shared" / "nets" / "g170-b6c96-s175395328-d26788732.bin.gz"


def _log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "fake.log"
    monkeypatch.setenv("FAKE_KATAGO_LOG", str(log))
    monkeypatch.setenv("FAKE_KATAGO_SLEEP", "0.02")
    return log


def test_katago_config_sets_threads_buffer_visits_and_no_pondering() -> None:
    text = katago_config(VersusSetup(size=13, visits=321, threads=3))
    keys = dict(line.split(" = ") for line in text.splitlines() if " = " in line)
    assert keys["numSearchThreads"] == "3"
    assert keys["maxBoardSizeForNNBuffer"] == "13"
    assert keys["maxVisits"] == "321"
    assert keys["ponderingEnabled"] == "false"
    assert keys["allowResignation"] == "false"


@pytest.mark.slow
def test_race_plays_the_same_positions_to_katago_and_times_its_genmoves(tmp_path, monkeypatch) -> None:
    log = _log(tmp_path, monkeypatch)
    setup = VersusSetup(size=5, visits=8, threads=2, positions=2)
    katago, miai = race(str(FAKE), "model.bin.gz", UniformEvaluator(), SearchConfig(), setup, repeats=2)
    lines = log.read_text().splitlines()
    assert lines[0] == "ARGV gtp -model model.bin.gz -config " + lines[0].split()[-1]
    assert "numSearchThreads = 2" in lines[1] and "maxBoardSizeForNNBuffer = 5" in lines[1]
    commands = [line[4:].split(" ", 1)[1] for line in lines if line.startswith("CMD ")]
    assert commands[:2] == ["boardsize 5", "komi 7.5"]
    # One warm-up genmove, then each position once per round, after clear_board and its moves in order.
    expected: list[str] = []
    for moves in versus_positions(setup) * 2:
        colors = ["b", "w"] * len(moves)
        expected += ["clear_board", "clear_cache"] + [f"play {c} {to_gtp(m, 5)}" for c, m in zip(colors, moves)]
        expected.append(f"genmove {'b' if len(moves) % 2 == 0 else 'w'}")
    assert commands[2:5] == ["kata-set-param maxVisits 8", "genmove b", "kata-set-param maxVisits 8"]
    assert commands[5:] in (expected, expected + ["quit"])
    assert katago.count == 16 and 0.04 <= katago.seconds < 2.0  # two genmoves of >= 0.02 s each
    assert katago.value == pytest.approx(16 / katago.seconds)
    assert len(katago.details["round_rates"]) == 2
    assert miai.count >= 16 and miai.unit == "visits/s"
    assert len(miai.details["round_ratios"]) == len(miai.details["cpu_ratios"]) == 2


@pytest.mark.slow
def test_every_miai_search_starts_with_an_empty_evaluation_cache(tmp_path, monkeypatch) -> None:
    _log(tmp_path, monkeypatch)
    setup = VersusSetup(size=5, visits=8, threads=1, positions=1)
    misses = []
    for repeats in (1, 2, 3):
        cached = CachedEvaluator(UniformEvaluator(), 1000)
        race(str(FAKE), "m.bin.gz", cached, SearchConfig(), setup, repeats=repeats)
        misses.append(cached.misses)
    # Each further round of the same position costs as many net evaluations as the first (a warm cache: none).
    assert misses[2] - misses[1] == misses[1] - misses[0] >= 8


def test_a_rejected_command_names_the_peer_and_the_command(tmp_path, monkeypatch) -> None:
    _log(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_KATAGO_REJECT", "kata-set-param")
    with pytest.raises(VersusError, match="kata-set-param"):
        race(str(FAKE), "m.bin.gz", UniformEvaluator(), SearchConfig(), VersusSetup(size=5, visits=4, threads=1))


def test_versus_rows_divide_miai_by_katago_and_by_the_best_bare_batch() -> None:
    katago = BenchResult("versus 9x9 8v 2t: katago", 100.0, "visits/s", 1.0, 100)
    miai = BenchResult("versus 9x9 8v 2t: miai", 150.0, "visits/s", 1.0, 150)
    bare = [BenchResult(f"net 9x9: bare session (batch {b})", r, "evals/s", 1.0, 1, {"batch": b})
            for b, r in ((1, 100.0), (8, 300.0), (32, 200.0))]
    rows = versus_rows(katago, miai, bare)
    assert [(r.name, r.value) for r in rows] == [
        ("versus 9x9 8v 2t: miai/katago", 1.5),
        ("net 9x9: best bare net (batch 8)", 300.0),
        ("versus 9x9 8v 2t: miai search/bare net", 0.5),
    ]


def test_the_ratio_is_the_median_of_rounds_each_run_under_the_same_load() -> None:
    """Each round pairs a miai and a KataGo half run back to back; medians of each side taken apart could pair a
    quiet round of one with a loaded round of the other."""
    katago = BenchResult("versus 9x9 8v 2t: katago", 100.0, "visits/s", 1.0, 100)
    miai = BenchResult("versus 9x9 8v 2t: miai", 150.0, "visits/s", 1.0, 150, {"round_ratios": [0.7, 1.4, 0.8]})
    [ratio] = versus_rows(katago, miai, [])
    assert ratio.value == pytest.approx(0.8) and ratio.details["round_ratios"] == [0.7, 1.4, 0.8]
    assert isinstance(ratio.details["cpu"], str)


def test_visits_per_cpu_second_get_their_own_ratio_row() -> None:
    katago = BenchResult("versus 9x9 8v 2t: katago", 100.0, "visits/s", 1.0, 100)
    miai = BenchResult("versus 9x9 8v 2t: miai", 150.0, "visits/s", 1.0, 150,
                       {"round_ratios": [1.5], "cpu_ratios": [0.9, 1.1, 1.0]})
    wall, per_cpu = versus_rows(katago, miai, [])
    assert per_cpu.name == "versus 9x9 8v 2t: miai/katago per CPU second" and per_cpu.value == pytest.approx(1.0)
    assert wall.value == pytest.approx(1.5)
    miai.details["visits_per_cpu_second"] = 60.0
    bare = [BenchResult("net 9x9: bare session (batch 8)", 300.0, "evals/s", 1.0, 1,
                        {"batch": 8, "evals_per_cpu_second": 150.0})]
    share = versus_rows(katago, miai, bare)[-1]
    assert share.name == "versus 9x9 8v 2t: miai search/bare net per CPU second" and share.value == pytest.approx(0.4)


@pytest.mark.slow
def test_with_a_net_the_positions_come_from_its_own_games_at_spread_stages(tmp_path) -> None:
    from miai.nets.evaluator import OnnxEvaluator
    from tests.nets.tiny_nets import build_tiny_net

    net = OnnxEvaluator(str(build_tiny_net(tmp_path / "tiny.onnx")), symmetry_mode="fixed")
    setup = VersusSetup(size=9, visits=8, threads=1, positions=3)
    games = versus_positions(setup, net)
    assert [len(g) for g in games] == [8, 28, 49]  # 10%, 35%, 60% of 81 points
    assert games == versus_positions(setup, net)  # the same seed, the same positions
    assert len({tuple(g[:8]) for g in games}) == 3  # three different games
    for moves in games:
        state = GameState(9, Rules.preset("chinese"), 7.5)
        for move in moves:
            assert state.is_legal(move)
            state.push(move)


@pytest.mark.slow
def test_bench_versus_prints_both_engines_the_bare_net_and_the_ratios(tmp_path, monkeypatch) -> None:
    log = _log(tmp_path, monkeypatch)
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    model = tmp_path / "tiny.bin.gz"
    model.write_bytes(gzip.compress(write_model(Spec(version=8))))
    result = CliRunner().invoke(main, ["bench", "--model", str(model), "--versus", str(FAKE), "--visits", "8",
                                       "--sizes", "5", "--positions", "2", "--batches", "1,2", "--seconds", "0.1",
                                       "--threads", "1"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert list(rows)[:5] == ["versus 5x5 8v 1t: katago", "versus 5x5 8v 1t: miai", "net 5x5: bare session (batch 1)",
                              "net 5x5: bare session (batch 2)", "versus 5x5 8v 1t: miai/katago"]
    best = max(("net 5x5: bare session (batch 1)", "net 5x5: bare session (batch 2)"), key=lambda n: rows[n])
    assert rows[best.replace("bare session", "best bare net")] == rows[best]
    assert rows["versus 5x5 8v 1t: miai/katago"] == pytest.approx(
        rows["versus 5x5 8v 1t: miai"] / rows["versus 5x5 8v 1t: katago"], rel=0.01)
    assert f"-model {model} " in log.read_text()  # the same net file for KataGo


@pytest.mark.parametrize("args, message", [
    (["--model", "x.onnx"], "needs --model MODEL.bin.gz"),
    (["--model", "x.bin.gz", "--batches", "0"], "batch sizes must be positive"),
])
def test_bench_versus_rejects_bad_input_in_one_line(args, message) -> None:
    result = CliRunner().invoke(main, ["bench", "--versus", str(FAKE), *args])
    assert result.exit_code == 2 and message in result.output


def test_bench_versus_names_a_missing_binary(tmp_path) -> None:
    result = CliRunner().invoke(main, ["bench", "--versus", str(tmp_path / "nope"), "--model", "x.bin.gz"])
    assert result.exit_code == 2 and "no executable KataGo at" in result.output


def _katago_runs() -> bool:
    if not KATAGO.is_file() or not B6.is_file():
        return False
    try:
        return subprocess.run([str(KATAGO), "version"], capture_output=True, timeout=30).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _katago_runs(), reason="no runnable KataGo in ../shared/peers (apt-get install libzip4?)")
@pytest.mark.slow
def test_bench_versus_against_the_real_katago() -> None:
    result = CliRunner().invoke(main, ["bench", "--model", str(B6), "--versus", str(KATAGO), "--visits", "16",
                                       "--sizes", "9", "--positions", "1", "--batches", "4", "--seconds", "0.2"])
    assert result.exit_code == 0, result.output
    rows = _rows(result.output)
    assert rows["versus 9x9 16v 2t: katago"] > 0 and rows["versus 9x9 16v 2t: miai/katago"] > 0


def _rows(output: str) -> dict[str, float]:
    """name -> rate of every row of the printed table."""
    found = {}
    table = output[output.index("benchmark "):]  # after the converter's progress on stderr
    for line in table.splitlines()[1:]:
        name, rate, *_ = re.split(r"\s{2,}", line.strip())
        found[name] = float(rate.replace(",", ""))
    return found
