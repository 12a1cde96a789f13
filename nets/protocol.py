"""The nets' protocol: what the search core asks of an evaluator and gets back, typed on what the net reads.

- ``NetPosition``: the members of a position the nets read (``GameState`` has them; the search core passes its
  positions through this protocol, never a concrete game class).
- ``Evaluation``: one position's policy, value, score and ownership, from the side to move's view (``Amaf``: the
  playouts' all-moves-as-first statistics behind it).
- ``Evaluator``: ``evaluate(positions) -> list[Evaluation]`` and ``max_batch``, and what some evaluators offer
  besides: ``WrappingEvaluator`` (in front of others: ``evaluator_for(size)``, ``innermost``), ``CachingEvaluator``
  (``hits``, ``clear()``), ``StagedEvaluator`` (``start(positions)``: the Python work now, the net's run in a
  background thread; ``start_evaluation`` falls back to ``evaluate`` for the others), ``RootEvaluator`` and
  ``AdvantageEvaluator``.

The implementations (onnxruntime, OpenVINO, the cache, the playouts) live in miai.nets.evaluator and beside it; this
module imports nothing of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from miai.go.rules import Rules

__all__ = ["Amaf", "Evaluation", "NetPosition", "Evaluator", "WrappingEvaluator", "AdvantageEvaluator", "RootEvaluator", "evaluate_root", "set_playout_advantage", "same_advantage", "Finish", "StagedEvaluator", "start_evaluation", "CachingEvaluator", "innermost"]


@dataclass(frozen=True)
class Amaf:
    """All-moves-as-first statistics of the playouts behind an evaluation (playout evaluators only; RAVE).

    Row 0 is Black, row 1 White; columns are flat points (``y * size + x``). ``first[c, p]``: playouts in which colour
    ``c`` played ``p`` before the other colour did; ``white_wins[c, p]``: White's wins among those playouts (a draw
    counts half). ``playouts`` and ``white_win_total`` are the same over all playouts."""

    first: np.ndarray  # float64 [2, size*size]
    white_wins: np.ndarray  # float64 [2, size*size]
    playouts: int
    white_win_total: float
    # Prior knowledge (miai.nets.playouts.knowledge): imaginary playouts and wins of the side to move per flat point,
    # which start a new node's AMAF statistics.
    prior_n: np.ndarray | None = None  # float64 [size*size]
    prior_w: np.ndarray | None = None  # float64 [size*size]


@dataclass(frozen=True)
class Evaluation:
    """A net's view of one position, all numbers from the side to move's view."""

    policy: np.ndarray  # float32 [size*size + 1], pass last, illegal moves 0, sums to 1
    win: float
    loss: float
    no_result: float
    score_mean: float  # expected final score margin (self-play distribution), points
    score_stdev: float
    lead: float  # points the side to move is ahead by (komi that would make the game even)
    ownership: np.ndarray | None  # float32 [size*size], +1 = owned by the side to move
    var_time_left: float = -1.0  # -1 where the net has no such output
    shortterm_winloss_error: float = -1.0
    shortterm_score_error: float = -1.0
    amaf: Amaf | None = None  # playout evaluators with AMAF on (search.rave_equivalence > 0)

    @property
    def value(self) -> float:
        """Expected result in [-1, 1]: win minus loss."""
        return self.win - self.loss


class NetPosition(Protocol):
    """What the nets read of a position (miai.go.state.GameState has it all): the encoder's planes and globals
    (miai.nets.features), the evaluation cache's key, the playouts' start and the uniform evaluator's legal moves.

    The search core hands its positions to an evaluator through this protocol, so it needs no concrete game class.
    """

    @property
    def size(self) -> int: ...
    @property
    def rules(self) -> Rules: ...
    @property
    def komi(self) -> float: ...
    @property
    def handicap(self) -> int: ...
    @property
    def to_play(self) -> int: ...
    @property
    def moves(self) -> Sequence[tuple[int, int]]: ...
    @property
    def consecutive_passes(self) -> int: ...
    @property
    def situation_hash(self) -> int: ...
    @property
    def button_available(self) -> bool: ...
    def stones(self) -> np.ndarray: ...
    def liberties(self) -> np.ndarray: ...
    def board_history(self, k: int) -> np.ndarray: ...
    def banned_points(self) -> list[int]: ...
    def legal_moves(self) -> list[int]: ...
    def legal_mask(self) -> np.ndarray: ...
    def captures(self, color: int) -> int: ...
    def moves_this_phase(self) -> int: ...
    def is_over(self) -> bool: ...
    def pass_ends_game(self) -> bool: ...
    def pass_ends_game_outright(self) -> bool: ...
    def pass_is_friendly(self) -> bool: ...
    def pass_repeats_position(self) -> bool: ...
    def button_bonus(self) -> float: ...


@runtime_checkable
class Evaluator(Protocol):
    """Anything that turns positions into evaluations, ``max_batch`` at a time at most."""

    max_batch: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """One evaluation per state, in order."""
        ...


@runtime_checkable
class WrappingEvaluator(Protocol):
    """An evaluator in front of others (a cache, a router by board size) that says which one plays a size."""

    max_batch: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        ...

    def evaluator_for(self, size: int) -> Evaluator:
        """The evaluator one level down that evaluates ``size`` x ``size`` positions."""
        ...


@runtime_checkable
class AdvantageEvaluator(Protocol):
    """An evaluator that can play handicap games as KataGo does: the net is told that one side searches with
    ``value`` doublings of playouts more than the other (playoutDoublingAdvantage, net inputs 15-16)."""

    max_batch: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        ...

    def set_playout_advantage(self, color: int, value: float) -> None:
        """From now on ``color`` to move is evaluated with advantage ``value``, the other colour with ``-value``
        (0 = none). Evaluations kept from before a change are forgotten."""
        ...


@runtime_checkable
class RootEvaluator(Protocol):
    """An evaluator that evaluates a search's root its own way: KataGo's rootPolicyOptimism (the root's policy with
    less of the optimistic head than the rest of the search) and conservativePass (the end of the game hidden)."""

    max_batch: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        ...

    def evaluate_root(self, state: NetPosition, conservative_pass: bool = False) -> Evaluation:
        """``state`` evaluated as a search's root; ``conservative_pass``: the search goes on past a pass that would
        end the game (KataGo's conservativePass), so the net is not shown a game about to end."""
        ...


def evaluate_root(evaluator: Evaluator, state: NetPosition, conservative_pass: bool = False) -> Evaluation:
    """``state`` evaluated as a search's root: by ``evaluate_root`` where the evaluator has one, else as any
    position."""
    if isinstance(evaluator, RootEvaluator):
        return evaluator.evaluate_root(state, conservative_pass)
    return evaluator.evaluate([state])[0]


def set_playout_advantage(evaluator: Evaluator, color: int, value: float) -> bool:
    """Tell ``evaluator`` about a playout advantage if it can use one; returns whether it can."""
    if isinstance(evaluator, AdvantageEvaluator):
        evaluator.set_playout_advantage(color, value)
        return True
    return False


def same_advantage(a: tuple[int, float], b: tuple[int, float]) -> bool:
    """Whether two (colour, advantage) settings give every position the same input: the colour's opponent gets the
    opposite advantage, so no advantage is the same for either colour (a genmove of each side sets it in turn)."""
    (color_a, value_a), (color_b, value_b) = a, b
    return value_a == (value_b if color_a == color_b else -value_b)


class Finish(Protocol):
    """A started evaluation (``StagedEvaluator.start``): calling it waits for the net and returns the evaluations.

    ``timeout`` bounds the wait (seconds; None: as long as the net takes): past it ``TimeoutError`` is raised and
    nothing is decoded, so that a search at its deadline answers from what it has instead of waiting for a batch it
    cannot finish in time. The evaluation may then be finished by another call, or abandoned (never called again:
    the states it was started on were encoded by ``start`` and are not read again)."""

    def __call__(self, timeout: float | None = None) -> list[Evaluation]:
        """The evaluations, in the order of the states started."""
        ...


@runtime_checkable
class StagedEvaluator(Protocol):
    """An evaluator that can split a batch in two, so that a search collects its next batch while the net runs:
    ``start`` does the Python work (cache lookups, input encoding) in the caller's thread and hands the net's run,
    which holds no GIL, to a background thread; the callable it returns waits for the run and decodes the outputs,
    in the caller's thread again. Calling ``start(states)()`` gives what ``evaluate(states)`` gives; a start that
    is never finished (a search's deadline came first) leaves the evaluator as it was."""

    max_batch: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        ...

    def start(self, states: Sequence[NetPosition]) -> Finish:
        """Begin evaluating ``states``; the returned callable (called once, from the same thread) finishes it."""
        ...


def start_evaluation(evaluator: Evaluator, states: Sequence[NetPosition]) -> Finish:
    """``evaluator.start(states)`` where it is a ``StagedEvaluator``; otherwise the whole evaluation now."""
    if isinstance(evaluator, StagedEvaluator):
        return evaluator.start(states)
    done = evaluator.evaluate(states)

    def finish(timeout: float | None = None) -> list[Evaluation]:
        return done

    return finish


@runtime_checkable
class CachingEvaluator(Protocol):
    """An evaluator that keeps evaluations: it counts the positions it answered from memory and can forget them."""

    max_batch: int
    hits: int

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        ...

    def clear(self) -> None:
        """Forget every kept evaluation (komi or rules changed what a position is worth)."""
        ...

    def reserve(self, size: int) -> None:
        """Take now the memory a full cache holds for ``size`` x ``size`` positions (other sizes' entries may go)."""
        ...


def innermost(evaluator: Evaluator, size: int) -> Evaluator:
    """The evaluator that really evaluates ``size`` x ``size`` positions, under every cache and size router.

    Raises:
        EvaluatorError: a router has no evaluator for this size.
    """
    while isinstance(evaluator, WrappingEvaluator):
        evaluator = evaluator.evaluator_for(size)
    return evaluator
