"""Self-play searched by miai's search: the teacher's, labelled by that search (``miai train gen --search V``), or a
student's, labelled by the raw teacher (``--search V --player NET``).

The labels of ``miai.nets.train.datagen`` read the teacher net once per position (or one ply deeper with its
lookahead); here each position is searched with miai's graph search over the teacher for ``visits`` root visits,
and the targets say what that search found:

- policy: Gumbel MuZero's completed-Q improvement of the raw prior (Danihelka et al., 2022),
  ``softmax(log prior + sigma(q))`` with ``sigma = (50 + max edge visits) * 0.1 * q``, q a root move's searched
  winrate and the root's value for moves the search never tried; the same rule as the one-ply lookahead's, with
  search values in place of single evaluations;
- value and score: the search's root (KataGo's pruned root values, as an analysis reports them), the no-result
  share kept from the raw evaluation (the search's winrate counts it as half a win);
- ownership: the raw teacher's (an auxiliary target; the search does not average it unless asked to).

Self-play samples each move from the policy target with a temperature, hotter in the opening, and the search
keeps its graph from one move to the next, so part of each search is already done when it starts. With a cheap
share (``SearchBudget``) most moves get a small search and are not stored, as in KataGo's self-play.

With a player (``player_self_play_positions``) the search runs over another net, usually the student being
trained, and plays as ``miai gtp`` would; the teacher labels every stored position raw. This is on-policy
distillation (DAgger, Ross et al. 2011): a student's search steers into the positions its own value overrates
(measured in docs/training.md, round 13), positions the teacher's self-play never shows it. With an opponent
(``match_positions``) the player's search meets another search, usually the teacher's, colours alternating game
by game: the positions of the games the student actually loses, after moves stronger than its own.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from miai.engine.core.search import Search
from miai.engine.core.snapshot import Snapshot, choose_move
from miai.go.coords import Color, policy_index
from miai.go.state import GameState
from miai.nets.train.datagen import Labels, SelfPlayConfig, Teacher, improved_policy, random_game, sample_move

__all__ = ["search_targets", "search_self_play_positions", "player_self_play_positions", "match_positions",
           "SearchBudget", "C_VISIT", "C_SCALE"]

C_VISIT = 50.0  # Gumbel MuZero's sigma constants (c_visit, c_scale) for values in [0, 1]
C_SCALE = 0.1


def search_targets(labels: Labels, snapshot: Snapshot) -> Labels:
    """``labels`` (one position, the raw teacher's) with policy, value and score replaced by the search's."""
    root = snapshot.reported or snapshot.root
    prior = labels.policy.astype(np.float32)
    q = np.full_like(prior, root.winrate)
    most = 0
    for info in snapshot.moves:
        if info.edge_visits:
            q[0, policy_index(info.move, labels.size)] = info.winrate
            most = max(most, info.edge_visits)
    policy = improved_policy(prior, q, (C_VISIT + most) * C_SCALE)
    no_result = float(labels.value[0, 2])
    win = max(0.0, root.winrate - no_result / 2.0)  # winrate = win + no_result / 2 (win + loss + no_result = 1)
    loss = max(0.0, 1.0 - root.winrate - no_result / 2.0)
    value = np.array([[win, loss, no_result]], np.float32)
    score = np.array([[root.score_mean or 0.0, root.score_stdev or 0.0, root.score_lead]], np.float32)
    return Labels(size=labels.size, spatial=labels.spatial, global_=labels.global_, policy=policy.astype(np.float16),
                  value=value, score=score, ownership=labels.ownership)


@dataclass(frozen=True)
class SearchBudget:
    """Visits a self-play move gets: ``visits`` for the positions stored, and, with KataGo's playout cap
    randomisation (Wu 2019), a share ``cheap_share`` of the moves searched for ``cheap_visits`` only, played but not
    stored, so that the same time covers more games (KataGo's self-play: 600 and 100 visits, 75% cheap)."""

    visits: int
    cheap_visits: int = 0
    cheap_share: float = 0.0

    def cheap(self, rng: np.random.Generator) -> bool:
        """Whether the next move gets the cheap search (with probability ``cheap_share``, when set)."""
        return bool(self.cheap_visits) and bool(rng.random() < self.cheap_share)


# One turn of a self-play game: (the game, the search of its position, whether the position is stored, the move's
# temperature) -> (the position's labels, None when not stored; the move to play).
Turn = Callable[[GameState, Snapshot, bool, float], tuple[Labels | None, int]]


def search_self_play_positions(teacher: Teacher, search: Search, config: SelfPlayConfig,
                               budget: SearchBudget) -> Iterator[Labels]:
    """Endless labelled positions (one per batch) from teacher self-play, each searched for ``budget.visits``
    visits; moves given the cheap search are played and not stored."""
    rng = np.random.default_rng(config.seed)

    def turn(game: GameState, snapshot: Snapshot, stored: bool, temperature: float) -> tuple[Labels | None, int]:
        labels = search_targets(teacher.label([game]), snapshot)  # the prior is needed to play a cheap move too
        return (labels if stored else None), sample_move(labels.policy[0], temperature, rng)

    return _self_play(_alone(search, budget), config, rng, turn)


def player_self_play_positions(teacher: Teacher, search: Search, config: SelfPlayConfig,
                               budget: SearchBudget) -> Iterator[Labels]:
    """Endless positions (one per batch) from the self-play of the net ``search`` runs over, each searched for
    ``budget.visits`` visits and labelled by the raw teacher (``config.lookahead`` applies); each move is chosen
    as ``miai gtp`` chooses it (``choose_move``: play values at the move's temperature). Moves given the cheap
    search are played and not stored."""
    return match_positions(teacher, (search, budget), (search, budget), config)


def match_positions(teacher: Teacher, player: tuple[Search, SearchBudget], opponent: tuple[Search, SearchBudget],
                    config: SelfPlayConfig) -> Iterator[Labels]:
    """Endless positions (one per batch) from games between two searches, each with its own budget: ``player``
    takes Black in the first game and colours alternate game by game. Every position is searched by the side to
    move, which chooses its move as ``miai gtp`` does, and labelled by the raw teacher (``config.lookahead``
    applies); moves given the cheap search are played and not stored. The same search on both sides is self-play."""
    rng = np.random.default_rng(config.seed)
    choice = random.Random(config.seed)

    def side(game_number: int, game: GameState) -> tuple[Search, SearchBudget]:
        player_to_move = (game.to_play == Color.BLACK) == (game_number % 2 == 0)
        return player if player_to_move else opponent

    def turn(game: GameState, snapshot: Snapshot, stored: bool, temperature: float) -> tuple[Labels | None, int]:
        labels = teacher.label([game], config.lookahead) if stored else None
        return labels, choose_move(snapshot, temperature, choice)

    return _self_play(side, config, rng, turn)


# The search that moves in a position and its budget, given the game's number (from 0) and the game.
Side = Callable[[int, GameState], tuple[Search, SearchBudget]]


def _alone(search: Search, budget: SearchBudget) -> Side:
    """One search playing both colours of every game."""
    return lambda game_number, game: (search, budget)


def _self_play(side: Side, config: SelfPlayConfig, rng: np.random.Generator, turn: Turn) -> Iterator[Labels]:
    """The game loop: the side to move searches each position (cheaply for a share of its moves), ``turn`` labels
    it and picks the move (hotter in the opening), a new game with random rules and komi starts when one ends."""
    limit = int(config.size * config.size * config.max_moves_per_area)
    game = random_game(config.size, rng, config.komi_range)
    game_number = 0
    while True:
        search, budget = side(game_number, game)
        cheap = budget.cheap(rng)
        snapshot = _search(search, game, budget.cheap_visits if cheap else budget.visits)
        hot = len(game.moves) < config.opening_moves
        labels, move = turn(game, snapshot, not cheap, config.opening_temperature if hot else config.temperature)
        if labels is not None:
            yield labels
        game.push(move)
        if game.is_over() or len(game.moves) >= limit:
            game = random_game(config.size, rng, config.komi_range)
            game_number += 1


def _search(search: Search, game: GameState, visits: int) -> Snapshot:
    """The search of ``game`` to ``visits`` root visits (the graph kept from the previous move counts)."""
    search.set_root(game)
    return search.run(max_visits=visits, max_playouts=0, max_time=0.0)
