"""Compiled kernels for the per-visit hot path (numba, when it is installed), and the switch that picks them.

Every position a search evaluates is encoded for the net; in CPython the ladder reading of planes 14-17 is most of
that cost (docs/benchmarks.md, "The Python per visit"). The kernels here compute the same things as the typed Python
they stand beside, on plain int8/int32 arrays, compiled to machine code by numba on first use (cached on disk) and
run without the GIL (``nogil``), so that several threads can encode a batch at once:

- :func:`ladder_planes` is ``miai.go.ladders.ladder_planes``: the same minimax, the same move order, the same
  limits (depth and KataGo's 25,000-move budget), hence identical planes; it reads every chain of the board afresh
  instead of reusing the per-chain readings of a board one move back (``LadderMemo``): compiled, a whole board costs
  less than looking the old readings up in Python.
- :func:`chain_liberties` is ``Board.liberties``: every point's chain liberty count (plane 3-5's input).

numba is optional (the ``fast`` extra): without it, or with the environment variable ``MIAI_PURE_PYTHON=1``,
:data:`ENABLED` is False and callers use their Python code. Tests compare both paths on many positions, and CI runs
the fast tier once more with ``MIAI_PURE_PYTHON=1``.

Boards are the padded layout of ``miai.go.geometry`` (``stride = size + 1``; neighbours up, left, right, down, in
that order: the order decides which chain a flood meets first, hence the order the defender's moves are tried in).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, TypeVar

import numpy as np
from numpy.typing import NDArray

from miai.go.geometry import BORDER, board_geometry
from miai.go.native import pure_python


def load_numba() -> Any:
    """The numba module, or None when it is not installed or ``MIAI_PURE_PYTHON`` asks for the Python code."""
    if pure_python():
        return None
    try:
        import numba
    except ImportError:  # the optional extra is not installed: the Python code is used
        return None
    return numba


_NUMBA = load_numba()
ENABLED = _NUMBA is not None
"""True when the compiled kernels run (numba installed and not switched off by ``MIAI_PURE_PYTHON``)."""

_F = TypeVar("_F", bound=Callable[..., Any])


def _jit(function: _F) -> _F:
    """Compiled (nogil, machine code cached in numba's cache directory) when numba runs, plain Python otherwise."""
    if _NUMBA is None:
        return function
    compiled: _F = _NUMBA.njit(cache=True, nogil=True)(function)
    return compiled


_EMPTY, _BLACK, _WHITE, _WALL = 0, 1, 2, BORDER
_NO_KO = -1
MAX_SEARCH_MOVES = 25_000  # KataGo's MAX_LADDER_SEARCH_NODE_BUDGET (ladders.MAX_SEARCH_MOVES)

# Rows of the int32 work array every kernel shares (``_work``): generation stamps, so that a flood needs no
# clearing, and buffers for the chains being looked at.
_STONE_MARK, _LIB_MARK, _SEEN_MARK = 0, 1, 2  # stamps: stone visited / liberty counted / chain already seen
_TARGET_STONES, _TARGET_LIBS = 3, 4  # the chain a ladder search is about
_STONES, _LIBS = 5, 6  # any other chain
_SOLVED = 7  # board scan: stones of chains already read
_ROWS = 8


def board_array(stones: Any, size: int) -> NDArray[np.int8]:
    """``stones`` (a flat sequence of 0 / 1 / 2) as the int8 array the kernels read.

    Raises:
        ValueError: when it does not hold ``size * size`` points.
    """
    flat = np.asarray(stones, dtype=np.int8)
    if flat.shape != (size * size,):
        raise ValueError(f"stones has {flat.size} points, expected {size * size} for size {size}")
    return flat


@lru_cache(maxsize=None)
def _layout(size: int) -> tuple[int, int, NDArray[np.int32]]:
    """(stride, padded length, padded index of each flat point) of ``miai.go.geometry`` for ``size``."""
    shape = board_geometry(size)
    return shape.stride, shape.length, np.array(shape.points, dtype=np.int32)


def _padded(stones: NDArray[np.int8], size: int) -> tuple[NDArray[np.int8], NDArray[np.int32], int]:
    """The padded colour array of flat ``stones``, the work array, and the stride."""
    stride, length, points = _layout(size)
    colors = np.full(length, _WALL, dtype=np.int8)
    colors[points] = stones
    return colors, np.zeros((_ROWS, length + 1), dtype=np.int32), stride


# ----------------------------------------------------------------------------------------------- chains


@_jit
def _stamp(work: Any) -> int:
    """A fresh generation number for the stamp rows (kept in the work array's last column)."""
    last = work.shape[1] - 1
    work[0, last] += 1
    return int(work[0, last])


@_jit
def _flood(colors: Any, stride: int, loc: int, work: Any, stones_row: int, libs_row: int) -> tuple[int, int]:
    """The chain at ``loc``, breadth first from it (as ``ScratchBoard.chain``): its stones into row ``stones_row``
    and its liberties into row ``libs_row`` of ``work``; returns how many of each."""
    stamp = _stamp(work)
    color = colors[loc]
    stones = work[stones_row]
    libs = work[libs_row]
    stones[0] = loc
    work[_STONE_MARK, loc] = stamp
    count, found, index = 1, 0, 0
    while index < count:
        cur = stones[index]
        index += 1
        for adj in (cur - stride, cur - 1, cur + 1, cur + stride):
            c = colors[adj]
            if c == _EMPTY:
                if work[_LIB_MARK, adj] != stamp:
                    work[_LIB_MARK, adj] = stamp
                    libs[found] = adj
                    found += 1
            elif c == color and work[_STONE_MARK, adj] != stamp:
                work[_STONE_MARK, adj] = stamp
                stones[count] = adj
                count += 1
    return count, found


@_jit
def _liberty_count(colors: Any, stride: int, loc: int, work: Any) -> int:
    """Liberties of the chain at ``loc``."""
    return _flood(colors, stride, loc, work, _STONES, _LIBS)[1]


@_jit
def _empty_neighbours(colors: Any, stride: int, loc: int) -> int:
    """Empty points next to ``loc``."""
    count = 0
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        if colors[adj] == _EMPTY:
            count += 1
    return count


@_jit
def chain_liberties_padded(colors: Any, stride: int, points: Any, out: Any, work: Any) -> None:
    """``out[i]``: liberties of the chain at flat point ``i`` (0 on empty points); each chain flooded once."""
    stamp = _stamp(work)
    for i in range(points.shape[0]):
        loc = points[i]
        if colors[loc] == _EMPTY or work[_SOLVED, loc] == stamp:
            continue
        count, libs = _flood(colors, stride, loc, work, _STONES, _LIBS)
        for k in range(count):
            work[_SOLVED, work[_STONES, k]] = stamp
            out[work[_STONES, k]] = libs  # by padded index; gathered into flat order below
    for i in range(points.shape[0]):
        loc = points[i]
        out[loc] = out[loc] if colors[loc] != _EMPTY else 0


def chain_liberties(stones: NDArray[np.int8], size: int) -> NDArray[np.int16]:
    """int16 liberties of every point's chain in flat order (0 on empty points): ``Board.liberties``."""
    colors, work, stride = _padded(np.asarray(stones, dtype=np.int8), size)
    points = _layout(size)[2]
    out = np.zeros(colors.shape[0], dtype=np.int32)
    chain_liberties_padded(colors, stride, points, out, work)
    result: NDArray[np.int16] = out[points].astype(np.int16)
    return result


# ----------------------------------------------------------------------------------------------- moves


@_jit
def _is_legal(colors: Any, stride: int, loc: int, player: int, ko: int, work: Any) -> bool:
    """Legal under simple ko, suicide forbidden (``ScratchBoard.is_legal``)."""
    if colors[loc] != _EMPTY or loc == ko:
        return False
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        c = colors[adj]
        if c == _EMPTY:
            return True
        if c == player and _liberty_count(colors, stride, adj, work) > 1:
            return True
        if c == 3 - player and _liberty_count(colors, stride, adj, work) == 1:
            return True
    return False


@_jit
def _grow(array: Any, needed: int) -> Any:
    """``array``, or a copy twice as long when ``needed`` entries do not fit."""
    if needed <= array.shape[0]:
        return array
    bigger = np.empty(max(needed, 2 * array.shape[0]), dtype=array.dtype)
    bigger[:array.shape[0]] = array
    return bigger


@_jit
def _play(colors: Any, stride: int, loc: int, player: int, work: Any, captured: Any, top: int) -> tuple[Any, int, int]:
    """Play a legal move (``ScratchBoard.play``): the stones it takes are pushed on ``captured`` from ``top``.

    Returns (captured, possibly grown; its new top; the simple-ko point the move leaves, or ``_NO_KO``).
    """
    colors[loc] = player
    opponent = 3 - player
    start = top
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        if colors[adj] == opponent:
            count, libs = _flood(colors, stride, adj, work, _STONES, _LIBS)
            if libs == 0:
                captured = _grow(captured, top + count)
                for k in range(count):
                    stone = work[_STONES, k]
                    colors[stone] = _EMPTY
                    captured[top] = stone
                    top += 1
    ko = _NO_KO
    if top - start == 1:
        lone = True
        for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
            if colors[adj] == player:
                lone = False
        if lone and _empty_neighbours(colors, stride, loc) == 1:
            ko = captured[start]
    return captured, top, ko


@_jit
def _undo(colors: Any, loc: int, captured: Any, start: int, top: int) -> None:
    """Take back the move at ``loc`` that captured ``captured[start:top]``."""
    opponent = 3 - colors[loc]
    colors[loc] = _EMPTY
    for k in range(start, top):
        colors[captured[k]] = opponent


# ----------------------------------------------------------------------------------------------- KataGo's heuristics


@_jit
def _liberty_bounds_after_play(colors: Any, stride: int, loc: int, player: int, work: Any) -> tuple[int, int]:
    """Cheap lower and upper bounds on the liberties of a stone of ``player`` at ``loc`` (per neighbouring point,
    as ``ScratchBoard.liberty_bounds_after_play``)."""
    immediate = caps = cap_stones = conn_sum = conn_max = 0
    opponent = 3 - player
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        c = colors[adj]
        if c == _EMPTY:
            immediate += 1
        elif c == opponent:
            count, libs = _flood(colors, stride, adj, work, _STONES, _LIBS)
            if libs == 1:
                caps += 1
                cap_stones += count
        elif c == player:
            extra = _liberty_count(colors, stride, adj, work) - 1
            conn_sum += extra
            conn_max = max(conn_max, extra)
    return caps + max(conn_max, immediate), immediate + cap_stones + conn_sum


@_jit
def _liberties_after_play(colors: Any, stride: int, loc: int, player: int, cap: int, work: Any,
                          captured: Any, top: int) -> tuple[Any, int]:
    """Liberties of the chain a stone at ``loc`` would form (0 for suicide), at most ``cap``; the board unchanged.
    Returns it with ``captured`` (possibly grown)."""
    captured, end, _ = _play(colors, stride, loc, player, work, captured, top)
    libs = _liberty_count(colors, stride, loc, work)
    _undo(colors, loc, captured, top, end)
    return captured, min(libs, cap)


@_jit
def _would_be_ko_capture(colors: Any, stride: int, loc: int, player: int, work: Any) -> bool:
    """``loc`` is empty, surrounded by the opponent or walls, and captures exactly one lone stone."""
    if colors[loc] != _EMPTY:
        return False
    opponent = 3 - player
    capturable = _NO_KO
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        c = colors[adj]
        if c != _WALL and c != opponent:
            return False
        if c == opponent and _liberty_count(colors, stride, adj, work) == 1:
            if capturable != _NO_KO:
                return False
            capturable = adj
    return capturable != _NO_KO and _flood(colors, stride, capturable, work, _STONES, _LIBS)[0] == 1


@_jit
def _connection_heuristic_x2(colors: Any, stride: int, loc: int, player: int, work: Any) -> int:
    """Twice the sum of (liberties - 1.5) over ``player``'s neighbouring chains with 2+ liberties."""
    total = 0
    for adj in (loc - stride, loc - 1, loc + 1, loc + stride):
        if colors[adj] == player:
            libs = _liberty_count(colors, stride, adj, work)
            if libs > 1:
                total += libs * 2 - 3
    return total


@_jit
def _atari_neighbour_libs(colors: Any, stride: int, count: int, work: Any, out: Any, start: int) -> tuple[Any, int]:
    """The liberties of the distinct opposing chains in atari next to the target chain (its ``count`` stones in
    row ``_TARGET_STONES``), in the order they are met, each once, appended to ``out`` from ``start``.

    Returns (``out``, possibly grown; its new end)."""
    stamp = _stamp(work)
    target = work[_TARGET_STONES]
    opponent = 3 - colors[target[0]]
    end = start
    for i in range(count):
        stone = target[i]
        for adj in (stone - stride, stone - 1, stone + 1, stone + stride):
            if colors[adj] != opponent or work[_SEEN_MARK, adj] == stamp:
                continue
            size, libs = _flood(colors, stride, adj, work, _STONES, _LIBS)
            if libs != 1:
                work[_SEEN_MARK, adj] = stamp
                continue
            for k in range(size):
                work[_SEEN_MARK, work[_STONES, k]] = stamp
            out, end = _append_new(out, start, end, work[_LIBS, 0])
    return out, end


@_jit
def _append_new(out: Any, start: int, end: int, value: int) -> tuple[Any, int]:
    """``value`` appended to ``out[start:end]`` unless already there (grown as needed). Returns (out, end)."""
    for k in range(start, end):
        if out[k] == value:
            return out, end
    out = _grow(out, end + 1)
    out[end] = value
    return out, end + 1


# ----------------------------------------------------------------------------------------------- the search

_OPEN, _CAPTURED, _ESCAPED = 0, 1, 2  # a node's moves to try, or its decided result


@_jit
def _defender_moves(colors: Any, stride: int, target: int, ko: int, work: Any, moves: Any,
                    start: int) -> tuple[Any, int, int]:
    """The defender's candidate moves appended to ``moves`` from ``start`` (captures of attackers in atari, then
    its liberty), or a decided result. Returns (moves, end, _OPEN / _CAPTURED / _ESCAPED)."""
    count, libs = _flood(colors, stride, target, work, _TARGET_STONES, _TARGET_LIBS)
    if libs >= 2 or ko != _NO_KO:
        return moves, start, _ESCAPED
    moves, end = _atari_neighbour_libs(colors, stride, count, work, moves, start)
    for k in range(libs):
        moves, end = _append_new(moves, start, end, work[_TARGET_LIBS, k])
    # KataGo bounds the last move in the list, normally the defender's own liberty.
    lower, upper = _liberty_bounds_after_play(colors, stride, moves[end - 1], colors[target], work)
    if lower >= 3:
        return moves, start, _ESCAPED
    if end - start == 1 and upper <= 1:
        return moves, start, _CAPTURED
    return moves, end, _OPEN


@_jit
def _attacker_moves(colors: Any, stride: int, target: int, work: Any, captured: Any, top: int, moves: Any,
                    start: int) -> tuple[Any, Any, int, int]:
    """The attacker's candidate moves (one or both of the defender's two liberties, better first), or a decided
    result. Returns (captured, moves, end, _OPEN / _CAPTURED / _ESCAPED)."""
    count, libs = _flood(colors, stride, target, work, _TARGET_STONES, _TARGET_LIBS)
    if libs <= 1:
        return captured, moves, start, _CAPTURED
    if libs >= 3:
        return captured, moves, start, _ESCAPED
    first = min(work[_TARGET_LIBS, 0], work[_TARGET_LIBS, 1])
    second = max(work[_TARGET_LIBS, 0], work[_TARGET_LIBS, 1])
    defender = colors[target]
    attacker = 3 - defender
    libs0 = _empty_neighbours(colors, stride, first)
    libs1 = _empty_neighbours(colors, stride, second)
    if libs0 == 0 and libs1 == 0 and _would_be_ko_capture(colors, stride, first, attacker, work) \
            and _would_be_ko_capture(colors, stride, second, attacker, work):
        # A double ko the defender cannot profitably connect out of counts as captured.
        captured, after0 = _liberties_after_play(colors, stride, first, defender, 3, work, captured, top)
        if after0 <= 2:
            captured, after1 = _liberties_after_play(colors, stride, second, defender, 3, work, captured, top)
            if after1 <= 2:
                count, _ = _flood(colors, stride, target, work, _TARGET_STONES, _TARGET_LIBS)
                scratch = np.empty(4, dtype=np.int32)
                _, found = _atari_neighbour_libs(colors, stride, count, work, scratch, 0)
                if found == 0:
                    return captured, moves, start, _CAPTURED
    apart = abs(first - second) != 1 and abs(first - second) != stride
    if apart and libs0 >= 3 and libs1 >= 3:
        return captured, moves, start, _ESCAPED
    moves = _grow(moves, start + 2)
    if apart and libs0 >= 3:
        moves[start] = first
        return captured, moves, start + 1, _OPEN
    if apart and libs1 >= 3:
        moves[start] = second
        return captured, moves, start + 1, _OPEN
    score0 = libs0 * 2 + _connection_heuristic_x2(colors, stride, first, defender, work)
    score1 = libs1 * 2 + _connection_heuristic_x2(colors, stride, second, defender, work)
    if score1 > score0:
        first, second = second, first
    moves[start] = first
    moves[start + 1] = second
    return captured, moves, start + 2, _OPEN


@_jit
def _is_ladder_captured(colors: Any, stride: int, area: int, target: int, max_moves: int, work: Any) -> bool:
    """Is the one-liberty chain at ``target`` captured in a ladder with the defender moving first, simple-ko ban
    lifted at the root (``ladders.is_ladder_captured``)? The board comes back unchanged.

    The minimax of ``ladders._LadderSearch`` without recursion: a frame per depth (the defender at even depths),
    each with its candidate moves on one stack and the undo record of the move it is trying.
    """
    if colors[target] != _BLACK and colors[target] != _WHITE:
        return False
    if _flood(colors, stride, target, work, _TARGET_STONES, _TARGET_LIBS)[1] > 1:
        return False
    defender = colors[target]
    max_depth = area * 3 // 2 + 1
    frames = max_depth + 1
    base = np.zeros(frames, dtype=np.int32)  # where the frame's moves start on the stack
    end = np.zeros(frames, dtype=np.int32)
    next_move = np.zeros(frames, dtype=np.int32)
    played = np.zeros(frames, dtype=np.int32)  # the move the frame is trying, its captures and the ko before it
    cap_start = np.zeros(frames, dtype=np.int32)
    cap_end = np.zeros(frames, dtype=np.int32)
    ko_before = np.zeros(frames, dtype=np.int32)
    moves = np.empty(64, dtype=np.int32)
    captured = np.empty(64, dtype=np.int32)
    ko, depth, top, cap_top, moves_played = _NO_KO, 0, 0, 0, 0
    entering = True
    while True:
        returning, result = False, False
        if entering:  # a new node at ``depth``: its limits, then its moves or its result
            entering = False
            base[depth] = top
            if depth >= max_depth - 1:
                returning, result = True, True  # too deep: counts as captured
            elif moves_played >= max_moves:
                break  # over budget: not captured
            else:
                if depth % 2 == 0:
                    moves, top, state = _defender_moves(colors, stride, target, ko, work, moves, top)
                else:
                    captured, moves, top, state = _attacker_moves(colors, stride, target, work, captured, cap_top,
                                                                  moves, top)
                if state == _OPEN:
                    end[depth] = top
                    next_move[depth] = base[depth]
                else:
                    returning, result = True, state == _CAPTURED
        if not returning:
            if next_move[depth] < end[depth]:
                if moves_played >= max_moves:  # checked before each move, as the recursive search does
                    break
                move = moves[next_move[depth]]
                next_move[depth] += 1
                player = defender if depth % 2 == 0 else 3 - defender
                if not _is_legal(colors, stride, move, player, ko, work):
                    continue
                played[depth], cap_start[depth], ko_before[depth] = move, cap_top, ko
                captured, cap_top, ko = _play(colors, stride, move, player, work, captured, cap_top)
                cap_end[depth] = cap_top
                moves_played += 1
                depth += 1
                entering = True
                continue
            # Moves exhausted: the defender found no escape (captured), the attacker no capture (escaped).
            result = depth % 2 == 0
        # Hand ``result`` up while it decides the parent: the defender's by an escape, the attacker's by a capture.
        while True:
            top = base[depth]
            if depth == 0:
                return result
            depth -= 1
            _undo(colors, played[depth], captured, cap_start[depth], cap_end[depth])
            cap_top, ko = cap_start[depth], ko_before[depth]
            if result != (depth % 2 == 0):
                continue
            break
    while depth > 0:  # over budget: take every move back
        depth -= 1
        _undo(colors, played[depth], captured, cap_start[depth], cap_end[depth])
    return False


# ----------------------------------------------------------------------------------------------- the board's planes


@_jit
def _working_moves(colors: Any, stride: int, area: int, loc: int, ko: int, max_moves: int, work: Any,
                   out: Any) -> int:
    """The attacker's first moves (into ``out``, in order) that ladder-capture the two-liberty chain at ``loc``,
    the board's simple-ko ban applying to them (``ladders.ladder_working_moves``); returns how many."""
    count, libs = _flood(colors, stride, loc, work, _TARGET_STONES, _TARGET_LIBS)
    if libs != 2:
        return 0
    first = min(work[_TARGET_LIBS, 0], work[_TARGET_LIBS, 1])
    second = max(work[_TARGET_LIBS, 0], work[_TARGET_LIBS, 1])
    attacker = 3 - colors[loc]
    found = 0
    captured = np.empty(area + 1, dtype=np.int32)
    for move in (first, second):
        if _is_legal(colors, stride, move, attacker, ko, work):
            captured, end, _ = _play(colors, stride, move, attacker, work, captured, 0)
            if _is_ladder_captured(colors, stride, area, loc, max_moves, work):
                out[found] = move
                found += 1
            _undo(colors, move, captured, 0, end)
    return found


@_jit
def ladder_planes_padded(colors: Any, stride: int, points: Any, flat: Any, opponent: int, ko: int, max_moves: int,
                         work: Any, laddered: Any, working: Any) -> None:
    """Planes 14 and 17 of the padded board ``colors`` (``ladders.ladder_planes``): ``laddered[i]`` for the stones of
    laddered chains, ``working[i]`` for the working moves against ``opponent``'s two-liberty chains (flat order;
    ``flat`` maps a padded index to its flat point). Each chain is read once, from its first stone in scan order."""
    area = points.shape[0]
    solved = _stamp(work)
    found = np.empty(2, dtype=np.int32)
    stones = np.empty(area, dtype=np.int32)
    for i in range(area):
        loc = points[i]
        color = colors[loc]
        if (color != _BLACK and color != _WHITE) or work[_SOLVED, loc] == solved:
            continue
        count, libs = _flood(colors, stride, loc, work, _TARGET_STONES, _TARGET_LIBS)
        stones[:count] = work[_TARGET_STONES, :count]
        for k in range(count):
            work[_SOLVED, stones[k]] = solved
        if libs > 2:
            continue
        if libs == 1:
            moves = 0
            captured = _is_ladder_captured(colors, stride, area, loc, max_moves, work)
        else:
            moves = _working_moves(colors, stride, area, loc, ko, max_moves, work, found)
            captured = moves > 0
        if captured:
            for k in range(count):
                laddered[flat[stones[k]]] = True
            if color == opponent:
                for k in range(moves):
                    working[flat[found[k]]] = True


@lru_cache(maxsize=None)
def _flat_of(size: int) -> NDArray[np.int32]:
    """Padded index -> flat point (-1 off the board) for ``size``."""
    return np.array(board_geometry(size).flat, dtype=np.int32)


def ladder_planes(stones: NDArray[np.int8], size: int, to_play: int, ko_point: int | None = None, *,
                  max_moves: int = MAX_SEARCH_MOVES) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """KataGo planes 14 and 17 of a board, as ``miai.go.ladders.ladder_planes`` computes them (same arguments):
    (laddered stones, working ladder moves against the opponent of ``to_play``), bool in flat order."""
    colors, work, stride = _padded(np.asarray(stones, dtype=np.int8), size)
    points = _layout(size)[2]
    area = size * size
    laddered = np.zeros(area, dtype=np.bool_)
    working = np.zeros(area, dtype=np.bool_)
    ko = int(points[ko_point]) if ko_point is not None and ko_point >= 0 else _NO_KO
    ladder_planes_padded(colors, stride, points, _flat_of(size), 3 - int(to_play), ko, max_moves, work, laddered,
                         working)
    return laddered, working


# ----------------------------------------------------------------------------------------------- Benson's area


@_jit
def _mark_benson(colors: Any, nbrs: Any, player: int, result: Any, safe_big: bool, unsafe_big: bool,
                 suicide_legal: bool) -> None:
    """``player``'s pass-alive stones and territory (plus the optional big regions) into ``result``, as
    ``benson._mark_player`` computes them: chains, the regions of non-``player`` points grown from empty points,
    Benson's iteration, then the marks. ``nbrs[i]`` lists point ``i``'s neighbours (-1 pads)."""
    area = colors.shape[0]
    chain_of = np.full(area, -1, dtype=np.int32)
    stack = np.empty(area, dtype=np.int32)
    chains = 0
    for start in range(area):
        if colors[start] != player or chain_of[start] != -1:
            continue
        chain_of[start] = chains
        stack[0] = start
        depth = 1
        while depth:
            depth -= 1
            point = stack[depth]
            for adj in nbrs[point]:
                if adj >= 0 and colors[adj] == player and chain_of[adj] == -1:
                    chain_of[adj] = chains
                    stack[depth] = adj
                    depth += 1
        chains += 1
    if chains == 0:
        return  # a player without stones owns nothing
    # Regions: each point's region, each region's facts; the chains a region may be vital to (at most the four
    # around its first point) and every (region, bordering chain) pair.
    region_of = np.full(area, -1, dtype=np.int32)
    vital = np.full((area, 4), -1, dtype=np.int32)
    internal = np.zeros(area, dtype=np.int32)
    opponent_inside = np.zeros(area, dtype=np.bool_)
    border_region = np.empty(4 * area, dtype=np.int32)
    border_chain = np.empty(4 * area, dtype=np.int32)
    borders = 0
    regions = 0
    around = np.empty(4, dtype=np.int32)
    for start in range(area):
        if colors[start] != _EMPTY or region_of[start] != -1:
            continue
        r = regions
        regions += 1
        region_of[start] = r
        stack[0] = start
        depth = 1
        first = True
        while depth:
            depth -= 1
            point = stack[depth]
            touching = 0
            for adj in nbrs[point]:
                if adj < 0:
                    continue
                if colors[adj] == player:
                    chain = chain_of[adj]
                    fresh = True
                    for k in range(touching):
                        if around[k] == chain:
                            fresh = False
                    if fresh:
                        around[touching] = chain
                        touching += 1
                        border_region[borders] = r
                        border_chain[borders] = chain
                        borders += 1
                elif region_of[adj] == -1:
                    region_of[adj] = r
                    stack[depth] = adj
                    depth += 1
            if colors[point] != _EMPTY:
                opponent_inside[r] = True
            if touching == 0:
                internal[r] += 1
            # Opponent stones only break vitality when they could be refilled by suicide.
            if suicide_legal or colors[point] == _EMPTY:
                if first:
                    first = False
                    for k in range(touching):
                        vital[r, k] = around[k]
                else:
                    for j in range(4):
                        if vital[r, j] < 0:
                            continue
                        kept = False
                        for k in range(touching):
                            if around[k] == vital[r, j]:
                                kept = True
                        if not kept:
                            vital[r, j] = -1
    # Benson's iteration: remove the chains with fewer than two vital regions among those no removed chain borders.
    alive = np.ones(chains, dtype=np.bool_)
    spoiled = np.zeros(regions, dtype=np.bool_)
    count = np.zeros(chains, dtype=np.int32)
    while True:
        count[:] = 0
        for r in range(regions):
            if not spoiled[r]:
                for j in range(4):
                    if vital[r, j] >= 0:
                        count[vital[r, j]] += 1
        removed = False
        for c in range(chains):
            if alive[c] and count[c] < 2:
                alive[c] = False
                removed = True
        if not removed:
            break
        for b in range(borders):
            if not alive[border_chain[b]]:
                spoiled[border_region[b]] = True
    for point in range(area):
        if chain_of[point] >= 0 and alive[chain_of[point]]:
            result[point] = player
    for point in range(area):
        r = region_of[point]
        if r < 0:
            continue
        if (internal[r] <= 1 or (safe_big and not opponent_inside[r])) and not spoiled[r]:
            result[point] = player
        elif unsafe_big and not opponent_inside[r] and result[point] == _EMPTY:
            result[point] = player


@_jit
def calculate_area_flat(colors: Any, nbrs: Any, non_pass_alive_stones: bool, safe_big: bool, unsafe_big: bool,
                        suicide_legal: bool, result: Any) -> None:
    """``benson.calculate_area`` into ``result`` (flat colours, Black marked before White)."""
    result[:] = _EMPTY
    _mark_benson(colors, nbrs, _BLACK, result, safe_big, unsafe_big, suicide_legal)
    _mark_benson(colors, nbrs, _WHITE, result, safe_big, unsafe_big, suicide_legal)
    if non_pass_alive_stones:
        for point in range(colors.shape[0]):
            if result[point] == _EMPTY:
                result[point] = colors[point]


@lru_cache(maxsize=None)
def _neighbour_table(size: int) -> NDArray[np.int32]:
    """``[area, 4]`` flat neighbours of every point (-1 pads), in ``miai.go.geometry.neighbor_table``'s order."""
    from miai.go.geometry import neighbor_table

    table = np.full((size * size, 4), -1, dtype=np.int32)
    for point, around in enumerate(neighbor_table(size)):
        table[point, :len(around)] = around
    return table


def calculate_area(stones: NDArray[np.int8], size: int, *, non_pass_alive_stones: bool = False,
                   safe_big_territories: bool = False, unsafe_big_territories: bool = False,
                   multi_stone_suicide: bool = False) -> NDArray[np.int8]:
    """``miai.go.benson.calculate_area`` (same arguments and result: int8 owners in flat order)."""
    result = np.empty(size * size, dtype=np.int8)
    calculate_area_flat(np.asarray(stones, dtype=np.int8), _neighbour_table(size), non_pass_alive_stones,
                        safe_big_territories, unsafe_big_territories, multi_stone_suicide, result)
    return result
