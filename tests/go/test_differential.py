"""Differential tests: GameState against the flood-fill reference over many random games (hypothesis).

Each example draws a board size, a rule set and a random game; at every move both implementations must agree on
legality (with the reason), stones, liberties, prisoners and hashes, and undoing must restore everything exactly.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from miai.go.coords import PASS
from miai.go.errors import IllegalReason
from miai.go.rules import KoRule, Rules
from miai.go.state import GameState
from tests.go.reference_board import ReferenceGame
from tests.go.reference_hash import reference_pass_state, reference_situation_hash, replay_hashes

pytestmark = pytest.mark.slow

PRESETS = ["tromp-taylor", "chinese", "chinese-ogs", "aga", "new-zealand", "japanese", "aga-button"]


def _snapshot(state: GameState) -> tuple[object, ...]:
    return (
        state.position_hash,
        state.situation_hash,
        state.graph_hash,
        tuple(state.stones()),
        tuple(state.liberties()),
        state.to_play,
        state.consecutive_passes,
        state.captures(1),
        state.captures(2),
        tuple(state.banned_points()),
        tuple(state.moves),
    )


def _random_moves(state: GameState, rng: random.Random, length: int) -> list[int]:
    """Play a random legal game of up to ``length`` moves on ``state`` (then unwind it); returns the moves."""
    moves = []
    for _ in range(length):
        legal = state.legal_moves()
        move = rng.choice(legal) if legal and rng.random() > 0.06 else PASS
        state.push(move)
        moves.append(move)
        if state.is_over():
            break
    for _ in moves:
        state.pop()
    return moves


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(2, 6), preset=st.sampled_from(PRESETS), seed=st.integers(0, 2**32 - 1))
def test_every_move_agrees_with_reference(size: int, preset: str, seed: int) -> None:
    check_game_against_reference(size, preset, seed)


@pytest.mark.slow
@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(2, 5), preset=st.sampled_from(PRESETS), seed=st.integers(0, 2**32 - 1))
def test_thousands_of_games_agree_with_reference(size: int, preset: str, seed: int) -> None:
    check_game_against_reference(size, preset, seed)


def check_game_against_reference(size: int, preset: str, seed: int) -> None:
    """Play one random game on both implementations, comparing everything at every move, then unwind it."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    state = GameState(size, rules, komi=7.5)
    ref = ReferenceGame(size, rules)
    snapshots = [_snapshot(state)]
    captured = [0, 0, 0]
    for _ in range(3 * size * size):
        reasons = [state.legality(m) for m in range(size * size)]
        expected = [ref.legality(m) for m in range(size * size)]
        assert [r.value if r else None for r in reasons] == expected
        assert state.banned_points() == ref.banned()
        legal = [m for m in range(size * size) if reasons[m] is None]
        move = rng.choice(legal) if legal and rng.random() > 0.08 else PASS
        before = sum(1 for v in ref.colors if v == 3 - ref.to_play)
        mover = ref.to_play
        state.push(move)
        ref.play(move)
        captured[mover] += before - sum(1 for v in ref.colors if v == 3 - mover)
        assert state.position_hash == ref.hash()
        assert list(state.stones()) == ref.colors
        assert list(state.liberties()) == ref.liberties()
        assert state.situation_hash == reference_situation_hash(ref, 7.5)
        passes, _, over, repeat = reference_pass_state(ref)
        assert (state.consecutive_passes, state.is_over(), state.pass_repeats_position()) == (passes, over, repeat)
        if rules.multi_stone_suicide is False:
            assert state.captures(mover) == captured[mover]
        snapshots.append(_snapshot(state))
        if state.is_over():
            break
    while snapshots:
        assert _snapshot(state) == snapshots.pop()
        if snapshots:
            state.pop()


@settings(max_examples=60, deadline=None)
@given(size=st.integers(2, 7), preset=st.sampled_from(PRESETS), seed=st.integers(0, 2**32 - 1))
def test_graph_hash_matches_definition(size: int, preset: str, seed: int) -> None:
    rules = Rules.preset(preset)
    rep_bound = random.Random(seed).choice([3, 5, 11])
    state = GameState(size, rules, komi=-3.5, rep_bound=rep_bound)
    moves = _random_moves(state, random.Random(seed), 2 * size * size)
    expected = replay_hashes(ReferenceGame(size, rules), moves, -3.5, rep_bound)
    assert (state.situation_hash, state.graph_hash) == expected[0]
    for move, hashes in zip(moves, expected[1:]):
        state.play_unchecked(move)
        assert (state.situation_hash, state.graph_hash) == hashes


@settings(max_examples=40, deadline=None)
@given(preset=st.sampled_from(PRESETS), seed=st.integers(0, 2**32 - 1))
def test_long_games_on_9x9_round_trip(preset: str, seed: int) -> None:
    """Full random games on 9x9 with play_unchecked: legality and superko bans agree with a brute-force check, and
    popping everything returns to the empty board's hashes."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    state = GameState(9, rules)
    start = _snapshot(state)
    for _ in range(250):
        legal = state.legal_moves()
        brute = [m for m in range(81) if state.board.legality(m, state.to_play, rules.multi_stone_suicide) is None]
        if rules.ko is not KoRule.SIMPLE:
            brute = [m for m in brute if not state.repeats_history(m, state.to_play)]
        assert legal == brute
        banned = state.banned_points()
        assert all(state.legality(m) in (IllegalReason.KO, IllegalReason.SUPERKO) for m in banned)
        state.play_unchecked(rng.choice(legal) if legal and rng.random() > 0.03 else PASS)
        if state.is_over():
            break
    copy = state.copy()
    assert _snapshot(copy) == _snapshot(state)
    while state.moves:
        state.pop()
    assert _snapshot(state) == start
    assert len(copy.moves) > 0  # the copy is independent of the original


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(3, 7),
    preset=st.sampled_from(["tromp-taylor", "chinese-ogs", "new-zealand"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_walk_with_undo_keeps_superko_bans_exact(size: int, preset: str, seed: int) -> None:
    """Like the search: pushes and pops interleaved at random. The incremental superko bans (which rely on the
    board's atari bookkeeping surviving undo) must equal a brute-force check of every point."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    state = GameState(size, rules)
    for _ in range(400):
        if state.moves and rng.random() < 0.35:
            state.pop()
        else:
            legal = state.legal_moves()
            state.play_unchecked(rng.choice(legal) if legal and rng.random() > 0.05 else PASS)
            if state.is_over():
                state.pop()
        board, mover = state.board, state.to_play
        pseudo_legal = [m for m in range(size * size) if board.legality(m, mover, rules.multi_stone_suicide) is None]
        expected = [m for m in pseudo_legal if state.repeats_history(m, state.to_play)]
        assert [m for m in state.banned_points() if state.legality(m) is IllegalReason.SUPERKO] == expected
        assert state.legal_moves() == [m for m in pseudo_legal if m not in expected]


@pytest.mark.parametrize("size", [19, 25])
def test_large_boards_agree_with_reference(size: int) -> None:
    """A few dozen random moves (and a capture race in one corner) on the biggest boards."""
    rules = Rules.preset("tromp-taylor")
    rng = random.Random(size)
    state, ref = GameState(size, rules), ReferenceGame(size, rules)
    corner = [m for m in range(size * size) if m % size < 3 and m // size < 3]
    for i in range(40):
        pool = corner if i % 2 else list(range(size * size))
        move = rng.choice([m for m in pool if state.is_legal(m)] or [PASS])
        assert state.legality(move) is None and ref.legality(move) is None
        state.push(move)
        ref.play(move)
        assert state.position_hash == ref.hash()
        assert list(state.stones()) == ref.colors
    assert state.legal_moves() == [m for m in range(size * size) if ref.legality(m) is None]


@settings(max_examples=60, deadline=None)
@given(size=st.integers(2, 5), preset=st.sampled_from(PRESETS), seed=st.integers(0, 2**32 - 1))
def test_non_alternating_colours_agree_with_reference(size: int, preset: str, seed: int) -> None:
    """GTP lets a controller play the same colour twice: legality for both colours, stones and hashes must still
    agree with the reference when the colour of each move is random."""
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    state, ref = GameState(size, rules), ReferenceGame(size, rules)
    for _ in range(3 * size * size):
        for color in (1, 2):
            got = [state.legality(m, color) for m in range(size * size)]
            assert [r.value if r else None for r in got] == [ref.legality(m, color) for m in range(size * size)]
        color = rng.choice((1, 2))
        legal = [m for m in range(size * size) if ref.legality(m, color) is None]
        move = rng.choice(legal) if legal and rng.random() > 0.1 else PASS
        state.push(move, color)
        ref.play(move, color)
        assert state.position_hash == ref.hash() and list(state.stones()) == ref.colors
        assert state.banned_points() == ref.banned()
        assert state.situation_hash == reference_situation_hash(ref, 7.5)
