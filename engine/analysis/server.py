"""The analysis engine: JSON queries on stdin, JSON responses on stdout, as KataGo's ``analysis`` command.

Threads:

- the **reader** (the caller of :meth:`AnalysisServer.serve`) reads one query a line from the first moment, before
  the net is loaded; it answers actions (terminate, query_version, ...) at once and queues analysis turns;
- the **net loader** builds the evaluator in the background; searches start once it is ready;
- ``analysis_threads`` **workers** take turns from the queue, highest priority first and, among equal priorities,
  the earliest; each turn gets a fresh :class:`~miai.engine.core.search.Search` (its own graph) over the one shared,
  thread-safe evaluator, so searches running side by side never share a node.

Every response is one JSON object on one line, flushed at once; a lock keeps lines whole. Every analysed turn ends
with exactly one response whose ``isDuringSearch`` is false (``noResults`` when terminated before any visit).
When stdin closes, queued turns are finished first (KataGo's behaviour) unless ``quit_without_waiting``.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import json
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import numpy as np

from miai.engine.analysis.query import Job, ParsedQuery, QueryError, parse_query
from miai.engine.analysis.report import build_response, no_results, position_hashes
from miai.engine.analysis.settings import AnalysisSettings
from miai.engine.core.movechoice import AvoidUntil
from miai.engine.core.search import Search
from miai.engine.core.snapshot import Snapshot
from miai.go.state import GameState
from miai.nets.evaluator import (CachingEvaluator, Evaluator, EvaluatorError, Finish, innermost, onnx_net,
                                 start_evaluation)

__all__ = ["AnalysisServer", "KATAGO_PROTOCOL_VERSION", "RootPolicyEvaluator"]

log = logging.getLogger("miai.analysis")

# The KataGo release whose analysis protocol miai speaks (query_version reports it, plus miai's own version).
KATAGO_PROTOCOL_VERSION = "1.17.2"
_ACTIONS = ("query_version", "query_models", "clear_cache", "terminate", "terminate_all")


class RootPolicyEvaluator:
    """The shared evaluator as one search sees it: the root position's policy is reshaped by
    ``rootPolicyTemperature`` (p ** (1/T)), as KataGo does at the root (``wideRootNoise`` is the search's own
    option); the root's raw evaluation is kept for ``policy`` and ``rawWinrate``."""

    def __init__(self, inner: Evaluator, root: GameState, temperature: float) -> None:
        self.inner = inner
        self.max_batch = inner.max_batch
        self._root_key = (root.graph_hash, root.size)
        self._exponent = 1.0 / temperature
        self.root_evaluation: Any = None

    def evaluate(self, states: Sequence[Any]) -> list[Any]:
        """See ``Evaluator.evaluate``."""
        return self._reshape(states, self.inner.evaluate(states))

    def evaluator_for(self, size: int) -> Evaluator:
        """See ``WrappingEvaluator``: the shared evaluator behind."""
        return self.inner

    def start(self, states: Sequence[Any]) -> Finish:
        """See ``StagedEvaluator``: started on the shared evaluator, the root's policy reshaped on finishing."""
        inner = start_evaluation(self.inner, states)

        def finish(timeout: float | None = None) -> list[Any]:
            return self._reshape(states, inner(timeout))

        return finish

    def _reshape(self, states: Sequence[Any], evaluations: Sequence[Any]) -> list[Any]:
        results = list(evaluations)
        for i, state in enumerate(states):
            if (state.graph_hash, state.size) == self._root_key:
                self.root_evaluation = results[i]
                if self._exponent != 1.0:
                    policy = np.power(np.asarray(results[i].policy, dtype=np.float64), self._exponent)
                    total = policy.sum()
                    if total > 0:
                        results[i] = dataclasses.replace(results[i], policy=(policy / total).astype(np.float32))
        return results


@dataclasses.dataclass(eq=False)
class _Task:
    """A queued or running turn and what the engine knows about it."""

    job: Job
    internal_id: int
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)
    state: str = "queued"  # queued, running, terminated (while queued), done


class AnalysisServer:
    """KataGo's analysis protocol over text streams; see the module docstring."""

    def __init__(self, load_evaluator: Callable[[], Any], settings: AnalysisSettings, stdout: TextIO,
                 stderr: TextIO, *, model_name: str = "", quit_without_waiting: bool = False) -> None:
        self.settings = settings
        self._load_evaluator = load_evaluator
        self._out = stdout
        self._err = stderr
        self._model_name = model_name
        self._quit_without_waiting = quit_without_waiting
        self.evaluator: Any = None
        self._net_ready = threading.Event()
        self._lock = threading.Lock()  # queue, open tasks and task states
        self._out_lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._heap: list[tuple[int, int, _Task]] = []
        self._open: dict[int, _Task] = {}
        self._ids = itertools.count()
        self._closing = False
        self._workers: list[threading.Thread] = []

    # ------------------------------------------------------------------------------------------------ main loop
    def serve(self, stdin: TextIO) -> int:
        """Run until stdin closes and (unless quitting without waiting) every queued turn is answered."""
        loader = threading.Thread(target=self._load_net, name="miai-analysis-net", daemon=True)
        loader.start()
        for index in range(max(1, self.settings.analysis_threads)):
            worker = threading.Thread(target=self._work, name=f"miai-analysis-{index}", daemon=True)
            worker.start()
            self._workers.append(worker)
        for line in stdin:
            if line.strip():
                self.handle_line(line)
        self._finish()
        return 0

    def _finish(self) -> None:
        with self._lock:
            self._closing = True
            if self._quit_without_waiting:
                for task in list(self._open.values()):
                    task.stop.set()
                self._heap.clear()
            self._wake.notify_all()
        if self._quit_without_waiting and not self._net_ready.is_set():
            return
        for worker in self._workers:
            worker.join()

    def _load_net(self) -> None:
        try:
            self.evaluator = self._load_evaluator()
        except BaseException as exc:  # noqa: BLE001 - any failure to load ends the engine, with the reason
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            self._err.write(f"miai analysis: {message}\n")
            self._err.flush()
            os._exit(1)  # the reader may be blocked on stdin; the engine cannot work without its net
        self._err.write("miai analysis: started, ready to begin handling requests\n")
        self._err.flush()
        self._net_ready.set()

    # ------------------------------------------------------------------------------------------------ output
    def emit(self, obj: dict[str, Any]) -> None:
        """Write one response line and flush it (thread-safe)."""
        line = json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n"
        with self._out_lock:
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the client is gone: nothing left to answer
                os._exit(0)

    def _error(self, query_id: str | None, field: str | None, message: str) -> None:
        obj: dict[str, Any] = {"error": message}
        if query_id is not None:
            obj["id"] = query_id
        if field is not None:
            obj["field"] = field
        self.emit(obj)

    # ------------------------------------------------------------------------------------------------ input
    def handle_line(self, line: str) -> None:
        """Answer or queue one query line."""
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are no UTF-8, kept as surrogates by the reader (see the CLI)
            self._error(None, None, "could not parse input line as JSON: it is not UTF-8 text")
            return
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            self._error(None, None, f"could not parse input line as JSON ({exc}): {line.strip()}")
            return
        if not isinstance(data, dict):
            self._error(None, None, f"request line was valid JSON but not an object, ignoring: {line.strip()}")
            return
        if not isinstance(data.get("id"), str):
            self._error(None, None, 'request must have a string "id" field')
            return
        if "action" in data and isinstance(data["action"], str):
            self._action(data)
            return
        try:
            parsed = parse_query(data, self.settings)
        except QueryError as exc:
            self._error(data["id"], exc.field, str(exc))
            return
        self._enqueue(parsed)

    def _enqueue(self, parsed: ParsedQuery) -> None:
        for field, message in parsed.warnings:
            self.emit({"id": parsed.id, "field": field, "warning": message})
        with self._lock:
            for job in parsed.jobs:
                task = _Task(job, next(self._ids))
                self._open[task.internal_id] = task
                heapq.heappush(self._heap, (-job.priority, task.internal_id, task))
            self._wake.notify_all()

    def _action(self, data: dict[str, Any]) -> None:
        action = data["action"]
        if action not in _ACTIONS:
            self._error(data["id"], "action", "'action' must be one of " + ", ".join(_ACTIONS))
            return
        if action in ("terminate", "terminate_all"):
            self._terminate(data)
            return
        if action == "query_version":
            from importlib.metadata import version

            data = {**data, "version": KATAGO_PROTOCOL_VERSION, "git_hash": "<omitted>", "miaiVersion": version("miai")}
        elif action == "query_models":
            data = {**data, "models": self._models()}
        else:  # clear_cache
            if isinstance(self.evaluator, CachingEvaluator):
                self.evaluator.clear()
        self.emit(data)

    def _models(self) -> list[dict[str, Any]]:
        # KataGo loads its net before it reads a line, so its answer always names the net: wait for ours (a net that
        # fails to load ends the process, so this cannot hang).
        self._net_ready.wait()
        name = os.path.basename(self._model_name) or self._model_name
        return [{"name": name, "internalName": name.split(".")[0], "maxBatchSize": int(self.evaluator.max_batch),
                 "usesHumanSLProfile": False, "version": _model_version(self.evaluator),
                 "usingFP16": "false"}]

    def _terminate(self, data: dict[str, Any]) -> None:
        target = None
        if data["action"] == "terminate":
            target = data.get("terminateId")
            if not isinstance(target, str):
                self._error(data["id"], "terminateId", 'terminate needs a string "terminateId" field')
                return
        turns = data.get("turnNumbers")
        if turns is not None and (not isinstance(turns, list) or
                                  not all(isinstance(t, int) and not isinstance(t, bool) for t in turns)):
            self._error(data["id"], "turnNumbers", "if given, must be an array of turn numbers")
            return
        stopped: list[_Task] = []
        with self._lock:
            for task in self._open.values():
                if (target is None or task.job.id == target) and (turns is None or task.job.turn in turns):
                    if task.state == "queued":
                        task.state = "terminated"
                        stopped.append(task)
                    task.stop.set()
            for task in stopped:
                del self._open[task.internal_id]
        for task in stopped:  # never started: the engine answers for it now
            self.emit(no_results(task.job))
        self.emit(data)

    # ------------------------------------------------------------------------------------------------ workers
    def _next_task(self) -> _Task | None:
        with self._lock:
            while True:
                while self._heap:
                    _, _, task = heapq.heappop(self._heap)
                    if task.state == "queued":
                        task.state = "running"
                        return task
                if self._closing:
                    return None
                self._wake.wait()

    def _work(self) -> None:
        self._net_ready.wait()
        while (task := self._next_task()) is not None:
            try:
                self._analyse(task)
            except Exception as exc:  # a failed turn is answered with an error; the engine keeps serving
                self._err.write(traceback.format_exc())
                self._err.flush()
                self._error(task.job.id, None, f"analysis of turn {task.job.turn} failed: {exc}")
            finally:
                with self._lock:
                    task.state = "done"
                    self._open.pop(task.internal_id, None)

    def _analyse(self, task: _Task) -> None:
        job = task.job
        state = searchable(job.state)
        settings = job.settings
        # The net for this board size is loaded now if it is not yet (bundled nets load per size on first use), so
        # that loading it is not counted in the search's maxTime: KataGo has its net loaded before any query.
        innermost(self.evaluator, state.size)
        evaluator = RootPolicyEvaluator(self.evaluator, state, settings.root_policy_temperature)
        config = settings.config.search
        config = dataclasses.replace(config, pv_length=min(100, settings.pv_len + 1),
                                     wide_root_noise=settings.wide_root_noise)
        search = Search(evaluator, config)
        search.set_root(state)
        hashes = position_hashes(state.stones(), state.size, state.to_play, state.board.ko_move)
        on_progress, interval = self._progress(job, search, evaluator, hashes)
        snapshot = search.run(task.stop, on_progress, progress_interval=interval,
                              avoid_until=AvoidUntil.of(job.request, state.size))
        if snapshot.root.visits == 0 and task.stop.is_set():
            self.emit(no_results(job))
            return
        root_eval = evaluator.root_evaluation or self.evaluator.evaluate([state])[0]
        self.emit(build_response(job, snapshot, search.root, root_eval, hashes, during=False))

    def _progress(self, job: Job, search: Search, evaluator: RootPolicyEvaluator, hashes: tuple[str, str]
                  ) -> tuple[Callable[[Snapshot], None] | None, float]:
        """The isDuringSearch reporter for ``job`` (first after the request's ``first_report``, then every
        ``interval`` seconds) and the interval the search should call it at."""
        if job.request.interval is None:
            return None, 1.0
        every = job.request.interval
        first = job.request.first_report if job.request.first_report is not None else every
        start = time.monotonic()
        due = start + first

        def report(snapshot: Snapshot) -> None:
            nonlocal due
            now = time.monotonic()
            if now + 1e-3 < due or snapshot.root.visits == 0:
                return
            self.emit(build_response(job, snapshot, search.root, evaluator.root_evaluation, hashes, during=True))
            # A report walks the whole graph (ownership averages) inside the search thread: on a large graph, space
            # the reports out so that writing them takes at most a fifth of the search's time.
            spent = time.monotonic() - now
            due = now + max(every, 5.0 * spent)

        return report, max(0.01, min(every, first))


def searchable(state: GameState) -> GameState:
    """The position to search for a turn: the state itself, or after a finished game (two passes) the same stones
    with a fresh history, so the search looks at the position rather than at a game that is already over."""
    return state.fresh_copy(state.to_play) if state.is_over() else state


def _model_version(evaluator: Evaluator) -> int:
    """The KataGo model version ``query_models`` reports: that of the net playing 19x19 (the analysis engine's default
    board), 0 for an evaluator that is no KataGo-style net (uniform, playouts) or has no net for 19x19."""
    try:
        net = onnx_net(evaluator, 19)
    except EvaluatorError:
        return 0
    return net.info.model_version if net is not None else 0
