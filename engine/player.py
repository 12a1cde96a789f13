"""The engine behind the GTP session: search-backed move choice, analysis, dead stones, clocks and pondering.

:class:`EnginePlayer` implements :class:`miai.gtp.player.Player`. It owns one :class:`~miai.engine.search.Search`
(so the graph is reused from move to move) and turns the search's snapshots into the GTP layer's
:class:`~miai.gtp.player.AnalysisSnapshot` (every number from the analysed colour's view).

Move choice on top of the search:

- the search offers every legal move, own eyes included, as KataGo's does (``search.forbid_eye_filling``, on in
  playout mode, leaves own single-point true eyes out), and values double-pass endings by the rules' count with
  every stone alive (``GameState.score``), so it does not pass into a lost count and it captures dead stones before
  passing (what CGOS's Tromp-Taylor scoring needs);
- ``kgs-genmove_cleanup`` removes the opponent stones the engine holds dead (by the ownership ``final_status``
  reads): it searches only the liberties of those chains, so every move attacks one until they are captured, and
  it passes once none is left;
- resignation follows KataGo's GTP rule (``miai.engine.resign``): ``player.resign_consecutive`` searches of this
  game in a row below ``player.resign_threshold``, unless the game is young, close, or a handicap game White may
  still catch up in (0 turns it off).

Time: a move's clock starts when ``genmove`` is called, so the net's first run on a new board size (done early
by :meth:`EnginePlayer.warm_up`) and tree reuse are charged to it; a clock's budget is met by the search not
beginning a step that would end past it (it checks the time between batches); a genmove with no limit at all gets
the default ``search.max_time`` and a warning; ``quit`` arriving during a genmove stops it (see ``set_interrupt``).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import gc
import logging
import math
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from miai.engine.config import Config, ConfigError, PlayerConfig, SearchConfig, get_option, list_options
from miai.engine.katago_config import MAPPED, KatagoConfigError, apply_katago, closest_key, kind, miai_key
from miai.engine.handicap import dynamic_pda_for_white
from miai.engine.resign import should_resign
from miai.engine.search import Search, leaves_per_batch
from miai.engine.snapshot import (Snapshot, average_ownership, ownership_moments, pv_visits, search_details,
                                  search_info_log, search_summary, with_symmetric_copies)
from miai.engine.timecontrol import Lateness, budget, cpu_share, cpu_times
from miai.go.clock import Clock, TimeControl, TimeSystem
from miai.go.coords import PASS, Color, to_gtp
from miai.go.geometry import neighbor_table
from miai.go.scoring import dead_chains
from miai.go.state import GameState
from miai.nets.evaluator import CachingEvaluator, Evaluator, EvaluatorError, onnx_net, same_advantage, set_playout_advantage
from miai.gtp.player import (
    RESIGN,
    AnalysisSnapshot,
    AnalyzeRequest,
    BenchmarkResult,
    ClockReading,
    Emit,
    GenmoveResult,
    MoveInfo,
    Player,
)

log = logging.getLogger(__name__)

# The config sections a running player reads at every search: kata-set-param may change their options.
_RUNTIME_SECTIONS = ("search.", "player.")
# Options of those sections read once at start: the GTP session ponders only when player.ponder was on then.
_START_ONLY = frozenset({"player.ponder"})

# A chain is dead when its mean ownership from its own colour's view is below minus this: stones the search gives
# to neither side (seki, unsettled fights) stay on the board.
_DEAD_OWNERSHIP = 0.3
# Visits of the short search that estimates dead stones at the end of a game.
_STATUS_VISITS = 64
# A genmove whose config sets no limit at all (analysis configs) searches this long: the built-in max_time.
_UNLIMITED_GENMOVE_SECONDS = SearchConfig().max_time
# Share of a clock's budget kept against the scheduler's jitter on a busy machine (a batch that takes longer than the
# last).
_JITTER_SHARE = 0.03
# Shortest search time handed to the search (0 would mean "no limit" to it).
_MIN_SEARCH_SECONDS = 0.001


class EnginePlayer(Player):
    """A :class:`Player` that thinks with a graph search over ``evaluator``."""

    def __init__(self, evaluator: Evaluator, config: Config | None = None) -> None:
        self.evaluator = evaluator
        self.config = config or Config()
        self.search = Search(evaluator, self.config.search)
        self._time_control = TimeControl()
        self._clocks: dict[Color, Clock] = {}
        self._ponder_thread: threading.Thread | None = None
        self._ponder_stop = threading.Event()
        self._interrupt: threading.Event | None = None
        self._batch_seconds: dict[int, float] = {}  # board size -> seconds one search batch takes (measured)
        self._lateness = Lateness()  # how long after its search's time a move is answered (measured)
        self._warned_unlimited = False
        self._game = _GameValues()
        self._arrival: float | None = None  # when the command being run could start (command_arrived)
        self._last_ownership: tuple[bytes, np.ndarray] | None = None  # the last genmove's stones, Black's ownership

    # ------------------------------------------------------------------------------------------ decisions
    def genmove(
        self,
        state: GameState,
        color: Color,
        *,
        cleanup: bool = False,
        analysis: AnalyzeRequest | None = None,
        emit: Emit | None = None,
    ) -> GenmoveResult:
        """Search from ``state`` with ``color`` to move and choose a move (see the module docstring)."""
        # The controller's clock runs since the command could start (its line's arrival, or the answer to the
        # command before it when it was queued behind one): everything from then on is charged to the move.
        start = min(time.monotonic(), self._arrival or math.inf)
        self._arrival = None
        with _no_collection_pauses():
            return self._genmove(state, color, start, cleanup, analysis, emit)

    def _genmove(self, state: GameState, color: Color, start: float, cleanup: bool, analysis: AnalyzeRequest | None,
                 emit: Emit | None) -> GenmoveResult:
        cpu = cpu_times()
        self.stop_pondering()
        self.warm_up(state)
        root = _root_for(state, color, fresh_passes=cleanup)
        targets: list[int] | None = None
        if cleanup:
            targets = self._cleanup_targets(root)
            if not targets:  # nothing the engine holds dead is left: the cleanup is over
                self._clock(color).charge(time.monotonic() - start)
                return PASS
        seconds, deadline = self._move_seconds(root, color, start)
        calls_before = self.search.batches
        self._set_playout_advantage(root, self._game.advantage(root, self.config.player))
        snapshot = self._search(root, self._interrupt, analysis, emit, seconds, allow=targets)
        self._game.record(root, snapshot)
        self._remember_ownership(root, snapshot)
        if analysis is not None and emit is not None:
            # KataGo prints the final analysis before ``play``, however short the search was: a GUI always sees
            # the figures of the move it is shown.
            emit(self._analysis_snapshot(snapshot, root, analysis))
        self._note_batch_time(root.size, snapshot, self.search.batches - calls_before)
        move: GenmoveResult
        if targets is not None:
            move = self._cleanup_move(snapshot, targets)
        elif snapshot.root.visits > 0 and should_resign(root, self._game.white_values, self._game.white_lead,
                                                        self.config.player):
            move = RESIGN
        else:
            move = self.search.best_move(snapshot)  # with one visit: the policy's top move
        _log_search(snapshot, root.size, move)
        answered = time.monotonic()
        if deadline is not None:
            share = cpu_share(cpu, cpu_times())
            log.debug("genmove: %.3f s, the search %.3f s of %.3f s, answered %+.3f s after the search's planned end "
                      "(%.3f s kept for it); the CPU %s of the time it was wanted", answered - start, snapshot.elapsed,
                      seconds, answered - deadline, self._lateness.reserve(root.size),
                      "?" if share is None else f"{share:.0%}")
            self._lateness.note(root.size, answered - deadline)
            self._lateness.note_share(share)
        self._clock(color).charge(answered - start)
        return move

    def analyze(
        self,
        state: GameState,
        color: Color,
        request: AnalyzeRequest,
        emit: Emit,
        stop: threading.Event,
    ) -> None:
        """Search until ``stop`` is set, emitting a snapshot every ``request.interval_cs``."""
        self.stop_pondering()
        root = _root_for(state, color)
        self._set_playout_advantage(root, 0.0)  # analysis shows the position as it is (KataGo's analysis params)
        final = self._search(root, stop, request, emit, None)
        emit(self._analysis_snapshot(final, root, request))

    def final_status(self, state: GameState) -> list[int]:
        """Stones whose owner the search's ownership says has lost them (empty without ownership).

        The ownership is that of the last genmove's search when it searched these very stones (the engine passed,
        then its opponent: the dead stones are the ones it passed over), otherwise a short search's.
        """
        ownership = self._black_ownership(state)
        if ownership is None:
            return []
        return dead_chains(state.board.colors(), state.size, ownership.tolist(), _DEAD_OWNERSHIP)

    def raw_nn(self, state: GameState, symmetry: int | None, optimism: float) -> str:
        """kata-raw-nn through the ONNX evaluator (every symmetry when ``symmetry`` is None)."""
        from miai.nets.rawnn import format_raw_nn, raw_nn

        net = onnx_net(self.evaluator, state.size)
        if net is None:
            raise NotImplementedError("kata-raw-nn needs a neural net (this engine runs without one)")
        symmetries = list(range(8)) if symmetry is None else [symmetry]
        return format_raw_nn(raw_nn(net, state, symmetries, optimism), state.size)

    # ----------------------------------------------------------------------------------- search plumbing
    def _search(
        self,
        root: GameState,
        stop: threading.Event | None,
        request: AnalyzeRequest | None,
        emit: Emit | None,
        seconds: float | None,
        allow: Collection[int] | None = None,
    ) -> Snapshot:
        """Search ``root`` until ``stop``, the config's visit limits or ``seconds`` (0 = no time limit); with
        ``seconds`` None (analysis) only ``stop`` or the node cap ends it. ``allow`` (and the request's allow and
        avoid) restrict the root moves."""
        self.search.set_root(root)
        on_progress: Callable[[Snapshot], None] | None = None
        interval = 1.0
        if request is not None and emit is not None:
            interval = max(request.interval_seconds, 0.05)

            def on_progress(snapshot: Snapshot) -> None:
                emit(self._analysis_snapshot(snapshot, root, request))

        if request is not None:
            requested = _allowed_moves(request, root.to_play, root.size)
            if requested is not None:
                allow = requested if allow is None else set(allow) & requested
        if seconds is None:  # analysis: only stop (or the node cap) ends it
            return self.search.run(stop, on_progress, max_visits=0, max_playouts=0, max_time=0.0,
                                   progress_interval=interval, allow=allow)
        return self.search.run(stop, on_progress, max_time=seconds, progress_interval=interval, allow=allow,
                               step_seconds=self._batch_seconds.get(root.size, 0.0))

    def _move_seconds(self, root: GameState, color: Color, start: float) -> tuple[float, float | None]:
        """How long the search of this move may run from now (0 = no time limit; visits then end it), and when the
        clock's budget wants its search ended (None: no clock limits it, or it wants the move answered at once).

        The clock's budget and ``max_time`` count from ``start``; the search does not begin a step that would end
        past the time it is given (:meth:`_search` tells it how long a batch took before). Only the clock's budget
        gives up a share and the answer's time (:class:`~miai.engine.timecontrol.Lateness`, as measured in this
        game), for the controller counts them against the clock; ``max_time`` is the search's own time, as KataGo's
        ``maxTime`` (its ``lagBuffer`` applies to time controls only; with both taken off, a move under
        ``max_time`` 0.5 searched 0.44 s beside KataGo's 0.5 s).
        """
        cfg = self.config.search
        cap = cfg.max_time or math.inf
        budget = self._time_budget(root, color)
        if math.isinf(budget) and math.isinf(cap):
            if cfg.max_visits or cfg.max_playouts:
                return 0.0, None
            self._warn_unlimited()
            cap = _UNLIMITED_GENMOVE_SECONDS
        clocked = (1.0 - _JITTER_SHARE) * budget - self._lateness.reserve(root.size)
        limit = min(cap, clocked)
        seconds = limit - (time.monotonic() - start)
        # A move answered at once (the clock holds less than the reserve) tells nothing of how late answers are.
        deadline = start + clocked if math.isfinite(clocked) and seconds > 0 else None
        return max(_MIN_SEARCH_SECONDS, seconds), deadline

    def _warn_unlimited(self) -> None:
        if not self._warned_unlimited:
            self._warned_unlimited = True
            log.warning("genmove: search.max_visits, max_playouts and max_time are all 0 (no limit) and no clock "
                        "is set; each move searches %.1f s. Set search.max_time or a clock to change it.",
                        _UNLIMITED_GENMOVE_SECONDS)

    def _note_batch_time(self, size: int, snapshot: Snapshot, calls: int) -> None:
        """Update the estimate of how long the last batch of a search takes, from a finished search that made
        ``calls`` evaluator calls: the mean call, or the search's time per playout times the size of its last
        batch (batches grow with the root's visits, so the last one is the biggest), whichever is longer."""
        playouts, elapsed = snapshot.playouts, snapshot.elapsed
        if calls < 2 or playouts < 2:  # too short to tell (and dominated by tree reuse and the root's evaluation)
            return
        last = leaves_per_batch(self.config.search, self.evaluator.max_batch, snapshot.root.visits)
        seconds = max(elapsed / calls, elapsed / playouts * last)
        old = self._batch_seconds.get(size)
        # Rise at once, decay slowly: a slow batch (a busy machine) is what could overrun the clock.
        self._batch_seconds[size] = seconds if old is None else max(seconds, 0.5 * (old + seconds))

    def warm_up(self, state: GameState) -> None:
        """Run the evaluator on ``state``'s board size once, if not done yet, and time one batch.

        onnxruntime plans a new input shape on its first run, which can take longer than a whole blitz move; done
        when the size is set (``boardsize``, start-up) it stays off the game's clock. The timed batch (as big as
        a search's first batches) is the search's guess at its first step's length, before it has timed one.
        """
        size = state.size
        if size in self._batch_seconds:
            return
        first_batch = leaves_per_batch(self.config.search, self.evaluator.max_batch, 0)
        empty = GameState(size, state.rules, state.komi)
        cpu = cpu_times()
        self.evaluator.evaluate([empty])  # the first run of this shape
        positions = []
        for i in range(first_batch):  # distinct positions, so that an evaluation cache cannot answer them
            position = empty.copy()
            position.push(i % (size * size), Color.BLACK if i < size * size else Color.WHITE)
            positions.append(position)
        begin = time.monotonic()
        self.evaluator.evaluate(positions)
        self._batch_seconds[size] = time.monotonic() - begin
        self._lateness.note_share(cpu_share(cpu, cpu_times()))  # the first move's guess at the CPU it gets
        if self.config.net.cache_reserve and isinstance(self.evaluator, CachingEvaluator):
            self.evaluator.reserve(size)

    def _set_playout_advantage(self, root: GameState, value: float) -> None:
        """Give the side to move at ``root`` the playout doubling advantage ``value`` (its opponent ``-value``); the
        graph is searched afresh when that changes, since every evaluation in it was made with the old one."""
        applied = (int(root.to_play), value)
        if set_playout_advantage(self.evaluator, *applied) and not same_advantage(applied, self._game.applied):
            self.search.clear()
        self._game.applied = applied

    def on_state_changed(self, state: GameState) -> None:
        """A new board size is warmed up now, before any genmove's clock runs; a new game (no moves yet) also
        drops the last game's graph (no position of it can come again), collects garbage and gives the freed memory
        back to the system now, off the clock (see :func:`_no_collection_pauses`)."""
        self.warm_up(state)
        if not state.moves:
            self.search.clear()
            gc.unfreeze()
            gc.collect()
            _give_back_free_memory()

    def set_interrupt(self, event: threading.Event) -> None:
        """A running genmove stops (answering its best move so far) when ``event`` is set (``quit`` arrived)."""
        self._interrupt = event

    def _analysis_snapshot(self, snapshot: Snapshot, root: GameState, request: AnalyzeRequest) -> AnalysisSnapshot:
        """The search's snapshot as the GTP layer prints it: the same records (already from the root player's
        view), cut to the moves ``request`` allows and to ``maxmoves``, with the extras it asked for."""
        allowed = _allowed_moves(request, root.to_play, root.size)
        moves = [self._with_extras(m, request) for m in snapshot.moves if allowed is None or m.move in allowed]
        if self.config.search.root_symmetry_pruning:  # the moves symmetry pruning left out, shown as KataGo does
            copies = with_symmetric_copies(moves, root.size, root.symmetries())
            moves = [m for m in copies if allowed is None or m.move in allowed]
        if request.max_moves > 0:
            moves = moves[: request.max_moves]
        ownership = stdev = None
        if request.ownership and snapshot.ownership is not None:
            ownership = [float(x) for x in snapshot.ownership]
        node = self.search.root
        if request.ownership_stdev and node is not None and node.visits > 0:
            moments = ownership_moments(node)
            stdev = None if moments is None else [float(x) for x in moments[1]]
        return AnalysisSnapshot(moves=tuple(moves),
                                root=snapshot.reported or snapshot.root,
                                ownership=ownership, ownership_stdev=stdev)

    def _with_extras(self, m: MoveInfo, request: AnalyzeRequest) -> MoveInfo:
        """One root move with the per-move extras the request asked for, read off the graph (the search is
        paused: this runs in its progress callback or after it); ``weight`` is reported as the edge visits."""
        visits = edge_visits = ownership = None
        root = self.search.root
        wanted = request.pv_visits or request.pv_edge_visits or request.moves_ownership
        edge = next((e for e in root.edges if e.move == m.move), None) if root is not None and wanted else None
        if edge is not None and (request.pv_visits or request.pv_edge_visits):
            assert root is not None  # edge is one of its edges
            visits, edge_visits = pv_visits(root, edge, len(m.pv))
        if edge is not None and request.moves_ownership and edge.child is not None \
                and edge.child.ownership is not None:
            assert root is not None  # edge is one of its edges
            ownership = [float(x) for x in average_ownership(edge.child) * root.sign]
        return dataclasses.replace(
            m, weight=None if m.edge_visits is None else float(m.edge_visits),
            pv_visits=visits if request.pv_visits else None,
            pv_edge_visits=edge_visits if request.pv_edge_visits else None, ownership=ownership)

    def _black_ownership(self, state: GameState) -> np.ndarray | None:
        """Ownership from Black's view: the last genmove search's if it searched these stones, else that of a short
        search (the net's, averaged over the graph)."""
        key = state.stones().tobytes()
        if self._last_ownership is not None and self._last_ownership[0] == key:
            return self._last_ownership[1]
        root = _root_for(state, state.to_play, fresh_passes=True)
        self._set_playout_advantage(root, 0.0)  # KataGo: "no playoutDoublingAdvantage to avoid bias"
        self.search.set_root(root)
        snapshot = self.search.run(None, None, max_visits=min(_STATUS_VISITS, self.config.search.max_visits or
                                                              _STATUS_VISITS), max_playouts=0, max_time=0.0)
        ownership = snapshot.ownership
        if ownership is None:
            return None
        return ownership if root.to_play == Color.BLACK else -ownership

    def _remember_ownership(self, root: GameState, snapshot: Snapshot) -> None:
        """Keep the search's ownership of ``root``'s stones (Black's view) for final_status_list and cleanup, unless
        the search played with a playout advantage (its ownership is then biased towards one side)."""
        if snapshot.ownership is None or self._game.applied[1] != 0.0:
            self._last_ownership = None
            return
        black = snapshot.ownership if root.to_play == Color.BLACK else -snapshot.ownership
        self._last_ownership = (root.stones().tobytes(), black)

    def _cleanup_targets(self, root: GameState) -> list[int]:
        """kgs-genmove_cleanup: the legal moves that attack an opponent chain the engine holds dead (its
        liberties, those of the chains with fewest liberties first), or none when no such chain is left."""
        opponent = root.to_play.opponent
        dead = [p for p in self.final_status(root) if root.color_at(p) == opponent]
        targets: dict[int, int] = {}  # liberty -> fewest liberties of a dead chain it touches
        for point in dead:
            liberties = _liberties_of(root, point)
            for liberty in liberties:
                targets[liberty] = min(targets.get(liberty, len(liberties)), len(liberties))
        return sorted((q for q in targets if root.is_legal(q)), key=lambda q: (targets[q], q))

    def _cleanup_move(self, snapshot: Snapshot, targets: list[int]) -> int:
        """The searched move among ``targets`` (the search ran restricted to them), else the first target: a
        liberty of the dead chain with fewest liberties (an atari or a capture first)."""
        allowed = set(targets)
        for info in snapshot.moves:
            if info.move in allowed:
                return info.move
        return targets[0]

    # ------------------------------------------------------------------------------------------ clocks
    def _clock(self, color: Color) -> Clock:
        if color not in self._clocks:
            self._clocks[color] = Clock(self._time_control)
        return self._clocks[color]

    def _time_budget(self, state: GameState, color: Color) -> float:
        return budget(self._clock(color), state.size, len(state.moves), self.config.player.lag_buffer)

    def command_arrived(self, when: float) -> None:
        """A genmove's clock starts when its command could start (the session says so before running each line)."""
        self._arrival = when

    def set_time_control(self, control: TimeControl) -> None:
        """Store the clock (both colours) and restart both clocks at full time."""
        self._time_control = control
        self._clocks = {}

    def time_left(self, reading: ClockReading) -> None:
        """Synchronise one colour's clock with the controller's.

        Without a clock set (no time settings, or settings refused as gtp2ogs's first-move fallback can send them)
        the reading alone is the clock: ``T 0`` is T seconds of absolute time, ``T N`` T seconds for N moves.
        """
        if not self._time_control.limited:
            self._clocks[reading.color] = Clock(_clock_from_reading(reading))
        self._clock(reading.color).update(reading.seconds, reading.stones)

    # ---------------------------------------------------------------------------------------- parameters
    def get_param(self, name: str) -> str:
        """kata-get-param: a KataGo name (``maxVisits``) or a config key (``search.max_visits`` or ``max_visits``)."""
        value = get_option(self.config, self._param_key(name))
        return str(value).lower() if isinstance(value, bool) else str(value)

    def set_param(self, name: str, value: str) -> None:
        """kata-set-param: change one option for the rest of the session, through KataGo's name mapping
        (engine/katago_config.py). Options read only at start (the net's, the GTP session's) are refused."""
        key = self._param_key(name)
        if not key.startswith(_RUNTIME_SECTIONS) or key in _START_ONLY:
            # The net, and the GTP session's own settings, are fixed at start; changing the config here would
            # change nothing.
            when = "when the net loads" if key.startswith("net.") else "when miai gtp starts"
            raise ValueError(f"{name} applies {when}: set {key} in the config file or with --set")
        try:
            self.config = apply_katago(self.config, name if miai_key(name) else key, value)
        except KatagoConfigError as exc:
            raise ValueError(str(exc)) from exc
        self.search.set_config(self.config.search)

    def list_params(self) -> list[str]:
        """The KataGo names ``set_param`` honours (those of the options a running search reads)."""
        return sorted(name for name, key in MAPPED.items()
                      if key.startswith(_RUNTIME_SECTIONS) and key not in _START_ONLY)

    def _param_key(self, name: str) -> str:
        """The dotted config key a parameter name means.

        Raises:
            KeyError: ``(name, reason)``: a KataGo parameter miai has no equivalent for, or a name nobody has.
        """
        if kind(name) == "katago-only":
            raise KeyError(name, "a KataGo parameter miai has no equivalent for")
        key = miai_key(name)
        if key is None:  # a bare option name that one section has (max_visits)
            owners = [info.key for info in list_options(self.config) if info.key.split(".", 1)[1] == name]
            key = owners[0] if len(owners) == 1 else None
        try:
            if key is None:
                raise ConfigError(name)
            get_option(self.config, key)
        except ConfigError as exc:
            close = closest_key(name)
            raise KeyError(name, f"did you mean {close}?" if close else "not a KataGo or miai parameter") from exc
        return key

    def models(self, size: int) -> list[dict[str, Any]]:
        """kata-get-models: the net that evaluates this board size (none for playouts or a uniform evaluator)."""
        try:
            net = onnx_net(self.evaluator, size)
        except EvaluatorError:
            return []
        if net is None:
            return []
        name = Path(net.path).name
        return [{"name": net.path, "internalName": net.info.metadata.get("name", name.split(".")[0]),
                 "version": net.info.model_version, "maxBatchSize": net.max_batch, "usesHumanSLProfile": False,
                 "usingFP16": "true" if net.config.precision == "fp16" else "false",
                 "backend": net.config.backend, "precision": net.config.precision}]

    def benchmark(self, states: Sequence[GameState], visits: int) -> BenchmarkResult:
        """kata-benchmark: each position searched from an empty graph with ``visits`` visits, timed together
        (the net's warm-up for the board size is done before the clock starts)."""
        self.stop_pondering()
        if states:
            self.warm_up(states[0])
        total_visits = net_evals = batches = 0
        seconds = 0.0
        for state in states:
            self.search.clear()
            root = _root_for(state, state.to_play)
            before = self.search.stats()
            start = time.monotonic()
            self.search.set_root(root)
            snapshot = self.search.run(None, None, max_visits=visits, max_playouts=0, max_time=0.0)
            seconds += time.monotonic() - start
            after = self.search.stats()
            total_visits += snapshot.root.visits
            net_evals += after.get("net_evals", 0) - before.get("net_evals", 0)
            batches += after.get("eval_batches", 0) - before.get("eval_batches", 0)
        self.search.clear()
        return BenchmarkResult(len(states), total_visits, net_evals, batches, seconds, self.config.search.batch_size)

    def clear_cache(self) -> None:
        """Forget the search graph and the evaluation cache."""
        self.stop_pondering()
        self.search.clear()
        if isinstance(self.evaluator, CachingEvaluator):
            self.evaluator.clear()

    def search_stats(self) -> dict[str, Any]:
        """The search's counters (miai-search_stats)."""
        return self.search.stats()

    def search_graph(self, state: GameState) -> dict[str, Any]:
        """The graph of the last search (miai-graph_dump), moves as GTP vertices."""
        self.stop_pondering()
        dump = self.search.graph_dump(lambda move: to_gtp(move, state.size))
        return {"size": state.size, "komi": state.komi, **dump}

    # ------------------------------------------------------------------------------------------ pondering
    def start_pondering(self, state: GameState, color: Color) -> None:
        """Search the position on the opponent's time, until input arrives (needs ``player.ponder``)."""
        if not self.config.player.ponder or state.is_over():
            return
        self.stop_pondering()
        root = _root_for(state, color)
        self._ponder_stop = threading.Event()
        stop = self._ponder_stop

        def ponder() -> None:
            try:
                self.search.set_root(root)
                self.search.run(stop, None, max_visits=0, max_playouts=0, max_time=0.0)
            except Exception:  # pondering is best effort; the next genmove searches anyway
                log.exception("pondering failed")

        self._ponder_thread = threading.Thread(target=ponder, name="miai-ponder", daemon=True)
        self._ponder_thread.start()

    def stop_pondering(self) -> None:
        """Stop a running ponder search and wait for it (it stops within one batch)."""
        thread = self._ponder_thread
        if thread is None:
            return
        self._ponder_stop.set()
        thread.join()
        self._ponder_thread = None


@contextlib.contextmanager
def _no_collection_pauses() -> Iterator[None]:
    """No garbage collection while a move is on the clock, and none of the objects alive after it (the graph, the
    evaluation cache) walked through by later collections.

    A full collection walks every object the collector tracks: with a few hundred thousand (an evaluation cache
    filling up, a large graph) it paused a 9x9 server game for 0.3-0.6 s, and cost 1-second byo-yomi periods. The
    graph and the cache free themselves by reference counting (they hold no cycles), so a move loses nothing by
    not collecting; freezing what survives it keeps the collections between moves short. A new game unfreezes and
    collects everything once (:meth:`EnginePlayer.on_state_changed`), so that no cycle is kept for good.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def _log_search(snapshot: Snapshot, size: int, move: GenmoveResult) -> None:
    """The search's summary on the player's logger at debug (stderr at ``--log-level debug``), and with the best
    moves on the log file's search channel (``log.search_info``)."""
    wanted = log.isEnabledFor(logging.DEBUG), search_info_log.isEnabledFor(logging.INFO)
    if not any(wanted):
        return
    summary = search_summary(snapshot, size, move if isinstance(move, str) else to_gtp(move, size))
    if wanted[0]:
        log.debug("%s", summary)
    if wanted[1]:
        search_info_log.info("%s", "\n".join([summary, *search_details(snapshot, size)]))


def _give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing elsewhere).

    numpy's arrays live on the C heap, and a search frees thousands of small ones amid long-lived allocations: glibc
    keeps the freed pages mapped, so a server bot's resident memory crept up game after game (docs/gtp.md, "Soak")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` among the symbols the process has loaded, looked up once; None without glibc (musl,
    macOS and Windows keep their own ways)."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


def _clock_from_reading(reading: ClockReading) -> TimeControl:
    """The clock a lone ``time_left`` describes: absolute time (stones 0) or a Canadian period of ``stones``
    moves (a byo-yomi period read the same way, with one move per period, is never longer)."""
    if reading.stones == 0:
        return TimeControl(TimeSystem.ABSOLUTE, main_time=max(0.0, reading.seconds))
    return TimeControl(TimeSystem.CANADIAN, period_time=max(0.0, reading.seconds), period_stones=reading.stones)


def _root_for(state: GameState, color: Color, *, fresh_passes: bool = False) -> GameState:
    """A copy of ``state`` with ``color`` to move.

    When ``color`` is not the side to move (GTP allows ``genmove w`` on Black's turn), or with ``fresh_passes``
    after a finished game (cleanup phase, dead-stone estimate), the search starts from the same stones with no
    history: ko and superko bans of the real game do not apply to that hypothetical move.
    """
    if state.to_play == color and not (fresh_passes and state.is_over()):
        return state.copy()
    fresh = GameState(state.size, state.rules, state.komi, state.rep_bound)
    stones = state.stones()
    fresh.set_stones([int(p) for p in np.flatnonzero(stones == int(Color.BLACK))],
                     [int(p) for p in np.flatnonzero(stones == int(Color.WHITE))])
    fresh.set_to_play(color)
    return fresh


def _liberties_of(state: GameState, point: int) -> list[int]:
    """The empty points next to the chain at ``point``, in flat order."""
    nbrs = neighbor_table(state.size)
    return sorted({q for p in state.chain(point) for q in nbrs[p] if state.color_at(q) == Color.EMPTY})


def _allowed_moves(request: AnalyzeRequest, color: Color, size: int) -> set[int] | None:
    """Root moves the analysis may report under ``allow``/``avoid`` (None = all)."""
    allow = [r for r in request.allow if r.color == color and r.until_depth >= 1]
    avoid = [r for r in request.avoid if r.color == color and r.until_depth >= 1]
    if not allow and not avoid:
        return None
    moves = set(range(size * size)) | {PASS}
    if allow:
        moves = set().union(*(set(r.moves) for r in allow))
    for r in avoid:
        moves -= set(r.moves)
    return moves


class _GameValues:
    """What one game's genmoves remember (KataGo's recentWinLossValues): the root win-loss values of the game's
    searches so far, which resignation (miai.engine.resign) and the dynamic playout doubling advantage
    (miai.engine.handicap) read, the latest root score lead, the advantage last chosen, and the one the evaluator
    has now."""

    def __init__(self) -> None:
        self.game: tuple[Any, ...] | None = None
        self.moves = 0
        self.white_values: list[float] = []
        self.white_lead = 0.0
        self.for_white = 0.0
        self.applied: tuple[int, float] = (int(Color.WHITE), 0.0)  # (side to move, its advantage) last given

    def advantage(self, root: GameState, config: PlayerConfig) -> float:
        """The advantage of the side to move at ``root`` for this genmove."""
        game = (root.size, root.komi, root.rules, root.setup)
        if game != self.game or len(root.moves) < self.moves:  # a new game, other rules, or an undo
            self.game, self.white_values, self.for_white = game, [], 0.0
        self.moves = len(root.moves)
        self.for_white = dynamic_pda_for_white(root, config.dynamic_pda_cap_per_opp_lead, self.white_values,
                                               self.for_white)
        return self.for_white if root.to_play == Color.WHITE else -self.for_white

    def record(self, root: GameState, snapshot: Snapshot) -> None:
        """Keep the search's root win-loss value and score lead, from White's view."""
        if snapshot.root.visits > 0:
            sign = 1.0 if root.to_play == Color.WHITE else -1.0
            self.white_values.append(sign * (2.0 * snapshot.root.winrate - 1.0))
            self.white_lead = sign * snapshot.root.score_lead
