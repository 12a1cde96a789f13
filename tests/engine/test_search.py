"""The graph search on hand-built toy games with a scripted evaluator: formulas, modes, terminals, cycles, reuse."""

from __future__ import annotations

import math
import threading
from collections import defaultdict

import pytest

from miai.engine.config import SearchConfig
from miai.engine.core.graph import Node, reachable_ids
from miai.engine.core.search import PASS, Search, SearchError
from toygame import Deferred, ScriptedEvaluator, ToyGame, ToyState, set_game


# The toy tests check the plain MCGS formulas (visit-weighted averages); KataGo's refinements of the weights and of
# the batch size are tested in test_refinements.py.
PLAIN = dict(value_weight_exponent=0.0, use_noise_pruning=False, visits_per_batch_leaf=0)


def config(**kw: object) -> SearchConfig:
    # No time limit: these searches test what visits do, and a loaded machine must not cut them short.
    base: dict[str, object] = dict(max_visits=300, max_time=0.0, batch_size=1, seed=1, use_lcb=False,
                                   forbid_eye_filling=False, **PLAIN)
    base.update(kw)
    return SearchConfig(**base)  # type: ignore[arg-type]


def searched(game: ToyGame, values: dict[str, float] | None = None, **kw: object) -> Search:
    search = Search(ScriptedEvaluator(values), config(**kw))
    search.set_root(ToyState(game))
    search.run()
    return search


def nodes_of(search: Search) -> list[Node]:
    assert search.root is not None
    found = {id(search.root): search.root}
    stack = [search.root]
    while stack:
        for child in stack.pop().children():
            if id(child) not in found:
                found[id(child)] = child
                stack.append(child)
    return list(found.values())


def incoming_edge_visits(search: Search) -> dict[int, int]:
    incoming: dict[int, int] = defaultdict(int)
    for node in nodes_of(search):
        for edge in node.edges:
            if edge.child is not None:
                incoming[id(edge.child)] += edge.visits
    return incoming


def assert_graph_sound(search: Search) -> None:
    """N = 1 + sum(edge visits) everywhere and nothing left in flight; Q = (U + sum(edge visits * child Q)) / N
    wherever it must be fresh: everywhere in tree mode, and at the root in graph mode (a shared child can change
    through another parent after this node's last update; the root is updated at the end of every playout)."""
    for node in nodes_of(search):
        assert node.virtual_loss == 0 and not node.pending
        if node.terminal or not node.expanded:
            continue
        weighted = [e for e in node.edges if e.visits]
        n = 1 + sum(e.visits for e in weighted)
        assert node.visits == n
        if search.config.graph and node is not search.root:
            continue
        for i, own in enumerate(node.own):
            total = own + sum(e.visits * e.child.q[i] for e in weighted)  # type: ignore[union-attr]
            assert node.q[i] == pytest.approx(total / n, abs=1e-9)


# ---------------------------------------------------------------------------------------- formulas and limits
@pytest.mark.parametrize("mode", ["stop", "continue", "leaky", "tree"])
@pytest.mark.parametrize("batch", [1, 8])
def test_n_and_q_hold_after_a_search(mode: str, batch: int) -> None:
    options: dict[str, object] = {"graph": False} if mode == "tree" else {"child_visits_exceed_edge": mode}
    search = searched(set_game(points=4, depth=4), {"b[0]w[]": 0.4, "b[1]w[]": -0.2},
                      batch_size=batch, leak_probability=0.5, **options)
    assert search.root is not None and search.root.visits == 300
    assert_graph_sound(search)


def test_root_value_matches_scripted_leaf_values() -> None:
    game = ToyGame({"root": {0: "a", 1: "b"}, "a": {0: "a2"}, "b": {0: "b2"}})
    search = Search(ScriptedEvaluator({"a": 0.5, "b": -1.0}), config(max_visits=3))
    search.set_root(ToyState(game))
    search.run()
    root = search.root
    assert root is not None and root.visits == 3
    # root U = 0, one visit each to a (White +0.5) and b (White -1); White's view.
    assert root.q[1] == pytest.approx((0 + 0.5 - 1.0) / 3)
    snapshot = search.snapshot()
    by_move = {m.move: m for m in snapshot.moves}
    assert by_move[1].winrate == pytest.approx(1.0)  # Black to move: b is a sure Black win
    assert by_move[0].winrate == pytest.approx(0.25)
    assert by_move[1].score_mean == pytest.approx(10.0)


def test_visit_and_playout_limits_are_exact_with_batches() -> None:
    evaluator = ScriptedEvaluator(max_batch=4)
    search = Search(evaluator, config(max_visits=50, batch_size=16))
    search.set_root(ToyState(set_game(points=5, depth=4)))
    snap = search.run()
    assert snap.root.visits == 50
    assert max(evaluator.batches) <= 4  # capped by the evaluator's max_batch
    snap = search.run(max_visits=0, max_playouts=7)
    assert snap.root.visits == 57 and snap.playouts == 7


def test_stop_event_and_progress_callback() -> None:
    search = Search(ScriptedEvaluator(), config(max_visits=0, max_playouts=40, batch_size=4))
    search.set_root(ToyState(set_game()))
    seen = []
    snap = search.run(on_progress=seen.append, progress_interval=0.0)
    assert snap.playouts == 40 and len(seen) >= 5
    stop = threading.Event()
    stop.set()
    assert search.run(stop=stop).playouts == 0


def test_run_or_snapshot_before_set_root_is_an_error() -> None:
    search = Search(ScriptedEvaluator(), config())
    with pytest.raises(SearchError, match="set_root"):
        search.run()
    with pytest.raises(SearchError, match="set_root"):
        search.snapshot()


# ------------------------------------------------------------------------------------------ transpositions
def test_transposed_child_is_one_node_with_edge_and_child_visits_apart() -> None:
    search = searched(set_game(points=4, depth=4))
    incoming = incoming_edge_visits(search)
    parents: dict[int, int] = defaultdict(int)
    for node in nodes_of(search):
        for child in node.children():
            parents[id(child)] += 1
    shared = [n for n in nodes_of(search) if parents[id(n)] >= 2 and not n.terminal]
    assert shared, "the set game must produce transpositions"
    assert search.stats()["transposition_hits"] > 0
    # stop mode: an edge visit either descends into the child (child visit) or stops at it (no child visit).
    stops = sum(incoming[id(n)] - n.visits for n in shared)
    assert all(incoming[id(n)] >= n.visits for n in shared)
    assert stops > 0


def test_stop_mode_accounts_every_stopped_playout() -> None:
    search = searched(set_game(points=4, depth=4))
    incoming = incoming_edge_visits(search)
    gap = sum(incoming[id(n)] - n.visits for n in nodes_of(search) if n is not search.root)
    assert gap == search.stats()["stopped_early"] > 0
    assert search.stats()["leaky_descents"] == 0


def test_continue_mode_always_descends() -> None:
    search = searched(set_game(points=4, depth=4), child_visits_exceed_edge="continue")
    incoming = incoming_edge_visits(search)
    for node in nodes_of(search):
        if node is not search.root:
            assert incoming[id(node)] == node.visits
    assert search.stats()["stopped_early"] == 0


@pytest.mark.parametrize("probability, stops, leaks", [(0.0, True, False), (1.0, False, True), (0.5, True, True)])
def test_leaky_mode_descends_with_the_configured_probability(probability: float, stops: bool, leaks: bool) -> None:
    search = searched(set_game(points=4, depth=4), child_visits_exceed_edge="leaky", leak_probability=probability)
    stats = search.stats()
    assert (stats["stopped_early"] > 0) == stops
    assert (stats["leaky_descents"] > 0) == leaks
    incoming = incoming_edge_visits(search)
    gap = sum(incoming[id(n)] - n.visits for n in nodes_of(search) if n is not search.root)
    assert gap == stats["stopped_early"]


def test_tree_mode_never_shares_nodes() -> None:
    search = searched(set_game(points=4, depth=4), graph=False)
    parents: dict[int, int] = defaultdict(int)
    for node in nodes_of(search):
        for child in node.children():
            parents[id(child)] += 1
    assert max(parents.values()) == 1
    stats = search.stats()
    assert stats["transposition_hits"] == 0 and stats["stopped_early"] == 0
    assert_graph_sound(search)


@pytest.mark.parametrize("rule", ["ucb1", "ucb1-tuned"])
def test_ucb_selection_tries_every_move_then_keeps_the_graph_sound(rule: str) -> None:
    search = searched(set_game(points=5, depth=4), selection=rule, max_visits=200, batch_size=4)
    assert search.root is not None
    assert all(edge.visits > 0 for edge in search.root.edges) and not search.root.has_untouched()
    assert_graph_sound(search)


def test_graph_mode_evaluates_fewer_positions_than_tree_mode() -> None:
    graph = searched(set_game(points=5, depth=4), max_visits=400)
    tree = searched(set_game(points=5, depth=4), max_visits=400, graph=False)
    assert graph.stats()["net_evals"] < tree.stats()["net_evals"]


# ---------------------------------------------------------------------------------------------- terminals
def test_terminal_children_are_valued_by_their_exact_score() -> None:
    # Black to move; "win" ends with Black 5 points ahead, "lose" with White 5 ahead.
    game = ToyGame({"root": {0: "win", 1: "lose", 2: "open"}, "open": {0: "x"}}, {"win": -5.0, "lose": 5.0})
    search = searched(game, {"open": 0.0}, max_visits=60)
    snap = search.snapshot()
    by_move = {m.move: m for m in snap.moves}
    assert by_move[0].winrate == 1.0 and by_move[0].score_mean == 5.0 and by_move[0].score_stdev == 0.0
    assert by_move[1].winrate == 0.0 and by_move[1].score_lead == -5.0
    assert search.best_move(snap) == 0
    win_edge = search.root.edge_for(0)  # type: ignore[union-attr]
    assert win_edge is not None and win_edge.child is not None and win_edge.child.terminal
    assert win_edge.child.visits == win_edge.visits  # each visit counts the exact result once more


def test_game_already_over_returns_an_empty_snapshot() -> None:
    game = ToyGame({"root": {}}, {"root": 1.0})
    search = Search(ScriptedEvaluator(), config())
    search.set_root(ToyState(game))
    snap = search.run()
    assert snap.moves == () and search.best_move(snap) == PASS


# ------------------------------------------------------------------------------------------------- cycles
def cycle_game() -> ToyGame:
    # a -> b -> a -> ... with the same hashes each time round (a history-free hash), plus exits.
    return ToyGame({"root": {0: "a"}, "a": {0: "b", 1: "a_out"}, "b": {0: "a", 1: "b_out"},
                    "a_out": {0: "end"}, "b_out": {0: "end"}}, {"end": 1.0})


@pytest.mark.parametrize("mode", ["stop", "continue"])
def test_cycles_do_not_recurse_forever(mode: str) -> None:
    search = searched(cycle_game(), child_visits_exceed_edge=mode, max_visits=400, batch_size=4)
    assert search.root is not None and search.root.visits == 400
    assert search.stats()["cycle_stops"] > 0
    assert_graph_sound(search)
    for move in search.snapshot().moves:
        assert len(move.pv) <= search.config.pv_length


# -------------------------------------------------------------------------------------------- legality
class SuperkoState(ToyState):
    """A toy state where move 1 at the root is offered by the evaluator but illegal on the current path."""

    def is_legal(self, move: int) -> bool:
        return not (self.position == "root" and move == 1) and super().is_legal(move)

    def copy(self) -> SuperkoState:
        other = SuperkoState(self.game)
        other.path, other.moves = list(self.path), list(self.moves)
        return other


def test_move_illegal_on_the_path_is_skipped() -> None:
    game = ToyGame({"root": {0: "a", 1: "b", 2: "c"}, "a": {0: "x"}, "b": {0: "x"}, "c": {0: "x"}}, {"x": 0.0})
    search = Search(ScriptedEvaluator(priors={"root": {0: 0.1, 1: 0.8, 2: 0.1}}), config(max_visits=50))
    search.set_root(SuperkoState(game))
    snap = search.run()
    assert 1 not in {m.move for m in snap.moves}
    assert search.stats()["illegal_edges"] == 1


# ------------------------------------------------------------------------------------------------- reuse
def test_tree_reuse_keeps_the_subgraph_and_sweeps_the_rest() -> None:
    game = set_game(points=5, depth=4)
    search = Search(ScriptedEvaluator(), config(max_visits=400))
    state = ToyState(game)
    search.set_root(state)
    snap = search.run()
    move = snap.moves[0].move
    edge = search.root.edge_for(move)  # type: ignore[union-attr]
    assert edge is not None and edge.child is not None
    kept, kept_visits = edge.child, edge.child.visits
    reachable = reachable_ids(kept)
    before = len(search.table)
    state.push(move)
    search.set_root(state)
    assert search.root is kept and kept.visits == kept_visits
    assert {id(n) for n in search.table} == reachable - {id(kept)}  # root outside the table
    assert search.stats()["nodes_freed"] == before - len(search.table) - 1
    search.run(max_visits=kept_visits + 50)
    assert search.root.visits == kept_visits + 50
    assert_graph_sound(search)


def test_unrelated_position_clears_the_graph() -> None:
    game = set_game(points=5, depth=4)
    search = Search(ScriptedEvaluator(), config(max_visits=100))
    search.set_root(ToyState(game))
    search.run()
    other = ToyState(game)
    other.push(1)
    search.set_root(other)  # not an extension of the previous root: the moves differ
    search.set_root(ToyState(game))
    assert search.root is None and len(search.table) == 0


# --------------------------------------------------------------------------------------------- move choice
def test_lcb_prefers_a_reliable_move_and_temperature_samples() -> None:
    search = searched(set_game(points=5, depth=3), max_visits=500, use_lcb=True)
    snap = search.snapshot()
    floor = search.config.min_visit_prop_for_lcb * max(m.edge_visits for m in snap.moves)
    eligible = [m for m in snap.moves if m.edge_visits >= floor]
    assert snap.moves[0].utility_lcb == max(m.utility_lcb for m in eligible)
    for m in snap.moves:
        assert m.lcb <= m.winrate and m.utility_lcb <= m.utility
    hot = Search(ScriptedEvaluator(), config(temperature=5.0, temperature_early=5.0, seed=3))
    picks = {hot.best_move(snap) for _ in range(200)}
    assert len(picks) > 1 and picks <= {m.move for m in snap.moves}


def test_stats_report_the_counters() -> None:
    search = searched(set_game(points=4, depth=4), max_visits=120, batch_size=4)
    stats = search.stats()
    assert stats["visits"] == 120
    assert stats["nodes"] == len(search.table) + 1
    assert stats["net_evals"] + stats["stopped_early"] + stats["terminal_visits"] + stats["cycle_stops"] == 120
    assert math.isfinite(stats["last_run"]["playouts_per_second"])


def test_avoid_and_allow_restrict_the_root_moves_for_one_run() -> None:
    game = set_game(points=5, depth=3)
    search = Search(ScriptedEvaluator(), config(max_visits=100))
    search.set_root(ToyState(game))
    snap = search.run(avoid=[0, 1])
    assert {m.move for m in snap.moves} == {2, 3, 4}
    assert search.root.edge_for(0).visits == 0  # type: ignore[union-attr]
    snap = search.run(max_visits=200, allow=[1])
    assert [m.move for m in snap.moves] == [1] and snap.moves[0].edge_visits == 100
    snap = search.run(max_visits=300)  # no filter: every move is open again
    assert {m.move for m in snap.moves} == {0, 1, 2, 3, 4}
    assert_graph_sound(search)


def test_the_move_played_after_a_one_visit_search_keeps_to_the_root_filter() -> None:
    # One visit evaluates the root and searches no child: the move comes from the root's priors, where the filter
    # must hold as it does for a searched move (kata-genmove_analyze avoid, or allow, at maxVisits 1).
    game = set_game(points=5, depth=3)
    search = Search(ScriptedEvaluator(priors={"root": {0: 0.1, 1: 0.5, 2: 0.2, 3: 0.1, 4: 0.1}}), config())
    search.set_root(ToyState(game))
    snap = search.run(max_visits=1, avoid=[1])
    assert snap.moves == () and search.best_move(snap) == 2  # the best prior left, not the avoided 1
    assert search.best_move(search.run(max_visits=1, allow=[0, 2])) == 2
    assert search.best_move(search.run(max_visits=1)) == 1  # the next run has no filter


def test_root_noise_changes_priors_but_keeps_a_distribution() -> None:
    game = set_game(points=5, depth=3)
    search = Search(ScriptedEvaluator(), config(max_visits=50, root_noise=True, seed=9))
    search.set_root(ToyState(game))
    search.run()
    priors = dict(search.root.all_priors())  # type: ignore[union-attr]
    assert sum(priors.values()) == pytest.approx(1.0, abs=1e-5)
    assert max(priors.values()) - min(priors.values()) > 0.01  # uniform before the noise


@pytest.mark.parametrize("overlap", [False, True])
def test_a_root_without_playable_moves_ends_the_run(overlap: bool) -> None:
    game = ToyGame({"root": {1: "b"}, "b": {0: "x"}}, {"x": 0.0})  # move 1 is illegal on the path (SuperkoState)
    evaluator = Deferred(ScriptedEvaluator()) if overlap else ScriptedEvaluator()  # (overlap needs a split batch)
    search = Search(evaluator, config(max_visits=50, overlap=overlap))
    search.set_root(SuperkoState(game))
    snap = search.run()
    assert snap.moves == () and search.best_move(snap) == PASS


def test_progress_callback_may_read_the_search() -> None:
    search = Search(ScriptedEvaluator(), config(max_visits=30))
    search.set_root(ToyState(set_game()))
    seen = []
    search.run(on_progress=lambda snap: seen.append(search.snapshot().root.visits), progress_interval=0.0)
    assert seen and seen[-1] <= 30


class SlowEvaluator(ScriptedEvaluator):
    """Takes ``delay`` seconds per batch, like a net."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    def evaluate(self, states: list) -> list:  # type: ignore[type-arg]
        import time

        time.sleep(self.delay)
        return super().evaluate(states)


def test_max_time_stops_the_search() -> None:
    search = Search(SlowEvaluator(0.01), config(max_visits=0, batch_size=2))
    search.set_root(ToyState(set_game(points=6, depth=5)))
    snap = search.run(max_time=0.3)
    assert 0.25 <= snap.elapsed < 0.6  # the last step not begun ends within one step of the cap
    assert 0 < snap.playouts < 200  # about 2 playouts per 10 ms batch


def test_a_step_that_would_overrun_the_time_cap_is_not_begun() -> None:
    # Steps of 0.1 s and a 0.25 s cap: a third step would end at 0.3 s, past the cap.
    search = Search(SlowEvaluator(0.1), config(max_visits=0, batch_size=2))
    search.set_root(ToyState(set_game(points=6, depth=5)))
    snap = search.run(max_time=0.25)
    assert snap.elapsed < 0.25
    assert 0 < snap.playouts


def test_max_nodes_bounds_the_graph() -> None:
    search = Search(ScriptedEvaluator(), config(max_visits=0, max_nodes=40, batch_size=4))
    search.set_root(ToyState(set_game(points=6, depth=5)))
    search.run()
    assert 40 <= len(search.table) < 40 + 4


class FlakyEvaluator(ScriptedEvaluator):
    """Raises on its ``fail_at``-th call, like a net that runs out of memory once."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.calls = 0
        self.fail_at = fail_at

    def evaluate(self, states: list) -> list:  # type: ignore[type-arg]
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("net failed")
        return super().evaluate(states)


@pytest.mark.parametrize("overlap", [False, True])
def test_a_failed_evaluation_leaves_the_graph_usable(overlap: bool) -> None:
    flaky = FlakyEvaluator(fail_at=4)
    search = Search(Deferred(flaky) if overlap else flaky, config(max_visits=100, batch_size=4, overlap=overlap))
    state = ToyState(set_game(points=5, depth=4))
    search.set_root(state)
    with pytest.raises(RuntimeError, match="net failed"):
        search.run()
    for scratch in search._setup.scratch:
        assert scratch.path == state.path  # every scratch state is back at the root
    snap = search.run()
    assert snap.root.visits == 100
    assert_graph_sound(search)


def test_overlap_needs_an_evaluator_that_splits_its_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """With an evaluator that cannot split a batch (random playouts), overlap would only make the batches staler:
    the search keeps the plain loop; with one that can, it overlaps."""
    used: list[bool] = []
    real = Search._loop_overlapped

    def spy(self: Search, *args: object) -> int:
        used.append(True)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Search, "_loop_overlapped", spy)
    for evaluator, expected in ((ScriptedEvaluator(), []), (Deferred(ScriptedEvaluator()), [True])):
        used.clear()
        search = Search(evaluator, config(max_visits=40, batch_size=4, overlap=True))
        search.set_root(ToyState(set_game()))
        assert search.run().root.visits == 40
        assert used == expected


def test_a_node_without_playable_moves_below_the_root_is_counted_not_retried() -> None:
    # "dead" offers only a move that the state rejects on every path (SuperkoState forbids move 1 at the root
    # only, so use a dedicated game): the search must keep going through the other root move.
    class DeadEnd(ToyState):
        def is_legal(self, move: int) -> bool:
            return self.position != "dead" and super().is_legal(move)

        def copy(self) -> DeadEnd:
            other = DeadEnd(self.game)
            other.path, other.moves = list(self.path), list(self.moves)
            return other

    game = ToyGame({"root": {0: "dead", 1: "live"}, "dead": {0: "x"}, "live": {0: "end"}}, {"x": 0.0, "end": 1.0})
    search = Search(ScriptedEvaluator(), config(max_visits=60, batch_size=4))
    search.set_root(DeadEnd(game))
    snap = search.run()
    assert snap.root.visits == 60
    assert_graph_sound(search)


def test_reused_root_gets_back_moves_only_illegal_on_another_path() -> None:
    class PathDependent(ToyState):
        """Move 0 at "mid" is illegal in games with a ``tainted`` history (a stand-in for superko)."""

        tainted = False

        def is_legal(self, move: int) -> bool:
            if self.position == "mid" and move == 0 and self.tainted:
                return False
            return super().is_legal(move)

        def copy(self) -> PathDependent:
            other = PathDependent(self.game)
            other.path, other.moves, other.tainted = list(self.path), list(self.moves), self.tainted
            return other

    game = ToyGame({"root": {1: "mid"}, "mid": {0: "a", 1: "b"}, "a": {0: "end"}, "b": {0: "end"}}, {"end": 0.0})
    search = Search(ScriptedEvaluator(priors={"mid": {0: 0.9, 1: 0.1}}), config(max_visits=20))
    state = PathDependent(game)
    state.tainted = True
    search.set_root(state)
    search.run()
    mid = search.root.edge_for(1).child  # type: ignore[union-attr]
    assert mid is not None and mid.edge_for(0).illegal  # type: ignore[union-attr]
    fresh = PathDependent(game)  # the game goes on to "mid" with a history where move 0 is legal
    fresh.push(1)
    search.set_root(fresh)
    assert search.root is mid and not mid.edge_for(0).illegal  # type: ignore[union-attr]
