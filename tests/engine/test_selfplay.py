"""Self-play searched by miai: labelled by the teacher's search (``miai train gen --search``) or played by a student
and labelled by the raw teacher (``--player``); engine/selfplay.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from miai.engine.config import SearchConfig
from miai.engine.core.search import Search
from miai.engine.selfplay import (C_SCALE, C_VISIT, SearchBudget, match_positions, player_self_play_positions,
                                  search_self_play_positions, search_targets)
from miai.engine.core.snapshot import Snapshot
from miai.go.coords import PASS, Color
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.engine.core.results import MoveResult, RootResult
from miai.nets import features
from miai.nets.evaluator import legal_mask
from miai.nets.train.datagen import Labels, SelfPlayConfig, Teacher, pack_spatial, unpack_spatial
from tests.outside import needs_shared, shared

TEACHER = shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")


def train_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """``miai train ARGS...`` run in-process with its cache under ``tmp_path``."""
    from miai.engine.cli.main import main

    monkeypatch.setenv("MIAI_TRAIN_DIR", str(tmp_path))
    runner = CliRunner()
    return lambda *args: runner.invoke(main, ["train", *args])


def raw_labels(state: GameState, no_result: float = 0.0) -> Labels:
    """One position's labels with a uniform prior over its legal moves (pass included)."""
    legal = legal_mask(state).astype(np.float32)
    spatial, global_ = features.encode(state)
    return Labels(size=state.size, spatial=pack_spatial(spatial)[None], global_=global_[None].astype(np.float32),
                  policy=(legal / legal.sum())[None].astype(np.float16),
                  value=np.array([[0.5 - no_result / 2, 0.5 - no_result / 2, no_result]], np.float32),
                  score=np.array([[1.0, 9.0, 1.0]], np.float32),
                  ownership=np.zeros((1, state.size ** 2), np.float16))


def move(point: int, visits: int, winrate: float) -> MoveResult:
    return MoveResult(move=point, visits=visits, edge_visits=visits, weight=visits, edge_weight=visits, prior=0.1,
                      winrate=winrate, score_lead=0.0, score_mean=0.0, score_stdev=0.0, utility=2 * winrate - 1,
                      lcb=winrate, utility_lcb=2 * winrate - 1, play_value=visits, pv=(point,))


def snapshot(moves: tuple[MoveResult, ...], winrate: float, lead: float) -> Snapshot:
    root = RootResult(visits=sum(m.visits for m in moves) + 1, winrate=winrate, score_lead=lead,
                      score_mean=lead + 0.5, score_stdev=6.0, utility=2 * winrate - 1)
    return Snapshot(root=root, moves=moves, to_play=1, move_number=0, playouts=root.visits, elapsed=0.1,
                    ownership=None)


def test_search_targets_move_the_prior_by_each_searched_winrate() -> None:
    """Searched moves gain or lose odds against the unsearched ones by exp(sigma * (q - root value)), with
    sigma = (50 + most visits) * 0.1; the value and score targets are the search's root."""
    state = GameState(size=5, rules=Rules.preset("chinese"), komi=7.0)
    labels = raw_labels(state, no_result=0.02)
    good, bad, quiet = 12, 7, 3  # points of the empty 5x5 board
    found = search_targets(labels, snapshot((move(good, 20, 0.7), move(bad, 10, 0.4), move(PASS, 1, 0.1)), 0.6, 2.5))
    policy = found.policy[0].astype(np.float32)
    sigma = (C_VISIT + 20) * C_SCALE
    assert policy.sum() == pytest.approx(1.0, abs=2e-3)
    assert policy[good] > policy[quiet] > policy[bad] > policy[25]  # the pass searched worst of all
    assert np.log(policy[good] / policy[quiet]) == pytest.approx(sigma * 0.1, abs=5e-3)
    assert np.log(policy[quiet] / policy[bad]) == pytest.approx(sigma * 0.2, abs=5e-3)
    win, loss, no_result = found.value[0]
    assert no_result == pytest.approx(0.02) and win + loss + no_result == pytest.approx(1.0)
    assert win + no_result / 2 == pytest.approx(0.6)  # the search's winrate, a no result counted half
    np.testing.assert_allclose(found.score[0], [3.0, 6.0, 2.5])
    np.testing.assert_array_equal(found.spatial, labels.spatial)  # the inputs are the position's own


def test_search_targets_keep_illegal_moves_out() -> None:
    state = GameState(size=5, rules=Rules.preset("chinese"), komi=7.0)
    for point in (6, 12, 7):
        state.push(point)
    found = search_targets(raw_labels(state), snapshot((move(0, 5, 0.55),), 0.5, 0.0))
    policy = found.policy[0].astype(np.float32)
    assert np.all(policy[~legal_mask(state)] == 0) and policy.sum() == pytest.approx(1.0, abs=2e-3)


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
@pytest.mark.slow
def test_self_play_searches_each_position_and_plays_on() -> None:
    """Each position is the previous one plus a move, searched to the visits asked for (reusing the graph), and
    its targets are that search's."""
    from miai.nets.loading import load_evaluator

    teacher = Teacher(load_evaluator(TEACHER))
    search = Search(load_evaluator(TEACHER), SearchConfig(max_visits=24, max_time=0.0))
    positions = search_self_play_positions(teacher, search, SelfPlayConfig(size=7, seed=3), SearchBudget(24))
    labels = [next(positions) for _ in range(4)]
    stones = [unpack_spatial(x.spatial, 7)[0, 1:3].sum() for x in labels]  # own and opponent stones
    assert stones == [0, 1, 2, 3]
    assert search.stats()["trees_reused"] == 3
    assert search.snapshot().root.visits >= 24
    raw = teacher.label([GameState(size=7, rules=Rules.preset("chinese"), komi=7.0)])
    assert not np.allclose(labels[0].policy.astype(np.float32), raw.policy.astype(np.float32), atol=1e-3)
    for x in labels:
        assert x.value[0].sum() == pytest.approx(1.0, abs=1e-5) and x.policy.astype(np.float32).sum() == pytest.approx(
            1.0, abs=2e-3)


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_gen_search_writes_shards_named_by_their_visits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train = train_cli(tmp_path, monkeypatch)
    result = train("gen", "--data", "d", "--teacher", str(TEACHER), "--size", "7", "--positions", "5", "--search", "8")
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "data" / "d").glob("*.npz")] == ["selfplay-m8-s0-07-00000.npz"]
    for extra in (["--lookahead", "4"], ["--source", "kifu", "--kifu", str(tmp_path / "none.txt")]):
        refused = train("gen", "--data", "d", "--teacher", str(TEACHER), "--search", "8", *extra)
        assert refused.exit_code == 2 and "--search takes self-play positions only" in refused.output


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_a_player_plays_the_searched_moves_and_the_teacher_labels_them_raw() -> None:
    """On-policy positions: each move played is one the player's search tried, each position is searched to the
    visits asked for, and its targets are the raw teacher's outputs on it (not the search's)."""
    from miai.nets.evaluator import UniformEvaluator
    from miai.nets.loading import load_evaluator

    class RecordingSearch(Search):
        snapshots: list[Snapshot] = []

        def run(self, *args: Any, **kwargs: Any) -> Snapshot:
            self.snapshots.append(super().run(*args, **kwargs))
            return self.snapshots[-1]

    teacher = Teacher(load_evaluator(TEACHER))
    search = RecordingSearch(UniformEvaluator(), SearchConfig(max_visits=12, max_time=0.0))
    config = SelfPlayConfig(size=7, seed=5, opening_moves=0, temperature=0.3)
    positions = player_self_play_positions(teacher, search, config, SearchBudget(12))
    labels = [next(positions) for _ in range(5)]
    boards = [unpack_spatial(x.spatial, 7)[0, 1:3].sum(axis=0).reshape(-1) for x in labels]  # either side's stones
    for before, after, snapshot_before in zip(boards, boards[1:], search.snapshots):
        played = np.flatnonzero(after - before)
        assert len(played) == 1 and int(played[0]) in {m.move for m in snapshot_before.moves}
        assert snapshot_before.root.visits >= 12
    for x in labels:
        inputs = unpack_spatial(x.spatial, 7).astype(np.float32)
        policy_log, value_log = teacher.log_outputs(inputs, x.global_, x.policy.astype(np.float32))
        np.testing.assert_allclose(np.exp(value_log), x.value, atol=1e-4)
        np.testing.assert_allclose(np.exp(policy_log)[0][x.policy[0] > 0], x.policy[0][x.policy[0] > 0], atol=2e-3)


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
@pytest.mark.slow
def test_a_player_and_its_opponent_take_turns_and_swap_colours_each_game() -> None:
    """Games against an opponent: each side searches the positions where it is to move, to its own visits; the
    player is Black in the first game and White in the next; every position is stored, the teacher's labels."""
    from miai.nets.evaluator import UniformEvaluator
    from miai.nets.loading import load_evaluator

    searched: list[tuple[str, Color, int, int]] = []  # (side, colour to move, moves played, root visits)

    class RecordingSearch(Search):
        def __init__(self, name: str, visits: int) -> None:
            super().__init__(UniformEvaluator(), SearchConfig(max_visits=visits, max_time=0.0))
            self.name = name

        def run(self, *args: Any, **kwargs: Any) -> Snapshot:
            snapshot = super().run(*args, **kwargs)
            searched.append((self.name, Color(snapshot.to_play), snapshot.move_number, snapshot.root.visits))
            return snapshot

    teacher = Teacher(load_evaluator(TEACHER))
    config = SelfPlayConfig(size=5, seed=3, opening_moves=0, temperature=0.3, max_moves_per_area=0.4)  # 10 moves
    positions = match_positions(teacher, (RecordingSearch("player", 12), SearchBudget(12)),
                                (RecordingSearch("opponent", 5), SearchBudget(5)), config)
    labels = [next(positions) for _ in range(25)]
    assert len(searched) == 25 and all(x.size == 5 for x in labels)
    game = -1
    for side, to_play, moves_played, visits in searched:
        game += moves_played == 0
        player_is_black = game % 2 == 0
        assert side == ("player" if (to_play == Color.BLACK) == player_is_black else "opponent")
        assert visits >= (12 if side == "player" else 5) and (side == "player" or visits < 12)
    assert game == 2


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
@pytest.mark.slow
def test_gen_player_names_its_shards_and_needs_a_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train = train_cli(tmp_path, monkeypatch)
    base = ("gen", "--data", "d", "--teacher", str(TEACHER), "--size", "7", "--positions", "3")
    result = train(*base, "--search", "8", "--player", "default", "--lookahead", "2", "--seed", "2")
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "data" / "d").glob("*.npz")] == ["selfplay-q2-p8-s2-07-00000.npz"]
    refused = train(*base, "--player", "default")
    assert refused.exit_code == 2 and "--player needs --search V" in refused.output
    missing = train(*base, "--search", "8", "--player", str(tmp_path / "none.onnx"))
    assert missing.exit_code == 1 and "none.onnx" in missing.output
    against = train(*base, "--search", "8", "--player", "default", "--opponent", str(TEACHER), "--opponent-search",
                    "4", "--seed", "3")
    assert against.exit_code == 0, against.output
    assert (tmp_path / "data" / "d" / "selfplay-p8-o4-s3-07-00000.npz").exists()
    alone = train(*base, "--search", "8", "--opponent", str(TEACHER))
    assert alone.exit_code == 2 and "--opponent needs --player NET" in alone.output
    lost = train(*base, "--search", "8", "--player", "default", "--opponent", str(tmp_path / "gone.onnx"))
    assert lost.exit_code == 1 and "gone.onnx" in lost.output


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
@pytest.mark.slow
def test_the_teacher_measured_on_its_own_labels_agrees_exactly_and_its_search_moves_away(tmp_path: Path) -> None:
    """``train eval --teacher``'s measure: on the teacher's raw labels it is the floor (no divergence, every top
    move its own); on positions labelled by its search the divergence is what the search changed."""
    from miai.nets.loading import load_evaluator
    from miai.nets.train.dataset import ShardSet
    from miai.nets.train.datagen import ShardWriter, self_play_positions
    from miai.nets.train.metrics import teacher_holdout_metrics

    teacher = Teacher(load_evaluator(TEACHER))
    for name in ("raw", "searched"):
        (tmp_path / name).mkdir()
    raw, searched = ShardWriter(tmp_path / "raw", "raw", 7), ShardWriter(tmp_path / "searched", "searched", 7)
    raw.add(next(self_play_positions(teacher, SelfPlayConfig(size=7, parallel_games=12, seed=1))))
    search = Search(load_evaluator(TEACHER), SearchConfig(max_visits=32, max_time=0.0))
    positions = search_self_play_positions(teacher, search, SelfPlayConfig(size=7, seed=1), SearchBudget(32))
    for _ in range(12):
        searched.add(next(positions))
    results = []
    for writer in (raw, searched):
        writer.flush()
        shards = ShardSet(writer.directory, holdout=12)
        shards.refresh()
        results.append(teacher_holdout_metrics(teacher, shards, 12)[7])
    floor, moved = results
    assert floor["top1"] == 1.0 and floor["positions"] == 12
    phases = floor["by_stones"].values()
    assert all(abs(phase["policy_kl"]) < 1e-3 and abs(phase["value_kl"]) < 1e-3 for phase in phases)
    assert max(phase["policy_kl"] for phase in moved["by_stones"].values()) > 0.01


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_eval_teacher_reports_the_floor_without_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`miai train eval --teacher T` on data T labelled: top-1 100%, no divergence; it takes no student options."""
    import json

    train = train_cli(tmp_path, monkeypatch)
    made = train("gen", "--data", "d", "--teacher", str(TEACHER), "--size", "7", "--positions", "16", "--parallel", "8")
    assert made.exit_code == 0, made.output
    result = train("eval", "--data", "d", "--teacher", str(TEACHER), "--holdout", "16")
    assert result.exit_code == 0, result.output
    floor = json.loads(result.stdout)["7"]
    assert floor["top1"] == 1.0 and floor["positions"] == 16
    assert all(abs(phase["policy_kl"]) < 1e-3 for phase in floor["by_stones"].values())
    refused = train("eval", "--data", "d", "--teacher", str(TEACHER), "--net", "x.onnx")
    assert refused.exit_code == 2 and "--teacher measures the teacher alone" in refused.output
    missing = train("eval", "--data", "d", "--teacher", str(tmp_path / "none.bin.gz"))
    assert missing.exit_code == 1 and "cannot load the teacher" in missing.output and "none.bin.gz" in missing.output


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
@pytest.mark.slow
def test_cheap_moves_are_played_but_not_stored() -> None:
    """With playout cap randomisation each stored position had the full search, and the moves that got the cheap
    one were played (the game went on through them) but not stored."""
    from miai.nets.loading import load_evaluator

    class CountingSearch(Search):
        visits: list[int] = []

        def run(self, *args: Any, **kwargs: Any) -> Snapshot:
            self.visits.append(kwargs["max_visits"])
            return super().run(*args, **kwargs)

    teacher = Teacher(load_evaluator(TEACHER))
    search = CountingSearch(load_evaluator(TEACHER), SearchConfig(max_visits=24, max_time=0.0))
    positions = search_self_play_positions(teacher, search, SelfPlayConfig(size=7, seed=4), SearchBudget(24, 4, 0.6))
    for stored in range(1, 6):
        next(positions)
        assert search.visits[-1] == 24 and search.visits.count(24) == stored
    assert set(search.visits) == {4, 24}


def test_cheap_takes_visits_below_the_search_and_a_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train = train_cli(tmp_path, monkeypatch)
    for args, message in ((["--cheap", "4:0.5"], "--cheap needs --search"),
                          (["--search", "64", "--cheap", "100:0.75"], "between 0 and --search's 64"),
                          (["--search", "64", "--cheap", "many"], "expected VISITS:SHARE"),
                          (["--search", "64", "--cheap", "8:1.5"], "SHARE in [0, 1)")):
        refused = train("gen", "--data", "d", "--teacher", "teacher.bin.gz", *args)
        assert refused.exit_code == 2 and message in refused.output, refused.output
