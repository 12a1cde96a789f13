"""miai's GTP player searches a game as KataGo's does: the tree kept from move to move, the same visits each move.

tests/engine/data/katago_games_b6.jsonl holds two 9x9 games (Chinese rules, komi 7) that KataGo 1.17.2 played
against itself with g170 b6c96, 400 visits a move, one search thread and ``nnRandomize = false``, recording each
move's root edge visits (tests/tools/gen_game_reference.py). miai's ``EnginePlayer`` replays them through
``genmove``, deterministic as KataGo was (one leaf per batch, symmetry 0), with its tree, evaluation cache,
subtree value bias table and game values kept from move to move as in a real game: each search must spend its
visits as KataGo's did. (tests/engine/test_katago_parity.py checks single searches from scratch; this checks what
a game adds: tree reuse, the revaluation at each new root and the player's own state. It found the evaluation
cache being emptied at every genmove, and a kept root keeping its subtree value bias entry, which KataGo's makeMove
drops.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from miai.engine.cli.compose import build_evaluator
from miai.engine.config import Config, set_option
from miai.engine.player import EnginePlayer
from miai.go.coords import parse_color, parse_gtp, to_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from tests.engine.katago_search import DETERMINISTIC
from tests.outside import needs_shared, shared

NET = "nets/g170-b6c96-s175395328-d26788732.bin.gz"
DATA = Path(__file__).parent / "data" / "katago_games_b6.jsonl"

pytestmark = [pytest.mark.slow, needs_shared(NET)]


def _games() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def _player(visits: int) -> EnginePlayer:
    config = Config()
    for item in (*DETERMINISTIC, f"search.max_visits={visits}", "search.max_time=0", "player.resign_threshold=0"):
        key, value = item.split("=", 1)
        config = set_option(config, key, value)
    return EnginePlayer(build_evaluator(str(shared(NET)), config, progress=False), config)


@pytest.mark.parametrize("game", _games(), ids=lambda g: str(g["id"]))
def test_each_move_of_a_katago_game_is_searched_as_katago_searched_it(game: dict[str, Any]) -> None:
    size = int(game["size"])
    state = GameState(size=size, rules=Rules.parse(game["rules"]), komi=float(game["komi"]))
    for i, vertex in enumerate(game["opening"]):
        state.push(parse_gtp(vertex, size), parse_color("b" if i % 2 == 0 else "w"))
    player = _player(int(game["visits"]))
    for number, turn in enumerate(game["turns"]):
        color = parse_color(turn["color"])
        assert state.to_play == color
        move = player.genmove(state, color)
        root = player.search.root
        assert root is not None
        mine = {to_gtp(e.move, size).upper(): e.visits for e in root.edges if e.visits}
        theirs = {m: n for m, n in turn["edge_visits"].items() if n}
        assert mine == theirs, f"turn {number} ({turn['color']} {turn['move']})"
        assert to_gtp(move, size).upper() == turn["move"], f"turn {number}"
        state.push(parse_gtp(turn["move"], size), color)
