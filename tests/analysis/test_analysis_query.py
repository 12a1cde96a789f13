"""Reading queries of KataGo's analysis protocol (docs/Analysis_Engine.md, v1.17.2) into positions."""

from __future__ import annotations

from typing import Any

import pytest

from miai.engine.analysis.query import QueryError, parse_query, parse_rules, parse_vertex
from miai.go.coords import PASS, Color, parse_gtp
from miai.go.rules import KoRule, Rules, Scoring, Tax

from .helpers import query, settings


def jobs(**fields: Any):  # type: ignore[no-untyped-def]
    return parse_query(query(**fields), settings()).jobs


def error(**fields: Any) -> QueryError:
    with pytest.raises(QueryError) as info:
        parse_query(query(**fields), settings())
    return info.value


def test_the_documented_example_query_gives_three_turns_of_a_handicap_game() -> None:
    doc = {"id": "foo", "initialStones": [["B", "Q4"], ["B", "C4"]], "moves": [["W", "P5"], ["B", "P6"]],
           "rules": "tromp-taylor", "komi": 7.5, "boardXSize": 19, "boardYSize": 19, "analyzeTurns": [0, 1, 2]}
    parsed = parse_query(doc, settings())
    assert [j.turn for j in parsed.jobs] == [0, 1, 2]
    first, _, last = parsed.jobs
    assert first.state.to_play == Color.WHITE and first.state.handicap == 2
    assert last.state.to_play == Color.WHITE and len(last.state.moves) == 2
    assert last.state.color_at(parse_gtp("P6", 19)) == Color.BLACK
    assert parsed.warnings == []


def test_default_turn_is_the_last_and_moves_may_repeat_a_colour_and_pass() -> None:
    (job,) = jobs(moves=[["B", "E5"], ["B", "D4"], ["W", "pass"]])
    assert job.turn == 3 and job.state.to_play == Color.BLACK
    assert job.state.moves[-1] == (Color.WHITE, PASS)


def test_initial_player_decides_turn_zero() -> None:
    (job,) = jobs(initialPlayer="W")
    assert job.state.to_play == Color.WHITE
    assert "initialPlayer" == error(initialPlayer="X").field


def test_rules_accept_katago_and_katrain_spellings_and_objects() -> None:
    assert parse_rules("new zealand") == (Rules.preset("new-zealand"), 7.0)
    assert parse_rules("stone_scoring")[0] == Rules.preset("stone-scoring")
    assert parse_rules("Japanese") == (Rules.preset("japanese"), 6.5)
    rules, komi = parse_rules({"ko": "SIMPLE", "scoring": "TERRITORY", "tax": "SEKI", "suicide": False})
    assert (rules.ko, rules.scoring, rules.tax, komi) == (KoRule.SIMPLE, Scoring.TERRITORY, Tax.SEKI, 6.5)
    assert parse_rules('{"ko":"POSITIONAL","scoring":"AREA","komi":5.5}')[1] == 5.5
    assert error(rules="go-moku").field == "rules"
    assert error(rules=7).field == "rules"


def test_komi_and_handicap_bonus() -> None:
    (job,) = jobs(komi=-3.5, rules="chinese", whiteHandicapBonus="0")
    assert job.state.komi == -3.5 and job.state.rules.white_handicap_bonus == "0"
    assert error(komi=7.25).field == "komi"
    assert error(komi=401).field == "komi"
    assert error(whiteHandicapBonus="N+1").field == "whiteHandicapBonus"


def test_missing_komi_is_katagos_guess_for_the_rules() -> None:
    data = query(rules="japanese")
    del data["komi"]
    assert parse_query(data, settings()).jobs[0].state.komi == 6.5


@pytest.mark.parametrize("fields, field", [
    ({"boardXSize": 26}, "boardXSize"),
    ({"boardYSize": 1}, "boardYSize"),
    ({"boardXSize": 9, "boardYSize": 7}, "boardYSize"),  # miai's rules core is square-only
    ({"moves": [["B", "Z9"]]}, "moves"),
    ({"moves": [["B"]]}, "moves"),
    ({"moves": "D4"}, "moves"),
    ({"initialStones": [["B", "pass"]]}, "initialStones"),
    ({"analyzeTurns": [5]}, "analyzeTurns"),
    ({"analyzeTurns": "0"}, "analyzeTurns"),
    ({"priorities": [1]}, "priorities"),
    ({"analyzeTurns": [0], "priorities": [1, 2]}, "priorities"),
    ({"analyzeTurns": [0], "priorities": [1], "priority": 2}, "priority"),
    ({"priority": 1.5}, "priority"),
    ({"maxVisits": 0}, "maxVisits"),
    ({"includeOwnership": "yes"}, "includeOwnership"),
    ({"reportDuringSearchEvery": 0}, "reportDuringSearchEvery"),
    ({"overrideSettings": []}, "overrideSettings"),
    ({"overrideSettings": {"maxTime": -1}}, "overrideSettings"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "RED"}}, "overrideSettings"),
    ({"avoidMoves": [{"player": "B", "moves": ["D4"]}]}, "avoidMoves"),
    ({"avoidMoves": [], "allowMoves": []}, "allowMoves"),
    ({"allowMoves": [{"player": "B", "moves": ["D4"], "untilDepth": 1},
                     {"player": "B", "moves": ["E5"], "untilDepth": 1}]}, "allowMoves"),
])
def test_bad_fields_are_errors_naming_the_field(fields: dict[str, Any], field: str) -> None:
    assert error(**fields).field == field


def test_missing_required_fields() -> None:
    for key in ("moves", "rules", "boardXSize", "boardYSize"):
        data = query()
        del data[key]
        with pytest.raises(QueryError) as info:
            parse_query(data, settings())
        assert info.value.field == key


def test_an_illegal_move_is_named_as_katago_names_it() -> None:
    failure = error(moves=[["B", "D4"], ["W", "D4"]])
    assert (failure.field, str(failure)) == ("moves", "Illegal move 1: D4")


def test_a_ko_violation_in_the_record_is_tolerated_like_katago() -> None:
    # Black captures at E5; White retakes the ko at once (illegal), which a game record may contain.
    setup = [["B", "D5"], ["B", "E6"], ["B", "E4"], ["W", "F6"], ["W", "F4"], ["W", "G5"], ["W", "E5"]]
    before, after = jobs(initialStones=setup, moves=[["B", "F5"], ["W", "E5"]], analyzeTurns=[1, 2])
    assert not before.state.is_legal(parse_gtp("E5", 9))  # the retake breaks the ko rule...
    assert after.state.color_at(parse_gtp("E5", 9)) == Color.WHITE  # ...and is played all the same


def test_several_turns_keep_their_own_priorities() -> None:
    parsed = jobs(moves=[["B", "E5"], ["W", "C3"]], analyzeTurns=[2, 0, 1], priorities=[5, 7, 6])
    assert [(j.turn, j.priority) for j in parsed] == [(0, 7), (1, 6), (2, 5)]
    assert [len(j.state.moves) for j in parsed] == [0, 1, 2]


def test_flags_settings_and_filters_reach_the_job() -> None:
    (job,) = jobs(includeOwnership=True, includePolicy=True, includePVVisits=True, includeMovesOwnership=True,
                  includeOwnershipStdev=True, maxVisits=77, analysisPVLen=4, rootFpuReductionMax=0.0,
                  reportDuringSearchEvery=0.5, avoidMoves=[{"player": "B", "moves": ["E5", "pass"], "untilDepth": 1}],
                  overrideSettings={"maxTime": 2.5, "reportAnalysisWinratesAs": "black", "wideRootNoise": 0.04,
                                    "rootPolicyTemperature": 2})
    flags = job.request
    assert flags.ownership and flags.policy and flags.pv_visits and flags.moves_ownership and flags.ownership_stdev
    search = job.settings.config.search
    assert (search.max_visits, search.max_time, search.root_fpu_reduction) == (77, 2.5, 0.0)
    assert (job.settings.perspective, job.settings.pv_len) == ("BLACK", 4)
    assert (job.settings.wide_root_noise, job.settings.root_policy_temperature) == (0.04, 2.0)
    assert job.request.interval == 0.5
    assert job.request.avoid[0].moves == (parse_gtp("E5", 9), PASS) and job.request.allow == ()


def test_top_level_fields_win_over_override_settings() -> None:
    (job,) = jobs(maxVisits=10, overrideSettings={"maxVisits": 500})
    assert job.settings.config.search.max_visits == 10


def test_unknown_fields_and_settings_are_warnings_not_errors() -> None:
    parsed = parse_query(query(foo=1, overrideSettings={"bar": 1, "antiMirror": True,
                                                         "playoutDoublingAdvantage": 1.0}), settings())
    assert len(parsed.jobs) == 1
    fields = [f for f, _ in parsed.warnings]
    texts = " | ".join(t for _, t in parsed.warnings)
    assert fields.count("overrideSettings") == 2 and "foo" in fields
    assert "Unknown config params: bar" in texts
    assert "antiMirror,playoutDoublingAdvantage" in texts


def test_no_result_value_is_not_invented() -> None:
    parsed = parse_query(query(includeNoResultValue=True), settings())
    assert [f for f, _ in parsed.warnings] == ["includeNoResultValue"]


def test_deep_avoid_moves_reach_the_request_without_a_warning() -> None:
    """untilDepth is honoured (the search keeps the moves out for that many plies), so nothing is warned of."""
    parsed = parse_query(query(avoidMoves=[{"player": "W", "moves": ["C3"], "untilDepth": 3}]), settings())
    assert parsed.warnings == []
    assert parsed.jobs[0].request.avoided_until(Color.WHITE, 9) == {parse_gtp("C3", 9): 3}


def test_vertices_in_gtp_and_katago_xy_form() -> None:
    assert parse_vertex("(0,0)", 9, allow_pass=False) == 0
    assert parse_vertex("(8,1)", 9, allow_pass=False) == 17
    assert parse_vertex("pass", 9, allow_pass=True) == PASS
    with pytest.raises(ValueError):
        parse_vertex("pass", 9, allow_pass=False)
    with pytest.raises(ValueError):
        parse_vertex("(9,0)", 9, allow_pass=False)
