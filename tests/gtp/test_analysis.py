"""Analysis commands: argument parsing, the lz-/kata- formats, and stopping on the next input line."""

from __future__ import annotations

import re

import pytest

from miai.go.coords import PASS, Color, parse_gtp
from miai.gtp.analysis import decimal, format_snapshot, parse_analyze_args, ten_thousandths
from miai.gtp.errors import GtpSyntaxError
from miai.gtp.player import AnalysisSnapshot, AnalyzeRequest, MoveInfo, MoveRestriction, RootInfo

from .fakes import Driver, FakePlayer, LiveSession

# Sabaki's segment grammar (src/modules/analysis.js): split on /\s*info\s+/, each segment ends with the pv run.
SABAKI_PV = re.compile(r"(pass|[A-Za-z]\d+)(\s+(pass|[A-Za-z]\d+))*$")


def sabaki_parse(line: str, kata: bool) -> list[dict[str, object]]:
    """Parse an info line the way Sabaki does (keys before pv, winrate scale chosen by command name)."""
    results = []
    for segment in re.split(r"\s*info\s+", line)[1:]:
        match = SABAKI_PV.search(segment)
        assert match is not None, segment
        head = segment[: match.start()].split()
        assert head[-1] == "pv", segment
        pairs = dict(zip(head[:-1:2], head[1:-1:2]))
        winrate = float(pairs["winrate"]) if kata else int(pairs["winrate"]) / 10000
        results.append({"move": pairs["move"], "visits": int(pairs["visits"]), "winrate": winrate,
                        "scoreLead": float(pairs["scoreLead"]) if "scoreLead" in pairs else None,
                        "pv": match.group(0).split()})
    return results


def test_parse_args_defaults_and_lizzie_form() -> None:
    assert parse_analyze_args([], 19, Color.WHITE, 50) == (Color.WHITE, AnalyzeRequest(interval=0.5))
    assert parse_analyze_args(["10"], 19, Color.BLACK) == (Color.BLACK, AnalyzeRequest(interval=0.1))
    assert parse_analyze_args(["W", "25"], 19, Color.BLACK) == (Color.WHITE, AnalyzeRequest(interval=0.25))


def test_parse_args_keys() -> None:
    color, request = parse_analyze_args(
        ["b", "interval", "30", "minmoves", "2", "maxmoves", "5", "ownership", "true", "rootInfo", "TRUE",
         "pvVisits", "true", "ownershipStdev", "false",
         "avoid", "w", "d4,q16", "3", "avoid", "b", "pass", "1"], 19, Color.WHITE)
    assert color == Color.BLACK
    assert request == AnalyzeRequest(
        interval=0.3, min_moves=2, max_moves=5, ownership=True, root_info=True, pv_visits=True,
        avoid=(MoveRestriction(Color.WHITE, (parse_gtp("D4", 19), parse_gtp("Q16", 19)), 3),
               MoveRestriction(Color.BLACK, (-1,), 1)))
    _, allowed = parse_analyze_args(["allow", "b", "c3,d4", "1"], 9, Color.BLACK)
    assert allowed.allow == (MoveRestriction(Color.BLACK, (parse_gtp("C3", 9), parse_gtp("D4", 9)), 1),)


@pytest.mark.parametrize(
    ("flavour", "tokens", "detail"),
    [
        ("kata", ["noResultValue", "true"], "'noResultValue' is not supported: miai's search does not track "
                                            "no-result outcomes"),
        ("lz", ["b", "ownership", "true"], "'ownership' is a kata-analyze key; Leela Zero's format has no field "
                                           "for it"),
        ("lz", ["pvVisits", "true"], "'pvVisits' is a kata-analyze key; Leela Zero's format has no field for it"),
    ],
)
def test_keys_that_would_print_nothing_are_refused(flavour: str, tokens: list[str], detail: str) -> None:
    with pytest.raises(GtpSyntaxError) as caught:
        parse_analyze_args(tokens, 19, Color.BLACK, flavour=flavour)  # type: ignore[arg-type]
    assert caught.value.detail == detail


@pytest.mark.parametrize(
    ("tokens", "detail"),
    [
        (["b", "x"], "unknown analysis key 'x'"),
        (["b", "10", "interval"], "missing value after 'interval'"),
        (["b", "interval", "-1"], "invalid interval '-1'"),
        (["ownership", "yes"], "invalid value 'yes' for 'ownership' (expected true or false)"),
        (["avoid", "b", "z99", "1"], "invalid vertex list 'z99' after 'avoid'"),
        (["avoid", "q", "d4", "1"], "invalid color 'q' after 'avoid'"),
        (["allow", "b", "d4", "1", "allow", "b", "c3", "1"], "'allow' may be given once and not together with 'avoid'"),
        (["avoid", "b", "d4", "1", "allow", "b", "c3", "1"], "'allow' may be given once and not together with 'avoid'"),
        (["10", "20"], "unknown analysis key '20'"),
    ],
)
def test_parse_args_errors(tokens: list[str], detail: str) -> None:
    with pytest.raises(GtpSyntaxError) as caught:
        parse_analyze_args(tokens, 19, Color.BLACK)
    assert caught.value.detail == detail


def test_number_formats() -> None:
    assert [decimal(x) for x in (0.0, 1.0, 0.5734114, -2.25, 1e-9, 123456.5)] == [
        "0.0", "1.0", "0.573411", "-2.25", "0.0", "123456.5"]
    assert [ten_thousandths(x) for x in (0.0, 1.0, 0.52134, 0.99995, -0.815)] == ["0", "10000", "5213", "10000",
                                                                                 "-8150"]


def snapshot() -> AnalysisSnapshot:
    move_a = MoveInfo(move=parse_gtp("C4", 9), visits=47, winrate=0.573411, prior=0.340396, lcb=0.540641,
                      pv=(parse_gtp("C4", 9), parse_gtp("E7", 9), -1), score_lead=0.735614, score_mean=1.25,
                      score_stdev=12.0119, utility=0.155838, edge_visits=47, pv_visits=(47, 20, 3))
    move_b = MoveInfo(move=parse_gtp("D5", 9), visits=1, winrate=1.0, prior=0.0198, lcb=-0.815, pv=())
    return AnalysisSnapshot(moves=(move_a, move_b), root=RootInfo(visits=48, winrate=0.57, score_lead=0.7),
                            ownership=[0.25] * 81)


def test_lz_format_matches_leela_zero() -> None:
    line = format_snapshot(snapshot(), 9, "lz", AnalyzeRequest(ownership=True))
    assert line == ("info move C4 visits 47 winrate 5734 prior 3404 lcb 5406 order 0 pv C4 E7 pass "
                    "info move D5 visits 1 winrate 10000 prior 198 lcb -8150 order 1 pv D5")


def test_kata_format_matches_katago() -> None:
    # KataGo 1.17 (gtp.cpp) writes the lead as scoreMean, for the tools that read scoreMean, and the self-play mean
    # as scoreSelfplay.
    line = format_snapshot(snapshot(), 9, "kata", AnalyzeRequest())
    assert line == (
        "info move C4 visits 47 edgeVisits 47 utility 0.155838 winrate 0.573411 scoreMean 0.735614 "
        "scoreStdev 12.0119 scoreLead 0.735614 scoreSelfplay 1.25 prior 0.340396 lcb 0.540641 order 0 pv C4 E7 pass "
        "info move D5 visits 1 winrate 1.0 prior 0.0198 lcb -0.815 order 1 pv D5")


def test_kata_optional_sections() -> None:
    request = AnalyzeRequest(root_info=True, ownership=True, pv_visits=True, max_moves=1)
    line = format_snapshot(snapshot(), 9, "kata", request)
    assert "info move D5" not in line  # maxmoves 1
    assert ("pv C4 E7 pass pvVisits 47 20 3 rootInfo visits 48 winrate 0.57 scoreMean 0.7 scoreLead 0.7 "
            "ownership 0.25 ") in line
    assert line.endswith(" ".join(["0.25"] * 81))


def test_formatted_lines_parse_as_sabaki_parses_them() -> None:
    for flavour in ("lz", "kata"):
        parsed = sabaki_parse(format_snapshot(snapshot(), 9, flavour, AnalyzeRequest()), flavour == "kata")
        assert [p["move"] for p in parsed] == ["C4", "D5"]
        assert parsed[0]["winrate"] == pytest.approx(0.5734, abs=1e-4)
        assert parsed[0]["pv"] == ["C4", "E7", "pass"]
        assert parsed[0]["scoreLead"] == (0.735614 if flavour == "kata" else None)


def test_analysis_in_step_mode_emits_once_then_ends(driver: Driver) -> None:
    driver.ok("boardsize 9")
    written = driver.raw("5 lz-analyze b 1")
    head, info, blank, end = written.split("\n")
    assert (head, blank, end) == ("=5", "", "")
    assert sabaki_parse(info, kata=False)[0]["winrate"] == 0.6
    assert driver.fail("lz-analyze b 10 bogus 1").startswith("syntax error")


def test_genmove_analyze_ends_with_play_and_plays(driver: Driver, player: FakePlayer) -> None:
    driver.ok("boardsize 9")
    player.script[:] = [parse_gtp("E5", 9)]
    written = driver.raw("kata-genmove_analyze w 10 ownership true")
    lines = written.split("\n")
    assert lines[0] == "=" and lines[1].startswith("info move ") and " ownership 0.5 " in lines[1]
    assert lines[2:] == ["play E5", "", ""]
    assert driver.session.state.moves == [(Color.WHITE, parse_gtp("E5", 9))]
    player.script[:] = ["resign"]
    assert driver.raw("lz-genmove_analyze b 10").endswith("\nplay resign\n\n")
    assert len(driver.session.state.moves) == 1


def test_analysis_values_are_reported_for_the_requested_colour(driver: Driver, player: FakePlayer) -> None:
    driver.raw("kata-analyze w 1")
    assert player.calls[-1][0] == "analyze" and player.calls[-1][1][0] == Color.WHITE


def test_analysis_streams_until_the_next_line_which_is_then_answered() -> None:
    live = LiveSession(FakePlayer(seed=3))
    live.send("boardsize 9\n1 kata-analyze b 2\n")
    text = live.out.wait_for(lambda t: t.count("info move") >= 3)  # still streaming, every 2 cs
    assert text.startswith("= \n\n=1\ninfo move ")
    live.send("2 protocol_version\n")
    text = live.out.wait_for(lambda t: t.endswith("=2 2\n\n"))
    body = text[len("= \n\n"):]
    head, rest = body.split("\n", 1)
    stream, after = rest.split("\n\n", 1)
    assert head == "=1" and after == "=2 2\n\n"
    assert all(line.startswith("info move ") and "  " not in line for line in stream.split("\n"))
    live.send("quit\n")
    live.join()
    assert live.exit_code == 0


def test_a_blank_line_also_stops_analysis_and_gets_no_response() -> None:
    live = LiveSession()
    live.send("lz-analyze 5\n")
    live.out.wait_for(lambda t: "info move" in t)
    live.send("\n")
    live.out.wait_for(lambda t: t.endswith("\n\n"))
    live.send("name\n")
    text = live.out.wait_for(lambda t: t.endswith("= miai\n\n"))
    assert text.count("\n\n") == 2  # the analysis response, then name's
    live.close_input()
    live.join()


def test_end_of_input_stops_analysis_and_ends_the_session() -> None:
    live = LiveSession()
    live.send("kata-analyze 5\n")
    live.out.wait_for(lambda t: "info move" in t)
    live.close_input()
    live.join()
    assert live.out.getvalue().endswith("\n\n") and live.exit_code == 0


def test_numpy_numbers_format_like_python_ones() -> None:
    import numpy as np

    info = MoveInfo(move=np.int64(parse_gtp("C4", 9)), visits=np.int64(47), winrate=np.float32(0.5),
                    prior=np.float64(0.25), lcb=np.float32(0.375), pv=(np.int64(parse_gtp("C4", 9)),),
                    edge_visits=np.int32(47), utility=np.float32(-0.125), score_lead=np.float32(1.5))
    line = format_snapshot(AnalysisSnapshot(moves=(info,)), 9, "kata", AnalyzeRequest())
    assert line == ("info move C4 visits 47 edgeVisits 47 utility -0.125 winrate 0.5 scoreMean 1.5 scoreLead 1.5 "
                    "prior 0.25 lcb 0.375 order 0 pv C4")
    assert format_snapshot(AnalysisSnapshot(moves=(info,)), 9, "lz", AnalyzeRequest()) == (
        "info move C4 visits 47 winrate 5000 prior 2500 lcb 3750 order 0 pv C4")


def test_avoid_and_allow_name_each_move_and_its_depth_as_katago() -> None:
    """avoid/allow become KataGo's avoidMoveUntilByLoc: a later entry for a move wins, allow forbids every other move
    (pass too), and the root moves are those free at depth 0."""
    d4, e5, c3 = (parse_gtp(v, 9) for v in ("D4", "E5", "C3"))
    _, request = parse_analyze_args("b avoid w D4,E5 3 avoid w E5 1".split(), 9, Color.BLACK)
    assert request.avoided_until(Color.WHITE, 9) == {d4: 3, e5: 1}
    assert request.avoided_until(Color.BLACK, 9) == {} and request.root_moves(Color.BLACK, 9) is None
    _, request = parse_analyze_args("allow b C3 2".split(), 9, Color.BLACK)
    until = request.avoided_until(Color.BLACK, 9)
    assert len(until) == 81 and c3 not in until and until[PASS] == 2
    assert request.root_moves(Color.BLACK, 9) == {c3}


def test_avoid_for_no_ply_is_refused_as_katago_does() -> None:
    with pytest.raises(GtpSyntaxError) as caught:
        parse_analyze_args("b avoid w D4 0".split(), 9, Color.BLACK)
    assert caught.value.detail == "invalid depth '0' after 'avoid' (at least 1)"
