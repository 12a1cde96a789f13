"""Matches on a Dask distributed cluster: one task per game, both engines run on the worker that plays it.

``run_cluster_match`` is ``run_match`` with the games handed to an existing cluster (``miai match --cluster ADDRESS``)
instead of engine pairs on this machine. This process, the driver, keeps everything durable: it hands the games out
in schedule order, at most one per worker thread at a time, and on each result writes the SGF and the results line
(``miai.match.results``), updates the summary and SPRT and stops handing out games once the SPRT decides. A worker
plays a task with a pair of engines it keeps between tasks (started on its first game of the match, restarted after
a crash like on one machine); its engines, nets and configs are the command lines' paths on the worker's machine.

Faults: when a worker process or its node dies, the scheduler hands its running game to another worker
(Dask's own task retry), which plays it from the start; the game is counted once, when a result comes back. A game
whose workers keep dying (Dask gives up after ``distributed.scheduler.allowed-failures`` deaths) is submitted
anew up to ``RESUBMITS`` times before the match stops with an error. An engine that crashes loses its game on any
worker, as on one machine.

Security: Dask runs the functions it is sent, pickled, so whoever can talk to the scheduler runs code on every
worker, and this driver unpickles what comes back. The driver therefore talks only to a ``tls://`` scheduler, with
certificates signed by the cluster's own authority (mutual TLS: Dask refuses a peer without one), named by
``--cluster-security CA,CERT,KEY`` or by Dask's configuration (``distributed.comm.tls``); a plain ``tcp://``
scheduler is refused unless the user says ``--cluster-insecure``. ``auto`` uses only a scheduler named in Dask's
configuration.

Dask distributed is the optional ``[cluster]`` extra; this module imports it only when a match runs.
"""

from __future__ import annotations

import atexit
import os
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from miai.gtp.client import GtpClientError, GtpTimeout
from miai.match.config import MatchConfig
from miai.match.runner import (
    DeadStones,
    MatchError,
    MatchLedger,
    GameSpec,
    _Player,
    _Warnings,
    load_openings,
    play_game_sgf,
)
from miai.match.summary import EngineInfo, GameRecord, MatchSummary, ProgressPrinter

__all__ = ["AUTO", "RESUBMITS", "ClusterSecurity", "ClusterStats", "GameTask", "TaskResult", "resolve_address",
           "run_cluster_match", "play_task", "release_engines"]

AUTO = "auto"
RESUBMITS = 3  # times a game whose workers keep dying is submitted again before the match gives up
_POLL = 0.5  # seconds between looks at the cluster while games run (progress, lost workers)

# -- the worker's side ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameTask:
    """Everything a worker needs to play one game: the engines' command lines, the match config (without the
    driver's folders) and the game's place in the schedule."""

    black_cmd: str
    white_cmd: str
    config: MatchConfig
    game: GameSpec
    dead_stones: Callable[[], DeadStones] | None = None  # builds the referee's dead-stone judge on the worker


@dataclass(frozen=True)
class TaskResult:
    """A played game as a worker returns it."""

    record: GameRecord
    sgf: str
    engines: tuple[EngineInfo, EngineInfo]
    node: str  # the worker's name
    started: float  # seconds the worker spent starting engines for this game (0 when it reused them)
    task_seconds: float  # the task's whole time on the worker


class _EnginePool:
    """The engine pairs of one worker process, kept between tasks of the same match (one pair per game running)."""

    def __init__(self) -> None:
        self._idle: dict[str, list[tuple[_Player, _Player]]] = {}
        self._slots: Counter[str] = Counter()
        self._warned: dict[str, tuple[_Warnings, _Warnings]] = {}
        self._judges: dict[str, DeadStones] = {}
        self._lock = threading.Lock()
        atexit.register(self.close)

    def take(self, task: GameTask) -> tuple[str, tuple[_Player, _Player]]:
        """A pair for the task's engines (idle or new; not yet started)."""
        key = _pool_key(task)
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if idle:
                return key, idle.pop()
            slot = self._slots[key]
            self._slots[key] += 1
            warned = self._warned.setdefault(key, (_Warnings(), _Warnings()))
        return key, (_Player("A", task.black_cmd, task.config, slot, warned[0]),
                     _Player("B", task.white_cmd, task.config, slot, warned[1]))

    def give_back(self, key: str, pair: tuple[_Player, _Player]) -> None:
        """Keep the pair for the next game of the match."""
        with self._lock:
            self._idle.setdefault(key, []).append(pair)

    def judge(self, task: GameTask) -> DeadStones | None:
        """The task's dead-stone judge, built once per worker process."""
        if task.dead_stones is None:
            return None
        key = repr(task.dead_stones)
        with self._lock:
            if key not in self._judges:
                self._judges[key] = _locked(task.dead_stones())
            return self._judges[key]

    def release(self, key: str) -> int:
        """Quit the idle engines of one match (it has ended); how many pairs were quit."""
        with self._lock:
            pairs = self._idle.pop(key, [])
        for pair in pairs:
            for player in pair:
                player.close()
        return len(pairs)

    def close(self) -> None:
        """Quit every idle engine (at the worker's exit)."""
        for key in list(self._idle):
            self.release(key)


def _locked(judge: DeadStones) -> DeadStones:
    """`judge` one call at a time (a net evaluator need not be thread-safe; a worker may run several games)."""
    lock = threading.Lock()

    def call(state: Any) -> Sequence[int]:
        with lock:
            return judge(state)

    return call


def _pool_key(task: GameTask) -> str:
    """Games that may share engines: the same commands and the same engine settings."""
    settings = replace(task.config, games=1, first_game=1, sgf_dir=None, sprt=None, concurrency=1, openings=None)
    return repr((task.black_cmd, task.white_cmd, settings))


_POOL = _EnginePool()


def play_task(task: GameTask) -> TaskResult:
    """Play one game on this worker (the function the driver submits; it runs in a worker thread).

    Raises:
        MatchError: an engine does not start here (its command, net or config is missing on this node?).
    """
    begin = time.monotonic()
    key, pair = _POOL.take(task)
    started = 0.0
    for player in pair:
        if player.engine is None:
            t = time.monotonic()
            try:
                player.ensure_started()
            except GtpClientError as exc:
                for other in pair:
                    other.close()
                hint = " (a slow start? see --start-timeout)" if isinstance(exc, GtpTimeout) else ""
                raise MatchError(f"engine {player.label} ({player.command}) does not start on {_node_name()}: "
                                 f"{exc}{hint}") from None
            started += time.monotonic() - t
    black, white = pair if task.game.a_is_black else (pair[1], pair[0])
    try:
        record, sgf = play_game_sgf(task.game.number, black, white, task.config, task.game.opening, _POOL.judge(task))
    except BaseException:
        for player in pair:
            player.close()
        raise
    _POOL.give_back(key, pair)
    return TaskResult(record, sgf, (pair[0].info, pair[1].info), _node_name(), started, time.monotonic() - begin)


def release_engines(key: str) -> int:
    """Quit this worker's idle engines of the match `key` (the driver runs it on every worker at the end)."""
    return _POOL.release(key)


def _node_name() -> str:
    """The worker's name (`dask worker --name`), else its host and process."""
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return socket.gethostname()


# -- the driver's side ---------------------------------------------------------------------------------------


@dataclass
class ClusterStats:
    """How the cluster served the match: per game, the driver's wait from hand-out to result against the game's
    own time on its worker (the difference is the scheduling overhead), and the games played again elsewhere."""

    latency: list[float] = field(default_factory=list)  # seconds from submission to the driver holding the result
    game: list[float] = field(default_factory=list)  # the game's own seconds (GameRecord.seconds)
    engine_start: list[float] = field(default_factory=list)  # seconds spent starting engines before the game
    by_node: Counter[str] = field(default_factory=Counter)  # games played per worker
    replayed: int = 0  # games handed out again because their worker died (dask's retries are not seen here)

    def overhead(self, with_engine_start: bool = False) -> float:
        """Mean scheduling overhead per game as a fraction of the mean game time."""
        if not self.game or sum(self.game) <= 0:
            return 0.0
        spent = sum(self.latency) - sum(self.game) - (0.0 if with_engine_start else sum(self.engine_start))
        return spent / sum(self.game)

    def format(self) -> str:
        """One line: games per node, mean game time and the overhead."""
        if not self.game:
            return "cluster: no game played"
        nodes = ", ".join(f"{name} {n}" for name, n in sorted(self.by_node.items()))
        return (f"cluster: {len(self.game)} games ({nodes}); mean game {sum(self.game) / len(self.game):.2f} s; "
                f"scheduling overhead {100 * self.overhead():.1f}% of game time "
                f"({100 * self.overhead(True):.1f}% with engine starts)")


@dataclass(frozen=True)
class ClusterSecurity:
    """The driver's TLS files (`--cluster-security CA,CERT,KEY`): the cluster's certificate authority, and this
    driver's certificate and key signed by it (KEY may be left out when CERT holds the key too)."""

    ca_file: str
    cert_file: str
    key_file: str | None = None

    @classmethod
    def parse(cls, text: str) -> ClusterSecurity:
        """``CA,CERT[,KEY]`` as files that exist.

        Raises:
            MatchError: not two or three file names, or a file that is not there.
        """
        names = [name.strip() for name in text.split(",")]
        if len(names) not in (2, 3) or not all(names):
            raise MatchError(f"--cluster-security {text!r}: expected CA,CERT,KEY (the cluster's certificate "
                             "authority, then this driver's certificate and key, PEM files)")
        for name in names:
            if not os.path.isfile(os.path.expanduser(name)):
                raise MatchError(f"--cluster-security: no such file {name}")
        paths = [os.path.expanduser(name) for name in names]
        return cls(paths[0], paths[1], paths[2] if len(paths) == 3 else None)


def resolve_address(address: str) -> str:
    """The scheduler address for `--cluster`: as given, or for `auto` the one Dask's configuration names
    (`scheduler-address`, e.g. from $DASK_SCHEDULER_ADDRESS) and no other: a guessed local port could be a scheduler
    another user started.

    Raises:
        MatchError: `auto` with no scheduler in Dask's configuration.
    """
    if address != AUTO:
        return address
    import dask.config

    configured = dask.config.get("scheduler-address", None)
    if not configured:
        raise MatchError("--cluster auto: Dask's configuration names no scheduler; set DASK_SCHEDULER_ADDRESS="
                         "tls://HOST:8786 (or scheduler-address in ~/.config/dask/), or give the address")
    return str(configured)


def _security(where: str, files: ClusterSecurity | None, insecure: bool) -> Any:
    """The `distributed.Security` to reach `where` with: TLS from `files` or from Dask's configuration.

    Raises:
        MatchError: an unencrypted scheduler without `insecure`, or a tls:// one without this driver's certificates.
    """
    from distributed import Security

    scheme = where.split("://", 1)[0] if "://" in where else "tcp"
    if scheme != "tls":
        if not insecure:
            raise MatchError(f"refusing the unencrypted scheduler {where}: anyone who can reach it runs code on every "
                             "worker, and this driver unpickles what comes back; use a tls:// scheduler and its "
                             "certificates (docs/match.md, \"On a cluster\"), or --cluster-insecure on a machine and "
                             "network only you can reach")
        return Security()
    if files is not None:
        return Security(tls_ca_file=files.ca_file, tls_client_cert=files.cert_file, tls_client_key=files.key_file,
                        require_encryption=True)
    configured = Security()  # distributed.comm.tls.* of Dask's configuration
    if not (configured.tls_ca_file and configured.tls_client_cert):
        raise MatchError(f"{where}: a tls:// scheduler needs this driver's certificates: --cluster-security "
                         "CA,CERT,KEY, or distributed.comm.tls.ca-file and distributed.comm.tls.client.cert (and "
                         ".key) in Dask's configuration")
    return configured


def run_cluster_match(
    black_cmd: str,
    white_cmd: str,
    config: MatchConfig,
    address: str,
    *,
    dead_stones: Callable[[], DeadStones] | None = None,
    progress: Callable[[GameRecord, MatchSummary], None] | None = None,
    on_running: Callable[[dict[str, int]], None] | None = None,
    stats: ClusterStats | None = None,
    connect_timeout: float = 30.0,
    security: ClusterSecurity | None = None,
    insecure: bool = False,
) -> MatchSummary:
    """Play the match's games as tasks on the Dask cluster at `address` (or `auto`) and summarise them.

    The schedule, the results file and the summary are `run_match`'s (`config.concurrency` is ignored: a game runs
    on each worker thread). `dead_stones` is a picklable factory of the referee's dead-stone judge, called once
    on each worker. `on_running(games running per node)` is called as that changes; `stats` collects the timings.
    The scheduler must be a tls:// one, reached with `security` (else Dask's TLS configuration), unless `insecure`.

    Raises:
        MatchError: Dask distributed is not installed, the scheduler is unencrypted (without `insecure`) or cannot
            be reached, an engine does not start on a worker, a game's workers keep dying, or the openings or
            results file are bad.
    """
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise MatchError("--cluster needs Dask distributed: pip install 'miai[cluster]'") from None
    openings = load_openings(config.openings, config) if config.openings else [[]]
    own_printer = ProgressPrinter() if progress is None else None
    try:
        return _run(black_cmd, white_cmd, config, address, openings, dead_stones, progress or own_printer,
                    on_running or (own_printer.running if own_printer else None), stats or ClusterStats(),
                    connect_timeout, security, insecure)
    finally:
        if own_printer is not None:
            own_printer.close()


def _run(black_cmd: str, white_cmd: str, config: MatchConfig, address: str, openings: list[list[int]],
         dead_stones: Callable[[], DeadStones] | None, progress: Callable[[GameRecord, MatchSummary], None] | None,
         on_running: Callable[[dict[str, int]], None] | None, stats: ClusterStats,
         connect_timeout: float, files: ClusterSecurity | None, insecure: bool) -> MatchSummary:
    from distributed import Client

    assert progress is not None
    where = resolve_address(address)
    security = _security(where, files, insecure)  # before anything is written or any game is handed out
    ledger = MatchLedger(black_cmd, white_cmd, config, openings, progress)
    if not ledger.pending:
        return ledger.finish()
    try:
        client = Client(where, timeout=connect_timeout, set_as_default=False, security=security)
    except (OSError, TimeoutError) as exc:
        hint = " (or it refused this driver's certificate)" if where.startswith("tls://") else ""
        raise MatchError(f"no Dask scheduler answers at {where}{hint} ({exc}); start one and its workers as "
                         "docs/match.md, \"On a cluster\", says") from None
    driver = _Driver(client, ledger, black_cmd, white_cmd, dead_stones, on_running, stats)
    try:
        with client.as_current():  # distributed.wait looks for the client here
            return driver.run()
    finally:
        ledger.stop()
        ledger.close()
        driver.cancel()
        driver.release_engines()
        client.close()


@dataclass
class _InFlight:
    game: GameSpec
    submitted: float
    attempts: int


class _Driver:
    """Hands the ledger's games to the cluster, one per worker thread, and brings the results back."""

    def __init__(self, client: Any, ledger: MatchLedger, black_cmd: str, white_cmd: str,
                 dead_stones: Callable[[], DeadStones] | None, on_running: Callable[[dict[str, int]], None] | None,
                 stats: ClusterStats) -> None:
        self.client, self.ledger, self.stats, self.on_running = client, ledger, stats, on_running
        self.commands = (black_cmd, white_cmd)
        self.worker_config = replace(ledger.config, sgf_dir=None, openings=None, sprt=None)  # the driver's business
        self.dead_stones = dead_stones
        self.flying: dict[Any, _InFlight] = {}
        self.retry: list[tuple[GameSpec, int]] = []  # games to hand out again first (their worker died)
        self._shown: dict[str, int] | None = None

    def run(self) -> MatchSummary:
        from distributed import wait

        while True:
            self._hand_out()
            if not self.flying:
                return self.ledger.finish()
            try:
                done, _ = wait(list(self.flying), timeout=_POLL, return_when="FIRST_COMPLETED")
            except TimeoutError:  # none ended within _POLL: look at the cluster and wait again
                done = set()
            for future in done:
                self._collect(future)
            self._show_running()

    def _capacity(self) -> int:
        """Games that may run at once: one per worker thread (at least one, queued until a worker comes)."""
        threads: dict[str, int] = self.client.nthreads()
        return max(1, sum(threads.values()))

    def _hand_out(self) -> None:
        capacity = self._capacity()
        while len(self.flying) < capacity:
            if self.retry:
                game, attempts = self.retry.pop(0)
            else:
                next_game = self.ledger.next_game()
                if next_game is None:
                    return
                game, attempts = next_game, 0
            key = f"miai-game-{game.number}-{uuid.uuid4().hex[:8]}"
            task = GameTask(*self.commands, self.worker_config, game, self.dead_stones)
            future = self.client.submit(play_task, task, key=key, pure=False)
            self.flying[future] = _InFlight(game, time.monotonic(), attempts)

    def _collect(self, future: Any) -> None:
        from distributed import KilledWorker

        flight = self.flying.pop(future)
        if future.status == "finished":
            result: TaskResult = future.result()
            self.stats.latency.append(time.monotonic() - flight.submitted)
            self.stats.game.append(result.record.seconds)
            self.stats.engine_start.append(result.started)
            self.stats.by_node[result.node] += 1
            self.ledger.record(result.record, result.sgf, result.engines)
            return
        error = future.exception() if future.status == "error" else None
        if error is None or isinstance(error, KilledWorker):  # lost with its workers (or cancelled): play it again
            if flight.attempts >= RESUBMITS:
                raise MatchError(f"game {flight.game.number}: its workers died {flight.attempts + 1} times over "
                                 "(does it crash them?); the match stops") from None
            self.stats.replayed += 1
            self.retry.append((flight.game, flight.attempts + 1))
            return
        if isinstance(error, MatchError):
            raise MatchError(str(error)) from None
        raise MatchError(f"game {flight.game.number} failed on the cluster: {type(error).__name__}: {error}") from None

    def _show_running(self) -> None:
        if self.on_running is None:
            return
        try:
            processing = self.client.processing()
            workers = self.client.scheduler_info()["workers"]
        except (OSError, TimeoutError):
            return  # the next look will do
        keys = {future.key for future in self.flying}
        running = {str(workers.get(addr, {}).get("name", addr)): sum(1 for k in tasks if k in keys)
                   for addr, tasks in processing.items()}
        if running != self._shown:
            self._shown = running
            self.on_running(running)

    def release_engines(self) -> None:
        """Quit the match's engines on every worker (the engines of a game still running quit when it ends)."""
        key = _pool_key(GameTask(*self.commands, self.worker_config, GameSpec(1, True, ())))
        try:
            self.client.run(release_engines, key)
        except Exception as exc:  # noqa: BLE001 - the match is over; a worker that cannot be reached keeps them
            print(f"match: could not quit the engines on every worker ({exc})", file=sys.stderr)

    def cancel(self) -> None:
        """Drop the games still out (after an error or Ctrl-C; their results would be ignored)."""
        if self.flying:
            self.client.cancel(list(self.flying))
            self.flying.clear()
