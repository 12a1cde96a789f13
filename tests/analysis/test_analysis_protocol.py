"""The analysis engine end to end in-process: every response field of KataGo's analysis protocol (v1.17.2), on
miai's bundled net, compared with what KataGo's docs/Analysis_Engine.md documents."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from miai.engine.analysis.server import AnalysisServer
from miai.engine.analysis.settings import ANALYSIS_MAX_VISITS
from miai.nets import UniformEvaluator

from .helpers import default_net, finals, only, query, serve, settings

# Fields of the documented example response (docs/Analysis_Engine.md) and of the field list below it.
DOC_MOVE_FIELDS = {"lcb", "move", "order", "prior", "pv", "scoreLead", "scoreMean", "scoreSelfplay", "scoreStdev",
                   "utility", "utilityLcb", "visits", "edgeVisits", "winrate", "weight", "edgeWeight",
                   "playSelectionValue"}
DOC_ROOT_FIELDS = {"currentPlayer", "scoreLead", "scoreSelfplay", "scoreStdev", "symHash", "thisHash", "utility",
                   "visits", "winrate", "rawWinrate", "rawLead", "rawScoreSelfplay", "rawScoreSelfplayStdev",
                   "rawNoResultProb", "rawStWrError", "rawStScoreError", "rawVarTimeLeft"}


@pytest.mark.slow
def test_the_documented_example_gets_three_complete_responses() -> None:
    doc = {"id": "foo", "initialStones": [["B", "Q4"], ["B", "C4"]], "moves": [["W", "P5"], ["B", "P6"]],
           "rules": "tromp-taylor", "komi": 7.5, "boardXSize": 19, "boardYSize": 19, "analyzeTurns": [0, 1, 2],
           "maxVisits": 12}
    results = finals(serve([doc]), "foo")
    assert sorted(r["turnNumber"] for r in results) == [0, 1, 2]
    for result in results:
        assert result["isDuringSearch"] is False
        assert result["rootInfo"]["visits"] == 12
        assert DOC_ROOT_FIELDS <= set(result["rootInfo"])
        for info in result["moveInfos"]:
            assert DOC_MOVE_FIELDS <= set(info)
        assert [m["order"] for m in result["moveInfos"]] == list(range(len(result["moveInfos"])))
        # every root visit but the root's own evaluation went down one of the reported moves
        assert sum(m["edgeVisits"] for m in result["moveInfos"]) == 11
        # order 0 is the move with the highest play selection value, as in KataGo
        assert result["moveInfos"][0]["playSelectionValue"] == max(m["playSelectionValue"] for m in result["moveInfos"])
    assert [r["rootInfo"]["currentPlayer"] for r in sorted(results, key=lambda r: r["turnNumber"])] == ["W", "B", "W"]


def test_numbers_follow_report_analysis_winrates_as() -> None:
    base = query(moves=[["B", "E5"]], includeOwnership=True, maxVisits=30)  # White to move
    lines = [dict(base, id=view, overrideSettings={"reportAnalysisWinratesAs": view})
             for view in ("BLACK", "WHITE", "SIDETOMOVE")]
    got = {r["id"]: r for r in serve(lines) if "moveInfos" in r}
    black, white, mover = got["BLACK"], got["WHITE"], got["SIDETOMOVE"]
    assert white["rootInfo"] == mover["rootInfo"] and white["moveInfos"] == mover["moveInfos"]
    assert black["rootInfo"]["winrate"] == pytest.approx(1 - white["rootInfo"]["winrate"], abs=1e-7)
    assert black["rootInfo"]["scoreLead"] == pytest.approx(-white["rootInfo"]["scoreLead"], abs=1e-6)
    assert black["rootInfo"]["rawWinrate"] == pytest.approx(1 - white["rootInfo"]["rawWinrate"], abs=1e-7)
    for b, w in zip(black["moveInfos"], white["moveInfos"]):
        assert b["move"] == w["move"]
        assert b["winrate"] == pytest.approx(1 - w["winrate"], abs=1e-7)
        assert b["lcb"] == pytest.approx(1 - w["lcb"], abs=1e-7)
        assert b["utility"] == pytest.approx(-w["utility"], abs=1e-7)
    assert black["ownership"] == [pytest.approx(-x, abs=2e-6) for x in white["ownership"]]
    # Black's stone at E5 belongs to Black: positive from Black's view
    assert black["ownership"][4 * 9 + 4] > 0.2


def test_policy_ownership_stdev_and_moves_ownership() -> None:
    (result,) = finals(serve([query(moves=[["B", "E5"], ["W", "C3"]], includePolicy=True, includeOwnership=True,
                                    includeOwnershipStdev=True, includeMovesOwnership=True,
                                    includeMovesOwnershipStdev=True)]))
    policy = result["policy"]
    assert len(policy) == 82  # 81 points in rows from the top, then pass
    assert policy[4 * 9 + 4] == -1 and policy[6 * 9 + 2] == -1  # E5 and C3 are occupied
    assert sum(p for p in policy if p >= 0) == pytest.approx(1.0, abs=1e-4)
    assert len(result["ownership"]) == len(result["ownershipStdev"]) == 81
    assert all(-1 <= x <= 1 for x in result["ownership"]) and all(0 <= x <= 1 for x in result["ownershipStdev"])
    assert max(result["ownershipStdev"]) > 0  # 20 visits disagree somewhere
    for info in result["moveInfos"]:
        assert len(info["ownership"]) == len(info["ownershipStdev"]) == 81


def test_pv_visits_and_pv_length() -> None:
    (result,) = finals(serve([query(includePVVisits=True, analysisPVLen=2, maxVisits=60)]))
    for info in result["moveInfos"]:
        assert 1 <= len(info["pv"]) <= 3
        assert len(info["pvVisits"]) == len(info["pvEdgeVisits"]) == len(info["pv"])
        assert info["pvVisits"][0] == info["visits"] and info["pvEdgeVisits"][0] == info["edgeVisits"]
        assert info["pvEdgeVisits"] == sorted(info["pvEdgeVisits"], reverse=True)
    assert "pvVisits" not in finals(serve([query()]))[0]["moveInfos"][0]


def test_avoid_and_allow_moves_at_the_root() -> None:
    avoided = ["E5", "D5", "E4", "pass"]
    (result,) = finals(serve([query(avoidMoves=[{"player": "B", "moves": avoided, "untilDepth": 1}])]))
    assert result["moveInfos"] and not {m["move"] for m in result["moveInfos"]} & set(avoided)
    (result,) = finals(serve([query(allowMoves=[{"player": "B", "moves": ["A1", "J9"], "untilDepth": 1}])]))
    assert {m["move"] for m in result["moveInfos"]} <= {"A1", "J9"}


def test_root_policy_temperature_widens_the_search_but_not_the_raw_policy() -> None:
    plain, hot = (finals(serve([query(includePolicy=True, maxVisits=40, rootPolicyTemperature=t)]))[0]
                  for t in (1.0, 8.0))
    assert hot["policy"] == plain["policy"]
    top = max(plain["moveInfos"], key=lambda m: m["prior"])
    hot_prior = next(m["prior"] for m in hot["moveInfos"] if m["move"] == top["move"])
    assert hot_prior < top["prior"]
    assert len(hot["moveInfos"]) > len(plain["moveInfos"])


@pytest.mark.slow
def test_reports_during_search_then_exactly_one_final() -> None:
    responses = serve([query(maxVisits=1_000_000, reportDuringSearchEvery=0.2, overrideSettings={"maxTime": 1.2})])
    during = [r for r in responses if r.get("isDuringSearch")]
    final = finals(responses)
    assert len(during) >= 2 and len(final) == 1
    assert responses[-1] is final[0]
    visits = [r["rootInfo"]["visits"] for r in during] + [final[0]["rootInfo"]["visits"]]
    assert visits == sorted(visits) and visits[0] > 0


def stdin_with_pauses(items: list[Any]) -> Iterator[str]:
    """Query lines as a client sends them: a number in the list is a pause of that many seconds."""
    for item in items:
        if isinstance(item, (int, float)):
            time.sleep(item)
        else:
            yield json.dumps(item) + "\n"


def run_live(items: list[Any], threads: int = 1) -> list[dict[str, Any]]:
    import io

    out, err = io.StringIO(), io.StringIO()
    import dataclasses

    server = AnalysisServer(default_net, dataclasses.replace(settings(), analysis_threads=threads), out, err)
    server.serve(stdin_with_pauses(items))  # type: ignore[arg-type]
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.slow
def test_terminate_stops_a_running_search_which_still_answers() -> None:
    start = time.monotonic()
    responses = run_live([query(id="long", maxVisits=10_000_000, reportDuringSearchEvery=0.1), 0.8,
                          {"id": "t", "action": "terminate", "terminateId": "long"}])
    assert time.monotonic() - start < 10
    ack = only(responses, lambda r: r.get("id") == "t")
    assert ack == {"id": "t", "action": "terminate", "terminateId": "long"}
    (final,) = finals(responses, "long")
    assert final["rootInfo"]["visits"] > 0 and final["moveInfos"]


@pytest.mark.slow
def test_terminate_of_a_queued_turn_answers_no_results() -> None:
    responses = serve([query(id="a", moves=[["B", "E5"]], analyzeTurns=[0, 1]),
                       {"id": "t", "action": "terminate", "terminateId": "a", "turnNumbers": [1]}], delay=0.5)
    ended = {r["turnNumber"]: r for r in finals(responses, "a")}
    assert ended[1] == {"id": "a", "turnNumber": 1, "isDuringSearch": False, "noResults": True}
    assert ended[0]["moveInfos"]


@pytest.mark.slow
def test_terminate_all() -> None:
    responses = serve([query(id="a"), query(id="b"), {"id": "t", "action": "terminate_all"}], delay=0.5)
    assert all(r.get("noResults") for r in finals(responses, "a") + finals(responses, "b"))
    assert only(responses, lambda r: r.get("id") == "t") == {"id": "t", "action": "terminate_all"}


def test_actions_version_models_and_cache() -> None:
    responses = serve([{"id": "v", "action": "query_version"}, {"id": "c", "action": "clear_cache"},
                       {"id": "m", "action": "query_models"}, {"id": "x", "action": "dance"}])
    version = only(responses, lambda r: r["id"] == "v")
    assert version["version"] == "1.17.2" and version["action"] == "query_version" and "git_hash" in version
    assert only(responses, lambda r: r["id"] == "c") == {"id": "c", "action": "clear_cache"}
    assert only(responses, lambda r: r["id"] == "x")["field"] == "action"


def test_query_models_reports_the_nets_model_version() -> None:
    from miai.nets.evaluator import OnnxEvaluator, innermost

    net = innermost(default_net(), 19)
    assert isinstance(net, OnnxEvaluator) and net.info.model_version > 0
    models = only(serve([{"id": "m", "action": "query_models"}]), lambda r: r["id"] == "m")["models"]
    assert models[0]["version"] == net.info.model_version  # KaTrain reads it; it was always 0 before


def test_bad_lines_get_error_lines_and_the_engine_goes_on() -> None:
    responses = serve(["{not json", "[1,2]", json.dumps({"moves": []}), query(boardXSize=30), query(id="ok")])
    errors = [r for r in responses if "error" in r]
    assert len(errors) == 4
    assert all("id" not in e for e in errors[:3])
    assert errors[3] == {"id": "q", "field": "boardXSize", "error": errors[3]["error"]}
    assert finals(responses, "ok")


def test_a_line_that_is_not_utf8_gets_an_error_and_the_engine_goes_on() -> None:
    # The CLI reads stdin keeping undecodable bytes as surrogates (miai.engine.cli.analysis), as here.
    raw = json.dumps({"id": "x", "action": "query_version"}).encode().replace(b'"x"', b'"x\xff"')
    responses = serve([raw.decode("utf-8", "surrogateescape"), {"id": "v", "action": "query_version"}])
    assert responses[0] == {"error": "could not parse input line as JSON: it is not UTF-8 text"}
    assert only(responses, lambda r: r.get("id") == "v")["action"] == "query_version"


class SlowToLoad:
    """A router whose net for a board size takes ``seconds`` to load on first use (as a bundled net loads)."""

    def __init__(self, seconds: float) -> None:
        self.inner = UniformEvaluator()
        self.max_batch = self.inner.max_batch
        self.seconds = seconds
        self.loaded: set[int] = set()
        self.lock = threading.Lock()

    def evaluator_for(self, size: int) -> UniformEvaluator:
        with self.lock:
            if size not in self.loaded:
                time.sleep(self.seconds)
                self.loaded.add(size)
        return self.inner

    def evaluate(self, states: Sequence[Any]) -> list[Any]:
        return self.evaluator_for(states[0].size).evaluate(states)


def test_loading_the_net_for_a_board_size_is_not_counted_in_max_time() -> None:
    lines = [query(id="a", maxVisits=10, overrideSettings={"maxTime": 1.0})]
    (final,) = finals(serve(lines, evaluator=SlowToLoad(1.2)), "a")
    assert final["rootInfo"]["visits"] == 10  # a search whose clock ran while the net loaded stopped at 1


@pytest.mark.slow
def test_queued_turns_run_by_priority_then_arrival() -> None:
    lines = [query(id="low", priority=1), query(id="high", priority=3), query(id="mid", priority=2),
             query(id="mid2", priority=2)]
    order = [r["id"] for r in serve(lines, delay=0.5) if "moveInfos" in r]
    assert order == ["high", "mid", "mid2", "low"]


@pytest.mark.slow
def test_parallel_searches_do_not_disturb_each_other() -> None:
    positions = [query(id=f"p{i}", moves=moves, maxVisits=40, includeOwnership=True)
                 for i, moves in enumerate([[], [["B", "E5"]], [["B", "C3"], ["W", "G7"]], [["B", "D4"]]])]
    alone = {r["id"]: r for r in serve(positions, threads=1) if "moveInfos" in r}
    together = {r["id"]: r for r in serve(positions, threads=2, delay=0.3) if "moveInfos" in r}
    assert together == alone


def test_a_finished_game_is_still_analysed() -> None:
    (result,) = finals(serve([query(moves=[["B", "E5"], ["W", "pass"], ["B", "pass"]])]))
    assert result["rootInfo"]["visits"] == 20 and result["rootInfo"]["currentPlayer"] == "W"


def test_uniform_evaluator_serves_too() -> None:
    (result,) = finals(serve([query(maxVisits=10)], evaluator=UniformEvaluator()))
    assert result["rootInfo"]["winrate"] == pytest.approx(0.5)


def test_no_turns_no_answers_but_warnings_still_name_the_query() -> None:
    responses = serve([query(id="none", analyzeTurns=[], colour="blue"), query(id="after")])
    assert responses[0] == {"id": "none", "field": "colour", "warning": responses[0]["warning"]}
    assert not finals(responses, "none") and finals(responses, "after")


def test_warnings_come_first_with_the_query_id() -> None:
    responses = serve([query(colour="blue", overrideSettings={"antiMirror": True})])
    assert [r.get("field") for r in responses[:2]] == ["overrideSettings", "colour"]
    assert all(r["id"] == "q" and "warning" in r for r in responses[:2])
    assert finals(responses)


def test_a_symmetric_root_lists_the_copies_of_its_searched_moves() -> None:
    """KataGo's rootSymmetryPruning with duplicateForSymmetries: on the empty board each searched move is followed by
    its symmetric copies, marked isSymmetryOf, with the same figures."""
    (result,) = finals(serve([query(maxVisits=40)], evaluator=UniformEvaluator()))
    infos = result["moveInfos"]
    moves = [m["move"] for m in infos]
    assert len(moves) == len(set(moves)) and [m["order"] for m in infos] == list(range(len(infos)))
    by_move = {m["move"]: m for m in infos}
    copies = [m for m in infos if "isSymmetryOf" in m]
    assert copies
    for copy in copies:
        original = by_move[copy["isSymmetryOf"]]
        assert "isSymmetryOf" not in original and copy["visits"] == original["visits"]
    (plain,) = finals(serve([query(maxVisits=40, overrideSettings={"rootSymmetryPruning": False})],
                            evaluator=UniformEvaluator()))
    assert not any("isSymmetryOf" in m for m in plain["moveInfos"])


@pytest.mark.slow
def test_a_query_that_sets_no_limit_still_ends() -> None:
    # No maxVisits, maxPlayouts or maxTime anywhere: the search stops at the engine's built-in visit limit.
    lone = {key: value for key, value in query(boardXSize=5, boardYSize=5).items() if key != "maxVisits"}
    (result,) = finals(serve([lone], evaluator=UniformEvaluator()))
    assert result["rootInfo"]["visits"] == ANALYSIS_MAX_VISITS
