"""Who runs a converted net (``net.backend``) and at which precision (``net.precision``).

- **onnxruntime** (a core dependency): fp32.
- **OpenVINO** (the optional ``openvino`` extra, Intel's inference runtime, which runs ONNX files directly): fp32,
  and bf16 or fp16 where the CPU computes in them natively (AVX512_BF16 / AMX for bf16, AVX512_FP16 / AMX-FP16 for
  fp16; OpenVINO's ``OPTIMIZATION_CAPABILITIES`` says which). Without such a CPU OpenVINO would silently compute in
  fp32 whatever it is asked, so miai refuses instead, in one line.

Under bf16 and fp16 the heads (policy, value, score and ownership, their pooling included) run in fp32, as in
KataGo's TensorRT backend since v1.16.1: OpenVINO compiles the trunk in the reduced precision and the heads, cut off
at the converter's ``TRUNK`` tensor, as a second model in fp32 (``split_at_trunk``; ``runtime_precisions`` reads
back what OpenVINO really computes in).

``auto`` (the default of both options) measures once per net, CPU and library versions which of the available
pairs is fastest among those that pass the precision gate against onnxruntime's fp32 outputs (KataGo's
``testgpuerror`` statistics and fp16 limits, ``miai.nets.precision``), and keeps the answer in a small JSON file in
the cache directory (``choice_path``); later starts read it.

There is no int8: onnxruntime's statically quantised nets (miai had them until 2026-12) were far from fp32
(policy 0.039, lead 1.75 points, ownership 0.15 from fp32 on positions of the net's own games, the side to move's
lead biased by -0.29 points on 19x19) and lost 2-36-2 to fp32 at equal time; docs/benchmarks.md.

Both backends are reached through ``NetSession``, the part of onnxruntime's ``InferenceSession`` interface the
evaluator uses; ``OpenVinoSession`` implements it over an OpenVINO compiled model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from miai.nets.errors import EvaluatorError

__all__ = ["BACKENDS", "PRECISIONS", "BackendError", "NetSession", "TensorInfo", "OpenVinoSession", "Choice",
           "cpu_flags", "cpu_model", "cpu_precisions", "check_available", "open_openvino", "split_at_trunk",
           "choice_path", "net_feeds", "session_rate"]

BACKENDS = ("auto", "onnxruntime", "openvino")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
BACKEND_PRECISIONS = {"onnxruntime": ("fp32",), "openvino": ("fp32", "bf16", "fp16")}
CHOICE_VERSION = 2  # 2: the precision gate as KataGo's, heads in fp32 under bf16 and fp16
_OPENVINO_INSTALL = "pip install 'miai[openvino]' (the openvino package)"

log = logging.getLogger("miai")


class BackendError(EvaluatorError):
    """A backend or precision that cannot run here (the message says what to install or what the CPU lacks)."""


class TensorInfo(Protocol):
    """An input or output of a session: its name and shape (ints, or names/None for dynamic dimensions)."""

    @property
    def name(self) -> str: ...

    @property
    def shape(self) -> Sequence[int | str | None]: ...


class NetSession(Protocol):
    """What miai uses of an inference session: onnxruntime's ``InferenceSession`` has exactly this."""

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]: ...

    def get_inputs(self) -> Sequence[TensorInfo]: ...

    def get_outputs(self) -> Sequence[TensorInfo]: ...

    def get_modelmeta(self) -> Any: ...

    def get_providers(self) -> list[str]: ...


def import_openvino() -> Any:
    """The ``openvino`` module, without its model-conversion tools.

    ``import openvino`` also imports ``openvino.tools.ovc``, which on import sends a usage event to Intel's telemetry
    service unless the user opted out, from a process it forks (openvino_telemetry's GA4 backend). Forked from the
    engine's threads, that child can hang for good holding the engine's stdout and stderr open: a GUI that waits for
    the engine's output to end (KaTrain on shutdown) hangs with it, and a Go engine has no business sending usage
    reports. miai only runs ONNX files and never converts models, so the tools are marked absent before the import;
    openvino's ``__init__`` skips them on ImportError.

    Raises:
        ImportError: OpenVINO is not installed.
    """
    sys.modules.setdefault("openvino.tools.ovc", None)  # type: ignore[arg-type]
    import openvino

    return openvino


# ------------------------------------------------------------------------------------------------- what runs here
@functools.cache  # a fact of the machine; asked once per candidate pair and per load
def cpu_precisions() -> frozenset[str]:
    """The reduced precisions this CPU computes in natively: OpenVINO's own report when it is installed, else the
    CPU flags (Linux) that OpenVINO's CPU plugin needs for them."""
    try:
        ov = import_openvino()
    except ImportError:
        return _precisions_from_flags(cpu_flags())
    capabilities = set(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    return frozenset(p for p, cap in (("bf16", "BF16"), ("fp16", "FP16")) if cap in capabilities)


@functools.cache
def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags as Linux lists them in /proc/cpuinfo (empty elsewhere)."""
    return frozenset(_cpuinfo("flags").split())


def cpu_model() -> str:
    """This CPU's name as Linux gives it in /proc/cpuinfo (empty elsewhere)."""
    return _cpuinfo("model name")


def _cpuinfo(field: str) -> str:
    """The first ``field`` of /proc/cpuinfo (the first core's), or "" where there is none."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() == field:
            return value.strip()
    return ""


def _precisions_from_flags(flags: frozenset[str]) -> frozenset[str]:
    found = set()
    if flags & {"avx512_bf16", "amx_bf16"}:
        found.add("bf16")
    if flags & {"avx512_fp16", "amx_fp16"}:
        found.add("fp16")
    return frozenset(found)


def openvino_installed() -> bool:
    try:
        import_openvino()
    except ImportError:
        return False
    return True


def check_available(backend: str, precision: str, *, have_openvino: bool | None = None,
                    precisions: frozenset[str] | None = None) -> None:
    """Raise ``BackendError`` (one line: what to install, or what the CPU lacks) unless ``backend`` can run
    ``precision`` here. ``have_openvino`` and ``precisions`` default to this machine's."""
    if backend not in BACKEND_PRECISIONS:
        raise BackendError(f"net.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if precision not in BACKEND_PRECISIONS[backend]:
        runs = [b for b, ps in BACKEND_PRECISIONS.items() if precision in ps]
        raise BackendError(f"net.precision={precision} needs net.backend={' or '.join(runs)} "
                           f"({backend} runs {', '.join(BACKEND_PRECISIONS[backend])})")
    if backend == "openvino" and not (openvino_installed() if have_openvino is None else have_openvino):
        raise BackendError(f"net.backend=openvino needs OpenVINO: {_OPENVINO_INSTALL}")
    if precision in ("bf16", "fp16"):
        native = cpu_precisions() if precisions is None else precisions
        if precision not in native:
            need = "AVX512_BF16 or AMX" if precision == "bf16" else "AVX512_FP16 or AMX-FP16"
            raise BackendError(f"net.precision={precision}: this CPU lacks {precision} ({need}); use fp32")


# ---------------------------------------------------------------------------------------------------- OpenVINO
@dataclass(frozen=True)
class _Tensor:
    name: str
    shape: tuple[int | str | None, ...]


@dataclass(frozen=True)
class _Meta:
    custom_metadata_map: dict[str, str]


# OpenVINO 2026.4's Python bindings look numpy's C API up once per process, the first time a tensor's data is read
# (pybind11's npy_api, a function-local static whose initialiser lets go of the GIL and takes it back). A second
# thread that reads tensor data meanwhile holds the GIL while it waits for that static: neither can go on, and every
# Python thread of the process stops. Two analysis threads beginning their first searches at once hit it (the KaTrain
# test's analysis stopped, once in 48 CI runs); the engine froze with no answer and no output. Each thread's first
# run is therefore made alone: waiting on this lock lets go of the GIL, and once one first run has finished the
# static is set up for every thread.
_FIRST_RUN = threading.Lock()


class OpenVinoSession:
    """An ONNX net compiled by OpenVINO for the CPU, behind ``NetSession``.

    One infer request per calling thread (the search's thread and the net's own thread may both run it); outputs
    are copied out of the request, since the next run reuses its buffers while the previous batch is decoded.
    """

    def __init__(self, source: str | bytes, precision: str, threads: int, fp32_heads: bool = True) -> None:
        import onnx

        ov = import_openvino()
        core = ov.Core()
        model = core.read_model(source)  # a path or the ONNX file's bytes
        # OpenVINO keeps no ONNX metadata_props (model version, score multipliers): read them with onnx.
        proto = onnx.load_model_from_string(source) if isinstance(source, bytes) else onnx.load(source)
        hint = {"fp32": "f32", "bf16": "bf16", "fp16": "f16", "int8": "f32"}[precision]
        config: dict[str, Any] = {
            "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": hint,
            # The search's Python shares these cores: threads pinned to a core would wait for it.
            "ENABLE_CPU_PINNING": False,
        }
        if threads > 0:
            config["INFERENCE_NUM_THREADS"] = threads
        self._inputs = [_Tensor(p.get_any_name(), _dims(p.get_partial_shape())) for p in model.inputs]
        self._outputs = [_Tensor(p.get_any_name(), _dims(p.get_partial_shape())) for p in model.outputs]
        self._output_index = {o.name: i for i, o in enumerate(self._outputs)}
        split = split_at_trunk(model) if fp32_heads and hint != "f32" else None
        if split is None:
            self._compiled = core.compile_model(model, "CPU", config)
            self._heads = None
        else:
            # The heads run on the trunk's output in a second compiled model at fp32, as KataGo's TensorRT backend
            # keeps its heads in fp32 since v1.16.1. OpenVINO's own per-node mark (rt_info
            # DisablePrecisionConversion) does not survive its graph transformations: the heads' pooling and
            # fully connected layers still ran in bf16 with it (OpenVINO 2026.4).
            self._compiled = core.compile_model(split[0], "CPU", config)
            self._heads = core.compile_model(split[1], "CPU", {**config, "INFERENCE_PRECISION_HINT": "f32"})
            self._head_inputs = [p.get_any_name() for p in split[1].inputs]
            # The heads' outputs in the whole model's order.
            heads_out = [set(o.get_names()) for o in split[1].outputs]
            self._heads_order = [next(i for i, names in enumerate(heads_out) if o.name in names)
                                 for o in self._outputs]
        self._meta = _Meta({p.key: p.value for p in proto.metadata_props})
        self._local = threading.local()
        self.precision = precision
        self.fp32_heads = self._heads is not None

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        request = getattr(self._local, "request", None)
        if request is None:
            # A thread's first run goes alone (``_FIRST_RUN``): the first runs of two threads at once can deadlock
            # inside OpenVINO's bindings for good.
            with _FIRST_RUN:
                if self._heads is not None:
                    self._local.heads = self._heads.create_infer_request()
                self._local.request = self._compiled.create_infer_request()
                return self.run(output_names, feeds)
        values = list(request.infer(dict(feeds)).values())  # in the model's output order
        if self._heads is not None:
            head_feeds = {name: feeds[name] for name in self._head_inputs[1:]}
            head_feeds[self._head_inputs[0]] = values[0]  # the trunk's output
            found = list(self._local.heads.infer(head_feeds).values())
            values = [found[i] for i in self._heads_order]
        if output_names is None:
            return [np.array(v, dtype=np.float32, copy=True) for v in values]
        return [np.array(values[self._output_index[name]], dtype=np.float32, copy=True) for name in output_names]

    def runtime_precisions(self) -> dict[str, dict[str, str]]:
        """What OpenVINO really computes in after compiling: for the trunk and the heads (``heads`` absent when they
        are not split off), each compiled node's original ONNX layer names (comma-separated) -> its runtime
        precision (``f32``, ``bf16``, ``f16``; constants and inputs left out)."""
        parts = {"trunk": self._compiled} if self._heads is None else {"trunk": self._compiled, "heads": self._heads}
        return {part: _runtime_precisions(compiled) for part, compiled in parts.items()}

    def get_inputs(self) -> list[_Tensor]:
        return list(self._inputs)

    def get_outputs(self) -> list[_Tensor]:
        return list(self._outputs)

    def get_modelmeta(self) -> _Meta:
        return self._meta

    def get_providers(self) -> list[str]:
        return [f"OpenVINO CPU ({self.precision})"]


def _dims(shape: Any) -> tuple[int | str | None, ...]:
    return tuple(d.get_length() if d.is_static else None for d in shape)


def split_at_trunk(model: Any) -> tuple[Any, Any] | None:
    """An OpenVINO model of a converted net cut at its trunk's output (the tensor the converter names ``TRUNK``):
    the trunk (the net's inputs -> ``TRUNK``) and the heads (``TRUNK`` and the inputs the heads read, such as the
    board mask -> the net's outputs). None for a net without that tensor (an ONNX file from another converter)."""
    ov = import_openvino()
    from openvino import opset13

    from miai.nets.onnx_export import TRUNK

    trunk_model = model.clone()
    tip = _output_named(trunk_model, TRUNK)
    if tip is None:
        return None
    trunk_model = ov.Model([opset13.result(tip)], trunk_model.get_parameters(), "trunk")
    heads_model = model.clone()
    tip = _output_named(heads_model, TRUNK)
    assert tip is not None
    cut = opset13.parameter(tip.get_partial_shape(), tip.get_element_type(), name=TRUNK)
    cut.output(0).set_names({TRUNK})
    for consumer in list(tip.get_target_inputs()):
        consumer.replace_source_output(cut.output(0))
    read = {node.get_name() for node in _ancestors(heads_model.get_results())}
    inputs = [cut] + [p for p in heads_model.get_parameters() if p.get_name() in read]
    return trunk_model, ov.Model(heads_model.get_results(), inputs, "heads")


def _output_named(model: Any, name: str) -> Any:
    for op in model.get_ordered_ops():
        for output in op.outputs():
            if name in output.get_names():
                return output
    return None


def _ancestors(results: Sequence[Any]) -> list[Any]:
    """Every node ``results`` depend on."""
    seen: dict[str, Any] = {}
    stack = list(results)
    while stack:
        node = stack.pop()
        if node.get_name() in seen:
            continue
        seen[node.get_name()] = node
        stack.extend(value.get_node() for value in node.input_values())
    return list(seen.values())


def _runtime_precisions(compiled: Any) -> dict[str, str]:
    out = {}
    for node in compiled.get_runtime_model().get_ordered_ops():
        info = node.get_rt_info()
        if info["layerType"].astype(str) in ("Const", "Input", "Output"):
            continue
        out[info["originalLayersNames"].astype(str)] = info["runtimePrecision"].astype(str)
    return out


def open_openvino(source: str | bytes, precision: str, threads: int, fp32_heads: bool = True) -> OpenVinoSession:
    """An OpenVINO session on an ONNX file (or its bytes); ``BackendError`` in one line when it cannot run.
    ``fp32_heads``: under bf16 or fp16, the heads (policy, value, score, ownership, their pooling included) in fp32."""
    check_available("openvino", precision)
    try:
        return OpenVinoSession(source, precision, threads, fp32_heads)
    except Exception as exc:  # OpenVINO raises plain RuntimeErrors with multi-line texts
        raise BackendError("OpenVINO cannot load it: " + " ".join(str(exc).split())[:300]) from exc


# -------------------------------------------------------------------------------------------------- the gate
# ------------------------------------------------------------------------------------------------------ auto
@dataclass(frozen=True)
class Choice:
    """What ``auto`` settled on for a net on this machine, and the measurements behind it."""

    backend: str
    precision: str
    rates: dict[str, float]  # "backend precision" -> evals/s at the measuring batch (failed the gate: absent)
    rejected: dict[str, str]  # "backend precision" -> why it was not a candidate

    def describe(self) -> str:
        """One line: what was chosen, and how the others compared (speed against the choice, or why they are out)."""
        mine = self.rates.get(f"{self.backend} {self.precision}", 0.0)
        others = [f"{pair} {rate / mine:.2f}x" for pair, rate in self.rates.items()
                  if pair != f"{self.backend} {self.precision}" and mine > 0]
        out = [f"{pair} {_short(why)}" for pair, why in self.rejected.items()]
        return f"net: {self.backend} {self.precision} (net.backend=auto; " + "; ".join(others + out) + ")"


def _short(why: str) -> str:
    if "lacks" in why:
        return "not on this CPU"
    if "needs OpenVINO" in why:
        return "not installed"
    return why


def candidates(requested_backend: str, requested_precision: str) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The (backend, precision) pairs ``auto`` may pick from, and why the others are out."""
    backends = list(BACKEND_PRECISIONS) if requested_backend == "auto" else [requested_backend]
    pairs, rejected = [], {}
    for backend in backends:
        for precision in BACKEND_PRECISIONS[backend]:
            if requested_precision not in ("auto", precision):
                continue
            try:
                check_available(backend, precision)
            except BackendError as exc:
                rejected[f"{backend} {precision}"] = str(exc)
                continue
            pairs.append((backend, precision))
    return pairs, rejected


def choice_path(net_digest: str, threads: int, directory: Path) -> Path:
    """Where ``auto``'s answer for this net, thread count, CPU and library versions is kept."""
    import onnxruntime as ort

    try:
        ov_version = import_openvino().get_version()
    except ImportError:
        ov_version = "none"
    cpu = hashlib.sha256(" ".join(sorted(cpu_flags())).encode()).hexdigest()[:12]
    key = hashlib.sha256(f"{net_digest}|{threads}|{cpu}|{ort.__version__}|{ov_version}|{CHOICE_VERSION}".encode())
    return directory / "backends" / f"{key.hexdigest()[:24]}.json"


def read_choice(path: Path) -> Choice | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Choice(str(data["backend"]), str(data["precision"]), dict(data["rates"]), dict(data["rejected"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent or unreadable: measure again


def write_choice(path: Path, choice: Choice) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(choice), indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # an unwritable cache: measure again next time, say so once
        log.warning("net.backend=auto: cannot keep the measurement in %s (%s); it is repeated at every start",
                    path.parent, exc.strerror or exc)


def net_feeds(states: Sequence[Any], nn_len: int) -> dict[str, np.ndarray]:
    """The net's inputs for ``states`` (symmetry 0) in an ``nn_len`` buffer, for timing a bare session."""
    from miai.nets import features

    encoded = [features.encode(s) for s in states]
    return {"input_spatial": np.stack([features.place(sp, nn_len) for sp, _ in encoded]),
            "input_global": np.stack([g for _, g in encoded])}


def session_rate(session: NetSession, feeds: Mapping[str, np.ndarray], seconds: float) -> float:
    """A bare session's evals/s on ``feeds`` over ``seconds`` (after one untimed run, which plans the shape)."""
    rows = len(feeds["input_spatial"])
    session.run(None, feeds)  # the first run of a shape plans it
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        session.run(None, feeds)
        count += rows
    return count / elapsed


def sample_states(size: int, count: int, seed: int = 0) -> list[Any]:
    """``count`` positions of random legal play on a ``size`` board, ``size`` to ``3 * size`` moves deep."""
    from miai.go.rules import Rules
    from miai.go.state import GameState

    rng = random.Random(seed)
    states = []
    for _ in range(count):
        state = GameState(size, Rules.preset("chinese"), 7.5)
        for _ in range(rng.randrange(size, 3 * size + 1)):
            moves = [m for m in state.legal_moves() if m >= 0]
            if not moves:
                break
            state.push(rng.choice(moves))
        states.append(state)
    return states
