"""The classic Monte-Carlo mode end to end: the graph/tree search with UCB selection and the playout evaluator."""

from __future__ import annotations

import pytest

from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from miai.go.coords import parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.playouts import PlayoutEvaluator

pytestmark = pytest.mark.slow

# Both sides alive; E5 captures four white stones and wins (Black +4.5 with komi 12.5). Any other black move is
# an eye-filling move that lets White connect at E5 and win by 5.5.
CAPTURE_WINS = """
    . X . X O . O
    X X X X O O O
    X X O O . O .
    X X O O X O O
    X . X X X O .
    X X X . X O O
    . X . X X O .
"""


def capture_position() -> GameState:
    rows = [line.split() for line in CAPTURE_WINS.strip().splitlines()]
    cells = [c for row in rows for c in row]
    state = GameState(7, Rules.preset("chinese"), 12.5)
    state.set_stones([m for m, c in enumerate(cells) if c == "X"], [m for m, c in enumerate(cells) if c == "O"])
    return state


@pytest.mark.parametrize("selection", ["ucb1", "ucb1-tuned", "puct"])
@pytest.mark.parametrize("graph", [True, False])
def test_playout_search_finds_the_winning_capture(selection: str, graph: bool) -> None:
    config = SearchConfig(selection=selection, graph=graph, max_visits=200, seed=7, use_lcb=False,
                          forbid_eye_filling=True)
    search = Search(PlayoutEvaluator(seed=7), config)
    search.set_root(capture_position())
    snapshot = search.run()
    assert search.best_move(snapshot) == parse_gtp("E5", 7)
    # UCB rules try every root move: with eye filling forbidden (playout mode's default) those are E5 and pass.
    if selection != "puct":
        assert {info.move for info in snapshot.moves} == {parse_gtp("E5", 7), parse_gtp("pass", 7)}
        assert all(info.edge_visits >= 1 for info in snapshot.moves)


@pytest.mark.parametrize("selection", ["ucb1", "ucb1-tuned"])
def test_ucb_tries_every_move_when_eye_filling_is_allowed(selection: str) -> None:
    config = SearchConfig(selection=selection, max_visits=60, seed=3, use_lcb=False, forbid_eye_filling=False)
    search = Search(PlayoutEvaluator(seed=3), config)
    search.set_root(capture_position())
    snapshot = search.run()
    # Black's seven legal moves (E5 and six own eyes) and pass, each tried before any is tried twice.
    assert len(snapshot.moves) == 8 and all(info.edge_visits >= 1 for info in snapshot.moves)
    assert search.best_move(snapshot) == parse_gtp("E5", 7)


@pytest.mark.parametrize("mode", ["stop", "continue", "leaky"])
def test_ucb_tuned_playout_search_in_every_child_visits_mode(mode: str) -> None:
    # Two ten-stone chains facing each other across an empty row: every move joins a big chain, so the graph hash
    # resets after each move and move orders transpose freely (KATAGO.md section 1).
    state = GameState(5, Rules.preset("chinese"), 0.5)
    state.set_stones(list(range(10)), list(range(15, 25)))
    # (The position is symmetric left to right: without symmetry pruning every root move is searched.)
    config = SearchConfig(selection="ucb1-tuned", child_visits_exceed_edge=mode, leak_probability=0.5,
                          max_visits=400, seed=11, use_lcb=False, max_time=0.0, root_symmetry_pruning=False)
    search = Search(PlayoutEvaluator(seed=11), config)
    search.set_root(state)
    snapshot = search.run()
    stats = search.stats()
    assert stats["visits"] == 400 and stats["transposition_hits"] > 0
    assert (stats["stopped_early"] > 0) == (mode != "continue")
    assert (stats["leaky_descents"] > 0) == (mode == "leaky")
    # Every root move (five points and pass) was tried, and the root's edge visits add up.
    assert len(snapshot.moves) == 6 and all(info.edge_visits >= 1 for info in snapshot.moves)
    assert sum(info.edge_visits for info in snapshot.moves) == 400 - 1
