"""The end of a game: which stones the engine holds dead (``final_status_list``) and the cleanup phase
(``kgs-genmove_cleanup``).

Dead stones are read off the search's ownership: a chain is dead when its mean ownership from its own colour's view
is below ``-0.3``. :class:`DeadStones` keeps the ownership of the last genmove's search, which the engine's own
``final_status_list`` right after its pass reads (the stones it passed over are the ones it holds dead); otherwise
the player runs a short search of :data:`STATUS_VISITS` visits. ``kgs-genmove_cleanup`` removes the opponent stones
the engine holds dead: it searches only the liberties of those chains (:func:`cleanup_targets`), so every move
attacks one until they are captured, and it passes once none is left.
"""

from __future__ import annotations

import numpy as np

from miai.engine.core.results import Pov
from miai.engine.core.snapshot import Snapshot
from miai.go.coords import Color
from miai.go.geometry import neighbor_table
from miai.go.scoring import dead_chains
from miai.go.state import GameState

__all__ = ["STATUS_VISITS", "DeadStones", "cleanup_move", "cleanup_targets", "dead_stones"]

# A chain is dead when its mean ownership from its own colour's view is below minus this: stones the search gives
# to neither side (seki, unsettled fights) stay on the board.
_DEAD_OWNERSHIP = 0.3
# Visits of the short search that estimates dead stones at the end of a game.
STATUS_VISITS = 64


class DeadStones:
    """The ownership (Black's view) of the last genmove's search and the stones it was searched on."""

    def __init__(self) -> None:
        self._last: tuple[bytes, np.ndarray] | None = None  # the last genmove's stones, Black's ownership

    def remember(self, root: GameState, snapshot: Snapshot, biased: bool) -> None:
        """Keep the search's ownership of ``root``'s stones (Black's view) for final_status_list and cleanup, unless
        the search was ``biased`` (played with a playout advantage: its ownership leans towards one side)."""
        if snapshot.ownership is None or biased:
            self._last = None
            return
        black = Pov(snapshot.ownership, root.to_play).black()
        self._last = (root.stones().tobytes(), black)

    def remembered(self, state: GameState) -> np.ndarray | None:
        """The last genmove search's ownership (Black's view) if it searched ``state``'s very stones, else None."""
        if self._last is not None and self._last[0] == state.stones().tobytes():
            return self._last[1]
        return None


def dead_stones(state: GameState, black_ownership: np.ndarray) -> list[int]:
    """The stones of ``state`` whose owner ``black_ownership`` (Black's view) says has lost them."""
    return dead_chains(state.board.colors(), state.size, black_ownership.tolist(), _DEAD_OWNERSHIP)


def cleanup_targets(root: GameState, dead: list[int]) -> list[int]:
    """kgs-genmove_cleanup: the legal moves that attack an opponent chain among the ``dead`` stones (its
    liberties, those of the chains with fewest liberties first), or none when no such chain is left."""
    opponent = root.to_play.opponent
    targets: dict[int, int] = {}  # liberty -> fewest liberties of a dead chain it touches
    for point in dead:
        if root.color_at(point) != opponent:
            continue
        liberties = _liberties_of(root, point)
        for liberty in liberties:
            targets[liberty] = min(targets.get(liberty, len(liberties)), len(liberties))
    return sorted((q for q in targets if root.is_legal(q)), key=lambda q: (targets[q], q))


def cleanup_move(snapshot: Snapshot, targets: list[int]) -> int:
    """The searched move among ``targets`` (the search ran restricted to them), else the first target: a liberty
    of the dead chain with fewest liberties (an atari or a capture first)."""
    allowed = set(targets)
    for info in snapshot.moves:
        if info.move in allowed:
            return info.move
    return targets[0]


def _liberties_of(state: GameState, point: int) -> list[int]:
    """The empty points next to the chain at ``point``, in flat order."""
    nbrs = neighbor_table(state.size)
    return sorted({q for p in state.chain(point) for q in nbrs[p] if state.color_at(q) == Color.EMPTY})
