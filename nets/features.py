"""KataGo's net inputs, input version 7 (model versions 8..17): 22 spatial and 19 global planes.

Everything is seen from the side to move ("pla"; "opp" is the other colour). The plane families
are declared once, each with its plane count, in the order the net expects them; the totals are
derived and checked against a model's input shape when a net is loaded (``check_model_inputs``).

Spatial planes (one value per point): 0 on board; 1-2 stones of pla, opp; 3-5 stones whose chain
has 1, 2, 3 liberties; 6 points banned by ko or superko; 7-8 encore (always 0 here); 9-13 the
last five moves while colours alternate; 14-16 laddered stones now, 1 and 2 moves ago; 17 moves
that ladder-capture an opp chain with 2 liberties; 18-19 area of pla, opp; 20-21 second encore (0).

Global planes: 0-4 which of the last five moves were passes; 5 komi from pla's view / 20; 6-7 ko
rule; 8 multi-stone suicide; 9 territory scoring; 10-11 tax; 12-13 encore (0); 14 a pass now
ends the game; 15-16 playout doubling (handicap play); 17 the button is still available; 18 the komi parity wave.

How much history the net sees follows KataGo 1.17.2's ``fillRowV7`` (cpp/neuralnet/nninputs.cpp;
docs/nets.md): none at all, and plane 14 off, when a pass would end an area-scored game whose rules
say passing early is friendly (``friendly_pass_ok``: the pass is not treated as ending the game);
only the final pass once the game is over; and never moves from before the game last ended.
Under territory scoring KataGo adds one point of komi for White per black stone on the board
(and one for Black per white stone), the "chill" of ``territory_chill``; under button rules the
half point of whoever took the button is part of the komi too.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np

from miai.go import compiled
from miai.go.coords import PASS, Color
from miai.go.rules import KoRule, Rules, Scoring, Tax

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition

INPUT_VERSION = 7
HISTORY_LENGTH = 5


class FeatureMismatchError(ValueError):
    """The model's input shape does not match the features miai computes."""


# --------------------------------------------------------------------------------------------
# The per-position context every plane function reads (computed once per position).
# --------------------------------------------------------------------------------------------

_T = TypeVar("_T")


class _once(Generic[_T]):
    """A property computed on first read and kept in the instance, as ``functools.cached_property`` but without its
    lock: CPython 3.11's takes one lock per property, shared by every instance, and holds it while the value is
    computed, so that encoding threads waited for each other's area maps and ladder readings (which run without the
    GIL) one property at a time. A ``Position`` is read by one thread only."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> _T:
        if instance is None:
            return self  # type: ignore[return-value]  # read on the class (help(), introspection)
        value = self.func(instance)
        instance.__dict__[self.name] = value  # later reads find it there (this descriptor has no __set__)
        return value


@dataclass(frozen=True)
class Position:
    """One position as the feature functions see it: the game state plus derived facts."""

    state: NetPosition
    passing_hacks: bool = False  # KataGo's enablePassingHacks (its search turns it on; kata-raw-nn does not)
    playout_advantage: float = 0.0  # playout doubling advantage of the side to move (handicap play; 0 = none)
    conservative_root: bool = False  # a search's root under KataGo's conservativePass (``game_end_hidden``)

    @property
    def size(self) -> int:
        return int(self.state.size)

    @property
    def area(self) -> int:
        return self.size * self.size

    @property
    def pla(self) -> Color:
        return Color(self.state.to_play)

    @property
    def opp(self) -> Color:
        return self.pla.opponent

    @_once
    def stones(self) -> np.ndarray:
        return np.asarray(self.state.stones(), dtype=np.int8)

    @_once
    def friendly_pass_hidden(self) -> bool:
        """A pass now would end the game, but the rules make such a pass friendly: KataGo then shows the
        net no history and no "pass ends the game" flag (``shouldSuppressEndGameFromFriendlyPass``)."""
        return self.state.pass_is_friendly()

    @_once
    def area_map(self) -> np.ndarray:
        """Planes 18-19's owner of every point (1 Black, 2 White, 0 nobody): see ``benson.area_map``."""
        from miai.go import benson

        return benson.area_map_for_rules(self.stones, self.size, self.state.rules)

    @_once
    def ending_now_would_not_win(self) -> bool:
        """KataGo's ``finalPhaseAndGameEndWouldNotBeWin``: the area of planes 18-19 (with the group tax of "all"
        tax rules) plus komi leaves the side to move at or below zero. Never under territory scoring, whose
        planes stay empty."""
        rules = self.state.rules
        if rules.scoring == Scoring.TERRITORY:
            return False
        area = self.area_map
        score = int(np.count_nonzero(area == int(self.pla))) - int(np.count_nonzero(area == int(self.opp)))
        if rules.tax == Tax.ALL:
            from miai.go import benson

            basic = benson.area_map(self.stones, self.size, multi_stone_suicide=rules.multi_stone_suicide)
            white_minus_black = benson.independent_life_region_balance(self.stones, self.size, basic)
            score -= 2 * white_minus_black if self.pla == Color.WHITE else -2 * white_minus_black
        return score + self.self_komi <= 0.0

    @_once
    def game_end_hidden(self) -> bool:
        """A pass now would end the game, but the net is shown a game that goes on (no history, plane 14 off):
        a friendly pass, or, with KataGo's passing hacks, a pass that would end the game without a win for the
        side to move ("suppress the net to end the game when losing if it thinks a premature pass will lose
        by less", nninputs.cpp); or, at a search's root under KataGo's conservativePass, any pass that would end the
        game under area scoring (passWouldEndGame; the search goes on past that pass, so the net must not see a game
        about to end: conservativePassAndIsRoot)."""
        if self.friendly_pass_hidden or (self.conservative_root and self.state.pass_ends_game_outright()):
            return True
        return self.passing_hacks and self.state.pass_ends_game() and self.ending_now_would_not_win

    @_once
    def history_limit(self) -> int:
        """How many past moves the net may see: 5; none when the end of the game is hidden; only the final
        pass once the game is over ("one of the passes, at the end of that sequence"); and never more
        than the moves since the game last ended."""
        if self.game_end_hidden:
            return 0
        limit = 1 if self.state.is_over() else HISTORY_LENGTH
        return min(limit, self.state.moves_this_phase())

    @_once
    def history(self) -> list[int]:
        """The last moves (most recent first, PASS included) that the net may see.

        Move k back is shown only while colours alternate back from the side to move: the last
        move must be opp's, the one before pla's, and so on; the first break stops the walk.
        """
        shown: list[int] = []
        expected = int(self.opp)  # colours as plain ints (1 Black, 2 White), as the board keeps them
        limit = self.history_limit
        moves = self.state.moves
        for color, move in reversed(moves[len(moves) - limit :] if limit else []):
            if int(color) != expected:
                break
            shown.append(int(move))
            expected = 3 - expected
        return shown

    @_once
    def self_komi(self) -> float:
        """Komi plus White's handicap and territory bonuses, from pla's view, clamped like KataGo."""
        white_komi = white_komi_bonuses(self.state)
        komi = white_komi if self.pla == Color.WHITE else -white_komi
        bound = self.area + 20.0
        return min(max(komi, -bound), bound)


def white_komi_bonuses(state: NetPosition) -> float:
    """The komi the net sees, from White's view: komi, handicap bonus, territory chill and the button's
    half point once someone has taken it (KataGo's ``currentSelfKomi``)."""
    button = 0.0 if state.button_available else state.button_bonus()
    return float(state.komi) + handicap_bonus(state) + territory_chill(state) + button


def handicap_bonus(state: NetPosition) -> float:
    """Points White receives for Black's handicap (the rules' ``white_handicap_bonus``: 0, N or
    N-1 points; the presets give a bonus only under area scoring).

    KataGo counts the black stones set up before the game plus an initial run of black moves
    (free placement by repeated black moves), and ignores a single one.
    """
    stones = int(state.handicap)
    for color, move in state.moves:
        if Color(color) != Color.BLACK:
            break
        if move != PASS:
            stones += 1
    if stones <= 1:
        return 0.0
    return float(state.rules.handicap_bonus(stones))


def territory_chill(state: NetPosition) -> float:
    """Under territory scoring, one point to White for every stone Black has put on the board
    (setup stones and moves) and one to Black for every White stone: each stone fills a point of
    its owner's territory, and KataGo folds this into the komi the net sees rather than into the
    board. 0 under area scoring. (KataGo's BoardHistory "chill"; not in KATAGO.md section 3.)
    """
    if state.rules.scoring != Scoring.TERRITORY:
        return 0.0
    # Stones put on the board = stones there now + stones captured since (suicides included).
    stones = np.asarray(state.stones())
    black = int(np.count_nonzero(stones == Color.BLACK)) + state.captures(Color.WHITE)
    white = int(np.count_nonzero(stones == Color.WHITE)) + state.captures(Color.BLACK)
    return float(black - white)


# --------------------------------------------------------------------------------------------
# Declarative plane families.
# --------------------------------------------------------------------------------------------

PlaneFn = Callable[[Position, np.ndarray], None]


@dataclass(frozen=True)
class PlaneFamily:
    """A named group of consecutive planes; ``compute(pos, out)`` writes the family's float32 values
    into ``out``, a zeroed view of the result: ``[count, area]`` (spatial) or ``[count]`` (global).

    Writing into one preallocated array (rather than returning arrays to concatenate) keeps the
    encoder cheap next to the net: it runs for every position a search evaluates.
    """

    name: str
    count: int
    compute: PlaneFn


def _on_board(pos: Position, out: np.ndarray) -> None:
    out[0] = 1.0


def _stones(pos: Position, out: np.ndarray) -> None:
    out[0] = pos.stones == int(pos.pla)
    out[1] = pos.stones == int(pos.opp)


def _liberties(pos: Position, out: np.ndarray) -> None:
    # 0 on empty points; compiled, one flood per chain beats reading the board's chain objects in Python.
    libs = compiled.chain_liberties(pos.stones, pos.size) if compiled.ENABLED else np.asarray(pos.state.liberties())
    for k in range(3):
        out[k] = libs == k + 1


def _ko_bans(pos: Position, out: np.ndarray) -> None:
    banned = list(pos.state.banned_points())
    if banned:
        out[0, banned] = 1.0


def _nothing(pos: Position, out: np.ndarray) -> None:
    """Planes miai always leaves at zero (encore phases, playout doubling)."""


def _recent_moves(pos: Position, out: np.ndarray) -> None:
    for k, move in enumerate(pos.history):
        if move != PASS:
            out[k, move] = 1.0


def _ladders(pos: Position, out: np.ndarray) -> None:
    """Planes 14-17: laddered stones on the boards 0, 1, 2 moves ago, and working ladder moves."""
    # Earlier boards only as far back as the history shown to the net (KataGo's rule). They are read
    # oldest first so that each board can reuse the readings of the one before it (see LadderMemo);
    # the board before the oldest one shown is fetched only as that hint and for its ko point.
    shown = min(len(pos.history), 2)
    played = len(pos.state.moves)
    boards = [pos.stones] + [
        np.asarray(pos.state.board_history(k), dtype=np.int8) for k in range(1, min(shown + 1, played) + 1)
    ]
    planes: list[np.ndarray] = [np.empty(0)] * (shown + 1)
    working = planes[0]
    for k in range(shown, -1, -1):
        previous = boards[k + 1] if k + 1 < len(boards) else None
        move = int(pos.state.moves[played - 1 - k][1]) if previous is not None else PASS  # made board k
        to_play = pos.pla if k % 2 == 0 else pos.opp
        planes[k], moves = _ladder_planes_cached(boards[k], previous, move, pos.size, to_play)
        if k == 0:
            working = moves
    out[0] = planes[0]
    out[1] = planes[1] if shown >= 1 else planes[0]
    out[2] = planes[2] if shown >= 2 else out[1]
    out[3] = working


class _LadderPlanesCache:
    """Ladder planes (14/17) per board, with the per-chain readings behind them.

    Two levels: whole boards hit when a search evaluates a leaf whose boards one and two moves ago
    were its parents' current boards; and ``LadderMemo``'s per-chain readings, reused on a new board
    for every chain its last move cannot affect. Boards are keyed by their stones, the board before
    and the move between (which fix the simple-ko point, computed only on a miss) and the player to
    move. Both levels forget the least recently used boards first; a 19x19 board takes about 4 kB.
    """

    def __init__(self, capacity: int = 8192) -> None:
        from miai.go import ladders  # imported here: only real nets need ladder reading

        self.capacity = capacity
        self.memo = ladders.LadderMemo(capacity)
        self._lock = threading.Lock()  # evaluators may encode from several threads
        self._planes: OrderedDict[tuple[bytes, bytes, int, int, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()

    def __call__(
        self, stones: np.ndarray, previous: np.ndarray | None, move: int, size: int, to_play: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(laddered stones, working moves) of a board, made by ``move`` from ``previous`` (None for
        the first board of the game; then ``move`` is ignored)."""
        from miai.go import ladders

        before = b"" if previous is None else previous.tobytes()
        key = (stones.tobytes(), before, move if previous is not None else PASS, size, int(to_play))
        with self._lock:
            found = self._planes.get(key)
            if found is not None:
                self._planes.move_to_end(key)
                return found
        # Read outside the lock: two threads may read the same board, with the same result.
        ko = None if previous is None else ladders.simple_ko_point(previous, stones, move, size)
        # Compiled, a whole board is read faster than the per-chain memo is consulted in Python.
        memo = None if compiled.ENABLED else self.memo
        laddered, working = ladders.ladder_planes(stones, size, int(to_play), ko, memo=memo, previous=previous)
        laddered.setflags(write=False)
        working.setflags(write=False)
        with self._lock:
            self._planes[key] = (laddered, working)
            if len(self._planes) > self.capacity:
                self._planes.popitem(last=False)
        return laddered, working

    def cache_clear(self) -> None:
        """Forget every board (benchmarks use this to measure reading from scratch)."""
        with self._lock:
            self._planes.clear()
        self.memo.clear()


_ladder_planes_cached = _LadderPlanesCache()


def clear_ladder_memo() -> None:
    """Forget every board's ladder planes and readings: the next encodings read their ladders from scratch, as a
    process's first ones do (benchmarks measure that)."""
    _ladder_planes_cached.cache_clear()


def _area(pos: Position, out: np.ndarray) -> None:
    area = pos.area_map
    out[0] = area == int(pos.pla)
    out[1] = area == int(pos.opp)


def _previous_passes(pos: Position, out: np.ndarray) -> None:
    for k, move in enumerate(pos.history):
        if move == PASS:
            out[k] = 1.0


def _komi(pos: Position, out: np.ndarray) -> None:
    out[0] = pos.self_komi / 20.0


_KO_RULE_VALUES = {KoRule.SIMPLE: (0.0, 0.0), KoRule.POSITIONAL: (1.0, 0.5), KoRule.SITUATIONAL: (1.0, -0.5)}


def _ko_rule(pos: Position, out: np.ndarray) -> None:
    out[:] = _KO_RULE_VALUES[pos.state.rules.ko]


def _suicide(pos: Position, out: np.ndarray) -> None:
    out[0] = float(pos.state.rules.multi_stone_suicide)


def _territory(pos: Position, out: np.ndarray) -> None:
    out[0] = float(pos.state.rules.scoring == Scoring.TERRITORY)


def _tax(pos: Position, out: np.ndarray) -> None:
    tax = pos.state.rules.tax
    out[:] = (float(tax != Tax.NONE), float(tax == Tax.ALL))


def _pass_ends_game(pos: Position, out: np.ndarray) -> None:
    out[0] = float(pass_would_end_phase(pos))


def pass_would_end_phase(pos: Position) -> bool:
    """Whether a pass by the side to move would end the game (also after the game has ended, as in
    KataGo 1.17), unless that is hidden (``Position.game_end_hidden``). Miai plays no encore phases."""
    return not pos.game_end_hidden and pos.state.pass_ends_game()


def _playout_doubling(pos: Position, out: np.ndarray) -> None:
    # KataGo (fillRowV7): "used for handicap play"; the flag plane is there because training behaves differently as
    # soon as the advantage is nonzero, however slightly.
    if pos.playout_advantage != 0.0:
        out[0] = 1.0
        out[1] = 0.5 * pos.playout_advantage


def _button(pos: Position, out: np.ndarray) -> None:
    out[0] = float(pos.state.button_available)


def _komi_wave(pos: Position, out: np.ndarray) -> None:
    if pos.state.rules.scoring == Scoring.AREA:
        out[0] = komi_parity_wave(pos.self_komi, pos.area)


def komi_parity_wave(self_komi: float, board_area: int) -> float:
    """The triangle wave of KATAGO.md section 3 (global plane 18).

    ``delta`` is how far the komi is above the nearest komi below it that allows a draw (same
    parity as the board's point count); the wave rises over the half point after a drawable komi.

    >>> komi_parity_wave(-7.5, 361)
    -0.5
    """
    if board_area % 2 == 0:
        floor = math.floor(self_komi / 2.0) * 2.0
    else:
        floor = math.floor((self_komi - 1.0) / 2.0) * 2.0 + 1.0
    delta = min(max(self_komi - floor, 0.0), 2.0)
    if delta < 0.5:
        return delta
    if delta < 1.5:
        return 1.0 - delta
    return delta - 2.0


SPATIAL_V7: tuple[PlaneFamily, ...] = (
    PlaneFamily("on_board", 1, _on_board),
    PlaneFamily("stones", 2, _stones),
    PlaneFamily("liberties_1_2_3", 3, _liberties),
    PlaneFamily("ko_bans", 1, _ko_bans),
    PlaneFamily("encore_ko", 2, _nothing),
    PlaneFamily("recent_moves", HISTORY_LENGTH, _recent_moves),
    PlaneFamily("ladders", 4, _ladders),
    PlaneFamily("area", 2, _area),
    PlaneFamily("second_encore_stones", 2, _nothing),
)

GLOBAL_V7: tuple[PlaneFamily, ...] = (
    PlaneFamily("recent_passes", HISTORY_LENGTH, _previous_passes),
    PlaneFamily("komi", 1, _komi),
    PlaneFamily("ko_rule", 2, _ko_rule),
    PlaneFamily("multi_stone_suicide", 1, _suicide),
    PlaneFamily("territory_scoring", 1, _territory),
    PlaneFamily("tax", 2, _tax),
    PlaneFamily("encore_phase", 2, _nothing),
    PlaneFamily("pass_ends_game", 1, _pass_ends_game),
    PlaneFamily("playout_doubling", 2, _playout_doubling),
    PlaneFamily("button", 1, _button),
    PlaneFamily("komi_parity_wave", 1, _komi_wave),
)

NUM_SPATIAL = sum(f.count for f in SPATIAL_V7)
NUM_GLOBAL = sum(f.count for f in GLOBAL_V7)


def family_planes(name: str) -> tuple[bool, slice]:
    """Where the planes of the family ``name`` sit: (spatial?, their slice of the spatial or global input)."""
    for spatial, families in ((True, SPATIAL_V7), (False, GLOBAL_V7)):
        start = 0
        for family in families:
            if family.name == name:
                return spatial, slice(start, start + family.count)
            start += family.count
    known = ", ".join(f.name for f in (*SPATIAL_V7, *GLOBAL_V7))
    raise ValueError(f"no input family {name!r} (families: {known})")


def check_model_inputs(spatial_channels: int, global_channels: int) -> None:
    """Fail loudly when a model expects other inputs than input version 7 provides."""
    if (spatial_channels, global_channels) != (NUM_SPATIAL, NUM_GLOBAL):
        raise FeatureMismatchError(
            f"model expects {spatial_channels} spatial and {global_channels} global input planes; "
            f"miai computes KataGo input version {INPUT_VERSION}: {NUM_SPATIAL} and {NUM_GLOBAL}"
        )


# --------------------------------------------------------------------------------------------
# Encoding.
# --------------------------------------------------------------------------------------------


def _run(families: Sequence[PlaneFamily], pos: Position, out: np.ndarray) -> None:
    start = 0
    for family in families:
        family.compute(pos, out[start : start + family.count])
        start += family.count


def encode(state: NetPosition, passing_hacks: bool = False, playout_advantage: float = 0.0,
           conservative_root: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The net inputs of one position at its own size; ``passing_hacks`` as KataGo's search sees them
    (``Position.game_end_hidden``), off as kata-raw-nn sees them; ``playout_advantage``: the playout doubling
    advantage of the side to move (globals 15-16; KataGo's playoutDoublingAdvantage as its search passes it);
    ``conservative_root``: the position is a search's root under KataGo's conservativePass.

    Returns ``(spatial, global)``: float32 ``[22, size, size]`` and ``[19]``.
    """
    pos = Position(state, passing_hacks, playout_advantage, conservative_root)
    spatial = np.zeros((NUM_SPATIAL, pos.area), dtype=np.float32)
    global_ = np.zeros(NUM_GLOBAL, dtype=np.float32)
    _run(SPATIAL_V7, pos, spatial)
    _run(GLOBAL_V7, pos, global_)
    return spatial.reshape(NUM_SPATIAL, pos.size, pos.size), global_


def place(spatial: np.ndarray, nn_len: int, out: np.ndarray | None = None) -> np.ndarray:
    """Put ``[C, s, s]`` planes at the top-left of an ``[C, nn_len, nn_len]`` buffer, zero
    elsewhere (the on-board plane 0 is the net's mask, so the net ignores the padding)."""
    channels, size, _ = spatial.shape
    if size > nn_len:
        raise ValueError(f"a {size}x{size} board does not fit a net built for {nn_len}x{nn_len}")
    if out is None:
        out = np.zeros((channels, nn_len, nn_len), dtype=np.float32)
    else:
        out.fill(0.0)
    out[:, :size, :size] = spatial
    return out


def allows_no_result(rules: Rules) -> bool:
    """Whether a game under ``rules`` can end without a result (long cycles): only with simple ko
    or territory scoring. Otherwise the net's no-result output is dropped (KATAGO.md section 5)."""
    return rules.ko == KoRule.SIMPLE or rules.scoring == Scoring.TERRITORY


def input_key(state: NetPosition) -> bytes:
    """A 16-byte digest of everything the net inputs depend on, for evaluation caches.

    Covers the boards now, 1 and 2 moves ago, the side to move, ko/superko bans, the last five
    moves, rules, komi with its bonuses, the pass state (passes, game over, whether a pass ends the
    game, the button) and how many moves since the game last ended the net may see.
    """
    digest = hashlib.blake2b(digest_size=16)
    for k in range(3):
        digest.update(np.asarray(state.board_history(k), dtype=np.int8).tobytes())
    recent = [(int(c), int(m)) for c, m in state.moves[-HISTORY_LENGTH:]]
    facts = (
        int(state.size),
        int(state.to_play),
        sorted(int(p) for p in state.banned_points()),
        recent,
        sorted(state.rules.to_json().items()),
        white_komi_bonuses(state),
        int(state.consecutive_passes),
        bool(state.is_over()),
        bool(state.pass_ends_game()),
        bool(state.pass_repeats_position()),
        bool(state.button_available),
        min(state.moves_this_phase(), HISTORY_LENGTH),
    )
    digest.update(repr(facts).encode())
    return digest.digest()


def situation_key(state: NetPosition) -> bytes:
    """A 16-byte digest of the situation without the moves that led there, for evaluation caches, as KataGo keys its
    NN cache (``NNInputs::getHash``, nninputs.cpp: "we already tolerate caching and reusing evals across distinct
    transpositions with different history, for performance reasons"): the stones, the side to move, ko and superko
    bans, rules and komi (the situation hash), the pass state (game over, whether a pass ends the game or would be a
    friendly one, the button) and the komi bonuses. Two move orders to one situation share an evaluation, made with
    the history planes of whichever came first.
    """
    facts = (
        int(state.size),
        int(state.situation_hash),
        white_komi_bonuses(state),
        bool(state.is_over()),
        bool(state.pass_ends_game()),
        bool(state.pass_is_friendly()),
        bool(state.button_available),
    )
    return hashlib.blake2b(repr(facts).encode(), digest_size=16).digest()


# How an evaluation cache may key positions (``net.cache_key``).
CACHE_KEYS: dict[str, Callable[[NetPosition], bytes]] = {"situation": situation_key, "input": input_key}
