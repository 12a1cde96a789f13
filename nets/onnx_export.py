"""Emitting an ONNX graph for a parsed KataGo model (`miai.nets.katago.ModelDesc`).

The graph's interface (agreed with the evaluator, see docs/nets-converter.md):

- inputs ``input_spatial`` float32 [N, 22, H, W] (plane 0 is the on-board mask) and
  ``input_global`` float32 [N, 19];
- outputs ``policy`` [N, P, H*W+1] raw logits (pass last; channel 0 normal, 1 optimistic when
  present), ``value`` [N, 3] (win, loss, no-result logits), ``miscvalue`` [N, K] (raw scoreMean,
  stdev before softplus, lead, varTime, ...), ``ownership`` [N, 1, H, W] before tanh;
- metadata_props describing the model (name, version, post-process multipliers, ...).

The batch is always dynamic; H and W are either fixed at conversion or dynamic.

Forward pass (KATAGO.md section 4): every norm/activation output is multiplied by the mask before
the next convolution, global pooling averages over on-board points only and takes its maximum over
on-board points only, and attention masks off-board keys. Transformer blocks run in a [N, S, C]
token layout; the builder switches layouts only where needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from miai.nets.katago import (
    Activation,
    AttentionBlock,
    BatchNorm,
    Block,
    Conv,
    FFNBlock,
    GPoolBlock,
    MatBias,
    MatMul,
    ModelDesc,
    NestedBottleneckBlock,
    OrdinaryBlock,
    RMSNorm,
    Rope,
    TokenNorm,
    UnsupportedModelError,
)

__all__ = ["CONVERTER_VERSION", "OPSET", "build_onnx", "INPUT_SPATIAL", "INPUT_GLOBAL", "OUTPUT_NAMES", "TRUNK"]

# Bump whenever the emitted graph changes, so cached conversions are redone.
CONVERTER_VERSION = "3"
OPSET = 18

INPUT_SPATIAL = "input_spatial"
INPUT_GLOBAL = "input_global"
OUTPUT_NAMES = ("policy", "value", "miscvalue", "ownership")
# The trunk's output (after its last norm, activation and mask), named so that a backend can find where the heads
# begin: OpenVINO keeps everything after it in fp32 under bf16 and fp16 (miai.nets.backends).
TRUNK = "trunk"

# Added to off-board attention logits and pooled maxima: far below any real value, yet finite so
# that no NaN can appear, and exactly 0 added on the board (mask - 1 == 0 there).
_OFF_BOARD = 1.0e9

NCHW = "nchw"
NSC = "nsc"


@dataclass
class _Value:
    """A trunk tensor name plus its layout: NCHW [N, C, H, W] or NSC [N, H*W, C]."""

    name: str
    layout: str
    channels: int


def _flush_denormals(array: np.ndarray) -> np.ndarray:
    """Zeroes subnormal weights. Trained nets hold many (decayed dead channels), they change no
    result, and CPU arithmetic on them is ~100x slower: one layer full of them once took 93% of a
    transformer's time."""
    tiny = np.finfo(np.float32).tiny
    subnormal = (array != 0) & (np.abs(array) < tiny)
    if not subnormal.any():
        return array
    return np.where(subnormal, np.float32(0), array).astype(np.float32)


class _Graph:
    """Accumulates nodes and initializers with unique names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._counts: dict[str, int] = {}
        # Graph input/output names must never be taken by an intermediate tensor.
        self._used: set[str] = {INPUT_SPATIAL, INPUT_GLOBAL, *OUTPUT_NAMES, TRUNK}
        self._consts: dict[tuple[object, ...], str] = {}  # (kind, values[, ndim]) -> name

    def fresh(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``, ... whichever is still unused."""
        name, count = base, self._counts.get(base, 0)
        while name in self._used:
            count += 1
            name = f"{base}_{count}"
        self._counts[base] = count
        self._used.add(name)
        return name

    def weight(self, base: str, array: np.ndarray) -> str:
        name = self.fresh(base)
        if array.dtype == np.float32:
            array = _flush_denormals(array)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const_f(self, value: float | list[float]) -> str:
        """A small float32 constant, shared by value."""
        key = ("f", tuple(np.atleast_1d(value).tolist()), np.ndim(value))
        if key not in self._consts:
            self._consts[key] = self.weight("const_f", np.asarray(value, dtype=np.float32))
        return self._consts[key]

    def const_i(self, values: list[int]) -> str:
        """A 1-D int64 constant (shapes, axes), shared by value."""
        key = ("i", tuple(values))
        if key not in self._consts:
            self._consts[key] = self.weight("const_i", np.asarray(values, dtype=np.int64))
        return self._consts[key]

    # Node attributes are of many types (int, float, ints, floats, tensors); helper.make_node takes them as Any.
    def op(self, op_type: str, inputs: list[str], base: str, **attrs: Any) -> str:
        out = self.fresh(base)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def output(self, x: str, name: str) -> str:
        """Exposes ``x`` under the reserved name ``name`` (a graph output, or ``TRUNK``)."""
        self.nodes.append(helper.make_node("Identity", [x], [name], name=name))
        return name

    def slice(self, x: str, start: int, end: int, axis: int, base: str) -> str:
        return self.op("Slice", [x, self.const_i([start]), self.const_i([end]), self.const_i([axis])], base)

    def op_multi(self, op_type: str, inputs: list[str], bases: list[str], **attrs: Any) -> list[str]:
        outs = [self.fresh(b) for b in bases]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs


class _Builder:
    """Builds the forward pass of one model."""

    def __init__(self, desc: ModelDesc, board_size: int | None) -> None:
        self.desc = desc
        self.board_size = board_size
        self.g = _Graph()
        self._rope_tables: dict[bytes, tuple[str, str]] = {}
        self._setup_mask()

    # -- shared tensors -------------------------------------------------------------------------

    def _setup_mask(self) -> None:
        g = self.g
        self.mask = g.slice(INPUT_SPATIAL, 0, 1, 1, "mask")
        self.mask_sum = g.op("ReduceSum", [self.mask, g.const_i([2, 3])], "mask_sum", keepdims=1)  # N111
        self.mask_sum_flat = g.op("Reshape", [self.mask_sum, g.const_i([-1, 1])], "mask_sum_flat")  # N1
        # Pooling scales: (sqrt(area) - 14) / 10 and (sqrt(area) - 14)^2 / 100 - 0.1.
        root = g.op("Sqrt", [self.mask_sum_flat], "mask_sqrt")
        offset = g.op("Sub", [root, g.const_f(14.0)], "mask_sqrt_m14")
        self.pool_scale1 = g.op("Mul", [offset, g.const_f(0.1)], "pool_scale1")
        squared = g.op("Mul", [g.op("Mul", [offset, offset], "mask_sqrt_m14_sq"), g.const_f(0.01)], "pool_sq_scaled")
        self.pool_scale2 = g.op("Sub", [squared, g.const_f(0.1)], "pool_scale2")
        # Additive bias that removes off-board points from a maximum: 0 on board, -1e9 off.
        off = g.op("Sub", [self.mask, g.const_f(1.0)], "mask_m1")
        self.mask_neg = g.op("Mul", [off, g.const_f(_OFF_BOARD)], "mask_neg")
        self.hw = g.slice(g.op("Shape", [INPUT_SPATIAL], "input_shape"), 2, 4, 0, "hw")
        self._key_bias: str | None = None

    def key_bias(self) -> str:
        """Attention logit bias [N, 1, 1, 1, S]: 0 for on-board keys, -1e9 for off-board keys."""
        if self._key_bias is None:
            self._key_bias = self.g.op("Reshape", [self.mask_neg, self.g.const_i([0, 1, 1, 1, -1])], "key_bias")
        return self._key_bias

    # -- layouts --------------------------------------------------------------------------------

    def to_nsc(self, x: _Value) -> _Value:
        if x.layout == NSC:
            return x
        flat = self.g.op("Reshape", [x.name, self.g.const_i([0, x.channels, -1])], "flat")
        return _Value(self.g.op("Transpose", [flat], "tokens", perm=[0, 2, 1]), NSC, x.channels)

    def to_nchw(self, x: _Value) -> _Value:
        if x.layout == NCHW:
            return x
        g = self.g
        chw = g.op("Transpose", [x.name], "untokens", perm=[0, 2, 1])
        shape = g.op("Concat", [g.const_i([0, x.channels]), self.hw], "nchw_shape", axis=0)
        return _Value(g.op("Reshape", [chw, shape], "spatial"), NCHW, x.channels)

    # -- layers ---------------------------------------------------------------------------------

    def conv(self, x: str, conv: Conv) -> str:
        pad_y = conv.dilation_y * (conv.kernel_y // 2)
        pad_x = conv.dilation_x * (conv.kernel_x // 2)
        w = self.g.weight(conv.name + ".w", conv.weights)
        return self.g.op(
            "Conv",
            [x, w],
            conv.name,
            kernel_shape=[conv.kernel_y, conv.kernel_x],
            pads=[pad_y, pad_x, pad_y, pad_x],
            dilations=[conv.dilation_y, conv.dilation_x],
        )

    def matmul(self, x: str, mm: MatMul) -> str:
        return self.g.op("MatMul", [x, self.g.weight(mm.name + ".w", mm.weights)], mm.name)

    def bias(self, x: str, b: MatBias) -> str:
        return self.g.op("Add", [x, self.g.weight(b.name + ".b", b.weights)], b.name)

    def activation(self, x: str, act: Activation) -> str:
        g = self.g
        if act.kind == "identity":
            return x
        if act.kind == "relu":
            return g.op("Relu", [x], act.name)
        if act.kind == "silu":
            return g.op("Mul", [x, g.op("Sigmoid", [x], act.name + ".sigmoid")], act.name)
        if act.kind == "mish":
            # mish(x) = x * tanh(softplus(x))
            th = g.op("Tanh", [g.op("Softplus", [x], act.name + ".softplus")], act.name + ".tanh")
            return g.op("Mul", [x, th], act.name)
        raise UnsupportedModelError(f"activation {act.kind!r} in layer {act.name!r} is not supported")

    def norm(self, x: str, norm: BatchNorm | RMSNorm) -> str:
        if isinstance(norm, BatchNorm):
            mult, offset = norm.merged()
            c = norm.channels
            g = self.g
            scaled = g.op("Mul", [x, g.weight(norm.name + ".mult", mult.reshape(c, 1, 1))], norm.name + ".scaled")
            return g.op("Add", [scaled, g.weight(norm.name + ".offset", offset.reshape(c, 1, 1))], norm.name)
        return self.spatial_rmsnorm(x, norm)

    def spatial_rmsnorm(self, x: str, norm: RMSNorm) -> str:
        """The trunk tip RMSNorm on NCHW input (per point, per position, or per channel group)."""
        g, c, n = self.g, norm.channels, norm.name
        if not norm.spatial:
            normed = self.rms_normalize(x, 1, norm.epsilon, n)
        else:
            groups = c // norm.group_size if norm.group_size > 0 else 1
            per_group = c // groups
            grouped = g.op("Reshape", [x, g.const_i([0, groups, per_group, -1])], n + ".grouped")  # N G Cg S
            mask = g.op("Reshape", [self.mask, g.const_i([0, 1, 1, -1])], n + ".mask")
            sq = g.op("Mul", [g.op("Mul", [grouped, grouped], n + ".sq"), mask], n + ".sqm")
            total = g.op("ReduceSum", [sq, g.const_i([2, 3])], n + ".sum", keepdims=1)  # N G 1 1
            points = g.op("Mul", [self.mask_sum, g.const_f(float(per_group))], n + ".n")
            count = g.op("Add", [points, g.const_f(norm.epsilon)], n + ".neps")
            mean_sq = g.op("Div", [total, count], n + ".meansq")
            rms = g.op("Sqrt", [g.op("Add", [mean_sq, g.const_f(norm.epsilon)], n + ".eps")], n + ".rms")
            normed_g = g.op("Div", [grouped, rms], n + ".normed_g")
            normed = g.op("Reshape", [normed_g, g.op("Shape", [x], n + ".shape")], n + ".normed")
        scaled = g.op("Mul", [normed, g.weight(n + ".weight", norm.weight.reshape(c, 1, 1))], n + ".scaled")
        return g.op("Add", [scaled, g.weight(n + ".bias", norm.bias.reshape(c, 1, 1))], n)

    def rms_normalize(self, x: str, axis: int, epsilon: float, n: str) -> str:
        """x / sqrt(mean(x^2 over axis) + eps) (the Pow/ReduceMean/Add/Sqrt/Div chain onnxruntime
        fuses into one SimplifiedLayerNormalization when the axis is the last one)."""
        g = self.g
        squares = g.op("Pow", [x, g.const_f(2.0)], n + ".sq")
        mean_sq = g.op("ReduceMean", [squares, g.const_i([axis])], n + ".meansq", keepdims=1)
        rms = g.op("Sqrt", [g.op("Add", [mean_sq, g.const_f(epsilon)], n + ".eps")], n + ".rms")
        return g.op("Div", [x, rms], n + ".normed")

    def norm_act_mask(self, x: str, norm: BatchNorm | RMSNorm, act: Activation) -> str:
        out = self.activation(self.norm(x, norm), act)
        return self.g.op("Mul", [out, self.mask], act.name + ".masked")

    def board_mean(self, x: str, base: str) -> str:
        """[N, C, H, W] masked input -> [N, C] mean over the on-board points."""
        total = self.g.op("ReduceSum", [x, self.g.const_i([2, 3])], base + ".sum", keepdims=0)
        return self.g.op("Div", [total, self.mask_sum_flat], base + ".mean")

    def gpool(self, x: str, base: str) -> str:
        """[N, C, H, W] masked input -> [N, 3C]: mean, mean*(sqrt(area)-14)/10, on-board max."""
        g = self.g
        mean = self.board_mean(x, base)
        scaled = g.op("Mul", [mean, self.pool_scale1], base + ".mean_scaled")
        shifted = g.op("Add", [x, self.mask_neg], base + ".shifted")
        maximum = g.op("ReduceMax", [shifted, g.const_i([2, 3])], base + ".max", keepdims=0)
        return g.op("Concat", [mean, scaled, maximum], base, axis=1)

    def value_gpool(self, x: str, base: str) -> str:
        """The value head's pooling: mean, mean*(sqrt-14)/10, mean*((sqrt-14)^2/100 - 0.1)."""
        g = self.g
        mean = self.board_mean(x, base)
        s1 = g.op("Mul", [mean, self.pool_scale1], base + ".s1")
        s2 = g.op("Mul", [mean, self.pool_scale2], base + ".s2")
        return g.op("Concat", [mean, s1, s2], base, axis=1)

    def as_channel_bias(self, x: str, base: str) -> str:
        """[N, C] -> [N, C, 1, 1]."""
        return self.g.op("Unsqueeze", [x, self.g.const_i([2, 3])], base)

    # -- residual blocks -------------------------------------------------------------------------

    def block(self, x: _Value, block: Block) -> _Value:
        if isinstance(block, (AttentionBlock, FFNBlock)):
            x = self.to_nsc(x)
            residual = self.attention(x.name, block) if isinstance(block, AttentionBlock) else self.ffn(x.name, block)
            return _Value(self.g.op("Add", [x.name, residual], block.name + ".out"), NSC, x.channels)
        x = self.to_nchw(x)
        if isinstance(block, OrdinaryBlock):
            residual = self.ordinary(x.name, block)
        elif isinstance(block, GPoolBlock):
            residual = self.gpool_block(x.name, block)
        elif isinstance(block, NestedBottleneckBlock):
            residual = self.nested(x.name, block)
        else:  # pragma: no cover - the parser produces only the kinds above
            raise UnsupportedModelError(f"unknown block type {type(block).__name__}")
        return _Value(self.g.op("Add", [x.name, residual], block.name + ".out"), NCHW, x.channels)

    def ordinary(self, x: str, b: OrdinaryBlock) -> str:
        out = self.conv(self.norm_act_mask(x, b.pre_norm, b.pre_act), b.conv1)
        return self.conv(self.norm_act_mask(out, b.mid_norm, b.mid_act), b.conv2)

    def gpool_block(self, x: str, b: GPoolBlock) -> str:
        pre = self.norm_act_mask(x, b.pre_norm, b.pre_act)
        regular = self.conv(pre, b.regular_conv)
        pooled_in = self.norm_act_mask(self.conv(pre, b.gpool_conv), b.gpool_norm, b.gpool_act)
        bias = self.matmul(self.gpool(pooled_in, b.name + ".gpool"), b.gpool_to_bias)
        out = self.g.op("Add", [regular, self.as_channel_bias(bias, b.name + ".gbias")], b.name + ".biased")
        return self.conv(self.norm_act_mask(out, b.mid_norm, b.mid_act), b.conv2)

    def nested(self, x: str, b: NestedBottleneckBlock) -> str:
        down = self.conv(self.norm_act_mask(x, b.pre_norm, b.pre_act), b.pre_conv)
        inner = _Value(down, NCHW, b.pre_conv.out_channels)
        for sub in b.blocks:
            inner = self.block(inner, sub)
        inner = self.to_nchw(inner)
        return self.conv(self.norm_act_mask(inner.name, b.post_norm, b.post_act), b.post_conv)

    # -- transformer blocks (token layout [N, S, C]) ---------------------------------------------

    def token_rmsnorm(self, x: str, norm: TokenNorm) -> str:
        g, n = self.g, norm.name
        normed = self.rms_normalize(x, -1, norm.epsilon, n)
        return g.op("Mul", [normed, g.weight(n + ".weight", norm.weight)], n)

    def ffn(self, x: str, b: FFNBlock) -> str:
        g = self.g
        xn = self.token_rmsnorm(x, b.norm)
        if b.gate is None:
            hidden = self.activation(self.matmul(xn, b.linear1), Activation(b.name + ".act", "silu"))
        else:
            # One matmul for the input and gate projections, split afterwards.
            both = np.concatenate([b.linear1.weights, b.gate.weights], axis=1)
            fused = g.op("MatMul", [xn, g.weight(b.name + ".w13", both)], b.name + ".w13out")
            sizes = g.const_i([b.ffn_channels, b.ffn_channels])
            a, gate = g.op_multi("Split", [fused, sizes], [b.name + ".a", b.name + ".gate"], axis=-1)
            hidden = g.op("Mul", [self.activation(a, Activation(b.name + ".silu", "silu")), gate], b.name + ".swiglu")
        return self.matmul(hidden, b.linear2)

    def attention(self, x: str, b: AttentionBlock) -> str:
        g, n = self.g, b.name
        heads, kv, rep, dq, dv = b.heads, b.kv_heads, b.heads // b.kv_heads, b.q_head_dim, b.v_head_dim
        xn = self.token_rmsnorm(x, b.norm)
        # Fold the 1/sqrt(dq) logit scale into the query weights.
        wq = b.q_proj.weights / np.float32(np.sqrt(dq))
        q = self.rotated(xn, wq, b, heads, n + ".q")
        k = self.rotated(xn, b.k_proj.weights, b, kv, n + ".k")
        v = self.matmul(xn, b.v_proj)
        # Query heads kvh*rep .. kvh*rep+rep-1 share key/value head kvh: group them on an axis so
        # that MatMul broadcasting pairs them without copying keys.
        q5 = self.split_heads(q, [kv, rep, dq], [0, 2, 3, 1, 4], n + ".q")  # N kv rep S dq
        k5 = self.split_heads(k, [kv, 1, dq], [0, 2, 3, 4, 1], n + ".k")  # N kv 1 dq S
        v5 = self.split_heads(v, [kv, 1, dv], [0, 2, 3, 1, 4], n + ".v")  # N kv 1 S dv
        logits = g.op("Add", [g.op("MatMul", [q5, k5], n + ".qk"), self.key_bias()], n + ".logits")
        weights = g.op("Softmax", [logits], n + ".attn", axis=-1)
        mixed = g.op("MatMul", [weights, v5], n + ".mixed")  # N kv rep S dv
        tokens = g.op("Transpose", [mixed], n + ".mixed_t", perm=[0, 3, 1, 2, 4])
        flat = g.op("Reshape", [tokens, g.const_i([0, 0, heads * dv])], n + ".heads")
        return self.matmul(flat, b.out_proj)

    def split_heads(self, x: str, dims: list[int], perm: list[int], base: str) -> str:
        """[N, S, prod(dims)] -> reshaped to [N, S, *dims] and transposed by ``perm``."""
        shaped = self.g.op("Reshape", [x, self.g.const_i([0, 0, *dims])], base + ".heads")
        return self.g.op("Transpose", [shaped], base + ".t", perm=perm)

    def rotated(self, xn: str, weights: np.ndarray, b: AttentionBlock, heads: int, base: str) -> str:
        """Projects tokens and applies RoPE: x' = x * cos + swap(x) * signed_sin per channel pair.

        swap(x) exchanges the two channels of every pair. It is folded into the projection
        weights: one wider matmul measured faster in onnxruntime than a Gather on the channels.
        The sign of the rotation lives in the sin table.
        """
        g = self.g
        if b.rope is None:
            return g.op("MatMul", [xn, g.weight(base + ".w", weights)], base)
        swapped = weights.reshape(weights.shape[0], -1, 2)[:, :, ::-1].reshape(weights.shape)
        width = weights.shape[1]
        fused = g.op("MatMul", [xn, g.weight(base + ".w", np.concatenate([weights, swapped], axis=1))], base + ".proj")
        halves = g.const_i([width, width])
        plain, swap = g.op_multi("Split", [fused, halves], [base + ".plain", base + ".swap"], axis=-1)
        cos, sin = self.rope_tables(b, heads)
        return g.op("Add", [g.op("Mul", [plain, cos], base + ".cos"), g.op("Mul", [swap, sin], base + ".sin")], base)

    def rope_tables(self, b: AttentionBlock, heads: int) -> tuple[str, str]:
        """cos and signed sin tables [S, heads*dq] for the block's rotary embedding."""
        omega_x, omega_y = _rope_frequencies(b.rope, b.kv_heads, b.q_head_dim)  # [kv, pairs]
        rep = heads // b.kv_heads
        # Per output channel (head-major, pairs interleaved): frequency of its pair's head.
        fx = np.repeat(np.repeat(omega_x, rep, axis=0), 2, axis=1).reshape(-1)
        fy = np.repeat(np.repeat(omega_y, rep, axis=0), 2, axis=1).reshape(-1)
        sign = np.tile(np.array([-1.0, 1.0]), fx.size // 2)
        key = np.concatenate([fx, fy]).tobytes()
        if key not in self._rope_tables:
            self._rope_tables[key] = self._make_rope_tables(fx, fy, sign, b.name)
        return self._rope_tables[key]

    def _make_rope_tables(self, fx: np.ndarray, fy: np.ndarray, sign: np.ndarray, base: str) -> tuple[str, str]:
        g = self.g
        if self.board_size is not None:
            size = self.board_size
            rows, cols = np.divmod(np.arange(size * size, dtype=np.float64), size)
            angles = rows[:, None] * fy[None, :] + cols[:, None] * fx[None, :]
            cos = g.weight(base + ".rope_cos", np.cos(angles).astype(np.float32))
            sin = g.weight(base + ".rope_sin", (np.sin(angles) * sign).astype(np.float32))
            return cos, sin
        # Dynamic board: build row/column indices of every token from the input's H and W.
        h = g.op("Squeeze", [g.slice(self.hw, 0, 1, 0, "rope_h1")], "rope_h")
        w = g.op("Squeeze", [g.slice(self.hw, 1, 2, 0, "rope_w1")], "rope_w")
        zero, one = g.weight("rope_zero", np.array(0, np.int64)), g.weight("rope_one", np.array(1, np.int64))
        row_ids = g.op("Cast", [g.op("Range", [zero, h, one], "rope_rows_i")], "rope_rows", to=TensorProto.FLOAT)
        col_ids = g.op("Cast", [g.op("Range", [zero, w, one], "rope_cols_i")], "rope_cols", to=TensorProto.FLOAT)
        rows3 = g.op("Unsqueeze", [row_ids, g.const_i([1, 2])], "rope_r3")  # H 1 1
        cols3 = g.op("Unsqueeze", [col_ids, g.const_i([0, 2])], "rope_c3")  # 1 W 1
        row_ang = g.op("Mul", [rows3, g.weight(base + ".fy", fy.astype(np.float32))], base + ".ang_r")
        col_ang = g.op("Mul", [cols3, g.weight(base + ".fx", fx.astype(np.float32))], base + ".ang_c")
        grid = g.op("Add", [row_ang, col_ang], base + ".ang")  # H W channels
        angles = g.op("Reshape", [grid, g.const_i([-1, fx.size])], base + ".angles")
        cos = g.op("Cos", [angles], base + ".rope_cos")
        raw_sin = g.op("Sin", [angles], base + ".rope_sin_raw")
        sin = g.op("Mul", [raw_sin, g.weight(base + ".sign", sign.astype(np.float32))], base + ".rope_sin")
        return cos, sin

    # -- whole model ----------------------------------------------------------------------------

    def trunk(self) -> str:
        t = self.desc.trunk
        g = self.g
        start = self.conv(INPUT_SPATIAL, t.initial_conv)
        global_bias = self.as_channel_bias(self.matmul(INPUT_GLOBAL, t.initial_matmul), "global_bias")
        x = _Value(g.op("Add", [start, global_bias], "trunk_start"), NCHW, t.channels)
        for block in t.blocks:
            x = self.block(x, block)
        return g.output(self.norm_act_mask(self.to_nchw(x).name, t.tip_norm, t.tip_act), TRUNK)

    def policy(self, trunk: str) -> str:
        g, p = self.g, self.desc.policy_head
        p1 = self.conv(trunk, p.p1_conv)
        g1 = self.norm_act_mask(self.conv(trunk, p.g1_conv), p.g1_norm, p.g1_act)
        pooled = self.gpool(g1, p.name + ".gpool")
        gbias = self.as_channel_bias(self.matmul(pooled, p.gpool_to_bias), p.name + ".gbias")
        biased = g.op("Add", [p1, gbias], p.name + ".p1biased")
        p2 = self.conv(self.norm_act_mask(biased, p.p1_norm, p.p1_act), p.p2_conv)
        board = g.op("Reshape", [p2, g.const_i([0, p.num_policy_channels, -1])], p.name + ".board")
        passed = self.matmul(pooled, p.pass_mul)
        if p.pass_mul2 is not None:
            assert p.pass_bias is not None and p.pass_act is not None
            passed = self.matmul(self.activation(self.bias(passed, p.pass_bias), p.pass_act), p.pass_mul2)
        pass3 = g.op("Unsqueeze", [passed, g.const_i([2])], p.name + ".pass")
        return g.output(g.op("Concat", [board, pass3], p.name + ".logits", axis=2), "policy")

    def value(self, trunk: str) -> tuple[str, str, str]:
        g, v = self.g, self.desc.value_head
        v1 = self.norm_act_mask(self.conv(trunk, v.v1_conv), v.v1_norm, v.v1_act)
        pooled = self.value_gpool(v1, v.name + ".gpool")
        v2 = self.activation(self.bias(self.matmul(pooled, v.v2_mul), v.v2_bias), v.v2_act)
        value = g.output(self.bias(self.matmul(v2, v.v3_mul), v.v3_bias), "value")
        misc = g.output(self.bias(self.matmul(v2, v.sv3_mul), v.sv3_bias), "miscvalue")
        ownership = g.output(self.conv(v1, v.ownership_conv), "ownership")
        return value, misc, ownership

    def build(self) -> onnx.ModelProto:
        if self.desc.meta_encoder_version > 0:
            raise UnsupportedModelError(
                f"model {self.desc.name!r} needs SGF metadata inputs (human-style net); miai does not support them"
            )
        trunk = self.trunk()
        policy = self.policy(trunk)
        value, misc, ownership = self.value(trunk)
        assert (policy, value, misc, ownership) == OUTPUT_NAMES
        return self._model()

    def _model(self) -> onnx.ModelProto:
        d = self.desc
        h: int | str = self.board_size if self.board_size is not None else "H"
        w: int | str = self.board_size if self.board_size is not None else "W"
        area: int | str = self.board_size * self.board_size + 1 if self.board_size is not None else "HW1"
        inputs = [
            helper.make_tensor_value_info(INPUT_SPATIAL, TensorProto.FLOAT, ["N", d.num_input_channels, h, w]),
            helper.make_tensor_value_info(INPUT_GLOBAL, TensorProto.FLOAT, ["N", d.num_input_global_channels]),
        ]
        outputs = [
            helper.make_tensor_value_info("policy", TensorProto.FLOAT, ["N", d.num_policy_channels, area]),
            helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", d.num_value_channels]),
            helper.make_tensor_value_info("miscvalue", TensorProto.FLOAT, ["N", d.num_misc_value_channels]),
            helper.make_tensor_value_info("ownership", TensorProto.FLOAT, ["N", 1, h, w]),
        ]
        graph = helper.make_graph(self.g.nodes, "miai_katago", inputs, outputs, self.g.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="miai")
        model.ir_version = 8  # readable by onnxruntime >= 1.14
        helper.set_model_props(model, _metadata(d, self.board_size))
        return model


def _rope_frequencies(rope: Rope | None, kv_heads: int, q_head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(omega_x, omega_y), each [kv_heads, q_head_dim // 2], in float64.

    Fixed RoPE: the first half of the pairs rotate with the row, the second half with the
    column, at frequencies theta^(-2i/(dq/2)) for i < dq/4. Learnable RoPE: as stored.
    """
    pairs = q_head_dim // 2
    if rope is None:
        zero = np.zeros((kv_heads, pairs))
        return zero, zero
    if rope.learnable:
        assert rope.freqs is not None
        freqs = rope.freqs.astype(np.float64)
        return freqs[:, :, 0], freqs[:, :, 1]
    quarter = q_head_dim // 4
    base = 1.0 / (rope.theta ** (np.arange(0, pairs, 2, dtype=np.float64) / pairs))
    assert base.size == quarter
    omega_y = np.concatenate([base, np.zeros(quarter)])
    omega_x = np.concatenate([np.zeros(quarter), base])
    return np.tile(omega_x, (kv_heads, 1)), np.tile(omega_y, (kv_heads, 1))


def _metadata(desc: ModelDesc, board_size: int | None) -> dict[str, str]:
    pp = desc.post_process
    return {
        "model_name": desc.name,
        "model_version": str(desc.version),
        "num_input_channels": str(desc.num_input_channels),
        "num_input_global_channels": str(desc.num_input_global_channels),
        "num_policy_channels": str(desc.num_policy_channels),
        "num_misc_value_channels": str(desc.num_misc_value_channels),
        "board_size": "dynamic" if board_size is None else str(board_size),
        "td_score_multiplier": repr(pp.td_score),
        "score_mean_multiplier": repr(pp.score_mean),
        "score_stdev_multiplier": repr(pp.score_stdev),
        "lead_multiplier": repr(pp.lead),
        "variance_time_multiplier": repr(pp.variance_time),
        "shortterm_value_error_multiplier": repr(pp.shortterm_value_error),
        "shortterm_score_error_multiplier": repr(pp.shortterm_score_error),
        "miai_converter_version": CONVERTER_VERSION,
    }


def build_onnx(desc: ModelDesc, board_size: int | None = None) -> onnx.ModelProto:
    """Builds the ONNX model for ``desc``; ``board_size`` None makes H and W dynamic.

    Raises:
        UnsupportedModelError: the model needs something miai does not implement.
        ValueError: board_size out of range.
    """
    if board_size is not None and not 2 <= board_size <= 25:
        raise ValueError(f"board size must be 2..25 or None (dynamic), got {board_size}")
    return _Builder(desc, board_size).build()
