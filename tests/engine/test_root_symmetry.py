"""KataGo's rootSymmetryPruning (search.cpp, nninputs.cpp ``markDuplicateMoveLocs``, searchresults.cpp
``duplicateForSymmetries``): a root that board symmetries leave unchanged is searched one move per symmetric set,
and the analysis shows the copies."""

from __future__ import annotations

from miai.engine.config import SearchConfig
from miai.engine.core.search import Search, symmetric_duplicates
from miai.engine.gtpanalysis import with_symmetric_copies
from miai.go.coords import Color, parse_gtp, to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.gtp.player import MoveInfo
from miai.nets.evaluator import UniformEvaluator


def _points(*vertices: str, size: int = 9) -> set[int]:
    return {parse_gtp(v, size) for v in vertices}


def test_the_symmetries_of_a_position() -> None:
    state = GameState(9, Rules.preset("chinese"), 7.5)
    assert state.symmetries() == list(range(8))
    state.push(parse_gtp("E5", 9))  # the centre keeps every symmetry
    assert state.symmetries() == list(range(8))
    state.push(parse_gtp("C3", 9))  # a stone on the diagonal through A1 and J9 keeps only that mirror
    assert len(state.symmetries()) == 2
    state.push(parse_gtp("G7", 9))  # on the same diagonal; the half turn would swap it with C3, another colour
    assert len(state.symmetries()) == 2


def test_a_ko_ban_makes_no_board_symmetric() -> None:
    # A ko in the middle of a symmetric shape: the banned point breaks the symmetry KataGo looks at.
    state = GameState(5, Rules.preset("chinese"), 7.5)
    state.set_stones(_points("B3", "C2", "C4", size=5), _points("D2", "D4", "E3", size=5))
    state.push(parse_gtp("D3", 5), Color.BLACK)
    state.push(parse_gtp("C3", 5), Color.WHITE)  # captures D3: Black may not retake at once
    assert state.banned_points() and state.symmetries() == [0]


def test_black_keeps_the_upper_right_and_white_the_lower_left() -> None:
    """On the empty 9x9 board 15 points stand for the 81 (KataGo's iteration order decides which)."""
    size, all8 = 9, list(range(8))
    dup_black = symmetric_duplicates(size, int(Color.BLACK), all8)
    dup_white = symmetric_duplicates(size, int(Color.WHITE), all8)
    assert len(dup_black) == len(dup_white) == 81 - 15
    three_three = _points("C3", "C7", "G3", "G7")
    assert three_three - dup_black == _points("G7")
    assert three_three - dup_white == _points("C3")
    # A move the user avoids does not keep its copies out: the next of the set in KataGo's order stands for them.
    avoided = symmetric_duplicates(size, int(Color.BLACK), all8, permitted=lambda m: m != parse_gtp("G7", 9))
    assert three_three - avoided == _points("G3")


def test_the_search_visits_one_move_of_each_symmetric_set() -> None:
    state = GameState(9, Rules.preset("chinese"), 7.5)
    pruned = Search(UniformEvaluator(), SearchConfig(max_visits=200, max_time=0.0, seed=1))
    pruned.set_root(state)
    pruned.run()
    searched = {e.move for e in pruned.root.edges if e.visits}  # type: ignore[union-attr]
    duplicates = symmetric_duplicates(9, int(Color.BLACK), list(range(8)))
    assert searched and not searched & duplicates
    full = Search(UniformEvaluator(), SearchConfig(max_visits=200, max_time=0.0, seed=1, root_symmetry_pruning=False))
    full.set_root(state)
    full.run()
    assert {e.move for e in full.root.edges if e.visits} & duplicates  # type: ignore[union-attr]


def test_the_analysis_shows_the_copies_with_their_pv_moved_along() -> None:
    g7, c3 = parse_gtp("G7", 9), parse_gtp("C3", 9)
    info = MoveInfo(move=g7, visits=10, winrate=0.5, prior=0.1, lcb=0.4, pv=(g7, c3))
    copies = with_symmetric_copies([info], 9, list(range(8)))
    assert [to_gtp(m.move, 9) for m in copies][0] == "G7"
    assert sorted(to_gtp(m.move, 9) for m in copies) == ["C3", "C7", "G3", "G7"]
    for m in copies:  # the reply moves with the move: always the point opposite across the centre
        assert m.pv[1] == 80 - m.move and m.visits == 10
    assert with_symmetric_copies([info], 9, [0]) == [info]
