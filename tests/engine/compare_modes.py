"""Strength comparison of two search settings at equal visits (a script, not a test).

    python tests/engine/compare_modes.py --net FILE --a "graph=true" --b "graph=false" --games 40 --visits 64

Plays in-process games on 9x9 (Tromp-Taylor, komi 7) between two ``SearchConfig``s that differ by the given
``key=value`` overrides, sharing one cached evaluator. Games come in pairs with colours swapped after the same
opening (4 moves sampled from the net's policy), end after two passes (or 200 moves), and are scored by area.
Prints A's wins/draws/losses and its Elo difference with a 95% interval (miai.match.elo).
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from miai.engine.config import Config, apply_overrides
from miai.match.elo import estimate_elo
from miai.engine.search import Search
from miai.go.coords import PASS
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import CachedEvaluator
from miai.nets.loading import load_evaluator


def opening(evaluator: CachedEvaluator, size: int, rng: random.Random, moves: int = 4) -> list[int]:
    """A few moves sampled from the net's policy, shared by both games of a pair."""
    state = GameState(size, Rules.preset("tromp-taylor"), 7.0)
    played = []
    for _ in range(moves):
        policy = evaluator.evaluate([state])[0].policy[:-1].astype(np.float64)
        move = int(rng.choices(range(len(policy)), weights=policy)[0])
        state.push(move)
        played.append(move)
    return played


def play(black: Search, white: Search, size: int, start: list[int], visits: int) -> float:
    """One game; returns the final score from White's view."""
    state = GameState(size, Rules.preset("tromp-taylor"), 7.0)
    for move in start:
        state.push(move)
    while not state.is_over() and len(state.moves) < 200:
        search = black if int(state.to_play) == 1 else white
        search.set_root(state)
        snapshot = search.run(max_visits=visits)
        state.push(search.best_move(snapshot) if snapshot.moves else PASS)
    return state.tromp_taylor_score()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--net", required=True)
    parser.add_argument("--a", default="", help="comma-separated search overrides for A, e.g. graph=true")
    parser.add_argument("--b", default="", help="the same for B")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--visits", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    size = 9
    evaluator = CachedEvaluator(load_evaluator(args.net, board_size=size, max_batch=16), 200_000)

    def make(spec: str) -> Search:
        overrides = [f"search.{item.strip()}" for item in spec.split(",") if item.strip()]
        config = apply_overrides(Config(), overrides + ["search.batch_size=8"])
        return Search(evaluator, config.search)

    a, b = make(args.a), make(args.b)
    rng = random.Random(args.seed)
    wins = draws = losses = 0
    start = time.monotonic()
    for pair in range(args.games // 2):
        moves = opening(evaluator, size, rng)
        for a_is_black in (True, False):
            score = play(a, b, size, moves, args.visits) if a_is_black else play(b, a, size, moves, args.visits)
            a_score = -score if a_is_black else score
            wins, draws, losses = wins + (a_score > 0), draws + (a_score == 0), losses + (a_score < 0)
        print(f"after {2 * pair + 2} games: A {wins}-{draws}-{losses} ({time.monotonic() - start:.0f}s)", flush=True)
    estimate = estimate_elo(wins, draws, losses)
    print(f"A ({args.a or 'defaults'}) vs B ({args.b or 'defaults'}) at {args.visits} visits: "
          f"+{wins}={draws}-{losses}, {estimate}")


if __name__ == "__main__":
    main()
