"""Property tests: random toy games (transpositions, cycles, terminals) under every mode keep the graph sound."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from test_search import PLAIN, assert_graph_sound, incoming_edge_visits, nodes_of
from toygame import ScriptedEvaluator, ToyGame, ToyState

pytestmark = pytest.mark.slow


@st.composite
def toy_games(draw: st.DrawFn) -> tuple[ToyGame, dict[str, float]]:
    """Up to 8 positions with up to 3 moves each leading anywhere (cycles and transpositions included)."""
    count = draw(st.integers(2, 8))
    names = ["root"] + [f"p{i}" for i in range(1, count)]
    terminal = {n: draw(st.sampled_from([-3.0, 0.0, 2.5])) for n in names[1:] if draw(st.booleans())}
    edges: dict[str, dict[int, str]] = {}
    for name in names:
        if name in terminal:
            continue
        targets = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
        edges[name] = dict(enumerate(targets))
    values = {n: draw(st.floats(-1.0, 1.0)) for n in names}
    return ToyGame(edges, terminal), values


@settings(max_examples=60, deadline=None)
@given(
    toy_games(),
    st.sampled_from(["stop", "continue", "leaky"]),
    st.booleans(),
    st.integers(1, 6),
    st.sampled_from(["puct", "ucb1"]),
    st.sampled_from(["path", "parents", "ancestors"]),
)
def test_random_games_keep_every_invariant(game_values: tuple[ToyGame, dict[str, float]], mode: str, graph: bool,
                                           batch: int, selection: str, stale: str) -> None:
    game, values = game_values
    config = SearchConfig(max_visits=80, batch_size=batch, child_visits_exceed_edge=mode, leak_probability=0.5,
                          graph=graph, selection=selection, seed=7, forbid_eye_filling=False, use_lcb=False,
                          max_time=0.0, stale_update=stale, **PLAIN)  # type: ignore[arg-type]
    search = Search(ScriptedEvaluator(values), config)
    search.set_root(ToyState(game))
    snapshot = search.run()
    assert snapshot.root.visits == 80  # every playout ends somewhere: leaf, terminal, stop, cycle or dead end
    assert_graph_sound(search)
    assert sum(m.edge_visits for m in snapshot.moves) == 79
    for move in snapshot.moves:
        assert 0.0 <= move.winrate <= 1.0 and len(move.pv) <= config.pv_length
    # Every edge visit into a child either descended (a child visit) or stopped there (stop/leaky, cycle, dead end).
    incoming = incoming_edge_visits(search)
    parents: dict[int, int] = defaultdict(int)
    for node in nodes_of(search):
        for child in node.children():
            parents[id(child)] += 1
    for node in nodes_of(search):
        if node is not search.root and not node.terminal:
            assert incoming[id(node)] >= node.visits
        if not graph:
            assert parents[id(node)] <= 1
        assert node.in_edges == parents[id(node)]  # the incoming-edge count the statistics and stale rules use
        if stale != "path" and node is not search.root:
            assert {id(p) for p in node.parents or ()} == {id(p) for p in nodes_of(search) if node in
                                                          list(p.children())}
