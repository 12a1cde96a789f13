"""Ladder reading for KataGo's input planes 14-17 (input version 7).

The facts follow KataGo's ``Board::searchIsLadderCaptured`` and ``iterLadders`` (cpp/game/board.cpp,
cpp/neuralnet/nninputs.cpp); the code is miai's own.

- A chain with **one liberty** is *laddered* when it cannot escape with the defender moving first.
- A chain with **two liberties** is *laddered* when the attacker, moving first on one of the two
  liberties, captures it in a ladder; those first moves are its *working moves*.
- Plane 14 marks every stone of a laddered chain (either colour) on the current board, planes 15/16 the
  same on the boards one and two moves ago, and plane 17 the working moves against the opponent's
  two-liberty chains (opponent of the player to move).

The search is a plain minimax over "ladder" moves only:

- the defender may capture an attacking chain in atari or extend on its last liberty; it escapes as soon
  as it has two liberties, and it is considered escaped when the attacker's last move left a simple-ko
  point (miai, like KataGo, does not call ladders that need kos; this also rules out loops);
- the attacker may only fill one of the defender's two liberties; it wins once the defender is down to
  one liberty and loses once the defender has three.
- At the root, the simple-ko ban is lifted for the defender (every ko is assumed to work for it).
- Pruning that KataGo also uses: the defender wins outright if extending provably gives three liberties;
  the attacker wins outright if the defender's only move provably leaves at most one liberty; a
  liberty whose point has three empty neighbours (and is not adjacent to the other liberty) cannot be
  left to the defender; a "double ko" where both liberties are ko mouths counts as captured.
- Limits: at most ``size*size*3/2`` plies deep (deeper counts as captured) and 25,000 moves per search
  (exceeding it counts as *not* captured), as in KataGo.
- Suicide is never a ladder move: multi-stone suicide is treated as illegal.

Speed: the feature encoder reads every position a search evaluates. ``ladder_planes`` with a
``LadderMemo`` remembers, per chain, the result and the points its reading looked at, and reuses it on
a later board (normally one move on) where nothing changed next to those points; only the chains near
the last move are read again. docs/features-speed.md has the argument for exactness and the figures.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from typing import Any, NamedTuple, Sequence

import numpy as np

from miai.go import compiled
from miai.go.coords import Color
from miai.go.geometry import BORDER, board_geometry

# Plain ints for the hot loops: CPython specialises comparisons and arithmetic on exact ints only (an ``IntEnum``
# stored in a colour list slows every later read of it), and a global is read four times faster than ``Color.X``.
EMPTY, BLACK, WHITE = int(Color.EMPTY), int(Color.BLACK), int(Color.WHITE)
_NO_KO = -1

MAX_SEARCH_MOVES = 25_000  # KataGo's MAX_LADDER_SEARCH_NODE_BUDGET


class _BudgetExceeded(Exception):
    """Raised inside a search when it has played MAX_SEARCH_MOVES moves."""


class ScratchBoard:
    """A small padded board for tactical reading: play with captures and simple ko, and undo.

    Points are the padded locations of ``miai.go.geometry`` (``(x + 1) + (y + 1) * (size + 1)``), so that every
    on-board point has four neighbours (walls included). Chains and liberties are recomputed by flood fill when asked; ladder
    reading touches few chains per move, so this stays cheap. ``height`` allows a rectangular board
    (``size`` columns), which only tests use.
    """

    __slots__ = ("size", "height", "stride", "geometry", "colors", "ko", "offsets", "_chains", "_counts", "reads")

    def __init__(
        self, stones: Sequence[int] | np.ndarray, size: int, ko_point: int | None = None, *, height: int | None = None
    ) -> None:
        flat = np.asarray(stones, dtype=np.int64)
        self.size = size
        self.height = size if height is None else height
        if flat.shape != (size * self.height,):
            raise ValueError(f"stones has {flat.size} points, expected {size * self.height} for size {size}")
        self.geometry = board_geometry(size, self.height)
        self.stride = self.geometry.stride
        # Rows of ``stride`` entries: a wall column, then the row's points; a wall row above and below,
        # one extra wall at the end (the geometry's layout). Built in numpy: this runs once per board read.
        padded = np.full((self.height + 2, self.stride), BORDER, dtype=np.int64)
        padded[1:-1, 1:] = flat.reshape(self.height, size)
        self.colors: list[int] = padded.ravel().tolist() + [BORDER]
        self.ko = self.loc(ko_point) if ko_point is not None and ko_point >= 0 else _NO_KO
        self.offsets = self.geometry.offsets
        # Chains of the current position by stone; cleared by every play and undo. Reading asks for the
        # same few chains many times per node (legality, bounds, move generation).
        self._chains: dict[int, tuple[list[int], set[int]]] = {}
        # Liberty counts found by ``count_liberties`` floods, per stone: (count, exact). An early stop
        # at ``limit`` leaves a lower bound on the stones visited. Cleared with ``_chains``.
        self._counts: dict[int, tuple[int, bool]] = {}
        # Every location whose neighbourhood reading has looked at (flooded stones and candidate move
        # points). Colours read are always within one step of these, so a reading result stays valid
        # on any board that agrees on these points and their neighbours (see ``LadderMemo``).
        self.reads: set[int] = set()

    def loc(self, point: int) -> int:
        """Padded location of a flat point index."""
        return self.geometry.points[point]

    def point(self, loc: int) -> int:
        """Flat point index of a padded location."""
        return self.geometry.flat[loc]

    # --- chains ---------------------------------------------------------------------------------

    def chain(self, loc: int) -> tuple[list[int], set[int]]:
        """The stones of the chain at ``loc`` and its liberties (shared with the cache: do not modify)."""
        cached = self._chains.get(loc)
        if cached is not None:
            return cached
        # Its own loop, not ``miai.go.geometry.flood``: collecting the liberties directly instead of filtering
        # the border makes ladder planes about 20% faster (docs/go-core.md). Same breadth-first stone order.
        colors = self.colors
        color = colors[loc]
        stones = [loc]
        seen = {loc}
        libs: set[int] = set()
        index = 0
        offsets = self.offsets
        while index < len(stones):
            cur = stones[index]
            index += 1
            for off in offsets:
                adj = cur + off
                c = colors[adj]
                if c == EMPTY:
                    libs.add(adj)
                elif c == color and adj not in seen:
                    seen.add(adj)
                    stones.append(adj)
        result = (stones, libs)
        for stone in stones:
            self._chains[stone] = result
        self.reads.update(stones)
        return result

    def liberties(self, loc: int) -> set[int]:
        """Liberties of the chain at ``loc``."""
        return self.chain(loc)[1]

    def count_liberties(self, loc: int, limit: int) -> int:
        """``min(liberties, limit)`` of the chain at ``loc``, stopping the flood early: most questions
        are "is it in atari?", and big chains answer that after a few stones."""
        cached = self._chains.get(loc)
        if cached is not None:
            return min(len(cached[1]), limit)
        # Reading asks the same chains again and again between moves ("is this neighbour in atari?").
        known = self._counts.get(loc)
        if known is not None and (known[1] or known[0] >= limit):
            return min(known[0], limit)
        colors = self.colors
        # Most answers are decided by the stone's own empty neighbours (a chain in a ladder fight is
        # usually small): no flood then.
        up = self.stride
        empties = (
            (colors[loc - up] == EMPTY) + (colors[loc - 1] == EMPTY) + (colors[loc + 1] == EMPTY) + (colors[loc + up] == EMPTY)
        )
        if empties >= limit:
            self.reads.add(loc)
            return limit
        color = colors[loc]
        stack = [loc]
        seen = {loc}
        libs: set[int] = set()
        offsets = self.offsets
        while stack:
            cur = stack.pop()
            for off in offsets:
                adj = cur + off
                c = colors[adj]
                if c == EMPTY:
                    libs.add(adj)
                    if len(libs) >= limit:
                        self.reads.update(seen)
                        bound = (limit, False)
                        for stone in seen:
                            self._counts[stone] = bound
                        return limit
                elif c == color and adj not in seen:
                    seen.add(adj)
                    stack.append(adj)
        self.reads.update(seen)
        exact = (len(libs), True)
        for stone in seen:
            self._counts[stone] = exact
        return len(libs)

    def immediate_liberties(self, loc: int) -> int:
        """Number of empty neighbours of ``loc``."""
        self.reads.add(loc)
        return sum(1 for off in self.offsets if self.colors[loc + off] == EMPTY)

    # --- moves ----------------------------------------------------------------------------------

    def is_legal(self, loc: int, player: int) -> bool:
        """Legal under simple ko with suicide forbidden."""
        colors = self.colors
        self.reads.add(loc)
        if colors[loc] != EMPTY or loc == self.ko:
            return False
        opponent = 3 - player
        for off in self.offsets:
            adj = loc + off
            c = colors[adj]
            if c == EMPTY:
                return True
            if c == player and self.count_liberties(adj, 2) > 1:
                return True
            if c == opponent and self.count_liberties(adj, 2) == 1:
                return True
        return False

    def play(self, loc: int, player: int) -> tuple[int, list[int], int]:
        """Play a legal move; returns an undo record (location, captured stones, previous ko)."""
        colors = self.colors
        opponent = 3 - player
        record_ko = self.ko
        self._chains.clear()
        self._counts.clear()
        self.reads.add(loc)
        colors[loc] = player
        captured: list[int] = []
        for off in self.offsets:
            adj = loc + off
            if colors[adj] == opponent and self.count_liberties(adj, 1) == 0:
                stones = self.chain(adj)[0]
                for stone in stones:
                    colors[stone] = EMPTY
                captured.extend(stones)
        if captured:
            self._chains.clear()  # the captured chains' entries (and their neighbours' counts) are stale now
            self._counts.clear()
        self.ko = _NO_KO
        if len(captured) == 1:
            lone = all(colors[loc + off] != player for off in self.offsets)
            if lone and self.immediate_liberties(loc) == 1:
                self.ko = captured[0]
        return loc, captured, record_ko

    def undo(self, record: tuple[int, list[int], int]) -> None:
        """Undo the move described by ``record`` (moves must be undone in reverse order)."""
        loc, captured, record_ko = record
        self._chains.clear()
        self._counts.clear()
        opponent = 3 - self.colors[loc]
        self.colors[loc] = EMPTY
        for stone in captured:
            self.colors[stone] = opponent
        self.ko = record_ko

    # --- small tactical facts (KataGo's heuristics) ---------------------------------------------

    def liberty_bounds_after_play(self, loc: int, player: int) -> tuple[int, int]:
        """Cheap lower and upper bounds on the liberties a stone of ``player`` at ``loc`` would have."""
        immediate = caps = cap_stones = conn_sum = conn_max = 0
        opponent = 3 - player
        self.reads.add(loc)
        for off in self.offsets:
            adj = loc + off
            c = self.colors[adj]
            if c == EMPTY:
                immediate += 1
            elif c == opponent and self.count_liberties(adj, 2) == 1:
                caps += 1
                cap_stones += len(self.chain(adj)[0])
            elif c == player:
                extra = len(self.liberties(adj)) - 1
                conn_sum += extra
                conn_max = max(conn_max, extra)
        return caps + max(conn_max, immediate), immediate + cap_stones + conn_sum

    def liberties_after_play(self, loc: int, player: int, cap: int) -> int:
        """Exact liberties of the chain a stone at ``loc`` would form (0 for suicide), at most ``cap``."""
        saved_ko = self.ko
        record = self.play(loc, player)
        libs = len(self.liberties(loc))
        self.undo(record)
        self.ko = saved_ko
        return min(libs, cap)

    def would_be_ko_capture(self, loc: int, player: int) -> bool:
        """``loc`` is empty, surrounded by the opponent or walls, and captures exactly one lone stone."""
        self.reads.add(loc)
        if self.colors[loc] != EMPTY:
            return False
        opponent = 3 - player
        capturable = _NO_KO
        for off in self.offsets:
            adj = loc + off
            c = self.colors[adj]
            if c != BORDER and c != opponent:
                return False
            if c == opponent and self.count_liberties(adj, 2) == 1:
                if capturable != _NO_KO:
                    return False
                capturable = adj
        return capturable != _NO_KO and len(self.chain(capturable)[0]) == 1

    def connection_heuristic_x2(self, loc: int, player: int) -> int:
        """Twice the sum of (liberties - 1.5) over ``player``'s neighbouring chains with 2+ liberties."""
        total = 0
        self.reads.add(loc)
        for off in self.offsets:
            adj = loc + off
            if self.colors[adj] == player:
                libs = len(self.liberties(adj))
                if libs > 1:
                    total += libs * 2 - 3
        return total

    def atari_neighbours(self, stones: list[int]) -> list[set[int]]:
        """Liberty sets of the distinct opposing chains in atari next to ``stones`` (one chain)."""
        colors = self.colors
        opponent = 3 - colors[stones[0]]
        seen: set[int] = set()
        result = []
        for stone in stones:
            for off in self.offsets:
                adj = stone + off
                if colors[adj] == opponent and adj not in seen:
                    if self.count_liberties(adj, 2) == 1:
                        chain_stones, libs = self.chain(adj)
                        seen.update(chain_stones)
                        result.append(libs)
                    else:
                        seen.add(adj)  # other stones of a safe chain are re-checked cheaply
        return result


class _LadderSearch:
    """One ladder search on a scratch board for the chain at ``target`` (defender moves first)."""

    def __init__(self, board: ScratchBoard, target: int, max_moves: int = MAX_SEARCH_MOVES) -> None:
        self.board = board
        self.max_moves = max_moves
        self.target = target
        self.defender = board.colors[target]
        self.attacker = 3 - self.defender
        self.moves_played = 0
        self.max_depth = board.size * board.height * 3 // 2 + 1

    def run(self) -> bool:
        """True when the defender is captured whatever it does."""
        try:
            return self._defender_node(0)
        except _BudgetExceeded:
            return False

    def _try(self, move: int, player: int, depth: int, defender_next: bool) -> bool | None:
        """Play ``move`` and search below it; None when the move is illegal."""
        board = self.board
        if not board.is_legal(move, player):
            return None
        record = board.play(move, player)
        self.moves_played += 1
        try:
            if defender_next:
                return self._defender_node(depth + 1)
            return self._attacker_node(depth + 1)
        finally:
            board.undo(record)

    def _check_limits(self, depth: int) -> bool:
        """True when the depth limit is hit (counts as captured); raises when over budget."""
        if depth >= self.max_depth - 1:
            return True
        if self.moves_played >= self.max_moves:
            raise _BudgetExceeded
        return False

    def _defender_moves(self) -> list[int] | bool:
        """The defender's candidate moves, or a decided result (True = captured)."""
        board = self.board
        stones, libs = board.chain(self.target)
        if len(libs) >= 2 or board.ko != _NO_KO:
            return False
        moves: list[int] = []
        for capture_libs in board.atari_neighbours(stones):
            moves.extend(sorted(m for m in capture_libs if m not in moves))
        moves.extend(m for m in libs if m not in moves)
        # KataGo bounds the last move in the list, normally the defender's own liberty.
        lower, upper = board.liberty_bounds_after_play(moves[-1], self.defender)
        if lower >= 3:
            return False
        if len(moves) == 1 and upper <= 1:
            return True
        return moves

    def _defender_node(self, depth: int) -> bool:
        if self._check_limits(depth):
            return True
        moves = self._defender_moves()
        if isinstance(moves, bool):
            return moves
        for move in moves:
            if self._check_limits(depth):
                return True
            result = self._try(move, self.defender, depth, defender_next=False)
            if result is False:
                return False
        return True

    def _attacker_moves(self) -> list[int] | bool:
        """The attacker's candidate moves (ordered), or a decided result (True = captured)."""
        board = self.board
        stones, libs = board.chain(self.target)
        if len(libs) <= 1:
            return True
        if len(libs) >= 3:
            return False
        first, second = sorted(libs)
        libs0 = board.immediate_liberties(first)
        libs1 = board.immediate_liberties(second)
        if self._double_ko(first, second, libs0, libs1, stones):
            return True
        moves = [first, second]
        if not self._adjacent(first, second):
            if libs0 >= 3 and libs1 >= 3:
                return False
            if libs0 >= 3:
                moves = [first]
            elif libs1 >= 3:
                moves = [second]
        if len(moves) == 2:
            score0 = libs0 * 2 + board.connection_heuristic_x2(first, self.defender)
            score1 = libs1 * 2 + board.connection_heuristic_x2(second, self.defender)
            if score1 > score0:
                moves = [second, first]
        return moves

    def _double_ko(self, first: int, second: int, libs0: int, libs1: int, stones: list[int]) -> bool:
        """Both liberties are ko mouths the defender cannot profitably connect: count as captured."""
        board = self.board
        if libs0 or libs1:
            return False
        if not (board.would_be_ko_capture(first, self.attacker) and board.would_be_ko_capture(second, self.attacker)):
            return False
        if board.liberties_after_play(first, self.defender, 3) > 2:
            return False
        if board.liberties_after_play(second, self.defender, 3) > 2:
            return False
        return not board.atari_neighbours(stones)

    def _adjacent(self, a: int, b: int) -> bool:
        return abs(a - b) == 1 or abs(a - b) == self.board.stride

    def _attacker_node(self, depth: int) -> bool:
        if self._check_limits(depth):
            return True
        moves = self._attacker_moves()
        if isinstance(moves, bool):
            return moves
        for move in moves:
            if self._check_limits(depth):
                return True
            if self._try(move, self.attacker, depth, defender_next=True):
                return True
        return False


def is_ladder_captured(board: ScratchBoard, loc: int, *, max_moves: int = MAX_SEARCH_MOVES) -> bool:
    """Is the one-liberty chain at padded ``loc`` captured in a ladder with the defender moving first?

    The simple-ko ban is lifted for the defender at the root. Chains with more liberties answer False.
    """
    if board.colors[loc] not in (BLACK, WHITE) or len(board.liberties(loc)) > 1:
        return False
    saved_ko = board.ko
    board.ko = _NO_KO
    try:
        return _LadderSearch(board, loc, max_moves).run()
    finally:
        board.ko = saved_ko


def ladder_working_moves(board: ScratchBoard, loc: int, *, max_moves: int = MAX_SEARCH_MOVES) -> list[int]:
    """Padded locations of the attacker's first moves that ladder-capture the two-liberty chain at ``loc``.

    An empty list means the chain is not ladder-capturable (or does not have exactly two liberties).
    The board's own simple-ko ban applies to the attacker's first move.
    """
    if board.colors[loc] not in (BLACK, WHITE):
        return []
    libs = board.liberties(loc)
    if len(libs) != 2:
        return []
    attacker = 3 - board.colors[loc]
    working = []
    for move in sorted(libs):
        if board.is_legal(move, attacker):
            record = board.play(move, attacker)
            try:
                if is_ladder_captured(board, loc, max_moves=max_moves):
                    working.append(move)
            finally:
                board.undo(record)
    return working


class _ChainResult(NamedTuple):
    """What ladder reading says about one chain, and what it depended on.

    Chains with three or more liberties are never laddered; they are remembered too (with no
    liberties listed), so that a board reusing this one need not flood them again.
    """

    stones: tuple[int, ...]  # padded locations
    color: int
    libs: tuple[int, ...]  # the one or two liberties of a read chain; () for three or more
    laddered: bool
    working: tuple[int, ...]  # attacker's working first moves (two-liberty chains only)
    reads: frozenset[int]  # reading looked only at these points and their neighbours
    ko: int  # the board's simple-ko point during the reading


def _still_valid(result: _ChainResult, dirty: set[int], ko: int) -> bool:
    """Whether ``result``, found on another board, holds on a board that differs from it only at
    locations next to ``dirty`` (the changed points and their neighbours).

    The reading is a deterministic function of the colours it looked at, all of them within one step of
    ``result.reads``; so it carries over when no changed point is that close. The simple-ko point matters
    only for the attacker's first move on a two-liberty chain (the defender's root ko ban is lifted).
    """
    if not result.reads.isdisjoint(dirty):
        return False
    if len(result.libs) == 2 and ko != result.ko and (ko in result.libs or result.ko in result.libs):
        return False
    return True


def _read_chain(board: ScratchBoard, loc: int, stones: list[int], libs: set[int], max_moves: int) -> _ChainResult:
    """Ladder-read the chain at ``loc`` (its first stone in scan order), recording what it reads."""
    # A fresh chain cache makes every flood inside this reading count towards ``reads``; it changes no
    # result: the target chain is still flooded from ``loc``, and other chains' stone order is never used.
    board._chains.clear()
    board._counts.clear()
    board.reads = set(stones)
    if len(libs) == 1:
        laddered = is_ladder_captured(board, loc, max_moves=max_moves)
        working: list[int] = []
    else:
        working = ladder_working_moves(board, loc, max_moves=max_moves)
        laddered = bool(working)
    return _ChainResult(
        tuple(stones), board.colors[loc], tuple(sorted(libs)), laddered, tuple(working), frozenset(board.reads), board.ko
    )


@lru_cache(maxsize=32)
def _closed_neighbourhoods(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    """Per padded location: itself and its four neighbours (clipped to the padded array)."""
    stride = width + 1
    total = (height + 2) * stride + 1
    return tuple(
        tuple(n for n in (loc, loc - stride, loc - 1, loc + 1, loc + stride) if 0 <= n < total) for loc in range(total)
    )


class LadderMemo:
    """Per-chain ladder readings of recently seen boards, reused on boards that differ a little.

    A search evaluates positions one move apart: most chains' readings never look near the new stone
    (or its captures) and are reused as they are; only the others are read again. Keyed by the stones
    alone (the ko point is checked per chain), least recently used boards are forgotten first.
    Safe to share between threads (the entries are immutable; the table is guarded by a lock).
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._boards: OrderedDict[tuple[bytes, int, int, int], dict[int, _ChainResult]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._boards)

    def clear(self) -> None:
        """Forget every board."""
        with self._lock:
            self._boards.clear()

    def get(self, key: tuple[bytes, int, int, int]) -> dict[int, _ChainResult] | None:
        """The readings of a board, if remembered (and mark it recently used)."""
        with self._lock:
            found = self._boards.get(key)
            if found is not None:
                self._boards.move_to_end(key)
            return found

    def put(self, key: tuple[bytes, int, int, int], results: dict[int, _ChainResult]) -> None:
        """Remember a board's readings."""
        with self._lock:
            self._boards[key] = results
            self._boards.move_to_end(key)
            while len(self._boards) > self.capacity:
                self._boards.popitem(last=False)


def _iter_ladders(
    board: ScratchBoard,
    max_moves: int,
    known: dict[int, _ChainResult] | None = None,
    changed: Sequence[int] = (),
) -> dict[int, _ChainResult]:
    """What ladder reading says about every chain, by the chain's first stone in scan order.

    ``known`` holds the results of another board that differs from this one at the padded locations
    ``changed``; those still valid here are reused instead of flooding and reading the chain again.
    """
    found: dict[int, _ChainResult] = {}
    solved: set[int] = set()
    colors = board.colors
    around = _closed_neighbourhoods(board.size, board.height)
    dirty = {near for loc in changed for near in around[loc]}
    for loc in board.geometry.points:
        if colors[loc] not in (BLACK, WHITE) or loc in solved:
            continue
        previous = known.get(loc) if known is not None else None
        if previous is not None and _still_valid(previous, dirty, board.ko):
            found[loc] = previous
            solved.update(previous.stones)
            continue
        stones, libs = board.chain(loc)
        solved.update(stones)
        if len(libs) > 2:
            # Its liberties are within one step of its stones: the count holds while those are unchanged.
            found[loc] = _ChainResult(tuple(stones), colors[loc], (), False, (), frozenset(stones), board.ko)
        else:
            found[loc] = _read_chain(board, loc, stones, libs, max_moves)
    return found


def ladder_planes(
    stones: Sequence[int] | np.ndarray,
    size: int,
    to_play: int,
    ko_point: int | None = None,
    *,
    max_moves: int = MAX_SEARCH_MOVES,
    memo: LadderMemo | None = None,
    previous: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """KataGo planes 14 and 17 for a board: (laddered stones, working ladder moves), read by the compiled kernel
    (``miai.go.compiled``) when it runs and no ``memo`` is given, else by :func:`ladder_planes_python`, whose
    arguments and results these are."""
    if memo is None and compiled.ENABLED:
        board = compiled.board_array(stones, size)
        return compiled.ladder_planes(board, size, to_play, ko_point, max_moves=max_moves)
    return ladder_planes_python(stones, size, to_play, ko_point, max_moves=max_moves, memo=memo, previous=previous)


def ladder_planes_python(
    stones: Sequence[int] | np.ndarray,
    size: int,
    to_play: int,
    ko_point: int | None = None,
    *,
    max_moves: int = MAX_SEARCH_MOVES,
    memo: LadderMemo | None = None,
    previous: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """KataGo planes 14 and 17 for a board, read in Python: (laddered stones, working ladder moves).

    ``to_play`` is the player to move (1 Black, 2 White): plane 17 holds the working moves against the
    *opponent's* two-liberty chains. ``ko_point`` is the simple-ko point banned for ``to_play`` if any.
    Both results are bool arrays of ``size * size`` in flat order. ``max_moves`` bounds each search (a
    search over budget answers "not laddered"); the default is KataGo's, lower it to cap the cost of
    positions built to exhaust it.

    With a ``memo``, the readings of this board are remembered, and the readings of the board
    ``previous`` (an int8 stones array of the same size, e.g. one move earlier), if the memo has it,
    are reused for chains the difference cannot affect. The planes are the same with or without.
    """
    flat = np.asarray(stones, dtype=np.int8)
    board = ScratchBoard(flat, size, ko_point)
    if memo is None:
        results = _iter_ladders(board, max_moves)
    else:
        key = (flat.tobytes(), size, board.height, max_moves)
        known, changed = memo.get(key), []
        if known is None and previous is not None:
            before = np.asarray(previous, dtype=np.int8)
            known = memo.get((before.tobytes(), size, board.height, max_moves))
            if known is not None:
                table = board.geometry.points
                changed = [table[p] for p in np.flatnonzero(before != flat).tolist()]
        results = _iter_ladders(board, max_moves, known, changed)
        memo.put(key, results)
    return _planes(board, results, to_play)


def _planes(board: ScratchBoard, results: dict[int, _ChainResult], to_play: int) -> tuple[np.ndarray, np.ndarray]:
    area = board.size * board.height
    laddered = np.zeros(area, dtype=bool)
    working = np.zeros(area, dtype=bool)
    opponent = 3 - int(to_play)
    for result in results.values():
        if result.laddered:
            laddered[[board.point(s) for s in result.stones]] = True
            if result.color == opponent:
                for move in result.working:
                    working[board.point(move)] = True
    return laddered, working


def laddered_stones(
    stones: Sequence[int] | np.ndarray, size: int, ko_point: int | None = None, *, max_moves: int = MAX_SEARCH_MOVES
) -> np.ndarray:
    """Plane 14/15/16 for one board: stones of chains that are laddered (bool, flat order)."""
    return ladder_planes(stones, size, BLACK, ko_point, max_moves=max_moves)[0]


def simple_ko_point(
    previous: Sequence[int] | np.ndarray, current: Sequence[int] | np.ndarray, move: int, size: int
) -> int | None:
    """The simple-ko point left by ``move`` (flat index; negative = pass) between two boards, or None.

    A ko point exists when the move captured exactly one stone and the played stone stands alone with
    a single liberty (that liberty is the captured point).
    """
    if move < 0:
        return None
    before = np.asarray(previous)
    after = np.asarray(current)
    player = int(after[move])
    if player not in (BLACK, WHITE):
        return None
    captured = np.flatnonzero((before == 3 - player) & (after == EMPTY))
    if len(captured) != 1:
        return None
    y, x = divmod(move, size)
    neighbours = [p for p, ok in ((move - size, y > 0), (move + size, y < size - 1),
                                  (move - 1, x > 0), (move + 1, x < size - 1)) if ok]
    if any(int(after[p]) == player for p in neighbours):
        return None
    empties = [p for p in neighbours if int(after[p]) == EMPTY]
    if len(empties) == 1 and empties[0] == int(captured[0]):
        return empties[0]
    return None


def state_ko_point(state: Any, moves_ago: int = 0) -> int | None:
    """The simple-ko point of a ``GameState`` board ``moves_ago`` moves back (None if none)."""
    moves = state.moves
    if len(moves) <= moves_ago:
        return None
    _, move = moves[len(moves) - 1 - moves_ago]
    return simple_ko_point(state.board_history(moves_ago + 1), state.board_history(moves_ago), move, state.size)


def ladder_features(state: Any, *, max_moves: int = MAX_SEARCH_MOVES) -> tuple[np.ndarray, np.ndarray]:
    """Planes 14 and 17 for a ``GameState``: (laddered stones, working moves for the side to move)."""
    return ladder_planes(state.stones(), state.size, int(state.to_play), state_ko_point(state), max_moves=max_moves)
