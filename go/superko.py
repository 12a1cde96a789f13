"""The superko history of a game: which positions (or situations) have been on the board, and which moves would
bring one back.

:class:`SuperkoHistory` counts each position a game has had, keyed by its Zobrist hash (with the side to move under
situational superko), and indexes them by stone counts so that most moves need no look at the history at all: a plain
move adds one stone, a capture removes opponent stones and a suicide own stones, so only earlier positions whose
counts one move can reach can repeat. ``GameState`` keeps one under positional and situational superko, remembers
each position as it is reached and forgets it on undo; taking the button (button rules) starts a fresh one.
"""

from __future__ import annotations

from miai.go import zobrist
from miai.go.board import NO_POINT, Board

__all__ = ["SuperkoHistory"]

class SuperkoHistory:
    """The positions of one game so far, counted, and indexed by their stone counts."""

    __slots__ = ("_situational", "_suicide", "_counts", "_buckets", "_least")

    def __init__(self, situational: bool, suicide: bool) -> None:
        self._situational = situational  # the side to move is part of the key (situational superko)
        self._suicide = suicide  # multi-stone suicide is legal: a suicide can bring back a position too
        self._counts: dict[int, int] = {}  # key -> how many times it was reached
        # (black stones, white stones) -> the keys reached with those counts, in the order reached (a key reached
        # twice is listed twice).
        self._buckets: dict[tuple[int, int], list[int]] = {}
        # By colour (index 1 Black, 2 White): that colour's stone count -> the least count of the other colour seen
        # with it, as a stack of running minima (one entry per position remembered, the last one the least of all).
        self._least: tuple[dict[int, list[int]], ...] = ({}, {}, {})

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
            self._buckets[(black, white)] = [key]
        else:
            bucket.append(key)
        # Each colour's stack of running minima, written out twice rather than called: this runs at every move of
        # every playout.
        least = self._least[1]
        stack = least.get(black)
        if stack is None:
            least[black] = [white]
        else:
            top = stack[-1]
            stack.append(white if white < top else top)
        least = self._least[2]
        stack = least.get(white)
        if stack is None:
            least[white] = [black]
        else:
            top = stack[-1]
            stack.append(black if black < top else top)

    def forget(self, board: Board, to_play: int) -> None:
        """Take back the latest :meth:`remember` not yet taken back, whose position is ``board``'s (``to_play`` to
        move): a game's positions are forgotten in the reverse order they were reached (undo), which lets the
        buckets and the count indexes be stacks."""
        key = self._key(board, to_play)
        counts = self._counts
        left = counts[key] - 1
        if left:
            counts[key] = left
        else:
            del counts[key]
        black, white = board.count[1], board.count[2]
        buckets = self._buckets
        bucket = buckets[(black, white)]
        bucket.pop()
        if not bucket:
            del buckets[(black, white)]
        least = self._least[1]
        stack = least[black]
        stack.pop()
        if not stack:
            del least[black]
        least = self._least[2]
        stack = least[white]
        stack.pop()
        if not stack:
            del least[white]

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
        after_capture = self._least[c].get(own + 1)
        captures = after_capture[-1] < other if after_capture else False
        suicides = False
        if self._suicide:
            after_suicide = self._least[3 - c].get(other)
            suicides = after_suicide[-1] < own if after_suicide else False
        return captures, suicides
