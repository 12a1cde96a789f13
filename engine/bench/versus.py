"""miai against KataGo on the same net, board, visits and thread count, in one run (``miai bench --versus``).

Both engines search the same positions (a few random openings, Chinese rules, komi 7.5) to a fixed number of
visits, with no time limit, and the wall time of each search is summed. Every search starts with empty caches
(KataGo's ``clear_cache``; miai's evaluation cache and ladder memo), so repeated rounds do the same work. KataGo runs as a GTP subprocess with a
config written here: ``numSearchThreads`` = the thread count, ``maxBoardSizeForNNBuffer`` = the board size,
``maxVisits`` = the visits, no pondering, no resignation, no logs. miai runs its own search in this process with
``net.threads`` = the thread count. Each side gets one untimed warm-up search first (KataGo's first net calls
allocate buffers; onnxruntime's too).

The same run measures the bare onnxruntime session on the converted net at several batch sizes: the best of them
is what the net alone can do, and miai's visits/s over it says how much of the net the search keeps busy.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from miai.engine.bench.harness import BenchResult, random_game
from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from miai.go.coords import to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.gtp.client import GtpClientError, GtpEngine
from miai.nets.backends import cpu_flags
from miai.nets.evaluator import CachingEvaluator, OnnxEvaluator

__all__ = ["VersusSetup", "katago_config", "versus_positions", "race", "bench_bare_net", "versus_rows",
           "VersusError"]

KOMI = 7.5
# Seconds a single KataGo search may take before the benchmark gives up on it (a b15 net on 19x19 at 1,600
# visits takes about a minute on two slow cores).
SEARCH_TIMEOUT = 600.0
# KataGo loads and tests its net at start-up; the first command waits for that.
START_TIMEOUT = 300.0
WARMUP_VISITS = 32


class VersusError(RuntimeError):
    """The peer engine could not be run (not found, crashed, rejected a command)."""


@dataclass(frozen=True)
class VersusSetup:
    """One side-by-side measurement: ``positions`` searches of ``visits`` visits on a ``size`` board."""

    size: int
    visits: int
    threads: int
    positions: int = 4
    seed: int = 1


def versus_positions(setup: VersusSetup, net: OnnxEvaluator | None = None) -> list[list[int]]:
    """Move lists of the positions both engines search.

    With ``net``: games the net plays against itself, each move drawn from its policy (the same seed, the same
    games), cut at stages spread from the opening to the late middle game (10% to 60% of the board's points in
    moves): positions like a game's, whose searches cost what a game's do. Without: random openings of ``size``
    to ``2 * size`` plies (scattered stones that no game has; kept for the tests, which need no net).
    """
    rng = random.Random(setup.seed)
    size = setup.size
    if net is None:
        return [random_game(size, random.Random(rng.randrange(1 << 30)), "chinese",
                            max_moves=rng.randrange(size, 2 * size + 1)) for _ in range(setup.positions)]
    last = max(1, setup.positions - 1)
    stages = [round(size * size * (0.1 + 0.5 * i / last)) for i in range(setup.positions)]
    return [_net_game(net, size, plies, np.random.default_rng(rng.randrange(1 << 30))) for plies in stages]


def _net_game(net: OnnxEvaluator, size: int, plies: int, rng: np.random.Generator) -> list[int]:
    """``plies`` moves of the net against itself, each drawn from its policy (passes left out)."""
    state = GameState(size, Rules.preset("chinese"), KOMI)
    moves: list[int] = []
    for _ in range(plies):
        policy = net.evaluate_with([state], [[0]], 0.0)[0].policy[:-1].astype(np.float64)
        if policy.sum() <= 0:
            break
        move = int(rng.choice(len(policy), p=policy / policy.sum()))
        state.push(move)
        moves.append(move)
    return moves


def katago_config(setup: VersusSetup) -> str:
    """KataGo GTP config text for ``setup`` (keys as in KataGo v1.17's gtp_example.cfg)."""
    return "\n".join([
        "logAllGTPCommunication = false",
        "logSearchInfo = false",
        "logToStderr = false",
        "rules = chinese",
        "allowResignation = false",
        "resignThreshold = -0.99",  # required even when resigning is off
        "resignConsecTurns = 3",
        "ponderingEnabled = false",
        f"maxVisits = {setup.visits}",
        f"numSearchThreads = {setup.threads}",
        f"maxBoardSizeForNNBuffer = {setup.size}",
        "",
    ])


def race(binary: str, model: str, evaluator: Any, config: SearchConfig, setup: VersusSetup,
         repeats: int = 1, net: OnnxEvaluator | None = None) -> tuple[BenchResult, BenchResult]:
    """(KataGo's, miai's) visits/s on the positions of ``setup``, rounds interleaved, median of ``repeats`` rounds.

    Interleaving (miai, KataGo, miai, KataGo, ...) spreads the load of other processes over both sides on a
    shared machine. KataGo's visits are its ``maxVisits``; its time is the summed wall time of ``genmove``.
    miai's result carries ``round_ratios`` (miai's rate over KataGo's, round by round), whose median is the
    figure ``versus_rows`` reports: a round's two halves ran under the same load. ``net`` plays the positions
    (``versus_positions``).

    Raises:
        VersusError: KataGo cannot be started or fails a command (the message names the command).
    """
    games = versus_positions(setup, net)
    with tempfile.TemporaryDirectory(prefix="miai-versus-") as tmp:
        cfg = Path(tmp) / "katago.cfg"
        cfg.write_text(katago_config(setup), encoding="utf-8")
        try:
            with GtpEngine([binary, "gtp", "-model", model, "-config", str(cfg)], name="katago") as engine:
                _katago_warm_up(engine, setup)
                _miai_search(evaluator, config, setup, [], min(WARMUP_VISITS, setup.visits))
                rounds = [(_miai_round(evaluator, config, setup, games), _katago_round(engine, setup, games))
                          for _ in range(repeats)]
        except GtpClientError as exc:
            raise VersusError(f"peer engine {binary}: {exc}") from exc
    mine = _median_result("miai", setup, [(m.visits, m.seconds) for m, _ in rounds])
    mine.details["round_ratios"] = [round(_ratio(m.visits / m.seconds, k.visits / k.seconds), 3) for m, k in rounds]
    mine.details["cpu_ratios"] = [round(_ratio(m.visits / m.cpu, k.visits / k.cpu), 3) if m.cpu > 0 and k.cpu > 0
                                  else 0.0 for m, k in rounds]
    mine.details["plies"] = [len(g) for g in games]
    middle = sorted(rounds, key=lambda r: r[0].visits / r[0].cpu if r[0].cpu > 0 else 0.0)[(len(rounds) - 1) // 2][0]
    mine.details["visits_per_cpu_second"] = round(middle.visits / middle.cpu, 1) if middle.cpu > 0 else 0.0
    return _median_result("katago", setup, [(k.visits, k.seconds) for _, k in rounds]), mine


class _Round(NamedTuple):
    """One engine's share of a round: visits searched, wall seconds, and CPU seconds of the engine's process."""

    visits: int
    seconds: float
    cpu: float


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) a process has used so far (Linux; 0 where /proc is absent)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15


def _median_result(who: str, setup: VersusSetup, rounds: list[tuple[int, float]]) -> BenchResult:
    """The round with the median rate (the lower middle one for an even count), with every round's rate."""
    ordered = sorted(rounds, key=lambda r: r[0] / r[1] if r[1] > 0 else 0.0)
    count, seconds = ordered[(len(ordered) - 1) // 2]
    rates = [round(c / t, 1) if t > 0 else 0.0 for c, t in rounds]
    return BenchResult.from_count(_name(who, setup), count, seconds, "visits/s", size=setup.size,
                                  visits=setup.visits, threads=setup.threads, positions=setup.positions,
                                  round_rates=rates)


def _katago_warm_up(engine: GtpEngine, setup: VersusSetup) -> None:
    """Board size and komi, then a short untimed search (kata-set-param changes maxVisits for it only)."""
    engine.send(f"boardsize {setup.size}", timeout=START_TIMEOUT)
    engine.send(f"komi {KOMI}")
    engine.send(f"kata-set-param maxVisits {min(WARMUP_VISITS, setup.visits)}")
    engine.send("genmove b", timeout=SEARCH_TIMEOUT)
    engine.send(f"kata-set-param maxVisits {setup.visits}")


def _katago_round(engine: GtpEngine, setup: VersusSetup, games: Sequence[Sequence[int]]) -> _Round:
    """Visits, wall and CPU seconds of one ``genmove`` per position."""
    seconds = cpu = 0.0
    for moves in games:
        engine.send("clear_board")  # also drops KataGo's search tree: no reuse between positions
        engine.send("clear_cache")  # and its net cache: every search starts cold, as miai's do
        color = "b"
        for move in moves:
            engine.send(f"play {color} {to_gtp(move, setup.size)}")
            color = "w" if color == "b" else "b"
        start, cpu_start = time.perf_counter(), _process_cpu(engine.process.pid)
        engine.send(f"genmove {color}", timeout=SEARCH_TIMEOUT)
        seconds += time.perf_counter() - start
        cpu += _process_cpu(engine.process.pid) - cpu_start
    return _Round(setup.visits * len(games), seconds, cpu)


def cold_caches(evaluator: Any) -> None:
    """Forget what ``evaluator``'s evaluation cache (if it has one) and the feature encoder's ladder memo hold, so that
    the next search does the work of a first one."""
    from miai.nets import features

    if isinstance(evaluator, CachingEvaluator):
        evaluator.clear()
    features.clear_ladder_memo()


def _miai_search(evaluator: Any, config: SearchConfig, setup: VersusSetup, moves: Sequence[int],
                 visits: int) -> _Round:
    """Root visits, wall and CPU seconds (this process, the net's threads included) of a fresh search of ``visits``
    visits after ``moves``, with cold caches (:func:`cold_caches`), so repeated rounds measure the same work."""
    cold_caches(evaluator)
    state = GameState(setup.size, Rules.preset("chinese"), KOMI)
    for move in moves:
        state.push(move)
    engine = Search(evaluator, config)
    engine.set_root(state)
    start, cpu_start = time.perf_counter(), time.process_time()
    snapshot = engine.run(None, None, max_visits=visits, max_playouts=0, max_time=0)
    return _Round(snapshot.root.visits, time.perf_counter() - start, time.process_time() - cpu_start)


def _miai_round(evaluator: Any, config: SearchConfig, setup: VersusSetup,
                games: Sequence[Sequence[int]]) -> _Round:
    done = [_miai_search(evaluator, config, setup, moves, setup.visits) for moves in games]
    return _Round(sum(r.visits for r in done), sum(r.seconds for r in done), sum(r.cpu for r in done))


def bench_bare_net(session: Any, size: int, batches: Sequence[int], seconds: float) -> list[BenchResult]:
    """Evals/s of a bare onnxruntime ``session`` run on already encoded inputs, one result per batch size.

    The inputs are real positions' features (random openings), encoded once, so this is the net alone: no
    encoding, no decoding, no cache.
    """
    from miai.nets import features

    shape = session.get_inputs()[0].shape
    nn_len = shape[2] if isinstance(shape[2], int) else size
    rng = random.Random(size)
    states = []
    for _ in range(max(batches)):
        state = GameState(size, Rules.preset("chinese"), KOMI)
        for move in random_game(size, random.Random(rng.randrange(1 << 30)), "chinese", max_moves=size * 2):
            state.push(move)
        states.append(state)
    encoded = [features.encode(s) for s in states]
    spatial = np.stack([features.place(sp, nn_len) for sp, _ in encoded])
    global_ = np.stack([g for _, g in encoded])
    results = []
    for batch in batches:
        feeds = {"input_spatial": spatial[:batch], "input_global": global_[:batch]}
        session.run(None, feeds)  # warm-up: the first run of a shape allocates
        count, start, cpu_start = 0, time.perf_counter(), time.process_time()
        while (elapsed := time.perf_counter() - start) < seconds:
            session.run(None, feeds)
            count += batch
        cpu = time.process_time() - cpu_start
        results.append(BenchResult.from_count(f"net {size}x{size}: bare session (batch {batch})", count, elapsed,
                                              "evals/s", size=size, batch=batch,
                                              evals_per_cpu_second=round(count / cpu, 1) if cpu > 0 else 0.0))
    return results


def versus_rows(katago: BenchResult | None, miai: BenchResult, bare: Sequence[BenchResult]) -> list[BenchResult]:
    """The summary rows: miai over KataGo, the best bare batch, and miai's search over that best."""
    rows = []
    if katago is not None:
        paired = miai.details.get("round_ratios")
        ratios = [float(r) for r in paired] if isinstance(paired, list) and paired else [
            _ratio(miai.value, katago.value)]
        rows.append(BenchResult(miai.name.replace("miai", "miai/katago"), statistics.median(ratios), "ratio",
                                miai.seconds + katago.seconds, miai.count,
                                {"round_ratios": ratios, "cpu": cpu_vector_extensions()}))
        per_cpu = miai.details.get("cpu_ratios")
        if isinstance(per_cpu, list) and per_cpu and all(float(r) > 0 for r in per_cpu):
            # Visits per CPU second: what each engine gets from the cores it uses, steadier than wall time on a
            # loaded machine (it does not count the time an engine waits for a core), blind to idle cores.
            rows.append(BenchResult(miai.name.replace("miai", "miai/katago per CPU second"),
                                    statistics.median(float(r) for r in per_cpu), "ratio",
                                    miai.seconds + katago.seconds, miai.count, {"cpu_ratios": per_cpu}))
    if bare:
        best = max(bare, key=lambda r: r.value)
        rows.append(BenchResult(f"{best.name.split(':')[0]}: best bare net (batch {best.details['batch']})",
                                best.value, "evals/s", best.seconds, best.count, dict(best.details)))
        rows.append(BenchResult(miai.name.replace("miai", "miai search/bare net"), _ratio(miai.value, best.value),
                                "ratio", miai.seconds, miai.count))
        search_cpu = miai.details.get("visits_per_cpu_second")
        bare_cpu = max(float(str(r.details.get("evals_per_cpu_second", 0.0))) for r in bare)
        if isinstance(search_cpu, float) and search_cpu > 0 and bare_cpu > 0:
            # The share of miai's CPU that goes to the net: the rest is the search's Python, encoding, decoding.
            rows.append(BenchResult(miai.name.replace("miai", "miai search/bare net per CPU second"),
                                    search_cpu / bare_cpu, "ratio", miai.seconds, miai.count))
    return rows


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else 0.0


def _name(who: str, setup: VersusSetup) -> str:
    return f"versus {setup.size}x{setup.size} {setup.visits}v {setup.threads}t: {who}"



def cpu_vector_extensions() -> str:
    """The widest vector extensions of this CPU, as its flags say (Linux): onnxruntime and OpenVINO use AVX-512
    where it is there, and KataGo's peer build (AVX2 only) never does, so the ratio depends on it."""
    flags = cpu_flags()
    if not flags:
        return "unknown"
    found = [name for name, flag in (("avx512", "avx512f"), ("bf16", "avx512_bf16"), ("vnni", "avx512_vnni"),
                                     ("amx", "amx_tile")) if flag in flags]
    if found:
        return "+".join(found)
    return "avx2" if "avx2" in flags else "no avx2"
