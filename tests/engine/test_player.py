"""EnginePlayer: the search-backed GTP player (move choice, analysis, dead stones, params, clocks)."""

from __future__ import annotations

import io
import logging
import re
import threading

import pytest

from miai.engine.config import Config, apply_overrides
from miai.engine.player import EnginePlayer
from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.go.clock import TimeControl, TimeSystem
from miai.gtp.player import RESIGN, AnalyzeRequest, ClockReading
from miai.nets.cache import CachedEvaluator
from miai.nets.evaluator import UniformEvaluator
from miai.nets.features import situation_key
from miai.nets.playouts import PlayoutEvaluator


def _config(*sets: str) -> Config:
    return apply_overrides(Config(), ["search.seed=7", *sets])


def _state(size: int, moves: str = "", rules: str = "chinese", komi: float = 7.0) -> GameState:
    state = GameState(size, Rules.preset(rules), komi)
    for token in moves.split():
        color, vertex = token.split(":")
        state.push(parse_gtp(vertex, size), Color.BLACK if color == "b" else Color.WHITE)
    return state


def test_genmove_returns_a_legal_move_for_the_requested_colour() -> None:
    player = EnginePlayer(UniformEvaluator(), _config("search.max_visits=30"))
    state = _state(7, "b:D4")
    move = player.genmove(state, Color.BLACK)  # Black again although White is to move
    assert move == PASS or state.legality(move, Color.BLACK) is None
    assert state.moves == [(Color.BLACK, parse_gtp("D4", 7))]  # the player never mutates the game


@pytest.mark.slow
def test_genmove_captures_a_stone_in_atari() -> None:
    # White's C3 stone has one liberty left, at C4: capturing it is by far the best move.
    state = _state(5, "b:B3 w:C3 b:D3 w:pass b:C2 w:pass")
    player = EnginePlayer(PlayoutEvaluator.from_spec("playouts:8", seed=1),
                          _config("search.max_visits=200", "search.max_time=0"))  # visits, not a loaded clock
    assert player.genmove(state, Color.BLACK) == parse_gtp("C4", 5)


def test_genmove_analyze_reports_the_final_search_even_when_it_ends_before_the_interval() -> None:
    # KataGo prints the search's figures before "play" however short the search: a GUI sees every move's analysis.
    player = EnginePlayer(UniformEvaluator(), _config("search.max_visits=20", "search.max_time=0"))
    seen = []
    move = player.genmove(_state(5), Color.BLACK, analysis=AnalyzeRequest(interval=1000.0), emit=seen.append)
    assert len(seen) == 1
    final = seen[0]
    assert final.root is not None and final.root.visits == 20
    assert final.moves and move in {m.move for m in final.moves}


def test_analyze_emits_snapshots_from_the_colour_view_until_stopped() -> None:
    player = EnginePlayer(PlayoutEvaluator.from_spec("playouts:2", seed=3), _config())
    state = _state(5)
    snapshots = []
    stop = threading.Event()

    def emit(snapshot):
        snapshots.append(snapshot)
        if len(snapshots) >= 2:
            stop.set()

    player.analyze(state, Color.BLACK, AnalyzeRequest(interval=0.05, ownership=True), emit, stop)
    assert len(snapshots) >= 2
    last = snapshots[-1]
    assert last.moves and all(0.0 <= m.winrate <= 1.0 for m in last.moves)
    assert last.ownership is not None and len(last.ownership) == 25
    assert last.root is not None and last.root.visits > 0


def test_analyze_with_stop_already_set_emits_once() -> None:
    player = EnginePlayer(UniformEvaluator(), _config())
    stop = threading.Event()
    stop.set()
    seen = []
    player.analyze(_state(5), Color.WHITE, AnalyzeRequest(interval=0.1), seen.append, stop)
    assert len(seen) == 1


@pytest.mark.slow
def test_final_status_marks_a_lone_stone_inside_enemy_territory_dead() -> None:
    # Black walls off the left of a 7x7 board; a single white stone sits inside Black's area.
    moves = " ".join(f"b:{c}{r}" for c in "D" for r in range(1, 8)) + " w:B4"
    moves += " " + " ".join(f"w:{c}{r}" for c in "F" for r in range(1, 8))
    state = _state(7, moves)
    player = EnginePlayer(PlayoutEvaluator.from_spec("playouts:16", seed=5), _config())
    dead = player.final_status(state)
    assert parse_gtp("B4", 7) in dead
    assert not any(state.color_at(p) == Color.BLACK for p in dead if state.color_at(p) != Color.WHITE)
    assert parse_gtp("D4", 7) not in dead and parse_gtp("F4", 7) not in dead


def test_final_status_keeps_stones_the_search_gives_to_nobody() -> None:
    # Ownership 0 everywhere (seki, an unsettled fight): no stone is dead. (Until this was mended a stone counted
    # dead unless its own side owned it by 0.3, so such stones were lifted from both sides' final_score.)
    moves = " ".join(f"b:D{r}" for r in range(1, 8)) + " w:B4 " + " ".join(f"w:F{r}" for r in range(1, 8))
    player = EnginePlayer(UniformEvaluator(), _config("search.max_visits=16"))
    assert player.final_status(_state(7, moves)) == []


def test_params_round_trip_and_reject_unknown_names_and_bad_values() -> None:
    player = EnginePlayer(UniformEvaluator(), _config())
    player.set_param("maxVisits", "123")
    assert player.get_param("search.max_visits") == "123"
    assert player.search.config.max_visits == 123
    player.set_param("search.graph", "false")
    assert player.get_param("graph") == "false"
    with pytest.raises(KeyError):
        player.get_param("noSuchParam")
    with pytest.raises(ValueError):
        player.set_param("maxVisits", "many")


def test_net_options_are_refused_after_the_net_has_loaded() -> None:
    player = EnginePlayer(UniformEvaluator(), _config())
    for name in ("enablePassingHacks", "policyOptimism", "net.symmetry"):
        with pytest.raises(ValueError, match="applies when the net loads"):
            player.set_param(name, "false")
    assert player.get_param("enablePassingHacks") == "true"  # unchanged, and still readable


def test_resigns_only_after_consecutive_hopeless_moves() -> None:
    class Hopeless(UniformEvaluator):
        def evaluate(self, states):
            from dataclasses import replace
            # Black is lost in every position, whoever is to move.
            return [replace(e, win=0.01, loss=0.99) if s.to_play == Color.BLACK else replace(e, win=0.99, loss=0.01)
                    for s, e in zip(states, super().evaluate(states))]

    player = EnginePlayer(Hopeless(), _config("search.max_visits=10", "player.resign_threshold=0.1",
                                              "player.resign_consecutive=2"))
    state = _state(5)
    assert player.genmove(state, Color.BLACK) != RESIGN
    assert player.genmove(state, Color.BLACK) == RESIGN


@pytest.mark.parametrize(("name", "value"), [("resignThreshold", "-0.6"), ("player.resign_threshold", "0.2"),
                                             ("resign_threshold", "0.2")])
def test_kata_set_param_takes_katago_dotted_and_bare_names(name: str, value: str) -> None:
    """KataGo's name takes KataGo's value (resignThreshold is a win-loss utility: -0.6 is a 20% winrate)."""
    player = EnginePlayer(UniformEvaluator(), _config())
    player.set_param(name, value)
    assert player.config.player.resign_threshold == pytest.approx(0.2)
    assert player.get_param("player.resign_threshold") == player.get_param("resign_threshold") == "0.2"


def test_a_clock_limits_the_search_time() -> None:
    player = EnginePlayer(UniformEvaluator(), _config("search.max_visits=0", "player.lag_buffer=0.2"))
    player.set_time_control(TimeControl(system=TimeSystem.ABSOLUTE, main_time=2.0))
    player.time_left(ClockReading(Color.BLACK, 2.0, 0))
    import time
    start = time.monotonic()
    player.genmove(_state(9), Color.BLACK)
    assert time.monotonic() - start < 2.0


def test_a_fischer_capped_move_limit_caps_the_search_time() -> None:
    player = EnginePlayer(UniformEvaluator(), _config("search.max_visits=0", "search.max_time=0",
                                                      "player.lag_buffer=0.2"))
    player.set_time_control(TimeControl(TimeSystem.FISCHER_CAPPED, main_time=600.0, increment=30.0,
                                        main_time_limit=-1.0, max_time_per_move=0.5))
    import time
    start = time.monotonic()
    player.genmove(_state(9), Color.BLACK)
    assert time.monotonic() - start < 0.5  # 600 s of main time would allow many seconds


@pytest.mark.slow
def test_cleanup_does_not_pass_while_dead_opponent_stones_remain() -> None:
    moves = " ".join(f"b:D{r}" for r in range(1, 8)) + " w:B4 " + " ".join(f"w:F{r}" for r in range(1, 8))
    state = _state(7, moves + " b:pass w:pass")
    player = EnginePlayer(PlayoutEvaluator.from_spec("playouts:16", seed=2), _config("search.max_visits=40"))
    move = player.genmove(state, Color.BLACK, cleanup=True)
    assert move != PASS


def test_analysis_allow_restricts_the_searched_moves() -> None:
    from miai.gtp.player import MoveRestriction

    player = EnginePlayer(UniformEvaluator(), _config())
    stop = threading.Event()
    allowed = (parse_gtp("C3", 5), parse_gtp("D4", 5))
    request = AnalyzeRequest(interval=0.05, allow=(MoveRestriction(Color.BLACK, allowed, 1),))
    seen = []

    def emit(snapshot):
        seen.append(snapshot)
        if sum(m.visits for m in snapshot.moves) > 20:
            stop.set()

    player.analyze(_state(5), Color.BLACK, request, emit, stop)
    assert seen[-1].moves and {m.move for m in seen[-1].moves} <= set(allowed)


def test_tree_is_not_reused_across_games_with_different_setup_stones() -> None:
    # A dead-stone estimate at the end of a game searches a fresh position made of the final stones (no moves);
    # the next game's move list extends that empty move list. Reusing that tree for the new game (tree mode has no
    # hash check to catch it) once made the engine answer occupied points and suicides in matches.
    player = EnginePlayer(UniformEvaluator(), _config("search.graph=false", "search.max_visits=30"))
    moves = " ".join(f"b:D{r}" for r in range(1, 8)) + " w:B4 " + " ".join(f"w:F{r}" for r in range(1, 8))
    player.final_status(_state(7, moves + " b:pass w:pass"))
    reused = player.search.stats()["trees_reused"]
    explored = next(e.move for e in player.search.root.edges if e.child is not None and e.move != PASS)
    new_game = _state(7)
    new_game.push(explored)  # a move the old tree has a child for
    new_game.push(player.genmove(new_game, Color.WHITE))
    assert player.search.stats()["trees_reused"] == reused
    player.genmove(new_game, Color.BLACK)  # the same game one move on: now the tree is reused
    assert player.search.stats()["trees_reused"] == reused + 1


def test_one_visit_plays_the_policy_top_move() -> None:
    class Prefers(UniformEvaluator):
        def evaluate(self, states):
            from dataclasses import replace
            import numpy as np
            out = []
            for e in super().evaluate(states):
                policy = np.full_like(e.policy, 0.001)
                policy[parse_gtp("C3", 7)] = 0.9
                out.append(replace(e, policy=policy / policy.sum()))
            return out

    player = EnginePlayer(Prefers(), _config("search.max_visits=1"))
    assert player.genmove(_state(7), Color.BLACK) == parse_gtp("C3", 7)


class _CountingEvaluator(UniformEvaluator):
    """A uniform evaluator that counts the positions it is asked to evaluate."""

    def __init__(self) -> None:
        super().__init__()
        self.positions = 0

    def evaluate(self, states):  # type: ignore[no-untyped-def]
        self.positions += len(states)
        return super().evaluate(states)


def test_the_next_genmove_keeps_the_whole_subgraph_of_the_two_moves_played_as_katago_does() -> None:
    # KataGo's makeMove promotes the child and keeps its whole subgraph; so must the GTP flow of a real game: genmove,
    # the opponent's play, komi sent again unchanged, time_left, genmove. The new root then holds exactly the visits
    # the old search gave that node, every node of its subgraph is the same object, and only the new playouts are
    # evaluated (plus the root once more, as a root).
    from miai.engine.core.graph import reachable_ids
    from miai.gtp.config import GtpConfig
    from miai.gtp.session import GtpSession

    evaluator = _CountingEvaluator()
    player = EnginePlayer(evaluator, _config("search.max_visits=300", "search.max_time=0"))
    out = io.StringIO()
    session = GtpSession(player, io.StringIO(), out, io.StringIO(), GtpConfig(board_size=9))
    for line in ("komi 7", "play b E5", "genmove w"):
        session.handle_line(line)
    own = parse_gtp(out.getvalue().split("=")[-1].strip(), 9)
    chosen = player.search.root.edge_for(own).child  # type: ignore[union-attr]
    reply = max((e for e in chosen.edges if e.child is not None), key=lambda e: e.visits)
    kept, kept_visits = reply.child, reply.child.visits
    subgraph = reachable_ids(kept)
    assert kept_visits > 10 and len(subgraph) > 10  # a real subtree, not a leaf
    evaluated, created = evaluator.positions, player.search.stats()["nodes_created"]
    added = 50
    player.set_param("maxVisits", str(kept_visits + added))  # KataGo's maxVisits counts the visits carried over
    for line in (f"play b {to_gtp(reply.move, 9)}", "komi 7", "time_left w 600 0", "genmove w"):
        session.handle_line(line)
    assert player.search.root is kept
    assert kept.visits == kept_visits + added
    assert player.search.stats()["last_run"]["playouts"] == added
    assert subgraph <= reachable_ids(kept)  # nothing of the old subgraph was dropped or rebuilt
    assert evaluator.positions - evaluated <= added + 1
    assert player.search.stats()["nodes_created"] - created <= added


def _summary_counts(line: str) -> tuple[int, int, int]:
    """Playouts, net evaluations and cache answers of one genmove summary line (miai's log at debug)."""
    found = re.search(r"(\d+) playouts \(\d+ carried over, (\d+) net evals, (\d+) cache hits\)", line)
    assert found is not None, line
    playouts, evals, hits = map(int, found.groups())
    return playouts, evals, hits


def test_the_search_summary_says_what_the_net_ran_and_what_the_cache_answered(
        caplog: pytest.LogCaptureFixture) -> None:
    # KataGo's logSearchInfo gives "NN rows" beside "New playouts"; its NN cache outlives moves and games, so a
    # position searched again costs no net run. miai's summary says the same, and its cache outlives the graph.
    player = EnginePlayer(CachedEvaluator(UniformEvaluator(), 10_000, situation_key),
                          _config("search.max_visits=80", "search.max_time=0"))
    with caplog.at_level(logging.DEBUG, logger="miai.engine.player"):
        player.genmove(_state(7, "b:D4"), Color.WHITE)
        player.on_state_changed(_state(7))  # a new game: the graph is dropped, the cache is kept
        player.genmove(_state(7, "b:D4"), Color.WHITE)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("genmove W")]
    assert len(lines) == 2
    (playouts, evals, hits), (_, evals_again, hits_again) = map(_summary_counts, lines)
    assert 0 < evals + hits <= playouts + 1  # a playout needs at most one evaluation (the root's own counts one)
    assert hits_again >= 0.8 * (evals_again + hits_again) and evals_again < evals / 4
