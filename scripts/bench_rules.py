"""Benchmark the rules core: play+undo replay speed and the cost of the graph-hash update.

Random legal games are generated first (not timed); then every game is replayed move by move with
``play_unchecked`` and unwound with ``pop``, as the search does on its scratch state. Reported figures:

* board play+undo: ``Board.play`` / ``Board.undo`` only (stones, chains, captures, simple ko, position hash);
* state play+pop: the full ``GameState`` path (superko history, situation hash H, graph hash G);
* graph-hash update: the time of the S+E test plus the chaining mix per move;
* legality: ``GameState.legality`` on every empty point of positions along the games;
* legal_moves(): the full list of legal moves after every move.

Times are CPU time of this process (time.process_time), so other load on the machine disturbs them less.

With ``--kifu PATH`` (real games, one a line, ``id<TAB>;B[pd];W[dd]...``) the 19x19
figures also come from the first N real games, which capture far less than random games.

Usage: python scripts/bench_rules.py [--games N] [--rules tromp-taylor] [--sizes 19,9] [--seed 1] [--kifu PATH]
"""

from __future__ import annotations

import argparse
import random
import time

from miai.go import zobrist
from miai.go.coords import PASS, parse_sgf
from miai.go.rules import Rules
from miai.go.state import GameState


def random_game(size: int, rules: Rules, rng: random.Random, max_moves: int) -> list[int]:
    """A random legal game (no eye filling by simple heuristic: avoid own single-point eyes) as a move list."""
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


def kifu_games(path: str, count: int, rules: Rules) -> list[list[int]]:
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


def report(size: int, rules: Rules, games: list[list[int]], repeat: int, label: str) -> None:
    """Print the four figures for one set of games."""
    n_moves = sum(len(g) for g in games)
    print(f"{size}x{size} rules={rules.name}: {len(games)} {label}, {n_moves} moves")
    print(f"  board play+undo : {time_board(size, games, repeat):10,.0f} moves/s")
    print(f"  state play+pop  : {time_state(size, rules, games, repeat):10,.0f} moves/s")
    test_us, mix_us = time_graph_update(size, rules, games)
    print(f"  graph hash      : S+E test {test_us:.2f} us/move, chaining mix {mix_us:.2f} us/move")
    print(f"  legality        : {time_legality(size, rules, games):10,.0f} checks/s")
    print(f"  legal_moves()   : {time_legal_moves(size, rules, games):10,.0f} calls/s")


def time_state(size: int, rules: Rules, games: list[list[int]], repeat: int) -> float:
    """Moves per second for play_unchecked + pop over the games."""
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
    return total / (time.process_time() - start)


def time_board(size: int, games: list[list[int]], repeat: int) -> float:
    """Moves per second for Board.play + Board.undo alone."""
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
    return total / (time.process_time() - start)


def time_graph_update(size: int, rules: Rules, games: list[list[int]]) -> tuple[float, float]:
    """Microseconds per move of the S+E test and of the chaining mix (measured on positions along the games)."""
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
    return 1e6 * test_time / count, 1e6 * mix_time / count


def time_legality(size: int, rules: Rules, games: list[list[int]]) -> float:
    """Legality checks per second on every empty point, every 10th position of the games."""
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
    return checks / elapsed


def time_legal_moves(size: int, rules: Rules, games: list[list[int]]) -> float:
    """``legal_moves()`` calls per second, after every move of the games."""
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
    return calls / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rules", default="tromp-taylor")
    parser.add_argument("--sizes", default="19,9")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kifu", help="a kifu file of real 19x19 games to replay as well")
    args = parser.parse_args()
    rules = Rules.preset(args.rules)
    for size in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(args.seed)
        games = [random_game(size, rules, rng, 3 * size * size) for _ in range(args.games)]
        report(size, rules, games, args.repeat, "random games")
    if args.kifu:
        report(19, rules, kifu_games(args.kifu, args.games, rules), args.repeat, "real games")


if __name__ == "__main__":
    main()
