"""The search on real Go positions (miai.go.state.GameState) with the uniform and a scoring evaluator."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from miai.engine.config import SearchConfig
from miai.engine.core.search import PASS, Search
from miai.go.coords import parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.evaluator import Evaluation, UniformEvaluator, legal_mask


def board(rows: Sequence[str], komi: float = 0.5, black_move: str | None = None, white_passed: bool = False,
          rules: str = "tromp-taylor") -> GameState:
    """A position from rows (top row first) of X (Black), O (White) and '.'; optionally Black then plays
    ``black_move`` and White passes, so that Black is to move after a White pass."""
    size = len(rows)
    state = GameState(size, Rules.preset(rules), komi)
    black = [y * size + x for y, row in enumerate(rows) for x, c in enumerate(row.split()) if c == "X"]
    white = [y * size + x for y, row in enumerate(rows) for x, c in enumerate(row.split()) if c == "O"]
    state.set_stones(black, white)
    if black_move is not None:
        state.push(parse_gtp(black_move, size))
    if white_passed:
        state.push(PASS)
    return state


class TrompTaylorEvaluator:
    """Uniform policy; value and score from the Tromp-Taylor count of the position as it stands."""

    max_batch = 32

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:
        out = []
        for state in states:
            mask = legal_mask(state)
            side = 1.0 if int(state.to_play) == 2 else -1.0
            score = side * state.tromp_taylor_score()
            value = float(np.tanh(score / 4.0))
            out.append(Evaluation((mask / mask.sum()).astype(np.float32), (1 + value) / 2, (1 - value) / 2, 0.0,
                                  score, 1.0, score, None))
        return out


def run(state: GameState, evaluator: object, **kw: object) -> tuple[Search, int]:
    # No time limit: the visits decide, however loaded the machine is.
    options: dict[str, object] = dict(max_visits=400, max_time=0.0, batch_size=8, seed=5)
    options.update(kw)
    search = Search(evaluator, SearchConfig(**options))  # type: ignore[arg-type]
    search.set_root(state)
    snapshot = search.run()
    return search, search.best_move(snapshot)


EYES = [
    ". X O . .",
    "X X O . .",
    ". X O . .",
    "X X O . .",
    ". X O . .",
]


def test_own_eyes_are_the_single_point_true_eyes() -> None:
    state = board(EYES)
    assert state.own_eyes(1) == [0, 10, 20]
    assert state.own_eyes(2) == []


def test_false_eye_is_not_an_eye() -> None:
    rows = [
        ". X . . .",
        "X O . . .",
        ". . . . .",
        ". . . . .",
        ". . . . .",
    ]
    assert 0 not in board(rows).own_eyes(1)  # corner with an opponent diagonal


def test_an_eye_in_the_middle_may_have_one_opponent_diagonal_but_not_two() -> None:
    one = [
        ". . . . .",
        ". O X . .",
        ". X . X .",
        ". . X . .",
        ". . . . .",
    ]
    assert board(one).own_eyes(1) == [12]
    two = [row for row in one]
    two[3] = ". . X O ."
    assert board(two).own_eyes(1) == []


def reference_eyes(state: GameState, color: int) -> list[int]:
    """The definition, point by point on a padded grid: every on-board neighbour ``color``; opponent stones on the
    diagonals at most 1, or 0 when a diagonal is off the board."""
    size = state.size
    grid = {(x, y): int(c) for (x, y), c in zip(((m % size, m // size) for m in range(size * size)), state.stones())}
    eyes = []
    for (x, y), c in grid.items():
        sides = [grid.get((x + dx, y + dy), color) for dx, dy in ((0, -1), (-1, 0), (1, 0), (0, 1))]
        corners = [grid.get((x + dx, y + dy), 3) for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1))]
        allowed = 0 if 3 in corners else 1
        if c == 0 and all(v == color for v in sides) and corners.count(3 - color) <= allowed:
            eyes.append(y * size + x)
    return eyes


@pytest.mark.parametrize("size", [2, 5, 9])
def test_own_eyes_match_the_definition_on_random_games(size: int) -> None:
    rng = np.random.default_rng(size)
    for _ in range(20):
        state = GameState(size)
        for _ in range(int(rng.integers(0, 3 * size * size))):
            moves = state.legal_moves()
            state.push(int(rng.choice(moves)) if moves else PASS)
            for color in (1, 2):
                assert state.own_eyes(color) == reference_eyes(state, color)


def test_search_with_the_eye_rule_never_fills_its_own_eyes() -> None:
    search, _ = run(board(EYES), UniformEvaluator(), max_visits=200, forbid_eye_filling=True)
    root_moves = {m for m, _ in search.root.all_priors()}  # type: ignore[union-attr]
    assert root_moves.isdisjoint({0, 10, 20})
    assert PASS in root_moves


def test_search_offers_every_legal_move_by_default_as_katago() -> None:
    search, _ = run(board(EYES), UniformEvaluator(), max_visits=50)
    root_moves = {m for m, _ in search.root.all_priors()}  # type: ignore[union-attr]
    assert {0, 10, 20} <= root_moves


def test_passes_to_win_when_the_opponent_passed_and_the_count_wins() -> None:
    rows = [
        ". . . X O",
        ". . . X O",
        ". . . X O",
        ". . . X O",
        ". . . . O",
    ]
    state = board(rows, komi=7.5, black_move="D1", white_passed=True)  # Black 20 - White 5 - 7.5
    assert state.tromp_taylor_score() < 0
    # (Without conservativePass the root's game-ending pass is scored like any other: see the test below for it.)
    search, move = run(state, UniformEvaluator(), conservative_pass=False)
    assert move == PASS
    assert search.snapshot().moves[0].winrate == 1.0


def test_conservative_pass_searches_on_past_the_roots_game_ending_pass() -> None:
    """KataGo's conservativePass: the root's pass that would end the game is evaluated by the net and searched on, not
    scored (so a net that misjudges the final count does not end a game it loses), and keyed apart from the scored
    node of the same position; a game-ending pass deeper down is scored as before."""
    rows = [". . . X O", ". . . X O", ". . . X O", ". . . X O", ". . . . O"]
    state = board(rows, komi=7.5, black_move="D1", white_passed=True)
    search = Search(UniformEvaluator(), SearchConfig(max_visits=30, max_time=0.0, batch_size=1, seed=5))
    search.set_root(state)
    search.run(allow=[PASS])
    passed = search.root.edge_for(PASS) if search.root is not None else None
    assert passed is not None and passed.child is not None and not passed.child.terminal
    assert passed.child.expanded and passed.child.edges  # evaluated, and White's replies searched
    after = state.copy()
    after.push(PASS)
    assert after.is_over() and passed.child.key != after.graph_hash
    search, _ = run(state, UniformEvaluator(), max_visits=200, batch_size=1)
    passed = search.root.edge_for(PASS) if search.root is not None else None
    assert passed is not None and passed.child is not None and not passed.child.terminal
    assert any(n.terminal for n in search.table)  # White's pass answering it (the passing hack tries it): scored


def test_does_not_pass_into_a_lost_count() -> None:
    rows = [
        ". X O . .",
        ". X O . .",
        ". X O . .",
        ". X O . .",
        ". . O . .",
    ]
    state = board(rows, komi=7.5, black_move="B1", white_passed=True)  # White 15 + 7.5 vs Black 10
    assert state.tromp_taylor_score() > 0
    search, move = run(state, UniformEvaluator(), conservative_pass=False)
    assert move != PASS
    by_move = {m.move: m for m in search.snapshot().moves}
    if PASS in by_move:
        assert by_move[PASS].winrate == 0.0  # valued by the exact count, not by the net


@pytest.mark.parametrize("evaluator", [UniformEvaluator(), TrompTaylorEvaluator()], ids=["uniform", "count"])
def test_finds_the_obvious_capture(evaluator: object) -> None:
    # White's stone at A3 is in atari; capturing at A2 turns a 1.5-point loss into a 1.5-point win (komi -6.5).
    rows = [
        ". X O . O",
        "X X O O O",
        "O X O . O",
        ". X O O O",
        "X X O . O",
    ]
    state = board(rows, komi=-6.5)
    assert state.tromp_taylor_score() == 1.5
    search, move = run(state, evaluator, max_visits=300)
    assert move == parse_gtp("A2", 5)
    _, move = run(state, evaluator, max_visits=300, selection="ucb1")
    assert move == parse_gtp("A2", 5)
    assert search.snapshot().moves[0].winrate > 0.5


@pytest.mark.parametrize("size", [9, 19])
def test_search_on_an_empty_board_is_sound(size: int) -> None:
    state = GameState(size)
    search, move = run(state, UniformEvaluator(), max_visits=150)
    assert state.is_legal(move)
    assert search.root is not None and search.root.visits == 150
    snap = search.snapshot()
    assert snap.ownership is not None and snap.ownership.shape == (size * size,)
    assert sum(m.edge_visits for m in snap.moves) == 149


def test_superko_rules_and_tree_reuse_on_a_real_game() -> None:
    state = GameState(9, Rules.preset("tromp-taylor"), 7.5)
    search = Search(UniformEvaluator(), SearchConfig(max_visits=120, max_time=0.0, batch_size=8, seed=2))
    for _ in range(6):
        search.set_root(state)
        snap = search.run()
        move = search.best_move(snap)
        assert state.is_legal(move)
        state.push(move)
    assert search.stats()["trees_reused"] >= 1


def test_stats_include_the_evaluation_cache_hits() -> None:
    from miai.nets.cache import CachedEvaluator

    evaluator = CachedEvaluator(UniformEvaluator(), capacity=10_000)
    search, _ = run(GameState(9), evaluator, max_visits=200)
    stats = search.stats()
    assert stats["cache_hits"] == evaluator.hits
    assert stats["net_evals"] == evaluator.hits + evaluator.misses


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.slow
def test_overlapped_batches_give_a_sound_search(overlap: bool) -> None:
    from miai.nets.cache import CachedEvaluator
    from toygame import Deferred

    # Overlap needs an evaluator that splits its batches (as a net does), here behind the cache as in play.
    evaluator = CachedEvaluator(Deferred(UniformEvaluator(max_batch=8)) if overlap else UniformEvaluator(max_batch=8))
    search, move = run(GameState(9), evaluator, max_visits=300, overlap=overlap, batch_size=8)
    assert search.root is not None and search.root.visits == 300
    assert GameState(9).is_legal(move)
    for node in [search.root, *search.table]:
        assert node.virtual_loss == 0 and not node.pending
        if node.expanded and not node.terminal:
            assert node.visits == 1 + sum(e.visits for e in node.edges)


@pytest.mark.slow
def test_scratch_states_follow_the_game_between_moves() -> None:
    state = GameState(9)
    search = Search(UniformEvaluator(), SearchConfig(max_visits=60, max_time=0.0, batch_size=4, seed=3))
    for _ in range(4):
        search.set_root(state)
        search.run()
        for scratch in search._setup.scratch:  # every slot sits exactly at the root between runs
            assert scratch.graph_hash == state.graph_hash and scratch.moves == state.moves
        state.push(search.best_move(search.snapshot()))
    state.komi = 6.5  # a different game: fresh copies
    search.set_root(state)
    assert search._setup.scratch == [] and search.root is None


class LeafRecorder(UniformEvaluator):
    """The uniform evaluator that records the graph hash of every state it is given, and checks that the state is
    the position its moves make when replayed from the game's start (nothing left over from an earlier playout)."""

    def __init__(self) -> None:
        super().__init__()
        self.hashes: list[int] = []

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:  # type: ignore[override]
        for state in states:
            replay = state.copy()
            assert (replay.graph_hash, replay.legal_moves()) == (state.graph_hash, state.legal_moves())
            self.hashes.append(state.graph_hash)
        return super().evaluate(states)


@pytest.mark.parametrize("rules", ["tromp-taylor", "japanese"])
def test_the_net_sees_each_leaf_exactly_where_its_playout_ended(rules: str) -> None:
    # Scratch states stay where their last playout ended, and the next playout from one takes back only the moves
    # it does not share: every leaf must still be evaluated at its own position, and the states end at the root.
    state = GameState(9, Rules.preset(rules), 7.5)
    evaluator = LeafRecorder()
    search, _ = run(state, evaluator, max_visits=400, batch_size=4, max_time=0.0)
    expanded = {node.key for node in search.table if node.expanded and not node.terminal}
    assert set(evaluator.hashes[1:]) == expanded  # (the first evaluation is the root's, kept outside the table)
    assert len(set(evaluator.hashes)) == len(evaluator.hashes) == search.stats()["net_evals"]
    for scratch in search._setup.scratch:
        assert scratch.graph_hash == state.graph_hash and scratch.moves == state.moves


@pytest.mark.slow
def test_real_transpositions_share_one_node_keyed_by_the_graph_hash() -> None:
    state = GameState(7)
    search, _ = run(state, UniformEvaluator(), max_visits=400)
    assert search.stats()["transposition_hits"] > 0
    # Find every path (as move lists) from the root to each node, breadth first, two paths per node at most.
    paths: dict[int, list[list[int]]] = {id(search.root): [[]]}
    frontier = [search.root]
    shared = None
    while frontier and shared is None:
        nxt = []
        for node in frontier:
            for edge in node.edges:  # type: ignore[union-attr]
                child = edge.child
                if child is None or child.terminal:
                    continue
                seen = paths.setdefault(id(child), [])
                seen.append(paths[id(node)][0] + [edge.move])
                if len(seen) == 2:
                    shared = child
                    break
                if len(seen) == 1:
                    nxt.append(child)
            if shared is not None:
                break
        frontier = nxt
    assert shared is not None
    first, second = paths[id(shared)]
    assert first != second
    hashes = set()
    for moves in (first, second):
        replay = state.copy()
        for move in moves:
            replay.push(move)
        hashes.add(replay.graph_hash)
    assert hashes == {shared.key}


@pytest.mark.parametrize("rules", ["tromp-taylor", "japanese", "aga"])
@pytest.mark.slow
def test_deep_search_through_ko_fights_stays_consistent(rules: str) -> None:
    # A ko in the middle of a 5x5 board: playouts run to the end of the game through captures, retakes and passes.
    rows = [
        ". . . . .",
        ". X O . .",
        "X O . O .",
        ". X O . .",
        ". . . . .",
    ]
    state = board(rows, rules=rules)
    # Plain PUCT: with a uniform evaluator every value is 0, and KataGo's stdev-scaled exploration would keep the
    # search too narrow to reach the end of the game in 1,500 visits.
    search, move = run(state, UniformEvaluator(), max_visits=1500, batch_size=8, max_time=0.0,
                       cpuct_utility_stdev_scale=0.0, fpu_parent_weight_by_visited_policy=False,
                       value_weight_exponent=0.0, use_noise_pruning=False, visits_per_batch_leaf=0)
    assert state.is_legal(move)
    stats = search.stats()
    assert stats["terminal_visits"] > 0  # games were played out to two passes
    for scratch in search._setup.scratch:
        assert scratch.graph_hash == state.graph_hash and scratch.moves == state.moves
    for node in [search.root, *search.table]:
        assert node.virtual_loss == 0 and not node.pending  # type: ignore[union-attr]


class PassHeavyEvaluator(UniformEvaluator):
    """An even game whose policy puts 99% on pass, for the passing hack's second case."""

    def evaluate(self, states: Sequence[GameState]) -> list[Evaluation]:  # type: ignore[override]
        out = []
        for evaluation, state in zip(super().evaluate(states), states):
            policy = evaluation.policy * 0.01 / evaluation.policy[:-1].sum()
            policy[-1] = 0.99
            out.append(Evaluation(policy.astype(np.float32), 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, None))
        return out


def test_passing_hack_tries_pass_once_without_counting_it() -> None:
    """KataGo's enableMorePassingHacks: after White's pass, once the root's edges have two visits and pass still has
    no child, one playout goes to pass; it adds no edge visit and does not count against the visit limit."""
    state = board([". . . . . . . . ."] * 9, komi=7.5, black_move="E5", white_passed=True)
    with_hack, _ = run(state, UniformEvaluator(), max_visits=20, batch_size=1, conservative_pass=False)
    root = with_hack.root
    assert root is not None and root.visits == 20
    passed = root.edge_for(PASS)
    assert passed is not None and passed.child is not None and passed.child.terminal
    assert passed.child.visits == passed.visits + 1  # the hack's visit of the child, without an edge visit
    assert with_hack.stats()["passing_hack_playouts"] == 1
    without, _ = run(state, UniformEvaluator(), max_visits=20, batch_size=1, more_passing_hacks=False)
    assert without.root is not None and without.root.edge_for(PASS) is None
    assert without.stats()["passing_hack_playouts"] == 0


def test_passing_hack_tries_a_move_once_when_only_pass_was_searched() -> None:
    # Black is far ahead (komi -50): passing after White's pass wins, and the policy says pass. After two visits of
    # pass the hack sends one playout to the best other move, again without an edge visit.
    state = board([". . . . . . . . ."] * 9, komi=-50, black_move="E5", white_passed=True)
    search, move = run(state, PassHeavyEvaluator(), max_visits=10, batch_size=1, conservative_pass=False)
    root = search.root
    assert move == PASS and root is not None and root.visits == 10
    assert search.stats()["passing_hack_playouts"] == 1
    other = [e for e in root.edges if e.move != PASS and e.child is not None]
    assert len(other) >= 1 and other[0].child is not None and other[0].child.visits >= 1
    without, _ = run(state, PassHeavyEvaluator(), max_visits=10, batch_size=1, more_passing_hacks=False,
                     conservative_pass=False)
    assert without.root is not None
    assert [e.move for e in without.root.edges if e.child is not None] == [PASS]
