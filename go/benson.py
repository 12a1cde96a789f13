"""Benson's unconditional life ("pass-alive") and the area map of KataGo's input planes 18/19.

Everything here is a pure function of a flat stones array (0 empty, 1 black, 2 white, index
``y * size + x`` with ``y = 0`` the top row) and the board ``size``; no board object is needed.

Terminology (Benson 1976, as KataGo applies it for area scoring):

- For a player P, a **region** is a maximal orthogonally connected set of points that are not P's
  stones (empty points and the opponent's stones). Regions are grown from empty points.
- A region is **vital** to a P chain when every empty point of the region is a liberty of that chain.
  When multi-stone suicide is legal, the opponent's stones inside the region must be adjacent to the
  chain too (the opponent could otherwise refill the region by suicide), as in KataGo.
- Repeatedly: a chain with fewer than two vital regions (counting only regions none of whose bordering
  chains has been removed yet) is removed. The chains that survive are **pass-alive**: the opponent cannot
  capture them even if P always passes.
- A region bordered only by pass-alive chains is **pass-alive territory** when at most one of its points
  is "internal" (not adjacent to any P stone): the opponent can never make two eyes there, so any of
  their stones inside are dead too.

KataGo's area computation adds three options on top (``Board::calculateArea`` in cpp/game/board.cpp):
``safe_big_territories`` (any region free of opponent stones and bordered only by pass-alive chains),
``unsafe_big_territories`` (any region free of opponent stones, but only on points still unmarked), and
``non_pass_alive_stones`` (every other stone counts for its own colour). Black is processed before White
and territory marks of the second player may overwrite the first player's *unsafe* marks only.

``calculate_area`` runs for every position the feature encoder sees; it first proves cheaply, for most
positions, that a colour has no chain with two vital regions, and skips Benson's iteration for it.
``calculate_area_by_flood`` is the plain version the fast one is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from miai.go import compiled
from miai.go.coords import Color
from miai.go.geometry import flood, neighbor_table
from miai.go.rules import Rules, Scoring, Tax

# Plain ints for the hot loops: CPython specialises comparisons and arithmetic on exact ints only (an ``IntEnum``
# stored in a colour list slows every later read of it), and a global is read four times faster than ``Color.X``.
EMPTY, BLACK, WHITE = int(Color.EMPTY), int(Color.BLACK), int(Color.WHITE)




def _as_list(stones: Sequence[int] | np.ndarray, size: int) -> list[int]:
    """The stones as a plain list of ints (fast to index), after a shape check."""
    colors = stones.tolist() if isinstance(stones, np.ndarray) else [int(s) for s in stones]
    if len(colors) != size * size:
        raise ValueError(f"stones has {len(colors)} points, expected {size * size} for size {size}")
    return colors


@dataclass
class _Region:
    """One region of non-P points, with the facts Benson's iteration needs."""

    points: list[int]
    vital_for: set[int]  # ids of P chains this region is vital to
    borders: set[int] = field(default_factory=set)  # ids of P chains adjacent to the region
    internal_points: int = 0  # points with no adjacent P stone, counted up to 2
    contains_opponent: bool = False


def _label_chains(colors: list[int], nbrs: tuple[tuple[int, ...], ...], player: int) -> tuple[list[int], list[list[int]]]:
    """Chain id of each point (-1 where there is no ``player`` stone) and the stones of each chain."""
    chain_of = [-1] * len(colors)
    chains: list[list[int]] = []
    for start, color in enumerate(colors):
        if color != player or chain_of[start] != -1:
            continue
        members, _ = flood(colors, nbrs, start)
        for point in members:
            chain_of[point] = len(chains)
        chains.append(members)
    return chain_of, chains


def _build_region(
    start: int,
    colors: list[int],
    nbrs: tuple[tuple[int, ...], ...],
    player: int,
    chain_of: list[int],
    region_of: list[int],
    region_id: int,
    suicide_legal: bool,
) -> _Region:
    """Flood one region from the empty point ``start`` and collect its Benson facts."""
    # A region is connected through every colour but ``player``'s: flood the two-valued view "is a P stone".
    points, _ = flood([color == player for color in colors], nbrs, start)
    region = _Region(points=points, vital_for={chain_of[adj] for adj in nbrs[start] if colors[adj] == player})
    for point in points:
        region_of[point] = region_id
        adjacent_chains = {chain_of[adj] for adj in nbrs[point] if colors[adj] == player}
        region.borders |= adjacent_chains
        # Opponent stones only break vitality when they could be refilled by suicide.
        if region.vital_for and (suicide_legal or colors[point] == EMPTY):
            region.vital_for &= adjacent_chains
        if not adjacent_chains and region.internal_points < 2:
            region.internal_points += 1
        if colors[point] != EMPTY:
            region.contains_opponent = True
    return region


def _benson_alive(regions: list[_Region], num_chains: int) -> tuple[list[bool], list[bool]]:
    """Benson's iteration: which chains survive, and which regions border a removed chain."""
    alive = [True] * num_chains
    region_spoiled = [False] * len(regions)
    while True:
        vital_count = [0] * num_chains
        for region, spoiled in zip(regions, region_spoiled):
            if not spoiled:
                for chain_id in region.vital_for:
                    vital_count[chain_id] += 1
        removed = [c for c in range(num_chains) if alive[c] and vital_count[c] < 2]
        if not removed:
            return alive, region_spoiled
        for chain_id in removed:
            alive[chain_id] = False
        dead = set(removed)
        for index, region in enumerate(regions):
            if not region_spoiled[index] and not region.borders.isdisjoint(dead):
                region_spoiled[index] = True


def _mark_player(
    build_region: Any,
    colors: list[int],
    size: int,
    player: int,
    result: list[int],
    *,
    safe_big_territories: bool,
    unsafe_big_territories: bool,
    multi_stone_suicide: bool,
) -> None:
    """Mark ``player``'s pass-alive stones and territory (plus the optional big regions) into ``result``.

    ``build_region`` is ``_build_region`` or ``_build_region_fast``; they give equal regions.
    """
    nbrs = neighbor_table(size)
    chain_of, chains = _label_chains(colors, nbrs, player)
    if not chains:
        return  # a player without stones owns nothing
    region_of = [-1] * len(colors)
    regions: list[_Region] = []
    for point, color in enumerate(colors):
        if color == EMPTY and region_of[point] == -1:
            regions.append(
                build_region(point, colors, nbrs, player, chain_of, region_of, len(regions), multi_stone_suicide)
            )
    alive, spoiled = _benson_alive(regions, len(chains))
    for chain_id, members in enumerate(chains):
        if alive[chain_id]:
            for point in members:
                result[point] = player
    for region, region_spoiled in zip(regions, spoiled):
        safe = region.internal_points <= 1 and not region_spoiled
        safe = safe or (safe_big_territories and not region.contains_opponent and not region_spoiled)
        if safe:
            for point in region.points:
                result[point] = player
        elif unsafe_big_territories and not region.contains_opponent:
            for point in region.points:
                if result[point] == EMPTY:
                    result[point] = player


def _build_region_fast(
    start: int,
    colors: list[int],
    nbrs: tuple[tuple[int, ...], ...],
    player: int,
    chain_of: list[int],
    region_of: list[int],
    region_id: int,
    suicide_legal: bool,
) -> _Region:
    """``_build_region`` with one pass over each point's neighbours: the set of adjacent chains is
    only built while the region can still be vital (most regions stop being so at once)."""
    points: list[int] = []
    borders: set[int] = set()
    vital: set[int] | None = None  # chains every relevant point so far is next to (None: no point yet)
    internal = 0
    contains_opponent = False
    region_of[start] = region_id
    stack = [start]
    while stack:
        point = stack.pop()
        points.append(point)
        touching = False
        for adj in nbrs[point]:
            c = colors[adj]
            if c == player:
                touching = True
                borders.add(chain_of[adj])
            elif region_of[adj] == -1:
                region_of[adj] = region_id
                stack.append(adj)
        here = colors[point]
        if here != EMPTY:
            contains_opponent = True
        if not touching:
            internal += 1
        # Opponent stones only break vitality when they could be refilled by suicide.
        if (vital is None or vital) and (suicide_legal or here == EMPTY):
            around = {chain_of[adj] for adj in nbrs[point] if colors[adj] == player} if touching else set()
            vital = around if vital is None else vital & around
    return _Region(points, vital or set(), borders, min(internal, 2), contains_opponent)


def calculate_area(
    stones: Sequence[int] | np.ndarray,
    size: int,
    *,
    non_pass_alive_stones: bool = False,
    safe_big_territories: bool = False,
    unsafe_big_territories: bool = False,
    multi_stone_suicide: bool = False,
) -> np.ndarray:
    """KataGo's area computation with its four switches (see the module docstring).

    Returns an int8 array of ``size * size`` with 1 (Black), 2 (White) or 0 (neither): computed by the compiled
    kernel (``miai.go.compiled``) when it runs, else by :func:`calculate_area_python`.
    """
    switches = {"non_pass_alive_stones": non_pass_alive_stones, "safe_big_territories": safe_big_territories,
                "unsafe_big_territories": unsafe_big_territories, "multi_stone_suicide": multi_stone_suicide}
    if compiled.ENABLED:
        return compiled.calculate_area(compiled.board_array(stones, size), size, **switches)
    return calculate_area_python(stones, size, **switches)


def calculate_area_python(
    stones: Sequence[int] | np.ndarray,
    size: int,
    *,
    non_pass_alive_stones: bool = False,
    safe_big_territories: bool = False,
    unsafe_big_territories: bool = False,
    multi_stone_suicide: bool = False,
) -> np.ndarray:
    """``calculate_area`` in Python.

    The feature encoder calls this for every evaluated position, and most positions have no
    pass-alive chain of a colour at all. One flood over the empty points proves that cheaply for a
    colour (no chain borders two "eye candidates"); then Benson's iteration would remove every chain
    and spoil every region, leaving only the unsafe big territories. Otherwise the colour goes
    through the full computation (``_mark_player`` with the fast region builder; ``calculate_area_by_flood``
    uses the plain one).
    """
    colors = _as_list(stones, size)
    nbrs = neighbor_table(size)
    empties = _EmptyComponents(colors, nbrs)
    result = [EMPTY] * len(colors)
    for player in (BLACK, WHITE):
        if empties.may_have_pass_alive(player):
            _mark_player(
                _build_region_fast,
                colors,
                size,
                player,
                result,
                safe_big_territories=safe_big_territories,
                unsafe_big_territories=unsafe_big_territories,
                multi_stone_suicide=multi_stone_suicide,
            )
        elif unsafe_big_territories and player in colors:
            # An empty component touching no opponent stone is a whole region without opponent stones.
            for points, touches in zip(empties.points, empties.touches):
                if not touches & (1 << (3 - player)):
                    for point in points:
                        if result[point] == EMPTY:
                            result[point] = player
    if non_pass_alive_stones:
        result = [owner if owner != EMPTY else color for owner, color in zip(result, colors)]
    return np.array(result, dtype=np.int8)


class _EmptyComponents:
    """The connected components of empty points, with what they touch.

    ``touches[i]`` has bit ``1 << c`` set when a point of component ``i`` is next to a stone of colour
    ``c``; ``every_point_touches[i]`` when *every* point is (the component could be vital to a chain).
    """

    __slots__ = ("colors", "nbrs", "points", "comp_of", "touches", "every_point_touches")

    def __init__(self, colors: list[int], nbrs: tuple[tuple[int, ...], ...]) -> None:
        self.colors = colors
        self.nbrs = nbrs
        self.points: list[list[int]] = []
        self.comp_of = [-1] * len(colors)
        self.touches: list[int] = []
        self.every_point_touches: list[int] = []
        comp_of = self.comp_of
        for start, color in enumerate(colors):
            if color != EMPTY or comp_of[start] != -1:
                continue
            comp = len(self.points)
            comp_of[start] = comp
            stack, points = [start], []
            any_mask, all_mask = 0, 0b110
            while stack:
                point = stack.pop()
                points.append(point)
                mask = 0
                for adj in nbrs[point]:
                    c = colors[adj]
                    if c == EMPTY:
                        if comp_of[adj] == -1:
                            comp_of[adj] = comp
                            stack.append(adj)
                    else:
                        mask |= 1 << c
                any_mask |= mask
                all_mask &= mask
            self.points.append(points)
            self.touches.append(any_mask)
            self.every_point_touches.append(all_mask)

    def may_have_pass_alive(self, player: int) -> bool:
        """False when no chain of ``player`` has two vital regions (so none can be pass-alive).

        A region is vital to a chain when each of its empty points is a liberty of the chain (this
        ignores the extra condition on opponent stones under multi-stone suicide, which only makes
        the answer "maybe" more often). Regions are empty components joined through opponent chains.
        """
        bit = 1 << player
        chain_of: dict[int, int] = {}  # stone -> id of its chain, filled lazily by floods
        vital_count: dict[int, int] = {}
        done: set[int] = set()  # components whose region has been examined
        for comp, every in enumerate(self.every_point_touches):
            if not every & bit or comp in done:
                continue
            for chain in self._region_vital_chains(comp, player, chain_of, done):
                vital_count[chain] = vital_count.get(chain, 0) + 1
                if vital_count[chain] >= 2:
                    return True
        return False

    def _region_vital_chains(self, comp: int, player: int, chain_of: dict[int, int], done: set[int]) -> set[int]:
        """The chains of ``player`` that the region holding component ``comp`` is vital to.

        Stops at the first component that rules every candidate out; components examined are added
        to ``done`` (a region stopped early may be examined again from another component: counted twice
        at worst, which is on the safe side).
        """
        colors, nbrs, opponent = self.colors, self.nbrs, 3 - player
        common = self._chains_next_to_every_point(comp, player, chain_of)
        done.add(comp)
        queue = [comp]
        while queue and common:
            current = queue.pop()
            if not self.touches[current] & (1 << opponent):
                continue
            for point in self.points[current]:
                for adj in nbrs[point]:
                    if colors[adj] != opponent or adj in chain_of:
                        continue
                    for stone in self._flood(adj, opponent, chain_of):
                        for lib in nbrs[stone]:
                            other = self.comp_of[lib]
                            if other == -1 or other in done:
                                continue
                            done.add(other)
                            queue.append(other)
                            if self.every_point_touches[other] & (1 << player):
                                common &= self._chains_next_to_every_point(other, player, chain_of)
                            else:
                                common = set()
                            if not common:
                                return common
        return common

    def _chains_next_to_every_point(self, comp: int, player: int, chain_of: dict[int, int]) -> set[int]:
        """The chains of ``player`` adjacent to every point of empty component ``comp``."""
        common: set[int] | None = None
        colors, nbrs = self.colors, self.nbrs
        for point in self.points[comp]:
            around = set()
            for adj in nbrs[point]:
                if colors[adj] == player:
                    around.add(chain_of[adj] if adj in chain_of else self._flood(adj, player, chain_of)[0])
            common = around if common is None else common & around
            if not common:
                return set()
        return common or set()

    def _flood(self, stone: int, color: int, chain_of: dict[int, int]) -> list[int]:
        """Flood the chain at ``stone`` (not yet in ``chain_of``), naming it by ``stone``; its stones."""
        stones, _ = flood(self.colors, self.nbrs, stone)
        for member in stones:
            chain_of[member] = stone
        return stones


def calculate_area_by_flood(
    stones: Sequence[int] | np.ndarray,
    size: int,
    *,
    non_pass_alive_stones: bool = False,
    safe_big_territories: bool = False,
    unsafe_big_territories: bool = False,
    multi_stone_suicide: bool = False,
) -> np.ndarray:
    """``calculate_area`` point by point, with plain flood fills: slower, kept as the readable
    statement of the algorithm that the fast version is tested against."""
    colors = _as_list(stones, size)
    result = [EMPTY] * len(colors)
    for player in (BLACK, WHITE):
        _mark_player(
            _build_region,
            colors,
            size,
            player,
            result,
            safe_big_territories=safe_big_territories,
            unsafe_big_territories=unsafe_big_territories,
            multi_stone_suicide=multi_stone_suicide,
        )
    if non_pass_alive_stones:
        result = [owner if owner != EMPTY else color for owner, color in zip(result, colors)]
    return np.array(result, dtype=np.int8)


def pass_alive(
    stones: Sequence[int] | np.ndarray, size: int, *, multi_stone_suicide: bool = False
) -> np.ndarray:
    """Benson pass-alive stones and the pass-alive territory they enclose.

    Returns int8 per point: 1 or 2 for Black's or White's pass-alive stones and territory (dead
    opponent stones inside such territory included), 0 elsewhere.

    >>> pass_alive([0, 1, 0,  1, 1, 1,  0, 1, 0], 3).tolist()
    [1, 1, 1, 1, 1, 1, 1, 1, 1]
    """
    return calculate_area(stones, size, multi_stone_suicide=multi_stone_suicide)


def area_map(
    stones: Sequence[int] | np.ndarray,
    size: int,
    *,
    multi_stone_suicide: bool = False,
    territory_scoring: bool = False,
    tax: str = "none",
) -> np.ndarray:
    """The ownership map behind KataGo's input planes 18 (side to move) and 19 (opponent).

    Input version 7 (``NNInputs::fillRowV7``):

    - area scoring without tax: ``calculate_area`` with all three extra switches on, i.e. pass-alive
      stones and territory, every other stone as its own colour, and empty regions bordered by one
      colour only;
    - area scoring with a seki or "all" tax (stone-scoring): KataGo's "independent life" area
      (``Board::calculateIndependentLifeArea`` keeping stones): the map above, minus every connected
      area of one colour that touches a dame point or contains a stone in atari (treated as seki), plus
      all stones that the map above gives to their own colour;
    - territory scoring: the planes are empty until the second encore phase, which miai never plays,
      so the map is all zeros.

    Returns int8 per point (1 Black, 2 White, 0 neither).
    """
    if territory_scoring:
        return np.zeros(size * size, dtype=np.int8)
    basic = calculate_area(
        stones,
        size,
        non_pass_alive_stones=True,
        safe_big_territories=True,
        unsafe_big_territories=True,
        multi_stone_suicide=multi_stone_suicide,
    )
    if tax.lower() == "none":
        return basic
    return independent_life_area(stones, size, basic, keep_territories=False, keep_stones=True)


def independent_life_area(
    stones: Sequence[int] | np.ndarray,
    size: int,
    basic: np.ndarray,
    *,
    keep_territories: bool,
    keep_stones: bool,
) -> np.ndarray:
    """KataGo's independent-life area from the basic area map ``basic`` (``area_map`` without tax).

    A connected area of one owner is "seki" when one of its points touches a dame point (empty and
    owned by nobody) or one of its own stones is in atari; the other areas have independent life and are
    kept whole. ``keep_territories`` adds back every territory point of ``basic`` (points whose owner is
    not the stone on them), ``keep_stones`` every stone ``basic`` gives to its own colour.
    """
    colors = _as_list(stones, size)
    owner = [int(v) for v in np.asarray(basic).tolist()]
    seki = _seki_marks(colors, owner, neighbor_table(size))
    result = [EMPTY if is_seki else area_owner for area_owner, is_seki in zip(owner, seki)]
    for point, (area_owner, color) in enumerate(zip(owner, colors)):
        if area_owner == EMPTY:
            continue
        if (keep_territories and area_owner != color) or (keep_stones and area_owner == color):
            result[point] = area_owner
    return np.array(result, dtype=np.int8)


def independent_life_region_balance(stones: Sequence[int] | np.ndarray, size: int, basic: np.ndarray) -> int:
    """White's independent-life regions minus Black's (``Board::calculateIndependentLifeArea``'s
    ``whiteMinusBlackIndependentLifeRegionCount``): the connected areas of one owner in ``basic`` that are not
    seki in the sense of ``independent_life_area``. Under an "all" tax each such region costs its owner two
    points (KataGo's group tax)."""
    colors = _as_list(stones, size)
    owner = [int(v) for v in np.asarray(basic).tolist()]
    nbrs = neighbor_table(size)
    seen = _seki_marks(colors, owner, nbrs)
    balance = 0
    for point, area_owner in enumerate(owner):
        if area_owner == EMPTY or seen[point]:
            continue
        balance += 1 if area_owner == WHITE else -1
        _mark_area(owner, nbrs, point, seen)
    return balance


def _seki_marks(colors: list[int], owner: list[int], nbrs: tuple[tuple[int, ...], ...]) -> list[bool]:
    """The points of every one-owner area of ``owner`` that touches a dame point or holds one of its owner's
    stones in atari (KataGo treats such an area as seki)."""
    liberties = _liberty_counts(colors, nbrs)
    seki = [False] * len(colors)
    for point, area_owner in enumerate(owner):
        if area_owner == EMPTY or seki[point]:
            continue
        in_atari = colors[point] == area_owner and liberties[point] == 1
        touches_dame = any(colors[adj] == EMPTY and owner[adj] == EMPTY for adj in nbrs[point])
        if in_atari or touches_dame:
            _mark_area(owner, nbrs, point, seki)
    return seki


def _mark_area(owner: list[int], nbrs: tuple[tuple[int, ...], ...], start: int, marks: list[bool]) -> None:
    """Mark ``start`` and every point connected to it through points of the same owner."""
    marks[start] = True
    stack = [start]
    while stack:
        for adj in nbrs[stack.pop()]:
            if owner[adj] == owner[start] and not marks[adj]:
                marks[adj] = True
                stack.append(adj)


def _liberty_counts(colors: list[int], nbrs: tuple[tuple[int, ...], ...]) -> list[int]:
    """Liberties of the chain at every stone (0 on empty points)."""
    counts = [0] * len(colors)
    done = [False] * len(colors)
    for start, color in enumerate(colors):
        if color == EMPTY or done[start]:
            continue
        chain, libs, stack = [start], set(), [start]
        done[start] = True
        while stack:
            for adj in nbrs[stack.pop()]:
                if colors[adj] == EMPTY:
                    libs.add(adj)
                elif colors[adj] == color and not done[adj]:
                    done[adj] = True
                    chain.append(adj)
                    stack.append(adj)
        for point in chain:
            counts[point] = len(libs)
    return counts


def area_map_for_rules(stones: Sequence[int] | np.ndarray, size: int, rules: Rules) -> np.ndarray:
    """``area_map`` with the switches read from ``rules`` (scoring, tax, multi-stone suicide)."""
    return area_map(
        stones,
        size,
        multi_stone_suicide=rules.multi_stone_suicide,
        territory_scoring=rules.scoring is Scoring.TERRITORY,
        tax=rules.tax.value.lower(),
    )


def taxed_area_margin(stones: Sequence[int] | np.ndarray, size: int, rules: Rules) -> int:
    """White's area minus Black's under area scoring with a seki or "all" tax, as KataGo counts a finished game
    (``BoardHistory::countAreaScoreWhiteMinusBlack``): the independent-life area keeping stones (a one-owner area
    touching a dame point or holding an own stone in atari keeps its stones but not its territory), and with the
    "all" tax two points off per independent-life region of each colour, however many eyes it has."""
    basic = calculate_area(stones, size, non_pass_alive_stones=True, safe_big_territories=True,
                           unsafe_big_territories=True, multi_stone_suicide=rules.multi_stone_suicide)
    owned = independent_life_area(stones, size, basic, keep_territories=False, keep_stones=True)
    margin = int(np.count_nonzero(owned == Color.WHITE)) - int(np.count_nonzero(owned == Color.BLACK))
    if rules.tax is Tax.ALL:
        margin -= 2 * independent_life_region_balance(stones, size, basic)
    return margin
