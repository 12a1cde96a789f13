"""Strength of two search settings at equal visits, in-process (``miai bench modes``).

Plays games on 9x9 (Tromp-Taylor, komi 7) between two ``SearchConfig``s that differ by the given ``key=value``
overrides of the search section, sharing one cached evaluator. Games come in pairs with colours swapped after the
same opening (4 moves sampled from the net's policy), end after two passes (or 200 moves), and are scored by area.
The result is A's Elo difference over B with a 95% interval (miai.match.elo), its wins/draws/losses in the details.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from miai.engine.bench.harness import BenchResult
from miai.engine.config import Config, apply_overrides
from miai.engine.core.search import Search
from miai.go.coords import PASS
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.match.elo import estimate_elo
from miai.nets.cache import CachedEvaluator
from miai.nets.loading import load_evaluator

__all__ = ["SIZE", "compare_modes", "search_for"]

SIZE = 9
KOMI = 7.0
MAX_MOVES = 200


def search_for(evaluator: Any, spec: str) -> Search:
    """A search over `evaluator` with the comma-separated search overrides of `spec` (e.g. ``graph=true``) at batch 8.

    Raises:
        miai.engine.config.ConfigError: an unknown key or a bad value.
    """
    overrides = [f"search.{item.strip()}" for item in spec.split(",") if item.strip()]
    config = apply_overrides(Config(), overrides + ["search.batch_size=8"])
    return Search(evaluator, config.search)


def compare_modes(net: str, a: str, b: str, games: int, visits: int, seed: int = 1,
                  progress: Callable[[str], None] | None = None) -> list[BenchResult]:
    """Play `games` games (pairs with colours swapped) of A (`a` overrides) against B; A's Elo over B."""
    evaluator = CachedEvaluator(load_evaluator(net, board_size=SIZE, max_batch=16), 200_000)
    first, second = search_for(evaluator, a), search_for(evaluator, b)
    rng = random.Random(seed)
    wins = draws = losses = 0
    start = time.monotonic()
    for pair in range(games // 2):
        moves = _opening(evaluator, rng)
        for a_is_black in (True, False):
            score = _play(first, second, moves, visits) if a_is_black else _play(second, first, moves, visits)
            a_score = -score if a_is_black else score
            wins, draws, losses = wins + (a_score > 0), draws + (a_score == 0), losses + (a_score < 0)
        if progress is not None:
            progress(f"after {2 * pair + 2} games: A {wins}-{draws}-{losses} ({time.monotonic() - start:.0f}s)")
    estimate = estimate_elo(wins, draws, losses)
    name = f"modes {SIZE}x{SIZE}: A ({a or 'defaults'}) vs B ({b or 'defaults'}) at {visits} visits"
    return [BenchResult(name, estimate.elo, "Elo", time.monotonic() - start, wins + draws + losses,
                        {"wins": wins, "draws": draws, "losses": losses, "low": round(estimate.low, 1),
                         "high": round(estimate.high, 1), "summary": str(estimate)})]


def _opening(evaluator: CachedEvaluator, rng: random.Random, moves: int = 4) -> list[int]:
    """A few moves sampled from the net's policy, shared by both games of a pair."""
    state = GameState(SIZE, Rules.preset("tromp-taylor"), KOMI)
    played = []
    for _ in range(moves):
        policy = evaluator.evaluate([state])[0].policy[:-1].astype(np.float64)
        move = int(rng.choices(range(len(policy)), weights=policy.tolist())[0])
        state.push(move)
        played.append(move)
    return played


def _play(black: Search, white: Search, start: list[int], visits: int) -> float:
    """One game; returns the final score from White's view."""
    state = GameState(SIZE, Rules.preset("tromp-taylor"), KOMI)
    for move in start:
        state.push(move)
    while not state.is_over() and len(state.moves) < MAX_MOVES:
        search = black if int(state.to_play) == 1 else white
        search.set_root(state)
        snapshot = search.run(max_visits=visits)
        state.push(search.best_move(snapshot) if snapshot.moves else PASS)
    return state.tromp_taylor_score()
