"""Classic Monte-Carlo evaluation: light random playouts instead of a neural net.

:class:`PlayoutEvaluator` implements the ``Evaluator`` protocol (docs/INTERFACES.md): for each state it plays
``playouts`` random games to the end and reports

- ``win`` / ``loss``: the fraction of playouts won / lost by the side to move (a drawn playout counts half to each);
- ``score_mean`` / ``score_stdev`` / ``lead``: the mean and spread of the final scores, from the side to move;
- ``ownership``: each point's final owner averaged over the playouts (+1 = side to move);
- ``policy``: uniform over the legal moves and pass, or, with ``priors=True``, weighted towards captures and
  escapes from atari (:func:`move_priors`).

A playout is the classic "light" policy of Monte-Carlo Go: each side plays a uniformly random legal move, except
that it never fills one of its own true eyes (:meth:`PlayoutBoard.is_true_eye`), and passes when no such move is
left; two consecutive passes end the game, which is then scored by area (or by territory plus prisoners under
territory rules) with the game's komi and handicap bonus. Every dead group has been captured by then, so counting
stones and one-colour empty regions gives the real result.

Speed matters more than generality here, so playouts do not go through ``GameState`` (superko, hashes, history):
:class:`PlayoutBoard` is a small self-contained board on a padded 1-D list with chains (member list plus liberty
set), simple ko and no suicide. It is seeded from a :class:`PlayoutPosition`, which :func:`position_from_state`
builds from a ``GameState``; the ko/superko bans of the real game apply to the first playout move.
"""

from miai.nets.playouts.board import PlayoutBoard, PlayoutError
from miai.nets.playouts.evaluator import (
    PlayoutEvaluator,
    legal_board_moves,
    move_priors,
    position_from_state,
    uniform_policy,
)
from miai.nets.playouts.simulate import (
    PlayoutBenchmark,
    PlayoutPosition,
    PlayoutStats,
    benchmark_playouts,
    board_from_position,
    final_score,
    play_out,
    run_playouts,
)

__all__ = [
    "PlayoutBenchmark",
    "PlayoutBoard",
    "PlayoutError",
    "PlayoutEvaluator",
    "PlayoutPosition",
    "PlayoutStats",
    "benchmark_playouts",
    "board_from_position",
    "final_score",
    "legal_board_moves",
    "move_priors",
    "play_out",
    "position_from_state",
    "run_playouts",
    "uniform_policy",
]
