"""Counting a finished board: area (stones + surrounded empty points), territory, and taxes.

Functions here take a flat list of colours (0 empty, 1 black, 2 white) and the board size; ``GameState.score`` adds
komi, prisoners and the handicap bonus. An empty region counts for a player when every stone bordering it is theirs
(the Tromp-Taylor definition: "reaches only one colour").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from miai.go.geometry import flood, neighbor_table
from miai.go.rules import Tax




def empty_regions(colors: Sequence[int], size: int) -> list[tuple[list[int], int]]:
    """Every connected empty region with the colour it reaches (1 or 2 if only that colour, else 0)."""
    nbrs = neighbor_table(size)
    seen = [False] * (size * size)
    regions = []
    for start in range(size * size):
        if colors[start] or seen[start]:
            continue
        region, border = flood(colors, nbrs, start)
        for q in region:
            seen[q] = True
        reaches = 0
        for r in border:
            reaches |= colors[r]
        regions.append((region, reaches if reaches in (1, 2) else 0))
    return regions


def remove_dead(colors: Sequence[int], dead: Iterable[int]) -> tuple[list[int], list[int]]:
    """The colours with the ``dead`` stones lifted, and the number of dead stones per colour ([_, black, white])."""
    result = list(colors)
    removed = [0, 0, 0]
    for move in set(dead):
        v = result[move]
        if v:
            removed[v] += 1
            result[move] = 0
    return result, removed


def dead_chains(colors: Sequence[int], size: int, black_ownership: Sequence[float], threshold: float) -> list[int]:
    """The stones of every chain the ownership gives to the other colour, in flat order.

    ``black_ownership`` is a net's or a search's ownership of each point from Black's view, in [-1, 1]. A chain is
    dead when its mean ownership, seen from its own colour, is below ``-threshold``. Chains live or die whole: judged
    stone by stone, one end of a chain can be lifted and the rest kept, and then the empty points it left reach both
    colours and count for nobody.

    >>> dead_chains([1, 1, 2,  0, 1, 2,  0, 2, 2], 3, [0.2, -0.9, -1,  0, -0.8, -1,  0, -1, -1], 0.3)
    [0, 1, 4]
    """
    ids, libs = _chains(colors, size)
    chains: list[list[int]] = [[] for _ in libs]
    for point, chain in enumerate(ids):
        if chain >= 0:
            chains[chain].append(point)
    dead: list[int] = []
    for stones in chains:
        own_view = 1.0 if colors[stones[0]] == 1 else -1.0
        if own_view * sum(black_ownership[q] for q in stones) / len(stones) < -threshold:
            dead.extend(stones)
    return sorted(dead)


def territory(colors: Sequence[int], size: int, tax: Tax = Tax.NONE) -> tuple[int, int]:
    """Empty points surrounded by black and by white, after the tax."""
    counts = [0, 0, 0]
    regions = empty_regions(colors, size)
    seki_eyes = _seki_eyes(colors, size, regions) if tax is Tax.SEKI else set()
    for index, (region, owner) in enumerate(regions):
        if index not in seki_eyes:
            counts[owner] += len(region)
    if tax is Tax.ALL:
        taxes = group_taxes(colors, size)
        counts[1] -= taxes[1]
        counts[2] -= taxes[2]
    return counts[1], counts[2]


def area(colors: Sequence[int], size: int, tax: Tax = Tax.NONE) -> tuple[int, int]:
    """Stones plus surrounded empty points for black and for white, after the tax."""
    black, white = territory(colors, size, tax)
    return black + sum(1 for v in colors if v == 1), white + sum(1 for v in colors if v == 2)


def _chains(colors: Sequence[int], size: int) -> tuple[list[int], list[set[int]]]:
    """Chain id of every stone (-1 on empty points) and the liberties of each chain."""
    nbrs = neighbor_table(size)
    ids = [-1] * (size * size)
    libs: list[set[int]] = []
    for start in range(size * size):
        if colors[start] and ids[start] < 0:
            stones, border = flood(colors, nbrs, start)
            for q in stones:
                ids[q] = len(libs)
            libs.append({r for r in border if colors[r] == 0})
    return ids, libs


def _self_atari(colors: Sequence[int], size: int, point: int, color: int, ids: list[int], libs: list[set[int]]) -> bool:
    """Would ``color`` playing the empty ``point`` leave its chain with one liberty and capture nothing?"""
    nbrs = neighbor_table(size)[point]
    if any(colors[r] == 3 - color and libs[ids[r]] == {point} for r in nbrs):
        return False  # it captures
    own = [ids[r] for r in nbrs if colors[r] == color]
    if not own:
        return False
    after = {r for r in nbrs if colors[r] == 0}
    for chain in own:
        after |= libs[chain]
    after.discard(point)
    return len(after) <= 1


def _seki_eyes(colors: Sequence[int], size: int, regions: list[tuple[list[int], int]]) -> set[int]:
    """Indexes of one-colour regions that are eyes of groups in seki (Tax.SEKI does not count them).

    Seki is recognised locally: a neutral point that would be self-atari for a player next to it is a shared
    liberty neither side can fill, and a region surrounded by chains touching such a point is not territory. This
    needs no filled dame, unlike a rule that drops every region whose groups touch any neutral point.
    """
    ids, libs = _chains(colors, size)
    nbrs = neighbor_table(size)
    shared: set[int] = set()
    for region, owner in regions:
        if owner == 0:
            for point in region:
                if any(_self_atari(colors, size, point, color, ids, libs) for color in (1, 2)):
                    shared.add(point)
    seki_chains = {ids[r] for point in shared for r in nbrs[point] if colors[r]}
    return {
        index
        for index, (region, owner) in enumerate(regions)
        if owner and any(colors[r] == owner and ids[r] in seki_chains for q in region for r in nbrs[q])
    }


def group_taxes(colors: Sequence[int], size: int) -> list[int]:
    """Tax ALL: each group (stones linked through the empty regions only they reach) pays one point per such region,
    at most two (the two eyes it needs to live). Returns [_, black tax, white tax]."""
    parent = list(range(size * size))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    nbrs = neighbor_table(size)
    for m in range(size * size):
        for r in nbrs[m]:
            if colors[m] and colors[r] == colors[m]:
                parent[find(m)] = find(r)
    regions = [(region, owner) for region, owner in empty_regions(colors, size) if owner]
    for region, owner in regions:
        for q in region:
            for r in nbrs[q]:
                if colors[r] == owner:
                    parent[find(r)] = find(region[0])
    eyes: dict[int, int] = {}
    for region, _ in regions:
        root = find(region[0])
        eyes[root] = eyes.get(root, 0) + 1
    taxes = [0, 0, 0]
    for region, owner in regions:
        root = find(region[0])
        if root in eyes:
            taxes[owner] += min(2, eyes.pop(root))
    return taxes
