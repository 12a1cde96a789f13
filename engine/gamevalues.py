"""What one game's genmoves remember of their searches (KataGo's recentWinLossValues), and the playout doubling
advantage last given to the evaluator.

Resignation (miai.engine.resign) reads the root win-loss values of the game's searches so far and the latest score
lead; the dynamic playout doubling advantage (miai.engine.handicap) follows them from move to move.
"""

from __future__ import annotations

from typing import Any

from miai.engine.config import PlayerConfig
from miai.engine.handicap import dynamic_pda_for_white
from miai.engine.core.results import Pov
from miai.engine.core.snapshot import Snapshot
from miai.go.coords import Color
from miai.go.state import GameState
from miai.nets.evaluator import same_advantage

__all__ = ["GameValues"]


class GameValues:
    """One game's root values (White's view), the advantage its genmoves chose, and the one the evaluator has."""

    def __init__(self) -> None:
        self._game: tuple[Any, ...] | None = None  # (size, komi, rules, setup) of the game the values are of
        self._moves = 0  # moves of that game at its last genmove (fewer now: an undo)
        self.white_values: list[float] = []  # the root win-loss value of each search of the game, White's view
        self.white_lead = 0.0  # the latest search's root score lead, White's view
        self._for_white = 0.0  # the dynamic advantage last chosen for White
        self._applied: tuple[int, float] = (int(Color.WHITE), 0.0)  # (side to move, its advantage) last given

    @property
    def biased(self) -> bool:
        """Whether the evaluator was last given a playout advantage (its evaluations lean towards one side)."""
        return self._applied[1] != 0.0

    def advantage(self, root: GameState, config: PlayerConfig) -> float:
        """The advantage of the side to move at ``root`` for this genmove."""
        game = (root.size, root.komi, root.rules, root.setup)
        if game != self._game or len(root.moves) < self._moves:  # a new game, other rules, or an undo
            self._game, self.white_values, self._for_white = game, [], 0.0
        self._moves = len(root.moves)
        self._for_white = dynamic_pda_for_white(root, config.dynamic_pda_cap_per_opp_lead, self.white_values,
                                                self._for_white)
        return self._for_white if root.to_play == Color.WHITE else -self._for_white

    def applied(self, applied: tuple[int, float]) -> bool:
        """The evaluator is given ``applied`` (side to move, its advantage) now; whether that changes what it
        computes (not the advantage last given, seen from either side)."""
        changed = not same_advantage(applied, self._applied)
        self._applied = applied
        return changed

    def record(self, root: GameState, snapshot: Snapshot) -> None:
        """Keep the search's root win-loss value and score lead, from White's view."""
        if snapshot.root.visits > 0:
            self.white_values.append(Pov(2.0 * snapshot.root.winrate - 1.0, root.to_play).white())
            self.white_lead = Pov(snapshot.root.score_lead, root.to_play).white()
