"""Prior knowledge for new nodes of the classic search: Go heuristics as equivalent experience.

Sources: S. Gelly and D. Silver, "Combining Online and Offline Knowledge in UCT" (ICML 2007), section 5: a new
move starts with ``n_prior`` imaginary playouts won at the rate ``q_prior`` that a heuristic gives it, in its
all-moves-as-first (RAVE) statistics, so that the first real playouts go to plausible moves instead of to whichever
move a random ordering tries first. Fuego's even-game heuristic (SgUctPriorKnowledgeEven: every move 0.5 with a
count of 50 on 9x9) is the base; Pachi and Fuego add local tactics on top: captures and escapes from atari are
urged, self-atari of a chain and empty first-line moves discouraged, answers near the last move and MoGo's 3x3
patterns (``miai.nets.playouts.patterns``) urged; optionally Fuego's locality bonus and Pachi's third-line bonus.

:func:`prior_knowledge` gives, for the side to move, one imaginary playout count and one imaginary win count per
flat point (pass has none: it is not in the AMAF statistics); the search adds them to a new node's AMAF arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from miai.go.coords import PASS
from miai.go.geometry import BORDER, board_geometry
from miai.nets.playouts.board import EMPTY, PlayoutBoard
from miai.nets.playouts.patterns import neighbourhood_code, pattern_tables, rings


@dataclass(frozen=True)
class Knowledge:
    """Imaginary playouts each heuristic gives a move (``docs/playouts.md``, "Prior knowledge"), and at what value.

    ``even`` playouts at 0.5 for every legal move; then, each where it applies: ``capture`` won playouts for a move
    that captures (plus ``per_stone`` per stone taken, up to four), ``escape`` won for one that saves a chain in
    atari (leaving it two liberties or more), ``pattern`` won for a MoGo 3x3 pattern next to the last move,
    ``near_last`` won for any point next to the last move (eight neighbours), ``self_atari`` lost for a move that
    leaves a chain of two or more stones in atari without capturing, ``empty_edge`` lost for a first-line move with
    no stone among its eight neighbours. ``locality`` playouts go to every move by its common-fate-graph distance
    from the last move (Fuego's locality bonus, off by default): :data:`LOCALITY_VALUES`. ``third_line`` won
    playouts for a third-line move with no stone within two points either way (Pachi's b19 prior, off by default).
    """

    even: float = 10.0
    capture: float = 20.0
    per_stone: float = 5.0
    escape: float = 20.0
    pattern: float = 10.0
    near_last: float = 5.0
    self_atari: float = 20.0
    empty_edge: float = 10.0
    locality: float = 0.0
    third_line: float = 0.0


# Fuego's locality bonus (GoUctDefaultPriorKnowledge::AddLocalityBonus): the value of a move at common-fate-graph
# distance 1, 2 and 3 from the last move; farther moves get LOCALITY_FAR. Fuego gives it a count of 4 on boards
# under 15 lines and 5 on larger ones.
LOCALITY_VALUES = (1.0, 0.6, 0.6)
LOCALITY_FAR = 0.1
LOCALITY_COUNT = 4.0
# Pachi's b19 prior (uct/prior.c, uct_prior_b19): a free third-line point with no stone in the 5x5 square around it
# gets imaginary won playouts, as many as its even-game prior gives every move (its eqex); miai's even count is 10.
THIRD_LINE_COUNT = 10.0


def prior_knowledge(board: PlayoutBoard, color: int, last: int, legal: Sequence[int],
                    knowledge: Knowledge = Knowledge()) -> tuple[np.ndarray, np.ndarray]:
    """Imaginary (playouts, wins) per flat point for ``color`` to move on ``board``; ``last`` is the padded point
    of the previous move (PASS if none), ``legal`` the flat legal moves. Points not in ``legal`` get nothing."""
    geometry = board.geometry
    area = geometry.size * geometry.size
    # Plain lists until the end: a numpy scalar update costs a microsecond, about a list's tenth.
    n = [0.0] * area
    w = [0.0] * area
    legal_set = set(legal)
    even, half = knowledge.even, 0.5 * knowledge.even
    for move in legal_set:
        n[move] = even
        w[move] = half
    for move, won, lost in _tactics(board, color, legal_set, knowledge):
        n[move] += won + lost
        w[move] += won
    if last != PASS:
        _near_last(board, color, last, legal_set, knowledge, n, w)
        if knowledge.locality:
            _locality(board, last, legal_set, knowledge.locality, n, w)
    if knowledge.empty_edge:
        c = board.color
        for move, (a, b, d, e, f, g, h, i) in _first_line(geometry.size):
            if move in legal_set and not (_STONE[c[a]] or _STONE[c[b]] or _STONE[c[d]] or _STONE[c[e]]
                                          or _STONE[c[f]] or _STONE[c[g]] or _STONE[c[h]] or _STONE[c[i]]):
                n[move] += knowledge.empty_edge
    if knowledge.third_line:
        c = board.color
        for move, square in _third_line(geometry.size):
            if move in legal_set and not any(_STONE[c[q]] for q in square):
                n[move] += knowledge.third_line
                w[move] += knowledge.third_line
    return np.array(n), np.array(w)


_STONE = (False, True, True, False)  # by padded colour: empty, black, white, off the board


@lru_cache(maxsize=32)
def _first_line(size: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """(flat move, padded eight neighbours) of each first-line point of a ``size`` board."""
    geometry = board_geometry(size)
    ring = rings(size)
    edge = (0, size - 1)
    return tuple((move, ring[p]) for move, p in enumerate(geometry.points)
                 if move % size in edge or move // size in edge)


@lru_cache(maxsize=32)
def _third_line(size: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """(flat move, padded points of the 5x5 square around it) of each third-line point of a ``size`` board: two
    points from the nearest edge, so that the whole square is on the board."""
    geometry = board_geometry(size)
    out = []
    for move in range(size * size):
        x, y = move % size, move // size
        if min(x, y, size - 1 - x, size - 1 - y) == 2:
            square = tuple(geometry.points[(y + dy) * size + x + dx]
                           for dy in range(-2, 3) for dx in range(-2, 3) if dx or dy)
            out.append((move, square))
    return tuple(out)


def _tactics(board: PlayoutBoard, color: int, legal: set[int], knowledge: Knowledge
             ) -> list[tuple[int, float, float]]:
    """(flat move, won, lost) imaginary playouts from captures, escapes and self-atari."""
    geometry = board.geometry
    flat = geometry.flat
    head, color_at = board.head, board.color
    libs: list[set[int]] = board.libs  # type: ignore[assignment]  # read at chain heads only
    out: list[tuple[int, float, float]] = []
    seen: set[int] = set()
    for p in geometry.points:
        c = color_at[p]
        root = head[p]
        if c == EMPTY or root in seen:
            continue
        seen.add(root)
        chain_libs = libs[root]
        if len(chain_libs) != 1:
            continue
        (liberty,) = chain_libs
        move = flat[liberty]
        if move not in legal:
            continue
        stones = len(board.members[root])  # type: ignore[arg-type]  # root heads a chain
        if c != color:  # an opponent chain in atari: take it
            out.append((move, knowledge.capture + knowledge.per_stone * min(4, stones), 0.0))
        elif board._liberties_after(liberty, color) >= 2:  # our chain in atari: run
            out.append((move, knowledge.escape, 0.0))
    if knowledge.self_atari:
        points = geometry.points
        for move in legal:
            if board.bad_self_atari(points[move], color):
                out.append((move, 0.0, knowledge.self_atari))
    return out


def _near_last(board: PlayoutBoard, color: int, last: int, legal: set[int], knowledge: Knowledge,
               n: list[float], w: list[float]) -> None:
    """Add the near-last-move and 3x3-pattern knowledge around ``last``."""
    flat, color_at, ring = board.geometry.flat, board.color, board.ring
    table = pattern_tables()[color]
    for q in ring[last]:
        move = flat[q]
        if move not in legal:  # (off the board: -1)
            continue
        bonus = knowledge.near_last
        if table[neighbourhood_code(color_at, ring[q])]:
            bonus += knowledge.pattern
        n[move] += bonus
        w[move] += bonus


def cfg_distances(board: PlayoutBoard, start: int, limit: int) -> dict[int, int]:
    """Common-fate-graph distances from the padded point ``start`` up to ``limit``: a chain is one node, so all its
    stones share a distance, and each step to a neighbouring point or chain adds one. Points farther than ``limit``
    are left out."""
    frontier = _graph_node(board, start)
    distance = dict.fromkeys(frontier, 0)
    for d in range(1, limit + 1):
        reached: list[int] = []
        for p in frontier:
            for q in board.neighbours[p]:
                if q not in distance and board.color[q] != BORDER:
                    node = _graph_node(board, q)
                    distance.update(dict.fromkeys(node, d))
                    reached.extend(node)
        frontier = reached
    return distance


def _graph_node(board: PlayoutBoard, p: int) -> list[int]:
    """The points of ``p``'s node in the common fate graph: its chain's stones, or ``p`` alone if empty."""
    stones = board.members[board.head[p]] if board.color[p] != EMPTY else None
    return list(stones) if stones is not None else [p]


def _locality(board: PlayoutBoard, last: int, legal: set[int], count: float, n: list[float], w: list[float]
              ) -> None:
    """Add Fuego's locality bonus: ``count`` playouts to every legal move at its distance's value."""
    distance = cfg_distances(board, last, len(LOCALITY_VALUES))
    points = board.geometry.points
    for move in legal:
        d = distance.get(points[move], 0)
        n[move] += count
        w[move] += count * (LOCALITY_VALUES[d - 1] if d else LOCALITY_FAR)
