"""miai train without torch: data shards, symmetries, lookahead targets, kifu parsing.

The torch parts (the student, its export, the training loop) are in tests/nets/test_train_torch.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from miai.go.coords import PASS
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features
from miai.nets.evaluator import legal_mask
from miai.nets.train import TrainError
from miai.nets.train.datagen import (
    Labels,
    ShardWriter,
    improved_policy,
    pack_spatial,
    read_kifu_games,
    sample_move,
    unpack_spatial,
)
from miai.nets.train.dataset import ShardSet, apply_symmetry, load_shard
from tests.outside import needs_shared, shared


def random_states(size: int, count: int, seed: int = 0) -> list[GameState]:
    """Positions after a few random legal moves."""
    rng = np.random.default_rng(seed)
    states = []
    for k in range(count):
        state = GameState(size=size, rules=Rules.preset("chinese"), komi=7.0)
        for _ in range(3 + k % 7):
            state.push(int(rng.choice(state.legal_moves())))
        states.append(state)
    return states


def fake_labels(states: list[GameState]) -> Labels:
    """Labels whose policy target is the first legal point after the last move (a learnable,
    position-dependent rule) and whose value says Black wins."""
    size = states[0].size
    area = size * size
    encoded = [features.encode(s) for s in states]
    policy = np.zeros((len(states), area + 1), np.float16)
    for k, state in enumerate(states):
        legal = np.flatnonzero(legal_mask(state)[:area])
        policy[k, legal[0] if legal.size else area] = 1.0
    black = np.array([1.0 if s.to_play == 1 else 0.0 for s in states], np.float32)
    return Labels(
        size=size,
        spatial=np.stack([pack_spatial(e[0]) for e in encoded]),
        global_=np.stack([e[1] for e in encoded]).astype(np.float32),
        policy=policy,
        value=np.stack([black, 1 - black, np.zeros_like(black)], axis=1),
        score=np.stack([(black - 0.5) * 10, np.full_like(black, 8.0), (black - 0.5) * 10], axis=1),
        ownership=np.stack([np.where(s.stones() == 0, 0.0, 1.0) for s in states]).astype(np.float16),
    )


# -- numpy parts (no torch needed) ---------------------------------------------------------------


def test_spatial_planes_round_trip_through_bit_packing() -> None:
    state = random_states(9, 1)[0]
    spatial, _ = features.encode(state)
    packed = pack_spatial(spatial)
    assert packed.nbytes == (22 * 81 + 7) // 8
    assert np.array_equal(unpack_spatial(packed[None], 9)[0], spatial)


def test_non_binary_planes_are_refused() -> None:
    with pytest.raises(TrainError):
        pack_spatial(np.full((22, 9, 9), 0.5, np.float32))


def test_shards_are_written_atomically_and_read_back(tmp_path: Path) -> None:
    writer = ShardWriter(tmp_path, "t", 9, shard_size=10)
    labels = fake_labels(random_states(9, 25))
    writer.add(labels)  # 25 >= 10: written at once
    writer.add(fake_labels(random_states(9, 3, seed=1)))
    writer.flush()
    files = sorted(p.name for p in tmp_path.glob("*.npz"))
    assert files == ["t-09-00000.npz", "t-09-00001.npz"]
    back = load_shard(tmp_path / files[0])
    assert back.size == 9 and len(back) == 25
    assert np.array_equal(back.spatial, labels.spatial)
    # A new writer continues the numbering instead of overwriting (resumable generation).
    assert ShardWriter(tmp_path, "t", 9)._index == 2


def test_symmetry_moves_targets_with_the_stones(tmp_path: Path) -> None:
    """Under every symmetry the policy target and ownership stay on the same stones they
    marked before, so augmentation never scrambles a label."""
    states = random_states(7, 12)
    labels = fake_labels(states)
    # Target: the point of the last move (always a stone of the opponent of the side to move).
    labels.policy[:] = 0
    for k, state in enumerate(states):
        labels.policy[k, state.moves[-1][1]] = 1
    ShardWriter(tmp_path, "s", 7).add(labels)
    ShardWriter(tmp_path, "s", 7, shard_size=1).add(labels)
    shards = ShardSet(tmp_path)
    assert shards.refresh() == 1 and shards.counts() == {7: 12}
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(40):
        batch = shards.sample(6, rng)
        opp_stones = batch.spatial[:, 2].reshape(6, -1)
        target = batch.policy[:, :49].argmax(axis=1)
        assert np.all(opp_stones[np.arange(6), target] == 1.0)
        stones = batch.spatial[:, 1] + batch.spatial[:, 2]
        assert np.array_equal(batch.ownership != 0, stones != 0)
        seen.add(batch.spatial[:, 1:3].tobytes())
    assert len(seen) > 8  # symmetries and rows really vary


def test_apply_symmetry_gives_the_eight_distinct_images() -> None:
    board = np.arange(9).reshape(3, 3)
    images = {apply_symmetry(board, s).tobytes() for s in range(8)}
    assert len(images) == 8


def test_holdout_rows_never_reach_training_batches(tmp_path: Path) -> None:
    labels = fake_labels(random_states(5, 20))
    labels.global_[:, 0] = np.arange(20)  # tag rows
    ShardWriter(tmp_path, "h", 5, shard_size=1).add(labels)
    shards = ShardSet(tmp_path, holdout=8)
    shards.refresh()
    rng = np.random.default_rng(0)
    tags = np.concatenate([shards.sample(16, rng).global_[:, 0] for _ in range(20)])
    assert tags.min() >= 8
    validation = shards.validation(5, 100)
    assert validation is not None and list(validation.global_[:, 0]) == list(range(8))


def test_several_directories_train_as_one_set(tmp_path: Path) -> None:
    """Two data sets (whose shards have the same names) load as one; the hold-out stays the first one's."""
    first, second = tmp_path / "a", tmp_path / "b"
    for directory, start in ((first, 0), (second, 100)):
        directory.mkdir()
        labels = fake_labels(random_states(5, 10))
        labels.global_[:, 0] = np.arange(start, start + 10)  # tag rows
        ShardWriter(directory, "s", 5, shard_size=1).add(labels)
    assert sorted(p.name for p in first.glob("*.npz")) == sorted(p.name for p in second.glob("*.npz"))
    shards = ShardSet([first, second], holdout=4)
    assert shards.refresh() == 2 and shards.counts() == {5: 20}
    rng = np.random.default_rng(0)
    tags = set(np.concatenate([shards.sample(16, rng).global_[:, 0] for _ in range(20)]).tolist())
    assert tags == set(range(4, 10)) | set(range(100, 110))
    validation = shards.validation(5, 100)
    assert validation is not None and list(validation.global_[:, 0]) == [0, 1, 2, 3]


def test_batches_come_only_from_the_sizes_asked_for(tmp_path: Path) -> None:
    """`--sizes 9:1` trains on 9x9 alone even when the data set also holds (or meanwhile gains) 7x7."""
    ShardWriter(tmp_path, "a", 9, shard_size=1).add(fake_labels(random_states(9, 8)))
    ShardWriter(tmp_path, "b", 7, shard_size=1).add(fake_labels(random_states(7, 8)))
    rng = np.random.default_rng(0)
    only_nine = ShardSet(tmp_path, {9: 1.0})
    only_nine.refresh()
    assert {only_nine.sample(4, rng).spatial.shape[-1] for _ in range(30)} == {9}
    every_size = ShardSet(tmp_path)
    every_size.refresh()
    assert {every_size.sample(4, rng).spatial.shape[-1] for _ in range(30)} == {7, 9}
    with pytest.raises(TrainError, match="sizes asked for"):
        none_there = ShardSet(tmp_path, {13: 1.0})
        none_there.refresh()
        none_there.sample(4, rng)


def test_kifu_lines_are_parsed_into_moves(tmp_path: Path) -> None:
    kifu = tmp_path / "games.kifu"
    moves = ";B[pd];W[dp];B[pq];W[dd];B[fq];W[cn];B[jp];W[qf];B[nc];W[rd];B[qc];W[tt]"
    kifu.write_text(f"1\t{moves}\n2\t;B[aa];B[bb]\n3\t{moves};X[zz]\n", encoding="utf-8")
    games = read_kifu_games(kifu, 19)
    assert len(games) == 2  # game 2 is too short after the colours stop alternating
    assert games[0][0] == 3 * 19 + 15  # pd: column p (15), row d (3)
    assert games[0][-1] == PASS
    assert games[1] == games[0]


def test_kifu_lines_go_through_the_sgf_reader_with_its_repairs_and_warnings(tmp_path: Path) -> None:
    """An old record's quirks in a kifu line are repaired as in an SGF file; each warning names the file's line and
    column; what cannot be read skips the game with a warning."""
    kifu = tmp_path / "old.kifu"
    moves = ";B[pd];W[dp];B[pq];W[dd];B[fq];W[cn];B[jp];W[qf];B[nc];W[rd]"
    kifu.write_text(f"1\t{moves}\n"
                    f"22\t;B[pd]W[dp];B[pq];W[dd];B[fq];W[cn];B[jp];W[qf];B[nc];White[rd];B[tt]\n"
                    f"3\t{moves};B[qc\n"
                    f"4\t;AB[aa]{moves}\n", encoding="utf-8")
    said: list[str] = []
    games = read_kifu_games(kifu, 19, said.append)
    assert games == [games[0], games[0] + [PASS]] and len(games[0]) == 10
    assert said == [
        f"{kifu}: line 2, column 10: B[pd] and W[dp] in one node: the 2 moves are played in file order",
        f"{kifu}: line 2, column 58: property name White read as W (an FF[1-3] long name)",
        f"{kifu}: line 2, column 68: B[tt] read as a pass (FF[3]'s pass; FF[4] writes B[])",
        f"{kifu}: line 3, column 65: game skipped: unterminated property value (missing ']')",
        f"{kifu}: line 4: game skipped: it has setup stones (AB/AW), a kifu line holds moves only",
    ]


def test_sample_move_follows_the_policy() -> None:
    rng = np.random.default_rng(0)
    policy = np.zeros(10, np.float32)
    policy[[2, 9]] = [0.75, 0.25]
    moves = [sample_move(policy, 1.0, rng) for _ in range(400)]
    assert set(moves) == {2, PASS}
    assert 0.65 < moves.count(2) / 400 < 0.85
    cold = [sample_move(policy, 0.1, rng) for _ in range(100)]
    assert cold.count(2) >= 98


TEACHER = shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_teacher_labels_agree_with_the_evaluator() -> None:
    """The labels of a self-play batch are the evaluator's own answers for the stored inputs."""
    from miai.nets.loading import load_evaluator
    from miai.nets.train.datagen import SelfPlayConfig, Teacher, self_play_positions

    evaluator = load_evaluator(TEACHER)
    teacher = Teacher(evaluator)  # type: ignore[arg-type]
    batches = self_play_positions(teacher, SelfPlayConfig(size=9, parallel_games=3, seed=5))
    next(batches)
    labels = next(batches)  # after one sampled move per game
    assert len(labels) == 3 and teacher.evaluations == 6
    states = random_states(9, 2)
    labels = teacher.label(states)
    for k, (state, evaluation) in enumerate(zip(states, evaluator.evaluate(states))):
        assert np.array_equal(unpack_spatial(labels.spatial[k : k + 1], 9)[0], features.encode(state)[0])
        np.testing.assert_allclose(labels.policy[k].astype(np.float32), evaluation.policy, atol=1e-3)
        np.testing.assert_allclose(labels.value[k], [evaluation.win, evaluation.loss, evaluation.no_result], atol=1e-5)
        assert labels.score[k, 2] == pytest.approx(evaluation.lead, abs=1e-3)
        assert np.all(labels.policy[k][~legal_mask(state)] == 0)


def test_the_improved_policy_moves_mass_towards_moves_that_win_more() -> None:
    policy = np.array([[0.5, 0.3, 0.0, 0.2]], np.float32)
    q = np.array([[0.2, 0.8, 0.9, 0.5]], np.float32)
    better = improved_policy(policy, q, 5.0)
    assert better.sum() == pytest.approx(1.0) and better[0, 2] == 0.0  # an illegal move stays out
    assert better[0, 1] > better[0, 0] and better[0, 1] > 0.3 and better[0, 0] < 0.5
    # log(0.3/0.5) + 5 * (0.8 - 0.2): the odds move by exp(scale * q difference)
    assert np.log(better[0, 1] / better[0, 0]) == pytest.approx(np.log(0.6) + 3.0, abs=1e-5)
    np.testing.assert_allclose(improved_policy(policy, q, 0.0), policy, atol=1e-6)


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_lookahead_targets_come_from_the_teachers_view_of_each_child() -> None:
    """The improved policy is the prior shifted by the evaluator's own winrate after each top move."""
    from miai.nets.loading import load_evaluator
    from miai.nets.train.datagen import Lookahead, Teacher, top_moves

    evaluator = load_evaluator(TEACHER)
    teacher = Teacher(evaluator)  # type: ignore[arg-type]
    states = random_states(9, 2, seed=3)
    raw = teacher.label(states)
    labels = teacher.label(states, Lookahead(children=3, scale=5.0))
    assert teacher.evaluations == 2 + 2 + 6
    np.testing.assert_array_equal(labels.value, raw.value)  # only the policy target changes
    for k, state in enumerate(states):
        prior = raw.policy[k].astype(np.float32)
        root = evaluator.evaluate([state])[0]
        q = np.full(prior.shape, (1.0 + root.win - root.loss) / 2.0, np.float32)
        for move in top_moves(prior, 3):
            child = state.copy()
            child.push(move)
            answer = evaluator.evaluate([child])[0]
            q[move] = (1.0 + answer.loss - answer.win) / 2.0
        expected = improved_policy(prior[None, :], q[None, :], 5.0)[0]
        np.testing.assert_allclose(labels.policy[k].astype(np.float32), expected, atol=2e-3)
        assert np.all(labels.policy[k][~legal_mask(state)] == 0)


def test_mixed_value_backs_up_the_prior_weighted_children() -> None:
    """v_mix = (v + n * sum(prior_a v_a) / sum(prior_a)) / (1 + n); a row without children keeps its value."""
    from miai.nets.train.datagen import Children, mixed_value

    root = np.array([[0.6, 0.4, 0.0], [0.5, 0.5, 0.0]], np.float32)
    prior = np.array([[0.6, 0.2, 0.2], [0.5, 0.5, 0.0]], np.float32)
    children = Children(np.array([0, 0]), np.array([0, 1]), np.array([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]], np.float32))
    mixed = mixed_value(root, prior, children)
    backed = (0.6 * np.array([0.2, 0.8, 0.0]) + 0.2 * np.array([1.0, 0.0, 0.0])) / 0.8  # win 0.4, loss 0.6
    np.testing.assert_allclose(mixed[0], (root[0] + 2 * backed) / 3, atol=1e-6)
    np.testing.assert_allclose(mixed[0].sum(), 1.0, atol=1e-6)  # still a distribution
    np.testing.assert_array_equal(mixed[1], root[1])


@needs_shared("nets/g170-b6c96-s175395328-d26788732.bin.gz")
def test_lookahead_value_targets_come_from_the_same_children() -> None:
    """With ``mix_value`` the value target is the teacher's root value mixed with its values one ply down
    (each from the player to move's side), and the policy target is the plain lookahead's."""
    from miai.nets.loading import load_evaluator
    from miai.nets.train.datagen import Lookahead, Teacher, top_moves

    evaluator = load_evaluator(TEACHER)
    teacher = Teacher(evaluator)  # type: ignore[arg-type]
    states = [GameState(size=9, rules=Rules.preset("chinese"), komi=7.0), *random_states(9, 1, seed=5)]
    raw = teacher.label(states)
    plain = teacher.label(states, Lookahead(children=3))
    mixed = teacher.label(states, Lookahead(children=3, mix_value=True))
    np.testing.assert_array_equal(mixed.policy, plain.policy)
    for k, state in enumerate(states):
        prior = raw.policy[k].astype(np.float32)
        total, weight = np.zeros(3), 0.0
        for move in top_moves(prior, 3):
            child = state.copy()
            child.push(move)
            answer = evaluator.evaluate([child])[0]
            total += prior[move] * np.array([answer.loss, answer.win, answer.no_result])
            weight += prior[move]
        expected = (raw.value[k] + 3 * total / weight) / 4
        np.testing.assert_allclose(mixed.value[k], expected, atol=2e-3)
    assert not np.allclose(mixed.value[0], raw.value[0], atol=1e-3)  # on the empty board the children move it
