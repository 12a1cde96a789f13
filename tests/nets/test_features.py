"""KataGo input version 7 features on hand-built positions (KATAGO.md section 3)."""

from __future__ import annotations

import numpy as np
import pytest

from miai.go.coords import PASS, Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features
from miai.nets.features import FeatureMismatchError, check_model_inputs, encode, komi_parity_wave


def game(size: int = 9, rules: str = "chinese", komi: float = 7.5, moves: str = "") -> GameState:
    """A game after ``moves``, e.g. ``"b D4 w pass"``."""
    state = GameState(size=size, rules=Rules.preset(rules), komi=komi)
    tokens = moves.split()
    for color, vertex in zip(tokens[::2], tokens[1::2]):
        state.push(parse_gtp(vertex, size), Color.BLACK if color == "b" else Color.WHITE)
    return state


def plane(state: GameState, index: int) -> np.ndarray:
    return encode(state)[0][index]


def points(state: GameState, index: int) -> set[str]:
    """The GTP vertices set in a spatial plane."""
    from miai.go.coords import to_gtp

    flat = plane(state, index).reshape(-1)
    return {to_gtp(int(p), state.size) for p in np.flatnonzero(flat)}


def test_plane_counts_add_up_to_input_version_7() -> None:
    assert (features.NUM_SPATIAL, features.NUM_GLOBAL) == (22, 19)
    spatial, global_ = encode(game())
    assert spatial.shape == (22, 9, 9) and spatial.dtype == np.float32
    assert global_.shape == (19,) and global_.dtype == np.float32


def test_model_input_mismatch_fails_loudly() -> None:
    check_model_inputs(22, 19)
    with pytest.raises(FeatureMismatchError, match="22 and 19"):
        check_model_inputs(18, 19)


def test_empty_19x19_black_to_move_komi_7_5() -> None:
    spatial, global_ = encode(game(size=19))
    assert spatial[0].all() and not spatial[1:].any()
    assert global_[5] == pytest.approx(-0.375)  # komi favours White: negative for Black
    assert global_[18] == pytest.approx(-0.5)  # KATAGO.md's worked example
    assert not np.delete(global_, [5, 18]).any()  # chinese: simple ko, no suicide, area, no tax


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ("tromp-taylor", {6: 1.0, 7: 0.5, 8: 1.0}),
        ("aga", {6: 1.0, 7: -0.5}),
        ("japanese", {9: 1.0, 10: 1.0}),
        ("stone-scoring", {10: 1.0, 11: 1.0}),
        ("new-zealand", {6: 1.0, 7: -0.5, 8: 1.0}),
    ],
)
def test_rule_planes(rules: str, expected: dict[int, float]) -> None:
    global_ = encode(game(rules=rules, komi=7.0))[1]
    for index in range(6, 14):
        assert global_[index] == expected.get(index, 0.0), f"global {index}"


def test_komi_seen_by_white_and_the_wave() -> None:
    state = game(size=9, komi=6.5, moves="b E5")
    global_ = encode(state)[1]
    assert global_[5] == pytest.approx(6.5 / 20)
    # 81 points: draws need an odd komi; 6.5 is half a point above 5 + 1 -> falling edge at 0.5.
    assert global_[18] == pytest.approx(komi_parity_wave(6.5, 81)) == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("komi", "area", "wave"),
    [(0.0, 16, 0.0), (0.5, 16, 0.5), (1.0, 16, 0.0), (1.5, 16, -0.5), (2.0, 16, 0.0), (7.5, 361, 0.5), (7.0, 361, 0.0)],
)
def test_komi_parity_wave(komi: float, area: int, wave: float) -> None:
    assert komi_parity_wave(komi, area) == pytest.approx(wave)


def test_no_wave_under_territory_scoring() -> None:
    assert encode(game(rules="japanese", komi=6.5))[1][18] == 0.0


def test_stones_and_liberties_from_the_side_to_move() -> None:
    state = game(moves="b A9 w E5 b J1")  # white to move: pla = white
    assert points(state, 1) == {"E5"} and points(state, 2) == {"A9", "J1"}
    assert points(state, 4) == {"A9", "J1"}  # corner stones: 2 liberties
    assert not plane(state, 3).any() and not plane(state, 5).any()  # E5 has 4


def test_recent_moves_while_colours_alternate() -> None:
    state = game(moves="b C3 w D4 b E5 w F6 b G7 w H8")
    assert [points(state, 9 + k) for k in range(5)] == [{"H8"}, {"G7"}, {"F6"}, {"E5"}, {"D4"}]


def test_history_stops_where_colours_repeat() -> None:
    state = GameState(size=9, rules=Rules.preset("chinese"))
    state.push(parse_gtp("C3", 9), Color.BLACK)
    state.push(parse_gtp("D4", 9), Color.BLACK)  # black twice in a row (GTP allows it)
    assert state.to_play == Color.WHITE
    assert points(state, 9) == {"D4"}
    assert not plane(state, 10).any()


def test_passes_mark_global_planes_and_a_pass_would_end_the_game() -> None:
    for rules in ("tromp-taylor", "japanese"):  # passing is not "friendly" under these rules
        state = game(rules=rules, moves="b D4 w pass")
        spatial, global_ = encode(state)
        assert global_[0] == 1.0 and global_[1] == 0.0 and global_[14] == 1.0
        assert not spatial[9].any() and points(state, 10) == {"D4"}
        assert encode(game(rules=rules, moves="b D4"))[1][14] == 0.0


@pytest.mark.parametrize("rules", ["chinese", "chinese-ogs", "aga", "new-zealand", "stone-scoring", "goe"])
def test_a_friendly_pass_hides_all_history_and_the_game_end_flag(rules: str) -> None:
    """Area rules with friendlyPassOk: after one pass the net sees no history at all and no "a pass ends the
    game" flag; the ladder planes of earlier boards repeat the current board (KataGo's fillRowV7)."""
    state = game(rules=rules, moves="b B3 w C3 b C2 w D4 b D3 w pass")
    spatial, global_ = encode(state)
    assert not global_[:5].any() and global_[14] == 0.0
    assert not spatial[9:14].any()
    assert (spatial[15] == spatial[14]).all() and (spatial[16] == spatial[14]).all()
    shown = game(rules="tromp-taylor", moves="b B3 w C3 b C2 w D4 b D3 w pass")
    assert encode(shown)[1][0] == 1.0 and points(shown, 10) == {"D3"}


def test_a_move_after_the_game_ended_shows_only_moves_since_the_end() -> None:
    # Black's pass ended the game; White then played on: the net sees E5 and that pass, not White's pass.
    state = game(rules="tromp-taylor", moves="b D4 w pass b pass w E5")
    assert not state.is_over() and state.moves_this_phase() == 2
    spatial, global_ = encode(state)
    assert points(state, 9) == {"E5"} and global_[:5].tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]
    assert not spatial[11:14].any()


def test_the_button_plane_and_the_half_point_in_komi() -> None:
    start = game(rules="aga-button", komi=7.0)
    assert encode(start)[1][17] == 1.0 and encode(start)[1][5] == pytest.approx(-7.0 / 20)
    taken = game(rules="aga-button", komi=7.0, moves="b pass")  # Black takes the button: half a point
    _, global_ = encode(taken)
    assert global_[17] == 0.0 and global_[5] == pytest.approx(6.5 / 20)
    # Taking the button is no game-ending pass: the history shows it, and a pass now would not end the game.
    assert global_[0] == 1.0 and global_[14] == 0.0
    after = game(rules="aga-button", komi=7.0, moves="b pass w D4 b pass")
    _, global_ = encode(after)  # a friendly pass now: hidden
    assert not global_[:5].any() and global_[14] == 0.0 and global_[5] == pytest.approx(6.5 / 20)


def test_after_the_game_ends_only_the_last_pass_is_shown() -> None:
    state = game(moves="b D4 w E5 b pass w pass")
    assert state.is_over()
    spatial, global_ = encode(state)
    assert global_[:5].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert not spatial[9:14].any()
    assert global_[14] == 1.0


def test_ko_ban_plane() -> None:
    # Black takes a ko at E5 by capturing the white stone there; White may not retake at once.
    state = game(moves="b E4 w F4 b D5 w G5 b E6 w F6 b pass w E5 b F5")
    assert state.to_play == Color.WHITE
    assert points(state, 6) == {"E5"}


def test_handicap_bonus_is_folded_into_white_komi() -> None:
    state = GameState(size=9, rules=Rules.preset("chinese"), komi=0.5)
    state.fixed_handicap(4)
    assert encode(state)[1][5] == pytest.approx((0.5 + 4) / 20)  # chinese: N points
    aga = GameState(size=9, rules=Rules.preset("aga"), komi=0.5)
    aga.fixed_handicap(4)
    assert encode(aga)[1][5] == pytest.approx((0.5 + 3) / 20)  # AGA: N-1 points


def test_territory_scoring_chills_a_point_per_stone_played() -> None:
    # Under territory scoring White sees the komi plus one point per extra black stone.
    state = game(rules="japanese", komi=6.5, moves="b D4")
    assert encode(state)[1][5] == pytest.approx((6.5 + 1) / 20)
    even = game(rules="japanese", komi=6.5, moves="b D4 w E5")
    assert encode(even)[1][5] == pytest.approx(-6.5 / 20)
    assert encode(game(rules="chinese", komi=6.5, moves="b D4"))[1][5] == pytest.approx(6.5 / 20)


def test_area_planes_under_area_scoring_only() -> None:
    # A black wall on column C owns columns A-B; the other regions touch both colours.
    moves = " ".join(f"b C{r} w E{r}" for r in range(1, 10))
    state = game(size=9, moves=moves)  # black to move
    owned = plane(state, 18).reshape(9, 9)
    assert owned[:, :3].all() and not owned[:, 3:].any()
    assert plane(state, 19).reshape(9, 9)[:, 4:].all()  # white wall E and everything right of it
    territory = game(size=9, rules="japanese", moves=moves)
    assert not plane(territory, 18).any() and not plane(territory, 19).any()


def test_ladder_planes() -> None:
    # White C3 with liberties C4 and D3 next to black B3, C2, D4: Black captures it in a ladder
    # by playing either liberty first (the board is otherwise empty).
    ladder = game(rules="tromp-taylor", moves="b B3 w C3 b C2 w pass b D4")
    assert ladder.to_play == Color.WHITE
    assert points(ladder, 14) == {"C3"}
    assert not plane(ladder, 17).any()  # working moves are for the side to move against opp chains
    black_view = game(rules="tromp-taylor", moves="b B3 w C3 b C2 w pass b D4 w pass")
    assert points(black_view, 14) == {"C3"}
    assert points(black_view, 17) == {"C4", "D3"}
    # One move ago the board had the same ladder; two moves ago (before D4) C3 could run away.
    assert points(black_view, 15) == {"C3"}
    assert not plane(black_view, 16).any()


def test_place_puts_the_board_top_left_of_the_net_buffer() -> None:
    spatial, _ = encode(game(size=9))
    buffer = features.place(spatial, 19)
    assert buffer.shape == (22, 19, 19)
    assert buffer[0, :9, :9].all() and buffer[0].sum() == 81
    with pytest.raises(ValueError):
        features.place(encode(game(size=19))[0], 13)


def test_input_key_identifies_equal_net_inputs() -> None:
    last_five = "b E5 w F6 b G7 w H8 b J9"
    a = game(moves="b C3 w D4 b A1 w A2 " + last_five)
    b = game(moves="b A1 w A2 b C3 w D4 " + last_five)  # same last five moves, other order before
    c = game(moves="b C3 w D4 b A1 w A2 b G7 w H8 b E5 w F6 b J9")  # same stones, other history
    assert features.input_key(a) == features.input_key(b)
    assert np.array_equal(encode(a)[0], encode(b)[0])
    assert features.input_key(a) != features.input_key(c)
    komi = game(komi=6.5, moves="b C3 w D4 b A1 w A2 " + last_five)
    assert features.input_key(a) != features.input_key(komi)


def test_situation_key_ignores_how_the_position_was_reached() -> None:
    """KataGo's NN cache key (NNInputs::getHash): the same stones, player, ko state, rules, komi and pass state share
    an entry whatever the move order; anything else that changes the situation does not."""
    a = game(moves="b C3 w D4 b A1 w A2 b E5 w F6 b G7 w H8 b J9")
    c = game(moves="b C3 w D4 b A1 w A2 b G7 w H8 b E5 w F6 b J9")  # other history, same situation
    assert features.situation_key(a) == features.situation_key(c) and features.input_key(a) != features.input_key(c)
    moves = "b C3 w D4 b A1 w A2 b E5 w F6 b G7 w H8 b J9"
    assert features.situation_key(a) != features.situation_key(game(komi=6.5, moves=moves))
    assert features.situation_key(a) != features.situation_key(game(rules="japanese", moves=moves))
    passed = game(rules="tromp-taylor", moves="b C3 w D4 b pass")  # White to move: a pass would end the game
    played = game(rules="tromp-taylor", moves="b pass w D4 b C3")  # the same stones and player, no pass just now
    assert passed.pass_ends_game() and not played.pass_ends_game()
    assert features.situation_key(passed) != features.situation_key(played)
    assert features.situation_key(game(size=9)) != features.situation_key(game(size=13))
    assert set(features.CACHE_KEYS) == {"situation", "input"}


def test_a_pass_marks_no_point() -> None:
    spatial, global_ = encode(game(rules="tromp-taylor", moves="b pass"))
    assert not spatial[9].any() and global_[0] == 1.0


def random_game(size: int, moves: int, seed: int, rules: str = "tromp-taylor") -> GameState:
    import random

    rng = random.Random(seed)
    state = GameState(size=size, rules=Rules.preset(rules), komi=7.5)
    for _ in range(moves):
        legal = state.legal_moves()
        state.push(rng.choice(legal) if legal and rng.random() > 0.05 else PASS)
        if state.is_over():
            break
    return state


@pytest.mark.parametrize("seed", range(12))
def test_features_are_equivariant_under_the_board_symmetries(seed: int) -> None:
    from miai.nets import symmetry

    size = 7 if seed % 2 else 9
    state = random_game(size, 25 + 5 * seed, seed, rules=("tromp-taylor", "chinese", "japanese")[seed % 3])
    spatial, global_ = encode(state)
    for sym in range(1, 8):
        moved = GameState(size=size, rules=state.rules, komi=state.komi)
        for color, move in state.moves:
            moved.push(symmetry.map_point(move, size, sym), color)
        spatial2, global2 = encode(moved)
        assert np.array_equal(global2, global_)
        assert np.array_equal(spatial2, symmetry.apply_planes(spatial, sym)), f"symmetry {sym}"


def test_passing_hacks_hide_a_game_end_that_would_not_be_a_win() -> None:
    """KataGo's enablePassingHacks (nninputs.cpp, finalPhaseAndGameEndWouldNotBeWin): when a pass would end the game
    and the area of planes 18-19 plus komi leaves the side to move at or below 0, the net sees no history and no
    "a pass ends the game" flag, as for a friendly pass. Black to move here owns the whole board by area (81)."""
    losing = game(rules="tromp-taylor", komi=90.0, moves="b D4 w pass")  # 81 - 90 < 0
    plain_spatial, plain_global = encode(losing)
    assert plain_global[14] == 1.0 and plain_global[0] == 1.0 and plain_spatial[10].any()
    spatial, global_ = encode(losing, passing_hacks=True)
    assert global_[14] == 0.0 and not global_[:5].any() and not spatial[9:14].any()
    assert (spatial[18] == plain_spatial[18]).all() and spatial[18].sum() == 81
    even = game(rules="tromp-taylor", komi=81.0, moves="b D4 w pass")  # exactly 0: not a win either
    assert encode(even, passing_hacks=True)[1][14] == 0.0
    winning = game(rules="tromp-taylor", komi=7.5, moves="b D4 w pass")
    for a, b in zip(encode(winning), encode(winning, passing_hacks=True)):
        assert (a == b).all()
    territory = game(rules="japanese", komi=90.0, moves="b D4 w pass")  # no area planes, so nothing is hidden
    for a, b in zip(encode(territory), encode(territory, passing_hacks=True)):
        assert (a == b).all()


def test_a_conservative_root_hides_a_game_end_under_area_scoring() -> None:
    """KataGo's conservativePassAndIsRoot (nninputs.cpp): at a search's root whose pass would end the game (area
    scoring: passWouldEndGame), the net sees no history and no "a pass ends the game" flag, win or not; a pass that
    only ends a phase (territory scoring) and a root no pass can end are shown as they are."""
    winning = game(rules="tromp-taylor", komi=7.5, moves="b D4 w pass")
    plain_spatial, plain_global = encode(winning)
    assert plain_global[14] == 1.0 and plain_spatial[9:14].any()
    spatial, global_ = encode(winning, conservative_root=True)
    assert global_[14] == 0.0 and not global_[:5].any() and not spatial[9:14].any()
    for quiet in (game(rules="japanese", komi=6.5, moves="b D4 w pass"), game(rules="tromp-taylor", moves="b D4 w E5")):
        for a, b in zip(encode(quiet), encode(quiet, conservative_root=True)):
            assert (a == b).all()


def test_passing_hacks_count_the_group_tax_under_all_tax_area_rules() -> None:
    # Area scoring with an "all" tax and no friendly pass: Black's one independent region costs it two points.
    rules = '{"ko":"SIMPLE","scoring":"AREA","tax":"ALL","suicide":false,"hasButton":false,"friendlyPassOk":false}'
    state = GameState(size=9, rules=Rules.parse(rules), komi=80.0)
    state.push(parse_gtp("D4", 9), Color.BLACK)
    state.push(PASS, Color.WHITE)
    assert encode(state)[1][14] == 1.0
    assert encode(state, passing_hacks=True)[1][14] == 0.0  # 81 - 2 - 80 < 0
    state.komi = 78.5
    assert encode(state, passing_hacks=True)[1][14] == 1.0  # 81 - 2 - 78.5 > 0


def test_the_playout_doubling_advantage_fills_globals_15_and_16() -> None:
    """fillRowV7: plane 15 flags any nonzero advantage, plane 16 holds half of it (the side to move's)."""
    state = game()
    assert encode(state)[1][15:17].tolist() == [0.0, 0.0]
    assert encode(state, playout_advantage=1.5)[1][15:17].tolist() == [1.0, 0.75]
    assert encode(state, playout_advantage=-0.125)[1][15:17].tolist() == [1.0, -0.0625]
