"""The abstract player the GTP layer drives, and the plain data it exchanges with it.

The engine (``miai.engine.player.EnginePlayer``) implements :class:`Player`; tests use small fakes. The GTP
session owns the game (``miai.go.state.GameState``) and handles every board command itself; the player is
asked only for decisions (moves, dead stones, handicap points, analysis) and receives the settings it needs
(time control, parameters).

Conventions for everything the player reports:

- Moves are ``miai.go.coords`` flat indices (``PASS = -1``); :data:`RESIGN` is the string ``"resign"``.
- The colour argument of :meth:`Player.genmove` and :meth:`Player.analyze` may differ from ``state.to_play``
  (GTP allows ``genmove w`` when Black is to move); the player decides for that colour.
- Every value in an :class:`AnalysisSnapshot` is from the view of the analysed colour: winrate is that
  colour's winning probability in [0, 1], score lead is positive when that colour leads, ownership +1 means
  owned by that colour. The GTP layer converts to each command's format (lz- integers, kata- decimals).
- The player must not mutate the ``state`` it is given; it may copy it.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from miai.go.clock import TimeControl
from miai.go.coords import PASS, Color
from miai.go.state import GameState

RESIGN: Literal["resign"] = "resign"
GenmoveResult = Union[int, Literal["resign"]]


@dataclass(frozen=True)
class MoveRestriction:
    """``avoid``/``allow`` of lz-/kata-analyze and ``avoidMoves``/``allowMoves`` of the JSON analysis engine:
    ``moves`` of ``color`` are avoided (or the only ones allowed) for the first ``until_depth`` plies of the search
    (depth 0 is the root's move: ``until_depth`` 1 restricts the root only)."""

    color: Color
    moves: tuple[int, ...]
    until_depth: int


@dataclass(frozen=True)
class AnalyzeRequest:
    """What an analysis asked for: the one request of lz-analyze, kata-analyze, their genmove_analyze forms (KataGo's
    GTP extension keys) and the JSON analysis engine's queries (its ``include...`` fields, avoidMoves/allowMoves).

    ``interval``: seconds between two snapshots during the search (GTP's interval is in centiseconds, the JSON
    engine's reportDuringSearchEvery in seconds; None: only the final one); ``first_report``: seconds before the
    first (firstReportDuringSearchAfter; None: ``interval``).
    ``min_moves``/``max_moves``: how many candidate moves to report at least / at most (0 = no limit).
    ``avoid``/``allow``: root and deeper move restrictions, as KataGo applies them (:meth:`avoided_until`). The
    boolean flags ask for optional output fields; ``pv_visits`` of the JSON engine brings ``pvEdgeVisits`` too,
    and ``policy`` and ``moves_ownership_stdev`` are the JSON engine's only.
    """

    interval: float | None = 1.0
    first_report: float | None = None
    min_moves: int = 0
    max_moves: int = 0
    avoid: tuple[MoveRestriction, ...] = ()
    allow: tuple[MoveRestriction, ...] = ()
    root_info: bool = False
    ownership: bool = False
    ownership_stdev: bool = False
    moves_ownership: bool = False
    moves_ownership_stdev: bool = False
    pv_visits: bool = False
    pv_edge_visits: bool = False
    policy: bool = False

    def avoided_until(self, color: Color, size: int) -> dict[int, int]:
        """KataGo's avoidMoveUntilByLoc for ``color`` on a ``size`` board: each move ``color`` may not play near
        the root, with the depth (plies from the root, the root's move at depth 0) from which it may again. An
        ``allow`` forbids every other move, pass included; a move listed twice keeps its last depth, as in KataGo."""
        until: dict[int, int] = {}
        for restriction in self.allow:
            if restriction.color == color:
                listed = set(restriction.moves)
                until.update((move, restriction.until_depth) for move in (*range(size * size), PASS)
                             if move not in listed)
        for restriction in self.avoid:
            if restriction.color == color:
                until.update((move, restriction.until_depth) for move in restriction.moves)
        return {move: depth for move, depth in until.items() if depth > 0}

    def root_moves(self, color: Color, size: int) -> set[int] | None:
        """The root moves ``color`` may play under ``avoid``/``allow`` (None: every move)."""
        until = self.avoided_until(color, size)
        if not until:
            return None
        return {move for move in (*range(size * size), PASS) if move not in until}


@dataclass(frozen=True)
class MoveInfo:
    """One candidate move of an analysis snapshot, from the analysed colour's view (see module docstring).

    What the GTP layer prints of a move: a player fills it from its own records (the engine from
    ``miai.engine.core.results.MoveResult``). Optional fields left ``None`` are omitted from the output (a player that
    has no such figure); a move's ``order`` is its place in the snapshot. ``weight`` is KataGo's: the child's total
    value weight (its visits when every visit weighs 1).
    """

    move: int
    visits: int
    winrate: float
    prior: float
    lcb: float
    pv: tuple[int, ...]
    score_lead: float | None = None
    score_mean: float | None = None
    score_stdev: float | None = None
    utility: float | None = None
    utility_lcb: float | None = None
    edge_visits: int | None = None
    weight: float | None = None
    play_value: float | None = None  # the player's own move-choice value (KataGo's play selection value); not printed
    pv_visits: tuple[int, ...] | None = None
    pv_edge_visits: tuple[int, ...] | None = None
    ownership: Sequence[float] | None = None


@dataclass(frozen=True)
class RootInfo:
    """Whole-position figures (kata-analyze ``rootInfo``), from the analysed colour's view."""

    visits: int
    winrate: float
    score_lead: float
    score_mean: float | None = None
    score_stdev: float | None = None
    utility: float | None = None


@dataclass(frozen=True)
class AnalysisSnapshot:
    """The search's current view: candidate moves best first (their order is the reported ``order``).

    ``ownership``/``ownership_stdev``: ``size * size`` values in flat order (row 0 is the top row), only when
    the request asked for them.
    """

    moves: tuple[MoveInfo, ...]
    root: RootInfo | None = None
    ownership: Sequence[float] | None = None
    ownership_stdev: Sequence[float] | None = None


Emit = Callable[[AnalysisSnapshot], None]


@dataclass(frozen=True)
class BenchmarkResult:
    """What kata-benchmark reports: positions searched, their visits, net evaluations and batches, and the wall
    time they took; ``threads`` is what stands for KataGo's numSearchThreads (miai's leaves per batch)."""

    positions: int
    visits: int
    net_evals: int
    batches: int
    seconds: float
    threads: int


@dataclass(frozen=True)
class ClockReading:
    """``time_left``: seconds left and stones (Canadian) or periods (byo-yomi) left; 0 while in main time."""

    color: Color
    seconds: float
    stones: int


class Player(ABC):
    """What the GTP session needs from an engine. Only the three abstract methods are mandatory."""

    @abstractmethod
    def genmove(
        self,
        state: GameState,
        color: Color,
        *,
        cleanup: bool = False,
        analysis: AnalyzeRequest | None = None,
        emit: Emit | None = None,
    ) -> GenmoveResult:
        """Choose a move for ``color``: a legal flat index, ``PASS`` or :data:`RESIGN`. The session plays it.

        ``cleanup``: kgs-genmove_cleanup; capture every dead opponent stone before passing.
        ``analysis``/``emit``: for ``*-genmove_analyze``; call ``emit`` every ``analysis.interval`` seconds
        while searching (not interrupted by input, as in KataGo).
        """

    @abstractmethod
    def analyze(
        self,
        state: GameState,
        color: Color,
        request: AnalyzeRequest,
        emit: Emit,
        stop: threading.Event,
    ) -> None:
        """Analyse with ``color`` to move until ``stop`` is set, calling ``emit`` every ``request.interval`` seconds.

        ``stop`` may already be set on entry (input was pending); then emit at most one snapshot and return.
        """

    @abstractmethod
    def final_status(self, state: GameState) -> list[int]:
        """The points of every stone the player considers dead at the end of the game.

        It must agree with the player's own decision to pass (KGS uploads this list; see GTP.md 5.1).
        """

    def free_handicap(self, state: GameState, count: int) -> list[int] | None:
        """``count`` points where Black wants free handicap stones, or ``None`` for the session's default."""
        return None

    def raw_nn(self, state: GameState, symmetry: int | None, optimism: float) -> str:
        """kata-raw-nn: the net's raw outputs, KataGo's text layout. ``symmetry`` None means all (averaged)."""
        raise NotImplementedError("this player has no neural net")

    def set_time_control(self, control: TimeControl) -> None:
        """The clock for both colours (GTP gives no way to set them apart); ``miai.go.clock`` defines it."""

    def time_left(self, reading: ClockReading) -> None:
        """A clock reading for one colour, typically sent just before ``genmove``."""

    def command_arrived(self, when: float) -> None:
        """The next command could start at ``when`` (``time.monotonic()``): the later of its line's arrival and
        the answer to the command before it. A ``genmove``'s clock runs from then."""

    def get_param(self, name: str) -> str:
        """kata-get-param. Raises ``KeyError`` for an unknown name."""
        raise KeyError(name)

    def set_param(self, name: str, value: str) -> None:
        """kata-set-param. Raises ``KeyError`` for an unknown name, ``ValueError`` for a bad value."""
        raise KeyError(name)

    def list_params(self) -> list[str]:
        """kata-list-params: the KataGo parameter names :meth:`set_param` honours."""
        return []

    def models(self, size: int) -> list[dict[str, Any]]:
        """kata-get-models: the nets that evaluate ``size`` x ``size`` positions, KataGo's fields where they apply
        (``name``, ``internalName``, ``version``, ``maxBatchSize``, ``usesHumanSLProfile``, ``usingFP16``)."""
        return []

    def benchmark(self, states: Sequence[GameState], visits: int) -> BenchmarkResult:
        """kata-benchmark: search each of ``states`` afresh with ``visits`` visits (moves are not played)."""
        raise NotImplementedError("this player has no search to benchmark")

    def clear_cache(self) -> None:
        """Forget cached evaluations and search trees."""

    def search_stats(self) -> dict[str, Any]:
        """Statistics of the last search (JSON-serialisable), for miai-search_stats."""
        return {}

    def search_graph(self, state: GameState) -> dict[str, Any]:
        """The current search graph as plain data, for miai-graph_dump (schema in docs/gtp.md)."""
        raise NotImplementedError("this player has no search graph")

    def start_pondering(self, state: GameState, color: Color) -> None:
        """The session is idle waiting for input; ``color`` is to move. Only called if pondering is enabled."""

    def stop_pondering(self) -> None:
        """Input arrived: stop pondering promptly (before the command is executed)."""

    def on_state_changed(self, state: GameState) -> None:
        """A command changed the game (play, undo, boardsize, loadsgf, ...)."""

    def set_interrupt(self, event: threading.Event) -> None:
        """The session's interrupt signal, set when ``quit`` arrives while a command runs: a running
        :meth:`genmove` should then stop soon and answer its best move so far (the session answers ``quit``
        right after). Players that ignore it finish their move first."""
