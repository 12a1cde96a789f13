"""Every search limit holds on both of the search's loops: one batch at a time, and overlapped (the net evaluates a
batch in its own thread while the next is collected, as with a real net), from a fresh root and after pondering;
progress reports and the search's statistics count the playouts actually played.

The evaluator here overlaps as a net does (toygame.Overlapping): a batch in flight really runs beside the search.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from miai.engine.config import Config, SearchConfig, apply_overrides
from miai.engine.player import EnginePlayer
from miai.engine.core.search import Search
from miai.engine.core.snapshot import Snapshot
from miai.go.coords import Color
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import UniformEvaluator
from test_search import assert_graph_sound
from toygame import Overlapping, ScriptedEvaluator, ToyState, set_game

LOOPS = ["plain", "overlapped"]
GAME = set_game(points=8, depth=6, weights=(3.0, -1.0, 2.0, 0.5, 1.5, -2.0, 1.0, -0.5))


@pytest.fixture(params=LOOPS)
def loop(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def net() -> Iterator[Overlapping]:
    evaluator = Overlapping(ScriptedEvaluator(max_batch=8), seconds=0.002)
    yield evaluator
    evaluator.close()


def make_search(net: Overlapping, loop: str, **kw: object) -> Search:
    """A search of a game big enough for every limit here (8 points, 6 moves deep), batches of up to 8."""
    options: dict[str, object] = dict(max_visits=0, max_playouts=0, max_time=0.0, batch_size=8, seed=1,
                                      visits_per_batch_leaf=0, overlap=loop == "overlapped")
    options.update(kw)
    search = Search(net, SearchConfig(**options))  # type: ignore[arg-type]
    search.set_root(ToyState(GAME))
    return search


def assert_loop_ran(net: Overlapping, loop: str) -> None:
    """The loop under test is the one that ran: the overlapped one starts batches, the plain one never does."""
    assert (net.starts > 0) == (loop == "overlapped")


def last_run_playouts(search: Search) -> int:
    return int(search.stats()["last_run"]["playouts"])


@pytest.mark.parametrize("cap", [1, 50, 203])
def test_max_playouts_holds_with_a_higher_visit_cap(net: Overlapping, loop: str, cap: int) -> None:
    # The reported bug: maxPlayouts 50 under maxVisits 5000 played 4,999 playouts with overlap on.
    search = make_search(net, loop, max_playouts=cap, max_visits=5000)
    snap = search.run()
    assert_loop_ran(net, loop)
    assert snap.playouts == cap
    assert last_run_playouts(search) == cap
    assert search.stats()["playouts"] == cap
    assert snap.root.visits == cap + 1  # the root's own evaluation and one visit per playout


def test_max_playouts_given_to_run_holds_over_the_configs(net: Overlapping, loop: str) -> None:
    search = make_search(net, loop, max_visits=5000)
    assert search.run(max_playouts=37).playouts == 37


@pytest.mark.parametrize("cap", [2, 64, 301])
def test_max_visits_holds(net: Overlapping, loop: str, cap: int) -> None:
    search = make_search(net, loop, max_visits=cap)
    snap = search.run()
    assert_loop_ran(net, loop)
    assert snap.root.visits == cap
    assert snap.playouts == last_run_playouts(search) == cap - 1


def test_max_time_holds(loop: str) -> None:
    # Batches of 0.1 s on the net's side: a 0.6 s run is about 5 steps. No step is begun that would end past the
    # cap, so the run ends before it, give or take the machine's jitter (far less than the step one more would take).
    slow = Overlapping(ScriptedEvaluator(max_batch=8), seconds=0.1)
    try:
        search = make_search(slow, loop, max_time=0.6)
        began = time.monotonic()
        snap = search.run()
        took = time.monotonic() - began
    finally:
        slow.close()
    assert_loop_ran(slow, loop)
    assert 0.35 < snap.elapsed < 0.6 + 0.05 and took < 0.7
    assert snap.playouts == last_run_playouts(search) == snap.root.visits - 1 > 0


def test_the_first_limit_reached_ends_the_run(net: Overlapping, loop: str) -> None:
    search = make_search(net, loop, max_visits=40, max_playouts=500, max_time=30.0)
    assert search.run().root.visits == 40
    search = make_search(net, loop, max_visits=500, max_playouts=40, max_time=30.0)
    assert search.run().playouts == 40


def test_progress_reports_count_the_playouts_played(net: Overlapping, loop: str) -> None:
    # The overlapped loop's progress snapshots used to report 0 playouts. A report shows the playouts whose results
    # are in the graph: on a fresh root, one root visit each.
    seen: list[Snapshot] = []
    search = make_search(net, loop, max_playouts=300)
    final = search.run(on_progress=seen.append, progress_interval=0.005)
    assert_loop_ran(net, loop)
    assert len(seen) >= 3
    assert all(snap.playouts == snap.root.visits - 1 for snap in seen)
    assert [snap.playouts for snap in seen] == sorted(snap.playouts for snap in seen)
    assert 0 < seen[-1].playouts <= final.playouts == 300


def ponder(search: Search, seconds: float) -> int:
    """Search without limits until stopped (as the player ponders) and return the root's visits then; the ponder
    search stops within a step of being told."""
    stop = threading.Event()
    thread = threading.Thread(target=search.ponder, args=(stop,))
    thread.start()
    time.sleep(seconds)
    stop.set()
    told = time.monotonic()
    thread.join(5.0)
    assert not thread.is_alive() and time.monotonic() - told < 1.0
    assert search.root is not None
    return search.root.visits


def test_after_pondering_max_playouts_counts_only_the_new_search(net: Overlapping, loop: str) -> None:
    search = make_search(net, loop, max_playouts=30)
    pondered = ponder(search, 0.15)
    assert pondered > 30
    snap = search.run()
    assert_loop_ran(net, loop)
    assert snap.playouts == last_run_playouts(search) == 30
    assert snap.root.visits == pondered + 30


def test_after_pondering_max_visits_counts_the_kept_visits(net: Overlapping, loop: str) -> None:
    search = make_search(net, loop)
    pondered = ponder(search, 0.1)
    snap = search.run(max_visits=pondered + 25)
    assert snap.root.visits == pondered + 25 and snap.playouts == 25
    # A root that already has its visits is not searched further.
    again = search.run(max_visits=pondered)
    assert again.playouts == 0 and again.root.visits == pondered + 25


def test_a_stopped_ponder_search_builds_no_snapshot(net: Overlapping, loop: str, monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    # The command that stops a ponder search waits for it to end, on the move's clock: nothing reads a snapshot of
    # the pondered graph, and building one of a large graph costs tens of milliseconds.
    search = make_search(net, loop)
    built: list[object] = []
    build = search._snapshot
    monkeypatch.setattr(search, "_snapshot", lambda *args: built.append(args) or build(*args))
    assert ponder(search, 0.1) > 1
    assert built == []
    assert search.run(max_playouts=10).playouts == 10 and len(built) == 1  # a run's result is built as before


def test_pondering_stops_at_the_node_cap(net: Overlapping, loop: str) -> None:
    search = make_search(net, loop, max_nodes=60)
    snap = search.run(max_visits=0, max_playouts=0, max_time=0.0)
    assert 60 <= len(search.table) < 60 + 2 * 8  # at most the batches begun before the cap was seen
    assert snap.playouts == last_run_playouts(search) > 0


@pytest.mark.parametrize("overlap", [False, True])
def test_genmove_keeps_to_max_playouts_under_a_higher_visit_cap(overlap: bool) -> None:
    # The report, as a user ran it: --set search.max_playouts=50 --set search.max_visits=5000 --set
    # search.max_time=0, genmove b, miai-search_stats. A net overlaps (search.overlap is on by default).
    net = Overlapping(UniformEvaluator(), seconds=0.001)
    try:
        config = apply_overrides(Config(), ["search.seed=5", "search.max_playouts=50", "search.max_visits=5000",
                                            "search.max_time=0", f"search.overlap={str(overlap).lower()}"])
        player = EnginePlayer(net, config)
        player.genmove(GameState(9, Rules.preset("chinese"), 7.0), Color.BLACK)
    finally:
        net.close()
    assert (net.starts > 0) == overlap
    stats = player.search_stats()
    assert stats["last_run"]["playouts"] == 50
    assert stats["visits"] == 51


def slow_net_search(seconds: float, **kw: object) -> tuple[Overlapping, Search]:
    """An overlapped search whose root is already evaluated, on a net that from now on takes ``seconds`` a batch."""
    net = Overlapping(ScriptedEvaluator(max_batch=8), seconds=0.0)
    search = make_search(net, "overlapped", **kw)
    search.run(max_playouts=8)
    net.seconds = seconds
    return net, search


def test_a_batch_the_net_cannot_finish_in_time_is_not_waited_for() -> None:
    # Batches of 1 s against a 0.3 s cap: the run answers at its cap from what it has searched, without waiting
    # for the batches in flight, and leaves the graph as if they had never been begun.
    net, search = slow_net_search(1.0)
    try:
        began = time.monotonic()
        snap = search.run(max_time=0.3)
        took = time.monotonic() - began
        assert took < 0.5 and snap.elapsed < 0.45
        assert search.stats()["batches_abandoned"] >= 1
        assert snap.playouts == last_run_playouts(search) == 0  # nothing came back in time
        assert_graph_sound(search)
        net.seconds = 0.0
        assert search.run(max_playouts=40).playouts == 40  # the next run searches on from a sound graph
        assert_graph_sound(search)
    finally:
        net.close()


def test_a_batch_that_finishes_before_the_cap_is_applied() -> None:
    # Batches of 0.1 s against a 1 s cap: the batches that come back in time are played, the one the cap cuts off
    # is not, and the counts agree with the graph.
    net, search = slow_net_search(0.1)
    try:
        visits = search.root.visits if search.root is not None else 0
        snap = search.run(max_time=1.0)
        assert 0.7 < snap.elapsed < 1.0 + 0.05
        assert snap.playouts == last_run_playouts(search) == snap.root.visits - visits > 0
        assert_graph_sound(search)
    finally:
        net.close()


def test_a_stopped_ponder_does_not_wait_for_its_batch() -> None:
    # stop_pondering runs on a genmove's clock: the ponder search stops at once, whatever the net is doing.
    net, search = slow_net_search(1.0)
    try:
        stop = threading.Event()
        thread = threading.Thread(target=search.ponder, args=(stop,))
        thread.start()
        time.sleep(0.2)
        stop.set()
        told = time.monotonic()
        thread.join(5.0)
        assert not thread.is_alive() and time.monotonic() - told < 0.3
        assert_graph_sound(search)
    finally:
        net.close()
