"""Running playouts from a position: the position type, one playout, scoring, many playouts, a benchmark."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from miai.go.coords import PASS
from miai.go.scoring import group_taxes
from miai.nets.playouts.board import BLACK, EMPTY, WHITE, PlayoutBoard, PlayoutError


@dataclass(frozen=True)
class PlayoutPosition:
    """Everything a playout needs to know about a game, independent of ``GameState``.

    ``stones`` is the flat board (``y * size + x``, ``y = 0`` the top row) with 0 empty, 1 black, 2 white.
    ``banned`` are empty points the side to move may not play now (ko or superko); they apply to the first
    playout move only, later kos are simple kos. ``komi`` is the full compensation White receives (komi plus any
    handicap bonus). ``territory`` selects territory scoring (else area); ``tax_all`` the stone-scoring tax (each
    group pays up to two points for its eyes). ``captures`` are the stones each colour has captured so far
    ``(by black, by white)``, used only under territory scoring. ``legal_moves``, when given, is the game's own
    list of legal board moves (it knows superko and the suicide rule); otherwise the board works it out with simple
    ko. ``last_move`` is the flat point of the move just played (PASS if none), which tactical playouts answer
    first.
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
    last_move: int = PASS

    def __post_init__(self) -> None:
        if not 2 <= self.size <= 25:
            raise PlayoutError(f"board size {self.size} outside 2..25")
        if len(self.stones) != self.size * self.size:
            raise PlayoutError(f"{len(self.stones)} stones for a {self.size}x{self.size} board")
        if self.to_play not in (BLACK, WHITE):
            raise PlayoutError(f"side to move must be 1 (black) or 2 (white), got {self.to_play}")
        if not set(self.stones) <= {EMPTY, BLACK, WHITE}:
            raise PlayoutError("stones must be 0, 1 or 2")
        area = self.size * self.size
        if any(not 0 <= m < area for m in self.banned) or not -1 <= self.last_move < area:
            raise PlayoutError("banned points and the last move must be flat points of the board (or -1 for pass)")

    @staticmethod
    def from_stones(stones: Sequence[int] | np.ndarray, size: int, **kwargs: Any) -> PlayoutPosition:
        """Build a position from any flat sequence or numpy array of 0/1/2 values."""
        return PlayoutPosition(size=size, stones=tuple(int(v) for v in stones), **kwargs)


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
    # All-moves-as-first (run_playouts(amaf=True)): rows Black, White; see miai.nets.evaluator.Amaf.
    amaf_first: np.ndarray | None = None
    amaf_white_wins: np.ndarray | None = None
    white_win_total: float = 0.0

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
    tactical: bool = False,
    last: int = PASS,
    first: dict[int, int] | None = None,
    no_self_atari: bool = False,
    patterns: bool = False,
) -> int:
    """Play random moves on ``board`` (modified in place) until two consecutive passes; return the moves played.

    ``banned`` (padded points) are refused on the first move only; ``passes`` is the number of passes that ended
    the game so far. ``max_moves`` (default three times the board area) stops endless ko fights, which simple ko
    allows in rare cycles; the board is then scored as it stands. With ``tactical``, each move first looks for an
    urgent answer to the opponent's previous move (:meth:`PlayoutBoard.urgent_moves`: capture it, or save a chain
    it put in atari) and plays one at random if there is any; ``last`` is the padded point of the move played
    just before the playout (PASS if none or unknown). ``first``, when given, receives each padded point the
    first time it is played, with the colour that played it (all-moves-as-first statistics). ``no_self_atari``
    refuses random moves that put a chain of two or more stones in atari (:meth:`PlayoutBoard.bad_self_atari`).
    With ``patterns``, a move without an urgent answer first looks for MoGo's 3x3 patterns around the previous move
    (:meth:`PlayoutBoard.pattern_moves`) and plays one of the matches at random. Neither rule applies to the first
    move when the game bans points (the urgent and pattern moves do not check the bans).
    """
    size = board.geometry.size
    limit = 3 * size * size if max_moves is None else max_moves
    color, moves = to_play, 0
    while passes < 2 and moves < limit:
        urgent = board.urgent_moves(color, last) if tactical and not banned else None
        if not urgent and patterns and not banned:
            urgent = board.pattern_moves(color, last, no_self_atari)
        if urgent:
            p = urgent[int(rng_random() * len(urgent))]
            board.empties.remove(p)  # as draw_move does for the points it returns
        else:
            p = board.draw_move(color, rng_random, banned, no_self_atari)
        banned = frozenset()
        last = p
        if p == PASS:
            passes += 1
            board.play(PASS, color)
        else:
            passes = 0
            board.place(p, color)
            if first is not None and p not in first:
                first[p] = color
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
    tactical: bool = False,
    amaf: bool = False,
    no_self_atari: bool = False,
    patterns: bool = False,
) -> PlayoutStats:
    """Run ``count`` independent playouts from ``position`` and collect their results.

    ``template`` is the position's board if the caller has already built it (it is copied, not modified);
    ``tactical`` selects the capture/escape playout policy of :func:`play_out`; ``amaf`` also collects which colour
    played each point first in each playout, and who won it (RAVE); ``no_self_atari`` and ``patterns`` select the
    playout rules of the same names of :func:`play_out`.
    """
    if template is None:
        template = board_from_position(position)
    geometry = template.geometry
    banned = frozenset(geometry.points[m] for m in position.banned)
    last = PASS if position.last_move == PASS else geometry.points[position.last_move]
    me = position.to_play
    sign = 1.0 if me == WHITE else -1.0  # turns White's view into the side to move's
    stats = PlayoutStats(size=position.size, ownership_sum=[0.0] * (position.size * position.size))
    ownership = stats.ownership_sum
    flat = {p: i for i, p in enumerate(geometry.points)} if amaf else {}
    if amaf:
        stats.amaf_first = np.zeros((2, len(flat)))
        stats.amaf_white_wins = np.zeros((2, len(flat)))
    for _ in range(count):
        board = template.copy()
        first: dict[int, int] | None = {} if amaf else None
        play_out(board, me, rng.random, banned=banned, passes=position.consecutive_passes, max_moves=max_moves,
                 tactical=tactical, last=last, first=first, no_self_atari=no_self_atari, patterns=patterns)
        owners = board.owners()
        white_score = final_score(board, owners, position)
        score = sign * white_score
        if first is not None:
            _add_amaf(stats, first, flat, 1.0 if white_score > 0 else 0.5 if white_score == 0 else 0.0)
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


def _add_amaf(stats: PlayoutStats, first: dict[int, int], flat: dict[int, int], white_win: float) -> None:
    """Add one playout's first moves (padded point -> colour) and White's result to ``stats``' AMAF arrays."""
    assert stats.amaf_first is not None and stats.amaf_white_wins is not None
    rows = [0 if c == BLACK else 1 for c in first.values()]  # row 0 Black, row 1 White
    cols = [flat[p] for p in first]
    stats.amaf_first[rows, cols] += 1.0
    if white_win:
        stats.amaf_white_wins[rows, cols] += white_win
    stats.white_win_total += white_win


# -- benchmark -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlayoutBenchmark:
    """What :func:`benchmark_playouts` measured on one board size."""

    size: int
    playouts: int
    moves: int
    seconds: float
    cpu_seconds: float = 0.0

    @property
    def playouts_per_second(self) -> float:
        """Scored playouts per second of wall time."""
        return self.playouts / self.seconds if self.seconds > 0 else 0.0

    @property
    def playouts_per_cpu_second(self) -> float:
        """Scored playouts per second of this process's CPU time (steadier than wall time on a shared machine)."""
        return self.playouts / self.cpu_seconds if self.cpu_seconds > 0 else 0.0

    @property
    def moves_per_playout(self) -> float:
        """Mean number of moves (passes included) in one playout."""
        return self.moves / self.playouts if self.playouts else 0.0


def benchmark_playouts(
    size: int, seconds: float = 5.0, seed: int = 1, komi: float = 7.5, *, tactical: bool = False,
    no_self_atari: bool = False, patterns: bool = False,
) -> PlayoutBenchmark:
    """Run scored playouts from the empty ``size`` board for about ``seconds`` on one core (for ``miai bench``).

    Each playout does what :func:`run_playouts` does for the evaluator: copy the board, play to the end, find the
    owners and score, under the playout rules named by ``tactical``, ``no_self_atari`` and ``patterns``.
    """
    position = PlayoutPosition(size=size, stones=(0,) * (size * size), komi=komi)
    template = board_from_position(position)
    rng_random = random.Random(seed).random
    playouts = moves = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    elapsed = 0.0
    while elapsed < seconds:
        for _ in range(10):
            board = template.copy()
            moves += play_out(board, BLACK, rng_random, tactical=tactical, no_self_atari=no_self_atari,
                              patterns=patterns)
            final_score(board, board.owners(), position)
            playouts += 1
        elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return PlayoutBenchmark(size=size, playouts=playouts, moves=moves, seconds=elapsed, cpu_seconds=cpu)
