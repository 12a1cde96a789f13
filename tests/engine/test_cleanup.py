"""KGS's end of game with the real player: kgs-genmove_cleanup removes the stones the engine holds dead and then
passes, and final_status_list dead names the stones the search's own ownership gives away.

The positions are 7x7 boards split by two walls, with lone enemy stones inside one side's area; the evaluator is
random playouts, whose ownership sees such stones die.
"""

from __future__ import annotations

import io

import pytest

from miai.engine.config import Config, apply_overrides
from miai.engine.player import EnginePlayer
from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.rules import Rules
from miai.go.scoring import dead_chains
from miai.go.state import GameState
from miai.gtp.config import GtpConfig
from miai.gtp.session import GtpSession
from miai.nets.playouts import PlayoutEvaluator

WALLS = " ".join(f"b:D{r}" for r in range(1, 8)) + " " + " ".join(f"w:F{r}" for r in range(1, 8))


def _player(seed: int = 2) -> EnginePlayer:
    return EnginePlayer(PlayoutEvaluator.from_spec("playouts:16", seed=seed),
                        apply_overrides(Config(), ["search.seed=7", "search.max_visits=60", "search.max_time=0"]))


def _state(moves: str) -> GameState:
    state = GameState(7, Rules.preset("chinese"), 7.0)
    for token in moves.split():
        color, vertex = token.split(":")
        state.push(parse_gtp(vertex, 7), Color.BLACK if color == "b" else Color.WHITE)
    return state


def _clean_up(state: GameState, color: Color, player: EnginePlayer, limit: int) -> list[int]:
    """kgs-genmove_cleanup for ``color`` against an opponent who passes, until ``color`` passes; its moves."""
    moves: list[int] = []
    for _ in range(limit):
        move = player.genmove(state.copy(), color, cleanup=True)
        assert isinstance(move, int)
        moves.append(move)
        if move == PASS:
            return moves
        state.push(move, color)
        state.push(PASS, color.opponent)
    raise AssertionError(f"no pass after {limit} cleanup moves: {[to_gtp(m, 7) for m in moves]}")


@pytest.mark.slow
def test_cleanup_captures_the_dead_stones_in_few_moves_then_passes() -> None:
    # Two lone white stones in Black's area (A1 in the corner: two liberties; B5: four).
    state = _state(WALLS + " w:B5 b:pass w:A1 b:pass w:pass")
    moves = _clean_up(state, Color.BLACK, _player(), limit=10)
    assert state.color_at(parse_gtp("B5", 7)) == Color.EMPTY and state.color_at(parse_gtp("A1", 7)) == Color.EMPTY
    assert len(moves) <= 2 + 4 + 1  # each dead stone's liberties, then the pass
    attacked = {parse_gtp(v, 7) for v in ("A2", "B1", "A5", "C5", "B4", "B6")}
    assert set(moves[:-1]) <= attacked  # never a move elsewhere (no invasion, no filling of its own area)


@pytest.mark.slow
def test_cleanup_as_white_against_a_passing_black_removes_the_dead_stone() -> None:
    # The mirror: a lone black stone in White's area; White must capture it, not invade Black's side.
    state = _state(WALLS + " b:G4 w:pass b:pass")
    moves = _clean_up(state, Color.WHITE, _player(seed=3), limit=8)
    assert state.color_at(parse_gtp("G4", 7)) == Color.EMPTY
    assert set(moves[:-1]) <= {parse_gtp("G3", 7), parse_gtp("G5", 7)}  # its liberties (F4 is White's wall)


@pytest.mark.slow
def test_cleanup_passes_at_once_when_nothing_is_dead() -> None:
    assert _clean_up(_state(WALLS + " b:pass w:pass"), Color.BLACK, _player(), limit=1) == [PASS]


@pytest.mark.slow
def test_final_status_list_dead_agrees_with_the_search_that_passed() -> None:
    """The dead stones KGS uploads are the ones the engine's last search, which chose to pass, gave away."""
    player = _player(seed=5)
    state = _state(WALLS + " w:B4")
    player.genmove(state.copy(), Color.BLACK)
    snapshot = player.search.snapshot()
    assert snapshot.ownership is not None
    black_view = snapshot.ownership  # Black was to move: the root's view is Black's
    expected = dead_chains(state.board.colors(), 7, black_view.tolist(), 0.3)
    state.push(PASS, Color.BLACK)
    state.push(PASS, Color.WHITE)
    assert sorted(player.final_status(state)) == sorted(expected)
    assert parse_gtp("B4", 7) in expected


def test_kgs_game_over_and_chat() -> None:
    out = io.StringIO()
    session = GtpSession(_player(), io.StringIO("kgs-chat game alice hello bot\nkgs-chat lobby alice hi\n"
                                                "kgs-game_over\nname\n"), out, io.StringIO())
    assert session.run() == 0
    answers = out.getvalue().split("\n\n")
    assert answers[0].startswith("= Hello alice") and "\n" not in answers[0]
    assert answers[1].startswith("? syntax error: ") and answers[2] == "= " and answers[3] == "= miai"

    out = io.StringIO()
    session = GtpSession(_player(), io.StringIO("kgs-game_over\nname\n"), out, io.StringIO(),
                         GtpConfig(exit_on_game_over=True))
    assert session.run() == 0
    assert out.getvalue() == "= \n\n"  # answered, then the session ended: `name` was never read
