"""The evaluators: the protocol the search uses (miai.nets.protocol, imported here too), and its implementations.

- ``Evaluation``, ``Evaluator`` and the other protocols, typed on ``NetPosition`` (what the net reads of a position):
  see miai.nets.protocol.
- ``UniformEvaluator``: a uniform policy over legal moves and an even game; for tests.
- ``OnnxEvaluator``: a KataGo net converted to ONNX, run by onnxruntime in batches, with one
  fixed symmetry, a random one per call, or the average of all eight.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

from miai.nets import features, symmetry
from miai.nets.decode import DecodedBatch, PostProcess, decode_batch
from miai.nets.errors import EvaluatorError as EvaluatorError  # what loading or running any evaluator raises
# The protocol, imported here too: miai.nets.evaluator is where callers have always found it.
from miai.nets.protocol import (
    Amaf as Amaf,
    Evaluation as Evaluation,
    NetPosition as NetPosition,
    Evaluator as Evaluator,
    WrappingEvaluator as WrappingEvaluator,
    AdvantageEvaluator as AdvantageEvaluator,
    RootEvaluator as RootEvaluator,
    evaluate_root as evaluate_root,
    set_playout_advantage as set_playout_advantage,
    same_advantage as same_advantage,
    Finish as Finish,
    StagedEvaluator as StagedEvaluator,
    start_evaluation as start_evaluation,
    CachingEvaluator as CachingEvaluator,
    innermost as innermost,
)

if TYPE_CHECKING:
    from miai.nets.protocol import NetPosition
    from miai.nets.backends import NetSession

SymmetryMode = Literal["fixed", "random", "average"]


def onnx_net(evaluator: Evaluator, size: int) -> OnnxEvaluator | None:
    """The onnxruntime net that evaluates ``size`` x ``size`` positions under ``evaluator``'s caches and size
    routing, or None when no net does (uniform, playouts).

    Raises:
        EvaluatorError: a router has no evaluator for this size.
    """
    net = innermost(evaluator, size)
    return net if isinstance(net, OnnxEvaluator) else None


def legal_mask(state: NetPosition) -> np.ndarray:
    """bool ``[size*size + 1]``: the side to move's legal moves, pass (always legal) last (``GameState.legal_mask``)."""
    return state.legal_mask()


# --------------------------------------------------------------------------------------------
# Uniform evaluator.
# --------------------------------------------------------------------------------------------


@dataclass
class UniformEvaluator:
    """Uniform policy over the legal moves (pass included), an even game, no score, no owner."""

    max_batch: int = 64
    with_ownership: bool = True
    calls: int = field(default=0, init=False)  # batches evaluated, for tests of batching

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``."""
        self.calls += 1
        results = []
        for state in states:
            mask = legal_mask(state)
            policy = (mask / mask.sum()).astype(np.float32)
            area = state.size * state.size
            ownership = np.zeros(area, dtype=np.float32) if self.with_ownership else None
            results.append(Evaluation(policy, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, ownership))
        return results


# --------------------------------------------------------------------------------------------
# onnxruntime evaluator.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OnnxConfig:
    """How an ``OnnxEvaluator`` runs its net."""

    symmetry_mode: SymmetryMode = "fixed"  # fixed: always `symmetry`; random: one per position; average: all 8
    symmetry: int = 0  # the fixed symmetry (0 = identity)
    max_batch: int = 16  # positions per onnxruntime call (average mode runs 8 rows per position)
    intra_op_threads: int = 1  # onnxruntime threads inside one operator (see docs/nets.md)
    encode_threads: int = 1  # positions of a batch encoded at once (BatchEncoder)
    policy_optimism: float = 0.0  # 0 = normal policy, 1 = the optimistic policy head
    root_policy_optimism: float = 0.0  # the same for a search's root (evaluate_root; KataGo's rootPolicyOptimism)
    seed: int | None = None  # random symmetries' seed
    with_ownership: bool = True
    # onnxruntime execution providers in order of preference (see PROVIDER_PACKAGES and docs/config.md "GPU").
    providers: tuple[str, ...] = ("CPUExecutionProvider",)
    allow_cpu_fallback: bool = True  # a requested provider that is missing: warn and use the CPU (else fail)
    backend: str = "onnxruntime"  # or "openvino" (miai.nets.backends; "auto" is resolved before, by load_evaluator)
    precision: str = "fp32"  # what the backend computes in: fp32, or bf16 and fp16 (OpenVINO)
    # Under bf16 or fp16: the heads (policy, value, score, ownership, their pooling included) in fp32, the trunk in
    # the reduced precision, as KataGo's TensorRT backend since v1.16.1 (miai.nets.backends.split_at_trunk).
    fp32_heads: bool = True
    # KataGo's enablePassingHacks for ``evaluate`` (a search's evaluations): the pass prior capped at 95%, and the
    # end of the game hidden from the net when a pass would end it without a win (features.Position.game_end_hidden).
    passing_hacks: bool = False

    def __post_init__(self) -> None:
        if self.symmetry_mode not in ("fixed", "random", "average"):
            raise ValueError(f"symmetry_mode must be fixed, random or average, not {self.symmetry_mode!r}")
        symmetry.check_symmetry(self.symmetry)
        if self.max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if self.intra_op_threads < 0:
            raise ValueError("intra_op_threads must be >= 0 (0 = onnxruntime's default)")
        if self.encode_threads < 1:
            raise ValueError("encode_threads must be at least 1")
        if not 0.0 <= self.policy_optimism <= 1.0 or not 0.0 <= self.root_policy_optimism <= 1.0:
            raise ValueError("policy_optimism and root_policy_optimism must be in [0, 1]")
        if not self.providers:
            raise ValueError("providers must name at least one onnxruntime execution provider")
        if self.backend not in ("onnxruntime", "openvino"):
            raise ValueError(f"backend must be onnxruntime or openvino, not {self.backend!r}")


@dataclass(frozen=True)
class NetInfo:
    """What the ONNX file says about the net."""

    nn_len: int | None  # fixed board buffer, or None when the spatial size is dynamic
    policy_channels: int
    model_version: int
    post: PostProcess
    metadata: dict[str, str]


def _onnx_problem(error: Exception) -> str:
    """onnxruntime's load error in a user's words: a file that does not parse is simply not an ONNX model."""
    text = str(error)
    if "INVALID_PROTOBUF" in text or "Protobuf parsing failed" in text:
        return "not an ONNX model (a corrupt file, or a file of another kind)"
    return "onnxruntime cannot load it: " + " ".join(text.split())


class OnnxEvaluator:
    """A converted KataGo net run by onnxruntime on the CPU."""

    def __init__(self, path: str, config: OnnxConfig | None = None, *, model_bytes: bytes | None = None,
                 **overrides: Any) -> None:
        """Load the ONNX net at ``path``, or from ``model_bytes`` when given (``path`` then only names it)."""
        base = config or OnnxConfig()
        self.config = OnnxConfig(**{**base.__dict__, **overrides})
        self.path = str(path)
        self.max_batch = self.config.max_batch
        self.providers = (resolve_providers(self.config.providers, self.config.allow_cpu_fallback)
                          if self.config.backend == "onnxruntime" else [])
        self._model_bytes = model_bytes
        self.session = self._new_session()
        self.info = _read_net_info(self.session)
        self._rng = np.random.default_rng(self.config.seed)
        self._outputs = [o.name for o in self.session.get_outputs()]
        self._advantage: tuple[int, float] = (0, 0.0)  # (colour, playout doubling advantage): see AdvantageEvaluator
        self._pool: ThreadPoolExecutor | None = None  # the thread ``start`` runs the net in
        self.encoder = BatchEncoder(self.config.encode_threads)
        self._worker_lock = threading.Lock()

    def _new_session(self) -> NetSession:
        """A session on the net with miai's settings (measured in docs/benchmarks.md): onnxruntime's, or OpenVINO's
        (``miai.nets.backends``)."""
        import onnxruntime as ort

        from miai.nets.backends import BackendError, open_openvino

        source = self.path if self._model_bytes is None else self._model_bytes
        if self.config.backend == "openvino":
            try:
                return open_openvino(source, self.config.precision, self.config.intra_op_threads,
                                     self.config.fp32_heads)
            except BackendError as exc:
                raise EvaluatorError(f"{self.path}: {exc}") from exc

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.config.intra_op_threads
        options.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning: spinning workers starve the search thread and any other
        # process (an opponent engine, a second match) of the cores they wait on.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            session: NetSession = ort.InferenceSession(source, options, providers=self.providers)
            return session
        except Exception as exc:  # onnxruntime raises its own exception types
            raise EvaluatorError(f"{self.path}: {_onnx_problem(exc)}") from exc

    # -- public API -----------------------------------------------------------------------

    def evaluate(self, states: Sequence[NetPosition]) -> list[Evaluation]:
        """See ``Evaluator.evaluate``; symmetries follow ``config.symmetry_mode``."""
        return self._evaluate(states, self.config.policy_optimism)

    def start(self, states: Sequence[NetPosition]) -> Finish:
        """See ``StagedEvaluator``: encoding now, onnxruntime in this evaluator's own thread, decoding in the
        callable."""
        job = self._prepare(states, *self._plan(states), self.config.policy_optimism, self.config.passing_hacks)
        future = self._worker().submit(self._run, job)

        def finish(timeout: float | None = None) -> list[Evaluation]:
            return self._finish(job, future.result(timeout))  # (raises TimeoutError past ``timeout``)

        return finish

    def evaluate_root(self, state: NetPosition, conservative_pass: bool = False) -> Evaluation:
        """See ``RootEvaluator``: with ``config.root_policy_optimism``."""
        return self._evaluate([state], self.config.root_policy_optimism, conservative_pass)[0]

    def _evaluate(self, states: Sequence[NetPosition], optimism: float, conservative_root: bool = False
                  ) -> list[Evaluation]:
        plan, advantages = self._plan(states)
        return self.evaluate_with(states, plan, optimism, self.config.passing_hacks, advantages, conservative_root)

    def _plan(self, states: Sequence[NetPosition]) -> tuple[list[list[int]], list[float] | None]:
        """The symmetries of each state (``config.symmetry_mode``) and the playout advantages (None: none)."""
        mode = self.config.symmetry_mode
        if mode == "fixed":
            plan = [[self.config.symmetry] for _ in states]
        elif mode == "random":
            plan = [[int(self._rng.integers(symmetry.NUM_SYMMETRIES))] for _ in states]
        else:
            plan = [list(range(symmetry.NUM_SYMMETRIES)) for _ in states]
        color, value = self._advantage
        advantages = [value if int(s.to_play) == color else -value for s in states] if value else None
        return plan, advantages

    def set_playout_advantage(self, color: int, value: float) -> None:
        """See ``AdvantageEvaluator``."""
        self._advantage = (int(color), float(value))

    def evaluate_with(
        self, states: Sequence[NetPosition], symmetries: Sequence[Sequence[int]], optimism: float,
        passing_hacks: bool = False, advantages: Sequence[float] | None = None, conservative_root: bool = False,
    ) -> list[Evaluation]:
        """Evaluate each state under the given symmetries (averaged when several), optimism and passing hacks
        (off: the net's plain view, as KataGo's kata-raw-nn); ``conservative_root`` as ``features.encode``.

        Raises:
            ValueError: ``symmetries`` does not give a non-empty list of valid symmetries per state.
        """
        job = self._prepare(states, symmetries, advantages, optimism, passing_hacks, conservative_root)
        return self._finish(job, self._run(job))

    # -- internals ------------------------------------------------------------------------

    def _prepare(
        self, states: Sequence[NetPosition], symmetries: Sequence[Sequence[int]], advantages: Sequence[float] | None,
        optimism: float, passing_hacks: bool, conservative_root: bool = False,
    ) -> _Job:
        """Encode the states and lay out the onnxruntime calls: (position index, symmetry) rows, grouped by the
        net's spatial size, at most ``max_batch`` rows a call."""
        if len(symmetries) != len(states) or not all(symmetries):
            raise ValueError("evaluate_with needs a non-empty list of symmetries for every state")
        rows = [(i, symmetry.check_symmetry(sym)) for i, syms in enumerate(symmetries) for sym in syms]
        encoded = self.encoder.encode(states, passing_hacks, advantages, conservative_root)
        # Rows of one spatial size go together; a fixed-size net takes every board at once.
        groups: dict[int, list[int]] = {}
        for r, (i, _) in enumerate(rows):
            groups.setdefault(self._nn_len(encoded[i].size), []).append(r)
        chunks = [_Chunk(members[start : start + self.max_batch], nn_len)
                  for nn_len, members in groups.items() for start in range(0, len(members), self.max_batch)]
        for chunk in chunks:
            chunk.fill(encoded, [rows[r] for r in chunk.members])
        return _Job(len(states), rows, encoded, chunks, optimism)

    def _run(self, job: _Job) -> list[dict[str, np.ndarray]]:
        """The onnxruntime calls of a job (no Python work around them: this may run in the worker thread)."""
        return [dict(zip(self._outputs, self.session.run(None, {"input_spatial": c.spatial,
                                                                 "input_global": c.global_})))
                for c in job.chunks]

    def _finish(self, job: _Job, outputs: list[dict[str, np.ndarray]]) -> list[Evaluation]:
        """Decode a job's outputs and average each state's symmetries."""
        decoded: list[Evaluation | None] = [None] * len(job.rows)
        for chunk, out in zip(job.chunks, outputs):
            rows = [job.rows[r] for r in chunk.members]
            for r, done in zip(chunk.members, self._decode_chunk(job.encoded, rows, chunk.nn_len, out, job.optimism)):
                decoded[r] = done
        per_state: list[list[Evaluation]] = [[] for _ in range(job.states)]
        for (i, _), evaluation in zip(job.rows, decoded):
            assert evaluation is not None  # every row is in exactly one chunk
            per_state[i].append(evaluation)
        return [_average(evs) for evs in per_state]

    def _worker(self) -> ThreadPoolExecutor:
        """The thread ``start`` runs the net in (made on first use)."""
        with self._worker_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="miai-net")
            return self._pool

    def _nn_len(self, size: int) -> int:
        nn_len = self.info.nn_len
        if nn_len is None:
            return size
        if size > nn_len:
            raise EvaluatorError(f"{size}x{size} board is larger than the net's {nn_len}x{nn_len}")
        return nn_len

    def _decode_chunk(
        self, encoded: list[_Encoded], rows: list[tuple[int, int]], nn_len: int, outputs: dict[str, np.ndarray],
        optimism: float,
    ) -> list[Evaluation]:
        n = len(rows)
        if all(encoded[i].size == nn_len and sym == 0 for i, sym in rows):
            # Board = net buffer, identity symmetry: decode the batch at once.
            batch = self._decode_whole(outputs, [encoded[i] for i, _ in rows], optimism)
            return [_evaluation(batch, k) for k in range(n)]
        if len({encoded[i].size for i, _ in rows}) == 1:
            # One board size (a search's batch under random symmetries): cut and un-rotate each row, then decode the
            # batch at once; decoding row by row cost a search about 12% of its thread (numpy's calls on tiny rows).
            turned = _turned_outputs(outputs, [sym for _, sym in rows], encoded[rows[0][0]].size, nn_len)
            batch = self._decode_whole(turned, [encoded[i] for i, _ in rows], optimism)
            return [_evaluation(batch, k) for k in range(n)]
        # Each row has its own board size: cut, un-rotate and decode one row at a time.
        evaluations = []
        for k, (i, sym) in enumerate(rows):
            batch = self._decode_row(outputs, k, encoded[i], sym, nn_len, optimism)
            evaluations.append(_evaluation(batch, 0))
        return evaluations

    def _decode_whole(self, outputs: dict[str, np.ndarray], positions: list[_Encoded], optimism: float) -> DecodedBatch:
        """Decode every row at once: all boards fill the net's buffer and none is rotated."""
        ownership = None
        if self.config.with_ownership and "ownership" in outputs:
            ownership = outputs["ownership"][:, 0].reshape(len(positions), -1)
        return decode_batch(
            outputs["policy"],
            outputs["value"],
            outputs["miscvalue"],
            ownership,
            np.stack([p.legal for p in positions]),
            np.array([p.allow_no_result for p in positions]),
            self.info.post,
            optimism,
            cap_pass=positions[0].passing_hacks,
            model_version=self.info.model_version,
        )

    def _decode_row(
        self, outputs: dict[str, np.ndarray], k: int, position: _Encoded, sym: int, nn_len: int, optimism: float
    ) -> DecodedBatch:
        """Row ``k`` alone: cut to its board, brought back from ``sym`` and decoded as a batch of one."""
        row = {name: value[k : k + 1] for name, value in outputs.items()}
        return self._decode_whole(_turned_outputs(row, [sym], position.size, nn_len), [position], optimism)


def _turned_outputs(outputs: dict[str, np.ndarray], syms: list[int], size: int, nn_len: int) -> dict[str, np.ndarray]:
    """A chunk's spatial outputs (policy, ownership) cut to a ``size`` board and brought back from each row's symmetry
    to the board's frame, laid out as ``_decode_whole`` reads them (the other outputs as they are)."""
    n, area = len(syms), size * size
    policy = outputs["policy"][:n]  # [n, P, nn_len*nn_len + 1]
    boards = policy[:, :, : nn_len * nn_len].reshape(n, policy.shape[1], nn_len, nn_len)[:, :, :size, :size]
    board = np.stack([symmetry.invert_planes(boards[k], sym) for k, sym in enumerate(syms)]).reshape(n, -1, area)
    turned = dict(outputs)
    turned["policy"] = np.concatenate([board, policy[:, :, -1:]], axis=2)
    if "ownership" in outputs:
        own = outputs["ownership"][:n, :1].reshape(n, 1, nn_len, nn_len)[:, :, :size, :size]
        turned["ownership"] = np.stack([symmetry.invert_planes(own[k], sym) for k, sym in enumerate(syms)])
    return turned


class BatchEncoder:
    """Encodes a batch's positions for the net (planes, legal mask: ``_Encoded``), ``threads`` of them at once.

    The compiled kernels behind the planes (ladder reading, chain liberties, the area map: miai.go.compiled) run
    without the GIL, so positions encoded in several threads overlap there, while the Python around the kernels
    takes turns. That pays on positions read from scratch (19x19: 1.35x with 2 threads), not on a search's own,
    whose earlier boards come from the ladder cache and whose kernels are a quarter of the work (2 threads are
    slower there; docs/benchmarks.md, "Encoding a batch in threads"). The calling thread encodes one share itself,
    and the pool's threads the others; on the pure-Python path (no numba) threads only take turns.
    """

    def __init__(self, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError("a batch encoder needs at least one thread")
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def encode(self, states: Sequence[NetPosition], passing_hacks: bool = False,
               advantages: Sequence[float] | None = None, conservative_root: bool = False) -> list[_Encoded]:
        """Each state's net inputs, in order; ``advantages``: each state's playout doubling advantage (None: 0)."""
        pdas = list(advantages) if advantages is not None else [0.0] * len(states)
        shares = max(1, min(self.threads, len(states)))

        def share(first: int) -> list[_Encoded]:
            # Every ``shares``-th position: a batch's neighbours (siblings of one leaf) cost alike, so strided
            # shares come out about even.
            return [_Encoded(states[i], passing_hacks, pdas[i], conservative_root)
                    for i in range(first, len(states), shares)]

        if shares < 2:
            return share(0)
        others = [self._workers().submit(share, k) for k in range(1, shares)]
        parts = [share(0)] + [future.result() for future in others]
        encoded: list[_Encoded | None] = [None] * len(states)
        for k, part in enumerate(parts):
            encoded[k::shares] = part
        return [e for e in encoded if e is not None]

    def _workers(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.threads - 1, thread_name_prefix="miai-encode")
            return self._pool


class _Chunk:
    """One onnxruntime call of a job: which rows it holds and their inputs, padded to the net's buffer."""

    __slots__ = ("members", "nn_len", "spatial", "global_")

    def __init__(self, members: list[int], nn_len: int) -> None:
        self.members = members
        self.nn_len = nn_len
        self.spatial = np.zeros((len(members), features.NUM_SPATIAL, nn_len, nn_len), dtype=np.float32)
        self.global_ = np.zeros((len(members), features.NUM_GLOBAL), dtype=np.float32)

    def fill(self, encoded: list[_Encoded], rows: list[tuple[int, int]]) -> None:
        """Copy each row's planes in, turned by its symmetry."""
        for k, (i, sym) in enumerate(rows):
            planes = encoded[i].spatial
            size = planes.shape[-1]
            self.spatial[k, :, :size, :size] = symmetry.apply_planes(planes, sym)
            self.global_[k] = encoded[i].global_


@dataclass(frozen=True, slots=True)
class _Job:
    """A batch between encoding and decoding: its (position, symmetry) rows, their inputs and the calls."""

    states: int
    rows: list[tuple[int, int]]
    encoded: list[_Encoded]
    chunks: list[_Chunk]
    optimism: float


class _Encoded:
    """One position's net inputs and the facts its decoding needs, computed once per call."""

    __slots__ = ("size", "spatial", "global_", "legal", "allow_no_result", "passing_hacks")

    def __init__(self, state: NetPosition, passing_hacks: bool, playout_advantage: float = 0.0,
                 conservative_root: bool = False) -> None:
        self.size = int(state.size)
        self.passing_hacks = passing_hacks
        self.spatial, self.global_ = features.encode(state, passing_hacks, playout_advantage, conservative_root)
        self.legal = legal_mask(state)
        self.allow_no_result = features.allows_no_result(state.rules)


# Which onnxruntime package brings each execution provider (the CPU one is in every package).
PROVIDER_PACKAGES = {
    "CUDAExecutionProvider": "onnxruntime-gpu (NVIDIA CUDA and cuDNN installed)",
    "TensorrtExecutionProvider": "onnxruntime-gpu (with NVIDIA TensorRT installed)",
    "DmlExecutionProvider": "onnxruntime-directml (Windows)",
    "OpenVINOExecutionProvider": "onnxruntime-openvino",
    "CoreMLExecutionProvider": "onnxruntime (the macOS wheel)",
    "ROCMExecutionProvider": "onnxruntime-rocm (AMD ROCm)",
    "MIGraphXExecutionProvider": "onnxruntime-migraphx (AMD ROCm)",
    "QNNExecutionProvider": "onnxruntime-qnn (Qualcomm)",
    "CPUExecutionProvider": "onnxruntime",
}


def resolve_providers(requested: Sequence[str], allow_cpu_fallback: bool, available: Sequence[str] | None = None) -> list[str]:
    """The execution providers to hand onnxruntime: the ``requested`` ones that this onnxruntime has, in order.

    A missing one gets one warning line naming the package that provides it; with ``allow_cpu_fallback`` the CPU
    provider is added last (if not requested already), so the net still runs when no requested one is there.

    Raises:
        EvaluatorError: a requested provider is missing and ``allow_cpu_fallback`` is off (one line, naming the
            provider and its package), or none is left.
    """
    import logging

    if available is None:
        import onnxruntime as ort

        available = ort.get_available_providers()
    chosen = []
    for name in requested:
        if name in available:
            chosen.append(name)
            continue
        package = PROVIDER_PACKAGES.get(name)
        where = f"install {package}" if package else "not an execution provider onnxruntime knows"
        line = f"net.providers: {name} is not available in this onnxruntime ({where}); available: {', '.join(available)}"
        if not allow_cpu_fallback:
            raise EvaluatorError(line)
        logging.getLogger("miai").warning("%s; falling back to the CPU", line)
    if allow_cpu_fallback and "CPUExecutionProvider" not in chosen:
        chosen.append("CPUExecutionProvider")
    return chosen


def _read_net_info(session: Any) -> NetInfo:
    inputs = {i.name: i for i in session.get_inputs()}
    if "input_spatial" not in inputs or "input_global" not in inputs:
        raise EvaluatorError(f"ONNX net needs inputs input_spatial and input_global, has {sorted(inputs)}")
    spatial_shape = inputs["input_spatial"].shape
    global_shape = inputs["input_global"].shape
    features.check_model_inputs(int(spatial_shape[1]), int(global_shape[1]))
    h, w = spatial_shape[2], spatial_shape[3]
    nn_len = int(h) if isinstance(h, int) and isinstance(w, int) else None
    if nn_len is not None and h != w:
        raise EvaluatorError(f"only square nets are supported, got {h}x{w}")
    outputs = {o.name: o for o in session.get_outputs()}
    missing = {"policy", "value", "miscvalue"} - set(outputs)
    if missing:
        raise EvaluatorError(f"ONNX net lacks outputs {sorted(missing)}")
    policy_channels = outputs["policy"].shape[1]
    metadata = dict(session.get_modelmeta().custom_metadata_map)
    version = int(metadata.get("model_version", metadata.get("modelVersion", 0)) or 0)
    return NetInfo(
        nn_len=nn_len,
        policy_channels=int(policy_channels) if isinstance(policy_channels, int) else 1,
        model_version=version,
        post=PostProcess.from_metadata(metadata),
        metadata=metadata,
    )


def _evaluation(batch: DecodedBatch, k: int) -> Evaluation:
    return Evaluation(
        policy=batch.policy[k],
        win=float(batch.win[k]),
        loss=float(batch.loss[k]),
        no_result=float(batch.no_result[k]),
        score_mean=float(batch.score_mean[k]),
        score_stdev=float(batch.score_stdev[k]),
        lead=float(batch.lead[k]),
        ownership=None if batch.ownership is None else batch.ownership[k],
        var_time_left=float(batch.var_time_left[k]),
        shortterm_winloss_error=float(batch.shortterm_winloss_error[k]),
        shortterm_score_error=float(batch.shortterm_score_error[k]),
    )


def _average(evaluations: list[Evaluation]) -> Evaluation:
    """The mean of evaluations of one position under several symmetries (KataGo averages the
    decoded probabilities and scores, not the logits)."""
    if len(evaluations) == 1:
        return evaluations[0]

    def mean(name: str) -> float:
        return float(np.mean([getattr(e, name) for e in evaluations]))

    owners = [e.ownership for e in evaluations if e.ownership is not None]  # all of them, or none
    return Evaluation(
        policy=np.mean([e.policy for e in evaluations], axis=0).astype(np.float32),
        win=mean("win"),
        loss=mean("loss"),
        no_result=mean("no_result"),
        score_mean=mean("score_mean"),
        score_stdev=mean("score_stdev"),
        lead=mean("lead"),
        ownership=None if evaluations[0].ownership is None else np.mean(owners, axis=0).astype(np.float32),
        var_time_left=mean("var_time_left"),
        shortterm_winloss_error=mean("shortterm_winloss_error"),
        shortterm_score_error=mean("shortterm_score_error"),
    )
