"""Search speed benchmark (a script, not a test): playouts/s of the graph search on an empty board.

    python tests/engine/bench_search.py [--net PATH] [--visits N] [--net-visits N] [--repeat K] [--sizes 9,19]

Evaluators: ``uniform`` (miai.nets.evaluator.UniformEvaluator, which lists legal moves in Python), ``free`` (a
constant, net-like concentrated policy costing almost nothing: what remains is the search's own overhead), and with
``--net`` a real net, measured raw (evals/s on batches of positions from the opening) in the same run, with the
ratio search playouts/s / raw evals/s.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np

from miai.engine.config import SearchConfig
from miai.engine.search import Search
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, UniformEvaluator


class FreeEvaluator:
    """A fixed softmax policy over empty points (like a net's: a few moves take most of the mass), even value."""

    max_batch = 64

    def __init__(self, size: int) -> None:
        self.logits = np.random.default_rng(0).normal(size=size * size + 1).astype(np.float32) * 2.5

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        out = []
        for state in states:
            logits = self.logits.copy()
            logits[:-1][state.stones() != 0] = -np.inf
            p = np.exp(logits - logits.max())
            out.append(Evaluation((p / p.sum()).astype(np.float32), 0.5, 0.5, 0.0, 0.0, 5.0, 0.0, None))
        return out


def search_rate(evaluator: object, size: int, visits: int, batch: int, overlap: bool) -> float:
    search = Search(evaluator, SearchConfig(max_visits=visits, batch_size=batch, overlap=overlap, seed=1))
    search.set_root(GameState(size))
    start = time.perf_counter()
    snapshot = search.run()
    return snapshot.playouts / (time.perf_counter() - start)


def raw_rate(evaluator: object, size: int, batch: int, seconds: float = 5.0) -> float:
    rng = random.Random(1)
    states = []
    for _ in range(batch):
        state = GameState(size)
        for _ in range(rng.randrange(12)):
            state.push(rng.choice(state.legal_moves()))
        states.append(state)
    evaluator.evaluate(states)  # type: ignore[attr-defined]  # warm-up
    start, count = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        evaluator.evaluate(states)  # type: ignore[attr-defined]
        count += batch
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", help="a net file for load_evaluator (KataGo .bin.gz or .onnx)")
    parser.add_argument("--visits", type=int, default=3000)
    parser.add_argument("--sizes", default="9,19")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--overlap", action="store_true")
    parser.add_argument("--net-visits", type=int, default=600, help="visits per search with --net")
    parser.add_argument("--repeat", type=int, default=3, help="raw/search measurements with --net")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        for name, evaluator in (("uniform", UniformEvaluator()), ("free", FreeEvaluator(size))):
            rate = search_rate(evaluator, size, args.visits, args.batch, args.overlap)
            print(f"{size}x{size} {name:8s} search {rate:8.0f} playouts/s")
        if args.net:
            from miai.nets.loading import load_evaluator

            net = load_evaluator(args.net, board_size=size, max_batch=args.batch)
            for _ in range(args.repeat):  # interleaved, so that load changes hit both measurements alike
                raw = raw_rate(net, size, args.batch)
                rate = search_rate(net, size, args.net_visits, args.batch, args.overlap)
                print(f"{size}x{size} net      search {rate:8.0f} playouts/s, raw {raw:.0f} evals/s, "
                      f"ratio {rate / raw:.2f}", flush=True)


if __name__ == "__main__":
    main()
