"""Rules speed (go/): the quick figures of ``miai bench`` and the detailed ones of ``miai bench rules``.

Quick (`bench_rules`, wall time): push (legality checked) + pop of random games, and `legal_moves()` calls.

Detailed (`bench_rules_detailed`, CPU time of this process, so other load on the machine disturbs it less): random
legal games are generated first (not timed); then every game is replayed move by move with ``play_unchecked`` and
unwound with ``pop``, as the search does on its scratch state:

* board play+undo: ``Board.play`` / ``Board.undo`` only (stones, chains, captures, simple ko, position hash);
* state play+pop: the full ``GameState`` path (superko history, situation hash H, graph hash G);
* graph hash: the time of the S+E test and of the chaining mix per move;
* legality: ``GameState.legality`` on every empty point of every 10th position along the games;
* legal_moves(): the full list of legal moves after every move.

With a kifu file (real games, one a line, ``id<TAB>;B[pd];W[dd]...``) the 19x19 figures also come from its first
games, which capture far less than random games.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path

from miai.engine.bench.harness import BenchResult, random_game, time_loop
from miai.go import zobrist
from miai.go.coords import PASS, parse_sgf
from miai.go.rules import Rules
from miai.go.state import GameState

__all__ = ["bench_rules", "bench_rules_detailed", "random_games", "kifu_games"]


def bench_rules(size: int = 9, seconds: float = 2.0, *, seed: int = 0, rules: str = "tromp-taylor") -> list[BenchResult]:
    """Rules speed on `size`x`size`: push+pop of random legal games, and legal_moves() calls, per second.

    Random games are generated first (untimed); then for `seconds` each (two figures), replay them: push every
    move (legality checked) and pop them all back; and list the legal moves in every position of one game.
    """
    rng = random.Random(seed)
    games = [random_game(size, rng, rules) for _ in range(8)]
    push_pop, push_pop_time = time_loop(seconds, lambda: _replay(size, rules, games))
    listing, listing_time = time_loop(seconds, lambda: _list_moves(size, rules, games[0]))
    details = {"size": size, "rules": rules, "games": len(games), "mean_game_length": sum(map(len, games)) / len(games)}
    return [
        BenchResult(f"rules {size}x{size}: push+pop", push_pop / push_pop_time, "moves/s", push_pop_time, push_pop,
                    details),
        BenchResult(f"rules {size}x{size}: legal_moves", listing / listing_time, "calls/s", listing_time, listing,
                    details),
    ]


def _replay(size: int, rules: str, games: Sequence[list[int]]) -> int:
    state = GameState(size, Rules.preset(rules), 7.5)
    done = 0
    for moves in games:
        for move in moves:
            state.push(move)
        for _ in moves:
            state.pop()
        done += len(moves)
    return done


def _list_moves(size: int, rules: str, moves: list[int]) -> int:
    state = GameState(size, Rules.preset(rules), 7.5)
    for move in moves:
        state.legal_moves()
        state.push(move)
    return len(moves)


def bench_rules_detailed(size: int, rules: Rules, games: list[list[int]], repeat: int, label: str) -> list[BenchResult]:
    """The five detailed figures (see the module docstring) for one set of games; `label` names where they came from."""
    prefix = f"rules {size}x{size} {rules.name} {label}"
    details = {"size": size, "rules": rules.name, "games": len(games), "moves": sum(len(g) for g in games)}
    board, board_cpu = _time_board(size, games, repeat)
    state, state_cpu = _time_state(size, rules, games, repeat)
    hashed, test_cpu, mix_cpu = _time_graph_update(size, rules, games)
    checks, checks_cpu = _time_legality(size, rules, games)
    calls, calls_cpu = _time_legal_moves(size, rules, games)
    return [
        BenchResult.from_count(f"{prefix}: board play+undo", board, board_cpu, "moves/cpu-s", **details),
        BenchResult.from_count(f"{prefix}: state play+pop", state, state_cpu, "moves/cpu-s", **details),
        BenchResult(f"{prefix}: graph hash S+E test", 1e6 * test_cpu / hashed, "us/move", test_cpu, hashed, details),
        BenchResult(f"{prefix}: graph hash chaining mix", 1e6 * mix_cpu / hashed, "us/move", mix_cpu, hashed,
                    details),
        BenchResult.from_count(f"{prefix}: legality", checks, checks_cpu, "checks/cpu-s", **details),
        BenchResult.from_count(f"{prefix}: legal_moves()", calls, calls_cpu, "calls/cpu-s", **details),
    ]


def random_games(size: int, rules: Rules, count: int, seed: int) -> list[list[int]]:
    """`count` random legal games to the end (two passes, or 3 * size * size moves) from one seeded generator."""
    rng = random.Random(seed)
    return [_game_to_the_end(size, rules, rng, 3 * size * size) for _ in range(count)]


def _game_to_the_end(size: int, rules: Rules, rng: random.Random, max_moves: int) -> list[int]:
    """A random legal game that avoids filling its own one-point eyes and passes when nothing else is left."""
    state = GameState(size, rules)
    moves: list[int] = []
    board = state.board
    geo = board.geo
    while len(moves) < max_moves and not state.is_over():
        candidates = state.legal_moves()
        rng.shuffle(candidates)
        move = PASS
        for m in candidates:
            p = geo.inner[m]
            if not all(board.color[q] == state.to_play for q in geo.nbrs[p]):
                move = m
                break
        state.play_unchecked(move)
        moves.append(move)
    return moves


def kifu_games(path: str | Path, count: int, rules: Rules) -> list[list[int]]:
    """The first ``count`` games of a kifu file that replay legally under ``rules`` (19x19)."""
    games: list[list[int]] = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            _, _, record = line.rstrip("\n").partition("\t")
            moves = [parse_sgf(token[2:-1], 19) for token in record.split(";") if token[1:2] == "["]
            state = GameState(19, rules)
            try:
                for m in moves:
                    state.push(m)
            except ValueError:
                continue
            games.append(moves)
            if len(games) == count:
                break
    return games


def _time_state(size: int, rules: Rules, games: list[list[int]], repeat: int) -> tuple[int, float]:
    """(moves, CPU seconds) of play_unchecked + pop over the games, `repeat` times."""
    state = GameState(size, rules)
    total = 0
    start = time.process_time()
    for _ in range(repeat):
        for moves in games:
            play, pop = state.play_unchecked, state.pop
            for m in moves:
                play(m)
            for _ in moves:
                pop()
            total += len(moves)
    return total, time.process_time() - start


def _time_board(size: int, games: list[list[int]], repeat: int) -> tuple[int, float]:
    """(moves, CPU seconds) of Board.play + Board.undo alone over the games, `repeat` times."""
    state = GameState(size)
    board = state.board
    total = 0
    start = time.process_time()
    for _ in range(repeat):
        for moves in games:
            records = []
            c = 1
            for m in moves:
                records.append(board.play(m, c) if m != PASS else None)
                c = 3 - c
            for rec in reversed(records):
                if rec is not None:
                    board.undo(rec)
            total += len(moves)
    return total, time.process_time() - start


def _time_graph_update(size: int, rules: Rules, games: list[list[int]]) -> tuple[int, float, float]:
    """(moves, CPU seconds of the S+E test, CPU seconds of the chaining mix), on positions along the games."""
    state = GameState(size, rules)
    board = state.board
    bound = state.rep_bound
    test_time = mix_time = 0.0
    count = 0
    h = state.graph_hash
    for moves in games:
        for m in moves:
            state.play_unchecked(m)
            if m == PASS:
                continue
            t0 = time.process_time()
            board.exceeds_repetition_bound(m, bound)
            t1 = time.process_time()
            h = zobrist.chain_graph_hash(h, state.situation_hash)
            t2 = time.process_time()
            test_time += t1 - t0
            mix_time += t2 - t1
            count += 1
        for _ in moves:
            state.pop()
    return count, test_time, mix_time


def _time_legality(size: int, rules: Rules, games: list[list[int]]) -> tuple[int, float]:
    """(checks, CPU seconds) of legality checks on every empty point, every 10th position of the games."""
    state = GameState(size, rules)
    checks = 0
    elapsed = 0.0
    for moves in games:
        for i, m in enumerate(moves):
            state.play_unchecked(m)
            if i % 10 == 0:
                empties = [p for p in range(size * size) if state.board.color_at(p) == 0]
                t0 = time.process_time()
                for p in empties:
                    state.legality(p)
                elapsed += time.process_time() - t0
                checks += len(empties)
        for _ in moves:
            state.pop()
    return checks, elapsed


def _time_legal_moves(size: int, rules: Rules, games: list[list[int]]) -> tuple[int, float]:
    """(calls, CPU seconds) of ``legal_moves()`` after every move of the games."""
    state = GameState(size, rules)
    calls = 0
    elapsed = 0.0
    for moves in games:
        for m in moves:
            state.play_unchecked(m)
            t0 = time.process_time()
            state.legal_moves()
            elapsed += time.process_time() - t0
            calls += 1
        for _ in moves:
            state.pop()
    return calls, elapsed
