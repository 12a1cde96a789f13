"""Exporting the student: torch weights -> ``ModelDesc`` -> miai's own ONNX builder (imports torch).

The student has exactly KataGo's model-version-8 structure, so its weights fill the same
dataclasses the KataGo parser produces (batch norms kept with their running statistics, linear
layers transposed to KataGo's [in, out] matmuls) and ``miai.nets.onnx_export.build_onnx`` emits the
graph. The result has the converter's interface and metadata, so ``load_evaluator`` and the
engine treat it like any converted KataGo net.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn

from miai.nets.katago_desc import (
    Activation,
    BatchNorm,
    Conv,
    GPoolBlock,
    MatBias,
    MatMul,
    ModelDesc,
    OrdinaryBlock,
    PolicyHead,
    PostProcess,
    Trunk,
    ValueHead,
)
from miai.nets.onnx_export import build_onnx
from miai.nets.train import model as m

__all__ = ["to_model_desc", "export_onnx", "sha256_of"]

MODEL_VERSION = 8  # one policy channel, four misc values: the teacher's (g170) output layout


def _np(t: torch.Tensor) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy().astype(np.float32))


def _conv(name: str, conv: nn.Conv2d) -> Conv:
    cout, cin, ky, kx = conv.weight.shape
    return Conv(name, int(cin), int(cout), int(ky), int(kx), 1, 1, _np(conv.weight))


def _matmul(name: str, linear: nn.Linear) -> MatMul:
    return MatMul(name, linear.in_features, linear.out_features, _np(linear.weight).T.copy())


def _bias(name: str, linear: nn.Linear) -> MatBias:
    assert linear.bias is not None
    return MatBias(name, linear.out_features, _np(linear.bias))


def _norm(name: str, norm_act: m.NormAct) -> BatchNorm:
    bn = norm_act.norm
    assert bn.running_mean is not None and bn.running_var is not None
    return BatchNorm(
        name, bn.num_features, float(bn.eps), _np(bn.running_mean), _np(bn.running_var), _np(bn.weight), _np(bn.bias)
    )


def _relu(name: str) -> Activation:
    return Activation(name, "relu")


def _block(name: str, block: nn.Module) -> OrdinaryBlock | GPoolBlock:
    if isinstance(block, m.OrdinaryBlock):
        return OrdinaryBlock(
            name,
            _norm(name + ".pre", block.pre),
            _relu(name + ".pre_act"),
            _conv(name + ".conv1", block.conv1),
            _norm(name + ".mid", block.mid),
            _relu(name + ".mid_act"),
            _conv(name + ".conv2", block.conv2),
        )
    assert isinstance(block, m.GPoolBlock)
    return GPoolBlock(
        name,
        _norm(name + ".pre", block.pre),
        _relu(name + ".pre_act"),
        _conv(name + ".regular", block.regular),
        _conv(name + ".gconv", block.gconv),
        _norm(name + ".gnorm", block.gnorm),
        _relu(name + ".gact"),
        _matmul(name + ".to_bias", block.to_bias),
        _norm(name + ".mid", block.mid),
        _relu(name + ".mid_act"),
        _conv(name + ".conv2", block.conv2),
    )


def to_model_desc(net: m.StudentNet, name: str) -> ModelDesc:
    """The student's weights as a KataGo model description (version 8)."""
    c = net.config
    blocks = tuple(_block(f"block{i}", b) for i, b in enumerate(net.blocks))
    trunk = Trunk(
        num_blocks=c.blocks,
        channels=c.channels,
        mid_channels=c.channels,
        regular_channels=c.channels - c.gpool_channels,
        gpool_channels=c.gpool_channels,
        norm_kind=0,
        initial_conv=_conv("initial_conv", net.initial_conv),
        initial_matmul=_matmul("initial_global", net.initial_global),
        blocks=blocks,
        tip_norm=_norm("tip", net.tip),
        tip_act=_relu("tip_act"),
    )
    p = net.policy
    policy = PolicyHead(
        name="policy",
        num_policy_channels=1,
        p1_conv=_conv("policy.p1", p.p1),
        g1_conv=_conv("policy.g1", p.g1),
        g1_norm=_norm("policy.gnorm", p.gnorm),
        g1_act=_relu("policy.gact"),
        gpool_to_bias=_matmul("policy.to_bias", p.to_bias),
        p1_norm=_norm("policy.p1norm", p.p1norm),
        p1_act=_relu("policy.p1act"),
        p2_conv=_conv("policy.p2", p.p2),
        pass_mul=_matmul("policy.to_pass", p.to_pass),
        pass_bias=None,
        pass_act=None,
        pass_mul2=None,
    )
    v = net.value
    value = ValueHead(
        name="value",
        v1_conv=_conv("value.v1", v.v1),
        v1_norm=_norm("value.v1norm", v.v1norm),
        v1_act=_relu("value.v1act"),
        v2_mul=_matmul("value.v2", v.v2),
        v2_bias=_bias("value.v2b", v.v2),
        v2_act=_relu("value.v2act"),
        v3_mul=_matmul("value.v3", v.value),
        v3_bias=_bias("value.v3b", v.value),
        sv3_mul=_matmul("value.sv3", v.misc),
        sv3_bias=_bias("value.sv3b", v.misc),
        ownership_conv=_conv("value.ownership", v.ownership),
    )
    return ModelDesc(
        name=name,
        version=MODEL_VERSION,
        num_input_channels=m.NUM_SPATIAL,
        num_input_global_channels=m.NUM_GLOBAL,
        post_process=PostProcess(),
        meta_encoder_version=0,
        trunk=trunk,
        policy_head=policy,
        value_head=value,
    )


def export_onnx(net: m.StudentNet, path: Path, name: str, extra_metadata: dict[str, str] | None = None) -> str:
    """Writes the student as a dynamic-size ONNX net at ``path``; returns its sha256."""
    net.eval()
    proto = build_onnx(to_model_desc(net, name), board_size=None)
    for key, value in (extra_metadata or {}).items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    onnx.save(proto, str(tmp))
    tmp.rename(path)
    return sha256_of(path)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
