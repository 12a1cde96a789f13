"""Hand-built games and a scripted evaluator for search tests (no Go rules involved).

A ``ToyGame`` is an explicit graph: ``edges[position] = {move: next_position}``; positions named alike are the same
node for the search (their graph hash is derived from the name), so transpositions and cycles are whatever the test
writes. ``terminal[position]`` is the final score from White's view. Black moves first; colours alternate.
"""

from __future__ import annotations

import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from miai.go.rules import KoRule, Rules

WHITE, BLACK = 2, 1
_SIMPLE_KO = Rules(ko=KoRule.SIMPLE)


@dataclass
class ToyGame:
    """The rules of a toy game: who can move where, and the final scores."""

    edges: dict[str, dict[int, str]]
    terminal: dict[str, float] = field(default_factory=dict)
    size: int = 3  # moves are points 0..size*size-1; pass is -1


class ToyState:
    """A position in a ToyGame with the members the search uses (play_unchecked/pop/graph_hash/...)."""

    def __init__(self, game: ToyGame, start: str = "root") -> None:
        self.game = game
        self.size = game.size
        self.komi = 0.0
        self.rules = _SIMPLE_KO  # the search checks superko only under other ko rules
        self.handicap = 0
        self.path = [start]
        self.moves: list[tuple[int, int]] = []

    @property
    def setup(self) -> str:
        """The start position: toy games from different starts are different games."""
        return self.path[0]

    @property
    def position(self) -> str:
        return self.path[-1]

    @property
    def to_play(self) -> int:
        return BLACK if len(self.moves) % 2 == 0 else WHITE

    @property
    def graph_hash(self) -> int:
        # Position and side to move, like a real state hash (no history).
        return zlib.crc32(f"{self.position}/{self.to_play}".encode()) + 1

    def legal(self) -> dict[int, str]:
        return self.game.edges.get(self.position, {})

    def is_legal(self, move: int) -> bool:
        return move in self.legal()

    def play_unchecked(self, move: int) -> None:
        self.moves.append((self.to_play, move))
        self.path.append(self.legal()[move])

    def push(self, move: int) -> None:
        assert self.is_legal(move), (self.position, move)
        self.play_unchecked(move)

    def pop(self) -> tuple[int, int]:
        self.path.pop()
        return self.moves.pop()

    def symmetries(self) -> list[int]:
        return [0]  # toy positions have no board

    def pass_ends_game(self) -> bool:
        return False  # toy games have no passes

    def is_over(self) -> bool:
        return self.position in self.game.terminal

    def score(self) -> float:
        return self.game.terminal[self.position]

    def copy(self) -> ToyState:
        other = ToyState(self.game, self.path[0])
        other.path = list(self.path)
        other.moves = list(self.moves)
        return other


@dataclass(frozen=True)
class FakeEvaluation:
    """Same fields as miai.nets.evaluator.Evaluation (side to move's view)."""

    policy: np.ndarray
    win: float
    loss: float
    no_result: float
    score_mean: float
    score_stdev: float
    lead: float
    ownership: np.ndarray | None
    var_time_left: float = -1.0
    shortterm_winloss_error: float = -1.0
    shortterm_score_error: float = -1.0
    amaf: None = None


class ScriptedEvaluator:
    """Uniform priors over the toy position's moves; value ``values[position]`` = White's win minus loss
    (default 0), score = 10 * that value. Records every evaluated position."""

    def __init__(self, values: dict[str, float] | None = None, max_batch: int = 64,
                 priors: dict[str, dict[int, float]] | None = None) -> None:
        self.values = values or {}
        self.priors = priors or {}
        self.max_batch = max_batch
        self.evaluated: list[str] = []
        self.batches: list[int] = []

    def evaluate(self, states: list[Any]) -> list[FakeEvaluation]:
        self.batches.append(len(states))
        out = []
        for state in states:
            self.evaluated.append(state.position)
            area = state.size * state.size
            policy = np.zeros(area + 1, dtype=np.float32)
            given = self.priors.get(state.position)
            for move in state.legal():
                weight = given.get(move, 0.0) if given else 1.0
                policy[area if move == -1 else move] = weight
            if policy.sum() > 0:
                policy /= policy.sum()
            white_value = self.values.get(state.position, 0.0)
            side = 1.0 if state.to_play == WHITE else -1.0
            value = side * white_value
            out.append(FakeEvaluation(policy, (1 + value) / 2, (1 - value) / 2, 0.0, 10 * value, 1.0, 10 * value,
                                      np.full(area, value, dtype=np.float32)))
        return out


class Deferred:
    """An evaluator that splits its batches as a net does (``StagedEvaluator``): ``start`` returns at once and the
    batch is evaluated only when it is finished, so a search must leave the started states alone until then."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.max_batch = inner.max_batch

    def evaluate(self, states: Any) -> Any:
        return self.inner.evaluate(states)

    def start(self, states: Any) -> Any:
        started = list(states)
        hashes = [s.graph_hash for s in started]

        def finish(timeout: float | None = None) -> Any:
            assert [s.graph_hash for s in started] == hashes, "a started state moved before it was finished"
            return self.inner.evaluate(started)

        return finish


class Overlapping:
    """An evaluator that overlaps as the net does (``StagedEvaluator``): ``start`` hands the batch to a thread of its
    own, which takes ``seconds`` per batch without the GIL (onnxruntime's run releases it; here a sleep) and then
    evaluates it with ``inner``, while the search collects its next batch. ``evaluate`` takes as long in the
    caller's thread. ``starts`` counts the batches started, so a test knows which loop ran."""

    def __init__(self, inner: Any, seconds: float = 0.002) -> None:
        self.inner = inner
        self.max_batch = inner.max_batch
        self.seconds = seconds
        self.starts = 0
        self._lock = threading.Lock()  # one batch at a time, as one net session
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="test-net")

    def evaluate(self, states: Any) -> Any:
        return self._run(list(states))

    def _run(self, states: list[Any]) -> Any:
        with self._lock:
            time.sleep(self.seconds)
            return self.inner.evaluate(states)

    def start(self, states: Any) -> Any:
        self.starts += 1
        started = list(states)
        hashes = [s.graph_hash for s in started]
        future = self._pool.submit(self._run, started)

        def finish(timeout: float | None = None) -> Any:
            result = future.result(timeout)
            assert [s.graph_hash for s in started] == hashes, "a started state moved before it was finished"
            return result

        return finish

    def close(self) -> None:
        self._pool.shutdown()


def set_game(points: int = 4, depth: int = 3, weights: tuple[float, ...] = (3.0, -1.0, 2.0, 0.5, 1.5, -2.0)) -> ToyGame:
    """A game where each player picks unused points; the position is (black set, white set), so every order of
    the same choices transposes. After ``depth`` moves the game ends with score sum(white) - sum(black) weights."""
    edges: dict[str, dict[int, str]] = {}
    terminal: dict[str, float] = {}

    def name(black: frozenset[int], white: frozenset[int]) -> str:
        return "root" if not black and not white else f"b{sorted(black)}w{sorted(white)}"

    def build(black: frozenset[int], white: frozenset[int]) -> None:
        here = name(black, white)
        if here in edges or here in terminal:
            return
        played = len(black) + len(white)
        if played == depth:
            terminal[here] = sum(weights[p] for p in white) - sum(weights[p] for p in black)
            return
        black_to_move = played % 2 == 0
        moves = {}
        for p in range(points):
            if p in black or p in white:
                continue
            nb, nw = (black | {p}, white) if black_to_move else (black, white | {p})
            moves[p] = name(nb, nw)
            build(nb, nw)
        edges[here] = moves

    build(frozenset(), frozenset())
    return ToyGame(edges, terminal)
