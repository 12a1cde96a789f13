"""The superko history of a game: which positions (or situations) have been on the board, and which moves would
bring one back.

:class:`SuperkoHistory` counts each position a game has had, keyed by its Zobrist hash (with the side to move under
situational superko), and indexes them by stone counts so that most moves need no look at the history at all: a plain
move adds one stone, a capture removes opponent stones and a suicide own stones, so only earlier positions whose
counts one move can reach can repeat. ``GameState`` keeps one under positional and situational superko, remembers
each position as it is reached and forgets it on undo; taking the button (button rules) starts a fresh one.
"""

from __future__ import annotations

from typing import TypeVar

from miai.go import zobrist
from miai.go.board import NO_POINT, Board

__all__ = ["SuperkoHistory"]

_Key = TypeVar("_Key")


class SuperkoHistory:
    """The positions of one game so far, counted, and indexed by their stone counts."""

    __slots__ = ("_situational", "_suicide", "_counts", "_buckets", "_by_count")

    def __init__(self, situational: bool, suicide: bool) -> None:
        self._situational = situational  # the side to move is part of the key (situational superko)
        self._suicide = suicide  # multi-stone suicide is legal: a suicide can bring back a position too
        self._counts: dict[int, int] = {}  # key -> how many times it was reached
        # (black stones, white stones) -> the keys with those counts, counted.
        self._buckets: dict[tuple[int, int], dict[int, int]] = {}
        # By colour (index 1 Black, 2 White): that colour's stone count -> the other colour's counts seen with it.
        self._by_count: tuple[dict[int, dict[int, int]], ...] = ({}, {}, {})

    def fresh(self) -> SuperkoHistory:
        """An empty history under the same rules."""
        return SuperkoHistory(self._situational, self._suicide)

    def _key(self, board: Board, to_play: int) -> int:
        return board.hash ^ zobrist.TO_PLAY[to_play] if self._situational else board.hash

    def remember(self, board: Board, to_play: int) -> None:
        """Add ``board``'s position (``to_play`` to move) to the history, its stone-count bucket and the indexes."""
        key = self._key(board, to_play)
        counts = self._counts
        counts[key] = counts.get(key, 0) + 1
        black, white = board.count[1], board.count[2]
        bucket = self._buckets.get((black, white))
        if bucket is None:
            self._buckets[(black, white)] = {key: 1}
        else:
            bucket[key] = bucket.get(key, 0) + 1
        by_black, by_white = self._by_count[1], self._by_count[2]
        seen = by_black.get(black)
        if seen is None:
            by_black[black] = {white: 1}
        else:
            seen[white] = seen.get(white, 0) + 1
        seen = by_white.get(white)
        if seen is None:
            by_white[white] = {black: 1}
        else:
            seen[black] = seen.get(black, 0) + 1

    def forget(self, board: Board, to_play: int) -> None:
        """Remove ``board``'s position (``to_play`` to move) from the history (the inverse of :meth:`remember`)."""
        key = self._key(board, to_play)
        _decrement(self._counts, key)
        black, white = board.count[1], board.count[2]
        bucket = self._buckets[(black, white)]
        _decrement(bucket, key)
        if not bucket:
            del self._buckets[(black, white)]
        by_black, by_white = self._by_count[1], self._by_count[2]
        seen = by_black[black]
        _decrement(seen, white)
        if not seen:
            del by_black[black]
        seen = by_white[white]
        _decrement(seen, black)
        if not seen:
            del by_white[white]

    def repeats(self, board: Board, move: int, color: int) -> bool:
        """Would ``color`` playing ``move`` (legal on ``board`` by the basic rules) bring back a position of the
        history?"""
        key = board.hash_after(move, color)
        if self._situational:
            key ^= zobrist.TO_PLAY[3 - color]
        return key in self._counts

    def bans(self, board: Board, c: int) -> tuple[int, ...]:
        """Points where ``c`` (to move on ``board``) would recreate an earlier position (or situation), sorted.

        Stone counts filter the history first; plain moves are then found by inverting the Zobrist key; captures
        and suicides come from the board's atari set, and only when an earlier position has stone counts that a
        capture or a suicide could reach.
        """
        opp = 3 - c
        own, other = board.count[c], board.count[opp]
        extra = zobrist.TO_PLAY[opp] if self._situational else 0
        counts = self._counts
        bucket = self._buckets.get((own + 1, other) if c == 1 else (other, own + 1))
        captures, suicides = self._may_capture_into_history(c, own, other)
        if not bucket and not captures and not suicides:
            return ()  # the common case: no earlier position within one move's reach (no set, no sort)
        banned: set[int] = set()
        if bucket:
            zinv = board.geo.zinv[c]
            base = board.hash ^ extra
            for key in bucket:
                move = zinv.get(key ^ base)
                if move is not None and board.legality(move, c, self._suicide) is None:
                    if board.hash_after(move, c) ^ extra in counts:
                        banned.add(move)
        if captures or suicides:
            buckets = self._buckets
            for move, own_after, other_after in board.capturing_or_suicide_moves(c, captures, suicides):
                if ((own_after, other_after) if c == 1 else (other_after, own_after)) in buckets:
                    if board.hash_after(move, c) ^ extra in counts:
                        banned.add(move)
        if board.ko_point != NO_POINT and board.ko_color == c:
            banned.discard(board.ko_move)
        return tuple(sorted(banned))

    def _may_capture_into_history(self, c: int, own: int, other: int) -> tuple[bool, bool]:
        """Could a capture, or a suicide, by ``c`` reach stone counts seen before?"""
        # min() over the dict's keys runs in C: a generator here cost about 5% of a uniform-evaluator search.
        after_capture = self._by_count[c].get(own + 1)
        captures = min(after_capture) < other if after_capture else False
        suicides = False
        if self._suicide:
            after_suicide = self._by_count[3 - c].get(other)
            suicides = min(after_suicide) < own if after_suicide else False
        return captures, suicides


def _decrement(counts: dict[_Key, int], key: _Key) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]
