"""The typed description of a KataGo model: layers, blocks, heads, and the model itself.

Produced by `miai.nets.katago` (the file reader) and consumed by `miai.nets.onnx_export`. Weights
are float32 numpy arrays already in ONNX order (convolutions [out, in, ky, kx], dense layers
[in, out]). Also the converter's error types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

__all__ = [
    "ModelFormatError",
    "UnsupportedModelError",
    "Conv",
    "BatchNorm",
    "Activation",
    "MatMul",
    "MatBias",
    "RMSNorm",
    "TokenNorm",
    "Norm",
    "OrdinaryBlock",
    "GPoolBlock",
    "NestedBottleneckBlock",
    "AttentionBlock",
    "FFNBlock",
    "Block",
    "Rope",
    "Trunk",
    "PolicyHead",
    "ValueHead",
    "PostProcess",
    "ModelDesc",
]


class ModelFormatError(ValueError):
    """A model file is truncated, corrupt, or not a KataGo model file."""


class UnsupportedModelError(ModelFormatError):
    """A well-formed KataGo model that uses a feature miai does not implement."""


# ---------------------------------------------------------------------------------------------
# Layer descriptions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Conv:
    """A 2-D convolution without bias. ``weights`` is [out, in, ky, kx] (ONNX order)."""

    name: str
    in_channels: int
    out_channels: int
    kernel_y: int
    kernel_x: int
    dilation_y: int
    dilation_x: int
    weights: np.ndarray


@dataclass(frozen=True, eq=False)
class BatchNorm:
    """Inference batch norm: ``(x - mean) / sqrt(var + eps) * scale + bias``, per channel."""

    name: str
    channels: int
    epsilon: float
    mean: np.ndarray
    variance: np.ndarray
    scale: np.ndarray
    bias: np.ndarray

    def merged(self) -> tuple[np.ndarray, np.ndarray]:
        """The equivalent per-channel (multiplier, offset), computed in float64 for accuracy."""
        mult = self.scale.astype(np.float64) / np.sqrt(self.variance.astype(np.float64) + self.epsilon)
        offset = self.bias.astype(np.float64) - self.mean.astype(np.float64) * mult
        return mult.astype(np.float32), offset.astype(np.float32)


@dataclass(frozen=True)
class Activation:
    """An activation layer: kind is one of identity, relu, mish, silu."""

    name: str
    kind: str


@dataclass(frozen=True, eq=False)
class MatMul:
    """A dense layer without bias. ``weights`` is [in, out]."""

    name: str
    in_channels: int
    out_channels: int
    weights: np.ndarray


@dataclass(frozen=True, eq=False)
class MatBias:
    """A bias vector added to a dense layer's output."""

    name: str
    channels: int
    weights: np.ndarray


@dataclass(frozen=True, eq=False)
class RMSNorm:
    """The trunk tip's RMSNorm (v17): ``x / rms * weight + bias`` then masked.

    ``spatial`` False: the RMS is taken over channels at each point. True: one RMS per position
    over all channels and on-board points. ``group_size`` > 0 splits channels into groups, each
    with its own spatial RMS.
    """

    name: str
    channels: int
    epsilon: float
    spatial: bool
    group_size: int
    weight: np.ndarray
    bias: np.ndarray


@dataclass(frozen=True, eq=False)
class TokenNorm:
    """The RMSNorm inside transformer blocks: over channels at each point, weight, no bias."""

    name: str
    channels: int
    epsilon: float
    weight: np.ndarray


Norm = Union[BatchNorm, RMSNorm]


@dataclass(frozen=True)
class OrdinaryBlock:
    """Residual block: norm, act, conv, norm, act, conv, added to the input."""

    name: str
    pre_norm: BatchNorm
    pre_act: Activation
    conv1: Conv
    mid_norm: BatchNorm
    mid_act: Activation
    conv2: Conv


@dataclass(frozen=True)
class GPoolBlock:
    """Residual block whose first conv is split; the gpool half becomes a bias on the regular half."""

    name: str
    pre_norm: BatchNorm
    pre_act: Activation
    regular_conv: Conv
    gpool_conv: Conv
    gpool_norm: BatchNorm
    gpool_act: Activation
    gpool_to_bias: MatMul
    mid_norm: BatchNorm
    mid_act: Activation
    conv2: Conv


@dataclass(frozen=True, eq=False)
class Rope:
    """Rotary position embedding of an attention block.

    ``learnable`` False: fixed axis-aligned frequencies from ``theta``. True: ``freqs`` is
    [kv_heads, q_head_dim // 2, 2] holding (omega_x, omega_y) per head and channel pair.
    """

    learnable: bool
    theta: float = 0.0
    freqs: np.ndarray | None = None


@dataclass(frozen=True)
class AttentionBlock:
    """Transformer self-attention half-block (residual): RMSNorm, q/k/v, RoPE, attention, out."""

    name: str
    heads: int
    kv_heads: int
    q_head_dim: int
    v_head_dim: int
    norm: TokenNorm
    q_proj: MatMul
    k_proj: MatMul
    v_proj: MatMul
    out_proj: MatMul
    rope: Rope | None


@dataclass(frozen=True)
class FFNBlock:
    """Transformer feed-forward half-block (residual): RMSNorm, then SwiGLU or SiLU MLP."""

    name: str
    channels: int
    ffn_channels: int
    norm: TokenNorm
    linear1: MatMul
    gate: MatMul | None
    linear2: MatMul


@dataclass(frozen=True)
class NestedBottleneckBlock:
    """Residual block: norm, act, 1x1 conv down, inner residual blocks, norm, act, 1x1 conv up."""

    name: str
    pre_norm: BatchNorm
    pre_act: Activation
    pre_conv: Conv
    blocks: tuple["Block", ...]
    post_norm: BatchNorm
    post_act: Activation
    post_conv: Conv


Block = Union[OrdinaryBlock, GPoolBlock, NestedBottleneckBlock, AttentionBlock, FFNBlock]


@dataclass(frozen=True)
class Trunk:
    """Initial conv plus global-input bias, the residual blocks, and the tip norm/activation."""

    num_blocks: int
    channels: int
    mid_channels: int
    regular_channels: int
    gpool_channels: int
    norm_kind: int
    initial_conv: Conv
    initial_matmul: MatMul
    blocks: tuple[Block, ...]
    tip_norm: Norm
    tip_act: Activation


@dataclass(frozen=True)
class PolicyHead:
    """Policy head. ``pass_bias``/``pass_act``/``pass_mul2`` exist from model version 15."""

    name: str
    num_policy_channels: int
    p1_conv: Conv
    g1_conv: Conv
    g1_norm: BatchNorm
    g1_act: Activation
    gpool_to_bias: MatMul
    p1_norm: BatchNorm
    p1_act: Activation
    p2_conv: Conv
    pass_mul: MatMul
    pass_bias: MatBias | None
    pass_act: Activation | None
    pass_mul2: MatMul | None


@dataclass(frozen=True)
class ValueHead:
    """Value head: value logits, score/misc values and ownership."""

    name: str
    v1_conv: Conv
    v1_norm: BatchNorm
    v1_act: Activation
    v2_mul: MatMul
    v2_bias: MatBias
    v2_act: Activation
    v3_mul: MatMul
    v3_bias: MatBias
    sv3_mul: MatMul
    sv3_bias: MatBias
    ownership_conv: Conv


@dataclass(frozen=True)
class PostProcess:
    """Output multipliers (KATAGO.md section 5); defaults apply before model version 13."""

    td_score: float = 20.0
    score_mean: float = 20.0
    score_stdev: float = 20.0
    lead: float = 20.0
    variance_time: float = 40.0
    shortterm_value_error: float = 0.25
    shortterm_score_error: float = 30.0


@dataclass(frozen=True)
class ModelDesc:
    """A whole KataGo model."""

    name: str
    version: int
    num_input_channels: int
    num_input_global_channels: int
    post_process: PostProcess
    meta_encoder_version: int
    trunk: Trunk
    policy_head: PolicyHead
    value_head: ValueHead

    @property
    def num_policy_channels(self) -> int:
        """Policy output channels: 1 (v8-v11), 2 (normal and optimistic), or 4 (v17 with q values)."""
        return self.policy_head.num_policy_channels

    @property
    def num_value_channels(self) -> int:
        """Value logits (win, loss, no result)."""
        return self.value_head.v3_mul.out_channels

    @property
    def num_misc_value_channels(self) -> int:
        """Score/misc value outputs (scoreMean, stdev, lead, varTime, ...)."""
        return self.value_head.sv3_mul.out_channels
