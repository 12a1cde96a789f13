"""``miai bench precision``: the precision gate (miai.nets.precision) on about 2,000 positions of real games.

Positions: 19x19 from a file of real games (``--kifu``, one game a line as ``id<TAB>;B[pd];W[dd]...``); 9x9 and
13x13 (and 19x19 without ``--kifu``) from games the net plays itself with miai's search (``self_play_games``), kept
in the cache directory (``selfplay/``) so that a second run measures the same positions without replaying them.
Each position is evaluated under a random symmetry, at batch 1 and at the search's batch, by every backend and
precision this machine runs, and compared with onnxruntime fp32 at batch 1.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from miai.go.coords import to_gtp
from miai.nets import precision

__all__ = ["self_play_games", "cached_self_play_games", "kifu_games", "format_games", "bench_precision"]

KOMI = {9: 7.0, 13: 7.5, 19: 7.5}


def self_play_games(evaluator: Any, size: int, games: int, visits: int, seed: int,
                    progress: Callable[[str], None] | None = None) -> list[tuple[int, float, list[str]]]:
    """``games`` games of the net against itself with miai's search at ``visits`` visits a move, each move drawn
    from the search's play values (temperature 0.8 for the first ``size`` moves, then 0.2, so that games differ),
    until two passes or 2 * size * size moves."""
    from miai.engine.config import SearchConfig
    from miai.engine.core.search import Search
    from miai.engine.core.snapshot import choose_move
    from miai.go.rules import Rules
    from miai.go.state import GameState

    rng = random.Random(seed)
    out = []
    for number in range(games):
        search = Search(evaluator, SearchConfig(max_visits=visits, seed=rng.randrange(1, 1 << 30)))
        state = GameState(size, Rules.preset("chinese"), KOMI.get(size, 7.5))
        moves: list[str] = []
        while not state.is_over() and len(moves) < 2 * size * size:
            search.set_root(state)
            snapshot = search.run(max_visits=visits, max_playouts=0, max_time=0.0)
            move = choose_move(snapshot, 0.8 if len(moves) < size else 0.2, rng)
            state.push(move)
            moves.append(to_gtp(move, size).lower())
        out.append((size, state.komi, moves))
        if progress is not None:
            progress(f"self-play {size}x{size}: game {number + 1} of {games}, {len(moves)} moves")
    return out


def format_games(games: Sequence[tuple[int, float, Sequence[str]]]) -> str:
    """Games as ``precision.shipped_games`` reads them: "size komi vertex ..." a line."""
    return "".join(f"{size} {komi:g} {' '.join(moves)}\n" for size, komi, moves in games)


def cached_self_play_games(evaluator: Any, net_digest: str, size: int, games: int, visits: int, seed: int,
                           directory: Path, progress: Callable[[str], None] | None = None
                           ) -> list[tuple[int, float, list[str]]]:
    """``self_play_games``, kept in ``directory``/selfplay by net, size, number of games, visits and seed."""
    import miai.nets.precision as gate

    key = hashlib.sha256(f"{net_digest}|{size}|{games}|{visits}|{seed}".encode()).hexdigest()[:20]
    path = directory / "selfplay" / f"{size}x{size}-{key}.txt"
    if path.is_file():
        return gate.parse_games(path.read_text(encoding="utf-8"))
    found = self_play_games(evaluator, size, games, visits, seed, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(format_games(found), encoding="utf-8")
    return found


def kifu_games(kifu: Path, games: int, seed: int) -> list[tuple[int, float, list[str]]]:
    """``games`` 19x19 games of a kifu file (one a line), drawn with ``seed``, each cut before its first move that
    is not legal under miai's rules; games under 20 moves are left out (komi 7.5: the file does not say)."""
    from miai.engine.bench.features import _kifu_moves
    from miai.go.rules import Rules
    from miai.go.state import GameState

    with open(kifu, encoding="utf-8", errors="replace") as handle:
        lines = handle.readlines()
    rng = random.Random(seed)
    out: list[tuple[int, float, list[str]]] = []
    for index in rng.sample(range(len(lines)), len(lines)):
        if len(out) >= games:
            break
        state, kept = GameState(19, Rules.preset("chinese"), 7.5), []
        for move in _kifu_moves(lines[index]):
            try:
                state.push(move)
            except ValueError:
                break
            kept.append(to_gtp(move, 19).lower())
        if len(kept) >= 20:
            out.append((19, 7.5, kept))
    return out


def bench_precision(reference: Any, candidates: dict[str, Any], states: Sequence[Any], batch: int,
                    progress: Callable[[str], None] | None = None,
                    seconds: float = 1.0) -> tuple[list[precision.GateResult], dict[str, float]]:
    """The gate's statistics of every candidate (the reference itself among them: at ``batch`` only), and each
    candidate's bare net evals/s at ``batch`` on the first positions, the candidates taking turns for three rounds of
    ``seconds`` (the best counts: load from other processes only ever slows a round down, and falls on all alike)."""
    from miai.nets.backends import net_feeds, session_rate

    controls = [name for name, evaluator in candidates.items() if evaluator is reference]
    results = precision.run_gate(reference, candidates, states, batch, progress=progress, batched_only=controls)
    rates = {name: 0.0 for name in candidates}
    feeds = net_feeds(states[:batch], reference.info.nn_len or states[0].size)
    for _ in range(3):
        for name, evaluator in candidates.items():
            rates[name] = max(rates[name], session_rate(evaluator.session, feeds, seconds))
    return results, rates
