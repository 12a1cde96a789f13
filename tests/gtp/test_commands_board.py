"""Board commands: size, clear, komi, rules, play, undo, showboard, and GNU Go's queries."""

from __future__ import annotations

import json

import pytest

from miai.go.coords import Color, parse_gtp

from .fakes import Driver


def stones(driver: Driver, color: str) -> list[str]:
    return driver.ok(f"list_stones {color}").split()


def test_boardsize_accepts_2_to_25_and_clears(driver: Driver) -> None:
    driver.ok("play b d4")
    assert driver.ok("boardsize 9") == ""
    assert driver.session.state.size == 9 and stones(driver, "b") == []
    assert driver.ok("boardsize 2") == "" and driver.ok("boardsize 25") == ""
    assert driver.ok("boardsize 13 13") == ""  # gtp2ogs's two-argument form, square


@pytest.mark.parametrize("size", ["0", "1", "26", "100", "13 9"])
def test_boardsize_unacceptable(driver: Driver, size: str) -> None:
    driver.ok("boardsize 9")
    driver.ok("play b e5")
    assert driver.fail(f"boardsize {size}").startswith("unacceptable size")
    assert driver.session.state.size == 9 and stones(driver, "b") == ["E5"]


@pytest.mark.parametrize("size", ["x", "-9", "9.0", ""])
def test_boardsize_syntax_error(driver: Driver, size: str) -> None:
    assert driver.fail(f"boardsize {size}").startswith("syntax error")


def test_clear_board_keeps_size_komi_and_rules(driver: Driver) -> None:
    for line in ("boardsize 13", "komi 0.5", "kata-set-rules japanese", "play b d4", "play w k10", "clear_board"):
        driver.ok(line)
    state = driver.session.state
    assert (state.size, state.komi, state.rules.name, len(state.moves)) == (13, 0.5, "japanese", 0)
    assert stones(driver, "b") == [] and stones(driver, "w") == []


def test_komi(driver: Driver) -> None:
    driver.ok("play b d4")
    assert driver.ok("komi 6.5") == ""
    assert driver.session.state.komi == 6.5
    assert len(driver.session.state.moves) == 1  # komi keeps the game
    assert driver.ok("komi -3") == "" and driver.session.state.komi == -3
    assert driver.fail("komi seven").startswith("syntax error")
    assert driver.fail("komi nan").startswith("syntax error")
    assert driver.session.state.komi == -3


def test_play_colors_and_case(driver: Driver) -> None:
    for line in ("play b D4", "play WHITE q16", "play Black c3", "play w pass", "play B PASS"):
        assert driver.ok(line) == ""
    assert stones(driver, "black") == ["D4", "C3"]
    assert stones(driver, "white") == ["Q16"]
    assert [color for color, _ in driver.session.state.moves] == [Color.BLACK, Color.WHITE, Color.BLACK,
                                                                  Color.WHITE, Color.BLACK]


def test_same_color_twice_is_allowed(driver: Driver) -> None:
    assert driver.ok("play b d4") == ""
    assert driver.ok("play b q16") == ""
    assert stones(driver, "b") == ["Q16", "D4"]


def test_illegal_moves_answer_the_standard_text(driver: Driver) -> None:
    driver.ok("boardsize 9")
    driver.ok("play b e5")
    assert driver.fail("play w e5").startswith("illegal move")  # occupied
    # Suicide of a single stone (illegal in every preset): White at A1 surrounded by Black.
    driver.ok("play b a2")
    driver.ok("play b b1")
    assert driver.fail("play w a1").startswith("illegal move")
    assert "suicide" in driver.err.getvalue()
    assert len(driver.session.state.moves) == 3


def test_ko_recapture_is_illegal(driver: Driver) -> None:
    driver.ok("boardsize 9")
    for line in ("play b d5", "play b e6", "play b e4", "play w f6", "play w f4", "play w g5", "play w e5",
                 "play b f5"):  # Black captures E5 -> White may not retake at once
        assert driver.ok(line) == ""
    assert stones(driver, "w") == ["F6", "G5", "F4"]
    assert driver.fail("play w e5").startswith("illegal move")


@pytest.mark.parametrize("line", ["play", "play b", "play b d4 d5", "play x d4", "play b i5", "play b z9",
                                  "play b resign", "play b d0", "play pass b"])
def test_play_syntax_errors_change_nothing(driver: Driver, line: str) -> None:
    assert driver.fail(line).startswith("syntax error")
    assert driver.session.state.moves == []


def test_undo(driver: Driver) -> None:
    assert driver.fail("undo").startswith("cannot undo")
    driver.ok("play b d4")
    driver.ok("play w pass")
    assert driver.ok("undo") == "" and driver.ok("undo") == ""
    assert driver.session.state.moves == [] and stones(driver, "b") == []
    assert driver.fail("undo").startswith("cannot undo")


def test_undo_does_not_remove_handicap_stones(driver: Driver) -> None:
    driver.ok("fixed_handicap 2")
    assert driver.fail("undo").startswith("cannot undo")
    driver.ok("play w c3")
    driver.ok("undo")
    assert sorted(stones(driver, "b")) == ["D4", "Q16"]


def test_showboard(driver: Driver) -> None:
    driver.ok("boardsize 5")
    driver.ok("play b c3")
    driver.ok("play w d4")
    written = driver.raw("showboard")
    assert written.startswith("= \n") and written.endswith("\n\n") and "\n\n" not in written[:-2]
    lines = written[:-2].split("\n")[1:]
    assert lines[0] == "   A B C D E"
    assert lines[2] == " 4 . . .(O). 4"
    assert lines[3] == " 3 . . X . . 3"
    assert lines[6] == "   A B C D E"
    assert "Black to play" in lines[7]


def test_rules_commands(driver: Driver) -> None:
    assert json.loads(driver.ok("kata-get-rules"))["ko"] == "POSITIONAL"  # tromp-taylor by default
    assert driver.ok("kata-set-rules japanese") == ""
    rules = json.loads(driver.ok("kata-get-rules"))
    assert (rules["ko"], rules["scoring"], rules["tax"]) == ("SIMPLE", "TERRITORY", "SEKI")
    assert driver.ok("kgs-rules new_zealand") == ""
    assert driver.session.state.rules.name == "new-zealand"
    custom = '{"ko": "SITUATIONAL", "scoring": "AREA", "tax": "NONE", "suicide": false}'
    assert driver.ok(f"kata-set-rules {custom}") == ""
    assert json.loads(driver.ok("kata-get-rules"))["ko"] == "SITUATIONAL"


# Every preset spelling KataGo 1.17.2's parseRulesHelper accepts (cpp/game/rules.cpp), with KataGo's rules for it:
# (ko, scoring, tax, suicide, hasButton, whiteHandicapBonus, friendlyPassOk).
KATAGO_FORMS = {
    ("japanese", "korean", "Japanese"): ("SIMPLE", "TERRITORY", "SEKI", False, False, "0", False),
    ("chinese", "CHINESE"): ("SIMPLE", "AREA", "NONE", False, False, "N", True),
    ("chineseogs", "chinese_ogs", "chinese-ogs", "chinesekgs", "chinese_kgs", "chinese-kgs"):
        ("POSITIONAL", "AREA", "NONE", False, False, "N", True),
    ("ancientarea", "ancient-area", "ancient_area", "ancient area", "stonescoring", "stone-scoring",
     "stone_scoring", "stone scoring"): ("SIMPLE", "AREA", "ALL", False, False, "0", True),
    ("ancientterritory", "ancient-territory", "ancient_territory", "ancient territory"):
        ("SIMPLE", "TERRITORY", "ALL", False, False, "0", False),
    ("agabutton", "aga-button", "aga_button", "aga button"): ("SITUATIONAL", "AREA", "NONE", False, True, "N-1", True),
    ("aga", "bga", "french"): ("SITUATIONAL", "AREA", "NONE", False, False, "N-1", True),
    ("nz", "newzealand", "new zealand", "new-zealand", "new_zealand"):
        ("SITUATIONAL", "AREA", "NONE", True, False, "0", True),
    ("tromp-taylor", "tromp_taylor", "tromp taylor", "tromptaylor"):
        ("POSITIONAL", "AREA", "NONE", True, False, "0", False),
    ("goe", "ing"): ("POSITIONAL", "AREA", "NONE", True, False, "0", True),
    ('{"ko":"POSITIONAL","scoring":"AREA","tax":"NONE","suicide":true,"hasButton":false,'
     '"whiteHandicapBonus":"0","friendlyPassOk":true}',): ("POSITIONAL", "AREA", "NONE", True, False, "0", True),
    ('{"scoring":"TERRITORY"}', '{"score": "TERRITORY"}', "scoreTERRITORY", "scoringTERRITORY"):
        ("POSITIONAL", "TERRITORY", "SEKI", True, False, "0", False),
    ('{"hasButton": true, "ko": "SITUATIONAL"}', "koSITUATIONALbutton1"):
        ("SITUATIONAL", "AREA", "NONE", True, True, "0", False),
    ("koSIMPLEscoreAREAtaxALLsui0fpok1", "koSIMPLE scoreAREA taxALL sui0 fpok1"):
        ("SIMPLE", "AREA", "ALL", False, False, "0", True),
}
KEYS = ("ko", "scoring", "tax", "suicide", "hasButton", "whiteHandicapBonus", "friendlyPassOk")


@pytest.mark.parametrize("form", [form for forms in KATAGO_FORMS for form in forms])
def test_kata_set_rules_accepts_every_katago_form(driver: Driver, form: str) -> None:
    expected = next(rules for forms, rules in KATAGO_FORMS.items() if form in forms)
    driver.ok("komi 3.5")
    assert driver.ok(f"kata-set-rules {form}") == ""
    got = json.loads(driver.ok("kata-get-rules"))
    assert tuple(got[key] for key in KEYS) == expected
    assert driver.session.state.komi == 3.5  # KataGo keeps komi when the rules change


def test_kata_set_rule_changes_one_key(driver: Driver) -> None:
    driver.ok("kata-set-rules chinese")
    assert driver.ok("kata-set-rule ko POSITIONAL") == ""
    assert driver.session.state.rules.name == "chinese-ogs"
    assert driver.ok("kata-set-rule friendlyPassOk false") == ""
    assert json.loads(driver.ok("kata-get-rules"))["friendlyPassOk"] is False
    assert driver.ok("kata-set-rule hasButton true") == ""
    assert json.loads(driver.ok("kata-get-rules"))["hasButton"] is True
    assert driver.fail("kata-set-rule komi 7").startswith("invalid rule")
    assert driver.fail("kata-set-rule ko SIDEWAYS").startswith("invalid rule")
    assert json.loads(driver.ok("kata-get-rules"))["ko"] == "POSITIONAL"


def test_button_rules_over_gtp(driver: Driver) -> None:
    for line in ("boardsize 9", "komi 7", "kata-set-rules aga-button", "play b e5", "play w pass"):
        driver.ok(line)
    state = driver.session.state
    assert not state.button_available and state.button_bonus() == 0.5 and not state.is_over()
    driver.ok("play b pass")
    assert not state.is_over()  # the button pass did not count
    driver.ok("play w pass")
    assert state.is_over()
    assert driver.ok("final_score") == "B+73.5"  # 81 points for Black against komi 7 and the button's half point


def test_bad_rules_change_nothing(driver: Driver) -> None:
    driver.ok("kata-set-rules chinese")
    assert driver.fail("kata-set-rules martian").startswith("unknown rules 'martian'")
    assert driver.fail("kgs-rules chinese-ogs").startswith("unknown rules 'chinese-ogs'")
    assert driver.fail("kata-set-rules {\"ko\": 3") .startswith("invalid rules")
    assert driver.fail("kata-set-rules").startswith("syntax error")
    assert driver.fail('kata-set-rules {"komi": 7}').startswith("invalid rules")  # komi is set by `komi`
    assert driver.fail("kata-set-rules koSIMPLEkomi7.5").startswith("unknown rules")
    assert driver.fail('kata-set-rules {"ko": "SPIGHT"}').startswith("invalid rules")
    assert driver.session.state.rules.name == "chinese"


def test_rules_change_keeps_the_game(driver: Driver) -> None:
    for line in ("boardsize 9", "fixed_handicap 2", "play w e5", "play b d4"):
        driver.ok(line)
    driver.ok("kata-set-rules aga")
    state = driver.session.state
    assert state.rules.name == "aga" and state.handicap == 2 and len(state.moves) == 2
    assert sorted(stones(driver, "b")) == ["C3", "D4", "G7"]
    assert state.to_play == Color.WHITE


def test_queries(driver: Driver) -> None:
    driver.ok("boardsize 3")
    driver.ok("play b b2")
    driver.ok("play w a1")
    assert driver.ok("is_legal b b2") == "0"
    assert driver.ok("is_legal w c3") == "1"
    assert driver.ok("is_legal b pass") == "1"
    legal = driver.ok("all_legal b").split()
    assert "B2" not in legal and "A1" not in legal and len(legal) == 7
    driver.ok("play b a2")
    driver.ok("play b b1")  # captures A1
    assert driver.ok("captures black") == "1"
    assert driver.ok("captures white") == "0"
    assert driver.ok("list_stones w") == ""
    assert driver.fail("is_legal b d4").startswith("syntax error")  # off a 3x3 board
    assert parse_gtp("A1", 3) not in driver.session.state.legal_moves(Color.WHITE)  # suicide for White
