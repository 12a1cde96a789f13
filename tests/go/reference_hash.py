"""Situation and graph hashes recomputed from their definitions (KATAGO.md section 1) on the reference game."""

from __future__ import annotations

from miai.go import zobrist
from miai.go.coords import PASS
from miai.go.rules import KoRule
from tests.go.reference_board import ReferenceGame


def reference_pass_state(ref: ReferenceGame) -> tuple[int, int, bool, bool]:
    """(consecutive game-ending passes, button taker, game over, a pass now would repeat an earlier pass), replayed
    from the move list by KataGo's rules: the first pass under button rules takes the button and counts for
    nothing; under simple ko a pass by the same player with the same stones as an earlier pass ends the game."""
    simple = ref.rules.ko is KoRule.SIMPLE
    passes, taker, over = 0, 0, False
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for colors, _, move, mover in ref.history:
        if move != PASS:
            passes, over = 0, False
        elif ref.rules.has_button and taker == 0:
            passes, taker, seen = 0, mover, set()
        else:
            passes += 1
            key = (mover, tuple(colors))
            over = passes >= 2 or (simple and key in seen)
            if simple:
                seen.add(key)
    return passes, taker, over, simple and (ref.to_play, tuple(ref.colors)) in seen


def reference_situation_hash(ref: ReferenceGame, komi: float) -> int:
    """H from scratch: stones, side to move, ko point, superko bans, komi from the mover's view, rules, passes
    (count, "a pass ends the game", "game over") and the button."""
    size = ref.size
    passes, taker, over, repeat = reference_pass_state(ref)
    h = ref.hash() ^ zobrist.TO_PLAY[ref.to_play]
    h ^= zobrist.komi_key(komi if ref.to_play == 2 else -komi)
    h ^= zobrist.rules_key(ref.rules.to_json())
    h ^= zobrist.passes_key(passes)
    if over:
        h ^= zobrist.GAME_OVER
    elif passes >= 1 or repeat:
        h ^= zobrist.PASS_ENDS_GAME
    if ref.rules.has_button:
        h ^= zobrist.BUTTON[taker]
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
    h = reference_situation_hash(ref, komi)
    result = [(h, h)]
    g = h
    for move in moves:
        ref.play(move)
        h = reference_situation_hash(ref, komi)
        if move != PASS and ref.repetition_bound_exceeded(move, rep_bound):
            g = h
        else:
            g = zobrist.chain_graph_hash(g, h)
        result.append((h, g))
    for _ in moves:
        ref.undo()
    return result
