"""A fast mutable Go board: padded 1-D arrays, chains with liberty sets, simple ko, incremental Zobrist hash.

The board knows nothing of turn order or history; ``GameState`` adds those. ``play`` returns a small undo record and
``undo`` reverses it exactly, so the search can replay moves on one scratch board without copying.

Internally a point is an index into the padded array of ``miai.go.geometry`` (``width`` is its stride, ``size + 1``);
public methods take flat moves (``y * size + x``, see ``coords``). Each stone points to its ``Chain`` object, which
holds the stones and the set of liberties. Merging mutates the largest chain in place and keeps the smaller ones
untouched, so undo only truncates the stone list and restores the old liberty set.

Colours are plain ints here (0 empty, 1 black, 2 white) because ``IntEnum`` arithmetic is slow in the hot path.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from miai.go import zobrist
from miai.go.coords import PASS, check_size
from miai.go.errors import IllegalReason, SetupError
from miai.go.geometry import BORDER, board_geometry, flood

NO_POINT = 0  # padded index 0 is a border point, so it never names a real point


def colors_array(colors: list[int]) -> NDArray[np.int8]:
    """A list of colours (0-3) as a writable int8 array: through a bytearray, 4-5x faster than ``np.array`` on a
    19x19 board's 361 (numpy inspects every item of a list; a buffer it takes whole)."""
    return np.frombuffer(bytearray(colors), dtype=np.int8)


class Chain:
    """A connected group of same-coloured stones and its liberties (padded indices)."""

    __slots__ = ("stones", "libs")

    def __init__(self, stones: list[int], libs: set[int]) -> None:
        self.stones = stones
        self.libs = libs


# How a play merged its stone into friendly chains: the chain kept, its liberties and length before, and every
# friendly chain touched (the kept one included).
Merge = tuple[Chain, set[int], int, list[Chain]]


# What ``Board.play`` changed, for ``Board.undo`` and ``Board.unplay_colors`` alone, which unpack it into these
# names: (point, the stone's padded index; colour; enemies, the opponent chains next to it, each of which lost the
# point as a liberty; captured, those it took off, or None; merge, or None when the stone made a chain of its own;
# ko_point and ko_color, the simple-ko ban before the play; old_hash; suicide, whether the stone's own chain was taken
# off; removed, the stones taken off). A plain tuple, opaque outside this module: the board's innermost loop makes
# one per move, and a NamedTuple costs about 2% of a whole search (its creation and unpacking have no fast path in
# CPython 3.11). What a game needs from a play, the prisoners, the board keeps itself (``prisoners``).
PlayRecord = tuple[int, int, list[Chain], "list[Chain] | None", "Merge | None", int, int, int, bool, int]


class Geometry(NamedTuple):
    """The shared padded tables of ``miai.go.geometry`` for one board size, plus the position-hash keys."""

    size: int
    width: int  # the padded stride: (x, y) lives at (y + 1) * width + x + 1
    inner: tuple[int, ...]  # flat move -> padded index
    outer: tuple[int, ...]  # padded index -> flat move (-1 off the board)
    points: tuple[int, ...]  # padded indices of all real points, in flat order
    nbrs: tuple[tuple[int, ...], ...]  # on-board neighbours of each padded index
    diags: tuple[tuple[int, ...], ...]  # the four diagonals of each padded board point (padding included)
    zob: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # [colour][padded] -> key
    zinv: tuple[dict[int, int], dict[int, int], dict[int, int]]  # [colour] key -> flat move


@lru_cache(maxsize=None)
def geometry(size: int) -> Geometry:
    """The lookup tables for ``size`` (cached)."""
    check_size(size)
    shape = board_geometry(size)
    outer = shape.flat
    flat_keys = zobrist.stone_keys(size)

    def padded(c: int) -> tuple[int, ...]:
        return tuple(flat_keys[c][outer[p]] if outer[p] >= 0 else 0 for p in range(shape.length))

    zob = (padded(0), padded(1), padded(2))
    zinv: tuple[dict[int, int], dict[int, int], dict[int, int]] = (
        {}, {k: m for m, k in enumerate(flat_keys[1])}, {k: m for m, k in enumerate(flat_keys[2])})
    return Geometry(size, shape.stride, shape.points, outer, shape.points, shape.on_board, shape.diagonals, zob, zinv)


class Board:
    """Stones, chains, simple ko and the position hash of one board.

    >>> b = Board(9)
    >>> rec = b.play(40, 1)
    >>> b.color_at(40), b.liberty_count(40)
    (1, 4)
    >>> b.undo(rec); b.color_at(40), b.hash == Board(9).hash
    (0, True)
    """

    __slots__ = ("size", "geo", "color", "chain", "ko_point", "ko_color", "hash", "count", "prisoners", "atari")

    def __init__(self, size: int) -> None:
        self.geo = geometry(size)
        self.size = size
        length = len(self.geo.outer)
        self.color: list[int] = [BORDER] * length
        for p in self.geo.points:
            self.color[p] = 0
        self.chain: list[Chain | None] = [None] * length
        self.ko_point = NO_POINT  # padded point the player ko_color may not play now
        self.ko_color = 0
        self.hash = zobrist.size_key(size)
        self.count = [0, 0, 0]  # stones on the board per colour
        # Stones each colour has taken off the board since it was set up: its captures, and the opponent's stones
        # lost to a suicide (territory scoring counts them).
        self.prisoners = [0, 0, 0]
        # A superset of the live chains with exactly one liberty: every event that can leave a chain with one
        # liberty adds it here; scans drop dead and healthy entries. Only the superko scan reads it.
        self.atari: set[Chain] = set()

    # ----------------------------------------------------------------- reading
    def color_at(self, move: int) -> int:
        """Colour (0, 1, 2) at a flat move."""
        return self.color[self.geo.inner[move]]

    def liberty_count(self, move: int) -> int:
        """Liberties of the chain at ``move`` (0 for an empty point)."""
        ch = self.chain[self.geo.inner[move]]
        return 0 if ch is None else len(ch.libs)

    def chain_at(self, move: int) -> list[int]:
        """Flat moves of the chain at ``move`` (sorted; empty list for an empty point)."""
        ch = self.chain[self.geo.inner[move]]
        outer = self.geo.outer
        return [] if ch is None else sorted(outer[s] for s in ch.stones)

    def colors(self) -> list[int]:
        """The colour of every point in flat order."""
        color = self.color
        return [color[p] for p in self.geo.points]

    def stones(self) -> NDArray[np.int8]:
        """int8 array of colours in flat order."""
        return colors_array(self.colors())

    def liberties(self) -> NDArray[np.int16]:
        """int16 array of chain liberties per point (0 on empty points)."""
        chain = self.chain
        return np.array([0 if (ch := chain[p]) is None else len(ch.libs) for p in self.geo.points], dtype=np.int16)

    @property
    def ko_move(self) -> int:
        """Flat move banned by simple ko (``PASS`` if none) for ``ko_color``."""
        return PASS if self.ko_point == NO_POINT else self.geo.outer[self.ko_point]

    # ----------------------------------------------------------------- legality
    def legality(self, move: int, c: int, multi_stone_suicide: bool) -> IllegalReason | None:
        """Why ``c`` may not play ``move`` under simple ko (None if it may)."""
        p = self.geo.inner[move]
        color = self.color
        if color[p]:
            return IllegalReason.OCCUPIED
        if p == self.ko_point and c == self.ko_color:
            return IllegalReason.KO
        chain: list[Chain] = self.chain  # type: ignore[assignment]  # only stone points are read
        friend = False
        for q in self.geo.nbrs[p]:
            v = color[q]
            if v == 0:
                return None
            if v == c:
                if len(chain[q].libs) > 1:
                    return None
                friend = True
            elif len(chain[q].libs) == 1:
                return None  # captures
        if friend and multi_stone_suicide:
            return None
        return IllegalReason.SUICIDE

    def legal_moves(self, c: int, multi_stone_suicide: bool) -> list[int]:
        """Flat moves ``c`` may play under simple ko (``legality`` on every point, in one tight loop)."""
        color, nbrs, outer = self.color, self.geo.nbrs, self.geo.outer
        chain: list[Chain] = self.chain  # type: ignore[assignment]  # only stone points are read
        ko = self.ko_point if self.ko_color == c else NO_POINT
        result = []
        for p in self.geo.points:
            if color[p] or p == ko:
                continue
            for q in nbrs[p]:
                v = color[q]
                if v == 0:
                    break
                if v == c:
                    if len(chain[q].libs) > 1:
                        break
                elif len(chain[q].libs) == 1:
                    break  # captures
            else:  # no liberty for the new stone: legal only as a multi-stone suicide
                if not (multi_stone_suicide and any(color[q] == c for q in nbrs[p])):
                    continue
            result.append(outer[p])
        return result

    def own_eyes(self, c: int) -> list[int]:
        """Flat moves of ``c``'s single-point true eyes: empty points whose neighbours on the board are all ``c`` and
        whose diagonals hold at most one opponent stone, or none when one of them is off the board (edge and corner).
        The search keeps its own side from filling them (``search.forbid_eye_filling``)."""
        color, nbrs, diags, outer = self.color, self.geo.nbrs, self.geo.diags, self.geo.outer
        opp = 3 - c
        eyes = []
        for p in self.geo.points:
            if color[p]:
                continue
            for q in nbrs[p]:
                if color[q] != c:
                    break
            else:
                enemies = 0
                allowed = 1
                for d in diags[p]:
                    v = color[d]
                    if v == opp:
                        enemies += 1
                    elif v == BORDER:
                        allowed = 0
                if enemies <= allowed:
                    eyes.append(outer[p])
        return eyes

    def hash_after(self, move: int, c: int) -> int:
        """The position hash after ``c`` plays a pseudo-legal ``move`` (captures and suicide included)."""
        geo = self.geo
        p = geo.inner[move]
        color = self.color
        chain: list[Chain] = self.chain  # type: ignore[assignment]  # only stone points are read
        h = self.hash ^ geo.zob[c][p]
        opp = 3 - c
        gone: list[Chain] = []
        suicide = True
        for q in geo.nbrs[p]:
            v = color[q]
            if v == 0:
                suicide = False
                continue
            ch = chain[q]  # a stone point (read only here: compiled code checks the entry is a Chain)
            if v == opp and len(ch.libs) == 1 and ch not in gone:
                gone.append(ch)
                for s in ch.stones:
                    h ^= geo.zob[opp][s]
                suicide = False
            elif v == c and len(ch.libs) > 1:
                suicide = False
        if suicide:
            h ^= geo.zob[c][p]
            seen: list[Chain] = []
            for q in geo.nbrs[p]:
                if color[q] != c:
                    continue
                ch = chain[q]
                if ch not in seen:
                    seen.append(ch)
                    for s in ch.stones:
                        h ^= geo.zob[c][s]
        return h

    def capturing_or_suicide_moves(self, c: int, captures: bool, suicides: bool) -> list[tuple[int, int, int]]:
        """Moves where ``c`` would capture (if ``captures``) or commit multi-stone suicide (if ``suicides``), with
        the stone counts they leave.

        Returns ``(move, stones of c after, opponent stones after)`` per move, found from the atari set (no scan).
        Moves banned by simple ko are included; the caller filters them.
        """
        color, nbrs = self.color, self.geo.nbrs
        chain: list[Chain] = self.chain  # type: ignore[assignment]  # only stone points are read
        opp = 3 - c
        capture_sizes: dict[int, int] = {}
        own_atari: dict[int, int] = {}
        for ch in self.prune_atari():
            first = ch.stones[0]
            (lib,) = ch.libs
            if color[first] == opp:
                capture_sizes[lib] = capture_sizes.get(lib, 0) + len(ch.stones)
            elif suicides:
                own_atari[lib] = own_atari.get(lib, 0) + len(ch.stones)
        outer = self.geo.outer
        own, other = self.count[c], self.count[opp]
        result = [(outer[q], own + 1, other - k) for q, k in capture_sizes.items()] if captures else []
        for q, k in own_atari.items():
            if q in capture_sizes or any(color[r] == 0 or (color[r] == c and len(chain[r].libs) > 1) for r in nbrs[q]):
                continue  # not a suicide: the stone keeps a liberty
            result.append((outer[q], own - k, other))
        return result

    def prune_atari(self) -> set[Chain]:
        """Drop dead and healthy chains from the atari set; returns the set (now exactly the chains in atari)."""
        chain = self.chain
        self.atari = {ch for ch in self.atari if len(ch.libs) == 1 and chain[ch.stones[0]] is ch}
        return self.atari

    # ----------------------------------------------------------------- play / undo
    def play(self, move: int, c: int) -> PlayRecord:
        """Play a stone (caller guarantees legality) and return the undo record.

        One long function on purpose: this is the search's innermost loop, and in CPython every helper call costs
        as much as a few lines of inlined work.
        """
        geo = self.geo
        p = geo.inner[move]
        color, chain, nbrs = self.color, self.chain, geo.nbrs
        opp = 3 - c
        empties = []
        friends: list[Chain] = []
        enemies: list[Chain] = []
        for q in nbrs[p]:
            v = color[q]
            if v == 0:
                empties.append(q)
            elif v == c:
                ch = chain[q]
                if ch not in friends:
                    friends.append(ch)  # type: ignore[arg-type]  # a stone point: its entry is a Chain
            else:
                ch = chain[q]
                if ch not in enemies:
                    enemies.append(ch)  # type: ignore[arg-type]  # a stone point: its entry is a Chain
        color[p] = c
        old_hash = self.hash
        h = old_hash ^ geo.zob[c][p]
        captured = None
        for ch in enemies:
            libs = ch.libs
            libs.discard(p)
            if len(libs) == 1:
                self.atari.add(ch)
            elif not libs:
                if captured is None:
                    captured = [ch]
                else:
                    captured.append(ch)
        merge: Merge | None = None
        if not friends:
            mine = Chain([p], set(empties))
            chain[p] = mine
        else:
            mine = friends[0]
            if len(friends) > 1:
                for f in friends:
                    if len(f.stones) > len(mine.stones):
                        mine = f
            old_libs = mine.libs
            merge = (mine, old_libs, len(mine.stones), friends)
            libs = set(old_libs)
            stones = mine.stones
            for f in friends:
                if f is not mine:
                    libs |= f.libs
                    for s in f.stones:
                        chain[s] = mine
                    stones.extend(f.stones)
            libs.discard(p)
            libs.update(empties)
            mine.libs = libs
            stones.append(p)
            chain[p] = mine
        count = self.count
        count[c] += 1
        removed = 0
        suicide = False
        if captured is not None:
            zob = geo.zob[opp]
            for ch in captured:
                for s in ch.stones:
                    color[s] = 0
                    chain[s] = None
                    h ^= zob[s]
                for s in ch.stones:
                    for q in nbrs[s]:
                        if color[q] == c:
                            chain[q].libs.add(s)  # type: ignore[union-attr]  # q holds a stone: a Chain
                removed += len(ch.stones)
            count[opp] -= removed
            self.prisoners[c] += removed
        elif not mine.libs:
            suicide = True
            h = self._remove(mine, c, h)
            removed = len(mine.stones)
            count[c] -= removed
            self.prisoners[opp] += removed
        if len(mine.libs) == 1:  # checked after captures: a capturing stone can grow from 0 to 1 liberty
            self.atari.add(mine)
        if len(self.atari) > 64:
            self.prune_atari()
        record = (p, c, enemies, captured, merge, self.ko_point, self.ko_color, old_hash, suicide, removed)
        if removed == 1 and not suicide and len(mine.stones) == 1 and len(mine.libs) == 1:
            assert captured is not None  # removed == 1 without suicide: one stone was captured
            self.ko_point = captured[0].stones[0]
            self.ko_color = opp
        else:
            self.ko_point = NO_POINT
        self.hash = h
        return record

    def _remove(self, ch: Chain, c: int, h: int) -> int:
        """Take a chain of colour ``c`` off the board (suicide); returns the updated hash."""
        color, chain, nbrs, zob = self.color, self.chain, self.geo.nbrs, self.geo.zob[c]
        opp = 3 - c
        for s in ch.stones:
            color[s] = 0
            chain[s] = None
            h ^= zob[s]
        for s in ch.stones:
            for q in nbrs[s]:
                if color[q] == opp:
                    chain[q].libs.add(s)  # type: ignore[union-attr]  # q holds a stone: a Chain
        return h

    def _restore_chain(self, ch: Chain, owner: int) -> None:
        """Put a removed chain back on the board for ``owner``; its points stop being liberties of the other
        colour's neighbouring chains (which may fall back into atari)."""
        color, nbrs, atari = self.color, self.geo.nbrs, self.atari
        chain: list[Chain] = self.chain  # type: ignore[assignment]  # only stone points are read
        other = 3 - owner
        for s in ch.stones:
            for q in nbrs[s]:
                if color[q] == other:
                    libs = chain[q].libs
                    libs.discard(s)
                    if len(libs) == 1:
                        atari.add(chain[q])
        for s in ch.stones:
            color[s] = owner
            chain[s] = ch

    def undo(self, record: PlayRecord) -> None:
        """Reverse the ``play`` that returned ``record`` (must be the latest one not yet undone)."""
        p, c, enemies, captured, merge, ko_point, ko_color, old_hash, suicide, removed = record
        color, chain = self.color, self.chain
        opp = 3 - c
        atari = self.atari
        if suicide:
            assert merge is not None  # only a multi-stone suicide is legal: the stone joined a chain
            self._restore_chain(merge[0], c)
            self.count[c] += removed
            self.prisoners[opp] -= removed
        elif captured is not None:
            for ch in captured:
                self._restore_chain(ch, opp)
                atari.add(ch)  # it comes back with the single liberty p
            self.count[opp] += removed
            self.prisoners[c] -= removed
        for ch in enemies:
            ch.libs.add(p)
        if merge is not None:
            mine, old_libs, old_len, friends = merge
            del mine.stones[old_len:]
            mine.libs = old_libs
            for f in friends:
                if len(f.libs) == 1:
                    atari.add(f)
                if f is not mine:
                    for s in f.stones:
                        chain[s] = f
        color[p] = 0
        chain[p] = None
        self.count[c] -= 1
        self.ko_point = ko_point
        self.ko_color = ko_color
        self.hash = old_hash

    def unplay_colors(self, record: PlayRecord, colors: list[int]) -> None:
        """Take back in ``colors`` (a ``colors()`` list) what the play that returned ``record`` did to the stones:
        its point empty again, the chains it captured (or its own, taken off by suicide) back."""
        p, c, _, captured, merge, _, _, _, suicide, _ = record
        outer = self.geo.outer
        if suicide:
            assert merge is not None
            for s in merge[0].stones:
                colors[outer[s]] = c
        for ch in captured or ():
            for s in ch.stones:
                colors[outer[s]] = 3 - c
        colors[outer[p]] = 0

    def clear_ko(self) -> tuple[int, int]:
        """Lift the simple-ko ban (after a pass); returns what to give ``restore_ko``."""
        saved = (self.ko_point, self.ko_color)
        self.ko_point, self.ko_color = NO_POINT, 0
        return saved

    def restore_ko(self, saved: tuple[int, int]) -> None:
        """Undo ``clear_ko``."""
        self.ko_point, self.ko_color = saved

    # ----------------------------------------------------------------- graph-hash support
    def exceeds_repetition_bound(self, move: int, bound: int) -> bool:
        """After a move at ``move``: is S + E > bound (KATAGO.md section 1)?

        S is the size of the chain now at ``move`` and E the number of empty points in the empty regions touching
        it; after a suicide, S is 0 and E the region that now holds ``move``. The flood fill stops at the bound.
        """
        p = self.geo.inner[move]
        ch = self.chain[p]
        if ch is None:
            budget = bound
            stack = [p]
        else:
            budget = bound - len(ch.stones)
            if len(ch.libs) > budget:
                return True
            stack = list(ch.libs)
        count = len(stack)
        if count > budget:
            return True
        seen = set(stack)
        color, nbrs = self.color, self.geo.nbrs
        while stack:
            for r in nbrs[stack.pop()]:
                if color[r] == 0 and r not in seen:
                    count += 1
                    if count > budget:
                        return True
                    seen.add(r)
                    stack.append(r)
        return False

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_colors(cls, size: int, colors: list[int] | np.ndarray) -> Board:
        """A board holding the given flat colours (no ko). Raises ``SetupError`` if a chain has no liberty."""
        board = cls(size)
        geo = board.geo
        if len(colors) != size * size:
            raise SetupError(f"expected {size * size} points, got {len(colors)}")
        for move, v in enumerate(colors):
            v = int(v)
            if v not in (0, 1, 2):
                raise SetupError(f"bad colour {v} at {move}")
            if v:
                board.color[geo.inner[move]] = v
                board.hash ^= geo.zob[v][geo.inner[move]]
                board.count[v] += 1
        board._build_chains()
        return board

    def _build_chains(self) -> None:
        color, chain, nbrs = self.color, self.chain, self.geo.nbrs
        for p in self.geo.points:
            if color[p] and chain[p] is None:
                stones, border = flood(color, nbrs, p)
                ch = Chain(stones, {q for q in border if color[q] == 0})
                for s in stones:
                    chain[s] = ch
                if not ch.libs:
                    raise SetupError(f"chain at {self.geo.outer[p]} has no liberties")
                if len(ch.libs) == 1:
                    self.atari.add(ch)

    def copy(self) -> Board:
        """An independent copy (chains rebuilt; ko and hash kept)."""
        board = Board.from_colors(self.size, self.colors())
        board.ko_point, board.ko_color = self.ko_point, self.ko_color
        board.prisoners = list(self.prisoners)
        return board
