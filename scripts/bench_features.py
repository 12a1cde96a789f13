"""Benchmark: KataGo input-feature encoding (miai.nets.features.encode) in positions per second.

Usage (from the repository root):
    python scripts/bench_features.py --kifu all.kifu          # 19x19 real games + 9x9 random games
    python scripts/bench_features.py --sizes 19 --positions 300 --mode cold
    python scripts/bench_features.py --profile 19             # cProfile of the 19x19 run
    python scripts/bench_features.py --mode replay --net g170-b6c96-s175395328-d26788732.bin.gz
    python scripts/bench_features.py --split --net g170-b6c96-s175395328-d26788732.bin.gz
    python scripts/bench_features.py --dump f.npz             # save every encoding...
    python scripts/bench_features.py --check f.npz            # ...and compare later runs to it exactly

Positions: on 19x19 with ``--kifu FILE``, mid-game positions of real games (one a line,
``id<TAB>;B[pd];W[dd]...``; a random move number between 20 and 200 of each game; never committed), else random
legal games as on other sizes
(a fixed seed). Two modes:

- ``cold``: every memo of the feature code is cleared before each position, so each encoding reads
  the ladders and area of all three boards (now, 1 and 2 moves ago) from scratch: the worst case;
- ``search``: the position's parent (one move less) is encoded first, untimed, then the position:
  what a search sees, where a leaf's boards 1 and 2 moves ago are its parents' current boards;
- ``replay`` (needs ``--net``): the positions a real search with that net evaluates in
  ``--search-playouts`` playouts (from the position ``miai bench`` starts from), encoded in the same order with
  the memos warm, as the search's evaluator encodes them. The most realistic figure.

positions/s is wall-clock and, in brackets, per CPU second of this process (robust on a busy machine),
each the best of ``--repeat`` passes.

``--split`` (with ``--net``) instead runs a search (batch 16, no eval cache) for ``--split-seconds`` per
size and splits its time: playouts/s, the net's own evaluations/s (onnxruntime's time only, in the same
run), their ratio (the search's goal), and the CPU time ``features.encode`` takes per evaluation.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from pathlib import Path

import numpy as np

from miai.go.coords import PASS, parse_sgf
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features

def kifu_states(kifu: Path, count: int, seed: int) -> list[GameState]:
    """``count`` mid-game 19x19 positions of real games (one per game, random move number)."""
    rng = random.Random(seed)
    states: list[GameState] = []
    with open(kifu, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if len(states) >= count:
                break
            moves = _kifu_moves(line)
            if len(moves) < 40:
                continue
            state = GameState(19, Rules.preset("chinese"), 7.5)
            stop = rng.randint(20, min(200, len(moves) - 1))
            try:
                for move in moves[:stop]:
                    state.push(move)
            except ValueError:
                continue
            states.append(state)
    return states


def _kifu_moves(line: str) -> list[int]:
    _, _, body = line.rstrip("\n").partition("\t")
    moves = []
    for token in body.split(";")[1:]:
        if len(token) < 5 or token[1] != "[":
            break
        try:
            moves.append(parse_sgf(token[2 : token.index("]")], 19))
        except ValueError:
            break
    return moves


def random_states(size: int, count: int, seed: int) -> list[GameState]:
    """``count`` positions of random legal games (uniform moves, no pass before the board fills up)."""
    rng = random.Random(seed)
    states = []
    for _ in range(count):
        state = GameState(size, Rules.preset("chinese"), 7.5)
        length = rng.randint(size * size // 4, size * size)
        for _ in range(length):
            legal = state.legal_moves()
            state.push(rng.choice(legal) if legal else PASS)
            if state.is_over():
                break
        states.append(state)
    return states


def searched_states(size: int, net: Path, playouts: int) -> list[GameState]:
    """Copies of the positions a search with ``net`` sends to the evaluator, in order."""
    from miai.engine.bench.search import _opening
    from miai.engine.config import SearchConfig
    from miai.engine.search import Search
    from miai.nets import load_evaluator

    evaluator = load_evaluator(str(net))
    inner = getattr(evaluator, "inner", evaluator)
    seen: list[GameState] = []
    evaluate = inner.evaluate

    def recording(states: list[GameState]) -> list:
        seen.extend(s.copy() for s in states)
        return evaluate(states)

    inner.evaluate = recording
    search = Search(inner, SearchConfig())
    search.set_root(_opening(size, size, 0))
    search.run(None, None, max_visits=0, max_playouts=playouts)
    return seen


def search_split(size: int, net: Path, seconds: float) -> None:
    """Print how a search's time splits between the net and feature encoding."""
    from miai.engine.bench.search import _opening
    from miai.engine.config import SearchConfig
    from miai.engine.search import Search
    from miai.nets import load_evaluator

    evaluator = load_evaluator(str(net))
    inner = getattr(evaluator, "inner", evaluator)
    spent = {"net": 0.0, "encode": 0.0}
    run_net, encode = inner.session.run, features.encode

    def timed_net(*args: object) -> object:
        start = time.perf_counter()
        try:
            return run_net(*args)
        finally:
            spent["net"] += time.perf_counter() - start

    def timed_encode(state: GameState) -> tuple[np.ndarray, np.ndarray]:
        start = time.thread_time()  # the evaluator encodes in a worker thread
        try:
            return encode(state)
        finally:
            spent["encode"] += time.thread_time() - start

    inner.session.run, features.encode = timed_net, timed_encode
    try:
        search = Search(inner, SearchConfig())
        search.set_root(_opening(size, size, 0))
        snapshot = search.run(None, None, max_visits=0, max_playouts=0, max_time=seconds)
    finally:
        inner.session.run, features.encode = run_net, encode
    evals = search.stats()["net_evals"]
    playouts = snapshot.playouts / snapshot.elapsed
    net_rate = evals / spent["net"]
    print(
        f"{size}x{size}: search {playouts:.0f} playouts/s, net alone {net_rate:.0f} evals/s, "
        f"ratio {playouts / net_rate:.2f}; encode {spent['encode'] / evals * 1e3:.2f} ms CPU per evaluation"
    )


def clear_memos() -> None:
    """Forget every memo the feature code keeps between positions."""
    for name in dir(features):
        obj = getattr(features, name)
        if hasattr(obj, "cache_clear") and name.startswith("_") and not isinstance(obj, type):
            obj.cache_clear()


def run(states: list[GameState], mode: str) -> tuple[float, float, list[tuple[np.ndarray, np.ndarray]]]:
    """(wall seconds, CPU seconds, encodings) of encoding every state once in ``mode``."""
    wall = cpu = 0.0
    outputs = []
    if mode == "replay":
        clear_memos()
        w0, c0 = time.perf_counter(), time.process_time()
        outputs = [features.encode(state) for state in states]
        return time.perf_counter() - w0, time.process_time() - c0, outputs
    for state in states:
        clear_memos()
        if mode == "search" and state.moves:
            move = state.pop()
            features.encode(state)
            state.push(move[1], move[0])
        w0, c0 = time.perf_counter(), time.process_time()
        outputs.append(features.encode(state))
        wall += time.perf_counter() - w0
        cpu += time.process_time() - c0
    return wall, cpu, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[19, 9])
    parser.add_argument("--positions", type=int, default=200, help="positions per size")
    parser.add_argument("--mode", choices=["cold", "search", "both", "replay"], default="both")
    parser.add_argument("--net", type=Path, default=None, help="net for --mode replay")
    parser.add_argument("--search-playouts", type=int, default=1500, help="search recorded for --mode replay")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kifu", type=Path, default=None, help="real games for the 19x19 positions")
    parser.add_argument("--repeat", type=int, default=3, help="passes per mode; the fastest is reported")
    parser.add_argument("--profile", type=int, default=None, metavar="SIZE", help="cProfile the run of this size")
    parser.add_argument("--split", action="store_true", help="split a search's time (needs --net)")
    parser.add_argument("--split-seconds", type=float, default=6.0)
    parser.add_argument("--dump", type=Path, default=None, help="save all encodings to this .npz")
    parser.add_argument("--check", type=Path, default=None, help="compare all encodings to this .npz")
    args = parser.parse_args()

    if args.split:
        if args.net is None:
            parser.error("--split needs --net")
        for size in args.sizes:
            search_split(size, args.net, args.split_seconds)
        return
    modes = ["cold", "search"] if args.mode == "both" else [args.mode]
    saved: dict[str, np.ndarray] = {}
    expected = dict(np.load(args.check)) if args.check else None
    mismatches = 0
    for size in args.sizes:
        t0 = time.perf_counter()
        if args.mode == "replay":
            if args.net is None:
                parser.error("--mode replay needs --net")
            states = searched_states(size, args.net, args.search_playouts)
        elif size == 19 and args.kifu is not None:
            states = kifu_states(args.kifu, args.positions, args.seed)
        else:
            states = random_states(size, args.positions, args.seed)
        made = time.perf_counter() - t0
        print(f"{size}x{size}: {len(states)} positions (made in {made:.1f} s)")
        for mode in modes:
            if args.profile == size:
                profiler = cProfile.Profile()
                profiler.enable()
            runs = [run(states, mode) for _ in range(1 if args.profile == size else args.repeat)]
            wall = min(r[0] for r in runs)
            cpu = min(r[1] for r in runs)
            outputs = runs[0][2]
            if args.profile == size:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
            print(f"  {mode:6s}: {len(states) / wall:8.1f} positions/s ({len(states) / cpu:8.1f} per CPU s)")
            for k, (spatial, global_) in enumerate(outputs):
                key = f"{size}_{k}"
                saved[key + "_s"], saved[key + "_g"] = spatial, global_
                if expected is not None:
                    same = np.array_equal(expected[key + "_s"], spatial) and np.array_equal(expected[key + "_g"], global_)
                    mismatches += not same
    if args.dump:
        np.savez_compressed(args.dump, **saved)
    if expected is not None:
        print(f"check against {args.check}: {mismatches} mismatching encodings")
        raise SystemExit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
