"""A deliberately simple reference implementation of the rules, for differential tests.

No incremental state: every question is answered by flood fill on a plain list of colours, and every hash is
recomputed from scratch. Slow and obviously right is the point.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from miai.go import zobrist
from miai.go.coords import PASS
from miai.go.rules import KoRule, Rules


def neighbours(move: int, size: int) -> list[int]:
    """On-board neighbours of a flat move."""
    y, x = divmod(move, size)
    result = []
    if y > 0:
        result.append(move - size)
    if y < size - 1:
        result.append(move + size)
    if x > 0:
        result.append(move - 1)
    if x < size - 1:
        result.append(move + 1)
    return result


def group(colors: list[int], size: int, move: int) -> tuple[set[int], set[int]]:
    """The chain at ``move`` and its liberties, by flood fill."""
    color = colors[move]
    stones, libs, stack = {move}, set(), [move]
    while stack:
        q = stack.pop()
        for r in neighbours(q, size):
            if colors[r] == 0:
                libs.add(r)
            elif colors[r] == color and r not in stones:
                stones.add(r)
                stack.append(r)
    return stones, libs


def empty_region(colors: list[int], size: int, move: int) -> set[int]:
    """The connected empty region containing ``move``."""
    region, stack = {move}, [move]
    while stack:
        q = stack.pop()
        for r in neighbours(q, size):
            if colors[r] == 0 and r not in region:
                region.add(r)
                stack.append(r)
    return region


def position_hash(colors: list[int], size: int) -> int:
    """Zobrist hash of a position, from scratch."""
    keys = zobrist.stone_keys(size)
    h = zobrist.size_key(size)
    for move, v in enumerate(colors):
        h ^= keys[v][move]
    return h


def apply_move(colors: list[int], size: int, move: int, c: int) -> tuple[list[int], int, bool]:
    """The colours after ``c`` plays ``move``: (colours, stones captured, whether it was suicide)."""
    after = list(colors)
    after[move] = c
    captured = 0
    for r in neighbours(move, size):
        if after[r] == 3 - c:
            stones, libs = group(after, size, r)
            if not libs:
                for s in stones:
                    after[s] = 0
                captured += len(stones)
    stones, libs = group(after, size, move)
    if captured == 0 and not libs:
        for s in stones:
            after[s] = 0
        return after, len(stones), True
    return after, captured, False


@dataclass
class ReferenceGame:
    """A game kept as the list of every position, replayed naively."""

    size: int
    rules: Rules
    colors: list[int] = field(default_factory=list)
    to_play: int = 1
    history: list[tuple[list[int], int, int, int]] = field(default_factory=list)  # (colors, to_play, move, mover)
    _memo: tuple[int, set[tuple[int, int]]] | None = None

    def __post_init__(self) -> None:
        if not self.colors:
            self.colors = [0] * (self.size * self.size)

    def superko_key(self, colors: list[int], to_play: int) -> tuple[int, int]:
        return position_hash(colors, self.size), (to_play if self.rules.ko is KoRule.SITUATIONAL else 0)

    def earlier_keys(self) -> set[tuple[int, int]]:
        """Superko keys of every position so far (recomputed from scratch, memoised per history length)."""
        if self._memo is None or self._memo[0] != len(self.history):
            start = 0
            if self.rules.has_button:  # taking the button (the first pass) starts the history afresh
                passes = [i for i, entry in enumerate(self.history) if entry[2] == PASS]
                start = passes[0] + 1 if passes else 0
            keys = {self.superko_key(colors, to_play) for colors, to_play, _, _ in self.history[start:]}
            self._memo = (len(self.history), keys | {self.superko_key(self.colors, self.to_play)})
        return self._memo[1]

    def legality(self, move: int, c: int | None = None) -> str | None:
        """None if legal, else "occupied", "suicide", "ko" or "superko"."""
        c = self.to_play if c is None else c
        if move == PASS:
            return None
        if self.colors[move]:
            return "occupied"
        after, removed, suicide = apply_move(self.colors, self.size, move, c)
        if suicide and (removed == 1 or not self.rules.multi_stone_suicide):
            return "suicide"
        if self.history and not suicide and removed == 1:
            previous, _, last_move, last_mover = self.history[-1]
            if last_move != PASS and last_mover == 3 - c and after == previous:
                return "ko"
        if self.rules.ko is not KoRule.SIMPLE and self.superko_key(after, 3 - c) in self.earlier_keys():
            return "superko"
        return None

    def play(self, move: int, c: int | None = None) -> None:
        c = self.to_play if c is None else c
        self.history.append((self.colors, self.to_play, move, c))
        if move != PASS:
            self.colors = apply_move(self.colors, self.size, move, c)[0]
        self.to_play = 3 - c

    def undo(self) -> None:
        self.colors, self.to_play, _, _ = self.history.pop()
        self._memo = None

    def hash(self) -> int:
        return position_hash(self.colors, self.size)

    def banned(self) -> list[int]:
        """Empty points the player to move may not play by ko or superko."""
        return [m for m in range(self.size * self.size) if self.legality(m) in ("ko", "superko")]

    def liberties(self) -> list[int]:
        return [len(group(self.colors, self.size, m)[1]) if self.colors[m] else 0 for m in range(len(self.colors))]

    def repetition_bound_exceeded(self, move: int, bound: int) -> bool:
        """S + E > bound for the chain now at ``move`` (KATAGO.md section 1), by full flood fill."""
        if self.colors[move]:
            stones, libs = group(self.colors, self.size, move)
        else:
            stones, libs = set(), {move}
        empty: set[int] = set()
        for lib in libs:
            if lib not in empty:
                empty |= empty_region(self.colors, self.size, lib)
        return len(stones) + len(empty) > bound
