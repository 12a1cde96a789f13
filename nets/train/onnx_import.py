"""Reading an exported student back into torch, so that training can go on from a committed net
(imports torch).

``export.py`` writes batch norms merged into one multiplier and one offset per channel, as
``miai.nets.onnx_export`` does for every net; the running statistics are gone. ``student_from_onnx``
therefore loads each norm as that affine map (mean 0, variance 1 - eps), which computes exactly the
exported function in eval mode, and ``recalibrate_norms`` then measures the real input statistics
of every norm on training data and rewrites it as the same map over those statistics. Training mode
normalizes by batch statistics, so without the second step the first steps of a fine-tuning run
would start from a different net.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

from miai.nets.train import TrainError
from miai.nets.train import model as m

__all__ = ["student_from_onnx", "recalibrate_norms"]


def _initializers(path: Path) -> dict[str, np.ndarray]:
    try:
        proto = onnx.load(str(path))
    except Exception as exc:  # onnx raises several types for a damaged or foreign file
        raise TrainError(f"{path}: not a readable ONNX file ({exc})") from exc
    return {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}


def _config(weights: dict[str, np.ndarray], path: Path) -> m.ModelConfig:
    """The architecture, read off the weights' names and shapes (those ``export.py`` writes)."""
    if "initial_conv.w" not in weights or "policy.p1.w" not in weights:
        raise TrainError(f"{path}: not a net exported by `miai train export` (no initial_conv.w / policy.p1.w)")
    initial = weights["initial_conv.w"]
    blocks = 0
    while f"block{blocks}.pre.mult" in weights:
        blocks += 1
    gpool = tuple(i for i in range(blocks) if f"block{i}.gconv.w" in weights)
    return m.ModelConfig(
        blocks=blocks,
        channels=int(initial.shape[0]),
        gpool_channels=int(weights[f"block{gpool[0]}.gconv.w"].shape[0]) if gpool else 0,
        gpool_blocks=gpool,
        head_channels=int(weights["policy.p1.w"].shape[0]),
        value_hidden=int(weights["value.v2.w"].shape[1]),
        initial_kernel=int(initial.shape[2]),
    )


class _Loader:
    """Copies named ONNX initializers into torch modules, checking every shape."""

    def __init__(self, weights: dict[str, np.ndarray], path: Path) -> None:
        self.weights = weights
        self.path = path

    def _get(self, name: str, shape: Iterable[int]) -> torch.Tensor:
        if name not in self.weights:
            raise TrainError(f"{self.path}: weight {name!r} is missing")
        array = self.weights[name]
        if tuple(array.shape) != tuple(shape):
            raise TrainError(f"{self.path}: weight {name!r} has shape {array.shape}, expected {tuple(shape)}")
        return torch.from_numpy(np.array(array, dtype=np.float32))

    def conv(self, name: str, conv: nn.Conv2d) -> None:
        conv.weight.data.copy_(self._get(name + ".w", conv.weight.shape))

    def linear(self, name: str, linear: nn.Linear, bias_name: str | None = None) -> None:
        linear.weight.data.copy_(self._get(name + ".w", linear.weight.shape[::-1]).T)
        if bias_name is not None:
            assert linear.bias is not None
            linear.bias.data.copy_(self._get(bias_name + ".b", linear.bias.shape))

    def norm(self, name: str, norm_act: m.NormAct) -> None:
        bn = norm_act.norm
        assert bn.running_mean is not None and bn.running_var is not None
        bn.weight.data.copy_(self._get(name + ".mult", (bn.num_features, 1, 1)).flatten())
        bn.bias.data.copy_(self._get(name + ".offset", (bn.num_features, 1, 1)).flatten())
        bn.running_mean.zero_()
        bn.running_var.fill_(1.0 - bn.eps)  # so that weight / sqrt(var + eps) is the multiplier itself

    def block(self, name: str, block: nn.Module) -> None:
        self.norm(name + ".pre", block.pre)
        self.norm(name + ".mid", block.mid)
        self.conv(name + ".conv2", block.conv2)
        if isinstance(block, m.OrdinaryBlock):
            self.conv(name + ".conv1", block.conv1)
            return
        assert isinstance(block, m.GPoolBlock)
        self.conv(name + ".regular", block.regular)
        self.conv(name + ".gconv", block.gconv)
        self.norm(name + ".gnorm", block.gnorm)
        self.linear(name + ".to_bias", block.to_bias)

    def net(self, net: m.StudentNet) -> None:
        self.conv("initial_conv", net.initial_conv)
        self.linear("initial_global", net.initial_global)
        for i, block in enumerate(net.blocks):
            self.block(f"block{i}", block)
        self.norm("tip", net.tip)
        p = net.policy
        self.conv("policy.p1", p.p1)
        self.conv("policy.g1", p.g1)
        self.norm("policy.gnorm", p.gnorm)
        self.linear("policy.to_bias", p.to_bias)
        self.norm("policy.p1norm", p.p1norm)
        self.conv("policy.p2", p.p2)
        self.linear("policy.to_pass", p.to_pass)
        v = net.value
        self.conv("value.v1", v.v1)
        self.norm("value.v1norm", v.v1norm)
        self.linear("value.v2", v.v2, "value.v2b")
        self.linear("value.v3", v.value, "value.v3b")
        self.linear("value.sv3", v.misc, "value.sv3b")
        self.conv("value.ownership", v.ownership)


def student_from_onnx(path: Path) -> m.StudentNet:
    """The student a ``miai train export`` file holds, in eval mode, computing what the file computes.

    Raises ``TrainError`` naming the file when it is not such a net."""
    weights = _initializers(Path(path))
    net = m.StudentNet(_config(weights, Path(path)))
    with torch.no_grad():
        _Loader(weights, Path(path)).net(net)
    net.eval()
    return net


def recalibrate_norms(net: m.StudentNet, batches: Iterable[tuple[np.ndarray, np.ndarray]]) -> int:
    """Gives every batch norm the input statistics measured on ``batches`` of (spatial, global)
    inputs while keeping its eval-mode function unchanged; returns the positions measured.

    A norm computing ``x * a + b`` becomes ``(x - mean) / sqrt(var + eps) * w + c`` with
    ``w = a * sqrt(var + eps)`` and ``c = b + mean * a``: the same map, so that training mode, which
    normalizes by the batch's own statistics, starts where the loaded net is."""
    norms = [module for module in net.modules() if isinstance(module, nn.BatchNorm2d)]
    sums: dict[int, list[torch.Tensor]] = {}
    count = 0

    def hook(module: nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
        x = inputs[0].double()
        first, second = x.mean(dim=(0, 2, 3)), (x * x).mean(dim=(0, 2, 3))
        weight = x.shape[0]
        totals = sums.setdefault(id(module), [torch.zeros_like(first), torch.zeros_like(second)])
        totals[0] += first * weight
        totals[1] += second * weight

    handles = [norm.register_forward_pre_hook(hook) for norm in norms]
    net.eval()
    try:
        with torch.no_grad():
            for spatial, global_ in batches:
                net(torch.from_numpy(spatial), torch.from_numpy(global_))
                count += spatial.shape[0]
    finally:
        for handle in handles:
            handle.remove()
    if count == 0:
        raise TrainError("no positions to measure the batch norms on")
    with torch.no_grad():
        for norm in norms:
            assert norm.running_mean is not None and norm.running_var is not None
            mean = sums[id(norm)][0] / count
            var = (sums[id(norm)][1] / count - mean * mean).clamp(min=0.0)
            mult = norm.weight.double() / torch.sqrt(norm.running_var.double() + norm.eps)
            offset = norm.bias.double() - norm.running_mean.double() * mult
            norm.running_mean.copy_(mean.float())
            norm.running_var.copy_(var.float())
            norm.weight.copy_((mult * torch.sqrt(var + norm.eps)).float())
            norm.bias.copy_((offset + mean * mult).float())
    return count
