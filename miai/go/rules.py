"""Rule sets: ko rule, scoring, tax, suicide and handicap compensation, with KataGo's named presets.

The presets and their meanings follow KataGo (its rules page, https://lightvector.github.io/KataGo/rules.html,
and cpp/game/rules.cpp). ``to_json``/``from_json`` use the keys
of KataGo's ``kata-get-rules`` answer, so GTP front ends can pass rules through unchanged.

>>> Rules.preset("chinese").ko
<KoRule.SIMPLE: 'SIMPLE'>
>>> Rules.from_json(Rules.preset("aga").to_json()) == Rules.preset("aga")
True
"""

from __future__ import annotations

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
    friendly_pass_ok: bool = False
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
            "hasButton": False,
            "ko": self.ko.value,
            "scoring": self.scoring.value,
            "suicide": self.multi_stone_suicide,
            "tax": self.tax.value,
            "whiteHandicapBonus": self.white_handicap_bonus,
        }

    @staticmethod
    def from_json(data: dict[str, Any], base: Rules | None = None) -> Rules:
        """Rules from a (possibly partial) kata-get-rules object; missing keys come from ``base`` (tromp-taylor).

        Raises:
            ValueError: for unknown keys or values, or ``hasButton: true`` (button Go is not supported).
        """
        rules = base or Rules.preset("tromp-taylor")
        changes: dict[str, Any] = {}
        for key, value in data.items():
            key = _JSON_ALIASES.get(key, key)
            if key not in _JSON_FIELDS:
                raise ValueError(f"unknown rules key: {key!r} (komi is set separately)")
            if key == "hasButton":
                if value:
                    raise ValueError("button Go is not supported")
                continue
            changes[_JSON_FIELDS[key]] = _parse_json_value(key, value)
        result = replace(rules, **changes, name="custom")
        return replace(result, name=result.matching_preset() or "custom")

    def matching_preset(self) -> str | None:
        """The first preset name with exactly these rules, or None."""
        for preset_name, preset in _PRESETS.items():
            if preset == self:
                return preset_name
        return None


_JSON_FIELDS = {
    "ko": "ko",
    "scoring": "scoring",
    "tax": "tax",
    "suicide": "multi_stone_suicide",
    "whiteHandicapBonus": "white_handicap_bonus",
    "friendlyPassOk": "friendly_pass_ok",
    "hasButton": "",
}
# KataGo also accepts its longer internal names in kata-set-rules JSON.
_JSON_ALIASES = {"koRule": "ko", "scoringRule": "scoring", "taxRule": "tax", "multiStoneSuicideLegal": "suicide"}


def _parse_json_value(key: str, value: Any) -> Any:
    enums: dict[str, type[Enum]] = {"ko": KoRule, "scoring": Scoring, "tax": Tax}
    if key in enums:
        text = str(value).upper()
        for prefix in ("KO_", "SCORING_", "TAX_"):  # KataGo's long spellings, e.g. KO_POSITIONAL
            text = text.removeprefix(prefix)
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


def _rules(ko: KoRule, scoring: Scoring, tax: Tax, suicide: bool, bonus: str, friendly: bool) -> Rules:
    return Rules(ko, scoring, tax, suicide, bonus, friendly)


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
}
_DEFAULT_KOMI = {name: 7.5 for name in _PRESETS} | {"japanese": 6.5, "korean": 6.5, "new-zealand": 7.0}
_ALIASES = {name.replace("-", ""): name for name in _PRESETS} | {"nz": "new-zealand"}


def _canonical_name(name: str) -> str:
    key = name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key not in _ALIASES:
        raise ValueError(f"unknown rules: {name!r} (known: {', '.join(_PRESETS)})")
    return _ALIASES[key]
