"""The precision gate: may a backend and precision stand in for onnxruntime's fp32, judged as KataGo judges fp16.

KataGo's ``testgpuerror`` (cpp/command/gputest.cpp, cpp/tests/testnnevalcanary.cpp) evaluates every position of a
few real games, each under a symmetry drawn from the position, once alone and once batched, in fp32 and in the
precision under test, and compares each with fp32's unbatched outputs. Per position:

- winrate: half the change in win - loss, plus the change in no-result;
- lead: the change in the score lead, in points;
- top policy: the change in the probability of the reference's top move;
- policy KL: the reference's policy's Kullback-Leibler divergence from the candidate's;
- ownership: the change at each point of the board (every point of every position is one sample).

Each is summarised by its mean, 90th and 99th percentile and maximum (KataGo's percentiles: the element at
``(n - 1) * q // 100`` of the sorted samples). A candidate passes when the 99th percentile and the maximum are
within KataGo's limits for fp16 against fp32 (``LIMITS``), at batch 1 and at the search's batch alike.

``miai bench precision`` prints the whole table on about 2,000 positions of real games (miai.engine.bench.precision);
``net.backend=auto`` runs ``quick_gate`` on ``GATE_POSITIONS`` positions of the games miai played itself that ship
with it (``gate_games.txt``, made by ``miai bench precision --write-games``); ``choose`` then takes the fastest of the
pairs that pass (miai.nets.loading keeps its answer).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from miai.nets.backends import BackendError, Choice, net_feeds, sample_states, session_rate

if TYPE_CHECKING:
    from miai.go.state import GameState
    from miai.nets.evaluator import Evaluation, OnnxEvaluator

__all__ = ["LIMITS", "STATISTICS", "MEASURES", "GateResult", "errors", "summarise", "judge", "random_symmetries",
           "run_gate", "shipped_games", "parse_games", "states_of_games", "quick_gate", "GATE_POSITIONS",
           "format_table", "MIN_GAIN", "choose"]

# KataGo's fp16 limits (testgpuerror, v1.17): measure -> (99th percentile, maximum). Winrate, top policy and
# ownership are probabilities here (KataGo prints them in percent), lead in points.
LIMITS: dict[str, tuple[float, float]] = {
    "winrate": (0.020, 0.050),
    "lead": (1.0, 3.0),
    "top_policy": (0.025, 0.060),
    "policy_kl": (0.002, 0.004),
    "ownership": (0.035, 0.200),
}
MEASURES = tuple(LIMITS)
STATISTICS = ("mean", "p90", "p99", "max")
# Positions auto's quick gate measures (KataGo's quick test keeps about 30% of its 2,200).
GATE_POSITIONS = 300
# The shipped games: one a line, "size komi vertex vertex ..." (GTP vertices, "pass" for a pass).
GAMES_FILE = "gate_games.txt"


def errors(reference: Sequence[Evaluation], candidate: Sequence[Evaluation]) -> dict[str, np.ndarray]:
    """The samples of every measure over paired evaluations of the same positions (ownership: one per point)."""
    out: dict[str, list[float]] = {m: [] for m in MEASURES if m != "ownership"}
    ownership: list[np.ndarray] = []
    for a, b in zip(reference, candidate, strict=True):
        out["winrate"].append(abs(0.5 * ((a.win - a.loss) - (b.win - b.loss))) + abs(a.no_result - b.no_result))
        out["lead"].append(abs(a.lead - b.lead))
        top = int(np.argmax(a.policy))
        out["top_policy"].append(abs(float(a.policy[top]) - float(b.policy[top])))
        p, q = a.policy.astype(np.float64), b.policy.astype(np.float64)
        seen = p > 1e-30
        out["policy_kl"].append(float(np.sum(p[seen] * (np.log(p[seen]) - np.log(np.maximum(q[seen], 1e-30))))))
        if a.ownership is not None and b.ownership is not None:
            ownership.append(np.abs(a.ownership.astype(np.float64) - b.ownership.astype(np.float64)).ravel())
    samples = {m: np.asarray(v, dtype=np.float64) for m, v in out.items()}
    samples["ownership"] = np.concatenate(ownership) if ownership else np.zeros(0)
    return samples


def summarise(samples: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Mean, 90th and 99th percentile (KataGo's element of the sorted samples) and maximum of every measure."""
    out = {}
    for measure, values in samples.items():
        if not len(values):
            continue
        ordered = np.sort(values)
        last = len(ordered) - 1
        out[measure] = {"mean": float(ordered.mean()), "p90": float(ordered[last * 9 // 10]),
                        "p99": float(ordered[last * 99 // 100]), "max": float(ordered[last])}
    return out


def judge(stats: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """What is outside ``LIMITS``: "measure p99" or "measure max" -> its share of its limit (empty: passed)."""
    out = {}
    for measure, (p99, most) in LIMITS.items():
        found = stats.get(measure)
        if found is None:
            continue
        for statistic, limit in (("p99", p99), ("max", most)):
            if found[statistic] > limit:
                out[f"{measure} {statistic}"] = round(found[statistic] / limit, 2)
    return out


@dataclass(frozen=True)
class GateResult:
    """One candidate at one batch size against the reference: the statistics, and what failed."""

    name: str  # e.g. "openvino bf16, batch 16"
    positions: int
    stats: dict[str, dict[str, float]]

    @property
    def failures(self) -> dict[str, float]:
        return judge(self.stats)

    @property
    def passed(self) -> bool:
        return not self.failures


def random_symmetries(count: int, seed: int) -> list[list[int]]:
    """One of the 8 symmetries per position, drawn from ``seed`` (the same for reference and candidate)."""
    rng = random.Random(seed)
    return [[rng.randrange(8)] for _ in range(count)]


def _evaluate(evaluator: OnnxEvaluator, states: Sequence[GameState], symmetries: Sequence[Sequence[int]],
              batch: int) -> list[Evaluation]:
    """Plain evaluations (no optimism, no passing hacks: KataGo's raw net) in calls of ``batch`` positions."""
    out: list[Evaluation] = []
    for start in range(0, len(states), batch):
        out += evaluator.evaluate_with(states[start:start + batch], symmetries[start:start + batch], 0.0)
    return out


def run_gate(reference: OnnxEvaluator, candidates: Mapping[str, OnnxEvaluator], states: Sequence[GameState],
             batch: int, seed: int = 0, progress: Callable[[str], None] | None = None,
             batched_only: Collection[str] = ()) -> list[GateResult]:
    """Every candidate at batch 1 and at ``batch`` (each evaluator's ``max_batch`` must allow it; those named in
    ``batched_only`` at ``batch`` only, such as the reference itself) against the reference's batch-1 outputs,
    every position under a random symmetry."""
    symmetries = random_symmetries(len(states), seed)
    expected = _evaluate(reference, states, symmetries, 1)
    results = []
    for name, evaluator in candidates.items():
        for size in sorted({batch} if name in batched_only else {1, batch}):
            if progress is not None:
                progress(f"{name}, batch {size}: {len(states)} positions")
            found = _evaluate(evaluator, states, symmetries, size)
            results.append(GateResult(f"{name}, batch {size}", len(states), summarise(errors(expected, found))))
    return results


def shipped_games() -> list[tuple[int, float, list[str]]]:
    """The games shipped for auto's gate: (size, komi, GTP vertices)."""
    return parse_games(resources.files("miai.nets").joinpath(GAMES_FILE).read_text(encoding="utf-8"))


def parse_games(text: str) -> list[tuple[int, float, list[str]]]:
    """Games written one a line as "size komi vertex vertex ..." (lines starting with # are comments)."""
    games = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            size, komi, *moves = line.split()
            games.append((int(size), float(komi), moves))
    return games


def states_of_games(games: Sequence[tuple[int, float, Sequence[str]]], size: int, count: int,
                    seed: int = 0) -> list[GameState]:
    """``count`` positions (or all there are) of the games of ``size``, spread over the games and their moves:
    every position after each move, ``count`` of them drawn without replacement."""
    from miai.go.coords import parse_gtp
    from miai.go.rules import Rules
    from miai.go.state import GameState

    chosen = [(g, ply) for g, (board, _, moves) in enumerate(games) if board == size for ply in range(1, len(moves) + 1)]
    if len(chosen) > count:
        chosen = sorted(random.Random(seed).sample(chosen, count))
    wanted: dict[int, set[int]] = {}
    for g, ply in chosen:
        wanted.setdefault(g, set()).add(ply)
    states = []
    for g, plies in wanted.items():
        _, komi, moves = games[g]
        state = GameState(size, Rules.preset("chinese"), komi)
        for ply, vertex in enumerate(moves[:max(plies)], 1):
            state.push(parse_gtp(vertex, size))
            if ply in plies:
                states.append(state.copy())
    return states


def quick_gate(reference: OnnxEvaluator, candidates: Mapping[str, OnnxEvaluator], size: int, batch: int,
               positions: int = GATE_POSITIONS) -> list[GateResult]:
    """auto's form of the gate: ``positions`` positions of the shipped games of ``size`` (19x19 where none are of
    that size), at batch 1 and ``batch``."""
    games = shipped_games()
    if not any(board == size for board, _, _ in games):
        size = 19
    return run_gate(reference, candidates, states_of_games(games, size, positions), batch)


def format_table(results: Sequence[GateResult]) -> str:
    """The gate as a table: per candidate and measure, mean / p90 / p99 / max, and p99 and max as shares of their
    limits (a share above 1 fails)."""
    lines = [f"{'candidate':<34} {'measure':<10} {'mean':>9} {'p90':>9} {'p99':>9} {'max':>9} "
             f"{'p99/limit':>9} {'max/limit':>9}"]
    for result in results:
        for measure, stats in result.stats.items():
            p99, most = LIMITS[measure]
            lines.append(f"{result.name:<34} {measure:<10} " + " ".join(f"{stats[s]:>9.5f}" for s in STATISTICS)
                         + f" {stats['p99'] / p99:>9.2f} {stats['max'] / most:>9.2f}")
        verdict = "passes" if result.passed else "FAILS: " + ", ".join(f"{k} {v}x" for k, v in result.failures.items())
        lines.append(f"{result.name:<34} {result.positions} positions: {verdict}")
    return "\n".join(lines)


# -- net.backend=auto's choice -----------------------------------------------------------------------------------

# auto keeps onnxruntime fp32 unless another pair is this much faster: on a loaded machine one measurement put OpenVINO
# fp32 at 1.13x onnxruntime and the next at 0.45x (AVX2 CPU, both fp32); bf16 where the CPU has it gains 1.7-2x.
MIN_GAIN = 1.15
# Seconds each passing pair's bare session is timed per round (three rounds): long enough for a steady rate on a
# small net, short enough for a first start.
RATE_SECONDS = 0.5


def choose(pairs: Sequence[tuple[str, str]], rejected: Mapping[str, str], open_pair: Any, size: int | None = None,
           batch: int = 16, seconds: float | None = None, positions: int | None = None) -> Choice:
    """Measure every pair: the precision gate against onnxruntime fp32 (``quick_gate``: KataGo's
    statistics and fp16 limits, on ``positions`` positions of the shipped games of ``size``, default the net's fixed
    board, else 19x19, at batch 1 and ``batch``), then the bare session's evals/s at ``batch`` (three interleaved
    rounds of ``seconds``, default ``RATE_SECONDS``, the best counts: load from other processes only ever slows a
    round down). ``open_pair(backend, precision)`` gives an ``OnnxEvaluator`` of that pair whose ``max_batch`` allows ``batch``."""
    evaluators = {pair: open_pair(*pair) for pair in pairs}
    reference_pair = ("onnxruntime", "fp32")
    reference = (evaluators[reference_pair] if reference_pair in evaluators else open_pair(*reference_pair))
    size = size or reference.info.nn_len or 19
    judged = {" ".join(pair): evaluator for pair, evaluator in evaluators.items() if pair != reference_pair}
    results = quick_gate(reference, judged, size, batch, positions or GATE_POSITIONS)
    out = dict(rejected)
    passed = [pair for pair in pairs if pair == reference_pair]
    for pair in pairs:
        if pair == reference_pair:
            continue
        failures = {f"{k} (batch {r.name.rsplit(' ', 1)[1]})": v for r in results
                    if r.name.startswith(" ".join(pair) + ",") for k, v in r.failures.items()}
        if failures:
            out[" ".join(pair)] = "outside the precision gate: " + ", ".join(
                f"{k} {v}x its limit" for k, v in failures.items())
        else:
            passed.append(pair)
    if not passed:
        raise BackendError("net.backend=auto: no backend and precision passed the precision gate; "
                           + "; ".join(f"{k}: {v}" for k, v in out.items()))
    states = states_of_games(shipped_games(), size, batch) or sample_states(size, batch)
    feeds = net_feeds(states[:batch], reference.info.nn_len or size)
    rates = {pair: 0.0 for pair in passed}
    for _ in range(3):
        for pair in passed:
            rate = session_rate(evaluators[pair].session, feeds, seconds or RATE_SECONDS)
            rates[pair] = max(rates[pair], rate)
    best = max(passed, key=lambda p: rates[p])
    if reference_pair in rates and rates[best] < MIN_GAIN * rates[reference_pair]:
        best = reference_pair
    return Choice(best[0], best[1], {" ".join(p): round(r, 1) for p, r in rates.items()}, out)
