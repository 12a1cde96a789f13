"""Rule presets with KataGo's meanings, and the kata-get-rules JSON form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from miai.go.rules import KoRule, Rules, Scoring, Tax

# (ko, scoring, tax, multi-stone suicide, white handicap bonus, friendly pass ok, default komi): KataGo 1.17.2's
# cpp/game/rules.cpp (parseRulesHelper); only aga-button has the button.
TABLE = {
    "tromp-taylor": (KoRule.POSITIONAL, Scoring.AREA, Tax.NONE, True, "0", False, 7.5),
    "chinese": (KoRule.SIMPLE, Scoring.AREA, Tax.NONE, False, "N", True, 7.5),
    "chinese-ogs": (KoRule.POSITIONAL, Scoring.AREA, Tax.NONE, False, "N", True, 7.5),
    "chinese-kgs": (KoRule.POSITIONAL, Scoring.AREA, Tax.NONE, False, "N", True, 7.5),
    "japanese": (KoRule.SIMPLE, Scoring.TERRITORY, Tax.SEKI, False, "0", False, 6.5),
    "korean": (KoRule.SIMPLE, Scoring.TERRITORY, Tax.SEKI, False, "0", False, 6.5),
    "aga": (KoRule.SITUATIONAL, Scoring.AREA, Tax.NONE, False, "N-1", True, 7.5),
    "bga": (KoRule.SITUATIONAL, Scoring.AREA, Tax.NONE, False, "N-1", True, 7.5),
    "french": (KoRule.SITUATIONAL, Scoring.AREA, Tax.NONE, False, "N-1", True, 7.5),
    "new-zealand": (KoRule.SITUATIONAL, Scoring.AREA, Tax.NONE, True, "0", True, 7.0),
    "stone-scoring": (KoRule.SIMPLE, Scoring.AREA, Tax.ALL, False, "0", True, 7.5),
    "ancient-territory": (KoRule.SIMPLE, Scoring.TERRITORY, Tax.ALL, False, "0", False, 6.5),
    "aga-button": (KoRule.SITUATIONAL, Scoring.AREA, Tax.NONE, False, "N-1", True, 7.0),
    "goe": (KoRule.POSITIONAL, Scoring.AREA, Tax.NONE, True, "0", True, 7.5),
}
# Every other spelling KataGo's parseRulesHelper accepts, with the preset it means.
KATAGO_ALIASES = {
    "chineseogs": "chinese-ogs", "chinese_ogs": "chinese-ogs", "chinesekgs": "chinese-kgs", "chinese_kgs": "chinese-kgs",
    "ancientarea": "stone-scoring", "ancient-area": "stone-scoring", "ancient_area": "stone-scoring",
    "ancient area": "stone-scoring", "stonescoring": "stone-scoring", "stone_scoring": "stone-scoring",
    "stone scoring": "stone-scoring", "ancientterritory": "ancient-territory", "ancient_territory": "ancient-territory",
    "ancient territory": "ancient-territory", "agabutton": "aga-button", "aga_button": "aga-button",
    "aga button": "aga-button", "nz": "new-zealand", "newzealand": "new-zealand", "new zealand": "new-zealand",
    "new_zealand": "new-zealand", "tromp_taylor": "tromp-taylor", "tromp taylor": "tromp-taylor",
    "tromptaylor": "tromp-taylor", "ing": "goe", "French": "french", "BGA": "bga", "Japanese": "japanese",
}


@pytest.mark.parametrize("name", list(TABLE))
def test_presets_match_katago(name: str) -> None:
    rules = Rules.preset(name)
    ko, scoring, tax, suicide, bonus, friendly, komi = TABLE[name]
    assert (rules.ko, rules.scoring, rules.tax) == (ko, scoring, tax)
    assert (rules.multi_stone_suicide, rules.white_handicap_bonus, rules.friendly_pass_ok) == (suicide, bonus, friendly)
    assert rules.has_button is (name == "aga-button")
    assert Rules.default_komi(name) == komi
    assert rules.name == name
    assert Rules.from_json(rules.to_json()) == rules


def test_preset_names_are_forgiving_and_unknown_names_fail() -> None:
    assert Rules.preset("Tromp_Taylor") == Rules.preset("TROMP-TAYLOR") == Rules.preset("tromptaylor")
    assert Rules.preset("NZ") == Rules.preset("new-zealand")
    assert set(Rules.preset_names()) == set(TABLE)
    with pytest.raises(ValueError):
        Rules.preset("ancient")


@pytest.mark.parametrize("alias", sorted(KATAGO_ALIASES))
def test_every_katago_alias_names_its_preset(alias: str) -> None:
    assert Rules.parse(alias) == Rules.preset(KATAGO_ALIASES[alias])
    assert Rules.parse(alias).name == KATAGO_ALIASES[alias]


def test_json_uses_katago_keys() -> None:
    assert Rules.preset("chinese-ogs").to_json() == {
        "friendlyPassOk": True,
        "hasButton": False,
        "ko": "POSITIONAL",
        "scoring": "AREA",
        "suicide": False,
        "tax": "NONE",
        "whiteHandicapBonus": "N",
    }


def test_from_json_partial_and_name_matching() -> None:
    rules = Rules.from_json({"ko": "simple", "suicide": False, "whiteHandicapBonus": "N", "friendlyPassOk": True})
    assert rules == Rules.preset("chinese") and rules.name == "chinese"
    custom = Rules.from_json({"scoring": "TERRITORY"})
    assert custom.scoring is Scoring.TERRITORY and custom.ko is KoRule.POSITIONAL and custom.name == "custom"
    assert custom.tax is Tax.SEKI  # KataGo: a missing tax follows the scoring
    assert Rules.from_json({"score": "TERRITORY", "tax": "NONE"}).tax is Tax.NONE
    assert Rules.from_json({"tax": "ALL"}, base=Rules.preset("japanese")).tax is Tax.ALL


@pytest.mark.parametrize(
    "data",
    [{"ko": "SPIGHT"}, {"scoring": "points"}, {"suicide": "maybe"}, {"whiteHandicapBonus": "2N"}, {"komi": 7.5},
     {"hasButton": "perhaps"}, {"button": True}],
)
def test_from_json_rejects_bad_input(data: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Rules.from_json(data)


def test_handicap_bonus() -> None:
    assert [Rules.preset("chinese").handicap_bonus(n) for n in (0, 1, 2, 9)] == [0, 0, 2, 9]
    assert [Rules.preset("aga").handicap_bonus(n) for n in (0, 1, 2, 9)] == [0, 0, 1, 8]
    assert Rules.preset("japanese").handicap_bonus(4) == 0


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules.preset("aga")
    with pytest.raises(AttributeError):
        rules.ko = KoRule.SIMPLE  # type: ignore[misc]
    assert {rules: 1}[Rules.preset("bga")] == 1  # equal rules, different names


def test_from_json_accepts_katago_long_names() -> None:
    rules = Rules.from_json({"koRule": "KO_SITUATIONAL", "scoringRule": "SCORING_AREA", "taxRule": "TAX_NONE",
                             "multiStoneSuicideLegal": False, "whiteHandicapBonus": "N-1", "friendlyPassOk": True})
    assert rules == Rules.preset("aga")


@given(
    ko=st.sampled_from(list(KoRule)),
    scoring=st.sampled_from(list(Scoring)),
    tax=st.sampled_from(list(Tax)),
    suicide=st.booleans(),
    bonus=st.sampled_from(["0", "N", "N-1"]),
    friendly=st.booleans(),
    button=st.booleans(),
)
@pytest.mark.slow
def test_every_rule_combination_round_trips_through_json_and_compact(
    ko: KoRule, scoring: Scoring, tax: Tax, suicide: bool, bonus: str, friendly: bool, button: bool
) -> None:
    rules = Rules(ko, scoring, tax, suicide, bonus, friendly, button)
    again = Rules.from_json(rules.to_json())
    assert again == rules
    compact = (f"ko{ko.value}score{scoring.value}tax{tax.value}sui{int(suicide)}button{int(button)}"
               f"whb{bonus}fpok{int(friendly)}")
    assert Rules.parse(compact) == rules
    assert (again.name == "custom") is (rules.matching_preset() is None)


def test_the_katago_json_example_and_compact_strings_parse() -> None:
    text = ('{"ko":"POSITIONAL","scoring":"AREA","tax":"NONE","suicide":true,"hasButton":false,'
            '"whiteHandicapBonus":"0","friendlyPassOk":true}')
    rules = Rules.parse(text)
    assert (rules.ko, rules.scoring, rules.tax, rules.multi_stone_suicide) == (
        KoRule.POSITIONAL, Scoring.AREA, Tax.NONE, True)
    assert (rules.has_button, rules.white_handicap_bonus, rules.friendly_pass_ok) == (False, "0", True)
    assert Rules.parse('{"hasButton":true,"ko":"SITUATIONAL","suicide":false,"whiteHandicapBonus":"N-1",'
                       '"friendlyPassOk":true}').name == "aga-button"
    assert Rules.parse("koSITUATIONALscoreAREAtaxNONEsui0button1whbN-1fpok1").name == "aga-button"
    assert Rules.parse("scoringTERRITORY").tax is Tax.SEKI  # the compact form too: tax follows the scoring
    assert Rules.from_compact("koSIMPLEscoreAREAtaxALLsui0fpok1komi7.5", allow_komi=True).name == "stone-scoring"


@pytest.mark.parametrize("text", ["koSIMPLEkomi7.5", "koFOO", "ko", '{"komi": 7}', "[1]", "{not json", ""])
def test_parse_rejects_what_kata_set_rules_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        Rules.parse(text)


def test_updated_changes_one_key_like_kata_set_rule() -> None:
    rules = Rules.preset("chinese").updated("ko", "positional")
    assert rules.name == "chinese-ogs"
    assert Rules.preset("aga").updated("hasButton", "true").name == "aga-button"
    assert Rules.preset("tromp-taylor").updated("scoring", "TERRITORY").tax is Tax.NONE  # tax stays, as in KataGo
    with pytest.raises(ValueError):
        Rules.preset("aga").updated("komi", "7")
