"""The playout evaluator: ``Evaluation``s from playouts, with a uniform or capture/escape-weighted policy."""

from __future__ import annotations

import multiprocessing
import os
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from miai.go.coords import PASS, Color
from miai.go.rules import Scoring, Tax
from miai.nets.evaluator import Amaf, Evaluation
from miai.nets.playouts.board import PlayoutBoard, PlayoutError
from miai.nets.playouts.knowledge import LOCALITY_COUNT, THIRD_LINE_COUNT, Knowledge, prior_knowledge
from miai.nets.playouts.simulate import PlayoutPosition, PlayoutStats, board_from_position, run_playouts

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition


# -- policy --------------------------------------------------------------------------------------------------------


def legal_board_moves(board: PlayoutBoard, position: PlayoutPosition) -> list[int]:
    """Flat board moves legal for the side to move: the game's own list if the position has one, else the board's
    (simple ko, no suicide, plus the position's bans)."""
    if position.legal_moves is not None:
        return list(position.legal_moves)
    banned = set(position.banned)
    points = board.geometry.points
    return [m for m, p in enumerate(points) if m not in banned and board.is_legal(p, position.to_play)]


def move_priors(
    board: PlayoutBoard,
    legal: Sequence[int],
    color: int,
    *,
    capture_weight: float = 3.0,
    escape_weight: float = 2.0,
    eye_weight: float = 0.05,
    pass_weight: float = 1.0,
) -> NDArray[np.float32]:
    """Simple policy priors: each legal move weighs 1, more if it captures or saves a chain in atari.

    A capture adds ``capture_weight`` per stone it takes (capped at 4 stones), an atari escape (a move on the last
    liberty of a friendly chain that leaves it more than one liberty) adds ``escape_weight`` per stone saved (also
    capped). Filling one's own true eye weighs only ``eye_weight``. Pass weighs ``pass_weight``. Returns a float32
    policy of ``size*size + 1`` entries summing to 1, zero on illegal points.
    """
    geometry = board.geometry
    area = geometry.size * geometry.size
    weights = np.zeros(area + 1, dtype=np.float64)
    for move in legal:
        p = geometry.points[move]
        weight = eye_weight if board.is_true_eye(p, color) else 1.0
        weight += capture_weight * min(4, _stones_captured_by(board, p, color))
        weight += escape_weight * min(4, _stones_saved_by(board, p, color))
        weights[move] = weight
    weights[area] = pass_weight
    normalised: NDArray[np.float64] = weights / weights.sum()
    return normalised.astype(np.float32)


def uniform_policy(size: int, legal: Sequence[int]) -> NDArray[np.float32]:
    """Uniform float32 policy over ``legal`` flat moves and pass."""
    area = size * size
    policy = np.zeros(area + 1, dtype=np.float32)
    policy[list(legal)] = 1.0
    policy[area] = 1.0
    normalised: NDArray[np.float32] = policy / policy.sum()
    return normalised


def _stones_captured_by(board: PlayoutBoard, p: int, color: int) -> int:
    """Stones a move of ``color`` at ``p`` would capture: opponent chains whose last liberty is ``p``."""
    opponent, seen, total = 3 - color, set(), 0
    for n in board.geometry.neighbours[p]:
        if board.color[n] == opponent:
            root = board.head[n]
            if root not in seen and board.libs[root] == {p}:
                seen.add(root)
                stones = board.members[root]
                assert stones is not None  # a chain head's stones
                total += len(stones)
    return total


def _stones_saved_by(board: PlayoutBoard, p: int, color: int) -> int:
    """Stones of ``color`` in atari at ``p`` that a move at ``p`` would leave with at least two liberties."""
    in_atari = {board.head[n] for n in board.geometry.neighbours[p]
                if board.color[n] == color and board.libs[board.head[n]] == {p}}
    if not in_atari:
        return 0
    trial = board.copy()
    trial.empties.remove(p)
    trial.place(p, color)
    if trial.liberties(p) < 2:
        return 0
    saved = 0
    for r in in_atari:
        stones = board.members[r]
        assert stones is not None  # a chain head's stones
        saved += len(stones)
    return saved


# -- the evaluator -----------------------------------------------------------------------------------------------


def _button_points(state: NetPosition) -> float:
    """The button's half point for White (negative for Black) once someone has taken it."""
    return 0.0 if state.button_available else state.button_bonus()


def position_from_state(state: NetPosition) -> PlayoutPosition:
    """The playout view of a ``NetPosition``: stones, side to move, ko/superko bans, komi plus handicap and button bonus (as
    ``NetPosition.score`` counts it), scoring rule and tax, prisoners, passes, the game's legal moves and last move."""
    rules = state.rules
    return PlayoutPosition(
        size=state.size,
        stones=tuple(state.stones().tolist()),
        to_play=int(state.to_play),
        komi=float(state.komi) + float(rules.handicap_bonus(state.handicap)) + _button_points(state),
        territory=rules.scoring is Scoring.TERRITORY,
        tax_all=rules.tax is Tax.ALL,
        banned=tuple(state.banned_points()),
        captures=(state.captures(Color.BLACK), state.captures(Color.WHITE)),
        consecutive_passes=state.consecutive_passes,
        legal_moves=tuple(state.legal_moves()),
        last_move=state.moves[-1][1] if state.moves else PASS,
    )


_SPEC_FLAGS = ("priors", "tactical", "noselfatari", "patterns", "largepatterns", "knowledge", "locality",
               "thirdline", "light", "python")
# What ``playouts`` alone plays, the strongest measured combination (docs/playouts.md); ``light`` drops them.
MODE_DEFAULTS = frozenset({"noselfatari", "knowledge", "tactical", "largepatterns"})
# The smallest board on which ``largepatterns`` plays MoGo's patterns: on 13x13 they lifted the mode against GNU Go
# level 1, on 9x9 no gain was measured (docs/playouts.md, "3x3 patterns").
PATTERNS_MIN_SIZE = 13
# Playouts per evaluation when the spec names none and they are compiled: a compiled playout costs a small part of
# a visit, and eight a visit beat one at equal time (docs/playouts.md, "Compiled playouts"). In Python, one.
COMPILED_PLAYOUTS = 8


class PlayoutEvaluator:
    """An ``Evaluator`` that judges positions by random playouts (no net); see the module docstring.

    Args:
        playouts: playouts per evaluated state (1 is classic MCTS: one playout per new node).
        priors: weight the policy towards captures and atari escapes (:func:`move_priors`) instead of uniform.
        tactical: playouts answer the opponent's last move first when it can be captured or has put a chain in
            atari (:meth:`PlayoutBoard.urgent_moves`); off = the classic light playouts.
        seed: seed of the evaluator's random generator (None = from the OS).
        max_batch: states accepted per :meth:`evaluate` call.
        max_moves: cap on the moves of one playout (default three times the board area).
        no_self_atari: playouts refuse random moves that put a chain of two or more stones in atari.
        amaf: also report all-moves-as-first statistics (``Evaluation.amaf``) for RAVE (``search.rave_equivalence``).
        patterns: playouts play MoGo's 3x3 patterns around the previous move before a random move
            (:meth:`PlayoutBoard.pattern_moves`; after the tactical answers when both are on).
        large_patterns: the same patterns, but only on boards of :data:`PATTERNS_MIN_SIZE` lines or more.
        knowledge: with ``amaf``, also give each evaluated position Go heuristics as imaginary playouts
            (:func:`miai.nets.playouts.knowledge.prior_knowledge`), which start a new node's RAVE statistics.
        locality: with ``knowledge``, add Fuego's locality bonus to it (``Knowledge.locality``: moves valued by
            their common-fate-graph distance from the last move).
        third_line: with ``knowledge``, add Pachi's third-line bonus to it (``Knowledge.third_line``: a third-line
            move with no stone within two points starts as won playouts).
        workers: processes that share a batch of states (1 = all in this process). Their playouts are not
            reproducible from ``seed``; :meth:`close` stops them (they also stop with this process).
        compiled: play the playouts on the compiled board (:mod:`miai.nets.playouts.compiled`) where it can (numba
            installed, no stone-scoring tax); False: always in Python.
    """

    def __init__(
        self,
        playouts: int = 1,
        *,
        priors: bool = False,
        tactical: bool = False,
        no_self_atari: bool = False,
        patterns: bool = False,
        large_patterns: bool = False,
        knowledge: bool = False,
        locality: bool = False,
        third_line: bool = False,
        workers: int = 1,
        compiled: bool = True,
        seed: int | None = None,
        max_batch: int = 64,
        max_moves: int | None = None,
        amaf: bool = False,
    ) -> None:
        if playouts < 1:
            raise PlayoutError(f"playouts must be >= 1, got {playouts}")
        if max_batch < 1:
            raise PlayoutError(f"max_batch must be >= 1, got {max_batch}")
        if workers < 1:
            raise PlayoutError(f"workers must be >= 1, got {workers}")
        self.playouts = playouts
        self.priors = priors
        self.tactical = tactical
        self.no_self_atari = no_self_atari
        self.patterns = patterns
        self.large_patterns = large_patterns
        self.knowledge = knowledge
        self.locality = locality
        self.third_line = third_line
        self._counts = Knowledge(locality=LOCALITY_COUNT if locality else 0.0,
                                 third_line=THIRD_LINE_COUNT if third_line else 0.0)
        self.max_batch = max_batch
        self.max_moves = max_moves
        self.amaf = amaf
        self.workers = workers
        self.compiled = compiled
        if compiled:
            _compiled().warm_up()
        self._seed = seed
        self._rng = random.Random(seed)
        # Spawned, not forked: the engine has threads (GTP reader, pondering) that a fork would copy mid-state.
        self._pool = (ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
                      if workers > 1 else None)

    def close(self) -> None:
        """Stop the worker processes, if any (the evaluator then works in this process)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _options(self) -> dict[str, Any]:
        """What a worker's own evaluator needs to play the same playouts (read at each call: ``amaf`` may change)."""
        return {"playouts": self.playouts, "tactical": self.tactical, "no_self_atari": self.no_self_atari,
                "patterns": self.patterns, "large_patterns": self.large_patterns, "knowledge": self.knowledge,
                "locality": self.locality, "third_line": self.third_line,
                "max_moves": self.max_moves, "amaf": self.amaf, "compiled": self.compiled}

    @staticmethod
    def is_spec(name: str) -> bool:
        """True if ``name`` names the playout evaluator (``playouts``, ``playouts:N``, ``playouts:N:priors``, ...)."""
        return name.strip().lower().split(":")[0] == "playouts"

    @classmethod
    def from_spec(cls, name: str, **options: Any) -> PlayoutEvaluator:
        """Build from a model name as given to ``--model``:
        ``playouts[:N][:priors][:tactical][:noselfatari][:patterns][:largepatterns][:knowledge][:locality][:thirdline]
        [:light][:python]`` (any order).

        ``N`` is the number of playouts per evaluation (default :data:`COMPILED_PLAYOUTS` where the playouts are
        compiled, else 1), ``priors`` switches on the capture/escape
        priors, ``tactical`` the capture/escape playout policy, ``noselfatari`` the refusal of self-atari of chains
        of two or more stones in the playouts, ``patterns`` MoGo's 3x3 patterns in the playouts (``largepatterns``:
        on boards of :data:`PATTERNS_MIN_SIZE` lines or more only) and ``knowledge``
        the prior knowledge of new nodes, ``locality`` Fuego's locality bonus in it and ``thirdline`` Pachi's
        third-line bonus (each with the knowledge).
        ``noselfatari``, ``knowledge``, ``tactical`` and ``largepatterns`` (:data:`MODE_DEFAULTS`)
        are on unless ``light`` is named: ``playouts:light`` is the textbook light playout, flags named with it add
        to it.
        ``python`` plays the playouts in Python even where the compiled board could (for comparisons).
        ``options`` may set ``seed``, ``max_batch``, ``max_moves``, ``amaf`` and ``workers``; other keys (meant for
        nets) are ignored.

        Raises:
            PlayoutError: if ``name`` is not such a spec.
        """
        expected = "expected playouts[:N]" + "".join(f"[:{flag}]" for flag in _SPEC_FLAGS)
        parts = [part.strip().lower() for part in name.split(":")]
        if parts[0] != "playouts" or len(parts) != len(set(parts)) or len(parts) > 2 + len(_SPEC_FLAGS):
            raise PlayoutError(f"not a playout evaluator spec: {name!r} ({expected})")
        playouts, flags = None, set()
        for part in parts[1:]:
            if part in _SPEC_FLAGS:
                flags.add(part)
            elif part.isdigit() and playouts is None:
                playouts = int(part)
            else:
                raise PlayoutError(f"bad part {part!r} in {name!r} (expected a count or one of "
                                   f"{', '.join(_SPEC_FLAGS)})")
        known = {key: options[key] for key in ("seed", "max_batch", "max_moves", "amaf", "workers") if key in options}
        flags = flags - {"light"} if "light" in flags else flags | MODE_DEFAULTS
        if playouts is None:
            fast = "python" not in flags and _compiled().AVAILABLE
            playouts = COMPILED_PLAYOUTS if fast else 1
        return cls(playouts, priors="priors" in flags, tactical="tactical" in flags,
                   no_self_atari="noselfatari" in flags, patterns="patterns" in flags,
                   large_patterns="largepatterns" in flags,
                   knowledge=bool(flags & {"knowledge", "locality", "thirdline"}), locality="locality" in flags,
                   third_line="thirdline" in flags,
                   compiled="python" not in flags, **known)

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """One ``Evaluation`` per state, from the side to move's view (see the module docstring)."""
        positions = [position_from_state(state) for state in states]
        if self._pool is None or len(positions) < 2:
            return [self.evaluate_position(position) for position in positions]
        share = -(-len(positions) // self.workers)
        chunks = [positions[i:i + share] for i in range(0, len(positions), share)]
        options = self._options()
        return [evaluation for part in self._pool.map(_evaluate_in_worker, [options] * len(chunks),
                                                      [self._seed] * len(chunks), chunks)
                for evaluation in part]

    def evaluate_position(self, position: PlayoutPosition) -> Evaluation:
        """The ``Evaluation`` of a :class:`PlayoutPosition` (the same numbers :meth:`evaluate` gives a state)."""
        fast = self._fast(position)
        # The Python board, unless the compiled code does everything: playouts, knowledge, and the legal moves the
        # game gave (the capture/escape priors read the Python board).
        board = (board_from_position(position) if fast is None or self.priors or position.legal_moves is None
                 else None)
        stats = self._playouts(position, board, fast)
        if position.legal_moves is not None:
            legal = list(position.legal_moves)
        else:
            assert board is not None  # (built above whenever the position brings no legal moves)
            legal = legal_board_moves(board, position)
        if board is not None and self.priors:
            policy = move_priors(board, legal, position.to_play)
        else:
            policy = uniform_policy(position.size, legal)
        win = stats.win_rate
        return Evaluation(
            policy=policy,
            win=win,
            loss=1.0 - win,
            no_result=0.0,
            score_mean=stats.score_mean,
            score_stdev=stats.score_stdev,
            lead=stats.score_mean,
            ownership=stats.ownership(),
            amaf=self._amaf(stats, board, position, legal, fast),
        )

    def _fast(self, position: PlayoutPosition) -> Any:
        """The compiled playouts module if it plays this position's playouts, else None."""
        if not self.compiled:
            return None
        fast = _compiled()
        return fast if fast.supports(position) else None

    def _playouts(self, position: PlayoutPosition, board: PlayoutBoard | None, fast: Any) -> PlayoutStats:
        """This evaluation's playouts: compiled by ``fast`` if given, else on the Python ``board``."""
        if fast is not None:
            stats: PlayoutStats = fast.run_playouts_compiled(position, self.playouts, self._rng,
                                                             max_moves=self.max_moves, amaf=self.amaf,
                                                             no_self_atari=self.no_self_atari, tactical=self.tactical,
                                                             patterns=self._patterns(position))
            return stats
        return run_playouts(position, self.playouts, self._rng, max_moves=self.max_moves, template=board,
                            tactical=self.tactical, amaf=self.amaf, no_self_atari=self.no_self_atari,
                            patterns=self._patterns(position))

    def _patterns(self, position: PlayoutPosition) -> bool:
        """Whether this position's playouts play the 3x3 patterns (``patterns``, or ``large_patterns`` on a board
        large enough)."""
        return self.patterns or (self.large_patterns and position.size >= PATTERNS_MIN_SIZE)

    def _amaf(self, stats: PlayoutStats, board: PlayoutBoard | None, position: PlayoutPosition,
              legal: Sequence[int], fast: Any) -> Amaf | None:
        """The playouts' AMAF statistics, with the prior knowledge of the position when asked for (compiled by
        ``fast`` if given, else read off the Python ``board``)."""
        if stats.amaf_first is None or stats.amaf_white_wins is None:
            return None
        prior_n = prior_w = None
        if self.knowledge and fast is not None:
            prior_n, prior_w = fast.prior_knowledge_compiled(position, legal, self._counts)
        elif self.knowledge and board is not None:
            last = PASS if position.last_move == PASS else board.geometry.points[position.last_move]
            prior_n, prior_w = prior_knowledge(board, position.to_play, last, legal, self._counts)
        return Amaf(stats.amaf_first, stats.amaf_white_wins, stats.playouts, stats.white_win_total, prior_n, prior_w)


def _compiled() -> Any:
    """The compiled playouts module, imported on first use: numba takes a while to import, and only the playout
    mode needs it."""
    from miai.nets.playouts import compiled

    return compiled


_WORKER_EVALUATORS: dict[tuple[tuple[str, Any], ...], PlayoutEvaluator] = {}


def _evaluate_in_worker(options: dict[str, Any], seed: int | None,
                        positions: list[PlayoutPosition]) -> list[Evaluation]:
    """A worker process's share of a batch: its own evaluator per set of options, seeded apart from the others."""
    key = tuple(sorted(options.items()))
    evaluator = _WORKER_EVALUATORS.get(key)
    if evaluator is None:
        worker_seed = None if seed is None else seed * 1_000_003 + os.getpid()
        evaluator = _WORKER_EVALUATORS[key] = PlayoutEvaluator(**options, seed=worker_seed)
    return [evaluator.evaluate_position(position) for position in positions]
