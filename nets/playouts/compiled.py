"""Compiled playouts: the light playout (and ``noselfatari``) as machine code through numba, when it is installed.

CPython spends most of a playout interpreting (``docs/playouts.md``, "Speed"); numba compiles these functions to
machine code on first use (cached on disk afterwards), which plays the same playouts tens of times faster. numba is
optional (``pip install 'miai[fast]'``): without it :data:`AVAILABLE` is False and the evaluator uses the Python
board (``miai.nets.playouts.board``), which also keeps what this module lacks (the stone-scoring tax).

The rules are :class:`~miai.nets.playouts.board.PlayoutBoard`'s: a uniformly random legal move (simple ko, no
suicide) that does not fill the mover's own true eye, drawn without replacement; with ``no_self_atari`` a move that
leaves a chain of two or more stones in atari without capturing is refused; with ``tactical`` the capture and
escape answers to the previous move come first, and with ``patterns`` MoGo's 3x3 patterns around it next; two
passes end the playout, or three times the board area in
moves. Chains keep pseudo-liberties (each stone-empty adjacency once) with the sum and the
sum of squares of those points, so that a chain is in atari exactly when ``count * squares == sum * sum`` (all its
pseudo-liberties are one point), as fast playout boards do; other counts walk the chain.

Boards are padded: ``W = size + 2`` columns and rows, point ``(y + 1) * W + x + 1``, colour 3 off the board.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Callable, TypeVar

import numpy as np

from miai.go.compiled import load_numba
from miai.nets.playouts.knowledge import LOCALITY_FAR, LOCALITY_VALUES, Knowledge
from miai.nets.playouts.patterns import pattern_tables
from miai.nets.playouts.simulate import PlayoutPosition, PlayoutStats



_NUMBA = load_numba()  # None without numba or with MIAI_PURE_PYTHON=1: the Python playouts are used
AVAILABLE = _NUMBA is not None
"""True when numba is installed (and not switched off) and the compiled playouts can run."""

_F = TypeVar("_F", bound=Callable[..., Any])

_EMPTY, _BLACK, _WHITE, _OFF = 0, 1, 2, 3


def _jit(function: _F) -> _F:
    """Compiled (machine code cached in numba's cache directory) when numba is there, plain Python otherwise."""
    if _NUMBA is None:
        return function
    compiled: _F = _NUMBA.njit(cache=True, nogil=True)(function)
    return compiled


@_jit
def _in_atari(plib: Any, lsum: Any, lsq: Any, h: int) -> bool:
    """The chain headed by ``h`` has exactly one liberty (all its pseudo-liberties are the same point)."""
    return bool(plib[h] > 0 and plib[h] * lsq[h] == lsum[h] * lsum[h])


@_jit
def _add_liberty(plib: Any, lsum: Any, lsq: Any, h: int, p: int, sign: int) -> None:
    plib[h] += sign
    lsum[h] += sign * p
    lsq[h] += sign * p * p


@_jit
def _build(stones: Any, size: int, color: Any, head: Any, nxt: Any, csize: Any, plib: Any, lsum: Any, lsq: Any,
           empties: Any, where: Any) -> int:
    """Set the board arrays from the flat ``stones`` (0/1/2); return the number of empty points."""
    width = size + 2
    color[:] = _OFF
    head[:] = 0
    plib[:] = 0
    lsum[:] = 0
    lsq[:] = 0
    count = 0
    for y in range(size):
        for x in range(size):
            p = (y + 1) * width + x + 1
            color[p] = stones[y * size + x]
            head[p] = p
            nxt[p] = p
            csize[p] = 1
            if color[p] == _EMPTY:
                empties[count] = p
                where[p] = count
                count += 1
    steps = (-1, 1, -width, width)
    for y in range(size):  # each stone's liberties go to its chain, and merging chains adds their liberties up
        for x in range(size):
            p = (y + 1) * width + x + 1
            if color[p] == _EMPTY:
                continue
            for d in steps:
                n = p + d
                if color[n] == _EMPTY:
                    _add_liberty(plib, lsum, lsq, head[p], n, 1)
                elif color[n] == color[p] and head[n] != head[p]:
                    _merge(head, nxt, csize, plib, lsum, lsq, head[p], head[n])
    return count


@_jit
def _new_board(stones: Any, size: int) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any, Any, int]:
    """The board arrays for the flat ``stones``: colour, chain head, next stone of the chain, chain size, the
    pseudo-liberty count, sum and sum of squares, the empty points and each one's place in that list, and how many
    empty points there are."""
    length = (size + 2) * (size + 2)
    color = np.zeros(length, np.int8)
    head = np.zeros(length, np.int32)
    nxt = np.zeros(length, np.int32)
    csize = np.zeros(length, np.int32)
    plib = np.zeros(length, np.int64)
    lsum = np.zeros(length, np.int64)
    lsq = np.zeros(length, np.int64)
    empties = np.zeros(size * size, np.int32)
    where = np.zeros(length, np.int32)
    count = _build(stones, size, color, head, nxt, csize, plib, lsum, lsq, empties, where)
    return color, head, nxt, csize, plib, lsum, lsq, empties, where, count


@_jit
def _pad(m: int, size: int) -> int:
    """The padded point of flat point ``m``."""
    return (m // size + 1) * (size + 2) + m % size + 1


@_jit
def _flat(p: int, size: int) -> int:
    """The flat point of padded point ``p``."""
    return (p // (size + 2) - 1) * size + p % (size + 2) - 1


@_jit
def _merge(head: Any, nxt: Any, csize: Any, plib: Any, lsum: Any, lsq: Any, a: int, b: int) -> int:
    """Join the chains headed by ``a`` and ``b`` (the smaller relabelled into the larger); return the new head."""
    if csize[a] < csize[b]:
        a, b = b, a
    q = b
    while True:
        head[q] = a
        q = nxt[q]
        if q == b:
            break
    nxt[a], nxt[b] = nxt[b], nxt[a]
    csize[a] += csize[b]
    plib[a] += plib[b]
    lsum[a] += lsum[b]
    lsq[a] += lsq[b]
    return a


@_jit
def _place(p: int, c: int, width: int, color: Any, head: Any, nxt: Any, csize: Any, plib: Any, lsum: Any, lsq: Any,
           empties: Any, where: Any, count: int, captures: Any) -> tuple[int, int]:
    """Put a ``c`` stone on empty ``p`` (legal): merge, capture; return (empty points now, ko point or -1)."""
    count -= 1  # take p off the empty list: the last entry fills its slot
    last = empties[count]
    empties[where[p]] = last
    where[last] = where[p]
    color[p] = c
    head[p] = p
    nxt[p] = p
    csize[p] = 1
    plib[p] = 0
    lsum[p] = 0
    lsq[p] = 0
    steps = (-1, 1, -width, width)
    for d in steps:
        n = p + d
        if color[n] == _EMPTY:
            _add_liberty(plib, lsum, lsq, p, n, 1)
        elif color[n] != _OFF and n != p:
            _add_liberty(plib, lsum, lsq, head[n], p, -1)
    root = p
    for d in steps:
        n = p + d
        if color[n] == c and head[n] != root:
            root = _merge(head, nxt, csize, plib, lsum, lsq, root, head[n])
    opponent = 3 - c
    taken, single = 0, -1
    for d in steps:
        n = p + d
        if color[n] == opponent and plib[head[n]] == 0:
            h = head[n]
            removed = csize[h]
            q = h
            while True:  # off the board first, then the capturers gain the points as liberties
                color[q] = _EMPTY
                empties[count] = q
                where[q] = count
                count += 1
                q = nxt[q]
                if q == h:
                    break
            while True:
                for e in steps:
                    r = q + e
                    if color[r] == _BLACK or color[r] == _WHITE:
                        _add_liberty(plib, lsum, lsq, head[r], q, 1)
                q = nxt[q]
                if q == h:
                    break
            taken += removed
            single = n
    captures[c] += taken
    root = head[p]
    if taken == 1 and csize[root] == 1 and plib[root] == 1:
        return count, single
    return count, -1


@_jit
def _fresh_stamp(mark: Any) -> int:
    """A stamp no point of ``mark`` holds yet: ``mark[0]`` (a corner off the board, never marked) counts them."""
    mark[0] += 1
    return int(mark[0])


@_jit
def _liberties_after(p: int, c: int, width: int, color: Any, head: Any, nxt: Any, mark: Any, limit: int) -> int:
    """Liberties (up to ``limit``) the chain of a ``c`` stone at empty ``p`` would have, captures not counted
    (``PlayoutBoard._liberties_after``): its empty neighbours and its friendly neighbours' liberties, less ``p``."""
    steps = (-1, 1, -width, width)
    stamp = _fresh_stamp(mark)
    mark[p] = stamp
    libs = 0
    for d in steps:
        n = p + d
        if color[n] == _EMPTY:  # p's own liberty
            libs += mark[n] != stamp
            mark[n] = stamp
        elif color[n] == c and mark[head[n]] != -stamp:  # a friendly chain not walked yet (its head marked -stamp)
            q = start = head[n]
            while True:
                for e in steps:
                    r = q + e
                    if color[r] == _EMPTY and mark[r] != stamp:
                        mark[r] = stamp
                        libs += 1
                q = nxt[q]
                if q == start:
                    break
            mark[start] = -stamp
        if libs >= limit:
            return limit
    return libs


@_jit
def _bad_self_atari(p: int, c: int, width: int, color: Any, head: Any, nxt: Any, plib: Any, lsum: Any, lsq: Any,
                    mark: Any) -> bool:
    """A ``c`` stone at empty ``p`` joins a chain of two or more stones left with one liberty, capturing nothing
    (``PlayoutBoard.bad_self_atari``)."""
    steps = (-1, 1, -width, width)
    empty, friends = 0, False
    for d in steps:
        n = p + d
        k = color[n]
        if k == _EMPTY:
            empty += 1
        elif k == c:
            friends = True
        elif k == 3 - c and _in_atari(plib, lsum, lsq, head[n]):
            return False
    if empty >= 2 or not friends:
        return False
    return _liberties_after(p, c, width, color, head, nxt, mark, 2) <= 1


@_jit
def _legal(p: int, c: int, ko: int, width: int, color: Any, head: Any, plib: Any, lsum: Any, lsq: Any) -> bool:
    """``c`` may play at ``p``: empty, not the ko point, not suicide (``PlayoutBoard.is_legal``)."""
    if color[p] != _EMPTY or p == ko:
        return False
    for d in (-1, 1, -width, width):
        k = color[p + d]
        if k == _EMPTY:
            return True
        if k == c and not _in_atari(plib, lsum, lsq, head[p + d]):
            return True
        if k == 3 - c and _in_atari(plib, lsum, lsq, head[p + d]):
            return True
    return False


@_jit
def _true_eye(p: int, c: int, width: int, color: Any) -> bool:
    """Empty ``p`` is a true eye of ``c`` (``PlayoutBoard.is_true_eye``)."""
    if color[p] != _EMPTY:
        return False
    for d in (-1, 1, -width, width):
        k = color[p + d]
        if k != c and k != _OFF:
            return False
    bad, off = 0, 0
    for d in (-width - 1, -width + 1, width - 1, width + 1):
        k = color[p + d]
        if k == 3 - c:
            bad += 1
        elif k == _OFF:
            off = 1
    return bad + off < 2


@_jit
def _urgent(c: int, last: int, ko: int, width: int, color: Any, head: Any, nxt: Any, plib: Any, lsum: Any,
            lsq: Any, mark: Any, out: Any) -> int:
    """The tactical answers of ``c`` to the opponent's move at ``last`` into ``out`` (repeats kept, as they weigh
    the draw); return how many (``PlayoutBoard.urgent_moves``): take the chain just played if it is in atari; for a
    friendly chain next to ``last`` in atari, take an opponent chain in atari touching it, or extend on its
    liberty when that gives two liberties or more. Only legal moves that fill no own true eye are kept."""
    if last < 0 or color[last] != 3 - c:
        return 0
    steps = (-1, 1, -width, width)
    found = 0
    h = head[last]
    if _in_atari(plib, lsum, lsq, h):
        out[found] = lsum[h] // plib[h]
        found += 1
    for d in steps:
        n = last + d
        if color[n] != c or not _in_atari(plib, lsum, lsq, head[n]):
            continue
        root = head[n]
        q = root
        while True:  # counter-captures: opponent chains in atari touching the chain
            for e in steps:
                r = q + e
                if color[r] == 3 - c and _in_atari(plib, lsum, lsq, head[r]):
                    out[found] = lsum[head[r]] // plib[head[r]]
                    found += 1
            q = nxt[q]
            if q == root:
                break
        liberty = lsum[root] // plib[root]
        if _liberties_after(liberty, c, width, color, head, nxt, mark, 2) >= 2:
            out[found] = liberty
            found += 1
    kept = 0
    for i in range(found):
        p = out[i]
        if _legal(p, c, ko, width, color, head, plib, lsum, lsq) and not _true_eye(p, c, width, color):
            out[kept] = p
            kept += 1
    return kept


@_jit
def _pattern_moves(c: int, last: int, ko: int, width: int, color: Any, head: Any, nxt: Any, plib: Any, lsum: Any,
                   lsq: Any, mark: Any, table: Any, no_self_atari: bool, out: Any) -> int:
    """MoGo's 3x3 pattern answers of ``c`` around ``last`` into ``out``; return how many
    (``PlayoutBoard.pattern_moves``): empty neighbours of ``last`` whose neighbourhood code is set in the mover's
    row of ``table``, legal, not an own true eye, and with ``no_self_atari`` not a self-atari of two or more."""
    if last < 0:
        return 0
    ring = (-width - 1, -width, -width + 1, -1, 1, width - 1, width, width + 1)  # patterns.RING_ORDER
    found = 0
    for d in ring:
        q = last + d
        if color[q] != _EMPTY or q == ko:
            continue
        code = 0
        for i in range(8):
            code |= int(color[q + ring[i]]) << (2 * i)
        if (table[c, code] and _legal(q, c, ko, width, color, head, plib, lsum, lsq)
                and not _true_eye(q, c, width, color)
                and not (no_self_atari and _bad_self_atari(q, c, width, color, head, nxt, plib, lsum, lsq, mark))):
            out[found] = q
            found += 1
    return found


@_jit
def _draw(c: int, ko: int, banned: Any, width: int, color: Any, head: Any, nxt: Any, plib: Any, lsum: Any, lsq: Any,
          empties: Any, where: Any, count: int, no_self_atari: bool, mark: Any) -> int:
    """A uniformly random legal move for ``c`` that does not fill its own true eye, or -1 (pass): each empty point
    tried at most once, a refused one swapped behind the shrinking range (``PlayoutBoard.draw_move``)."""
    remaining = count
    while remaining > 0:
        i = np.random.randint(0, remaining)
        p = empties[i]
        if (not banned[p] and _legal(p, c, ko, width, color, head, plib, lsum, lsq)
                and not _true_eye(p, c, width, color)
                and not (no_self_atari and _bad_self_atari(p, c, width, color, head, nxt, plib, lsum, lsq, mark))):
            return int(p)
        remaining -= 1
        other = empties[remaining]
        empties[i], empties[remaining] = other, p
        where[other], where[p] = i, remaining
    return -1


@_jit
def _owners(size: int, color: Any, owner: Any, mark: Any, stack: Any) -> None:
    """``owner`` (flat) of a finished board: stones their colour, an empty region the one colour it touches."""
    stamp = _fresh_stamp(mark)
    width = size + 2
    steps = (-1, 1, -width, width)
    for y in range(size):
        for x in range(size):
            owner[y * size + x] = color[(y + 1) * width + x + 1]
    for y in range(size):
        for x in range(size):
            start = (y + 1) * width + x + 1
            if color[start] != _EMPTY or mark[start] == stamp:
                continue
            mark[start] = stamp
            stack[0] = start
            top, region, touches = 1, 0, 0
            while top > 0:  # the region is collected below the stack's top, in ``stack[size*size:]``
                top -= 1
                q = stack[top]
                stack[size * size + region] = q
                region += 1
                for d in steps:
                    r = q + d
                    k = color[r]
                    if k == _EMPTY and mark[r] != stamp:
                        mark[r] = stamp
                        stack[top] = r
                        top += 1
                    elif k == _BLACK or k == _WHITE:
                        touches |= k
            if touches == _BLACK or touches == _WHITE:
                for i in range(region):
                    q = stack[size * size + i]
                    owner[_flat(q, size)] = touches


@_jit
def run_compiled(stones: Any, size: int, to_play: int, komi: float, territory: bool, prisoners: Any, passes: int,
                 banned_flat: Any, count: int, seed: int, no_self_atari: bool, max_moves: int, amaf: bool,
                 tactical: bool, last_flat: int, patterns: bool,
                 tables: Any) -> tuple[int, int, float, float, Any, Any, Any, float]:
    """``count`` playouts from the flat ``stones`` with ``to_play`` to move: (wins, draws, score sum, sum of squared
    scores, ownership sums, AMAF first plays, AMAF White wins, White's total), every figure as
    ``simulate.run_playouts`` keeps it (wins and scores from the side to move's view; AMAF rows Black, White).
    ``tactical``: answer the opponent's last move first (:func:`_urgent`); ``last_flat`` is the move before the
    playout (flat, -1 for none or a pass). ``patterns``: then MoGo's 3x3 patterns around it (:func:`_pattern_moves`,
    ``tables`` indexed by the mover and the neighbourhood code). Neither applies to a first move the game bans
    points on."""
    np.random.seed(seed)
    width = size + 2
    length = width * width
    area = size * size
    t_color, t_head, t_nxt, t_csize, t_plib, t_lsum, t_lsq, t_empties, t_where, t_count = _new_board(stones, size)
    banned = np.zeros(length, np.bool_)
    for m in range(area):
        if banned_flat[m]:
            banned[_pad(m, size)] = True
    no_bans = np.zeros(length, np.bool_)
    color, head, nxt, csize = t_color.copy(), t_head.copy(), t_nxt.copy(), t_csize.copy()
    plib, lsum, lsq = t_plib.copy(), t_lsum.copy(), t_lsq.copy()
    empties, where = t_empties.copy(), t_where.copy()
    mark = np.zeros(length, np.int64)
    stack = np.zeros(2 * area + 4, np.int32)
    owner = np.zeros(area, np.int8)
    first = np.zeros(length, np.int8)
    captures = np.zeros(3, np.int64)
    ownership = np.zeros(area)
    amaf_first = np.zeros((2, area))
    amaf_white = np.zeros((2, area))
    wins, draws, white_total = 0, 0, 0.0
    score_sum, score_sq = 0.0, 0.0
    urgent = np.zeros(4 * area + 8, np.int32)
    has_bans = False
    for m in range(area):
        has_bans = has_bans or banned_flat[m]
    start_last = -1 if last_flat < 0 else _pad(last_flat, size)
    sign = 1.0 if to_play == _WHITE else -1.0
    for _ in range(count):
        color[:] = t_color
        head[:] = t_head
        nxt[:] = t_nxt
        csize[:] = t_csize
        plib[:] = t_plib
        lsum[:] = t_lsum
        lsq[:] = t_lsq
        empties[:] = t_empties
        where[:] = t_where
        first[:] = 0
        captures[:] = 0
        empty_count, ko, c, passed, moves = t_count, -1, to_play, passes, 0
        bans, last, answer, local = banned, start_last, tactical and not has_bans, patterns and not has_bans
        while passed < 2 and moves < max_moves:
            k = _urgent(c, last, ko, width, color, head, nxt, plib, lsum, lsq, mark, urgent) if answer else 0
            if k == 0 and local:
                k = _pattern_moves(c, last, ko, width, color, head, nxt, plib, lsum, lsq, mark, tables,
                                   no_self_atari, urgent)
            if k > 0:
                p = urgent[np.random.randint(0, k)]
            else:
                p = _draw(c, ko, bans, width, color, head, nxt, plib, lsum, lsq, empties, where, empty_count,
                          no_self_atari, mark)
            bans, answer, local, last = no_bans, tactical, patterns, p
            if p < 0:
                passed += 1
                ko = -1
            else:
                passed = 0
                empty_count, ko = _place(p, c, width, color, head, nxt, csize, plib, lsum, lsq, empties, where,
                                         empty_count, captures)
                if first[p] == 0:
                    first[p] = c
            c = 3 - c
            moves += 1
        _owners(size, color, owner, mark, stack)
        black, white = 0.0, 0.0
        for m in range(area):
            if territory and color[_pad(m, size)] != _EMPTY:
                continue
            if owner[m] == _BLACK:
                black += 1.0
            elif owner[m] == _WHITE:
                white += 1.0
        if territory:
            black += prisoners[0] + captures[_BLACK]
            white += prisoners[1] + captures[_WHITE]
        white_score = white - black + komi
        score = sign * white_score
        score_sum += score
        score_sq += score * score
        if score > 0:
            wins += 1
        elif score == 0:
            draws += 1
        for m in range(area):
            if owner[m] == to_play:
                ownership[m] += 1.0
            elif owner[m] != _EMPTY:
                ownership[m] -= 1.0
        if amaf:
            white_win = 1.0 if white_score > 0 else (0.5 if white_score == 0 else 0.0)
            white_total += white_win
            for m in range(area):
                k = first[_pad(m, size)]
                if k != 0:
                    amaf_first[k - 1, m] += 1.0
                    amaf_white[k - 1, m] += white_win
    return wins, draws, score_sum, score_sq, ownership, amaf_first, amaf_white, white_total


@_jit
def replay(stones: Any, size: int, moves: Any, colors: Any) -> tuple[Any, Any, int]:
    """Play ``moves`` (flat points, -1 a pass) by ``colors`` from the flat ``stones`` on the compiled board; return
    the flat colours after them, the stones each colour captured (index 1 Black, 2 White) and the ko point (flat, or
    -1). For the tests, which replay a Python board's game on it."""
    width = size + 2
    area = size * size
    color, head, nxt, csize, plib, lsum, lsq, empties, where, count = _new_board(stones, size)
    captures = np.zeros(3, np.int64)
    ko = -1
    for i in range(len(moves)):
        m = moves[i]
        if m < 0:
            ko = -1
            continue
        count, ko = _place(_pad(m, size), colors[i], width, color, head, nxt, csize, plib,
                           lsum, lsq, empties, where, count, captures)
    flat = np.zeros(area, np.int8)
    for m in range(area):
        flat[m] = color[_pad(m, size)]
    ko_flat = -1 if ko < 0 else _flat(ko, size)
    return flat, captures, ko_flat


_NO_PATTERNS = np.zeros((3, 1), dtype=np.uint8)  # (what the playouts get for ``tables`` without the pattern rule)
_LOCALITY_VALUES = np.array(LOCALITY_VALUES)  # (a global array: numba reads it as a constant)


@_jit
def _knowledge(stones: Any, size: int, c: int, last_flat: int, legal: Any, table: Any, k: Any) -> tuple[Any, Any]:
    """``knowledge.prior_knowledge`` on the compiled board: (imaginary playouts, wins) per flat point for ``c`` to
    move. ``legal`` is a flat mask, ``table`` the mover's 3x3 pattern table, ``k`` the :class:`Knowledge` counts
    in field order (even, capture, per_stone, escape, pattern, near_last, self_atari, empty_edge, locality,
    third_line)."""
    width = size + 2
    area = size * size
    color, head, nxt, csize, plib, lsum, lsq, empties, where, _ = _new_board(stones, size)
    mark = np.zeros(width * width, np.int64)
    n = np.zeros(area)
    w = np.zeros(area)
    for m in range(area):
        if legal[m]:
            n[m] = k[0]
            w[m] = 0.5 * k[0]
    for m in range(area):  # chains in atari, each once (at its head): take it, or run
        p = _pad(m, size)
        if color[p] == _EMPTY or head[p] != p or not _in_atari(plib, lsum, lsq, p):
            continue
        liberty = lsum[p] // plib[p]
        move = _flat(liberty, size)
        if not legal[move]:
            continue
        if color[p] != c:
            won = k[1] + k[2] * min(4, csize[p])
            n[move] += won
            w[move] += won
        elif _liberties_after(liberty, c, width, color, head, nxt, mark, 2) >= 2:
            n[move] += k[3]
            w[move] += k[3]
    if k[6] != 0.0:
        for m in range(area):
            if legal[m] and _bad_self_atari(_pad(m, size), c, width, color, head, nxt, plib,
                                            lsum, lsq, mark):
                n[m] += k[6]
    ring = (-width - 1, -width, -width + 1, -1, 1, width - 1, width, width + 1)  # patterns.RING_ORDER
    if last_flat >= 0:
        last = _pad(last_flat, size)
        for d in ring:
            q = last + d
            if color[q] == _OFF:
                continue
            move = _flat(q, size)
            if not legal[move]:
                continue
            code = 0
            for i in range(8):
                code |= int(color[q + ring[i]]) << (2 * i)
            bonus = k[5] + (k[4] if table[code] else 0.0)
            n[move] += bonus
            w[move] += bonus
    if k[7] != 0.0:
        for m in range(area):
            y, x = m // size, m % size
            if not legal[m] or not (x == 0 or y == 0 or x == size - 1 or y == size - 1):
                continue
            p = (y + 1) * width + x + 1
            lonely = True
            for d in ring:
                if color[p + d] == _BLACK or color[p + d] == _WHITE:
                    lonely = False
            if lonely:
                n[m] += k[7]
    if k[8] != 0.0 and last_flat >= 0:
        distance = _cfg_distances(_pad(last_flat, size), width, color, nxt, len(_LOCALITY_VALUES))
        for m in range(area):
            if legal[m]:
                d = distance[_pad(m, size)]
                n[m] += k[8]
                w[m] += k[8] * (_LOCALITY_VALUES[d - 1] if d > 0 else LOCALITY_FAR)
    if k[9] != 0.0:
        for m in range(area):
            y, x = m // size, m % size
            if not legal[m] or min(min(x, y), min(size - 1 - x, size - 1 - y)) != 2:
                continue
            empty = True
            for dy in range(-2, 3):
                for dx in range(-2, 3):
                    s = color[(y + dy + 1) * width + x + dx + 1]
                    if s == _BLACK or s == _WHITE:
                        empty = False
            if empty:
                n[m] += k[9]
                w[m] += k[9]
    return n, w


@_jit
def _cfg_distances(start: int, width: int, color: Any, nxt: Any, limit: int) -> Any:
    """``knowledge.cfg_distances`` on the compiled board: per padded point its common-fate-graph distance from
    ``start`` up to ``limit``, -1 beyond (and off the board)."""
    distance = np.full(width * width, -1, np.int64)
    frontier = np.zeros(width * width, np.int64)
    reached = np.zeros(width * width, np.int64)
    size = _reach(start, 0, color, nxt, distance, frontier, 0)  # the start's chain (or the empty start point)
    steps = (-1, 1, -width, width)
    for d in range(1, limit + 1):
        count = 0
        for i in range(size):
            for step in steps:
                r = frontier[i] + step
                if distance[r] < 0 and color[r] != _OFF:
                    count = _reach(r, d, color, nxt, distance, reached, count)
        frontier, reached = reached, frontier
        size = count
    return distance


@_jit
def _reach(p: int, d: int, color: Any, nxt: Any, distance: Any, reached: Any, count: int) -> int:
    """Put point ``p`` (an empty point alone, a stone with its whole chain) at distance ``d`` and append it to
    ``reached`` after its first ``count`` entries; return the new count."""
    s = p
    while True:
        distance[s] = d
        reached[count] = s
        count += 1
        if color[p] == _EMPTY:
            return count
        s = nxt[s]
        if s == p:
            return count


def prior_knowledge_compiled(position: PlayoutPosition, legal: Sequence[int],
                             knowledge: Knowledge = Knowledge()) -> tuple[np.ndarray, np.ndarray]:
    """:func:`miai.nets.playouts.knowledge.prior_knowledge` for ``position``'s side to move, computed on the
    compiled board: the same counts, without building the Python board."""
    area = position.size * position.size
    mask = np.zeros(area, np.bool_)
    mask[list(legal)] = True
    counts = np.array([getattr(knowledge, f.name) for f in dataclasses.fields(knowledge)], dtype=np.float64)
    n, w = _knowledge(np.asarray(position.stones, dtype=np.int8), position.size, position.to_play,
                      position.last_move, mask, _pattern_array(position.to_play), counts)
    return n, w


@lru_cache(maxsize=1)
def _pattern_arrays() -> np.ndarray:
    """The 3x3 pattern tables (``patterns.pattern_tables``) as one array the compiled code can read, indexed by the
    mover (row 0 unused) and the neighbourhood code. Built on first use: net mode never pays for it."""
    tables = pattern_tables()
    arrays = np.zeros((3, 4 ** 8), dtype=np.uint8)
    for mover in (1, 2):
        arrays[mover] = np.frombuffer(tables[mover], dtype=np.uint8)
    return arrays


def _pattern_array(mover: int) -> np.ndarray:
    """The mover's 3x3 pattern table as a numpy array (a row of :func:`_pattern_arrays`)."""
    row: np.ndarray = _pattern_arrays()[mover]
    return row


def supports(position: PlayoutPosition) -> bool:
    """Can the compiled playouts play this position's playouts: numba installed, no stone-scoring tax."""
    return AVAILABLE and not position.tax_all


def run_playouts_compiled(position: PlayoutPosition, count: int, rng: random.Random, *, max_moves: int | None = None,
                          amaf: bool = False, no_self_atari: bool = False, tactical: bool = False,
                          patterns: bool = False) -> PlayoutStats:
    """:func:`miai.nets.playouts.simulate.run_playouts` on the compiled board (see :func:`supports`): the same
    statistics from the same playout rules, drawn from numba's generator seeded from ``rng``."""
    size = position.size
    area = size * size
    banned = np.zeros(area, np.bool_)
    banned[list(position.banned)] = True
    limit = 3 * area if max_moves is None else max_moves
    wins, draws, total, squares, ownership, first, white_wins, white_total = run_compiled(
        np.asarray(position.stones, dtype=np.int8), size, position.to_play, float(position.komi), position.territory,
        np.asarray(position.captures, dtype=np.float64), position.consecutive_passes, banned, count,
        int(rng.getrandbits(32)), no_self_atari, limit, amaf, tactical, position.last_move, patterns,
        _pattern_arrays() if patterns else _NO_PATTERNS)
    stats = PlayoutStats(size=size, playouts=count, wins=int(wins), draws=int(draws), score_sum=float(total),
                         score_sq_sum=float(squares), ownership_sum=ownership.tolist())
    if amaf:
        stats.amaf_first, stats.amaf_white_wins, stats.white_win_total = first, white_wins, float(white_total)
    return stats


def warm_up() -> None:
    """Compile now (or load the machine code numba cached on disk), not in the first search: compiling takes several
    seconds the first time, which a clocked genmove cannot spare."""
    if AVAILABLE:
        run_playouts_compiled(PlayoutPosition(size=2, stones=(0,) * 4), 1, random.Random(0), amaf=True)
