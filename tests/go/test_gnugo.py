"""Cross-check of miai's rules against GNU Go 3.8: random games on several board sizes where, at every move,
both agree on the legal moves of the player to move (``all_legal``) and on the stones (``list_stones``).

GNU Go plays simple ko and forbids suicide, so miai runs the "chinese" preset (simple ko, no suicide)."""

from __future__ import annotations

import random
from pathlib import Path
from dataclasses import replace

import pytest

from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.rules import KoRule, Rules
from miai.go.state import GameState
from .gnugo_client import GNUGO, GtpClient, gnugo

pytestmark = [
    pytest.mark.slow,
    pytest.mark.gnugo,
    pytest.mark.skipif(not GNUGO.exists(), reason=f"GNU Go not installed at {GNUGO} (apt-get install gnugo)"),
]

NAMES = {Color.BLACK: "black", Color.WHITE: "white"}


def vertices(text: str, size: int) -> set[int]:
    return {parse_gtp(v, size) for v in text.split()}


def assert_same_position(engine: GtpClient, state: GameState, context: str) -> None:
    stones = state.stones()
    for color, name in NAMES.items():
        expected = {p for p in range(state.size * state.size) if stones[p] == color}
        assert vertices(engine.send(f"list_stones {name}"), state.size) == expected, f"{name} stones, {context}"
        assert int(engine.send(f"captures {name}")) == state.captures(color), f"{name} captures, {context}"
    mover = state.to_play
    ours = set(state.legal_moves(mover))
    theirs = vertices(engine.send(f"all_legal {NAMES[mover]}"), state.size)
    assert ours == theirs, f"legal moves of {NAMES[mover]}, {context}: only miai {ours - theirs}, only GNU Go {theirs - ours}"


def play_random_game(
    engine: GtpClient, size: int, rng: random.Random, max_moves: int, rules: Rules | None = None
) -> tuple[int, int, int]:
    """Play one random game on both sides; returns (moves played, positions with ko bans, suicides played)."""
    engine.send(f"boardsize {size}")
    engine.send("clear_board")
    state = GameState(size=size, rules=rules or Rules.preset("chinese"), komi=7.5)
    ko_bans = suicides = 0
    for number in range(max_moves):
        assert_same_position(engine, state, f"{size}x{size} before move {number + 1}")
        legal = state.legal_moves()
        ko_bans += bool(state.banned_points())
        move = rng.choice(legal) if legal and rng.random() > 0.03 else PASS
        color = state.to_play
        state.push(move, color)
        suicides += move != PASS and state.color_at(move) != color
        engine.send(f"play {NAMES[color]} {to_gtp(move, size)}")
        if state.is_over():
            break
    assert_same_position(engine, state, f"{size}x{size} at the end")
    return len(state.moves), ko_bans, suicides


@pytest.mark.timeout(120)
def test_random_games_agree_with_gnugo() -> None:
    rng = random.Random(38)
    plan = [(5, 12, 250), (7, 8, 300), (9, 5, 300), (13, 3, 350), (19, 2, 450)]
    total_moves = total_bans = 0
    with gnugo() as engine:
        for size, games, max_moves in plan:
            for _ in range(games):
                moves, bans, _ = play_random_game(engine, size, rng, max_moves)
                total_moves += moves
                total_bans += bans
    assert total_moves > 4000
    assert total_bans > 0  # the games did reach simple-ko bans, so ko handling was compared too


CHINESE = Rules.preset("chinese")
VARIANTS = [
    ("--allow-suicide", replace(CHINESE, multi_stone_suicide=True)),
    ("--positional-superko", replace(CHINESE, ko=KoRule.POSITIONAL)),
    ("--situational-superko", replace(CHINESE, ko=KoRule.SITUATIONAL)),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("flag", "rules"), VARIANTS, ids=[flag for flag, _ in VARIANTS])
def test_rule_variants_agree_with_gnugo(flag: str, rules: Rules) -> None:
    """Beyond the required comparison: GNU Go's multi-stone suicide and superko options against miai's."""
    rng = random.Random(flag)
    total_moves = total_suicides = 0
    with gnugo(flag) as engine:
        for size in (5, 5, 5, 5, 7, 7):
            moves, _, suicides = play_random_game(engine, size, rng, 250, rules)
            total_moves += moves
            total_suicides += suicides
    assert total_moves > 500
    if rules.multi_stone_suicide:
        assert total_suicides > 0  # multi-stone suicides were actually played and compared


SEKI_EYE = Path(__file__).parent / "data" / "seki_eye.sgf"  # game 52 of the server soak (docs/gtp.md, "Soak")


def test_gnu_go_does_not_count_an_eye_in_seki_under_chinese_rules() -> None:
    """The one way miai's and GNU Go's scores part under Chinese rules: on this final board a black group in seki
    has one eye. miai counts it for Black (KataGo's chinese, as Chinese rules); GNU Go 3.8 does not, even with
    --chinese-rules, and its answer is miai's count with the seki tax."""
    from miai.go.rules import Tax
    from miai.go.scoring import area
    from miai.go.sgf import load_sgf

    state = load_sgf(SEKI_EYE.read_text(encoding="utf-8"), source=str(SEKI_EYE)).to_state(None)
    colors = [int(c) for c in state.stones()]
    black, white = area(colors, state.size)
    taxed_black, taxed_white = area(colors, state.size, Tax.SEKI)
    assert (black - taxed_black, white - taxed_white) == (1, 0)  # one black eye in seki
    assert state.result_string(state.score([])) == "W+32.5"
    with gnugo() as engine:
        engine.send(f"loadsgf {SEKI_EYE}")
        assert engine.send("final_status_list dead") == ""
        assert engine.send("final_status_list seki") != ""
        assert engine.send("final_score") == "W+33.5"
