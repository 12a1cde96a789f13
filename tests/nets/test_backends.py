"""net.backend and net.precision (miai.nets.backends): what runs where, the accuracy gate, auto's kept choice, and
OpenVINO against KataGo's own outputs on every reference position.

The OpenVINO tests skip without the `openvino` extra (`pip install -e '.[openvino]'`; CI installs it); bf16 and fp16
skip on CPUs that do not compute in them, saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from miai.nets import backends, precision
from miai.nets.backends import BackendError, Choice, check_available
from miai.nets.precision import LIMITS, errors, summarise
from miai.nets.evaluator import Evaluation, EvaluatorError, OnnxEvaluator
from miai.nets.loading import load_evaluator
from miai.nets.rawnn import raw_nn

from tests.outside import missing_reason

from .reference_cases import NETS_DIR, compare, load_records, state_from_record
from .test_reference import LOCAL_FILES, _net_of
from .tiny_nets import build_tiny_net

needs_openvino = pytest.mark.skipif(not backends.openvino_installed(),
                                    reason="needs OpenVINO: pip install -e '.[openvino]'")


# --------------------------------------------------------------------------------------- what can run here
def test_a_reduced_precision_on_a_cpu_without_it_is_refused_in_one_line() -> None:
    for precision, need in (("bf16", "AVX512_BF16"), ("fp16", "AVX512_FP16")):
        with pytest.raises(BackendError, match=f"this CPU lacks {precision}.*{need}") as caught:
            check_available("openvino", precision, have_openvino=True, precisions=frozenset())
        assert "\n" not in str(caught.value)
    check_available("openvino", "bf16", have_openvino=True, precisions=frozenset({"bf16"}))


def test_openvino_missing_says_what_to_install() -> None:
    with pytest.raises(BackendError, match=r"pip install 'miai\[openvino\]'"):
        check_available("openvino", "fp32", have_openvino=False)


def test_a_precision_the_backend_does_not_run_names_the_backend_that_does() -> None:
    with pytest.raises(BackendError, match="net.precision=bf16 needs net.backend=openvino"):
        check_available("onnxruntime", "bf16", have_openvino=True, precisions=frozenset({"bf16"}))
    with pytest.raises(BackendError, match="net.precision=int8 needs net.backend="):
        check_available("onnxruntime", "int8")


def test_cpu_flags_that_give_bf16_and_fp16() -> None:
    flags = backends._precisions_from_flags
    assert flags(frozenset({"avx2", "fma"})) == frozenset()
    assert flags(frozenset({"avx512f", "avx512_bf16"})) == {"bf16"}
    assert flags(frozenset({"amx_bf16", "amx_fp16", "avx512_fp16"})) == {"bf16", "fp16"}


def test_a_load_error_is_an_evaluator_error_the_cli_reports() -> None:
    assert issubclass(BackendError, EvaluatorError)


def _largest(reference: list[Evaluation], candidate: list[Evaluation]) -> dict[str, float]:
    """The largest difference of every measure of the precision gate."""
    return {measure: stats["max"] for measure, stats in summarise(errors(reference, candidate)).items()}


# --------------------------------------------------------------------------------------------------- auto
def test_auto_with_one_candidate_measures_nothing_and_reports_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "openvino_installed", lambda: False)
    net = build_tiny_net(tmp_path / "tiny.onnx")
    lines: list[str] = []
    evaluator = load_evaluator(net, backend="auto", precision="auto", directory=tmp_path, report=lines.append)
    assert isinstance(evaluator, OnnxEvaluator)
    assert (evaluator.config.backend, evaluator.config.precision) == ("onnxruntime", "fp32")
    assert lines == [] and not (tmp_path / "backends").exists()


@needs_openvino
def test_auto_measures_once_keeps_the_answer_and_says_it_in_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "GATE_POSITIONS", 40)  # the gate itself is tests/nets/test_precision.py's
    monkeypatch.setattr(precision, "RATE_SECONDS", 0.05)
    net = build_tiny_net(tmp_path / "tiny.onnx")
    lines: list[str] = []
    first = load_evaluator(net, backend="auto", precision="auto", directory=tmp_path, report=lines.append)
    assert isinstance(first, OnnxEvaluator)
    [kept] = list((tmp_path / "backends").glob("*.json"))
    choice = backends.read_choice(kept)
    assert choice is not None and (choice.backend, choice.precision) == (first.config.backend,
                                                                         first.config.precision)
    assert set(choice.rates) >= {"onnxruntime fp32", "openvino fp32"}
    assert len(lines) == 1 and lines[0].startswith(f"net: {choice.backend} {choice.precision} (net.backend=auto")

    def no_second_measurement(*args: Any, **kwargs: Any) -> Choice:
        raise AssertionError("auto measured again although its answer was kept")

    monkeypatch.setattr(precision, "choose", no_second_measurement)
    again = load_evaluator(net, backend="auto", precision="auto", directory=tmp_path, report=lines.append)
    assert isinstance(again, OnnxEvaluator) and again.config.backend == first.config.backend
    assert len(lines) == 2 and lines[1] == lines[0]


@needs_openvino
def test_auto_keeps_onnxruntime_unless_another_is_clearly_faster(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "tiny.onnx")

    def open_pair(backend: str, precision: str) -> OnnxEvaluator:
        return OnnxEvaluator(str(net), backend=backend, precision=precision, symmetry_mode="fixed")

    pairs = [("onnxruntime", "fp32"), ("openvino", "fp32")]
    choice = precision.choose(pairs, {}, open_pair, 9, seconds=0.05)
    rates = choice.rates
    fastest = max(rates, key=lambda k: rates[k])
    if rates[fastest] >= precision.MIN_GAIN * rates["onnxruntime fp32"]:
        assert f"{choice.backend} {choice.precision}" == fastest
    else:
        assert (choice.backend, choice.precision) == ("onnxruntime", "fp32")


# ------------------------------------------------------------------------------------- OpenVINO, for real
@needs_openvino
def test_openvino_fp32_gives_onnxruntimes_numbers(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "tiny.onnx")
    states = backends.sample_states(9, 6) + backends.sample_states(7, 3)
    ort = OnnxEvaluator(str(net), symmetry_mode="fixed").evaluate(states)
    ov = OnnxEvaluator(str(net), symmetry_mode="fixed", backend="openvino").evaluate(states)
    largest = _largest(ort, ov)
    assert largest["lead"] < 1e-3 and all(v < 1e-4 for k, v in largest.items() if k != "lead"), largest


@needs_openvino
def test_openvino_runs_from_two_threads_at_once(tmp_path: Path) -> None:
    """The search's thread and the net's own thread may both run the session (search.overlap)."""
    from concurrent.futures import ThreadPoolExecutor

    net = build_tiny_net(tmp_path / "tiny.onnx")
    evaluator = OnnxEvaluator(str(net), symmetry_mode="fixed", backend="openvino")
    states = backends.sample_states(9, 8)
    alone = evaluator.evaluate(states)
    with ThreadPoolExecutor(2) as pool:
        both = list(pool.map(lambda _: evaluator.evaluate(states), range(6)))
    for result in both:
        assert set(_largest(alone, result).values()) == {0.0}


# Tolerances of bf16 and fp16 against KataGo's own outputs (fp32): the precision gate's limits on the maximum (KataGo's
# fp16 limits; a reference file holds too few positions for a 99th percentile of its own). fp32 is held to
# onnxruntime's tolerances (tests/nets/test_reference.py).
REDUCED_TOL = {"policy": LIMITS["top_policy"][1], "win": LIMITS["winrate"][1], "loss": LIMITS["winrate"][1],
               "lead": LIMITS["lead"][1], "ownership": LIMITS["ownership"][1]}
# KataGo's test nets in ../shared/nets are not trained: their outputs say nothing of a precision's error on a real
# net, so they are checked in fp32 only.
UNTRAINED = {"b7c96h3tfrs-test5-cnorm.bin.gz", "b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"}


@needs_openvino
@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
@pytest.mark.parametrize("reference", LOCAL_FILES or [None], ids=[p.name for p in LOCAL_FILES] or ["none"])
def test_openvino_matches_katago_on_every_reference_position(reference: Path | None, precision: str,
                                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    if reference is None:
        pytest.skip(missing_reason("nets/ and reference/"))
    if precision != "fp32" and _net_of(reference) in UNTRAINED:
        pytest.skip(f"{_net_of(reference)} is an untrained test net: checked against KataGo in fp32 only")
    try:
        check_available("openvino", precision)
    except BackendError as exc:
        pytest.skip(str(exc))
    records = load_records(reference)
    evaluator = load_evaluator(NETS_DIR / _net_of(reference), backend="openvino", precision=precision,
                               directory=tmp_path_factory.mktemp("nets"))
    assert isinstance(evaluator, OnnxEvaluator)
    failures = []
    for record in records:
        mismatch = compare(raw_nn(evaluator, state_from_record(record), [0])[0], record)
        if precision == "fp32":
            ok = mismatch.within_tolerance()
        else:
            ok = all(getattr(mismatch, k) <= tol for k, tol in REDUCED_TOL.items()) and not mismatch.illegal_disagreements
        if not ok:
            failures.append(f"{record['id']}: {mismatch}")
    assert not failures, f"{len(failures)} of {len(records)} positions ({precision}):\n" + "\n".join(failures[:10])


# ------------------------------------------------------------------------------------- heads in fp32
def _converted(spec_name: str, directory: Path) -> Path:
    from miai.nets.katago import parse_model_bytes
    from miai.nets.onnx_export import build_onnx

    from .synthetic_models import write_model
    from .test_convert import SYNTHETIC

    path = directory / f"{spec_name}.onnx"
    path.write_bytes(build_onnx(parse_model_bytes(write_model(SYNTHETIC[spec_name]), binary_floats=True))
                     .SerializeToString())
    return path


def _reduced_precision_here() -> str:
    """A reduced precision this CPU computes in, or skip saying what it lacks (the fp32 paths are tested alone)."""
    for precision in ("bf16", "fp16"):
        try:
            check_available("openvino", precision)
            return precision
        except BackendError:
            continue
    pytest.skip("this CPU computes in neither bf16 (AVX512_BF16 or AMX) nor fp16 (AVX512_FP16 or AMX-FP16): "
                "only the fp32 paths run here")


@needs_openvino
@pytest.mark.parametrize("spec_name", ["v8-resnet", "v17-transformer"])
def test_the_trunk_and_heads_cut_apart_give_the_whole_nets_numbers(spec_name: str, tmp_path: Path) -> None:
    """The cut runs on any CPU (both halves at fp32 here): what the heads get is the trunk's output, nothing else."""
    from miai.nets.onnx_export import TRUNK

    from .synthetic_models import random_inputs

    ov = backends.import_openvino()
    core = ov.Core()
    model = core.read_model(str(_converted(spec_name, tmp_path)))
    split = backends.split_at_trunk(model)
    assert split is not None
    trunk, heads = (core.compile_model(part, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}) for part in split)
    whole = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    spatial, global_ = random_inputs(7, batch=3)
    feeds = {"input_spatial": spatial, "input_global": global_}
    outputs = ("policy", "value", "miscvalue", "ownership")

    def named(results: Any) -> dict[str, np.ndarray]:
        return {next(n for n in outputs if n in o.get_names()): v for o, v in results.items()}

    expected = named(whole.create_infer_request().infer(feeds))
    cut = trunk.create_infer_request().infer(feeds)[0]
    head_feeds = {i.get_any_name(): (cut if i.get_any_name() == TRUNK else feeds[i.get_any_name()]) for i in heads.inputs}
    found = named(heads.create_infer_request().infer(head_feeds))
    assert set(found) == set(expected) == set(outputs)
    for name, value in expected.items():
        np.testing.assert_allclose(found[name], value, rtol=1e-5, atol=1e-5)


def test_a_net_without_a_named_trunk_is_compiled_whole(tmp_path: Path) -> None:
    if not backends.openvino_installed():
        pytest.skip("needs OpenVINO: pip install -e '.[openvino]'")
    model = backends.import_openvino().Core().read_model(str(build_tiny_net(tmp_path / "tiny.onnx")))
    assert backends.split_at_trunk(model) is None


@needs_openvino
@pytest.mark.parametrize("spec_name", ["v8-resnet", "v17-transformer"])
def test_under_a_reduced_precision_openvino_runs_every_head_node_in_fp32(spec_name: str, tmp_path: Path) -> None:
    """KataGo's TensorRT backend keeps its heads in fp32 since v1.16.1; checked in OpenVINO's compiled runtime
    model (each node's runtime precision), not in what miai asked for."""
    precision = _reduced_precision_here()
    reduced = {"bf16": "bf16", "fp16": "f16"}[precision]
    net = _converted(spec_name, tmp_path)
    session = backends.open_openvino(str(net), precision, 1)
    compiled = session.runtime_precisions()
    assert set(compiled) == {"trunk", "heads"}
    heads = compiled["heads"]
    assert heads and set(heads.values()) == {"f32"}, {k: v for k, v in heads.items() if v != "f32"}
    # The heads' compiled nodes are the policy, value, score and ownership outputs' own layers, pooling included.
    layers = ",".join(heads)
    for name in ("policy", "value", "miscvalue", "ownership", "gpool"):
        assert name in layers
    assert reduced in set(compiled["trunk"].values())  # the trunk really computes in the reduced precision
    whole = backends.open_openvino(str(net), precision, 1, fp32_heads=False).runtime_precisions()
    assert set(whole) == {"trunk"} and reduced in set(whole["trunk"].values())


@pytest.mark.slow
def test_gtp_refuses_bf16_on_a_cpu_without_it_in_one_line(tmp_path: Path) -> None:
    """Where this CPU has bf16 and OpenVINO is installed the engine starts instead; both are checked."""
    import subprocess
    import sys

    net = build_tiny_net(tmp_path / "tiny.onnx")
    command = [str(Path(sys.executable).with_name("miai")), "gtp", "--model", str(net),
               "--set", "net.backend=openvino", "--set", "net.precision=bf16"]
    done = subprocess.run(command, input="name\nquit\n", capture_output=True, text=True, timeout=120)
    try:
        check_available("openvino", "bf16")
    except BackendError as exc:
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert str(exc) in done.stderr and len([ln for ln in done.stderr.splitlines() if ln.strip()]) == 1
    else:
        assert done.returncode == 0 and "= miai" in done.stdout


@needs_openvino
def test_loading_openvino_sends_no_telemetry_and_forks_nothing(tmp_path: Path) -> None:
    # openvino's model-conversion tools send a usage event from a forked process when imported; a forked child
    # once hung holding the engine's output open (KaTrain waited for it on shutdown).
    import subprocess
    import sys

    net = build_tiny_net(tmp_path / "tiny.onnx", board_size=9)
    script = ("import glob, sys\n"
              "from miai.nets.loading import load_evaluator\n"
              f"load_evaluator({str(net)!r}, backend='openvino')\n"
              "children = ''.join(open(f).read() for f in glob.glob('/proc/self/task/*/children'))\n"
              "print([m for m in sys.modules if m.startswith('openvino_telemetry')], repr(children.strip()))\n")
    # HOME without OpenVINO's consent file: telemetry would be sent (it is on unless opted out).
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "''"]
