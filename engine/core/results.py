"""What a search reports: the root's and each root move's figures, and the point of view they are seen from.

These records are the engine's own: :mod:`miai.engine.core.snapshot` fills every field from the graph, and the front
ends format them (kata-analyze and lz-analyze through :mod:`miai.engine.player`, the JSON analysis engine in
:mod:`miai.engine.analysis.report`). Nothing in them is optional: a field a front end does not print is left out
by that front end, not by the record.

A figure that depends on whose side one takes (a winning chance, a score, a utility, an ownership) is *relative*:
it is written from one player's view, and :class:`Pov` names that player, as python-chess's ``PovScore`` does for a
chess score. Negating a relative value gives it from the opponent's view: ``1 - x`` for a chance, ``-x`` for a
signed figure; counts, priors and standard deviations stay as they are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar

from miai.go.coords import Color

__all__ = ["Relative", "Pov", "Chance", "RootResult", "MoveResult"]


class Relative(Protocol):
    """A value written from one player's view: ``-value`` is the same value from the opponent's."""

    def __neg__(self) -> Self: ...


R = TypeVar("R", bound=Relative)


@dataclass(frozen=True, slots=True)
class Pov(Generic[R]):
    """A relative value and the player whose view it is written from (python-chess's ``PovScore`` for Go).

    ``Pov(0.25, Color.BLACK).white()`` is ``-0.25``, ``Pov(Chance(0.75), Color.BLACK).white()`` is ``0.25``; a record's ``Pov(root, to_play).pov(Color.WHITE)`` gives its
    winrate as White's chance. Floats (signed figures: a win-loss value, a lead), numpy arrays (ownership, +1 = that
    player's point), :class:`Chance` and the records below are relative values.
    """

    relative: R
    color: Color

    def pov(self, color: Color) -> R:
        """The value from ``color``'s view."""
        return self.relative if color == self.color else -self.relative

    def white(self) -> R:
        """The value from White's view."""
        return self.pov(Color.WHITE)

    def black(self) -> R:
        """The value from Black's view."""
        return self.pov(Color.BLACK)

    def seen_by(self, color: Color) -> Pov[R]:
        """The same value, held from ``color``'s view."""
        return Pov(self.pov(color), color)


class Chance(float):
    """A winning chance in [0, 1]: relative, the opponent's is ``1 - x`` (a plain float is a signed figure)."""

    __slots__ = ()

    def __neg__(self) -> Chance:
        return Chance(1.0 - self)


@dataclass(frozen=True, slots=True)
class RootResult:
    """The root position's figures (kata-analyze ``rootInfo``, the analysis engine's ``rootInfo``), relative to the
    side whose view a :class:`Pov` (or the snapshot's ``to_play``) names.

    ``winrate``: that side's winning chance in [0, 1]; ``score_lead``: points it leads by (KataGo's lead);
    ``score_mean``: its mean final score (KataGo's selfplay score); ``score_stdev``: the score's standard deviation
    (no side); ``utility``: the search's utility for it.
    """

    visits: int
    winrate: float
    score_lead: float
    score_mean: float
    score_stdev: float
    utility: float

    def __neg__(self) -> RootResult:
        return dataclasses.replace(self, winrate=1.0 - self.winrate, score_lead=-self.score_lead,
                                   score_mean=-self.score_mean, utility=-self.utility)


@dataclass(frozen=True, slots=True)
class MoveResult:
    """One searched root move, relative like :class:`RootResult`.

    ``visits``: the child's visits (transpositions may raise them above the edge's); ``edge_visits``: the times the
    root chose this move (what PUCT and the move choice count). ``weight``: the child's total value weight
    (KataGo's ``weight``, childWeightSum: the visits when every visit weighs 1); ``edge_weight``: the part of it the
    edge from the root carries (KataGo's ``edgeWeight``). ``lcb``: the lower confidence bound of the winrate,
    ``utility_lcb`` of the utility. ``play_value``: KataGo's play selection value, what the move choice and its
    temperature use. ``pv``: the principal variation, starting with ``move``.
    """

    move: int
    visits: int
    edge_visits: int
    weight: float
    edge_weight: float
    prior: float
    winrate: float
    score_lead: float
    score_mean: float
    score_stdev: float
    utility: float
    lcb: float
    utility_lcb: float
    play_value: float
    pv: tuple[int, ...]

    def __neg__(self) -> MoveResult:
        # The opponent's lower bound is the mover's upper one; KataGo reports 1 - lcb all the same
        # (reportAnalysisWinratesAs), and so does miai.
        return dataclasses.replace(self, winrate=1.0 - self.winrate, score_lead=-self.score_lead,
                                   score_mean=-self.score_mean, utility=-self.utility, lcb=1.0 - self.lcb,
                                   utility_lcb=-self.utility_lcb)
