"""Rule sets: ko rule, scoring, tax, suicide, handicap compensation, friendly passes and the button, with
KataGo's named presets.

The presets, their names and their meanings follow KataGo 1.17.2 (cpp/game/rules.cpp, ``parseRulesHelper``; see
docs/nets.md). ``to_json``/``from_json`` use the keys of KataGo's ``kata-get-rules`` answer, so GTP front ends can
pass rules through unchanged; ``Rules.parse`` reads every form KataGo's ``kata-set-rules`` reads: a preset name, a
JSON object, or KataGo's compact ``koSIMPLEscoreAREA...`` string.

>>> Rules.preset("chinese").ko
<KoRule.SIMPLE: 'SIMPLE'>
>>> Rules.from_json(Rules.preset("aga").to_json()) == Rules.preset("aga")
True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any


class KoRule(Enum):
    """Which repetitions are forbidden."""

    SIMPLE = "SIMPLE"  # only the immediate recapture of a single-stone ko
    POSITIONAL = "POSITIONAL"  # no move may recreate an earlier board position
    SITUATIONAL = "SITUATIONAL"  # ... an earlier position with the same player to move


class Scoring(Enum):
    """How the final score counts."""

    AREA = "AREA"  # stones plus surrounded empty points
    TERRITORY = "TERRITORY"  # surrounded empty points plus prisoners


class Tax(Enum):
    """Which points surrounded by a player do not count for them."""

    NONE = "NONE"
    SEKI = "SEKI"  # eyes of groups in seki do not count
    ALL = "ALL"  # every group pays up to two points for its eyes (stone scoring)


_HANDICAP_BONUSES = ("0", "N", "N-1")


@dataclass(frozen=True)
class Rules:
    """One rule set. ``name`` is informational and does not take part in equality."""

    ko: KoRule = KoRule.POSITIONAL
    scoring: Scoring = Scoring.AREA
    tax: Tax = Tax.NONE
    multi_stone_suicide: bool = True  # single-stone suicide is never legal (it would only be a pass)
    white_handicap_bonus: str = "0"  # points White gets for N handicap stones: "0", "N" or "N-1"
    friendly_pass_ok: bool = False  # area scoring: passing before dead stones are removed does not lose them
    has_button: bool = False  # the first pass of the game takes the button, worth half a point
    name: str = field(default="custom", compare=False)

    def __post_init__(self) -> None:
        if self.white_handicap_bonus not in _HANDICAP_BONUSES:
            raise ValueError(f"white_handicap_bonus must be one of {_HANDICAP_BONUSES}")

    @staticmethod
    def preset(name: str) -> Rules:
        """The named rule set (case, ``-``, ``_`` and spaces ignored).

        Raises:
            ValueError: for an unknown name.

        >>> Rules.preset("Tromp_Taylor").name
        'tromp-taylor'
        """
        canonical = _canonical_name(name)
        return replace(_PRESETS[canonical], name=canonical)

    @staticmethod
    def default_komi(name: str) -> float:
        """KataGo's default komi for a preset name.

        >>> Rules.default_komi("japanese"), Rules.default_komi("new-zealand")
        (6.5, 7.0)
        """
        return _DEFAULT_KOMI[_canonical_name(name)]

    @staticmethod
    def preset_names() -> list[str]:
        """Every accepted preset name (canonical spelling)."""
        return list(_PRESETS)

    def handicap_bonus(self, handicap: int) -> int:
        """Points White receives under these rules for ``handicap`` stones (0 when fewer than 2)."""
        if handicap < 2 or self.white_handicap_bonus == "0":
            return 0
        return handicap if self.white_handicap_bonus == "N" else handicap - 1

    def to_json(self) -> dict[str, Any]:
        """The rules as KataGo's ``kata-get-rules`` JSON object."""
        return {
            "friendlyPassOk": self.friendly_pass_ok,
            "hasButton": self.has_button,
            "ko": self.ko.value,
            "scoring": self.scoring.value,
            "suicide": self.multi_stone_suicide,
            "tax": self.tax.value,
            "whiteHandicapBonus": self.white_handicap_bonus,
        }

    @staticmethod
    def from_json(data: dict[str, Any], base: Rules | None = None) -> Rules:
        """Rules from a (possibly partial) kata-get-rules object; missing keys come from ``base``.

        Without ``base`` this reads the object as KataGo does: missing keys come from tromp-taylor, except
        that a missing ``tax`` follows the scoring (SEKI under territory scoring, else NONE).

        Raises:
            ValueError: for unknown keys (``komi`` included: it is set separately) or values.
        """
        rules = base or Rules.preset("tromp-taylor")
        changes: dict[str, Any] = {}
        for key, value in data.items():
            key = _JSON_ALIASES.get(key, key)
            if key not in _JSON_FIELDS:
                raise ValueError(f"unknown rules key: {key!r} (komi is set separately)")
            changes[_JSON_FIELDS[key]] = _parse_json_value(key, value)
        result = replace(rules, **changes, name="custom")
        if base is None and "tax" not in changes:
            result = replace(result, tax=_default_tax(result.scoring))
        return replace(result, name=result.matching_preset() or "custom")

    @staticmethod
    def from_compact(text: str, allow_komi: bool = False) -> Rules:
        """KataGo's compact rules string, e.g. ``koPOSITIONALscoreAREAtaxNONEsui1button0whbNfpok1``.

        The parts may come in any order and each may be left out (tromp-taylor's value is used; a missing tax
        follows the scoring). A ``komi7.5`` part is accepted and ignored only with ``allow_komi`` (SGF RU).

        Raises:
            ValueError: for anything else.

        >>> Rules.from_compact("koSIMPLEscoreAREAtaxALLsui0fpok1").name
        'stone-scoring'
        """
        rest = text.strip()
        if not rest:
            raise ValueError("empty rules text")
        data: dict[str, Any] = {}
        while rest:
            match = _COMPACT_PART.match(rest)
            if match is None or (match.group(1).lower() == "komi" and not allow_komi):
                raise ValueError(f"cannot read rules {text!r} at {rest!r}")
            key, value = _COMPACT_KEYS[match.group(1).lower()], match.group(2).upper()
            if key:
                data[key] = value == "1" if key in _BOOLEAN_KEYS else value
            rest = rest[match.end() :].strip()
        return Rules.from_json(data)

    @staticmethod
    def parse(text: str) -> Rules:
        """Rules from any form KataGo's ``kata-set-rules`` accepts: a preset name or alias, a JSON object of
        rule keys (without komi), or the compact string of ``from_compact`` (without komi).

        Raises:
            ValueError: naming the problem.

        >>> Rules.parse('{"ko":"SIMPLE","scoring":"TERRITORY","suicide":false}').name, Rules.parse("Chinese_OGS").name
        ('japanese', 'chinese-ogs')
        """
        text = text.strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except ValueError as error:
                raise ValueError(f"not a JSON object: {error}") from None
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            return Rules.from_json(data)
        if _COMPACT_PART.match(text) and _canonical_key(text) not in _ALIASES:
            return Rules.from_compact(text)
        return Rules.preset(text)

    def updated(self, key: str, value: str) -> Rules:
        """These rules with one KataGo rules key changed (GTP ``kata-set-rule KEY VALUE``); unlike a JSON
        object, changing the scoring leaves the tax alone, as in KataGo.

        Raises:
            ValueError: for an unknown key or value.
        """
        key = key.strip()
        if key not in _JSON_FIELDS:
            raise ValueError(f"unknown rules key: {key!r}")
        text: Any = value.strip()
        if key in _BOOLEAN_KEYS:
            text = _parse_bool(key, text)
        result = replace(self, **{_JSON_FIELDS[key]: _parse_json_value(key, text)}, name="custom")
        return replace(result, name=result.matching_preset() or "custom")

    def matching_preset(self) -> str | None:
        """The first preset name with exactly these rules, or None."""
        for preset_name, preset in _PRESETS.items():
            if preset == self:
                return preset_name
        return None


_JSON_FIELDS = {
    "ko": "ko",
    "score": "scoring",  # KataGo reads "score" as a synonym of "scoring"
    "scoring": "scoring",
    "tax": "tax",
    "suicide": "multi_stone_suicide",
    "whiteHandicapBonus": "white_handicap_bonus",
    "friendlyPassOk": "friendly_pass_ok",
    "hasButton": "has_button",
}
_BOOLEAN_KEYS = ("suicide", "friendlyPassOk", "hasButton")
# Also accepted: the field names of KataGo's C++ Rules struct.
_JSON_ALIASES = {"koRule": "ko", "scoringRule": "scoring", "taxRule": "tax", "multiStoneSuicideLegal": "suicide"}

# The parts of KataGo's compact rules string (rules.cpp): "scoring" before "score", "N-1" before "N".
_COMPACT_PART = re.compile(
    r"(ko|scoring|score|tax|sui|button|whb|fpok|komi)"
    r"(SIMPLE|POSITIONAL|SITUATIONAL|SPIGHT|AREA|TERRITORY|NONE|SEKI|ALL|N-1|N|[01](?![0-9.])|[-+]?[0-9.]+(?:e[-+]?[0-9]+)?)",
    re.IGNORECASE,
)
_COMPACT_KEYS = {
    "ko": "ko", "scoring": "scoring", "score": "scoring", "tax": "tax", "sui": "suicide", "button": "hasButton",
    "whb": "whiteHandicapBonus", "fpok": "friendlyPassOk", "komi": "",
}


def _default_tax(scoring: Scoring) -> Tax:
    """KataGo's tax when a JSON object or compact string names none: seki eyes are taxed under territory
    scoring only."""
    return Tax.SEKI if scoring is Scoring.TERRITORY else Tax.NONE


def _parse_bool(key: str, text: str) -> bool:
    """KataGo's Global::stringToBool spellings."""
    lowered = text.lower()
    if lowered in ("true", "1", "t", "yes", "y"):
        return True
    if lowered in ("false", "0", "f", "no", "n"):
        return False
    raise ValueError(f"bad value for {key}: {text!r} (expected true or false)")


def _parse_json_value(key: str, value: Any) -> Any:
    enums: dict[str, type[Enum]] = {"ko": KoRule, "score": Scoring, "scoring": Scoring, "tax": Tax}
    if key in enums:
        text = str(value).upper()
        for prefix in ("KO_", "SCORING_", "TAX_"):  # KataGo's long spellings, e.g. KO_POSITIONAL
            text = text.removeprefix(prefix)
        if key == "ko" and text == "SPIGHT":
            raise ValueError("the SPIGHT ko rule is not supported (use SIMPLE, POSITIONAL or SITUATIONAL)")
        try:
            return enums[key](text)
        except ValueError:
            raise ValueError(f"bad value for {key}: {value!r}") from None
    if key == "whiteHandicapBonus":
        text = str(value).upper()
        if text not in _HANDICAP_BONUSES:
            raise ValueError(f"bad value for whiteHandicapBonus: {value!r}")
        return text
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"bad value for {key}: {value!r} (expected a boolean)")


def _rules(
    ko: KoRule, scoring: Scoring, tax: Tax, suicide: bool, bonus: str, friendly: bool, button: bool = False
) -> Rules:
    return Rules(ko, scoring, tax, suicide, bonus, friendly, button)


_K, _S, _T = KoRule, Scoring, Tax
_PRESETS: dict[str, Rules] = {
    "tromp-taylor": _rules(_K.POSITIONAL, _S.AREA, _T.NONE, True, "0", False),
    "chinese": _rules(_K.SIMPLE, _S.AREA, _T.NONE, False, "N", True),
    "chinese-ogs": _rules(_K.POSITIONAL, _S.AREA, _T.NONE, False, "N", True),
    "chinese-kgs": _rules(_K.POSITIONAL, _S.AREA, _T.NONE, False, "N", True),
    "japanese": _rules(_K.SIMPLE, _S.TERRITORY, _T.SEKI, False, "0", False),
    "korean": _rules(_K.SIMPLE, _S.TERRITORY, _T.SEKI, False, "0", False),
    "aga": _rules(_K.SITUATIONAL, _S.AREA, _T.NONE, False, "N-1", True),
    "bga": _rules(_K.SITUATIONAL, _S.AREA, _T.NONE, False, "N-1", True),
    "french": _rules(_K.SITUATIONAL, _S.AREA, _T.NONE, False, "N-1", True),
    "new-zealand": _rules(_K.SITUATIONAL, _S.AREA, _T.NONE, True, "0", True),
    "stone-scoring": _rules(_K.SIMPLE, _S.AREA, _T.ALL, False, "0", True),
    "ancient-territory": _rules(_K.SIMPLE, _S.TERRITORY, _T.ALL, False, "0", False),
    "aga-button": _rules(_K.SITUATIONAL, _S.AREA, _T.NONE, False, "N-1", True, True),
    "goe": _rules(_K.POSITIONAL, _S.AREA, _T.NONE, True, "0", True),
}
_DEFAULT_KOMI = {name: 7.5 for name in _PRESETS} | {
    "japanese": 6.5, "korean": 6.5, "ancient-territory": 6.5, "new-zealand": 7.0, "aga-button": 7.0,
}
# Every other name KataGo accepts, compared after dropping case, "-", "_" and spaces.
_ALIASES = {name.replace("-", ""): name for name in _PRESETS} | {
    "nz": "new-zealand", "ancientarea": "stone-scoring", "ing": "goe",
}


def _canonical_key(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")


def _canonical_name(name: str) -> str:
    key = _canonical_key(name)
    if key not in _ALIASES:
        raise ValueError(f"unknown rules: {name!r} (known: {', '.join(_PRESETS)})")
    return _ALIASES[key]
