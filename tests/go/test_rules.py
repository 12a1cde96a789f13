"""Rule presets with KataGo's meanings, and the kata-get-rules JSON form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from miai.go.rules import KoRule, Rules, Scoring, Tax

# (ko, scoring, tax, multi-stone suicide, white handicap bonus, friendly pass ok, default komi): KATAGO.md section 6
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
}


@pytest.mark.parametrize("name", list(TABLE))
def test_presets_match_katago(name: str) -> None:
    rules = Rules.preset(name)
    ko, scoring, tax, suicide, bonus, friendly, komi = TABLE[name]
    assert (rules.ko, rules.scoring, rules.tax) == (ko, scoring, tax)
    assert (rules.multi_stone_suicide, rules.white_handicap_bonus, rules.friendly_pass_ok) == (suicide, bonus, friendly)
    assert Rules.default_komi(name) == komi
    assert rules.name == name
    assert Rules.from_json(rules.to_json()) == rules


def test_preset_names_are_forgiving_and_unknown_names_fail() -> None:
    assert Rules.preset("Tromp_Taylor") == Rules.preset("TROMP-TAYLOR") == Rules.preset("tromptaylor")
    assert Rules.preset("NZ") == Rules.preset("new-zealand")
    assert set(Rules.preset_names()) == set(TABLE)
    with pytest.raises(ValueError):
        Rules.preset("ing")


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
    assert Rules.from_json({"tax": "ALL"}, base=Rules.preset("japanese")).tax is Tax.ALL


@pytest.mark.parametrize(
    "data",
    [{"ko": "SPIGHT"}, {"scoring": "points"}, {"suicide": "maybe"}, {"whiteHandicapBonus": "2N"}, {"komi": 7.5},
     {"hasButton": True}],
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
)
def test_every_rule_combination_round_trips_through_json(
    ko: KoRule, scoring: Scoring, tax: Tax, suicide: bool, bonus: str, friendly: bool
) -> None:
    rules = Rules(ko, scoring, tax, suicide, bonus, friendly)
    again = Rules.from_json(rules.to_json())
    assert again == rules
    assert (again.name == "custom") is (rules.matching_preset() is None)
