"""net.providers / net.allow_cpu_fallback (tested on the CPU provider); net.precision is tests/nets/test_backends.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from miai.engine.config import Config, ConfigError, set_option
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets import load_evaluator
from miai.nets.evaluator import EvaluatorError, OnnxEvaluator, resolve_providers

from .tiny_nets import build_tiny_net

CPU = "CPUExecutionProvider"


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
