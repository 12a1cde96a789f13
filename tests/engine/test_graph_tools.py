"""The graph search's research tools: stale-value updates off the playout path, transposition statistics and the
graph dump (issue 18; docs/search.md "Stale values", docs/gtp.md)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from toygame import ScriptedEvaluator, ToyGame, ToyState, set_game

from miai.engine.config import (
    Config,
    ConfigError,
    SearchConfig,
    apply_overrides,
    set_option,
)
from miai.engine.core.graph import PLAIN as PLAIN_WEIGHTING
from miai.engine.core.graph import (
    Edge,
    Node,
    Stats,
    link,
    refresh_ancestors,
    refresh_parents,
    relink,
)
from miai.engine.player import EnginePlayer
from miai.engine.core.search import Search
from miai.nets.playouts import PlayoutEvaluator

PLAIN = dict(max_visits=300, max_time=0.0, batch_size=1, seed=1, use_lcb=False, forbid_eye_filling=False,
             value_weight_exponent=0.0, use_noise_pruning=False, visits_per_batch_leaf=0)


def searched(game: ToyGame, **kw: object) -> Search:
    search = Search(ScriptedEvaluator(), SearchConfig(**{**PLAIN, **kw}))  # type: ignore[arg-type]
    search.set_root(ToyState(game))
    search.run()
    return search


def all_nodes(search: Search) -> list[Node]:
    assert search.root is not None
    return [search.root, *search.table]


def staleness(node: Node) -> float:
    """How far the node's stored Q utility is from what its children say now (recompute, then put it back)."""
    saved = (node.q, node.visits, node.weight, node.weight_sq)
    node.recompute()
    fresh = node.q[0]
    node.q, node.visits, node.weight, node.weight_sq = saved
    return abs(saved[0][0] - fresh)


def valued(key: int, sign: int, utility: float) -> Node:
    node = Node(key, sign)
    node.expanded = True
    node.set_value(Stats(utility, utility, 0.0, 0.0, 0.0, utility * utility))
    return node


def diamond() -> tuple[Node, ...]:
    """root -> a -> c and root -> b -> c, plus x -> b (x outside the playout's path): every edge visited once."""
    root, a, b, c, x = (valued(k, 1 if k % 2 else -1, 0.0) for k in range(1, 6))
    for parent, child in ((root, a), (root, b), (a, c), (b, c), (x, b)):
        edge = Edge(len(parent.edges), 0.5, child)
        edge.visits = 1
        parent.edges.append(edge)
        link(parent, child, keep_parents=True)
    for node in (c, a, b, x, root):
        node.recompute()
    return root, a, b, c, x


def playout_changes_c(root: Node, a: Node, c: Node) -> list[Node]:
    """A playout root -> a -> c that finds c much better for White: c and the path are recomputed, as _backup does."""
    c.own = Stats(0.8, 0.8, 0.0, 0.0, 0.0, 0.64)
    c.recompute()
    path = [root, a, c]
    for node in reversed(path[:-1]):
        node.recompute()
    return path


def test_path_leaves_the_other_parent_stale_and_parents_refreshes_it() -> None:
    root, a, b, c, x = diamond()
    path = playout_changes_c(root, a, c)
    assert staleness(b) > 0.1  # b still averages c's old value
    assert refresh_parents(path, PLAIN_WEIGHTING) == 1  # b, the only parent of a path node not on the path
    assert staleness(b) < 1e-12
    assert staleness(x) > 0.01  # one level only: x, above b, is now stale


def test_ancestors_refreshes_every_ancestor_in_order() -> None:
    root, a, b, c, x = diamond()
    path = playout_changes_c(root, a, c)
    assert refresh_ancestors(path, PLAIN_WEIGHTING) == 5  # c, a, b, root and x
    for node in (root, a, b, c, x):
        assert staleness(node) < 1e-12


def test_relink_drops_links_to_freed_nodes() -> None:
    root, a, b, c, x = diamond()
    assert c.in_edges == 2 and {id(p) for p in c.parents or ()} == {id(a), id(b)}
    relink(b, [c], keep_parents=True)  # b became the root; root, a and x were freed
    assert c.in_edges == 1 and c.parents == [b]
    assert b.in_edges == 0 and b.parents is None
    relink(b, [c], keep_parents=False)
    assert c.in_edges == 1 and c.parents is None


@pytest.mark.parametrize("mode", ["path", "parents", "ancestors"])
def test_search_stays_sound_under_each_rule(mode: str) -> None:
    search = searched(set_game(points=4, depth=4), stale_update=mode)
    nodes = all_nodes(search)
    for node in nodes:  # N = 1 + edge visits everywhere, whatever was refreshed
        if not node.terminal and node.expanded:
            assert node.visits == 1 + sum(e.visits for e in node.edges)
    worst = max(staleness(n) for n in nodes if not n.terminal)
    stats = search.stats()["transpositions"]
    assert stats["stale_update"] == mode
    if mode == "path":
        assert worst > 1e-6 and stats["refreshed_nodes"] == 0  # the set game makes stale parents
        assert all(n.parents is None for n in nodes)  # no parent links kept for the default rule
    elif mode == "ancestors":
        assert worst < 1e-9 and stats["refreshed_nodes"] > 0  # no cycles in the set game: everything fresh
    else:
        assert stats["refreshed_nodes"] > 0


def test_switching_the_rule_mid_game_builds_the_parent_links() -> None:
    search = searched(set_game(points=4, depth=4))
    search.set_config(SearchConfig(**{**PLAIN, "stale_update": "ancestors"}))  # type: ignore[arg-type]
    shared = [n for n in search.table if n.in_edges > 1]
    assert shared and all(n.parents is not None and len(n.parents) == n.in_edges for n in shared)
    search.run(max_visits=600)
    assert search.stats()["transpositions"]["refreshed_nodes"] > 0


def test_transposition_statistics_count_what_the_graph_shows() -> None:
    search = searched(set_game(points=4, depth=4))
    stats = search.stats()
    t = stats["transpositions"]
    incoming: dict[int, int] = defaultdict(int)
    for node in all_nodes(search):
        for child in node.children():
            incoming[id(child)] += 1
    assert t["nodes_with_several_parents"] == sum(1 for n in all_nodes(search) if incoming[id(n)] > 1) > 0
    assert t["most_parents"] == max(incoming.values())
    assert t["table_hits"] == stats["transposition_hits"] == sum(t["hit_depths"])
    assert 0 < t["met"] <= t["playouts"] == 300 - 1  # the root's own evaluation is no playout
    assert t["share"] == round(t["met"] / t["playouts"], 4)
    # Reordering needs two moves by one side with the other's move between them: nothing is found again above
    # depth 3, and the game ends at depth 4.
    depths = t["hit_depths"]  # count by depth, from the root's children (depth 1) on
    assert depths[:3] == [0, 0, 0] and len(depths) - 1 == t["hit_depth_max"] <= 4


def test_tree_mode_meets_no_transposition() -> None:
    t = searched(set_game(points=4, depth=4), graph=False).stats()["transpositions"]
    assert t["met"] == t["table_hits"] == t["nodes_with_several_parents"] == 0


def test_statistics_are_per_search() -> None:
    search = searched(set_game(points=4, depth=4))
    search.run(max_visits=310)  # ten more visits on the same graph
    t = search.stats()["transpositions"]
    assert t["playouts"] == 10


def test_graph_dump_lists_each_node_once_with_its_edges() -> None:
    search = searched(set_game(points=4, depth=4))
    dump = search.graph_dump(lambda move: f"m{move}")
    json.dumps(dump)  # plain data
    keys = [node["key"] for node in dump["nodes"]]
    assert dump["root"] == keys[0] and len(keys) == len(set(keys)) == len(search.table) + 1
    assert dump["nodes"][0]["visits"] == 300
    for node in dump["nodes"]:
        for edge in node["edges"]:
            assert edge["move"].startswith("m")
            assert edge["child"] is None or edge["child"] in keys
        if node["expanded"] and not node["terminal"]:
            assert node["visits"] == 1 + sum(e["visits"] for e in node["edges"])
    assert any(node["parents"] > 1 for node in dump["nodes"])


def test_the_option_takes_only_its_three_rules() -> None:
    config = set_option(Config(), "search.stale_update", "ancestors")
    assert config.search.stale_update == "ancestors"
    with pytest.raises(ConfigError, match="stale_update"):
        set_option(Config(), "search.stale_update", "everything")



@pytest.mark.slow
def test_gtp_graph_dump_writes_the_graph_of_the_last_search(tmp_path: Path) -> None:
    from tests.gtp.fakes import Driver

    config = apply_overrides(Config(), ["search.seed=7", "search.max_visits=120", "search.max_time=0"])
    driver = Driver(EnginePlayer(PlayoutEvaluator.from_spec("playouts:2", seed=1), config))
    driver.ok("boardsize 7")
    driver.ok("genmove b")
    target = tmp_path / "graph.json"
    assert driver.ok(f"miai-graph_dump {target}") == ""
    dump = json.loads(target.read_text(encoding="utf-8"))
    assert dump["size"] == 7 and dump["graph"] is True
    root = dump["nodes"][0]
    assert root["key"] == dump["root"] and root["to_play"] == "B" and root["visits"] == 120
    moves = {edge["move"] for edge in root["edges"]}
    assert moves and all(m == "pass" or (m[0] in "ABCDEFG" and 1 <= int(m[1:]) <= 7) for m in moves)


def test_gtp_graph_dump_to_a_bad_path_fails_and_keeps_the_game(tmp_path: Path) -> None:
    from tests.gtp.fakes import Driver

    config = apply_overrides(Config(), ["search.max_visits=20", "search.max_time=0"])
    driver = Driver(EnginePlayer(PlayoutEvaluator.from_spec("playouts:1", seed=1), config))
    driver.ok("boardsize 7")
    driver.ok("play b D4")
    message = driver.fail(f"miai-graph_dump {tmp_path / 'no' / 'such' / 'dir.json'}")
    assert message.startswith("cannot write ") and "dir.json" in message and "\n" not in message
    assert "D4" in driver.ok("list_stones black")


# ------------------------------------------------------------------------------------------------------------ RAVE
def test_amaf_backup_credits_each_node_with_its_own_side_s_first_moves() -> None:
    from miai.engine.core.backup import add_amaf
    from miai.nets.evaluator import Amaf

    root, middle, leaf = Node(1, -1), Node(2, 1), Node(3, -1)  # Black, White, Black to move
    edges = [Edge(3, 0.5, middle), Edge(5, 0.5, leaf)]
    first = np.zeros((2, 9))
    first[0, 7] = first[1, 8] = first[1, 3] = 1.0  # the playout: Black took 7 first; White took 8 and 3 first
    amaf = Amaf(first=first, white_wins=first.copy(), playouts=1, white_win_total=1.0)  # White won it
    add_amaf([root, middle, leaf], edges, amaf)
    assert leaf.amaf_n is not None and middle.amaf_n is not None and root.amaf_n is not None
    assert leaf.amaf_n.tolist() == [0, 0, 0, 0, 0, 0, 0, 1, 0] and leaf.amaf_w.tolist() == [0] * 9  # Black lost
    # White moved 5 in the tree; 8 and 3 in the playout (3 counts for White below the root's own move only).
    assert middle.amaf_n.tolist() == [0, 0, 0, 1, 0, 1, 0, 0, 1] and middle.amaf_w.tolist() == middle.amaf_n.tolist()
    # Black played 3 at the root (before White's 3 in the playout, so it is Black's) and 7 in the playout.
    assert root.amaf_n.tolist() == [0, 0, 0, 1, 0, 0, 0, 1, 0] and root.amaf_w.tolist() == [0] * 9


def test_playout_amaf_counts_first_moves_and_white_wins() -> None:
    from miai.go.rules import Rules
    from miai.go.state import GameState

    evaluation = PlayoutEvaluator(20, amaf=True, seed=3).evaluate([GameState(5, Rules.preset("chinese"), 0.5)])[0]
    amaf = evaluation.amaf
    assert amaf is not None and amaf.playouts == 20
    assert (amaf.first.sum(axis=0) <= 20).all() and (amaf.white_wins <= amaf.first).all()
    assert amaf.first.sum() > 20  # every playout fills the board, one colour first on each point
    assert amaf.white_win_total == pytest.approx(20 * evaluation.loss)  # Black to move: White's wins are losses
    assert PlayoutEvaluator(1, seed=3).evaluate([GameState(5, Rules.preset("chinese"), 0.5)])[0].amaf is None


@pytest.mark.slow
def test_rave_finds_the_capture_more_often_at_few_playouts() -> None:
    """Black captures C3 at C4 (its last liberty): with AMAF values, the capture's playouts count for it from the
    first visits on. Ten seeded searches of 100 visits of one playout each, with RAVE and without."""
    from miai.go.coords import Color, parse_gtp
    from miai.go.rules import Rules
    from miai.go.state import GameState

    state = GameState(5, Rules.preset("chinese"), 7.0)
    for colour, vertex in (("b", "B3"), ("w", "C3"), ("b", "D3"), ("w", "pass"), ("b", "C2"), ("w", "pass")):
        state.push(parse_gtp(vertex, 5), Color.BLACK if colour == "b" else Color.WHITE)
    found = {}
    for rave in (0, 1000):
        hits = 0
        for seed in range(1, 11):
            config = apply_overrides(Config(), [f"search.seed={seed}", "search.max_visits=100", "search.max_time=0",
                                                "search.selection=ucb1-tuned", "search.use_lcb=false",
                                                f"search.rave_equivalence={rave}"])
            player = EnginePlayer(PlayoutEvaluator.from_spec("playouts:1:light", seed=seed, amaf=rave > 0), config)
            hits += player.genmove(state, Color.BLACK) == parse_gtp("C4", 5)
        found[rave] = hits
    assert found[1000] >= 6 and found[1000] > found[0], found


# ------------------------------------------------------------------------------------------------ final choice
@pytest.mark.parametrize("rule", ["visits", "wins"])
def test_final_choice_by_most_visits_or_most_wins(rule: str) -> None:
    search = searched(set_game(points=4, depth=4), final_choice=rule)
    moves = search.snapshot().moves
    key = (lambda m: m.edge_visits) if rule == "visits" else (lambda m: m.edge_visits * m.winrate)
    assert moves[0].move == max(moves, key=key).move
    assert [m.play_value for m in moves] == sorted((key(m) for m in moves), reverse=True)


def test_most_wins_can_differ_from_most_visits() -> None:
    """Two root moves: a well-visited even one and a less visited winning one (hand-set statistics)."""
    from miai.engine.core.snapshot import build_snapshot

    root = valued(1, -1, 0.0)  # Black to move
    for move, visits, white_value in ((0, 60, 0.0), (1, 45, -0.8)):  # move 1: Black wins 90% of the time
        child = valued(10 + move, 1, white_value)
        child.visits, child.weight, child.weight_sq = visits, float(visits), float(visits)
        edge = Edge(move, 0.5, child)
        edge.visits = visits
        root.edges.append(edge)
    root.recompute()
    state = ToyState(set_game(points=4, depth=4))
    by_visits = build_snapshot(root, state, SearchConfig(final_choice="visits"), 0, 0.0).moves[0].move
    by_wins = build_snapshot(root, state, SearchConfig(final_choice="wins"), 0, 0.0).moves[0].move
    assert (by_visits, by_wins) == (0, 1)  # 60 x 0.5 = 30 wins against 45 x 0.9 = 40.5


def test_tree_reuse_keeps_links_to_surviving_nodes_only() -> None:
    game = set_game(points=4, depth=4)
    search = searched(game, stale_update="parents")
    assert search.root is not None
    move = max(search.root.edges, key=lambda e: e.visits).move
    state = ToyState(game)
    state.push(move)
    search.set_root(state)  # the child becomes the root; the rest of the graph is swept
    kept = {id(n) for n in all_nodes(search)}
    for node in all_nodes(search):
        assert all(id(p) in kept for p in node.parents or ())
        assert node.in_edges == sum(1 for p in all_nodes(search) for c in p.children() if c is node)
    search.run(max_visits=search.root.visits + 50)
    assert search.stats()["trees_reused"] >= 1


def test_rave_tries_pass_like_any_move() -> None:
    """Pass has no AMAF value; were it never tried, a RAVE player would not pass at the end and would fill its own
    territory (it lost 0-2 by 74 and 88 points that way before pass was tried)."""
    from miai.go.rules import Rules
    from miai.go.state import GameState

    config = SearchConfig(**{**PLAIN, "selection": "ucb1-tuned", "rave_equivalence": 1000.0,  # type: ignore[arg-type]
                             "max_visits": 200})
    search = Search(PlayoutEvaluator(1, amaf=True, seed=4), config)
    search.set_root(GameState(5, Rules.preset("chinese"), 7.0))
    search.run()
    assert search.root is not None
    assert any(edge.move == -1 and edge.visits > 0 for edge in search.root.edges)
    assert search.root.amaf_n is not None and search.root.amaf_n.sum() > 0
