"""Where a search's wall time goes: feature encoding, tree work, batching and decoding, the net.

Usage (from the repository root; py-spy is not a dependency: ``pip install py-spy`` in your venv):

    py-spy record --idle -r 250 -f raw -o prof.txt -- \\
        python tests/tools/profile_search.py run --model NET.bin.gz --size 9 --visits 800 --positions 4
    python tests/tools/profile_search.py summarize prof.txt

    py-spy record -r 300 -f raw -o prof.txt -- \\
        python tests/tools/profile_search.py uniform --size 19 --visits 3000 --repeat 3
    python tests/tools/profile_search.py summarize prof.txt

``run`` searches the positions ``miai bench --versus`` uses, as ``miai gtp`` would (evaluation cache on, the
default search config, ``--threads`` onnxruntime threads). ``uniform`` runs ``miai bench search``'s uniform-evaluator
search (the search's own Python: no planes, no net) and prints its playouts per CPU second; ``--no-handoff`` skips the
search's once-a-step ``time.sleep(0)`` (engine/core/run.py), which on a busy host hands the core to other processes and
shows up in py-spy's samples as time of ``Run.budget``. ``summarize`` sorts the main thread's samples of a py-spy
raw (collapsed-stack) file into parts: a sample belongs to the first part, in the order below, that any frame of its
stack matches. With the search's modules compiled by mypyc (``miai version``: "search modules: compiled"), record
with ``py-spy record --native``: their functions are C frames named ``CPyDef_<module>___<name>``, which the parts
match too, and a sample's leaf is its innermost Python or compiled function (CPython's own calls counted to it).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Sequence

# (part, pattern on one frame "function (path:line)"); the first part any frame matches wins.
PARTS: tuple[tuple[str, str], ...] = (
    ("net: onnxruntime session.run", r"\(.*onnxruntime/.*\)"),
    ("encoding: ladders", r"\(.*go/ladders\.py"),
    ("encoding: area (benson)", r"\(.*go/benson\.py"),
    ("encoding: cache key (input_key)", r"^input_key "),
    ("encoding: other planes", r"\(.*nets/features\.py"),
    ("batching: legal mask", r"^legal_mask "),
    ("batching: decode outputs", r"\(.*nets/(decode|symmetry)\.py|^_decode_row |^_evaluation "),
    ("batching: evaluator, cache, copies", r"\(.*nets/(evaluator|protocol)\.py"),
    ("the step's GIL hand-off (Run.budget's sleep(0))", r"^Run\.budget "),
    ("board: superko history (go/superko.py)", r"\(.*go/superko\.py|^CPyDef_superko___"),
    ("board: play, undo, legal moves (go/board.py)", r"\(.*go/board\.py|^CPyDef_board___"),
    ("board: game state, hashes (go/state.py)", r"\(.*go/(state|zobrist)\.py|^CPyDef_(state|zobrist)___"),
    ("tree: leaves.py (expand, apply)", r"\(.*engine/core/leaves\.py|^CPyDef_leaves___"),
    ("tree: selection.py (PUCT)", r"\(.*engine/core/selection\.py|^CPyDef_selection___"),
    ("tree: graph.py (nodes, table)", r"\(.*engine/core/graph\.py|^CPyDef_graph___"),
    ("tree: search.py, playout.py, expansion.py, backup.py (runs, descent, backup)",
     r"\(.*engine/core/(search|playout|expansion|backup)\.py|^CPyDef_(playout|expansion|backup)___"),
)


def run(argv: Sequence[str]) -> None:
    """Search the benchmark positions (the profiled workload)."""
    import time

    from miai.engine.bench.versus import VersusSetup, _miai_search, versus_positions
    from miai.engine.cli.compose import build_evaluator
    from miai.engine.config import Config, set_option

    parser = argparse.ArgumentParser(prog="profile_search.py run")
    parser.add_argument("--model", required=True)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--visits", type=int, default=800)
    parser.add_argument("--positions", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--set", dest="sets", action="append", default=[], help="KEY=VALUE config override")
    args = parser.parse_args(argv)
    config = set_option(Config(), "net.threads", args.threads)
    for item in args.sets:
        key, value = item.split("=", 1)
        config = set_option(config, key, value)
    evaluator = build_evaluator(args.model, config, progress=False)
    setup = VersusSetup(size=args.size, visits=args.visits, threads=args.threads, positions=args.positions)
    _miai_search(evaluator, config.search, setup, [], 32)  # warm-up, as in the benchmark
    start = time.perf_counter()
    visits = sum(_miai_search(evaluator, config.search, setup, moves, args.visits)[0]
                 for moves in versus_positions(setup))
    elapsed = time.perf_counter() - start
    print(f"{visits} visits in {elapsed:.2f} s: {visits / elapsed:.1f} visits/s", file=sys.stderr)


def uniform(argv: Sequence[str]) -> None:
    """``miai bench search``'s uniform-evaluator search, ``--repeat`` times (the profiled workload)."""
    import time

    from miai.engine.bench.search import _search_rate
    from miai.nets.evaluator import UniformEvaluator

    parser = argparse.ArgumentParser(prog="profile_search.py uniform")
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--visits", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-handoff", action="store_true", help="skip the per-step time.sleep(0)")
    args = parser.parse_args(argv)
    if args.no_handoff:
        time.sleep = lambda seconds: None  # (this process only: nothing else here sleeps)
    rates = [_search_rate("uniform", UniformEvaluator(), args.size, args.visits, 16, False, max_time=0.0)
             .details["per_cpu_second"] for _ in range(args.repeat)]
    print("playouts per CPU second: " + ", ".join(f"{rate:.0f}" for rate in rates), file=sys.stderr)


def summarize(path: str, top: int = 12) -> None:
    """Print each part's share of the main thread's samples, then the busiest leaf functions."""
    parts: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    compiled = [(name, re.compile(pattern)) for name, pattern in PARTS]
    for line in open(path, encoding="utf-8"):
        stack, _, count = line.rstrip().rpartition(" ")
        frames = stack.split(";")
        if not any("profile_search.py" in f for f in frames):
            continue  # other threads (onnxruntime's own are native and not sampled) and start-up
        if not any("_miai_search" in f or "_search_rate" in f for f in frames):
            continue  # imports, net loading, conversion
        n = int(count)
        part = next((name for name, rx in compiled if any(rx.search(f) for f in frames)), "other (rules, python)")
        parts[part] += n
        own = [f for f in frames if ".py:" in f or f.startswith("CPyDef_")] or frames
        leaves[re.sub(r":\d+\)", ")", own[-1])] += n
    total = sum(parts.values())
    print(f"{total} samples of the search")
    for name, n in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"{100 * n / total:5.1f}%  {name}")
    print(f"top {top} leaf frames:")
    for frame, n in leaves.most_common(top):
        print(f"{100 * n / total:5.1f}%  {frame}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        run(sys.argv[2:])
    elif len(sys.argv) >= 2 and sys.argv[1] == "uniform":
        uniform(sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "summarize":
        summarize(sys.argv[2])
    else:
        sys.exit(__doc__)
