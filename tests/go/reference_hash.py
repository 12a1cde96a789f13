"""Situation and graph hashes recomputed from their definitions (KATAGO.md section 1) on the reference game."""

from __future__ import annotations

from miai.go import zobrist
from miai.go.coords import PASS
from tests.go.reference_board import ReferenceGame


def reference_situation_hash(ref: ReferenceGame, komi: float, passes: int) -> int:
    """H from scratch: stones, side to move, ko point, superko bans, komi from the mover's view, rules, passes."""
    size = ref.size
    h = ref.hash() ^ zobrist.TO_PLAY[ref.to_play]
    h ^= zobrist.komi_key(komi if ref.to_play == 2 else -komi)
    h ^= zobrist.rules_key(ref.rules.to_json())
    h ^= zobrist.passes_key(passes)
    if passes == 1:
        h ^= zobrist.PASS_ENDS_GAME
    elif passes >= 2:
        h ^= zobrist.GAME_OVER
    ko_keys, ban_keys = zobrist.point_keys("ko", size), zobrist.point_keys("ban", size)
    for move in range(size * size):
        reason = ref.legality(move)
        if reason == "ko":
            h ^= ko_keys[move]
        elif reason == "superko":
            h ^= ban_keys[move]
    return h


def replay_hashes(ref: ReferenceGame, moves: list[int], komi: float, rep_bound: int) -> list[tuple[int, int]]:
    """(H, G) after each prefix of ``moves`` (index 0: the start), replaying on ``ref`` from its current state."""
    passes = 0
    h = reference_situation_hash(ref, komi, passes)
    result = [(h, h)]
    g = h
    for move in moves:
        ref.play(move)
        passes = passes + 1 if move == PASS else 0
        h = reference_situation_hash(ref, komi, passes)
        if move != PASS and ref.repetition_bound_exceeded(move, rep_bound):
            g = h
        else:
            g = zobrist.chain_graph_hash(g, h)
        result.append((h, g))
    for _ in moves:
        ref.undo()
    return result
