"""Prior knowledge of the classic search (miai.nets.playouts.knowledge): each heuristic where it applies, counted
as the imaginary playouts of docs/playouts.md, and a search that uses it finds a capture sooner."""

from __future__ import annotations

import numpy as np
import pytest

from miai.go.coords import PASS
from miai.nets.playouts import PlayoutBoard, PlayoutEvaluator
from miai.nets.playouts.knowledge import LOCALITY_COUNT, THIRD_LINE_COUNT, Knowledge, cfg_distances, prior_knowledge

BLACK, WHITE = 1, 2
K = Knowledge()


def board_of(diagram: str) -> PlayoutBoard:
    rows = [line.split() for line in diagram.strip().splitlines()]
    codes = {".": 0, "X": BLACK, "O": WHITE}
    return PlayoutBoard.from_stones([codes[s] for row in rows for s in row], len(rows))


def flat(board: PlayoutBoard, x: int, y: int) -> int:
    return y * board.geometry.size + x


def knowledge_for(board: PlayoutBoard, color: int, last: int = PASS, counts: Knowledge = K
                  ) -> tuple[np.ndarray, np.ndarray]:
    legal = [m for m, p in enumerate(board.geometry.points) if board.is_legal(p, color)]
    return prior_knowledge(board, color, last, legal, counts)


def test_every_legal_move_starts_even_and_illegal_points_get_nothing() -> None:
    board = board_of("""
        . . . . .
        . . . . .
        . . X . .
        . . . . .
        . . . . .""")
    n, w = knowledge_for(board, WHITE)
    centre = flat(board, 2, 2)
    assert n[centre] == w[centre] == 0.0  # occupied
    inner = flat(board, 1, 1)
    assert n[inner] == K.even and w[inner] == 0.5 * K.even


def test_capture_is_urged_by_its_size_and_escape_too() -> None:
    board = board_of("""
        . X O . .
        X O O X .
        . X X . .
        . . . . .
        . . . . .""")  # White's three stones have one liberty, at D5 (3, 0)
    n, w = knowledge_for(board, BLACK)
    liberty = flat(board, 3, 0)
    extra = K.capture + K.per_stone * 3
    assert n[liberty] == K.even + extra and w[liberty] == 0.5 * K.even + extra
    n, w = knowledge_for(board, WHITE)  # White at D5 would keep one liberty (E5): no escape, a self-atari
    assert n[liberty] == K.even + K.self_atari and w[liberty] == 0.5 * K.even
    board = board_of("""
        X O . . .
        . X . . .
        . . . . .
        . . . . .
        . . . . .""")  # B5 has one liberty, C5; White there has two (D5, C4)
    run = flat(board, 2, 0)
    n, w = knowledge_for(board, WHITE)
    assert n[run] == K.even + K.escape and w[run] == 0.5 * K.even + K.escape
    n, w = knowledge_for(board, BLACK)
    assert n[run] == K.even + K.capture + K.per_stone and w[run] == 0.5 * K.even + K.capture + K.per_stone


def test_self_atari_of_a_chain_is_discouraged() -> None:
    board = board_of("""
        . . . . .
        . O . O .
        O X X . O
        . O O O .
        . . . . .""")  # B3-C3 has two liberties, C4 and D3; Black at D3 leaves it C4 only: self-atari
    n, w = knowledge_for(board, BLACK)
    move = flat(board, 3, 2)
    assert n[move] == K.even + K.self_atari and w[move] == 0.5 * K.even


def test_empty_first_line_is_discouraged_and_points_near_the_last_move_urged() -> None:
    board = board_of("""
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . X . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    last = board.geometry.points[flat(board, 3, 3)]
    n, w = knowledge_for(board, WHITE, last)
    edge = flat(board, 3, 0)
    assert n[edge] == K.even + K.empty_edge and w[edge] == 0.5 * K.even
    near = flat(board, 4, 3)
    assert w[near] / n[near] > 0.5 and n[near] >= K.even + K.near_last


def test_locality_values_moves_by_their_common_fate_graph_distance_from_the_last_move() -> None:
    """Fuego's locality bonus: a chain is one node of the graph, so the points beyond White's two stones touching
    the last move are at distance 2 however far they are on the board; far points get the low value."""
    board = board_of("""
        . . . . . . .
        . . . . . . .
        . . O O . . .
        . . . X X . .
        . . . . . . .
        . . . . . . .
        . . . . . . .""")
    last = board.geometry.points[flat(board, 3, 3)]
    distance = cfg_distances(board, last, 3)
    points = board.geometry.points
    assert distance[last] == distance[points[flat(board, 4, 3)]] == 0  # the last move's chain
    assert distance[points[flat(board, 2, 2)]] == distance[points[flat(board, 5, 3)]] == 1  # White's chain, a liberty
    assert distance[points[flat(board, 2, 1)]] == 2  # next to White's chain: one step beyond it
    assert distance[points[flat(board, 2, 0)]] == 3 and points[flat(board, 0, 6)] not in distance
    counts = Knowledge(locality=LOCALITY_COUNT)
    with_locality, wins = knowledge_for(board, BLACK, last, counts)
    plain, plain_wins = knowledge_for(board, BLACK, last)
    for (x, y), value in (((5, 3), 1.0), ((2, 1), 0.6), ((2, 0), 0.6), ((0, 6), 0.1)):
        move = flat(board, x, y)
        assert with_locality[move] - plain[move] == LOCALITY_COUNT
        assert wins[move] - plain_wins[move] == pytest.approx(LOCALITY_COUNT * value)


def test_third_line_urges_open_third_line_points_only() -> None:
    """Pachi's third-line bonus: a third-line point with no stone within two points either way starts with won
    playouts; a third-line point near a stone, and points on other lines, get nothing from it."""
    board = board_of("""
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . X .
        . . . . . . . . .""")  # Black at H2 (7, 7)
    counts = Knowledge(third_line=THIRD_LINE_COUNT)
    n, w = knowledge_for(board, WHITE, counts=counts)
    plain, plain_wins = knowledge_for(board, WHITE)
    for (x, y), bonus in (((2, 2), True), ((4, 2), True), ((2, 6), True), ((6, 4), True), ((6, 2), True),
                          ((5, 6), False), ((6, 6), False),  # H2 is within two points of these
                          ((3, 3), False), ((1, 2), False), ((4, 4), False)):  # 4-4 point, second line, centre
        move = flat(board, x, y)
        extra = THIRD_LINE_COUNT if bonus else 0.0
        assert n[move] - plain[move] == extra and w[move] - plain_wins[move] == extra, (x, y)


@pytest.mark.slow
def test_search_with_knowledge_finds_the_capture_sooner() -> None:
    """Black captures C3 at C4 (its last liberty): with the capture urged by prior knowledge, RAVE searches of only
    30 playouts pick it (ten seeded searches each way, one playout a visit)."""
    from miai.engine.config import Config, apply_overrides
    from miai.engine.player import EnginePlayer
    from miai.go.coords import Color, parse_gtp
    from miai.go.rules import Rules
    from miai.go.state import GameState

    state = GameState(5, Rules.preset("chinese"), 7.0)
    for colour, vertex in (("b", "B3"), ("w", "C3"), ("b", "D3"), ("w", "pass"), ("b", "C2"), ("w", "pass")):
        state.push(parse_gtp(vertex, 5), Color.BLACK if colour == "b" else Color.WHITE)
    found = {}
    for spec in ("playouts:1:light", "playouts:1:light:knowledge"):
        hits = 0
        for seed in range(1, 11):
            config = apply_overrides(Config(), [f"search.seed={seed}", "search.max_visits=30", "search.max_time=0",
                                                "search.selection=ucb1-tuned", "search.use_lcb=false",
                                                "search.final_choice=visits", "search.rave_equivalence=1000"])
            player = EnginePlayer(PlayoutEvaluator.from_spec(spec, seed=seed, amaf=True), config)
            hits += player.genmove(state, Color.BLACK) == parse_gtp("C4", 5)
        found[spec] = hits
    with_knowledge, without = found["playouts:1:light:knowledge"], found["playouts:1:light"]
    assert with_knowledge >= 9 and with_knowledge > without, found


def test_the_search_starts_a_new_node_s_amaf_statistics_with_the_knowledge() -> None:
    from miai.engine.config import SearchConfig
    from miai.engine.core.search import Search
    from miai.go.rules import Rules
    from miai.go.state import GameState

    state = GameState(5, Rules.preset("chinese"), 7.0)
    search = Search(PlayoutEvaluator(amaf=True, knowledge=True, seed=1),
                    SearchConfig(selection="ucb1-tuned", rave_equivalence=1000.0, max_visits=1, max_time=0.0))
    search.set_root(state)
    search.run()
    root = search.root
    assert root is not None and root.amaf_n is not None and root.amaf_w is not None
    board = PlayoutBoard.from_stones([0] * 25, 5)
    n, w = prior_knowledge(board, BLACK, PASS, state.legal_moves())
    assert np.array_equal(root.amaf_n, n) and np.array_equal(root.amaf_w, w)  # the root's own playout is not AMAF
    off = Search(PlayoutEvaluator(amaf=True, knowledge=True, seed=1),
                 SearchConfig(selection="ucb1-tuned", rave_equivalence=0.0, max_visits=1, max_time=0.0))
    off.set_root(state)
    off.run()
    assert off.root is not None and off.root.amaf_n is None  # RAVE off: nothing to start
