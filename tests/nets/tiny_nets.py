"""Tiny hand-built ONNX nets with the converter's interface, for evaluator tests without KataGo files.

The net is not symmetric (random 3x3 kernels), so symmetry handling errors change its answers;
its pooled features divide by the on-board count, so a board padded into a larger buffer gives
the same numbers as the same board in an exact-size buffer.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_tiny_net(
    path: Path,
    *,
    board_size: int | None = None,
    spatial_channels: int = 22,
    policy_channels: int = 2,
    seed: int = 0,
    metadata: dict[str, str] | None = None,
) -> Path:
    """Write a tiny net to ``path``: fixed ``board_size`` x ``board_size`` inputs, or dynamic."""
    rng = np.random.default_rng(seed)
    h: int | str = board_size if board_size is not None else "H"
    w: int | str = board_size if board_size is not None else "W"
    pooled = spatial_channels + 19

    def weight(name: str, shape: tuple[int, ...], scale: float = 0.5) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.normal(size=shape) * scale).astype(np.float32), name)

    inits = [
        weight("wp", (policy_channels, spatial_channels, 3, 3)),
        weight("wo", (1, spatial_channels, 3, 3)),
        weight("wv", (pooled, 3)),
        weight("wm", (pooled, 4)),
        numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "axes_hw"),
        numpy_helper.from_array(np.array([0, policy_channels, -1], dtype=np.int64), "flat_shape"),
        numpy_helper.from_array(np.array([0, policy_channels, 1], dtype=np.int64), "pass_shape"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "start0"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "end1"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
    ]
    nodes = [
        helper.make_node("Conv", ["input_spatial", "wp"], ["p_conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["p_conv", "flat_shape"], ["p_flat"]),
        helper.make_node("ReduceMax", ["p_conv"], ["p_max"], axes=[2, 3], keepdims=1),
        helper.make_node("Reshape", ["p_max", "pass_shape"], ["p_pass"]),
        helper.make_node("Concat", ["p_flat", "p_pass"], ["policy"], axis=2),
        helper.make_node("Conv", ["input_spatial", "wo"], ["ownership"], pads=[1, 1, 1, 1]),
        helper.make_node("Slice", ["input_spatial", "start0", "end1", "axis1"], ["mask"]),
        helper.make_node("ReduceSum", ["mask", "axes_hw"], ["count4"], keepdims=0),
        helper.make_node("ReduceSum", ["input_spatial", "axes_hw"], ["sums"], keepdims=0),
        helper.make_node("Div", ["sums", "count4"], ["means"]),
        helper.make_node("Concat", ["means", "input_global"], ["pooled"], axis=1),
        helper.make_node("MatMul", ["pooled", "wv"], ["value"]),
        helper.make_node("MatMul", ["pooled", "wm"], ["miscvalue"]),
    ]
    area: int | str = board_size * board_size + 1 if board_size is not None else "HW1"
    graph = helper.make_graph(
        nodes,
        "tiny",
        [
            helper.make_tensor_value_info("input_spatial", TensorProto.FLOAT, ["N", spatial_channels, h, w]),
            helper.make_tensor_value_info("input_global", TensorProto.FLOAT, ["N", 19]),
        ],
        [
            helper.make_tensor_value_info("policy", TensorProto.FLOAT, ["N", policy_channels, area]),
            helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", 3]),
            helper.make_tensor_value_info("miscvalue", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("ownership", TensorProto.FLOAT, ["N", 1, h, w]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"model_version": "8", **(metadata or {})})
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path
