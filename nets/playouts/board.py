"""The playout board: a lean mutable Go board for random playouts (chains with liberty sets, simple ko, no suicide).

It is deliberately separate from ``miai.go.board``/``GameState``: no hashes, no history, no superko, so that a
random move costs a few microseconds. ``PlayoutBoard.draw_move`` is the light playout policy (a uniformly random
legal move that does not fill the mover's own true eye).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from miai.go.coords import PASS, Color
from miai.go.geometry import BORDER, BoardGeometry, board_geometry, flood
from miai.nets.playouts.patterns import pattern_tables, rings

# Plain ints for the hot loops: CPython specialises comparisons and arithmetic on exact ints only (an ``IntEnum``
# stored in a colour list slows every later read of it), and a global is read four times faster than ``Color.X``.
EMPTY, BLACK, WHITE = int(Color.EMPTY), int(Color.BLACK), int(Color.WHITE)


class PlayoutError(ValueError):
    """A position that playouts cannot start from (bad size, stones array or side to move), or a bad option."""


@lru_cache(maxsize=64)
def _move_neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """The padded neighbours of each point in the order the playout board has always visited them: left, right,
    up, down. The order decides which chain absorbs another on a tie and so the order of chain members, which the
    tactical playouts read candidate moves from: a seeded playout stays move-for-move what it was."""
    return tuple((n[1], n[2], n[0], n[3]) if n else () for n in board_geometry(size).neighbours)


class PlayoutBoard:
    """A lean mutable board for random playouts: chains with liberty sets, simple ko, no suicide.

    ``color`` is a padded list (0 empty, 1 black, 2 white, 3 padding); ``head[p]`` is the representative point of
    the chain at ``p``; ``members[r]`` and ``libs[r]`` are the stones and liberties of the chain represented by
    ``r`` (None elsewhere). ``empties`` lists the empty points in no particular order.
    """

    __slots__ = ("geometry", "neighbours", "ring", "color", "head", "members", "libs", "empties", "ko", "captures")

    def __init__(self, size: int) -> None:
        geometry = board_geometry(size)
        self.geometry: BoardGeometry = geometry
        self.neighbours = _move_neighbours(size)
        self.ring = rings(size)  # the eight neighbours of each point, for the 3x3 patterns
        self.color = [BORDER] * geometry.length
        for p in geometry.points:
            self.color[p] = EMPTY
        self.head = [0] * geometry.length
        self.members: list[list[int] | None] = [None] * geometry.length
        self.libs: list[set[int] | None] = [None] * geometry.length
        self.empties = list(geometry.points)
        self.ko = PASS  # the padded point banned by simple ko, or PASS for none
        self.captures = [0, 0, 0]  # stones captured by colour (index 1 black, 2 white)

    @staticmethod
    def from_stones(stones: Sequence[int], size: int) -> PlayoutBoard:
        """A board with the given flat stones, chains and liberties worked out by flood fill.

        Chains without liberties cannot occur in a real game; if present they are left as they are.
        """
        board = PlayoutBoard(size)
        geometry = board.geometry
        color = board.color
        for move, p in enumerate(geometry.points):
            color[p] = stones[move]
        board.empties = [p for p in geometry.points if color[p] == EMPTY]
        for p in geometry.points:
            if color[p] != EMPTY and board.head[p] == 0:  # 0 is padding, so no chain has been assigned yet
                board._flood_chain(p)
        return board

    def _flood_chain(self, start: int) -> None:
        colour = self.color[start]
        stones, libs, stack = [start], set(), [start]
        self.head[start] = start
        while stack:
            p = stack.pop()
            for n in self.neighbours[p]:
                c = self.color[n]
                if c == EMPTY:
                    libs.add(n)
                elif c == colour and self.head[n] != start:
                    self.head[n] = start
                    stones.append(n)
                    stack.append(n)
        self.members[start] = stones
        self.libs[start] = libs

    def copy(self) -> PlayoutBoard:
        """An independent copy (the chain lists and sets are copied, not shared)."""
        other = PlayoutBoard.__new__(PlayoutBoard)
        other.geometry = self.geometry
        other.neighbours = self.neighbours
        other.ring = self.ring
        other.color = self.color[:]
        other.head = self.head[:]
        members = self.members[:]
        libs = self.libs[:]
        for r, stones in enumerate(members):
            if stones is not None:
                members[r] = stones[:]
                libs[r] = set(libs[r])  # type: ignore[arg-type]  # r heads a chain: a set
        other.members = members
        other.libs = libs
        other.empties = self.empties[:]
        other.ko = self.ko
        other.captures = self.captures[:]
        return other

    # -- queries -------------------------------------------------------------------------------------------------

    def liberties(self, p: int) -> int:
        """Number of liberties of the chain at padded point ``p`` (0 for an empty point)."""
        if self.color[p] in (EMPTY, BORDER):
            return 0
        return len(self.libs[self.head[p]])  # type: ignore[arg-type]  # a stone's head has a set

    def is_legal(self, p: int, color: int) -> bool:
        """True if ``color`` may play at padded point ``p``: empty, not the ko point, and not suicide."""
        if self.color[p] != EMPTY or p == self.ko:
            return False
        opponent = 3 - color
        libs: list[set[int]] = self.libs  # type: ignore[assignment]  # read at chain heads only
        for n in self.neighbours[p]:
            c = self.color[n]
            if c == EMPTY:
                return True
            if c == color and len(libs[self.head[n]]) > 1:
                return True
            if c == opponent and len(libs[self.head[n]]) == 1:
                return True
        return False

    def is_true_eye(self, p: int, color: int) -> bool:
        """True if empty point ``p`` is a true eye of ``color`` (the playout policy never fills those).

        The usual test of Monte-Carlo Go programs: every neighbour is ``color`` or the edge, and the opponent holds
        at most one diagonal point, or none when ``p`` is on the edge. Being local it can err both ways (an
        opponent diagonal stone that is itself capturable still spoils the eye; an eye whose surrounding stones are
        in atari still counts), which is the accepted trade-off for a playout policy.
        """
        color_at = self.color
        if color_at[p] != EMPTY:
            return False
        for n in self.neighbours[p]:
            if color_at[n] != color and color_at[n] != BORDER:
                return False
        opponent, off_board = 3 - color, 0
        bad = 0
        for d in self.geometry.diagonals[p]:
            c = color_at[d]
            if c == opponent:
                bad += 1
            elif c == BORDER:
                off_board = 1
        return bad + off_board < 2

    # -- moves ---------------------------------------------------------------------------------------------------

    def play(self, p: int, color: int) -> None:
        """Play a legal move at padded point ``p`` (the caller checked legality), or pass with ``p = PASS``."""
        if p == PASS:
            self.ko = PASS
            return
        self.empties.remove(p)
        self.place(p, color)

    def place(self, p: int, color: int) -> None:
        """Put a stone on ``p``, a point :meth:`draw_move` returned (so already off ``empties``): merge chains,
        capture, set the ko point. :meth:`play` is the general entry point; this one skips the list removal."""
        color_at, head = self.color, self.head
        members: list[list[int]] = self.members  # type: ignore[assignment]  # read at chain heads only
        libs: list[set[int]] = self.libs  # type: ignore[assignment]  # read at chain heads only
        neighbours = self.neighbours[p]
        color_at[p] = color
        opponent = 3 - color
        # One pass over the neighbours: note liberties and friendly chains, and take the liberty from the
        # opponent chains (those left without any are removed once the new chain exists, so it gains their points).
        own_libs: set[int] = set()
        joined: list[int] = []
        dead: list[int] = []
        for n in neighbours:
            c = color_at[n]
            if c == EMPTY:
                own_libs.add(n)
            elif c == color:
                r = head[n]
                if r not in joined:
                    joined.append(r)
            elif c == opponent:
                chain_libs = libs[head[n]]
                chain_libs.discard(p)
                if not chain_libs:
                    dead.append(n)
        # Join the stone to the friendly chains; relabel the smaller chains into the largest.
        if not joined:
            root = p
            members[p], libs[p] = [p], own_libs
        else:
            root = joined[0]
            if len(joined) > 1:
                root = max(joined, key=lambda r: len(members[r]))
                base, base_libs = members[root], libs[root]
                for r in joined:
                    if r != root:
                        for q in members[r]:
                            head[q] = root
                        base.extend(members[r])
                        base_libs |= libs[r]
                        members[r] = libs[r] = None  # type: ignore[call-overload]  # r stops heading a chain
            members[root].append(p)
            root_libs = libs[root]
            root_libs |= own_libs
            root_libs.discard(p)
        head[p] = root
        if not dead:
            self.ko = PASS
            return
        captured = 0
        for n in dead:
            if color_at[n] == opponent:  # not already removed with another neighbour of the same chain
                captured += self._remove(head[n], color)
        self.captures[color] += captured
        # Simple ko: a single stone that captured a single stone and now has that point as its only liberty.
        if captured == 1 and len(members[root]) == 1 and len(libs[root]) == 1:
            self.ko = dead[0]
        else:
            self.ko = PASS

    def _remove(self, root: int, capturer: int) -> int:
        """Remove the chain ``root``; its points become liberties of the ``capturer`` chains around them."""
        color_at, head, libs, neighbours = self.color, self.head, self.libs, self.neighbours
        stones = self.members[root]
        assert stones is not None
        for q in stones:
            color_at[q] = EMPTY
        for q in stones:
            for n in neighbours[q]:
                if color_at[n] == capturer:
                    libs[head[n]].add(q)  # type: ignore[union-attr]  # a capturer stone's head has a set
        self.empties.extend(stones)
        self.members[root] = self.libs[root] = None
        return len(stones)

    def draw_move(self, color: int, rng_random: Any, banned: frozenset[int] = frozenset(),
                  no_self_atari: bool = False) -> int:
        """A uniformly random legal move for ``color`` that does not fill its own true eye, or PASS if none.

        Draws from ``empties`` without replacement: a rejected point is swapped behind the shrinking candidate
        range, so each empty point is tested at most once. ``rng_random`` is a ``random.Random().random`` method.
        ``banned`` are further points to refuse (the game's ko/superko bans on the first move). With
        ``no_self_atari``, moves that put a chain of two or more stones in atari without capturing are refused too
        (:meth:`bad_self_atari`). The chosen point is removed from ``empties``; :meth:`place` must follow (a PASS
        goes to :meth:`play`).
        """
        empties, color_at, head = self.empties, self.color, self.head
        libs: list[set[int]] = self.libs  # type: ignore[assignment]  # read at chain heads only
        neighbours, diagonals = self.neighbours, self.geometry.diagonals
        ko, opponent = self.ko, 3 - color
        remaining = len(empties)
        # One inlined loop: this is the hot path of the playout, where each helper call costs measurable time.
        while remaining:
            i = int(rng_random() * remaining)
            p = empties[i]
            if p != ko and p not in banned:
                ok, eyeish = False, True
                for n in neighbours[p]:
                    c = color_at[n]
                    if c == EMPTY:  # a liberty of its own: legal, and not an eye
                        ok = True
                        break
                    if c == color:
                        if not ok and len(libs[head[n]]) > 1:
                            ok = True
                    elif c == opponent:
                        eyeish = False
                        if len(libs[head[n]]) == 1:
                            ok = True  # captures
                else:
                    if ok and eyeish:
                        bad = off_board = 0
                        for d in diagonals[p]:
                            c = color_at[d]
                            if c == opponent:
                                bad += 1
                            elif c == BORDER:
                                off_board = 1
                        ok = bad + off_board >= 2  # a true eye is refused, a false one may be filled
                if ok and no_self_atari and self.bad_self_atari(p, color):
                    ok = False
                if ok:
                    last = empties.pop()
                    if i < len(empties):
                        empties[i] = last
                    return p
            remaining -= 1
            empties[i], empties[remaining] = empties[remaining], p
        return PASS

    def bad_self_atari(self, p: int, color: int) -> bool:
        """True when a ``color`` stone at empty ``p`` would join a chain of two or more stones left with one
        liberty, capturing nothing (a single stone may still throw in, as nakade and ko need)."""
        color_at, head, libs = self.color, self.head, self.libs
        opponent = 3 - color
        empty, friends = 0, False
        for n in self.neighbours[p]:
            c = color_at[n]
            if c == EMPTY:
                empty += 1
            elif c == color:
                friends = True
            elif c == opponent and len(libs[head[n]]) == 1:  # type: ignore[arg-type]  # a stone's head has a set
                return False  # a capture gains liberties
        if empty >= 2 or not friends:
            return False
        return self._liberties_after(p, color) <= 1

    def urgent_moves(self, color: int, last: int) -> list[int]:
        """Tactical answers for ``color`` to the opponent's move at ``last`` (the "capture/escape" playout rules).

        - capture: the chain the opponent just played is in atari, take its last liberty;
        - escape: a friendly chain next to ``last`` is in atari: capture an opponent chain in atari that touches
          it, or extend on its last liberty if that leaves it at least two liberties.

        Returns candidate points, possibly repeated, each legal for ``color`` and not one of its own true eyes
        (simple ko included). Empty when ``last`` is PASS or nothing is urgent.
        """
        if last == PASS or self.color[last] != 3 - color:
            return []
        head, color_at = self.head, self.color
        libs: list[set[int]] = self.libs  # type: ignore[assignment]  # read at chain heads only
        candidates: list[int] = []
        last_libs = libs[head[last]]
        if len(last_libs) == 1:
            candidates.extend(last_libs)
        for n in self.neighbours[last]:
            if color_at[n] == color and len(libs[head[n]]) == 1:
                candidates.extend(self._escapes(head[n], color))
        return [p for p in candidates if p != self.ko and self.is_legal(p, color) and not self.is_true_eye(p, color)]

    def pattern_moves(self, color: int, last: int, no_self_atari: bool = False) -> list[int]:
        """MoGo's pattern answers for ``color`` to the move at ``last``: the empty points among its eight neighbours
        whose 3x3 neighbourhood matches a hane, cut or edge pattern (:mod:`miai.nets.playouts.patterns`).

        Only points the playout may play are returned: legal (simple ko included), not an own true eye, and with
        ``no_self_atari`` not a self-atari of two or more stones (:meth:`bad_self_atari`). Empty when ``last`` is
        PASS or nothing matches.
        """
        if last == PASS:
            return []
        color_at, ring, ko = self.color, self.ring, self.ko
        table = pattern_tables()[color]
        found: list[int] = []
        for q in ring[last]:
            if color_at[q] != EMPTY or q == ko:
                continue
            # The neighbourhood code inlined (see patterns.neighbourhood_code): this runs up to eight times a move.
            a, b, c, d, e, f, g, h = ring[q]
            code = (color_at[a] | color_at[b] << 2 | color_at[c] << 4 | color_at[d] << 6 | color_at[e] << 8
                    | color_at[f] << 10 | color_at[g] << 12 | color_at[h] << 14)
            if (table[code] and self.is_legal(q, color) and not self.is_true_eye(q, color)
                    and not (no_self_atari and self.bad_self_atari(q, color))):
                found.append(q)
        return found

    def _escapes(self, root: int, color: int) -> list[int]:
        """Moves that save the friendly chain ``root`` in atari: counter-captures, or a run to two liberties."""
        head, color_at, neighbours = self.head, self.color, self.neighbours
        libs: list[set[int]] = self.libs  # type: ignore[assignment]  # read at chain heads only
        opponent = 3 - color
        moves: list[int] = []
        for q in self.members[root]:  # type: ignore[union-attr]  # root heads a chain: a list
            for n in neighbours[q]:
                if color_at[n] == opponent and len(libs[head[n]]) == 1:
                    moves.extend(libs[head[n]])
        (liberty,) = libs[root]
        if self._liberties_after(liberty, color) >= 2:
            moves.append(liberty)
        return moves

    def _liberties_after(self, p: int, color: int) -> int:
        """Liberties the chain of a ``color`` stone at empty ``p`` would have, not counting captures it makes."""
        head, libs, color_at = self.head, self.libs, self.color
        after: set[int] = set()
        for n in self.neighbours[p]:
            c = color_at[n]
            if c == EMPTY:
                after.add(n)
            elif c == color:
                after |= libs[head[n]]  # type: ignore[arg-type]  # a stone's head has a set
        after.discard(p)
        return len(after)

    # -- scoring -------------------------------------------------------------------------------------------------

    def owners(self) -> list[int]:
        """Final owner of every point in flat order: 1 black, 2 white, 0 neither.

        Stones belong to their colour; an empty region belongs to a colour when it touches only that colour.
        """
        color_at, geometry = self.color, self.geometry
        owner = [color_at[p] for p in geometry.points]
        seen: set[int] = set()
        for move, p in enumerate(geometry.points):
            if owner[move] != EMPTY or p in seen:
                continue
            region, borders = self._empty_region(p)
            seen.update(region)
            if borders == BLACK or borders == WHITE:
                for q in region:
                    owner[geometry.flat[q]] = borders
        return owner

    def _empty_region(self, start: int) -> tuple[list[int], int]:
        """The empty region around ``start`` and the colours it touches as a bit set (1 black, 2 white, 3 both)."""
        color_at = self.color
        region, border = flood(color_at, self.neighbours, start)
        touches = 0
        for n in border:
            c = color_at[n]
            if c != BORDER:
                touches |= c
        return region, touches
