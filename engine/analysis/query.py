"""Reading one query of KataGo's analysis protocol into the positions to search.

A query names a game (board size, rules, komi, setup stones, moves) and the turns to analyse; each turn becomes one
:class:`Job`. Every problem is a :class:`QueryError` naming the query field, which the engine answers with
``{"id": ..., "field": ..., "error": ...}``; nothing is queued then. Fields the engine does not know give warnings
and the query still runs, as in KataGo.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from miai.engine.analysis.settings import AnalysisSettings, apply_settings, warning_texts
from miai.engine.katago_config import KatagoConfigError
from miai.go.coords import MAX_SIZE, PASS, Color, parse_color, parse_gtp
from miai.go.errors import GoError, IllegalReason, InvalidMoveError
from miai.go.rules import Rules, Scoring
from miai.go.state import GameState
from miai.gtp.player import AnalyzeRequest, MoveRestriction

__all__ = ["QueryError", "Job", "ParsedQuery", "parse_query", "parse_vertex"]

# Top-level fields a query may have (KataGo's analysis engine, v1.17.2).
KNOWN_FIELDS = frozenset({
    "id", "action", "terminateId", "turnNumbers", "boardXSize", "boardYSize", "initialStones", "moves",
    "initialPlayer", "analyzeTurns", "priorities", "rules", "komi", "whiteHandicapBonus", "overrideSettings",
    "maxVisits", "analysisPVLen", "rootFpuReductionMax", "rootPolicyTemperature", "includeMovesOwnership",
    "includeMovesOwnershipStdev", "includeOwnership", "includeOwnershipStdev", "includePolicy", "includePVVisits",
    "includeNoResultValue", "reportDuringSearchEvery", "firstReportDuringSearchAfter", "priority", "allowMoves",
    "avoidMoves",
})
_PRIORITY_LIMIT = (1 << 62) - 1
_XY = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


class QueryError(ValueError):
    """A query field that cannot be used: ``field`` names it, the message says why."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


@dataclass
class Job:
    """One turn of a query: the position to search and how."""

    id: str
    turn: int
    priority: int
    state: GameState
    settings: AnalysisSettings
    request: AnalyzeRequest  # what to include, report times, avoidMoves/allowMoves: the request kata-analyze makes


@dataclass
class ParsedQuery:
    """The jobs of one query and the warnings to send before them."""

    id: str
    jobs: list[Job]  # none when analyzeTurns is empty
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (field, message)


def parse_vertex(text: Any, size: int, *, allow_pass: bool) -> int:
    """A GTP vertex (``Q16``, ``pass``) or KataGo's explicit ``(x,y)`` (x from the left, y from the top).

    Raises:
        ValueError: anything else, or a point off the board.
    """
    if not isinstance(text, str):
        raise ValueError(f"not a string: {text!r}")
    match = _XY.match(text.strip())
    if match:
        x, y = int(match.group(1)), int(match.group(2))
        if x >= size or y >= size:
            raise ValueError(f"off the {size}x{size} board: {text}")
        return y * size + x
    move = parse_gtp(text, size)
    if move == PASS and not allow_pass:
        raise ValueError("pass is not a board point")
    return move


def parse_query(data: dict[str, Any], base: AnalysisSettings) -> ParsedQuery:
    """The jobs of an analysis query (``data`` has a string ``id`` and no ``action``).

    Raises:
        QueryError: the first field that cannot be used.
    """
    query_id = str(data["id"])
    warnings: list[tuple[str, str]] = []
    size = _board_size(data)
    setup = _stone_list(data, "initialStones", size, allow_pass=False) if "initialStones" in data else []
    if "moves" not in data:
        raise QueryError("moves", "required: an array of [player, vertex] pairs")
    moves = _stone_list(data, "moves", size, allow_pass=True)
    turns = _analyze_turns(data, len(moves))
    priorities = _priorities(data, turns)
    rules, komi = _rules_and_komi(data)
    settings = _settings(data, base, query_id, warnings)
    included = _included(data)
    every, first = _report_times(data)
    avoid, allow = _move_filters(data, size)
    request = dataclasses.replace(included, avoid=avoid, allow=allow, interval=every, first_report=first)
    if "includeNoResultValue" in data and _boolean(data, "includeNoResultValue"):
        warnings.append(("includeNoResultValue", "miai's search keeps no no-result value; the field is left out"))
    warnings += [(key, "Unexpected or unused field, do you have a typo?") for key in data if key not in KNOWN_FIELDS]
    states = _turn_states(data, size, rules, komi, setup, moves, set(turns))
    jobs = [Job(query_id, turn, priorities.get(turn, 0), states[turn], settings, request)
            for turn in sorted(set(turns))]
    return ParsedQuery(query_id, jobs, warnings)


# ---------------------------------------------------------------------------------------------- fields
def _included(data: dict[str, Any]) -> AnalyzeRequest:
    """The query's include... fields as an analysis request (kata-analyze's type); includePVVisits brings pvVisits
    and pvEdgeVisits."""
    def flag(key: str) -> bool:
        return _boolean(data, key) if key in data else False

    return AnalyzeRequest(ownership=flag("includeOwnership"),
                          ownership_stdev=flag("includeOwnershipStdev"), moves_ownership=flag("includeMovesOwnership"),
                          moves_ownership_stdev=flag("includeMovesOwnershipStdev"), policy=flag("includePolicy"),
                          pv_visits=flag("includePVVisits"), pv_edge_visits=flag("includePVVisits"))


def _integer(data: dict[str, Any], key: str, lo: int, hi: int, message: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise QueryError(key, message)
    if not lo <= int(value) <= hi:
        raise QueryError(key, message)
    return int(value)


def _number(data: dict[str, Any], key: str, lo: float, hi: float, message: str) -> float:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise QueryError(key, message)
    if not lo <= value <= hi:
        raise QueryError(key, message)
    return float(value)


def _boolean(data: dict[str, Any], key: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise QueryError(key, "must be a boolean (true or false)")
    return value


def _board_size(data: dict[str, Any]) -> int:
    message = f"must be an integer from 2 to {MAX_SIZE}"
    for key in ("boardXSize", "boardYSize"):
        if key not in data:
            raise QueryError(key, f"required: {message}")
    width = _integer(data, "boardXSize", 2, MAX_SIZE, message)
    height = _integer(data, "boardYSize", 2, MAX_SIZE, message)
    if width != height:
        raise QueryError("boardYSize", f"miai plays square boards only (boardXSize {width}, boardYSize {height})")
    return width


def _stone_list(data: dict[str, Any], key: str, size: int, *, allow_pass: bool) -> list[tuple[Color, int]]:
    shape = 'must be an array of pairs ["B" or "W", vertex]'
    items = data[key]
    if not isinstance(items, list):
        raise QueryError(key, shape)
    out = []
    for item in items:
        if not isinstance(item, list) or len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise QueryError(key, shape)
        try:
            color = parse_color(item[0])
        except InvalidMoveError:
            raise QueryError(key, f"cannot read player {item[0]!r}") from None
        try:
            move = parse_vertex(item[1], size, allow_pass=allow_pass)
        except ValueError:
            raise QueryError(key, f"cannot read board location {item[1]!r} on a {size}x{size} board") from None
        out.append((color, move))
    return out


def _analyze_turns(data: dict[str, Any], move_count: int) -> list[int]:
    if "analyzeTurns" not in data:
        return [move_count]
    turns = data["analyzeTurns"]
    if not isinstance(turns, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns):
        raise QueryError("analyzeTurns", "must be an array of integers (turns to analyse)")
    for turn in turns:
        if not 0 <= turn <= move_count:
            raise QueryError("analyzeTurns", f"invalid turn number {turn} (the game has turns 0 to {move_count})")
    return list(turns)


def _priorities(data: dict[str, Any], turns: list[int]) -> dict[int, int]:
    if "priorities" in data:
        if "priority" in data:
            raise QueryError("priority", "give either priority or priorities, not both")
        values = data["priorities"]
        if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise QueryError("priorities", "must be an array of integers")
        if "analyzeTurns" not in data:
            raise QueryError("priorities", "needs analyzeTurns (one priority per analysed turn)")
        if len(values) != len(turns):
            raise QueryError("priorities", f"must have as many entries as analyzeTurns ({len(turns)})")
        if any(abs(v) > _PRIORITY_LIMIT for v in values):
            raise QueryError("priorities", "priorities must lie between -2^62 and 2^62")
        return dict(zip(turns, values))
    if "priority" in data:
        priority = _integer(data, "priority", -_PRIORITY_LIMIT, _PRIORITY_LIMIT,
                            "must be an integer between -2^62 and 2^62")
        return {turn: priority for turn in turns}
    return {}


def _rules_and_komi(data: dict[str, Any]) -> tuple[Rules, float]:
    if "rules" not in data:
        raise QueryError("rules", 'required: a rules name such as "chinese" or "tromp-taylor", or a rules object')
    rules, komi = parse_rules(data["rules"])
    if "whiteHandicapBonus" in data:
        bonus = data["whiteHandicapBonus"]
        if not isinstance(bonus, str) or bonus.upper() not in ("0", "N", "N-1"):
            raise QueryError("whiteHandicapBonus", 'must be "0", "N" or "N-1"')
        rules = dataclasses.replace(rules, white_handicap_bonus=bonus.upper())
    if "komi" in data:
        komi = _number(data, "komi", -400.0, 400.0, "must be an integer or half-integer from -400 to 400")
        if not (2 * komi).is_integer():
            raise QueryError("komi", "must be an integer or half-integer from -400 to 400")
    return rules, komi


def parse_rules(value: Any) -> tuple[Rules, float]:
    """A rules name (KataGo's and KaTrain's spellings), a JSON object of rules, or that object as text; with the
    default komi KataGo would guess for them (7.5 area, 6.5 territory, or a ``komi`` inside the object).

    Raises:
        QueryError: for anything else.
    """
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise QueryError("rules", f"cannot parse rules: {value}") from None
    if isinstance(value, str):
        try:
            return Rules.preset(value), Rules.default_komi(value)
        except ValueError:
            raise QueryError("rules", f"cannot parse rules: {value!r} (known: {', '.join(Rules.preset_names())})")
    if isinstance(value, dict):
        fields = dict(value)
        komi_value = fields.pop("komi", None)
        try:
            rules = Rules.from_json(fields)
        except ValueError as exc:
            raise QueryError("rules", f"cannot parse rules {json.dumps(value)}: {exc}") from None
        default = 6.5 if rules.scoring is Scoring.TERRITORY else 7.5
        if komi_value is not None and (isinstance(komi_value, bool) or not isinstance(komi_value, (int, float))):
            raise QueryError("rules", f"komi in the rules object must be a number, got {komi_value!r}")
        return rules, float(komi_value) if komi_value is not None else default
    raise QueryError("rules", 'must be a rules name such as "chinese" or "tromp-taylor", or a rules object')


def _settings(data: dict[str, Any], base: AnalysisSettings, query_id: str,
              warnings: list[tuple[str, str]]) -> AnalysisSettings:
    """The query's search settings: overrideSettings first, then the top-level fields, which take precedence."""
    settings = base
    if "overrideSettings" in data:
        overrides = data["overrideSettings"]
        if not isinstance(overrides, dict):
            raise QueryError("overrideSettings", "must be an object")
        try:
            applied = apply_settings(settings, overrides, per_query=True)
        except KatagoConfigError as exc:
            raise QueryError("overrideSettings", f"cannot set settings: {exc}") from None
        settings = applied.settings
        warnings += [("overrideSettings", text) for text in warning_texts(applied)]
    top: dict[str, float] = {}  # KataGo-named settings: integers and numbers
    if "maxVisits" in data:
        top["maxVisits"] = _integer(data, "maxVisits", 1, 1 << 50, "must be an integer from 1 to 2^50")
    if "analysisPVLen" in data:
        top["analysisPVLen"] = _integer(data, "analysisPVLen", 1, 1000, "must be an integer from 1 to 1000")
    if "rootFpuReductionMax" in data:
        top["rootFpuReductionMax"] = _number(data, "rootFpuReductionMax", 0.0, 2.0, "must be a number from 0 to 2")
    if "rootPolicyTemperature" in data:
        top["rootPolicyTemperature"] = _number(data, "rootPolicyTemperature", 0.01, 100.0,
                                               "must be a number from 0.01 to 100")
    return apply_settings(settings, top).settings if top else settings


def _report_times(data: dict[str, Any]) -> tuple[float | None, float | None]:
    message = "must be a number of seconds from 0.001 to 1000000"
    every = first = None
    if "reportDuringSearchEvery" in data:
        every = first = _number(data, "reportDuringSearchEvery", 0.001, 1e6, message)
    if "firstReportDuringSearchAfter" in data:
        first = _number(data, "firstReportDuringSearchAfter", 0.001, 1e6, message)
        every = every if every is not None else 1e30
    return every, first


def _move_filters(data: dict[str, Any], size: int
                  ) -> tuple[tuple[MoveRestriction, ...], tuple[MoveRestriction, ...]]:
    """avoidMoves or allowMoves, each entry for the first ``untilDepth`` plies of its player (as KataGo)."""
    if "allowMoves" in data and "avoidMoves" in data:
        raise QueryError("allowMoves", "give either allowMoves or avoidMoves, not both")
    key = "allowMoves" if "allowMoves" in data else "avoidMoves"
    if key not in data:
        return (), ()
    entries = list(_filter_entries(data[key], key, size))
    if key == "allowMoves" and len({entry.color for entry in entries}) != len(entries):
        raise QueryError(key, "allowMoves allows at most one entry per player")
    filters = tuple(entries)
    return ((), filters) if key == "allowMoves" else (filters, ())


def _filter_entries(items: Any, key: str, size: int) -> Iterator[MoveRestriction]:
    shape = "must be a list of objects with fields player, moves and untilDepth"
    if not isinstance(items, list):
        raise QueryError(key, shape)
    for item in items:
        if not isinstance(item, dict) or not {"player", "moves", "untilDepth"} <= set(item):
            raise QueryError(key, shape)
        try:
            color = parse_color(str(item["player"]))
        except InvalidMoveError:
            raise QueryError(key, 'player must be "B" or "W"') from None
        if not isinstance(item["moves"], list):
            raise QueryError(key, "moves must be an array of vertices")
        try:
            moves = tuple(parse_vertex(text, size, allow_pass=True) for text in item["moves"])
        except ValueError as exc:
            raise QueryError(key, f"cannot read board location: {exc}") from None
        depth = item["untilDepth"]
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise QueryError(key, "untilDepth must be a positive integer")
        yield MoveRestriction(color, moves, depth)


# ---------------------------------------------------------------------------------------------- positions
def _turn_states(data: dict[str, Any], size: int, rules: Rules, komi: float, setup: list[tuple[Color, int]],
                 moves: list[tuple[Color, int]], turns: set[int]) -> dict[int, GameState]:
    """The position before each analysed turn (turn k = after k moves)."""
    state = GameState(size, rules, komi)
    _place_setup(state, setup)
    first = _initial_player(data, state, setup, moves)
    if first != state.to_play:
        state.set_to_play(first)
    states = {}
    for turn, (color, move) in enumerate(moves):
        if turn in turns:
            states[turn] = state.copy()
        _play_tolerant(state, color, move, turn, size)
    if len(moves) in turns:
        states[len(moves)] = state
    return states


def _place_setup(state: GameState, setup: list[tuple[Color, int]]) -> None:
    black = [m for c, m in setup if c == Color.BLACK]
    white = [m for c, m in setup if c == Color.WHITE]
    try:
        if len(black) >= 2 and not white:  # KataGo counts black-only setup stones as handicap stones
            state.set_handicap(black)
        elif setup:
            state.set_stones(black, white)
    except GoError as exc:
        raise QueryError("initialStones", f"cannot place the stones: {exc}") from None


def _initial_player(data: dict[str, Any], state: GameState, setup: list[tuple[Color, int]],
                    moves: list[tuple[Color, int]]) -> Color:
    """``initialPlayer``, else the first mover, else White after black-only handicap stones, else Black."""
    if "initialPlayer" in data:
        try:
            return parse_color(str(data["initialPlayer"]))
        except InvalidMoveError:
            raise QueryError("initialPlayer", 'must be "B" or "W"') from None
    if moves:
        return moves[0][0]
    return state.to_play


def _play_tolerant(state: GameState, color: Color, move: int, turn: int, size: int) -> None:
    """Play a recorded move. Like KataGo, a game record may break ko and superko (the move is played anyway);
    a move on an occupied point or a forbidden suicide is an error naming the move."""
    try:
        reason = state.legality(move, color)
    except GoError:
        reason = IllegalReason.OCCUPIED
    if reason in (IllegalReason.KO, IllegalReason.SUPERKO) and color == state.to_play:
        state.play_unchecked(move)
    elif reason is None:
        state.push(move, color)
    else:
        from miai.go.coords import to_gtp

        raise QueryError("moves", f"Illegal move {turn}: {to_gtp(move, size)}")
