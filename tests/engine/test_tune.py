"""``miai tune``: the stages pick the fastest setting, the table shows what was tried, the written file is a config
miai reads holding the choice, and bad options get click's one-line errors."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from miai.engine.bench.tune import Setting, batch_elo, chosen, elo_effect, in_flight, tune
from miai.engine.cli.main import main
from miai.engine.config import Config, load_config
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, UniformEvaluator


class _Timed:
    """The uniform evaluator, ``delay`` seconds slower per call: a net whose speed the test sets."""

    def __init__(self, delay: float, max_batch: int = 16) -> None:
        self.delay = delay
        self.max_batch = max_batch
        self.inner = UniformEvaluator(max_batch=max_batch)

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        time.sleep(self.delay)
        return self.inner.evaluate(states)


def test_each_stage_keeps_the_fastest_and_tries_only_the_pairs_given() -> None:
    opened: list[tuple[str | None, str | None, int]] = []

    def open_net(backend: str | None, precision: str | None, threads: int) -> _Timed:
        opened.append((backend, precision, threads))
        return _Timed((0.01 if backend == "openvino" else 0.04) / threads)  # openvino, and two threads, faster

    # Two rounds, of which tune keeps each setting's best: on a busy machine one round may lose the CPU for longer
    # than the differences between the settings (a CI run once ranked onnxruntime first with one round).
    trials = tune(open_net, [("onnxruntime", "fp32"), ("openvino", "bf16")], [1, 2], [4, 16], size=9,
                  seconds=0.15, rounds=2)
    assert {(b, p) for b, p, _ in opened} == {("onnxruntime", "fp32"), ("openvino", "bf16")}
    assert [t.stage for t in trials] == ["backend"] * 2 + ["threads"] * 2 + ["batch"] * 2
    assert trials[0].setting == Setting("openvino", "bf16", 1, 4)  # the backend stage starts at threads 1, batch 4
    winner = chosen(trials)
    # A bigger batch costs the same sleep per call: 4x the leaves a second, worth its 24 more playouts in flight.
    assert winner.setting == Setting("openvino", "bf16", 2, 16)
    assert winner.visits_per_second == max(t.visits_per_second for t in trials if t.stage == "batch")


def test_the_batch_stage_weighs_speed_against_the_leaves_in_flight_as_katago_weighs_threads() -> None:
    # KataGo's benchmark: a doubling of speed gains about 250 Elo, a playout in flight costs about 7 at 800 visits.
    assert elo_effect(2000, 2, 800) - elo_effect(1000, 2, 800) == pytest.approx(250)
    assert elo_effect(1000, 2, 800) - elo_effect(1000, 3, 800) == pytest.approx(7)
    assert elo_effect(1000, 3, 5000) - elo_effect(1000, 2, 5000) == pytest.approx(-2.3, abs=0.1)  # less at more visits
    assert in_flight(4, overlap=True) == 8 and in_flight(4, overlap=False) == 4
    # The bench of g170 b6c96 in fp32 on 9x9 (docs/benchmarks.md, "Leaves in flight"): batches of 4 at 0.83 of 16's
    # speed, 2 at 0.63, overlapped, half-second moves at about 1,000 visits/s: 4 comes first, 16 last.
    speed = {16: 1000.0, 8: 950.0, 4: 830.0, 2: 630.0}
    ranked = sorted(speed, key=lambda b: -batch_elo(b, speed[b], True, 0.5))
    assert ranked[0] == 4 and ranked[-1] == 16
    # A GPU-like net, 4x faster at batch 16 than at 4: the speed is worth its leaves.
    assert batch_elo(16, 4000.0, True, 0.5) > batch_elo(4, 1000.0, True, 0.5)
    # At fixed visits a move the leaves cost what they cost at that many visits, whatever the speed.
    assert batch_elo(4, 1000.0, True, 10.0, move_visits=800) == pytest.approx(elo_effect(1000.0, 8, 800))


def _tune(tmp_path: Path, *args: str) -> tuple[str, Path]:
    out = tmp_path / "tuned.toml"
    done = CliRunner().invoke(main, ["tune", "--model", "uniform", "--size", "9", "--quick", "--seconds", "0.05",
                                     "--batches", "8,2", "-o", str(out), *args])
    assert done.exit_code == 0, done.output
    return done.output, out


def test_tune_prints_the_table_and_writes_a_config_with_the_best_setting(tmp_path: Path) -> None:
    output, out = _tune(tmp_path, "--visits", "300", "--ponder")
    rows = re.findall(r"^batch\s+batch (\d+)\s+([\d,.]+)\s+([\d.]+)\s+([+-]\d+)$", output, re.MULTILINE)
    assert sorted(int(batch) for batch, _, _, _ in rows) == [2, 8]
    assert rows[0][3] == "+0" and int(rows[1][3]) <= 0  # the choice first, the others' Elo against it
    assert max(float(ratio) for _, _, ratio, _ in rows) == 1.0  # speed as a ratio to the fastest
    assert re.search(rf"^chose batch {rows[0][0]} \([\d,.]+ visits/s\); wrote {re.escape(str(out))}$", output,
                     re.MULTILINE)
    config = load_config(out)
    assert config.search.batch_size == int(rows[0][0])
    assert (config.search.max_visits, config.search.max_time) == (300, 0.0)
    assert config.player.ponder and config.gtp.board_size == 9 and config.net.model == "uniform"
    assert config.search.cpuct_exploration == Config().search.cpuct_exploration  # the rest keeps the defaults


def test_time_per_move_is_written(tmp_path: Path) -> None:
    _, out = _tune(tmp_path, "--time", "5")
    config = load_config(out)
    assert (config.search.max_time, config.search.max_visits, config.player.ponder) == (5.0, 0, False)


@pytest.mark.parametrize("args, message", [
    (["--time", "2", "--visits", "100"], "give --time or --visits, not both"),
    (["--batches", "0,8"], "Invalid value for '--batches': batch sizes must be positive"),
    (["--threads", "two"], "Invalid value for '--threads': expected thread counts like 1,8,32"),
    (["-o", "tuned.cfg"], "Invalid value for '--output': tuned.cfg must end in .toml"),
    (["--model", "playouts"], "Invalid value for '--model': random playouts have no net to tune"),
    (["--model", "missing.onnx"], "cannot load model missing.onnx"),
    (["--size", "40"], "Invalid value for '--size'"),
])
def test_bad_options_get_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                                         message: str) -> None:
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["tune", "--quick", *args])
    assert done.exit_code != 0
    errors = [line for line in done.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0], done.output
    assert not (tmp_path / "tuned.toml").exists()


def test_an_existing_output_is_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "tuned.toml"
    out.write_text("[search]\nbatch_size = 3\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["tune", "--model", "uniform", "-o", str(out)])
    assert done.exit_code == 1 and "exists; give --force" in done.output
    assert load_config(out).search.batch_size == 3
    _tune(tmp_path, "--force")
    assert load_config(out).search.batch_size in (2, 8)


@pytest.mark.slow
def test_miai_tune_on_the_default_net_writes_what_gtp_reads(tmp_path: Path) -> None:
    """The real command on the bundled net: the backend stage tries exactly the pairs that pass the precision gate,
    and `miai gtp --config` plays with the file."""
    from miai.engine.cli.compose import DEFAULT_NET_DIR, net_threads
    from miai.nets.bundled import bundled_nets, net_for_size
    from miai.nets.loading import gate_passing_pairs

    out = tmp_path / "tuned.toml"
    done = subprocess.run([sys.executable, "-m", "miai.engine", "tune", "--size", "9", "--quick", "--seconds", "0.2",
                           "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    net = net_for_size(bundled_nets(DEFAULT_NET_DIR), 9)
    assert net is not None
    pairs, _ = gate_passing_pairs(net.path, options={"intra_op_threads": net_threads(Config())})  # kept by the run
    tried = set(re.findall(r"^backend\s+(\w+ \w+),", done.stdout, re.MULTILINE))
    assert tried == ({f"{b} {p}" for b, p in pairs} if len(pairs) > 1 else set())
    config = load_config(out)
    line = re.search(r"^chose (?:(\w+) (\w+), )?threads (\d+), batch (\d+) ", done.stdout, re.MULTILINE)
    assert line is not None, done.stdout
    backend, precision, threads, batch = line.groups()
    assert (config.net.threads, config.search.batch_size) == (int(threads), int(batch))
    assert (config.net.backend, config.net.precision) == (backend, precision)
    played = subprocess.run([sys.executable, "-m", "miai.engine", "gtp", "--config", str(out)],
                            input="kata-get-param batch_size\ngenmove b\nquit\n", capture_output=True, text=True,
                            timeout=120)
    assert played.returncode == 0, played.stderr
    assert played.stdout.startswith(f"= {batch}\n\n= "), played.stdout
