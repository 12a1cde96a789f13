"""Whether two net backends (or precisions) give the same search: fixed-visit searches of positions from a match's
game records, each run by every engine, compared with the first engine's.

Every engine sees the identity symmetry (``net.symmetry=fixed``) and the same search seed, so that two engines
whose nets answer alike search alike, visit for visit; the first engine is also loaded twice, which shows that a
search repeats itself exactly. Per engine it prints the mean and largest total-variation distance between its
root visit shares and the first engine's, and how often both choose the same move. Usage::

    python tests/tools/backend_searches.py --model NET --sgf-dir DIR [--games 15] [--visits 200]
        [--engines onnxruntime:fp32,openvino:fp32,openvino:bf16]

Positions: after moves 12, 24 and 36 of the first ``--games`` records in DIR (``miai match --sgf-dir``), read by
miai.go.sgf with the komi they give, under Chinese rules.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from miai.engine.bench.versus import cold_caches
from miai.engine.cli.compose import build_evaluator
from miai.engine.config import Config, set_option
from miai.engine.core.search import Search
from miai.go.sgf import read_sgf_file
from miai.go.state import GameState

CUTS = (12, 24, 36)


def positions(sgf_dir: Path, games: int) -> list[GameState]:
    """The positions after moves ``CUTS`` of the first ``games`` records in ``sgf_dir``, under Chinese rules."""
    found = []
    for path in sorted(sgf_dir.glob("*.sgf"))[:games]:
        game = read_sgf_file(path)
        found += [game.to_state(cut + 1, rules="chinese") for cut in CUTS if len(game.moves) > cut]
    return found


def engine(model: str, backend: str, precision: str) -> tuple[Any, Any]:
    config = Config()
    for key, value in (("net.backend", backend), ("net.precision", precision), ("net.symmetry", "fixed"),
                       ("search.seed", "7")):
        config = set_option(config, key, value)
    return build_evaluator(model, config, progress=False), config.search


def root_shares(evaluator: Any, config: Any, state: GameState, visits: int) -> tuple[dict[int, float], int]:
    """The root's visit share of each move after a fresh ``visits``-visit search, and the move chosen."""
    cold_caches(evaluator)
    search = Search(evaluator, config)
    search.set_root(state.copy())
    snapshot = search.run(None, None, max_visits=visits, max_playouts=0, max_time=0)
    total = sum(m.visits for m in snapshot.moves) or 1
    return {m.move: m.visits / total for m in snapshot.moves}, snapshot.moves[0].move


def distance(a: dict[int, float], b: dict[int, float]) -> float:
    return 0.5 * sum(abs(a.get(move, 0.0) - b.get(move, 0.0)) for move in set(a) | set(b))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="backend_searches.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--sgf-dir", type=Path, required=True)
    parser.add_argument("--games", type=int, default=15)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--engines", default="onnxruntime:fp32,openvino:fp32,openvino:bf16")
    args = parser.parse_args(argv)
    pairs = [tuple(item.split(":")) for item in args.engines.split(",")]
    names = [f"{b} {p}" for b, p in pairs]
    names.insert(1, names[0] + " (again)")
    pairs.insert(1, pairs[0])
    states = positions(args.sgf_dir, args.games)
    results = []
    for backend, precision in pairs:
        evaluator, config = engine(args.model, backend, precision)
        results.append([root_shares(evaluator, config, state, args.visits) for state in states])
    base = results[0]
    print(f"{len(states)} positions, {args.visits} visits, against {names[0]}:")
    for name, found in zip(names[1:], results[1:]):
        gaps = [distance(a[0], b[0]) for a, b in zip(base, found)]
        same = sum(a[1] == b[1] for a, b in zip(base, found)) / len(states)
        print(f"  {name:24s} root visit shares' distance mean {statistics.mean(gaps):.4f} max {max(gaps):.4f}, "
              f"same move {same:.2f}")


if __name__ == "__main__":
    main()
