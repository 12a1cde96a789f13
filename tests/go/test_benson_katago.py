"""Benson/area answers KataGo itself gives, pinned: the position and maps printed by KataGo's own unit test
(cpp/tests/testboardarea.cpp, "Area 1"; KataGo is MIT-licensed). miai's code is independent; this only pins
its results to KataGo's."""

from __future__ import annotations

import pytest

from miai.go.benson import calculate_area

_COLORS = {".": 0, "x": 1, "o": 2}


def stones_of(rows: str) -> tuple[list[int], int, int]:
    lines = rows.split()
    return [_COLORS[c] for line in lines for c in line], len(lines[0]), len(lines)


AREA_1 = """
..o.o.xx.
.oooo.x.x
oo.....xx
.........
.........
x......oo
.xx...o.o
x.x..oo.o
.x.x.o.o.
"""

# (safe big territories, unsafe big territories, non-pass-alive stones) -> expected map (same with either
# suicide rule in this position).
AREA_1_EXPECTED = {
    (False, False, False): "......XXX ......XXX .......XX ......... ......... .......OO ......OOO .....OOOO .....OOOO",
    (True, False, False): "......XXX ......XXX .......XX ......... ......... .......OO ......OOO .....OOOO .....OOOO",
    (True, True, False): "OO.O..XXX O.....XXX .......XX ......... ......... .......OO X.....OOO .X...OOOO X.X..OOOO",
    (True, True, True): "OOOOO.XXX OOOOO.XXX OO.....XX ......... ......... X......OO XXX...OOO XXX..OOOO XXXX.OOOO",
}


@pytest.mark.parametrize("suicide", [False, True])
@pytest.mark.parametrize("switches", list(AREA_1_EXPECTED))
def test_area_matches_katago(switches: tuple[bool, bool, bool], suicide: bool) -> None:
    stones, size, _ = stones_of(AREA_1)
    safe, unsafe, stones_too = switches
    result = calculate_area(stones, size, safe_big_territories=safe, unsafe_big_territories=unsafe,
                            non_pass_alive_stones=stones_too, multi_stone_suicide=suicide)
    got = " ".join("".join(".XO"[v] for v in result[y * size:(y + 1) * size]) for y in range(size))
    assert got == AREA_1_EXPECTED[switches]
