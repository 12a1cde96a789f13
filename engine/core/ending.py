"""KataGo's root ending bonus (rootEndingBonusPoints, on in every KataGo mode at 0.5 points).

At the root only, a small score penalty steers the choice away from moves that change nothing at the end of a game
(KataGo's ``Search::getEndingWhiteScoreBonus``, cpp/search/searchhelpers.cpp; it is added to a root child's utility
in PUCT selection, in the hindsight play values and in the LCB). Read against the root's own net ownership:

- area scoring, no ko ban for the player to move: a move on a point the opponent surely owns (ownership at or below
  -0.95 from the mover's view) that captures nothing, or on a point the mover surely owns (at or above 0.95) that
  touches no opponent stone and does not join two of the mover's chains at least one of which is not pass-alive,
  loses ``points * (|ownership| - 0.95) / 0.05``: up to ``points`` for a certain point;
- area scoring with the button still to take: a pass loses ``points / 2``;
- territory scoring: a pass loses ``2 points / 3`` (so dame is filled first), and the same two kinds of useless
  moves lose as above (without the capture exception on the opponent's points).

Without this, a search that goes on past a pass (KataGo's conservativePass and friendly pass) sees nothing wrong with
filling its own territory or throwing stones into the opponent's, which area scoring does not punish.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from miai.engine.core.searchstate import GoPosition
from miai.go.board import NO_POINT
from miai.go.coords import PASS
from miai.go.geometry import neighbor_table
from miai.go.rules import Scoring

SURE = 0.95  # KataGo's "extreme" ownership
TAIL = 0.05  # 1 - SURE: the penalty grows from 0 at SURE to the full bonus at certainty


def ending_bonus(state: GoPosition, ownership: Sequence[float] | np.ndarray, points: float) -> dict[int, float]:
    """Extra points for White of each root move that has one (moves without are left out), from the root's net
    ``ownership`` (flat, the player to move's view) and ``points`` (rootEndingBonusPoints)."""
    if not points:
        return {}
    to_play = int(state.to_play)
    area_ish = state.rules.scoring == Scoring.AREA  # (miai plays no encore, whose final phase KataGo counts as area)
    mover: dict[int, float] = {}
    if area_ish and state.button_available:
        mover[PASS] = -points * 0.5
    elif not area_ish:
        mover[PASS] = -points * 2.0 / 3.0
    board = state.board
    if board.ko_point == NO_POINT or board.ko_color != to_play:
        mover.update(_useless_moves(state, np.asarray(ownership, dtype=np.float64), points, area_ish))
    return mover if to_play == 2 else {move: -extra for move, extra in mover.items()}


def _useless_moves(state: GoPosition, ownership: np.ndarray, points: float, area_ish: bool) -> dict[int, float]:
    """The mover's penalty (negative points) for each empty point it surely owns or surely does not."""
    stones = state.stones().tolist()
    pla = int(state.to_play)
    opp = 3 - pla
    neighbours = neighbor_table(state.size)
    safe: list[int] | None = None  # pass-alive area, computed on first need
    out: dict[int, float] = {}
    for point in np.flatnonzero(np.abs(ownership) >= SURE).tolist():
        if stones[point]:
            continue
        own = float(ownership[point])
        if own <= -SURE:
            if area_ish and _would_capture(state, point, opp, neighbours):
                continue
            out[point] = -points * ((-SURE - own) / TAIL)
        elif own >= SURE:
            if any(stones[n] == opp for n in neighbours[point]):
                continue
            if safe is None:
                safe = state.pass_alive_area().tolist()
            if _joins_weak_chain(state, point, pla, safe, neighbours):
                continue
            out[point] = -points * ((own - SURE) / TAIL)
    return out


def _would_capture(state: GoPosition, point: int, opp: int, neighbours: Sequence[Sequence[int]]) -> bool:
    """KataGo's Board::wouldBeCapture: a neighbouring opponent chain has one liberty (this point)."""
    board = state.board
    return any(board.color_at(n) == opp and board.liberty_count(n) == 1 for n in neighbours[point])


def _joins_weak_chain(state: GoPosition, point: int, pla: int, safe: Sequence[int],
                      neighbours: Sequence[Sequence[int]]) -> bool:
    """KataGo's Board::isNonPassAliveSelfConnection: the point is not pass-alive area of ``pla`` and connects a chain
    of ``pla`` that is not pass-alive to another chain of ``pla``."""
    if safe[point] == pla:
        return False
    board = state.board
    own = [n for n in neighbours[point] if board.color_at(n) == pla]
    weak = next((n for n in own if safe[n] == 0), None)
    if weak is None:
        return False
    head = board.chain_at(weak)[0]
    return any(board.chain_at(n)[0] != head for n in own)
