"""128-bit Zobrist keys from a fixed seed, and the mixer of the graph hash.

Every key is the BLAKE2b digest of a label such as ``stone/1/3/15`` under a fixed salt, so the tables are identical
on every machine and Python version, and a stone's key does not depend on the board size (the size has a key of its
own, which is the hash of the empty board).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

SEED = b"miai-zobrist-v1"
MASK64 = (1 << 64) - 1
MASK128 = (1 << 128) - 1


def key(label: str) -> int:
    """The 128-bit key for ``label`` (deterministic)."""
    digest = hashlib.blake2b(label.encode(), digest_size=16, key=SEED).digest()
    return int.from_bytes(digest, "little")


@lru_cache(maxsize=None)
def stone_keys(size: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per flat move: keys of an empty point (all 0), a black stone and a white stone, indexed by colour."""
    points = [(m % size, m // size) for m in range(size * size)]
    black = tuple(key(f"stone/1/{x}/{y}") for x, y in points)
    white = tuple(key(f"stone/2/{x}/{y}") for x, y in points)
    return (0,) * (size * size), black, white


@lru_cache(maxsize=None)
def point_keys(kind: str, size: int) -> tuple[int, ...]:
    """Per flat move keys for a marker kind (``ko``, ``ban``)."""
    return tuple(key(f"{kind}/{m % size}/{m // size}") for m in range(size * size))


def size_key(size: int) -> int:
    """The hash of an empty board of this size."""
    return key(f"size/{size}")


TO_PLAY = (0, key("to-play/black"), key("to-play/white"))
PASS_ENDS_GAME = key("pass-ends-game")
GAME_OVER = key("game-over")
# Button Go: the button still on the table, or taken by Black / by White.
BUTTON = (key("button/available"), key("button/black"), key("button/white"))


def passes_key(count: int) -> int:
    """Key for ``count`` consecutive passes (0 has key 0)."""
    return 0 if count == 0 else key(f"passes/{count}")


def komi_key(komi_from_mover: float) -> int:
    """Key for komi seen from the player to move, quantised to 1/256 point."""
    return key(f"komi/{round(komi_from_mover * 256)}")


def rules_key(rules_json: dict[str, object]) -> int:
    """Key for a rule set, from its kata-get-rules JSON object."""
    return key("rules/" + repr(sorted(rules_json.items())))


def splitmix64(x: int) -> int:
    """The splitmix64 finaliser on a 64-bit value."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mix128(value: int) -> int:
    """A non-commutative 128-bit mixer: both halves through splitmix64, crossed so every bit reaches both halves."""
    hi, lo = value >> 64, value & MASK64
    new_hi = splitmix64(lo ^ 0x243F6A8885A308D3)
    new_lo = splitmix64(hi ^ new_hi)
    return (new_hi << 64) | new_lo


def chain_graph_hash(previous: int, state_hash: int) -> int:
    """The graph hash after a chaining move: ``mix(previous) + H`` with wrap-around (KATAGO.md section 1)."""
    return (mix128(previous) + state_hash) & MASK128
