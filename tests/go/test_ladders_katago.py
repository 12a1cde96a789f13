"""Ladder answers KataGo itself gives, pinned: positions and maps printed by KataGo's own unit tests
(cpp/tests/testboardbasic.cpp, "Ladders 1 Lib", "Ladders 2 Libs", "LaddersKo-1"; KataGo is MIT-licensed).
miai's code is independent; these only pin its results to KataGo's."""

from __future__ import annotations

import pytest

from miai.go.ladders import ScratchBoard, is_ladder_captured, ladder_working_moves

_COLORS = {".": 0, "x": 1, "o": 2}


def stones_of(rows: str) -> tuple[list[int], int, int]:
    lines = rows.split()
    return [_COLORS[c] for line in lines for c in line], len(lines[0]), len(lines)


LADDER_CASES = [
    # (name, board, attacker moves first on two-liberty chains?, expected per stone: 1 laddered, 0 not)
    ("1 lib", "xo.x..oxo xoxo..o.. xxo...... ..o.x.... xo..xox.. o..ooxo.. .....xo.. xoox..xo. .xxoo.xxo", False,
     "01.0..010 0100..0.. 000...... ..0.0.... 10..000.. 0..0000.. .....00.. 0000..00. .1100.001"),
    ("2 libs", "xo.x..oxo xo.o..o.. xxo...... ..o.x.... xo..xo... ...ooxo.. .....xo.. xoox..xo. .xx.o.xxo", True,
     "11.1..000 11.0..0.. 110...... ..0.0.... 10..00... ...0010.. .....10.. 1110..01. .11.0.000"),
    ("ko", ".................. .................. ....ox.......ox... ..xooox....xooox.. ..xoxox....xoxox.. "
     "..xx.x......x.x... ...ox.......ox.... ....o............. ..................", True,
     ".................. .................. ....10.......00... ..01110....00000.. ..01010....00000.. "
     "..00.0......0.0... ...00.......00.... ....0............. .................."),
]


@pytest.mark.parametrize(("name", "board", "two_libs", "expected"), LADDER_CASES, ids=[c[0] for c in LADDER_CASES])
def test_ladders_match_katago(name: str, board: str, two_libs: bool, expected: str) -> None:
    stones, width, height = stones_of(board)
    rows = []
    for y in range(height):
        row = ""
        for x in range(width):
            point = y * width + x
            if stones[point] == 0:
                row += "."
                continue
            scratch = ScratchBoard(stones, width, height=height)
            loc = scratch.loc(point)
            answer = bool(ladder_working_moves(scratch, loc)) if two_libs else is_ladder_captured(scratch, loc)
            row += str(int(answer))
        rows.append(row)
    assert " ".join(rows) == expected
