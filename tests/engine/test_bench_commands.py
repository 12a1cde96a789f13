"""Every `miai bench` subcommand runs on a tiny input and writes its results as JSON (no speed assertions)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from miai.engine.cli.main import main
from miai.nets.playouts.compiled import AVAILABLE as compiled_available
from miai.go import compiled as go_compiled
from tests.nets.synthetic_models import Spec, write_model
from tests.nets.tiny_nets import build_tiny_net


@pytest.fixture(scope="module")
def nets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A tiny ONNX net and a tiny KataGo model file."""
    folder = tmp_path_factory.mktemp("nets")
    katago = folder / "tiny.bin.gz"
    katago.write_bytes(gzip.compress(write_model(Spec(version=8))))
    return {"onnx": str(build_tiny_net(folder / "tiny.onnx")), "katago": str(katago)}


def _bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[list[dict[str, object]], str]:
    """Run `miai bench ARGS --json FILE`; the results written and the printed table."""
    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))  # conversions stay in the test's folder
    out = tmp_path / "bench.json"
    done = CliRunner().invoke(main, ["bench", *args, "--json", str(out)])
    assert done.exit_code == 0, done.output
    data = json.loads(out.read_text())
    assert data["machine"]["cpus"] >= 1
    results = data["results"]
    assert results and all(r["value"] >= 0 for r in results)
    for r in results:  # every row is in the table
        assert r["name"] in done.output
    return results, done.output


def _names(results: list[dict[str, object]]) -> list[str]:
    return [str(r["name"]) for r in results]


def test_quick_figures_keep_their_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "--sizes", "5", "--seconds", "0.1")
    assert _names(results) == ["rules 5x5: push+pop", "rules 5x5: legal_moves", "playouts 5x5: random games"]


def test_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "rules", "--games", "2", "--repeat", "1", "--sizes", "5")
    assert [n.split(": ")[1] for n in _names(results)] == [
        "board play+undo", "state play+pop", "graph hash S+E test", "graph hash chaining mix", "legality",
        "legal_moves()"]
    assert all(r["details"]["games"] == 2 for r in results)  # type: ignore[index]


def test_playouts_with_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "playouts", "--seconds", "0.1", "--sizes", "5", "--search", "ucb1")
    assert [r["unit"] for r in results] == ["games/s", "games/cpu-s", "moves/s", "visits/s", "visits/cpu-s"]
    assert all(int(r["count"]) > 0 for r in results)  # type: ignore[call-overload]


def test_playouts_with_patterns_and_interleaved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "playouts", "--seconds", "0.05", "--sizes", "5", "--noselfatari",
                        "--patterns")
    assert _names(results)[0] == "playouts 5x5 noselfatari patterns: playouts"
    results, _ = _bench(tmp_path, monkeypatch, "playouts", "--seconds", "0.05", "--sizes", "5", "--noselfatari",
                        "--interleave", "2")
    board = "compiled" if compiled_available else "Python"  # where the evaluator would play them
    assert _names(results) == [
        f"playouts 5x5 noselfatari ({board}): playouts per CPU second (2 interleaved runs)",
        f"playouts 5x5 noselfatari patterns ({board}): playouts per CPU second (2 interleaved runs)",
        "playouts 5x5: with patterns over without"]
    with_rate, without_rate = results[1]["value"], results[0]["value"]
    assert results[2]["value"] == pytest.approx(with_rate / without_rate)  # type: ignore[operator]


def test_features_dump_then_check_the_same_encodings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = tmp_path / "f.npz"
    results, _ = _bench(tmp_path, monkeypatch, "features", "--sizes", "5", "--positions", "4", "--repeat", "1",
                        "--dump", str(saved))
    assert _names(results)[::2] == ["features 5x5 cold: positions", "features 5x5 search: positions"]
    assert len(np.load(saved).files) == 2 * 4
    _, output = _bench(tmp_path, monkeypatch, "features", "--sizes", "5", "--positions", "4", "--repeat", "1",
                       "--mode", "cold", "--check", str(saved))
    assert "0 mismatching encodings" in output


def test_features_in_threads_give_a_ratio_and_amdahls_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "features", "--sizes", "7", "--positions", "6", "--repeat", "1",
                        "--threads", "1,2", "--batch", "3")
    assert _names(results) == [
        "features 7x7 batch 3, 1 thread: positions", "features 7x7 batch 3, 2 threads: positions",
        "features 7x7 batch 3, 2 threads / 1", "features 7x7 batch 3: nogil kernels' share of one thread",
        *[f"features 7x7 batch 3: Amdahl's bound at {n} threads" for n in (2, 8, 16)]]
    one, two, ratio, share = (float(r["value"]) for r in results[:4])  # type: ignore[arg-type]
    assert ratio == pytest.approx(two / one)
    assert (share > 0.0) == go_compiled.ENABLED and share < 100.0  # numba's kernels are part of every encoding
    bounds = [float(r["value"]) for r in results[4:]]  # type: ignore[arg-type]
    assert 1.0 <= bounds[0] <= bounds[1] <= bounds[2] <= 1.0 / (1.0 - share / 100.0) + 1e-9


@pytest.mark.slow
def test_features_replay_and_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "features", "--sizes", "5", "--mode", "replay", "--net", nets["onnx"],
                        "--search-playouts", "20", "--repeat", "1")
    assert results[0]["details"]["positions"] > 0  # type: ignore[index, operator]
    results, _ = _bench(tmp_path, monkeypatch, "features", "--sizes", "5", "--split", "--net", nets["onnx"],
                        "--split-seconds", "0.2")
    assert [r["unit"] for r in results] == ["playouts/s", "evals/s", "ratio", "ms/eval"]


def test_net(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "net", nets["onnx"], "--sizes", "5", "--batches", "1,2", "--threads",
                        "1", "--seconds", "0.05")
    assert _names(results) == ["features 5x5 batch 1 threads 1", "evaluator 5x5 batch 1 threads 1",
                               "net only 5x5 batch 1 threads 1", "evaluator 5x5 batch 2 threads 1",
                               "net only 5x5 batch 2 threads 1"]


def test_convert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "convert", nets["katago"], "--sizes", "5", "--batches", "2",
                        "--threads", "1", "--seconds", "0.05")
    assert [r["unit"] for r in results] == ["ms", "evals/s", "evals/cpu-s"]
    assert results[0]["details"]["model_version"] == 8  # type: ignore[index]


@pytest.mark.slow
def test_decode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "decode", nets["onnx"], "--sizes", "5")
    assert [r["unit"] for r in results] == ["us/pos", "us/pos", "ratio"]


def test_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "session", nets["katago"], "--size", "5", "--batches", "2",
                        "--variants", "base,fixed", "--rounds", "1", "--seconds", "0.05")
    assert len(results) == 2 * 4 and results[1]["value"] == 1.0  # the baseline over itself


def test_session_fixed_variant_needs_a_katago_file(tmp_path: Path, nets: dict[str, str]) -> None:
    done = CliRunner().invoke(main, ["bench", "session", nets["onnx"], "--variants", "base,fixed"])
    assert done.exit_code != 0
    assert "needs a KataGo model file" in done.output.strip().splitlines()[-1]


def test_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "search", "--sizes", "5", "--visits", "40", "--net", nets["onnx"],
                        "--net-visits", "16", "--repeat", "1", "--raw-seconds", "0.1")
    assert _names(results) == ["search 5x5 uniform: playouts", "search 5x5 free: playouts",
                               "search 5x5 net: raw evals (batch 16)", "search 5x5 net: playouts",
                               "search 5x5 net: playouts/s over raw evals/s"]
    uniform = results[0]
    # Without the time cap every run does the same work, and the CPU-second rate is reported beside the wall-clock one.
    assert uniform["count"] == 40
    assert uniform["details"]["per_cpu_second"] > 0  # type: ignore[index, operator]


def test_modes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nets: dict[str, str]) -> None:
    results, _ = _bench(tmp_path, monkeypatch, "modes", "--net", nets["onnx"], "--a", "batch_size=4", "--games", "2",
                        "--visits", "4")
    details = results[0]["details"]
    assert results[0]["unit"] == "Elo" and results[0]["count"] == 2
    assert details["wins"] + details["draws"] + details["losses"] == 2  # type: ignore[index, operator]


def test_modes_rejects_an_unknown_key(nets: dict[str, str]) -> None:
    done = CliRunner().invoke(main, ["bench", "modes", "--net", nets["onnx"], "--a", "nosuch=1", "--games", "2"])
    assert done.exit_code == 2
    assert "unknown config key 'search.nosuch'" in done.output


def test_compare_on_playouts_measures_the_search_gtp_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--compare` on `--model playouts` times the classic search `miai gtp --model playouts` runs (UCB1-TUNED,
    RAVE, one leaf at a time), each value in turn, not the net's PUCT with its batches."""
    from miai.engine.bench import search as bench_search_module
    from miai.engine.bench.harness import BenchResult
    from miai.engine.config import SearchConfig

    seen: list[tuple[str, str, int, float]] = []
    real = bench_search_module.bench_search

    def spy(evaluator: Any, config: SearchConfig, size: int, seconds: float) -> BenchResult:
        seen.append((config.stale_update, config.selection, config.batch_size, config.rave_equivalence))
        return real(evaluator, config, size, seconds)

    monkeypatch.setattr(bench_search_module, "bench_search", spy)
    results, _ = _bench(tmp_path, monkeypatch, "--model", "playouts", "--sizes", "5", "--seconds", "0.1",
                        "--compare", "search.stale_update=path,ancestors")
    assert seen == [("path", "ucb1-tuned", 1, 1000.0), ("ancestors", "ucb1-tuned", 1, 1000.0)]
    assert _names(results)[-1] == "search 5x5: search.stale_update=ancestors: playouts/s over path's"


def test_compare_on_a_net_option_loads_the_net_once_per_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              nets: dict[str, str]) -> None:
    """`--compare net.threads=1,2` times two copies of the net, each with its own onnxruntime threads (a net
    option is fixed when the net loads), not one net twice."""
    from miai.engine.bench import search as bench_search_module
    from miai.engine.bench.harness import BenchResult
    from miai.engine.config import SearchConfig

    seen: list[int] = []
    real = bench_search_module.bench_search

    def spy(evaluator: Any, config: SearchConfig, size: int, seconds: float) -> BenchResult:
        seen.append(evaluator.config.intra_op_threads)
        return real(evaluator, config, size, seconds)

    monkeypatch.setattr(bench_search_module, "bench_search", spy)
    # onnxruntime named: auto's first measurement is tests/nets/test_backends.py's, not this test's
    results, _ = _bench(tmp_path, monkeypatch, "--model", nets["onnx"], "--sizes", "5", "--seconds", "0.1",
                        "--set", "net.backend=onnxruntime", "--compare", "net.threads=1,2")
    assert seen == [1, 2]
    assert _names(results)[-1] == "search 5x5: net.threads=2: playouts/s over 1's"


def test_precision_prints_the_gate_and_keeps_the_self_play_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 nets: dict[str, str]) -> None:
    """The table (statistics, shares of the limits, verdict, speed ratios) and JSON; the self-play games are played
    once and kept in the cache, and --write-games writes them in the shipped games' form."""
    from miai.nets import precision

    monkeypatch.setenv("MIAI_CACHE_DIR", str(tmp_path / "cache"))
    args = ["bench", "precision", nets["katago"], "--sizes", "7", "--positions", "12", "--games", "1", "--visits",
            "2", "--batch", "4", "--precisions", "fp32", "--seconds", "0.05"]
    done = CliRunner().invoke(main, [*args, "--json", str(tmp_path / "p.json")])
    assert done.exit_code == 0, done.output
    assert "12 positions of 1 self-play games, batch 1 and 4" in done.output
    assert "p99/limit" in done.output and "onnxruntime fp32, batch 4" in done.output
    assert "bare net evals/s at batch 4: onnxruntime fp32" in done.output
    data = json.loads((tmp_path / "p.json").read_text())
    rows = data["sizes"]["7"]["results"]
    assert rows[0]["name"] == "onnxruntime fp32, batch 4" and rows[0]["stats"]["winrate"]["max"] < 1e-5
    [kept] = list((tmp_path / "cache" / "nets" / "selfplay").glob("7x7-*.txt"))
    written = tmp_path / "games.txt"
    again = CliRunner().invoke(main, [*args, "--write-games", str(written)])
    assert again.exit_code == 0, again.output
    games = precision.parse_games(written.read_text())
    assert games == precision.parse_games(kept.read_text()) and games[0][0] == 7 and len(games[0][2]) > 5
