"""The two analysis front ends over one search: kata-genmove_analyze (GTP) and the JSON analysis engine report the same
moves, visits, weights and PVs for the same position and request, and both keep avoid/allow for as many plies as
their untilDepth says (KataGo's avoidMoveUntilByLoc).

The net is miai's bundled 9x9 one with a fixed symmetry (tests/analysis/helpers.py), so that two searches of one
position under one config agree visit for visit.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from miai.engine.config import Config
from miai.engine.player import EnginePlayer
from miai.go.coords import Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.gtp.analysis import format_snapshot, parse_analyze_args
from miai.gtp.player import AnalysisSnapshot

from .helpers import default_net, finals, query, serve, settings

MOVES = [["B", "E5"], ["W", "C4"], ["B", "F3"], ["W", "D6"]]  # no symmetry left: no copies to line up
VISITS = 60


def _json(**fields: Any) -> dict[str, Any]:
    """The JSON engine's final analysis of MOVES (Black to move), seeded like the GTP player below."""
    chosen = settings()
    search = dataclasses.replace(chosen.config.search, seed=7)
    chosen = dataclasses.replace(chosen, config=dataclasses.replace(chosen.config, search=search))
    (result,) = finals(serve([query(moves=MOVES, komi=7, rules="chinese", maxVisits=VISITS, **fields)],
                             config=chosen))
    return result


def _gtp(command_args: str) -> list[dict[str, Any]]:
    """kata-genmove_analyze's last info line for MOVES, with the JSON engine's search config, parsed into one dict
    per move (``pv`` a list of vertices)."""
    chosen = settings()
    search = dataclasses.replace(chosen.config.search, seed=7, max_visits=VISITS, max_playouts=0, max_time=0.0,
                                 pv_length=min(100, chosen.pv_len + 1), wide_root_noise=chosen.wide_root_noise)
    player = EnginePlayer(default_net(), dataclasses.replace(Config(), search=search))
    state = GameState(9, Rules.preset("chinese"), 7.0)
    for color, vertex in MOVES:
        state.push(parse_gtp(vertex, 9), Color.BLACK if color == "B" else Color.WHITE)
    color, request = parse_analyze_args(command_args.split(), 9, state.to_play)
    shown: list[AnalysisSnapshot] = []
    player.genmove(state, color, analysis=request, emit=shown.append)
    return _parse_info(format_snapshot(shown[-1], 9, "kata", request))


def _parse_info(line: str) -> list[dict[str, Any]]:
    """kata-analyze's ``info move ... pv ...`` segments as dicts."""
    moves = []
    for segment in line.split("info ")[1:]:
        tokens = segment.split()
        pv_at = tokens.index("pv")
        fields: dict[str, Any] = dict(zip(tokens[:pv_at:2], tokens[1:pv_at:2]))
        fields["pv"] = tokens[pv_at + 1:]
        moves.append(fields)
    return moves


def test_kata_analyze_and_the_json_engine_report_the_same_search() -> None:
    gtp = _gtp("b interval 1000")
    json = _json()["moveInfos"]
    assert len(gtp) == len(json) >= 3
    for text, info in zip(gtp, json):
        assert text["move"] == info["move"]
        assert int(text["visits"]) == info["visits"] and int(text["edgeVisits"]) == info["edgeVisits"]
        assert float(text["weight"]) == round(info["weight"], 6)  # one meaning: KataGo's childWeightSum
        assert float(text["winrate"]) == round(info["winrate"], 6)
        assert text["pv"] == info["pv"]


def _at_depths(infos: list[dict[str, Any]], depths: tuple[int, ...]) -> Counter[str]:
    """How often each vertex is played at these plies from the root, over every reported PV."""
    return Counter(pv[d] for pv in (info["pv"] for info in infos) for d in depths if d < len(pv))


def test_until_depth_keeps_moves_out_for_that_many_plies_in_both_front_ends() -> None:
    free = _json()["moveInfos"]
    # White's favourite replies (depth 1) and Black's favourite moves at depth 2: what the avoid must take away.
    white = [vertex for vertex, _ in _at_depths(free, (1,)).most_common(2) if vertex != "pass"]
    black = [vertex for vertex, _ in _at_depths(free, (2,)).most_common(1) if vertex != "pass"]
    assert white and black
    avoid = [{"player": "W", "moves": white, "untilDepth": 2}, {"player": "B", "moves": black, "untilDepth": 3}]
    restricted_json = _json(avoidMoves=avoid)["moveInfos"]
    restricted_gtp = _gtp(f"b interval 1000 avoid w {','.join(white)} 2 avoid b {','.join(black)} 3")
    for infos in (restricted_json, restricted_gtp):
        assert infos
        assert not set(_at_depths(infos, (1,))) & set(white)
        assert not set(_at_depths(infos, (0, 2))) & set(black)
    # The same restriction in both front ends is the same search.
    assert [(m["move"], m["pv"]) for m in restricted_gtp] == [(m["move"], m["pv"]) for m in restricted_json]


def test_allow_until_depth_one_restricts_the_root_only() -> None:
    allowed = ["D4", "G5"]
    infos = _json(allowMoves=[{"player": "B", "moves": allowed, "untilDepth": 1}])["moveInfos"]
    assert {m["move"] for m in infos} <= set(allowed)
    assert any(len(m["pv"]) > 2 and m["pv"][2] not in allowed for m in infos)  # Black's later moves are free
    gtp = _gtp(f"b interval 1000 allow b {','.join(allowed)} 1")
    assert [(m["move"], m["pv"]) for m in gtp] == [(m["move"], m["pv"]) for m in infos]
