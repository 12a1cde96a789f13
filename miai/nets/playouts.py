"""Classic Monte-Carlo evaluation: light random playouts instead of a neural net.

:class:`PlayoutEvaluator` implements the ``Evaluator`` protocol (docs/INTERFACES.md): for each state it plays
``playouts`` random games to the end and reports

- ``win`` / ``loss``: the fraction of playouts won / lost by the side to move (a drawn playout counts half to each);
- ``score_mean`` / ``score_stdev`` / ``lead``: the mean and spread of the final scores, from the side to move;
- ``ownership``: each point's final owner averaged over the playouts (+1 = side to move);
- ``policy``: uniform over the legal moves and pass, or, with ``priors=True``, weighted towards captures and
  escapes from atari (:func:`move_priors`).

A playout is the classic "light" policy of Monte-Carlo Go: each side plays a uniformly random legal move, except
that it never fills one of its own true eyes (:meth:`PlayoutBoard.is_true_eye`), and passes when no such move is
left; two consecutive passes end the game, which is then scored by area (or by territory plus prisoners under
territory rules) with the game's komi and handicap bonus. Every dead group has been captured by then, so counting
stones and one-colour empty regions gives the real result.

Speed matters more than generality here, so playouts do not go through ``GameState`` (superko, hashes, history):
:class:`PlayoutBoard` is a small self-contained board on a padded 1-D list with chains (member list plus liberty
set), simple ko and no suicide. It is seeded from a :class:`PlayoutPosition`, which :func:`position_from_state`
builds from a ``GameState``; the ko/superko bans of the real game apply to the first playout move.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from miai.go.rules import Scoring, Tax
from miai.go.scoring import group_taxes
from miai.nets.evaluator import Evaluation

if TYPE_CHECKING:
    from miai.go.state import GameState

__all__ = [
    "PlayoutBenchmark",
    "PlayoutBoard",
    "PlayoutError",
    "PlayoutEvaluator",
    "PlayoutPosition",
    "PlayoutStats",
    "benchmark_playouts",
    "move_priors",
    "position_from_state",
    "run_playouts",
]

EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3
PASS = -1


class PlayoutError(ValueError):
    """A position that playouts cannot start from (bad size, stones array or side to move)."""


@dataclass(frozen=True)
class PlayoutPosition:
    """Everything a playout needs to know about a game, independent of ``GameState``.

    ``stones`` is the flat board (``y * size + x``, ``y = 0`` the top row) with 0 empty, 1 black, 2 white.
    ``banned`` are empty points the side to move may not play now (ko or superko); they apply to the first
    playout move only, later kos are simple kos. ``komi`` is the full compensation White receives (komi plus any
    handicap bonus). ``territory`` selects territory scoring (else area); ``tax_all`` the stone-scoring tax (each
    group pays up to two points for its eyes). ``captures`` are the stones each colour has captured so far ``(by black, by white)``, used
    only under territory scoring. ``legal_moves``, when given, is the game's own list of legal board moves (it
    knows superko and the suicide rule); otherwise the board works it out with simple ko.
    """

    size: int
    stones: tuple[int, ...]
    to_play: int = BLACK
    komi: float = 7.5
    territory: bool = False
    tax_all: bool = False
    banned: tuple[int, ...] = ()
    captures: tuple[int, int] = (0, 0)
    consecutive_passes: int = 0
    legal_moves: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if not 2 <= self.size <= 25:
            raise PlayoutError(f"board size {self.size} outside 2..25")
        if len(self.stones) != self.size * self.size:
            raise PlayoutError(f"{len(self.stones)} stones for a {self.size}x{self.size} board")
        if self.to_play not in (BLACK, WHITE):
            raise PlayoutError(f"side to move must be 1 (black) or 2 (white), got {self.to_play}")
        if any(v not in (EMPTY, BLACK, WHITE) for v in self.stones):
            raise PlayoutError("stones must be 0, 1 or 2")

    @staticmethod
    def from_stones(stones: Sequence[int] | np.ndarray, size: int, **kwargs: Any) -> PlayoutPosition:
        """Build a position from any flat sequence or numpy array of 0/1/2 values."""
        return PlayoutPosition(size=size, stones=tuple(int(v) for v in stones), **kwargs)


@dataclass(frozen=True)
class _Geometry:
    """Index tables of the padded board, one per size.

    A point ``(x, y)`` lives at ``(y + 1) * (size + 1) + x``: one padding row above and below, and one shared
    padding column that serves as both the right edge of a row and the left edge of the next, so the four
    neighbours of ``p`` are ``p +- 1`` and ``p +- (size + 1)``.
    """

    size: int
    width: int
    length: int
    points: tuple[int, ...]  # padded index of each flat move, in flat order
    flat: tuple[int, ...]  # flat move of each padded index (-1 on padding)
    neighbours: tuple[tuple[int, ...], ...]
    diagonals: tuple[tuple[int, ...], ...]

    @staticmethod
    def build(size: int) -> _Geometry:
        width = size + 1
        length = (size + 2) * width + 1
        points = tuple((y + 1) * width + x for y in range(size) for x in range(size))
        flat = [-1] * length
        for move, p in enumerate(points):
            flat[p] = move
        # Padding points get empty tables: they are never looked up as the centre of a move.
        neighbours: list[tuple[int, ...]] = [()] * length
        diagonals: list[tuple[int, ...]] = [()] * length
        for p in points:
            neighbours[p] = (p - 1, p + 1, p - width, p + width)
            diagonals[p] = (p - width - 1, p - width + 1, p + width - 1, p + width + 1)
        return _Geometry(size, width, length, points, tuple(flat), tuple(neighbours), tuple(diagonals))


_GEOMETRIES: dict[int, _Geometry] = {}


def _geometry(size: int) -> _Geometry:
    geometry = _GEOMETRIES.get(size)
    if geometry is None:
        geometry = _GEOMETRIES[size] = _Geometry.build(size)
    return geometry


class PlayoutBoard:
    """A lean mutable board for random playouts: chains with liberty sets, simple ko, no suicide.

    ``color`` is a padded list (0 empty, 1 black, 2 white, 3 padding); ``head[p]`` is the representative point of
    the chain at ``p``; ``members[r]`` and ``libs[r]`` are the stones and liberties of the chain represented by
    ``r`` (None elsewhere). ``empties`` lists the empty points in no particular order.
    """

    __slots__ = ("geometry", "color", "head", "members", "libs", "empties", "ko", "captures")

    def __init__(self, size: int) -> None:
        geometry = _geometry(size)
        self.geometry = geometry
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
            for n in self.geometry.neighbours[p]:
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
        other.color = self.color[:]
        other.head = self.head[:]
        members = self.members[:]
        libs = self.libs[:]
        for r, stones in enumerate(members):
            if stones is not None:
                members[r] = stones[:]
                libs[r] = set(libs[r])  # type: ignore[arg-type]
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
        return len(self.libs[self.head[p]])  # type: ignore[arg-type]

    def is_legal(self, p: int, color: int) -> bool:
        """True if ``color`` may play at padded point ``p``: empty, not the ko point, and not suicide."""
        if self.color[p] != EMPTY or p == self.ko:
            return False
        opponent = 3 - color
        for n in self.geometry.neighbours[p]:
            c = self.color[n]
            if c == EMPTY:
                return True
            if c == color and len(self.libs[self.head[n]]) > 1:  # type: ignore[arg-type]
                return True
            if c == opponent and len(self.libs[self.head[n]]) == 1:  # type: ignore[arg-type]
                return True
        return False

    def is_true_eye(self, p: int, color: int) -> bool:
        """True if empty point ``p`` is a true eye of ``color`` (the playout policy never fills those).

        The usual test of Monte-Carlo Go programs: every neighbour is ``color`` or the edge, and the opponent holds
        at most one diagonal point, or none when ``p`` is on the edge. It calls some false eyes in seki true and
        misses eyes that only a capture would make, which is fine for a playout policy.
        """
        color_at = self.color
        if color_at[p] != EMPTY:
            return False
        for n in self.geometry.neighbours[p]:
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
        self._place(p, color)

    def _place(self, p: int, color: int) -> None:
        """Put a stone on ``p`` (already removed from ``empties``): merge chains, capture, set the ko point."""
        color_at, head, members, libs = self.color, self.head, self.members, self.libs
        neighbours = self.geometry.neighbours[p]
        color_at[p] = color
        opponent = 3 - color
        # Join the stone to the friendly chains around it; relabel the smaller chains into the largest.
        own_libs: set[int] = set()
        joined: list[int] = []
        for n in neighbours:
            c = color_at[n]
            if c == EMPTY:
                own_libs.add(n)
            elif c == color:
                r = head[n]
                if r not in joined:
                    joined.append(r)
        if not joined:
            root = p
            members[p], libs[p] = [p], own_libs
        else:
            root = joined[0]
            if len(joined) > 1:
                root = max(joined, key=lambda r: len(members[r]))  # type: ignore[arg-type]
                base, base_libs = members[root], libs[root]
                for r in joined:
                    if r != root:
                        for q in members[r]:  # type: ignore[union-attr]
                            head[q] = root
                        base.extend(members[r])  # type: ignore[union-attr,arg-type]
                        base_libs |= libs[r]  # type: ignore[operator]
                        members[r] = libs[r] = None
            members[root].append(p)  # type: ignore[union-attr]
            root_libs = libs[root]
            root_libs |= own_libs  # type: ignore[operator]
            root_libs.discard(p)  # type: ignore[union-attr]
        head[p] = root
        # Take the liberty from the opponent chains around it and remove those left without any.
        captured, last_captured = 0, PASS
        for n in neighbours:
            if color_at[n] == opponent:
                chain_libs = libs[head[n]]
                chain_libs.discard(p)  # type: ignore[union-attr]
                if not chain_libs:
                    last_captured = n
                    captured += self._remove(head[n], color)
        self.captures[color] += captured
        # Simple ko: a single stone that captured a single stone and now has that point as its only liberty.
        if captured == 1 and len(members[root]) == 1 and len(libs[root]) == 1:  # type: ignore[arg-type]
            self.ko = last_captured
        else:
            self.ko = PASS

    def _remove(self, root: int, capturer: int) -> int:
        """Remove the chain ``root``; its points become liberties of the ``capturer`` chains around them."""
        color_at, head, libs, neighbours = self.color, self.head, self.libs, self.geometry.neighbours
        stones = self.members[root]
        assert stones is not None
        for q in stones:
            color_at[q] = EMPTY
        for q in stones:
            for n in neighbours[q]:
                if color_at[n] == capturer:
                    libs[head[n]].add(q)  # type: ignore[union-attr]
        self.empties.extend(stones)
        self.members[root] = self.libs[root] = None
        return len(stones)

    def random_move(self, color: int, rng_random: Any, banned: frozenset[int] = frozenset()) -> int:
        """A uniformly random legal move for ``color`` that does not fill its own true eye, or PASS if none.

        Draws from ``empties`` without replacement: a rejected point is swapped behind the shrinking candidate
        range, so each empty point is tested at most once. ``rng_random`` is a ``random.Random().random`` method.
        ``banned`` are further points to refuse (the game's ko/superko bans on the first move). The chosen point
        is removed from ``empties``; :meth:`_place` must follow.
        """
        empties, color_at, head, libs = self.empties, self.color, self.head, self.libs
        neighbours, diagonals = self.geometry.neighbours, self.geometry.diagonals
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
                        if not ok and len(libs[head[n]]) > 1:  # type: ignore[arg-type]
                            ok = True
                    elif c == opponent:
                        eyeish = False
                        if len(libs[head[n]]) == 1:  # type: ignore[arg-type]
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
                if ok:
                    last = empties.pop()
                    if i < len(empties):
                        empties[i] = last
                    return p
            remaining -= 1
            empties[i], empties[remaining] = empties[remaining], p
        return PASS

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
        color_at, neighbours = self.color, self.geometry.neighbours
        region, stack, inside, touches = [start], [start], {start}, 0
        while stack:
            p = stack.pop()
            for n in neighbours[p]:
                c = color_at[n]
                if c == EMPTY:
                    if n not in inside:
                        inside.add(n)
                        region.append(n)
                        stack.append(n)
                elif c != BORDER:
                    touches |= c
        return region, touches



# -- running playouts --------------------------------------------------------------------------------------------


@dataclass
class PlayoutStats:
    """Results of a batch of playouts from one position, from the side to move's point of view.

    ``ownership_sum`` adds +1 for each playout in which the side to move owns the point at the end, -1 when the
    opponent does.
    """

    size: int
    playouts: int = 0
    wins: int = 0
    draws: int = 0
    score_sum: float = 0.0
    score_sq_sum: float = 0.0
    ownership_sum: list[float] = field(default_factory=list)

    @property
    def losses(self) -> int:
        """Playouts lost by the side to move."""
        return self.playouts - self.wins - self.draws

    @property
    def win_rate(self) -> float:
        """Fraction of playouts won by the side to move, a draw counting half."""
        return (self.wins + 0.5 * self.draws) / self.playouts if self.playouts else 0.5

    @property
    def score_mean(self) -> float:
        """Mean final score (side to move minus opponent, komi included)."""
        return self.score_sum / self.playouts if self.playouts else 0.0

    @property
    def score_stdev(self) -> float:
        """Standard deviation of the final scores over the playouts."""
        if not self.playouts:
            return 0.0
        mean = self.score_mean
        return math.sqrt(max(0.0, self.score_sq_sum / self.playouts - mean * mean))

    def ownership(self) -> np.ndarray:
        """Mean ownership per point (float32, flat order, +1 = side to move)."""
        if not self.playouts:
            return np.zeros(self.size * self.size, dtype=np.float32)
        return (np.asarray(self.ownership_sum, dtype=np.float64) / self.playouts).astype(np.float32)


def board_from_position(position: PlayoutPosition) -> PlayoutBoard:
    """The playout board for ``position``; copy it (:meth:`PlayoutBoard.copy`) for each playout."""
    return PlayoutBoard.from_stones(position.stones, position.size)


def play_out(
    board: PlayoutBoard,
    to_play: int,
    rng_random: Any,
    *,
    banned: frozenset[int] = frozenset(),
    passes: int = 0,
    max_moves: int | None = None,
) -> int:
    """Play random moves on ``board`` (modified in place) until two consecutive passes; return the moves played.

    ``banned`` (padded points) are refused on the first move only; ``passes`` is the number of passes that ended
    the game so far. ``max_moves`` (default three times the board area) stops endless ko fights, which simple ko
    allows in rare cycles; the board is then scored as it stands.
    """
    size = board.geometry.size
    limit = 3 * size * size if max_moves is None else max_moves
    color, moves = to_play, 0
    while passes < 2 and moves < limit:
        p = board.random_move(color, rng_random, banned)
        banned = frozenset()
        if p == PASS:
            passes += 1
            board.ko = PASS
        else:
            passes = 0
            board._place(p, color)
        color = 3 - color
        moves += 1
    return moves


def final_score(board: PlayoutBoard, owners: Sequence[int], position: PlayoutPosition) -> float:
    """Score of a finished playout from White's view (positive = White ahead), komi included.

    Area scoring counts stones plus one-colour empty regions; territory scoring counts the empty regions plus the
    stones each side captured, in the game so far and in the playout. The seki tax of territory rules is not applied
    (``GameState.score`` does not apply it either); the stone-scoring tax is.
    """
    if position.territory:
        black_area = sum(1 for p, o in zip(board.geometry.points, owners) if o == BLACK and board.color[p] == EMPTY)
        white_area = sum(1 for p, o in zip(board.geometry.points, owners) if o == WHITE and board.color[p] == EMPTY)
        black_area += position.captures[0] + board.captures[BLACK]
        white_area += position.captures[1] + board.captures[WHITE]
    else:
        black_area = sum(1 for o in owners if o == BLACK)
        white_area = sum(1 for o in owners if o == WHITE)
    if position.tax_all:
        taxes = group_taxes([board.color[p] for p in board.geometry.points], board.geometry.size)
        black_area -= taxes[BLACK]
        white_area -= taxes[WHITE]
    return white_area - black_area + position.komi


def run_playouts(
    position: PlayoutPosition,
    count: int,
    rng: random.Random,
    *,
    max_moves: int | None = None,
    template: PlayoutBoard | None = None,
) -> PlayoutStats:
    """Run ``count`` independent playouts from ``position`` and collect their results.

    ``template`` is the position's board if the caller has already built it (it is copied, not modified).
    """
    if template is None:
        template = board_from_position(position)
    geometry = template.geometry
    banned = frozenset(geometry.points[m] for m in position.banned)
    me = position.to_play
    sign = 1.0 if me == WHITE else -1.0  # turns White's view into the side to move's
    stats = PlayoutStats(size=position.size, ownership_sum=[0.0] * (position.size * position.size))
    ownership = stats.ownership_sum
    for _ in range(count):
        board = template.copy()
        play_out(board, me, rng.random, banned=banned, passes=position.consecutive_passes, max_moves=max_moves)
        owners = board.owners()
        score = sign * final_score(board, owners, position)
        stats.playouts += 1
        stats.score_sum += score
        stats.score_sq_sum += score * score
        if score > 0:
            stats.wins += 1
        elif score == 0:
            stats.draws += 1
        for i, owner in enumerate(owners):
            if owner:
                ownership[i] += 1.0 if owner == me else -1.0
    return stats


# -- policy --------------------------------------------------------------------------------------------------------


def legal_board_moves(board: PlayoutBoard, position: PlayoutPosition) -> list[int]:
    """Flat board moves legal for the side to move: the game's own list if the position has one, else the board's
    (simple ko, no suicide, plus the position's bans)."""
    if position.legal_moves is not None:
        return list(position.legal_moves)
    banned = set(position.banned)
    points = board.geometry.points
    return [m for m, p in enumerate(points) if m not in banned and board.is_legal(p, position.to_play)]


def move_priors(
    board: PlayoutBoard,
    legal: Sequence[int],
    color: int,
    *,
    capture_weight: float = 3.0,
    escape_weight: float = 2.0,
    eye_weight: float = 0.05,
    pass_weight: float = 1.0,
) -> np.ndarray:
    """Simple policy priors: each legal move weighs 1, more if it captures or saves a chain in atari.

    A capture adds ``capture_weight`` per stone it takes (capped at 4 stones), an atari escape (a move on the last
    liberty of a friendly chain that leaves it more than one liberty) adds ``escape_weight`` per stone saved (also
    capped). Filling one's own true eye weighs only ``eye_weight``. Pass weighs ``pass_weight``. Returns a float32
    policy of ``size*size + 1`` entries summing to 1, zero on illegal points.
    """
    geometry = board.geometry
    area = geometry.size * geometry.size
    weights = np.zeros(area + 1, dtype=np.float64)
    for move in legal:
        p = geometry.points[move]
        weight = eye_weight if board.is_true_eye(p, color) else 1.0
        weight += capture_weight * min(4, _stones_captured_by(board, p, color))
        weight += escape_weight * min(4, _stones_saved_by(board, p, color))
        weights[move] = weight
    weights[area] = pass_weight
    return (weights / weights.sum()).astype(np.float32)


def uniform_policy(size: int, legal: Sequence[int]) -> np.ndarray:
    """Uniform float32 policy over ``legal`` flat moves and pass."""
    area = size * size
    policy = np.zeros(area + 1, dtype=np.float32)
    policy[list(legal)] = 1.0
    policy[area] = 1.0
    return policy / policy.sum()


def _stones_captured_by(board: PlayoutBoard, p: int, color: int) -> int:
    """Stones a move of ``color`` at ``p`` would capture: opponent chains whose last liberty is ``p``."""
    opponent, seen, total = 3 - color, set(), 0
    for n in board.geometry.neighbours[p]:
        if board.color[n] == opponent:
            root = board.head[n]
            if root not in seen and board.libs[root] == {p}:
                seen.add(root)
                total += len(board.members[root])  # type: ignore[arg-type]
    return total


def _stones_saved_by(board: PlayoutBoard, p: int, color: int) -> int:
    """Stones of ``color`` in atari at ``p`` that a move at ``p`` would leave with at least two liberties."""
    in_atari = {board.head[n] for n in board.geometry.neighbours[p]
                if board.color[n] == color and board.libs[board.head[n]] == {p}}
    if not in_atari:
        return 0
    trial = board.copy()
    trial.empties.remove(p)
    trial._place(p, color)
    if trial.liberties(p) < 2:
        return 0
    return sum(len(board.members[r]) for r in in_atari)  # type: ignore[arg-type]


# -- the evaluator -----------------------------------------------------------------------------------------------


def position_from_state(state: GameState) -> PlayoutPosition:
    """The playout view of a ``GameState``: stones, side to move, ko/superko bans, komi plus handicap bonus (as
    ``GameState.score`` counts it), scoring rule and tax, prisoners, passes and the game's legal moves."""
    rules = state.rules
    return PlayoutPosition(
        size=state.size,
        stones=tuple(int(v) for v in state.stones()),
        to_play=int(state.to_play),
        komi=float(state.komi) + float(rules.handicap_bonus(state.handicap)),
        territory=rules.scoring is Scoring.TERRITORY,
        tax_all=rules.tax is Tax.ALL,
        banned=tuple(state.banned_points()),
        captures=(state.captures(BLACK), state.captures(WHITE)),
        consecutive_passes=state.consecutive_passes,
        legal_moves=tuple(state.legal_moves()),
    )


class PlayoutEvaluator:
    """An ``Evaluator`` that judges positions by random playouts (no net); see the module docstring.

    Args:
        playouts: playouts per evaluated state (1 is classic MCTS: one playout per new node).
        priors: weight the policy towards captures and atari escapes (:func:`move_priors`) instead of uniform.
        seed: seed of the evaluator's random generator (None = from the OS).
        max_batch: states accepted per :meth:`evaluate` call.
        max_moves: cap on the moves of one playout (default three times the board area).
    """

    def __init__(
        self,
        playouts: int = 1,
        *,
        priors: bool = False,
        seed: int | None = None,
        max_batch: int = 64,
        max_moves: int | None = None,
    ) -> None:
        if playouts < 1:
            raise PlayoutError(f"playouts must be >= 1, got {playouts}")
        if max_batch < 1:
            raise PlayoutError(f"max_batch must be >= 1, got {max_batch}")
        self.playouts = playouts
        self.priors = priors
        self.max_batch = max_batch
        self.max_moves = max_moves
        self._rng = random.Random(seed)

    @staticmethod
    def is_spec(name: str) -> bool:
        """True if ``name`` names the playout evaluator (``playouts``, ``playouts:N``, ``playouts:N:priors``)."""
        return name.strip().lower().split(":")[0] == "playouts"

    @classmethod
    def from_spec(cls, name: str, **options: Any) -> PlayoutEvaluator:
        """Build from a model name as given to ``--model``: ``playouts[:N][:priors]``.

        ``N`` is the number of playouts per evaluation (default 1) and ``priors`` switches on the capture/escape
        priors. ``options`` may set ``seed``, ``max_batch`` and ``max_moves``; other keys (meant for nets) are ignored.

        Raises:
            PlayoutError: if ``name`` is not such a spec.
        """
        parts = [part.strip().lower() for part in name.split(":")]
        if parts[0] != "playouts" or len(parts) > 3:
            raise PlayoutError(f"not a playout evaluator spec: {name!r} (expected playouts[:N][:priors])")
        playouts, priors = 1, False
        for part in parts[1:]:
            if part == "priors":
                priors = True
            elif part.isdigit():
                playouts = int(part)
            else:
                raise PlayoutError(f"bad part {part!r} in {name!r} (expected a count or 'priors')")
        known = {key: options[key] for key in ("seed", "max_batch", "max_moves") if key in options}
        return cls(playouts, priors=priors, **known)

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        """One ``Evaluation`` per state, from the side to move's view (see the module docstring)."""
        return [self.evaluate_position(position_from_state(state)) for state in states]

    def evaluate_position(self, position: PlayoutPosition) -> Evaluation:
        """The ``Evaluation`` of a :class:`PlayoutPosition` (the same numbers :meth:`evaluate` gives a state)."""
        board = board_from_position(position)
        stats = run_playouts(position, self.playouts, self._rng, max_moves=self.max_moves, template=board)
        legal = legal_board_moves(board, position)
        if self.priors:
            policy = move_priors(board, legal, position.to_play)
        else:
            policy = uniform_policy(position.size, legal)
        win = stats.win_rate
        return Evaluation(
            policy=policy,
            win=win,
            loss=1.0 - win,
            no_result=0.0,
            score_mean=stats.score_mean,
            score_stdev=stats.score_stdev,
            lead=stats.score_mean,
            ownership=stats.ownership(),
        )


# -- benchmark -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayoutBenchmark:
    """What :func:`benchmark_playouts` measured on one board size."""

    size: int
    playouts: int
    moves: int
    seconds: float

    @property
    def playouts_per_second(self) -> float:
        """Scored playouts (with ownership) per second of wall time."""
        return self.playouts / self.seconds if self.seconds > 0 else 0.0

    @property
    def moves_per_playout(self) -> float:
        """Mean number of moves (passes included) in one playout."""
        return self.moves / self.playouts if self.playouts else 0.0


def benchmark_playouts(size: int, seconds: float = 5.0, seed: int = 1, komi: float = 7.5) -> PlayoutBenchmark:
    """Run scored playouts from the empty ``size`` board for about ``seconds`` on one core (for ``miai bench``).

    Each playout does what :func:`run_playouts` does for the evaluator: copy the board, play to the end, find the
    owners and score.
    """
    position = PlayoutPosition(size=size, stones=(0,) * (size * size), komi=komi)
    template = board_from_position(position)
    rng_random = random.Random(seed).random
    playouts = moves = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        for _ in range(10):
            board = template.copy()
            moves += play_out(board, BLACK, rng_random)
            final_score(board, board.owners(), position)
            playouts += 1
        elapsed = time.perf_counter() - start
    return PlayoutBenchmark(size=size, playouts=playouts, moves=moves, seconds=elapsed)
