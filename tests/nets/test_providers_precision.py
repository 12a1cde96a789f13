"""net.providers / net.allow_cpu_fallback (tested on the CPU provider) and net.precision = "int8"."""

from __future__ import annotations

import gzip
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from miai.engine.config import Config, ConfigError, set_option
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import load_evaluator
from miai.nets.evaluator import EvaluatorError, OnnxEvaluator, resolve_providers
from miai.nets.quantize import quantized_path, trunk_convolutions

from .reference_cases import NETS_DIR, load_records, state_from_record
from .synthetic_models import Spec, write_model
from .tiny_nets import build_tiny_net

CPU = "CPUExecutionProvider"
B6 = NETS_DIR / "g170-b6c96-s175395328-d26788732.bin.gz"


def test_a_missing_provider_falls_back_to_the_cpu_with_one_line_naming_its_package(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="miai"):
        chosen = resolve_providers(["CUDAExecutionProvider", CPU], True, available=[CPU])
    assert chosen == [CPU]
    [record] = caplog.records
    assert "CUDAExecutionProvider is not available" in record.message and "onnxruntime-gpu" in record.message


@pytest.mark.parametrize("provider, package", [
    ("TensorrtExecutionProvider", "onnxruntime-gpu"),
    ("DmlExecutionProvider", "onnxruntime-directml"),
    ("OpenVINOExecutionProvider", "onnxruntime-openvino"),
    ("CoreMLExecutionProvider", "macOS"),
    ("CUDAExecutonProvider", "not an execution provider onnxruntime knows"),  # a typo
])
def test_without_fallback_a_missing_provider_is_an_error_naming_the_package(provider, package) -> None:
    with pytest.raises(EvaluatorError, match=package) as caught:
        resolve_providers([provider], False, available=[CPU])
    assert "\n" not in str(caught.value) and provider in str(caught.value)


def test_available_providers_keep_their_order_and_the_cpu_is_added_last() -> None:
    assert resolve_providers(["B", "A"], True, available=["A", "B", CPU]) == ["B", "A", CPU]
    assert resolve_providers(["B", "A"], False, available=["A", "B", CPU]) == ["B", "A"]


def test_the_evaluator_runs_on_the_providers_it_resolved(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "tiny.onnx")
    evaluator = OnnxEvaluator(str(net), providers=("CUDAExecutionProvider", CPU))
    assert evaluator.providers == [CPU] and evaluator.session.get_providers() == [CPU]
    state = GameState(9, Rules.preset("chinese"), 7.5)
    assert evaluator.evaluate([state])[0].policy.sum() == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(EvaluatorError, match="onnxruntime-gpu"):
        OnnxEvaluator(str(net), providers=("CUDAExecutionProvider",), allow_cpu_fallback=False)


def test_providers_option_reads_a_list_from_toml_or_commas_from_set() -> None:
    config = set_option(Config(), "net.providers", "CUDAExecutionProvider, CPUExecutionProvider")
    assert config.net.providers == ("CUDAExecutionProvider", CPU)
    config = set_option(Config(), "net.providers", '["DmlExecutionProvider"]')
    assert config.net.providers == ("DmlExecutionProvider",)
    assert Config.from_dict({"net": {"providers": ["A", CPU]}}).net.providers == ("A", CPU)
    with pytest.raises(ConfigError, match="net.providers|NetConfig.providers"):
        Config.from_dict({"net": {"providers": "CUDAExecutionProvider"}})
    with pytest.raises(ConfigError, match="precision"):
        set_option(Config(), "net.precision", "fp8")


def test_gtp_refuses_a_missing_provider_without_fallback_in_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from miai.engine.cli.main import main

    net = build_tiny_net(tmp_path / "tiny.onnx")
    result = CliRunner().invoke(main, ["gtp", "--model", str(net), "--set", "net.providers=DmlExecutionProvider",
                                       "--set", "net.allow_cpu_fallback=false"], input="quit\n")
    assert result.exit_code != 0
    assert "DmlExecutionProvider is not available" in result.output and "onnxruntime-directml" in result.output


def _synthetic(tmp_path: Path) -> Path:
    model = tmp_path / "synthetic.bin.gz"
    model.write_bytes(gzip.compress(write_model(Spec(version=8))))
    return model


def test_int8_is_made_once_beside_the_converted_net_and_quantises_only_the_trunk(tmp_path: Path) -> None:
    evaluator = load_evaluator(_synthetic(tmp_path), precision="int8", directory=tmp_path / "cache")
    assert isinstance(evaluator, OnnxEvaluator)
    path = Path(evaluator.path)
    assert path.parent == tmp_path / "cache" and "int8" in path.name
    fp32 = next(p for p in path.parent.glob("*.onnx") if p != path)
    assert quantized_path(fp32) == path  # cached: the second request finds the same file
    stamp = os.stat(path).st_mtime_ns
    load_evaluator(_synthetic(tmp_path), precision="int8", directory=tmp_path / "cache")
    assert os.stat(path).st_mtime_ns == stamp
    import onnx

    nodes = onnx.load(str(path)).graph.node
    quantised = {n.output[0] for n in nodes if n.op_type == "DequantizeLinear"}
    convs = [n for n in nodes if n.op_type == "Conv"]
    assert {n.name for n in convs if n.input[0] in quantised} == set(trunk_convolutions(fp32)) != set()
    assert evaluator.info.model_version == 8  # metadata survives


def test_int8_refuses_a_net_without_trunk_convolutions(tmp_path: Path) -> None:
    net = build_tiny_net(tmp_path / "tiny.onnx")
    with pytest.raises(ValueError, match="no named 3x3 trunk convolutions"):
        load_evaluator(net, precision="int8")


@pytest.mark.skipif(not B6.is_file() or not load_records("pub_b6.jsonl"), reason="needs ../shared nets and reference")
def test_int8_b6_stays_close_to_fp32_on_katago_reference_positions(tmp_path: Path) -> None:
    states = [state_from_record(r) for r in load_records("pub_b6.jsonl")]
    fp32, int8 = (load_evaluator(B6, precision=p, directory=tmp_path) for p in ("fp32", "int8"))
    a, b = fp32.evaluate(states), int8.evaluate(states)
    agree = np.mean([np.argmax(x.policy) == np.argmax(y.policy) for x, y in zip(a, b)])
    assert agree >= 0.85
    assert np.mean([abs(x.value - y.value) for x, y in zip(a, b)]) < 0.05
    assert np.mean([abs(x.lead - y.lead) for x, y in zip(a, b)]) < 0.6
