"""The engine behind the GTP session: search-backed move choice, analysis, dead stones, clocks and pondering.

:class:`EnginePlayer` implements :class:`miai.gtp.player.Player`. It owns one :class:`~miai.engine.core.search.Search`
(so the graph is reused from move to move) and hands each concern to a collaborator of its own: the clocks and the
time of each move (:class:`~miai.engine.clocks.PlayerClocks`), pondering (:class:`~miai.engine.pondering.Ponderer`),
memory hygiene (miai.engine.memory: no collection pauses on the clock, memory given back between games), analysis
snapshots (miai.engine.gtpanalysis), dead stones and the cleanup phase (miai.engine.cleanup), and what a game's
searches leave for resignation and the playout advantage (:class:`~miai.engine.gamevalues.GameValues`).

Move choice on top of the search:

- the search offers every legal move, own eyes included, as KataGo's does (``search.forbid_eye_filling``, on in
  playout mode, leaves own single-point true eyes out), and values double-pass endings by the rules' count with
  every stone alive (``GameState.score``), so it does not pass into a lost count and it captures dead stones before
  passing (what CGOS's Tromp-Taylor scoring needs);
- ``kgs-genmove_cleanup`` removes the opponent stones the engine holds dead (miai.engine.cleanup);
- resignation follows KataGo's GTP rule (``miai.engine.resign``): ``player.resign_consecutive`` searches of this
  game in a row below ``player.resign_threshold``, unless the game is young, close, or a handicap game White may
  still catch up in (0 turns it off).

Time (miai.engine.clocks): a move's clock starts when ``genmove`` is called, so the net's first run on a new board
size (done early by :meth:`EnginePlayer.warm_up`) and tree reuse are charged to it; ``quit`` arriving during a
genmove stops it (see ``set_interrupt``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from miai.engine import memory
from miai.engine.cleanup import STATUS_VISITS, DeadStones, cleanup_move, cleanup_targets, dead_stones
from miai.engine.clocks import MoveStart, PlayerClocks
from miai.engine.config import Config, ConfigError, get_option, list_options
from miai.engine.gamevalues import GameValues
from miai.engine.gtpanalysis import analysis_snapshot
from miai.engine.katago_config import MAPPED, KatagoConfigError, apply_katago, closest_key, kind, miai_key
from miai.engine.pondering import Ponderer
from miai.engine.resign import should_resign
from miai.engine.core.search import Search, leaves_per_batch
from miai.engine.core.movechoice import AvoidUntil
from miai.engine.core.results import Pov
from miai.engine.core.snapshot import Snapshot, search_details, search_info_log, search_summary
from miai.engine.timecontrol import cpu_times
from miai.go.clock import TimeControl
from miai.go.coords import PASS, Color, to_gtp
from miai.go.state import GameState
from miai.nets.evaluator import CachingEvaluator, Evaluator, EvaluatorError, onnx_net, set_playout_advantage
from miai.gtp.player import (
    RESIGN,
    AnalyzeRequest,
    BenchmarkResult,
    ClockReading,
    Emit,
    GenmoveResult,
    Player,
)

log = logging.getLogger(__name__)

# The config sections a running player reads at every search: kata-set-param may change their options.
_RUNTIME_SECTIONS = ("search.", "player.")
# Options of those sections read once at start: the GTP session ponders only when player.ponder was on then.
_START_ONLY = frozenset({"player.ponder"})


class EnginePlayer(Player):
    """A :class:`Player` that thinks with a graph search over ``evaluator``."""

    def __init__(self, evaluator: Evaluator, config: Config | None = None) -> None:
        self.evaluator = evaluator
        self.config = config or Config()
        self.search = Search(evaluator, self.config.search)
        self._clocks = PlayerClocks()
        self._ponderer = Ponderer()
        self._interrupt: threading.Event | None = None
        self._game = GameValues()
        self._dead_stones = DeadStones()

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
        start = self._clocks.start_move()
        with memory.no_collection_pauses():
            return self._genmove(state, color, start, cleanup, analysis, emit)

    def _genmove(self, state: GameState, color: Color, start: MoveStart, cleanup: bool,
                 analysis: AnalyzeRequest | None, emit: Emit | None) -> GenmoveResult:
        self.stop_pondering()
        stopped = time.monotonic()
        self.warm_up(state)
        root = _root_for(state, color, fresh_passes=cleanup)
        targets: list[int] | None = None
        if cleanup:
            targets = cleanup_targets(root, self.final_status(root))
            if not targets:  # nothing the engine holds dead is left: the cleanup is over
                self._clocks.charge(color, time.monotonic() - start.wall)
                return PASS
        seconds, deadline = self._clocks.move_seconds(root, color, start.wall, self.config)
        calls_before, evals_before = self.search.batches, self._evaluations()
        self._set_playout_advantage(root, self._game.advantage(root, self.config.player))
        searching = time.monotonic()
        snapshot = self._search(root, self._interrupt, analysis, emit, seconds, allow=targets)
        searched = time.monotonic()
        self._game.record(root, snapshot)
        self._dead_stones.remember(root, snapshot, self._game.biased)
        if analysis is not None and emit is not None:
            # KataGo prints the final analysis before ``play``, however short the search was: a GUI always sees
            # the figures of the move it is shown.
            emit(analysis_snapshot(self.search, snapshot, root, analysis))
        self._clocks.note_batch_time(root.size, snapshot, self.search.batches - calls_before, self.config.search,
                                     self.evaluator.max_batch)
        move: GenmoveResult
        if targets is not None:
            move = cleanup_move(snapshot, targets)
        elif snapshot.root.visits > 0 and should_resign(root, self._game.white_values, self._game.white_lead,
                                                        self.config.player):
            move = RESIGN
        else:
            move = self.search.best_move(snapshot)  # with one visit: the policy's top move
        evals_after = self._evaluations()
        _log_search(snapshot, root.size, move, (evals_after[0] - evals_before[0], evals_after[1] - evals_before[1]))
        if log.isEnabledFor(logging.DEBUG):  # where the move's time went, on the monotonic clock the machine shares
            log.debug("genmove from %.4f: ponder stopped +%.3f, search from +%.3f to +%.3f (%d playouts, %d batches "
                      "abandoned so far), move chosen +%.3f", start.wall, stopped - start.wall,
                      searching - start.wall, searched - start.wall, snapshot.playouts,
                      self.search.stats().get("batches_abandoned", 0), time.monotonic() - start.wall)
        self._clocks.answered(color, start, deadline, seconds, snapshot, root.size)
        return move

    def analyze(
        self,
        state: GameState,
        color: Color,
        request: AnalyzeRequest,
        emit: Emit,
        stop: threading.Event,
    ) -> None:
        """Search until ``stop`` is set, emitting a snapshot every ``request.interval`` seconds."""
        self.stop_pondering()
        root = _root_for(state, color)
        self._set_playout_advantage(root, 0.0)  # analysis shows the position as it is (KataGo's analysis params)
        final = self._search(root, stop, request, emit, None)
        emit(analysis_snapshot(self.search, final, root, request))

    def final_status(self, state: GameState) -> list[int]:
        """Stones whose owner the search's ownership says has lost them (empty without ownership).

        The ownership is that of the last genmove's search when it searched these very stones (the engine passed,
        then its opponent: the dead stones are the ones it passed over), otherwise a short search's.
        """
        ownership = self._dead_stones.remembered(state)
        if ownership is None:
            ownership = self._status_ownership(state)
        if ownership is None:
            return []
        return dead_stones(state, ownership)

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
        ``seconds`` None (analysis) only ``stop`` or the node cap ends it. ``allow`` restricts the root moves; the
        request's avoid and allow restrict the moves of each side for as many plies as they say."""
        self.search.set_root(root)
        on_progress: Callable[[Snapshot], None] | None = None
        interval = 1.0
        if request is not None and request.interval is not None and emit is not None:
            interval = max(request.interval, 0.05)

            def on_progress(snapshot: Snapshot) -> None:
                emit(analysis_snapshot(self.search, snapshot, root, request))

        avoid_until = AvoidUntil.of(request, root.size) if request is not None else None
        if seconds is None:  # analysis: only stop (or the node cap) ends it
            return self.search.run(stop, on_progress, max_visits=0, max_playouts=0, max_time=0.0,
                                   progress_interval=interval, allow=allow, avoid_until=avoid_until)
        return self.search.run(stop, on_progress, max_time=seconds, progress_interval=interval, allow=allow,
                               avoid_until=avoid_until, step_seconds=self._clocks.step_seconds(root.size))

    def warm_up(self, state: GameState) -> None:
        """Run the evaluator on ``state``'s board size once, if not done yet, and time one batch.

        onnxruntime plans a new input shape on its first run, which can take longer than a whole blitz move; done
        when the size is set (``boardsize``, start-up) it stays off the game's clock. The timed batch (as big as
        a search's first batches) is the search's guess at its first step's length, before it has timed one.
        """
        size = state.size
        if self._clocks.has_batch_time(size):
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
        self._clocks.note_warm_up(size, time.monotonic() - begin, cpu)  # also the first move's guess at its CPU
        if self.config.net.cache_reserve and isinstance(self.evaluator, CachingEvaluator):
            self.evaluator.reserve(size)

    def _set_playout_advantage(self, root: GameState, value: float) -> None:
        """Give the side to move at ``root`` the playout doubling advantage ``value`` (its opponent ``-value``); the
        graph is searched afresh when that changes, since every evaluation in it was made with the old one."""
        applied = (int(root.to_play), value)
        changed = self._game.applied(applied)
        if set_playout_advantage(self.evaluator, *applied) and changed:
            self.search.clear()

    def on_state_changed(self, state: GameState) -> None:
        """A new board size is warmed up now, before any genmove's clock runs; a new game (no moves yet) also
        drops the last game's graph (no position of it can come again), collects garbage and gives the freed memory
        back to the system now, off the clock (miai.engine.memory)."""
        self.warm_up(state)
        if not state.moves:
            self.search.clear()
            memory.collect_between_games()

    def set_interrupt(self, event: threading.Event) -> None:
        """A running genmove stops (answering its best move so far) when ``event`` is set (``quit`` arrived)."""
        self._interrupt = event

    def _status_ownership(self, state: GameState) -> np.ndarray | None:
        """Ownership from Black's view by a short search of ``state``'s stones (the net's, averaged over the graph),
        for the dead stones when no genmove searched these stones."""
        root = _root_for(state, state.to_play, fresh_passes=True)
        self._set_playout_advantage(root, 0.0)  # KataGo: "no playoutDoublingAdvantage to avoid bias"
        self.search.set_root(root)
        snapshot = self.search.run(None, None, max_visits=min(STATUS_VISITS, self.config.search.max_visits or
                                                              STATUS_VISITS), max_playouts=0, max_time=0.0)
        ownership = snapshot.ownership
        if ownership is None:
            return None
        return Pov(ownership, root.to_play).black()

    # ------------------------------------------------------------------------------------------ clocks
    def command_arrived(self, when: float) -> None:
        """A genmove's clock starts when its command could start (the session says so before running each line)."""
        self._clocks.command_arrived(when)

    def set_time_control(self, control: TimeControl) -> None:
        """Store the clock (both colours) and restart both clocks at full time."""
        self._clocks.set_time_control(control)

    def time_left(self, reading: ClockReading) -> None:
        """Synchronise one colour's clock with the controller's (miai.engine.clocks)."""
        self._clocks.time_left(reading)

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

    def _evaluations(self) -> tuple[int, int]:
        """Positions the search has had the net run so far, and those the evaluation cache answered."""
        hits = self.evaluator.hits if isinstance(self.evaluator, CachingEvaluator) else 0
        return self.search.net_evals - hits, hits

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
        self._ponderer.start(self.search, _root_for(state, color))

    def stop_pondering(self) -> None:
        """Stop a running ponder search and wait for it (it stops within one batch)."""
        self._ponderer.stop()


def _log_search(snapshot: Snapshot, size: int, move: GenmoveResult, evaluations: tuple[int, int]) -> None:
    """The search's summary on the player's logger at debug (stderr at ``--log-level debug``), and with the best
    moves on the log file's search channel (``log.search_info``)."""
    wanted = log.isEnabledFor(logging.DEBUG), search_info_log.isEnabledFor(logging.INFO)
    if not any(wanted):
        return
    summary = search_summary(snapshot, size, move if isinstance(move, str) else to_gtp(move, size), evaluations)
    if wanted[0]:
        log.debug("%s", summary)
    if wanted[1]:
        search_info_log.info("%s", "\n".join([summary, *search_details(snapshot, size)]))


def _root_for(state: GameState, color: Color, *, fresh_passes: bool = False) -> GameState:
    """A copy of ``state`` with ``color`` to move.

    When ``color`` is not the side to move (GTP allows ``genmove w`` on Black's turn), or with ``fresh_passes``
    after a finished game (cleanup phase, dead-stone estimate), the search starts from the same stones with no
    history: ko and superko bans of the real game do not apply to that hypothetical move.
    """
    if state.to_play == color and not (fresh_passes and state.is_over()):
        return state.copy()
    return state.fresh_copy(color)
