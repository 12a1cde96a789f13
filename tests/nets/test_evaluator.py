"""Evaluators: the uniform one, onnxruntime with symmetries and batching, and the LRU cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from miai.go.coords import Color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import features, symmetry
from miai.nets.decode import masked_softmax
from miai.nets.cache import CHUNK_ROWS, CachedEvaluator
from miai.nets.evaluator import (
    Evaluation,
    Evaluator,
    EvaluatorError,
    OnnxEvaluator,
    UniformEvaluator,
    legal_mask,
)
from miai.nets.features import FeatureMismatchError

from .concurrency import run_in_threads
from .tiny_nets import build_tiny_net

MOVES = "b C3 w D4 b E5 w C4 b B4 w pass b F2"


def game(size: int = 9, moves: str = MOVES, rules: str = "chinese") -> GameState:
    state = GameState(size=size, rules=Rules.preset(rules), komi=7.5)
    tokens = moves.split()
    for color, vertex in zip(tokens[::2], tokens[1::2]):
        state.push(parse_gtp(vertex, size), Color.BLACK if color == "b" else Color.WHITE)
    return state


def transformed(state: GameState, sym: int) -> GameState:
    """The same game with every move moved by ``sym``."""
    other = GameState(size=state.size, rules=state.rules, komi=state.komi)
    for color, move in state.moves:
        other.push(symmetry.map_point(move, state.size, sym), color)
    return other


@pytest.fixture(scope="module")
def dynamic_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_net(tmp_path_factory.mktemp("nets") / "tiny.onnx")


@pytest.fixture(scope="module")
def fixed_net(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_net(tmp_path_factory.mktemp("nets") / "tiny13.onnx", board_size=13)


def assert_same(a: Evaluation, b: Evaluation, tol: float = 1e-5) -> None:
    assert np.allclose(a.policy, b.policy, atol=tol)
    assert np.allclose([a.win, a.loss, a.no_result, a.lead, a.score_mean, a.score_stdev],
                       [b.win, b.loss, b.no_result, b.lead, b.score_mean, b.score_stdev], atol=tol * 10)
    assert a.ownership is not None and b.ownership is not None
    assert np.allclose(a.ownership, b.ownership, atol=tol)


def test_uniform_evaluator_spreads_policy_over_legal_moves() -> None:
    state = game()
    evaluator = UniformEvaluator()
    assert isinstance(evaluator, Evaluator)
    (result,) = evaluator.evaluate([state])
    legal = legal_mask(state)
    assert np.allclose(result.policy[legal], 1.0 / legal.sum()) and not result.policy[~legal].any()
    assert result.policy[-1] > 0  # pass is always legal
    assert (result.win, result.loss, result.value) == (0.5, 0.5, 0.0)


def test_onnx_policy_is_legal_and_normalised(dynamic_net: Path) -> None:
    state = game()
    (result,) = OnnxEvaluator(str(dynamic_net)).evaluate([state])
    legal = legal_mask(state)
    assert result.policy.shape == (82,) and result.policy.dtype == np.float32
    assert not result.policy[~legal].any() and (result.policy[legal] > 0).all()
    assert result.policy.sum() == pytest.approx(1.0, abs=1e-5)
    assert result.win + result.loss + result.no_result == pytest.approx(1.0)
    assert result.ownership is not None and np.abs(result.ownership).max() <= 1.0


def test_evaluation_matches_a_direct_onnxruntime_run(dynamic_net: Path) -> None:
    state = game()
    spatial, global_ = features.encode(state)
    session = ort.InferenceSession(str(dynamic_net), providers=["CPUExecutionProvider"])
    policy, value, misc, owner = session.run(None, {"input_spatial": spatial[None], "input_global": global_[None]})
    legal = legal_mask(state)
    evaluator = OnnxEvaluator(str(dynamic_net))
    normal = evaluator.evaluate_with([state], [[0]], optimism=0.0)[0]
    optimistic = evaluator.evaluate_with([state], [[0]], optimism=1.0)[0]
    assert np.allclose(normal.policy, masked_softmax(policy[:, 0].astype(np.float64), legal[None])[0], atol=1e-6)
    assert np.allclose(optimistic.policy, masked_softmax(policy[:, 1].astype(np.float64), legal[None])[0], atol=1e-6)
    assert np.allclose(normal.ownership, np.tanh(owner[0, 0].reshape(-1)), atol=1e-6)
    # chinese rules (simple ko): the no-result output is kept
    e = np.exp(value[0] - value[0].max())
    assert normal.no_result == pytest.approx(e[2] / e.sum(), rel=1e-5)
    assert normal.lead == pytest.approx(20 * misc[0, 2] * (1 - normal.no_result), rel=1e-5)


@pytest.mark.parametrize("sym", range(8))
def test_a_symmetry_equals_evaluating_the_transformed_board(dynamic_net: Path, sym: int) -> None:
    state = game()
    evaluator = OnnxEvaluator(str(dynamic_net))
    rotated = evaluator.evaluate_with([state], [[sym]], 0.0)[0]
    moved = evaluator.evaluate_with([transformed(state, sym)], [[0]], 0.0)[0]
    size = state.size
    for point in range(size * size):
        there = symmetry.map_point(point, size, sym)
        assert rotated.policy[point] == pytest.approx(moved.policy[there], abs=1e-6)
        assert rotated.ownership[point] == pytest.approx(moved.ownership[there], abs=1e-6)
    assert rotated.policy[-1] == pytest.approx(moved.policy[-1], abs=1e-6)
    assert rotated.win == pytest.approx(moved.win, abs=1e-6)


def test_symmetry_modes(dynamic_net: Path) -> None:
    state = game()
    fixed = [OnnxEvaluator(str(dynamic_net), symmetry=s).evaluate([state])[0] for s in range(8)]
    assert not np.allclose(fixed[0].policy, fixed[5].policy, atol=1e-4)  # the tiny net is not symmetric
    average = OnnxEvaluator(str(dynamic_net), symmetry_mode="average").evaluate([state])[0]
    assert np.allclose(average.policy, np.mean([f.policy for f in fixed], axis=0), atol=1e-6)
    assert average.lead == pytest.approx(np.mean([f.lead for f in fixed]), abs=1e-5)
    random_a = OnnxEvaluator(str(dynamic_net), symmetry_mode="random", seed=3).evaluate([state] * 6)
    random_b = OnnxEvaluator(str(dynamic_net), symmetry_mode="random", seed=3).evaluate([state] * 6)
    for a, b in zip(random_a, random_b):
        assert np.array_equal(a.policy, b.policy)
        assert any(np.allclose(a.policy, f.policy, atol=1e-6) for f in fixed)
    assert len({r.policy.tobytes() for r in random_a}) > 1


def test_fixed_size_net_pads_small_boards_top_left(dynamic_net: Path, fixed_net: Path) -> None:
    states = [game(), game(size=13, moves="b D4 w K10")]
    dynamic = OnnxEvaluator(str(dynamic_net)).evaluate(states)
    fixed = OnnxEvaluator(str(fixed_net)).evaluate(states)
    for a, b in zip(dynamic, fixed):
        assert_same(a, b)
    with pytest.raises(EvaluatorError, match="larger"):
        OnnxEvaluator(str(fixed_net)).evaluate([GameState(size=19)])


def test_batches_of_mixed_sizes_match_single_evaluations(dynamic_net: Path) -> None:
    states = [game(), game(size=7, moves="b D4"), game(moves="b E5"), game(size=13, moves="b D4 w pass"), game()]
    single = [OnnxEvaluator(str(dynamic_net)).evaluate([s])[0] for s in states]
    batched = OnnxEvaluator(str(dynamic_net), max_batch=2).evaluate(states)
    assert len(batched) == len(states)
    for a, b in zip(single, batched):
        assert a.policy.shape == b.policy.shape
        assert_same(a, b)


def test_no_result_is_dropped_under_superko_area_rules(dynamic_net: Path) -> None:
    evaluator = OnnxEvaluator(str(dynamic_net))
    assert evaluator.evaluate([game(rules="tromp-taylor")])[0].no_result == 0.0
    assert evaluator.evaluate([game(rules="japanese")])[0].no_result > 0.0


def test_a_net_with_other_inputs_is_refused(tmp_path: Path) -> None:
    path = build_tiny_net(tmp_path / "v6.onnx", spatial_channels=13)
    with pytest.raises(FeatureMismatchError):
        OnnxEvaluator(str(path))


def test_bad_files_and_options(tmp_path: Path, dynamic_net: Path) -> None:
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    with pytest.raises(EvaluatorError):
        OnnxEvaluator(str(junk))
    with pytest.raises(ValueError):
        OnnxEvaluator(str(dynamic_net), symmetry_mode="sometimes")
    with pytest.raises(ValueError):
        OnnxEvaluator(str(dynamic_net), symmetry=8)


class CountingEvaluator(UniformEvaluator):
    """A uniform evaluator that records how many positions it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.positions = 0

    def evaluate(self, states):  # type: ignore[no-untyped-def]
        self.positions += len(states)
        return super().evaluate(states)


def test_the_cache_declares_what_it_offers_and_a_plain_evaluator_does_not() -> None:
    from miai.nets.evaluator import CachingEvaluator, WrappingEvaluator, innermost

    inner = UniformEvaluator()
    cache = CachedEvaluator(inner, capacity=10)
    assert isinstance(cache, CachingEvaluator) and isinstance(cache, WrappingEvaluator)
    assert not isinstance(inner, CachingEvaluator) and not isinstance(inner, WrappingEvaluator)
    assert innermost(cache, 19) is inner and innermost(inner, 19) is inner


def test_cache_returns_stored_evaluations_and_counts_hits() -> None:
    inner = CountingEvaluator()
    cache = CachedEvaluator(inner, capacity=10)
    a, b = game(), game(moves="b D4")
    first = cache.evaluate([a, b, a])
    assert inner.positions == 2 and (cache.hits, cache.misses) == (1, 2)
    assert first[0] is first[2]
    again = cache.evaluate([game(), b])
    assert inner.positions == 2 and cache.hits == 3
    assert same_evaluation(again[0], first[0]) and same_evaluation(again[1], first[1])


def same_evaluation(a: Evaluation, b: Evaluation) -> bool:
    """Every output equal, arrays element for element."""
    def equal(x: object, y: object) -> bool:
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.dtype == y.dtype and \
                bool(np.array_equal(x, y))
        return x == y
    return all(equal(getattr(a, name), getattr(b, name)) for name in vars(a))


def test_a_cached_net_evaluation_comes_back_exactly_and_owns_its_memory(dynamic_net: Path) -> None:
    """The net's outputs are views into its whole batch; the cache keeps copies (a 9x9 entry in 0.7 kB, not the
    batch's arrays), hands out copies, and gives back every output bit for bit."""
    cache = CachedEvaluator(OnnxEvaluator(str(dynamic_net)), capacity=3 * CHUNK_ROWS)
    states = [game(moves=f"b {v}") for v in ("C3", "D4", "E5")]
    fresh = cache.evaluate(states)
    assert fresh[0].ownership is not None
    kept = cache.evaluate(states)
    assert cache.hits == 3
    for a, b in zip(fresh, kept):
        assert same_evaluation(a, b)
        assert not np.shares_memory(a.policy, b.policy) and b.policy.base is None
    kept[0].policy[:] = 0  # the search may change what it was given
    assert same_evaluation(cache.evaluate(states[:1])[0], fresh[0])
    assert cache.nbytes() == CHUNK_ROWS * (4 * 82 + 4 * 81 + 8 * 9)  # one chunk of 9x9 rows


def test_the_cache_takes_memory_as_it_fills_and_never_beyond_its_capacity(monkeypatch: pytest.MonkeyPatch) -> None:
    from miai.nets import cache as cache_module

    monkeypatch.setattr(cache_module, "CHUNK_ROWS", 4)
    cache = CachedEvaluator(UniformEvaluator(), capacity=6)
    assert cache.nbytes() == 0
    row = 4 * 82 + 4 * 81 + 8 * 9  # policy, ownership and nine scalars of a 9x9 position
    states = [game(moves=f"b {v} w {w}") for v in ("A1", "B2", "C3", "D4") for w in ("A9", "B8", "C7", "D6", "E5")]
    cache.evaluate(states[:3])
    assert cache.nbytes() == 4 * row
    for start in range(0, 40, 3):  # many more positions than the capacity, evicting as they go
        batch = [states[(start + k) % len(states)] for k in range(5)]
        assert all(same_evaluation(a, b) for a, b in zip(cache.evaluate(batch), UniformEvaluator().evaluate(batch)))
        assert len(cache) <= 6 and cache.nbytes() <= 8 * row  # six slots' rows fit in two chunks, and no more
    cache.clear()
    assert len(cache) == 0 and cache.nbytes() == 0


def test_a_new_entry_replaces_the_one_in_its_slot_as_katagos_nn_cache() -> None:
    inner = CountingEvaluator()
    cache = CachedEvaluator(inner, capacity=2)
    pool = [game(moves=f"b {v}{r}") for v in "ABCDEFGHJ" for r in (1, 2)]
    slot = {i: int.from_bytes(features.input_key(s)[:8], "little") % 2 for i, s in enumerate(pool)}
    a = 0
    b = next(i for i in slot if slot[i] == slot[a] and i != a)  # shares a's slot
    c = next(i for i in slot if slot[i] != slot[a])  # the other slot
    cache.evaluate([pool[a], pool[c]])
    assert len(cache) == 2 and inner.positions == 2
    cache.evaluate([pool[b]])  # replaces a, keeps c
    assert len(cache) == 2 and inner.positions == 3
    cache.evaluate([pool[c], pool[b]])
    assert inner.positions == 3
    cache.evaluate([pool[a]])
    assert inner.positions == 4
    cache.clear()
    assert len(cache) == 0


def test_cache_keeps_history_sensitive_positions_apart(dynamic_net: Path) -> None:
    cache = CachedEvaluator(OnnxEvaluator(str(dynamic_net)), capacity=100)
    a = game(moves="b C3 w D4 b E5")
    b = game(moves="b E5 w D4 b C3")  # same stones, different last moves: different net inputs
    ra, rb = cache.evaluate([a, b])
    assert cache.misses == 2
    assert not np.allclose(ra.policy, rb.policy)


def test_a_situation_keyed_cache_shares_transpositions_as_katago(dynamic_net: Path) -> None:
    """Keyed by the situation (net.cache_key = "situation", KataGo's NN cache), the second move order gets the
    evaluation made with the first order's history."""
    cache = CachedEvaluator(OnnxEvaluator(str(dynamic_net)), capacity=100, key=features.situation_key)
    a = game(moves="b C3 w D4 b E5")
    b = game(moves="b E5 w D4 b C3")
    ra, rb = cache.evaluate([a, b])
    assert (cache.hits, cache.misses) == (1, 1) and rb is ra


def test_a_playout_advantage_is_the_side_to_moves_and_clears_the_cache(dynamic_net: Path) -> None:
    net = OnnxEvaluator(str(dynamic_net))
    black, white = game(moves="b C3"), game(moves="b C3 w D4")  # White, then Black to move
    plain = net.evaluate([black, white])
    net.set_playout_advantage(int(Color.WHITE), 1.0)
    got = net.evaluate([black, white])
    wanted = net.evaluate_with([black, white], [[0], [0]], 0.0, advantages=[1.0, -1.0])
    assert got[0].win == wanted[0].win and got[1].win == wanted[1].win
    assert got[0].win != plain[0].win and got[1].win != plain[1].win
    cache = CachedEvaluator(net, capacity=10)
    cache.evaluate([black])
    cache.set_playout_advantage(int(Color.WHITE), 2.0)
    assert len(cache) == 0  # made with the old advantage: forgotten
    cache.evaluate([black])
    cache.set_playout_advantage(int(Color.WHITE), 2.0)
    assert len(cache) == 1  # unchanged: kept


def test_the_same_advantage_seen_from_the_other_side_keeps_the_cache(dynamic_net: Path) -> None:
    """A genmove sets the advantage of the side it plays: Black's -v is White's +v, and no advantage is the same
    for both, so an even game's moves (White 0, Black 0, ...) keep what the cache holds."""
    cache = CachedEvaluator(OnnxEvaluator(str(dynamic_net)), capacity=10)
    cache.evaluate([game(moves="b C3")])
    for color, value in [(Color.WHITE, 0.0), (Color.BLACK, -0.0), (Color.WHITE, 0.0), (Color.BLACK, 0.0)]:
        cache.set_playout_advantage(int(color), value)
        assert len(cache) == 1
    cache.set_playout_advantage(int(Color.WHITE), 1.5)
    cache.evaluate([game(moves="b C3")])
    cache.set_playout_advantage(int(Color.BLACK), -1.5)
    assert len(cache) == 1  # the same advantage for White
    cache.set_playout_advantage(int(Color.BLACK), 1.5)
    assert len(cache) == 0  # now Black has it: every entry was made with another input


def test_empty_batches(dynamic_net: Path) -> None:
    assert OnnxEvaluator(str(dynamic_net)).evaluate([]) == []
    assert CachedEvaluator(UniformEvaluator()).evaluate([]) == []


def test_score_multipliers_come_from_the_model_metadata(tmp_path: Path) -> None:
    plain = OnnxEvaluator(str(build_tiny_net(tmp_path / "a.onnx", seed=1)))
    scaled = OnnxEvaluator(str(build_tiny_net(tmp_path / "b.onnx", seed=1, metadata={"lead_multiplier": "10.0"})))
    assert scaled.info.post.lead == 10.0 and scaled.info.model_version == 8
    a, b = plain.evaluate([game()])[0], scaled.evaluate([game()])[0]
    assert b.lead == pytest.approx(a.lead / 2, rel=1e-5)
    assert b.score_mean == pytest.approx(a.score_mean, rel=1e-5)


def test_cache_behaves_like_a_table_of_slots_fixed_by_the_key() -> None:
    import random

    pool = [game(moves=f"b {v}") for v in ("A1", "B2", "C3", "D4", "E5", "F6", "G7", "H8")]
    keys = [features.input_key(s) for s in pool]
    rng = random.Random(7)
    inner = CountingEvaluator()
    cache = CachedEvaluator(inner, capacity=5)
    model: dict[int, bytes] = {}  # slot -> key held
    expected_misses = 0
    for _ in range(300):
        picks = [rng.randrange(len(pool)) for _ in range(rng.randint(1, 5))]
        slot = {i: int.from_bytes(keys[i][:8], "little") % 5 for i in picks}
        expected_misses += sum(1 for i in dict.fromkeys(picks) if model.get(slot[i]) != keys[i])  # before the batch
        for i in dict.fromkeys(picks):  # then stored in batch order, each over its slot
            model[slot[i]] = keys[i]
        results = cache.evaluate([pool[i] for i in picks])
        assert [r.policy.shape for r in results] == [(82,)] * len(picks)
        assert len(cache) == len(model)
    assert inner.positions == expected_misses == cache.misses
    assert cache.nbytes() <= 2 * CHUNK_ROWS * (4 * 82 + 4 * 81 + 8 * 9)


def test_turning_the_cache_over_creates_no_python_object_per_entry() -> None:
    """A server bot's cache fills and turns over for hundreds of games: what it keeps must not be Python objects
    (they pinned Python's memory pools among the search's short-lived objects, and memory grew game after game)."""
    import gc

    states = [game(moves=f"b {v} w {w}") for v in ("A1", "B2", "C3", "D4", "E5", "F6", "G7")
              for w in ("B9", "C8", "D7", "E6", "F5", "G4", "H3", "J2")]
    cache = CachedEvaluator(UniformEvaluator(), capacity=4096)
    cache.evaluate(states[:2])
    gc.collect()
    before = len(gc.get_objects())
    for start in range(0, len(states), 7):
        cache.evaluate(states[start:start + 7])
    gc.collect()
    assert len(cache) > 50
    assert len(gc.get_objects()) - before < 10


def test_evaluate_with_checks_its_symmetry_plan(dynamic_net: Path) -> None:
    evaluator = OnnxEvaluator(str(dynamic_net))
    for plan in ([[0]], [[0], []], [[0], [9]]):
        with pytest.raises(ValueError):
            evaluator.evaluate_with([game(), game()], plan, 0.0)


def test_cache_can_be_shared_by_threads() -> None:
    import random

    pool = [game(moves=f"b {v}") for v in ("A1", "B2", "C3", "D4", "E5", "F6", "G7")]
    cache = CachedEvaluator(UniformEvaluator(), capacity=3)

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(150):
            picks = [pool[rng.randrange(len(pool))] for _ in range(rng.randint(1, 4))]
            assert len(cache.evaluate(picks)) == len(picks)

    assert not run_in_threads(worker, 4)
    assert len(cache) <= 3


# -- staged evaluation (search.overlap): encode now, run the net in its own thread, decode on finishing ----------------


def test_a_started_batch_gives_what_evaluate_gives(dynamic_net: Path) -> None:
    from miai.nets.evaluator import StagedEvaluator

    states = [game(), game(size=7, moves="b D4"), game(moves="b E5"), game(size=13, moves="b D4 w pass")]
    evaluator = OnnxEvaluator(str(dynamic_net), max_batch=2, symmetry_mode="fixed")
    assert isinstance(evaluator, StagedEvaluator)
    finish = evaluator.start(states)
    for a, b in zip(finish(), evaluator.evaluate(states)):
        assert_same(a, b)


def test_the_net_of_a_started_batch_runs_outside_the_callers_thread(dynamic_net: Path) -> None:
    import threading

    evaluator = OnnxEvaluator(str(dynamic_net))
    session = evaluator.session
    threads: list[str] = []

    class Recording:
        def run(self, *args: object) -> object:
            threads.append(threading.current_thread().name)
            return session.run(*args)

    evaluator.session = Recording()
    evaluator.evaluate([game()])
    evaluator.start([game()])()
    assert threads[0] == threading.current_thread().name and threads[1] != threads[0]


def test_a_started_batch_through_the_cache_counts_and_keeps_as_evaluate(dynamic_net: Path) -> None:
    cache = CachedEvaluator(OnnxEvaluator(str(dynamic_net), symmetry_mode="fixed"), capacity=10)
    a, b = game(), game(moves="b D4")
    finish = cache.start([a, b, a])
    assert (cache.hits, cache.misses) == (1, 2) and len(cache) == 0  # kept only once finished
    first = finish()
    assert len(cache) == 2 and first[0] is first[2]
    again = cache.start([game(), b])()
    assert cache.hits == 3 and same_evaluation(again[0], first[0]) and same_evaluation(again[1], first[1])


def test_an_evaluator_that_cannot_split_a_batch_evaluates_it_when_started() -> None:
    from miai.nets.evaluator import StagedEvaluator, start_evaluation

    inner = CountingEvaluator()
    assert not isinstance(inner, StagedEvaluator)
    finish = start_evaluation(inner, [game(), game(moves="b D4")])
    assert inner.positions == 2
    assert len(finish()) == 2 and inner.positions == 2


def test_a_failed_net_run_is_raised_by_finish_not_start(dynamic_net: Path) -> None:
    evaluator = OnnxEvaluator(str(dynamic_net))

    class Broken:
        def run(self, *args: object) -> object:
            raise RuntimeError("the net failed")

    evaluator.session = Broken()
    finish = evaluator.start([game()])
    with pytest.raises(RuntimeError, match="the net failed"):
        finish()


def test_a_reserved_cache_holds_its_whole_capacity_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """``net.cache_reserve``: the first evaluation of a size, then ``reserve``; filling the cache takes no more."""
    from miai.nets import cache as cache_module

    monkeypatch.setattr(cache_module, "CHUNK_ROWS", 4)
    cache = CachedEvaluator(UniformEvaluator(), capacity=10)
    row = 4 * 82 + 4 * 81 + 8 * 9
    states = [game(moves=f"b {v} w {w}") for v in ("A1", "B2", "C3", "D4") for w in ("A9", "B8", "C7", "D6", "E5")]
    cache.evaluate(states[:1])
    cache.reserve(9)
    assert cache.nbytes() == 12 * row  # three chunks of four rows cover the ten entries
    for start in range(0, 20, 5):
        batch = states[start:start + 5]
        assert all(same_evaluation(a, b) for a, b in zip(cache.evaluate(batch), UniformEvaluator().evaluate(batch)))
        assert cache.nbytes() == 12 * row
    assert 5 <= len(cache) <= 10  # twenty positions over ten slots: some share one
    small = game(size=7, moves="b C3")
    cache.evaluate([small])
    cache.reserve(7)  # a new board size: its table for the whole capacity, the 9x9 one dropped
    assert len(cache) == 1 and cache.nbytes() == 12 * (4 * 50 + 4 * 49 + 8 * 9)
    hits = cache.hits
    assert same_evaluation(cache.evaluate([small])[0], UniformEvaluator().evaluate([small])[0])
    assert cache.hits == hits + 1


def test_a_batch_encoded_in_threads_equals_one_encoded_alone() -> None:
    from miai.engine.bench.features import random_states
    from miai.nets.evaluator import BatchEncoder

    states = [s for size in (19, 9, 13) for s in random_states(size, 5, seed=size)]
    alone = BatchEncoder(1).encode(states, passing_hacks=True)
    for threads in (2, 3, 16):
        together = BatchEncoder(threads).encode(states, passing_hacks=True)
        assert len(together) == len(states)
        for a, b in zip(alone, together):
            assert a.size == b.size
            assert np.array_equal(a.spatial, b.spatial) and np.array_equal(a.global_, b.global_)
            assert np.array_equal(a.legal, b.legal)


def test_a_failure_in_an_encoding_thread_reaches_the_caller() -> None:
    from miai.nets.evaluator import BatchEncoder

    with pytest.raises(AttributeError):
        BatchEncoder(2).encode([game(), object(), game()])  # type: ignore[list-item]


def test_evaluations_are_the_same_with_encoding_threads(dynamic_net: Path) -> None:
    states = [game(), game(size=7, moves="b D4"), game(moves="b E5"), game(size=13, moves="b D4 w pass")]
    one = OnnxEvaluator(str(dynamic_net), max_batch=4).evaluate(states)
    two = OnnxEvaluator(str(dynamic_net), max_batch=4, encode_threads=2).evaluate(states)
    for a, b in zip(one, two):
        assert_same(a, b, tol=0.0)
    with pytest.raises(ValueError, match="encode_threads"):
        OnnxEvaluator(str(dynamic_net), encode_threads=0)


@pytest.mark.parametrize("buffer", ["dynamic", "fixed"])
def test_a_batch_under_several_symmetries_decodes_exactly_as_row_by_row(buffer: str, dynamic_net: Path,
                                                                         fixed_net: Path) -> None:
    from miai.nets.evaluator import _evaluation

    net = dynamic_net if buffer == "dynamic" else fixed_net  # fixed: 9x9 boards cut out of a 13x13 buffer
    states = [game(), game(moves="b E5"), game(moves="b C3 w G7 b pass"), game(moves="b A1 w J9")]
    evaluator = OnnxEvaluator(str(net))
    job = evaluator._prepare(states, [[s] for s in (0, 3, 5, 6)], None, 0.0, True, False)
    outputs = evaluator._run(job)
    together = evaluator._finish(job, outputs)
    for chunk, out in zip(job.chunks, outputs):
        for k, r in enumerate(chunk.members):
            i, sym = job.rows[r]
            alone = _evaluation(evaluator._decode_row(out, k, job.encoded[i], sym, chunk.nn_len, 0.0), 0)
            assert np.array_equal(alone.policy, together[i].policy)
            assert alone.ownership is not None and together[i].ownership is not None
            assert np.array_equal(alone.ownership, together[i].ownership)
            assert (alone.win, alone.loss, alone.lead, alone.score_mean, alone.score_stdev) == \
                (together[i].win, together[i].loss, together[i].lead, together[i].score_mean, together[i].score_stdev)
