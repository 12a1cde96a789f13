"""Teacher-labelled training positions (numpy and onnxruntime only; no torch).

Two sources of positions, both labelled by the same teacher net:

- self-play: the teacher plays itself, each move sampled from its policy with a temperature
  (hotter in the opening), with random komi and rules; every position it sees is stored, so the
  games cost nothing beyond the labels;
- real games (``all.kifu``: ``id<TAB>;B[pd];W[dd]...`` one game per line): a random game replayed
  to a random move number, with random komi and rules.

Each position is stored as the net inputs miai computes (``miai.nets.features``: 22 spatial planes,
all 0/1 and bit-packed, plus 19 global floats) with the teacher's decoded outputs from the side to
move's view: policy over ``size*size + 1`` moves (0 on illegal moves), (win, loss, no result),
(score mean, score stdev, lead) in points, and ownership in [-1, 1].

Shards are ``.npz`` files of one board size each, written atomically, so a run can be stopped at
any time and resumed (it only adds shards) and training can read shards while they are produced.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from miai.go.coords import PASS, Color
from miai.go.errors import GoError, SgfError
from miai.go.rules import Rules
from miai.go.sgf import load_sgf
from miai.go.state import GameState
from miai.nets import features
from miai.nets.decode import DecodedBatch, decode_batch
from miai.nets.evaluator import Evaluator, OnnxEvaluator, legal_mask
from miai.nets.train import TrainError

__all__ = [
    "Labels",
    "Teacher",
    "Lookahead",
    "mixed_value",
    "improved_policy",
    "ShardWriter",
    "SelfPlayConfig",
    "KifuConfig",
    "self_play_positions",
    "kifu_positions",
    "generate",
    "read_kifu_games",
    "random_game",
    "sample_move",
]

RULE_CHOICES = ("tromp-taylor", "chinese", "japanese")


@dataclass
class Labels:
    """A batch of labelled positions of one board size (arrays share their first axis)."""

    size: int
    spatial: np.ndarray  # uint8 [N, packed bytes of 22*size*size bits]
    global_: np.ndarray  # float32 [N, 19]
    policy: np.ndarray  # float16 [N, size*size + 1]
    value: np.ndarray  # float32 [N, 3] win, loss, no result
    score: np.ndarray  # float32 [N, 3] score mean, score stdev, lead (points)
    ownership: np.ndarray  # float16 [N, size*size]

    def __len__(self) -> int:
        return int(self.spatial.shape[0])

    @staticmethod
    def concat(parts: Sequence[Labels]) -> Labels:
        """One batch holding ``parts`` in order (all of one size)."""
        sizes = {p.size for p in parts}
        if len(sizes) != 1:
            raise TrainError(f"cannot concatenate labels of several board sizes {sorted(sizes)}")
        names = ("spatial", "global_", "policy", "value", "score", "ownership")
        arrays = {n: np.concatenate([getattr(p, n) for p in parts]) for n in names}
        return Labels(size=parts[0].size, **arrays)


def pack_spatial(spatial: np.ndarray) -> np.ndarray:
    """[22, s, s] 0/1 planes -> packed uint8 bits (checks that the planes are binary)."""
    bits = spatial.reshape(-1)
    if not np.all((bits == 0.0) | (bits == 1.0)):
        raise TrainError("spatial feature planes are expected to be 0/1")
    return np.packbits(bits.astype(np.uint8))


def unpack_spatial(packed: np.ndarray, size: int) -> np.ndarray:
    """Packed bits [N, B] -> float32 [N, 22, size, size]."""
    count = features.NUM_SPATIAL * size * size
    bits = np.unpackbits(packed, axis=-1, count=count)
    return bits.reshape(-1, features.NUM_SPATIAL, size, size).astype(np.float32)


class Teacher:
    """The teacher net (an ``OnnxEvaluator`` with a dynamic board size) labelling positions.

    It encodes each position once and keeps the inputs it fed the net, which become the student's
    inputs: the features stored are exactly the ones the teacher saw.
    """

    def __init__(self, evaluator: Evaluator) -> None:
        if not isinstance(evaluator, OnnxEvaluator):
            raise TrainError(f"the teacher must be an ONNX net (a converted KataGo model), not {type(evaluator).__name__}")
        if evaluator.info.nn_len is not None:
            raise TrainError("the teacher must be converted with a dynamic board size")
        self.evaluator = evaluator
        self.output_names = [o.name for o in evaluator.session.get_outputs()]
        self.evaluations = 0

    def label(self, states: Sequence[GameState], lookahead: Lookahead | None = None) -> Labels:
        """Labels ``states`` (all of one board size) in one onnxruntime call (two with ``lookahead``)."""
        size = int(states[0].size)
        encoded = [features.encode(s) for s in states]
        decoded = self._evaluate(states, encoded)
        assert decoded.ownership is not None
        policy = decoded.policy
        value = np.stack([decoded.win, decoded.loss, decoded.no_result], axis=1)
        if lookahead is not None:
            root = (1.0 + decoded.win - decoded.loss) / 2.0
            children = self._children(states, policy, lookahead.children)
            q = np.repeat(root[:, None], policy.shape[1], axis=1)  # moves not evaluated keep the root's value
            q[children.rows, children.moves] = (1.0 + children.value[:, 0] - children.value[:, 1]) / 2.0
            improved = improved_policy(policy, q, lookahead.scale)
            if lookahead.mix_value:
                value = mixed_value(value, policy, children)
            policy = improved
        return Labels(
            size=size,
            spatial=np.stack([pack_spatial(e[0]) for e in encoded]),
            global_=np.stack([e[1] for e in encoded]).astype(np.float32),
            policy=policy.astype(np.float16),
            value=value.astype(np.float32),
            score=np.stack([decoded.score_mean, decoded.score_stdev, decoded.lead], axis=1).astype(np.float32),
            ownership=decoded.ownership.astype(np.float16),
        )

    def _evaluate(self, states: Sequence[GameState], encoded: Sequence[tuple[np.ndarray, np.ndarray]]) -> DecodedBatch:
        """The teacher's decoded outputs for ``states`` from their encoded inputs, in one call."""
        legal = np.stack([legal_mask(s) for s in states])
        allow = np.array([features.allows_no_result(s.rules) for s in states])
        self.evaluations += len(states)
        return self._decoded(np.stack([e[0] for e in encoded]), np.stack([e[1] for e in encoded]), legal, allow)

    def log_outputs(self, spatial: np.ndarray, global_: np.ndarray,
                    policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The teacher's log-probabilities of each move and of (win, loss, no result) for stored inputs
        (float32 [N, 22, s, s] and [N, 19]), as ``holdout_metrics`` reads a student's. Stored positions keep no
        history, so the legal moves are taken as the empty points, the moves ``policy`` (the stored targets)
        gives any weight, and pass: a point illegal by ko or suicide may keep a little of the teacher's mass."""
        n, size = spatial.shape[0], spatial.shape[-1]
        empty = (spatial[:, 1] + spatial[:, 2] == 0).reshape(n, size * size)
        legal = np.concatenate([empty | (policy[:, :-1] > 0), np.ones((n, 1), bool)], axis=1)
        # features.allows_no_result read back from the global inputs: simple ko (both ko planes 0) or territory.
        _, ko = features.family_planes("ko_rule")
        _, territory = features.family_planes("territory_scoring")
        allow = np.all(global_[:, ko] == 0, axis=1) | np.any(global_[:, territory] > 0, axis=1)
        decoded = self._decoded(spatial, global_, legal, allow)
        value = np.stack([decoded.win, decoded.loss, decoded.no_result], axis=1)
        tiny = 1e-30  # a zero probability stays finite, as a student's log-softmax always is
        return np.log(np.maximum(decoded.policy, tiny)), np.log(np.maximum(value, tiny))

    def _decoded(self, spatial: np.ndarray, global_: np.ndarray, legal: np.ndarray, allow: np.ndarray) -> DecodedBatch:
        """One onnxruntime call on net inputs, decoded with the given legal moves and no-result permissions."""
        outputs = self.evaluator.session.run(None, {"input_spatial": spatial, "input_global": global_})
        named = dict(zip(self.output_names, outputs))
        n, area = spatial.shape[0], spatial.shape[-1] * spatial.shape[-2]
        return decode_batch(named["policy"], named["value"], named["miscvalue"], named["ownership"].reshape(n, area),
                            legal, allow, self.evaluator.info.post)

    def _children(self, states: Sequence[GameState], policy: np.ndarray, count: int) -> Children:
        """The teacher's value after each state's ``count`` likeliest moves (pass aside), in one call."""
        rows: list[int] = []
        moves: list[int] = []
        encoded: list[tuple[np.ndarray, np.ndarray]] = []
        children: list[GameState] = []
        for k, state in enumerate(states):
            for move in top_moves(policy[k], count):
                child = state.copy()
                child.push(move)
                children.append(child)
                encoded.append(features.encode(child))
                rows.append(k)
                moves.append(move)
        value = np.zeros((0, 3), np.float32)
        if children:
            decoded = self._evaluate(children, encoded)
            # The child's win is the opponent's: from the parent's view win and loss swap.
            value = np.stack([decoded.loss, decoded.win, decoded.no_result], axis=1)
        return Children(np.array(rows, np.intp), np.array(moves, np.intp), value)


@dataclass(frozen=True)
class Children:
    """The positions one ply below a batch: row of the parent, move played, the teacher's (win, loss, no
    result) there from the parent's view."""

    rows: np.ndarray
    moves: np.ndarray
    value: np.ndarray


def mixed_value(root: np.ndarray, prior: np.ndarray, children: Children) -> np.ndarray:
    """Value targets backed up one ply: Gumbel MuZero's v_mix with one visit per evaluated child,
    ``(v + n * sum(prior_a * v_a) / sum(prior_a)) / (1 + n)`` over the n children of each row (rows
    without children keep their own value)."""
    mixed = root.astype(np.float64).copy()
    weights = prior[children.rows, children.moves].astype(np.float64)
    for k in np.unique(children.rows):
        mine = children.rows == k
        n = int(mine.sum())
        backed = (weights[mine, None] * children.value[mine]).sum(axis=0) / max(weights[mine].sum(), 1e-12)
        mixed[k] = (root[k] + n * backed) / (1 + n)
    return mixed


@dataclass(frozen=True)
class Lookahead:
    """One-ply lookahead targets: a cheap stand-in for teacher searches.

    The teacher also evaluates the positions after its ``children`` likeliest moves, and the policy
    target becomes ``softmax(log prior + scale * q)``, q the move's winrate for the player to move
    (the root's own winrate for moves not evaluated). This is the completed-Q policy improvement of
    Gumbel MuZero (Danihelka et al., 2022) with one visit per child: its sigma is
    ``(c_visit + max visits) * c_scale * q`` = (50 + 1) * 0.1 * q, hence ``scale`` 5. Self-play
    then samples its moves from the improved policy too. With ``mix_value`` the value target is
    backed up from the same children (``mixed_value``), so that it too says what a shallow search
    of the teacher finds rather than its first impression.
    """

    children: int = 8
    scale: float = 5.0
    mix_value: bool = False


def top_moves(policy: np.ndarray, count: int) -> list[int]:
    """The ``count`` board moves (pass excluded) with the highest positive probability, best first."""
    board = policy[:-1].astype(np.float32)
    order = np.argsort(-board, kind="stable")[:count]
    return [int(m) for m in order if board[m] > 0]


def improved_policy(policy: np.ndarray, q: np.ndarray, scale: float) -> np.ndarray:
    """``softmax(log policy + scale * q)`` over each row's moves of positive probability (others stay 0)."""
    legal = policy > 0
    logits = np.where(legal, np.log(np.where(legal, policy, 1.0)) + scale * q, -np.inf)
    logits -= logits.max(axis=1, keepdims=True)
    weights: np.ndarray = np.where(legal, np.exp(logits), 0.0)
    improved: np.ndarray = (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)
    return improved


class ShardWriter:
    """Accumulates labels of one board size and writes ``<prefix>-<size>-<index>.npz`` shards."""

    def __init__(self, directory: Path, prefix: str, size: int, shard_size: int = 2048) -> None:
        self.directory = Path(directory)
        self.prefix = f"{prefix}-{size:02d}"
        self.size = size
        self.shard_size = shard_size
        self._pending: list[Labels] = []
        self._count = 0
        self.written = 0
        existing = sorted(self.directory.glob(f"{self.prefix}-*.npz"))
        self._index = len(existing)

    def add(self, labels: Labels) -> None:
        """Queue ``labels``; writes a shard whenever ``shard_size`` positions are pending."""
        self._pending.append(labels)
        self._count += len(labels)
        if self._count >= self.shard_size:
            self.flush()

    def flush(self) -> Path | None:
        """Write whatever is pending as one shard (None when nothing is)."""
        if not self._pending:
            return None
        batch = Labels.concat(self._pending)
        path = self.directory / f"{self.prefix}-{self._index:05d}.npz"
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            size=np.array(batch.size),
            spatial=batch.spatial,
            global_=batch.global_,
            policy=batch.policy,
            value=batch.value,
            score=batch.score,
            ownership=batch.ownership,
        )
        tmp.rename(path)  # atomic: readers never see half a shard
        self._index += 1
        self.written += len(batch)
        self._pending, self._count = [], 0
        return path


def random_game(size: int, rng: np.random.Generator, komi_range: tuple[float, float]) -> GameState:
    """An empty game with random rules and a random komi (a multiple of 0.5 in ``komi_range``)."""
    name = str(rng.choice(RULE_CHOICES))
    low, high = komi_range
    komi = float(rng.integers(int(low * 2), int(high * 2) + 1)) / 2.0
    return GameState(size=size, rules=Rules.preset(name), komi=komi)


def sample_move(policy: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """A move drawn from ``policy ** (1 / temperature)`` (pass is the last entry)."""
    p = policy.astype(np.float64)
    if temperature != 1.0:
        p = np.where(p > 0, p ** (1.0 / temperature), 0.0)
    p /= p.sum()
    index = int(rng.choice(p.size, p=p))
    return PASS if index == p.size - 1 else index


@dataclass(frozen=True)
class SelfPlayConfig:
    """Teacher self-play settings."""

    size: int = 9
    parallel_games: int = 32
    temperature: float = 0.8
    opening_temperature: float = 1.2
    opening_moves: int = 8
    komi_range: tuple[float, float] = (5.5, 8.5)
    max_moves_per_area: float = 1.6  # games stop after size*size*this moves at the latest
    seed: int = 0
    lookahead: Lookahead | None = None  # policy targets improved by one-ply lookahead (moves sampled from them)


def self_play_positions(teacher: Teacher, config: SelfPlayConfig) -> Iterator[Labels]:
    """Endless labelled batches from ``parallel_games`` concurrent teacher self-play games."""
    rng = np.random.default_rng(config.seed)
    size = config.size
    limit = int(size * size * config.max_moves_per_area)
    games = [random_game(size, rng, config.komi_range) for _ in range(config.parallel_games)]
    while True:
        labels = teacher.label(games, config.lookahead)
        yield labels
        for k, game in enumerate(games):
            hot = len(game.moves) < config.opening_moves
            temperature = config.opening_temperature if hot else config.temperature
            move = sample_move(labels.policy[k], temperature, rng)
            game.push(move)
            if game.is_over() or len(game.moves) >= limit:
                games[k] = random_game(size, rng, config.komi_range)


def read_kifu_games(path: Path, size: int = 19,
                    warn: Callable[[str], None] | None = None) -> list[list[int]]:
    """Move lists of every game in a kifu file (``id<TAB>;B[pd];W[dd]...`` per line).

    Each line's nodes are read by the SGF reader (``miai.go.sgf``), so an old record's quirks are repaired as in an
    SGF file, each with a warning naming the file, line and column; a line it cannot read, or with setup stones, is
    skipped with a warning. The warnings go to ``warn`` (default: a line on stderr each). Games whose moves do not
    alternate B/W from Black are cut where they stop alternating; games under 10 moves are left out.
    """
    say = warn if warn is not None else _print_warning
    games: list[list[int]] = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            moves = _kifu_moves(path, number, line.rstrip("\n"), size, say)
            if len(moves) >= 10:
                games.append(moves)
    if not games:
        raise TrainError(f"no usable games in {path}")
    return games


def _kifu_moves(path: Path, number: int, line: str, size: int, say: Callable[[str], None]) -> list[int]:
    """The moves of one kifu line, alternating from Black (see ``read_kifu_games``)."""
    game_id, _, body = line.partition("\t")
    if not body.strip():
        return []
    # The line's nodes under a root that gives the board: positions in the text are the file's, once shifted by the
    # root's width (everything is on one line).
    root = f"(;GM[1]FF[4]SZ[{size}]"
    shift = len(root) - len(game_id) - 1
    try:
        game = load_sgf(root + body + ")")
    except SgfError as exc:
        say(f"{path}: line {number}, column {(exc.column or shift + 1) - shift}: game skipped: {exc.problem}")
        return []
    for warning in game.warnings:
        say(str(replace(warning, line=number, column=warning.column - shift, source=str(path))))
    if game.setup_black or game.setup_white:
        say(f"{path}: line {number}: game skipped: it has setup stones (AB/AW), a kifu line holds moves only")
        return []
    moves = []
    for k, (color, move) in enumerate(game.moves[: min((setup.after for setup in game.later_setup), default=len(game.moves))]):
        if color != (Color.BLACK if k % 2 == 0 else Color.WHITE):
            break
        moves.append(move)
    return moves


def _print_warning(message: str) -> None:
    print(f"miai: warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class KifuConfig:
    """Real-game position sampling settings."""

    path: str  # one game a line: id<TAB>;B[pd];W[dd]...
    batch: int = 32
    komi_range: tuple[float, float] = (5.5, 8.5)
    seed: int = 0
    lookahead: Lookahead | None = None  # policy targets improved by one-ply lookahead


def _replay(moves: list[int], upto: int, game: GameState) -> GameState:
    """``game`` after the first ``upto`` moves (stops early at an illegal move)."""
    for move in moves[:upto]:
        try:
            game.push(move)
        except GoError:
            break
    return game


def kifu_positions(teacher: Teacher, config: KifuConfig, size: int = 19) -> Iterator[Labels]:
    """Endless labelled batches of positions from random real games at random move numbers."""
    rng = np.random.default_rng(config.seed)
    games = read_kifu_games(Path(config.path), size)
    while True:
        states = []
        for _ in range(config.batch):
            moves = games[int(rng.integers(len(games)))]
            upto = int(rng.integers(0, len(moves) + 1))
            states.append(_replay(moves, upto, random_game(size, rng, config.komi_range)))
        yield teacher.label(states, config.lookahead)


@dataclass
class GenProgress:
    """Counters a progress callback receives."""

    positions: int = 0
    seconds: float = 0.0
    shards: list[Path] = field(default_factory=list)


def generate(
    batches: Iterator[Labels],
    writer: ShardWriter,
    *,
    positions: int,
    max_seconds: float = 0.0,
    progress: Callable[[GenProgress], None] | None = None,
) -> GenProgress:
    """Pull labelled batches into ``writer`` until ``positions`` are written or time runs out
    (``max_seconds`` 0 = no limit); flushes the last partial shard."""
    state = GenProgress()
    start = time.monotonic()
    while state.positions < positions:
        labels = next(batches)
        writer.add(labels)
        state.positions += len(labels)
        state.seconds = time.monotonic() - start
        if progress is not None:
            progress(state)
        if max_seconds and state.seconds >= max_seconds:
            break
    last = writer.flush()
    if last is not None:
        state.shards.append(last)
    return state
