"""Reading KataGo model files (.bin.gz, .bin, .txt.gz, .txt) into a typed description.

A KataGo model file is a whitespace-separated token stream (usually gzipped). Names, integers and
flags are text tokens; float arrays are either text tokens (.txt) or the marker ``@BIN@`` followed
by little-endian float32 values (.bin). This module turns the stream into frozen dataclasses
(`ModelDesc` and its parts, defined in `miai.nets.katago_desc` and re-exported here) with numpy
weights, ready for `miai.nets.onnx_export`.

Supported: model versions 8 to 17, i.e. ordinary and global-pooling residual blocks, nested
bottleneck blocks (any depth, conv or transformer inner blocks), transformer attention and
feed-forward blocks, batch-norm and RMSNorm trunk tips, both head layouts. The facts come from
KataGo's model loader (cpp/neuralnet/desc.cpp in lightvector/KataGo); the code is miai's own.

Errors: anything wrong with the file raises `ModelFormatError`, naming what was expected, the layer
being read and the byte offset in the (decompressed) stream.
"""

from __future__ import annotations

import builtins
import gzip
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from miai.nets.katago_desc import (
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
    ModelFormatError,
    NestedBottleneckBlock,
    Norm,
    OrdinaryBlock,
    PolicyHead,
    PostProcess,
    RMSNorm,
    Rope,
    TokenNorm,
    Trunk,
    UnsupportedModelError,
    ValueHead,
)

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
    "load_model",
    "parse_model_bytes",
    "MIN_VERSION",
    "MAX_VERSION",
]

MIN_VERSION = 8
MAX_VERSION = 17

# Activation names as written in model files (version >= 11) mapped to miai's short names.
_ACTIVATIONS = {
    "ACTIVATION_IDENTITY": "identity",
    "ACTIVATION_RELU": "relu",
    "ACTIVATION_MISH": "mish",
    "ACTIVATION_SILU": "silu",
}

# Binary float arrays start within this many bytes of whitespace after the previous token.
_MAX_WHITESPACE_BEFORE_BIN = 100

ProgressCallback = Callable[[float], None]


# ---------------------------------------------------------------------------------------------
# Token stream
# ---------------------------------------------------------------------------------------------


_WHITESPACE = b" \t\n\r\v\f"


def _is_number(token: bytes) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _shown(token: str | bytes) -> str:
    """A token for an error message: quoted when it is printable text, else named as binary data (raw bytes in a
    message are noise and can upset a terminal)."""
    text = token.decode("ascii", errors="replace") if isinstance(token, bytes) else token
    if text.isprintable() and "\ufffd" not in text:
        return repr(text[:40])
    return "binary data (not a KataGo model, or a corrupt one)"


class _Reader:
    """Reads tokens and float arrays from the decompressed bytes, tracking the byte offset.

    Its ``int`` and ``float`` methods shadow the builtins in the class body: later annotations say ``builtins.int``.
    """

    def __init__(self, data: bytes, binary_floats: bool, progress: ProgressCallback | None) -> None:
        self.data = data
        self.pos = 0
        self.binary = binary_floats
        self.progress = progress
        self.context = "model header"
        self._last_report = 0

    def fail(self, message: str, offset: int | None = None) -> ModelFormatError:
        at = self.pos if offset is None else offset
        return ModelFormatError(f"{message} (in {self.context}, at byte offset {at} of the decompressed stream)")

    def token(self, what: str) -> str:
        data, n = self.data, len(self.data)
        pos = self.pos
        while pos < n and data[pos] in _WHITESPACE:
            pos += 1
        if pos >= n:
            self.pos = pos
            raise self.fail(f"unexpected end of file: expected {what}; the file is truncated")
        end = pos
        while end < n and data[end] not in _WHITESPACE:
            end += 1
        self.pos = end
        return data[pos:end].decode("ascii", errors="replace")

    def int(self, what: str, minimum: int | None = None) -> int:
        start = self.pos
        tok = self.token(what)
        try:
            value = int(tok)
        except ValueError:
            raise self.fail(f"expected an integer for {what}, found {_shown(tok)}", start) from None
        if minimum is not None and value < minimum:
            raise self.fail(f"{what} must be >= {minimum}, found {value}", start)
        return value

    def float(self, what: str) -> float:
        start = self.pos
        tok = self.token(what)
        try:
            return float(tok)
        except ValueError:
            raise self.fail(f"expected a number for {what}, found {_shown(tok)}", start) from None

    def flag(self, what: str) -> bool:
        value = self.int(what)
        if value not in (0, 1):
            raise self.fail(f"{what} must be 0 or 1, found {value}")
        return value == 1

    def expect(self, literal: str) -> None:
        start = self.pos
        tok = self.token(repr(literal))
        if tok != literal:
            raise self.fail(f"expected {literal!r}, found {_shown(tok)}", start)

    def floats(self, count: builtins.int, what: str) -> np.ndarray:
        values = self._binary_floats(count, what) if self.binary else self._text_floats(count, what)
        if not np.all(np.isfinite(values)):
            raise self.fail(f"{what}: NaN or infinite weight")
        self._report()
        return values

    def _binary_floats(self, count: builtins.int, what: str) -> np.ndarray:
        data, pos = self.data, self.pos
        limit = min(len(data), pos + _MAX_WHITESPACE_BEFORE_BIN)
        while pos < limit and data[pos] in _WHITESPACE:
            pos += 1
        if data[pos : pos + 5] != b"@BIN@":
            if pos >= len(data):
                raise self.fail(
                    f"unexpected end of file: expected {count} floats for {what}; the file is truncated", pos
                )
            raise self.fail(
                f"expected '@BIN@' before {count} binary floats for {what}, found {_shown(data[pos:pos + 12])} "
                "(a .txt model read as .bin, or a corrupt file)",
                pos,
            )
        start = pos + 5
        end = start + 4 * count
        if end > len(data):
            raise self.fail(
                f"unexpected end of file: {what} needs {count} floats ({4 * count} bytes) but only "
                f"{len(data) - start} bytes remain; the file is truncated",
                start,
            )
        self.pos = end
        return np.frombuffer(data, dtype="<f4", count=count, offset=start).astype(np.float32)

    def _text_floats(self, count: builtins.int, what: str) -> np.ndarray:
        # Split a window of the stream in C rather than scanning tokens one by one in Python;
        # grow the window until it holds all ``count`` tokens (or the stream ends).
        data, start = self.data, self.pos
        window = 24 * count + 64
        while True:
            chunk = data[start : start + window]
            parts = chunk.split(maxsplit=count)
            if len(parts) > count or start + window >= len(data):
                break
            window *= 2
        if len(parts) < count:
            self.pos = len(data)
            raise self.fail(
                f"unexpected end of file: {what} needs {count} numbers, found {len(parts)}; the file is truncated"
            )
        self.pos = start + (len(chunk) - len(parts[count]) if len(parts) > count else len(chunk))
        try:
            with np.errstate(over="ignore"):  # a weight beyond float32 becomes inf, which floats() reports
                return np.array(parts[:count]).astype(np.float64).astype(np.float32)
        except ValueError:
            bad = next(p for p in parts[:count] if not _is_number(p))
            raise self.fail(f"expected a number in {what}, found {_shown(bad)}", start) from None

    def _report(self) -> None:
        # Reporting every float array would be thousands of callbacks; one per ~1% is plenty.
        if self.progress is None:
            return
        step = max(1, len(self.data) // 100)
        if self.pos - self._last_report >= step:
            self._last_report = self.pos
            self.progress(self.pos / max(1, len(self.data)))


# ---------------------------------------------------------------------------------------------
# Layer parsers
# ---------------------------------------------------------------------------------------------


def _conv(r: _Reader) -> Conv:
    name = r.token("conv layer name")
    r.context = f"conv layer {name!r}"
    ky = r.int("kernel y size", 1)
    kx = r.int("kernel x size", 1)
    cin = r.int("input channels", 1)
    cout = r.int("output channels", 1)
    dy = r.int("dilation y", 1)
    dx = r.int("dilation x", 1)
    if ky % 2 != 1 or kx % 2 != 1:
        raise r.fail(f"convolution kernel sizes must be odd, found {ky}x{kx}")
    flat = r.floats(ky * kx * cin * cout, f"weights of conv {name!r}")
    # File order is y, x, in, out; ONNX wants out, in, y, x.
    weights = np.ascontiguousarray(flat.reshape(ky, kx, cin, cout).transpose(3, 2, 0, 1))
    return Conv(name, cin, cout, ky, kx, dy, dx, weights)


def _batch_norm(r: _Reader) -> BatchNorm:
    name = r.token("norm layer name")
    r.context = f"norm layer {name!r}"
    channels = r.int("channel count", 1)
    eps = r.float("epsilon")
    if not eps > 0:
        raise r.fail(f"epsilon must be positive, found {eps}")
    has_scale = r.flag("has-scale flag")
    has_bias = r.flag("has-bias flag")
    mean = r.floats(channels, f"mean of {name!r}")
    var = r.floats(channels, f"variance of {name!r}")
    scale = r.floats(channels, f"scale of {name!r}") if has_scale else np.ones(channels, np.float32)
    bias = r.floats(channels, f"bias of {name!r}") if has_bias else np.zeros(channels, np.float32)
    return BatchNorm(name, channels, eps, mean, var, scale, bias)


def _activation(r: _Reader, version: int) -> Activation:
    name = r.token("activation layer name")
    r.context = f"activation layer {name!r}"
    if version < 11:
        return Activation(name, "relu")
    start = r.pos
    kind = r.token("activation kind")
    if kind not in _ACTIVATIONS:
        raise r.fail(f"unknown activation {kind[:40]!r}", start)
    return Activation(name, _ACTIVATIONS[kind])


def _matmul(r: _Reader) -> MatMul:
    name = r.token("matmul layer name")
    r.context = f"matmul layer {name!r}"
    cin = r.int("input channels", 1)
    cout = r.int("output channels", 1)
    weights = r.floats(cin * cout, f"weights of {name!r}").reshape(cin, cout)
    return MatMul(name, cin, cout, weights)


def _matbias(r: _Reader) -> MatBias:
    name = r.token("bias layer name")
    r.context = f"bias layer {name!r}"
    channels = r.int("channel count", 1)
    return MatBias(name, channels, r.floats(channels, f"weights of {name!r}"))


def _rmsnorm(r: _Reader) -> RMSNorm:
    name = r.token("rmsnorm layer name")
    r.context = f"rmsnorm layer {name!r}"
    channels = r.int("channel count", 1)
    eps = r.float("epsilon")
    spatial = r.flag("spatial flag")
    group = r.int("channel group size", 0)
    weight = r.floats(channels, f"weight of {name!r}")
    bias = r.floats(channels, f"bias of {name!r}")
    if group > 0 and channels % group != 0:
        raise r.fail(f"channel group size {group} does not divide {channels} channels")
    return RMSNorm(name, channels, eps, spatial, group, weight, bias)


def _token_norm(r: _Reader) -> TokenNorm:
    name = r.token("transformer norm name")
    r.context = f"transformer norm {name!r}"
    channels = r.int("channel count", 1)
    eps = r.float("epsilon")
    return TokenNorm(name, channels, eps, r.floats(channels, f"weight of {name!r}"))


def _check(r: _Reader, ok: bool, message: str) -> None:
    if not ok:
        raise r.fail(message)


def _check_conv(r: _Reader, conv: Conv, cin: int, cout: int) -> None:
    _check(
        r,
        conv.in_channels == cin and conv.out_channels == cout,
        f"conv {conv.name!r} maps {conv.in_channels}->{conv.out_channels} channels, expected {cin}->{cout}",
    )


def _check_norm(r: _Reader, norm: BatchNorm | RMSNorm | TokenNorm, channels: int) -> None:
    _check(r, norm.channels == channels, f"norm {norm.name!r} has {norm.channels} channels, expected {channels}")


def _check_matmul(r: _Reader, mm: MatMul, cin: int, cout: int) -> None:
    _check(
        r,
        mm.in_channels == cin and mm.out_channels == cout,
        f"matmul {mm.name!r} maps {mm.in_channels}->{mm.out_channels}, expected {cin}->{cout}",
    )


# ---------------------------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------------------------


def _ordinary_block(r: _Reader, version: int, channels: int) -> OrdinaryBlock:
    name = r.token("block name")
    pre_norm = _batch_norm(r)
    pre_act = _activation(r, version)
    conv1 = _conv(r)
    mid_norm = _batch_norm(r)
    mid_act = _activation(r, version)
    conv2 = _conv(r)
    r.context = f"block {name!r}"
    _check_norm(r, pre_norm, channels)
    _check_conv(r, conv1, channels, mid_norm.channels)
    _check_conv(r, conv2, mid_norm.channels, channels)
    return OrdinaryBlock(name, pre_norm, pre_act, conv1, mid_norm, mid_act, conv2)


def _gpool_block(r: _Reader, version: int, channels: int) -> GPoolBlock:
    name = r.token("block name")
    pre_norm = _batch_norm(r)
    pre_act = _activation(r, version)
    regular = _conv(r)
    gpool = _conv(r)
    gpool_norm = _batch_norm(r)
    gpool_act = _activation(r, version)
    to_bias = _matmul(r)
    mid_norm = _batch_norm(r)
    mid_act = _activation(r, version)
    conv2 = _conv(r)
    r.context = f"block {name!r}"
    _check_norm(r, pre_norm, channels)
    _check_conv(r, regular, channels, mid_norm.channels)
    _check_conv(r, gpool, channels, gpool_norm.channels)
    _check_matmul(r, to_bias, 3 * gpool_norm.channels, mid_norm.channels)
    _check_conv(r, conv2, mid_norm.channels, channels)
    return GPoolBlock(name, pre_norm, pre_act, regular, gpool, gpool_norm, gpool_act, to_bias, mid_norm, mid_act, conv2)


def _nested_block(r: _Reader, version: int, channels: int) -> NestedBottleneckBlock:
    name = r.token("block name")
    r.context = f"block {name!r}"
    count = r.int("inner block count", 1)
    pre_norm = _batch_norm(r)
    pre_act = _activation(r, version)
    pre_conv = _conv(r)
    inner_channels = pre_conv.out_channels
    blocks = tuple(_block(r, version, inner_channels) for _ in range(count))
    post_norm = _batch_norm(r)
    post_act = _activation(r, version)
    post_conv = _conv(r)
    r.context = f"block {name!r}"
    _check_norm(r, pre_norm, channels)
    _check_conv(r, pre_conv, channels, inner_channels)
    _check_norm(r, post_norm, inner_channels)
    _check_conv(r, post_conv, inner_channels, channels)
    return NestedBottleneckBlock(name, pre_norm, pre_act, pre_conv, blocks, post_norm, post_act, post_conv)


def _rope(r: _Reader, heads: int, pairs: int) -> Rope:
    name = r.token("rope record name")
    r.context = f"rope record {name!r}"
    if name.endswith(".rope_freqs"):
        shape = (r.int("rope kv heads", 1), r.int("rope pairs", 1), r.int("rope axes", 1))
        _check(r, shape == (heads, pairs, 2), f"rope frequencies have shape {shape}, expected {(heads, pairs, 2)}")
        freqs = r.floats(heads * pairs * 2, f"frequencies of {name!r}").reshape(heads, pairs, 2)
        return Rope(learnable=True, freqs=freqs)
    if name.endswith(".rope_theta"):
        theta = r.float("rope theta")
        _check(r, theta > 0, f"rope theta must be positive, found {theta}")
        return Rope(learnable=False, theta=theta)
    raise r.fail(f"expected a '.rope_freqs' or '.rope_theta' record, found {name[:60]!r}")


def _attention_block(r: _Reader, version: int, channels: int) -> AttentionBlock:
    name = r.token("block name")
    r.context = f"block {name!r}"
    heads = r.int("attention heads", 1)
    kv_heads = r.int("attention kv heads", 1)
    q_dim = r.int("query head dim", 1)
    v_dim = r.int("value head dim", 1)
    use_rope = r.flag("rope flag")
    learnable = r.flag("learnable rope flag")
    _check(r, heads % kv_heads == 0, f"{heads} heads is not a multiple of {kv_heads} kv heads")
    norm = _token_norm(r)
    q = _matmul(r)
    k = _matmul(r)
    v = _matmul(r)
    out = _matmul(r)
    rope = _rope(r, kv_heads, q_dim // 2) if use_rope else None
    r.context = f"block {name!r}"
    _check(r, rope is None or rope.learnable == learnable, "rope record does not match the learnable-rope flag")
    _check(r, rope is None or q_dim % (2 if learnable else 4) == 0, f"query head dim {q_dim} unusable with rope")
    _check_norm(r, norm, channels)
    _check_matmul(r, q, channels, heads * q_dim)
    _check_matmul(r, k, channels, kv_heads * q_dim)
    _check_matmul(r, v, channels, kv_heads * v_dim)
    _check_matmul(r, out, heads * v_dim, channels)
    return AttentionBlock(name, heads, kv_heads, q_dim, v_dim, norm, q, k, v, out, rope)


def _ffn_block(r: _Reader, version: int, channels: int) -> FFNBlock:
    name = r.token("block name")
    r.context = f"block {name!r}"
    c_main = r.int("channels", 1)
    ffn = r.int("ffn channels", 1)
    swiglu = r.flag("swiglu flag")
    norm = _token_norm(r)
    linear1 = _matmul(r)
    gate = _matmul(r) if swiglu else None
    linear2 = _matmul(r)
    r.context = f"block {name!r}"
    _check(r, c_main == channels, f"ffn block declares {c_main} channels, expected {channels}")
    _check_norm(r, norm, channels)
    _check_matmul(r, linear1, channels, ffn)
    if gate is not None:
        _check_matmul(r, gate, channels, ffn)
    _check_matmul(r, linear2, ffn, channels)
    return FFNBlock(name, c_main, ffn, norm, linear1, gate, linear2)


_BLOCK_PARSERS: dict[str, Callable[[_Reader, int, int], Block]] = {
    "ordinary_block": _ordinary_block,
    "gpool_block": _gpool_block,
    "nested_bottleneck_block": _nested_block,
    "transformer_attention_block": _attention_block,
    "transformer_ffn_block": _ffn_block,
}


def _block(r: _Reader, version: int, channels: int) -> Block:
    start = r.pos
    kind = r.token("block kind")
    parser = _BLOCK_PARSERS.get(kind)
    if parser is None:
        raise r.fail(f"unknown block kind {kind[:40]!r} (expected one of {', '.join(_BLOCK_PARSERS)})", start)
    return parser(r, version, channels)


# ---------------------------------------------------------------------------------------------
# Trunk and heads
# ---------------------------------------------------------------------------------------------


def _skip_meta_encoder(r: _Reader, version: int) -> None:
    """Reads (and discards) an SGF-metadata encoder; miai refuses such nets later."""
    r.token("metadata encoder name")
    r.int("metadata input channels", 1)
    _matmul(r)
    _matbias(r)
    _activation(r, version)
    _matmul(r)
    _matbias(r)
    _activation(r, version)
    _matmul(r)


def _trunk(r: _Reader, version: int, num_inputs: int, num_globals: int, meta_version: int) -> Trunk:
    r.context = "trunk header"
    r.expect("trunk")
    num_blocks = r.int("trunk block count", 1)
    channels = r.int("trunk channels", 1)
    mid = r.int("trunk mid channels", 1)
    regular = r.int("trunk regular channels", 1)
    r.int("trunk dilated channels", 0)  # historical field, unused from version 8
    gpool = r.int("trunk gpool channels", 1)
    norm_kind = 0
    if version >= 15:
        norm_kind = r.int("trunk norm kind", 0)
        for i in range(5):
            r.int(f"trunk reserved field {i}")
    initial_conv = _conv(r)
    initial_matmul = _matmul(r)
    r.context = "trunk"
    _check_conv(r, initial_conv, num_inputs, channels)
    _check_matmul(r, initial_matmul, num_globals, channels)
    if meta_version > 0:
        _skip_meta_encoder(r, version)
    blocks = tuple(_block(r, version, channels) for _ in range(num_blocks))
    if norm_kind == 0:
        tip_norm: Norm = _batch_norm(r)
    elif norm_kind in (1, 2, 3):
        # 1 RMSNorm; KataGo's exporter also reserves 2 (spatial) and 3 (grouped spatial). The
        # record itself carries the spatial flag and group size, so all three read the same.
        tip_norm = _rmsnorm(r)
    else:
        raise UnsupportedModelError(f"trunk norm kind {norm_kind} is not supported (at byte offset {r.pos})")
    tip_act = _activation(r, version)
    r.context = "trunk tip"
    _check_norm(r, tip_norm, channels)
    return Trunk(
        num_blocks, channels, mid, regular, gpool, norm_kind, initial_conv, initial_matmul, blocks, tip_norm, tip_act
    )


def _policy_head(r: _Reader, version: int, channels: int) -> PolicyHead:
    name = r.token("policy head name")
    r.context = f"policy head {name!r}"
    declared = None
    if version >= 17:
        declared = r.int("policy channel count", 1)
        for i in range(3):
            r.int(f"policy head reserved field {i}")
    p1 = _conv(r)
    g1 = _conv(r)
    g1_norm = _batch_norm(r)
    g1_act = _activation(r, version)
    to_bias = _matmul(r)
    p1_norm = _batch_norm(r)
    p1_act = _activation(r, version)
    p2 = _conv(r)
    pass_mul = _matmul(r)
    pass_bias = pass_act = pass_mul2 = None
    if version >= 15:
        pass_bias = _matbias(r)
        pass_act = _activation(r, version)
        pass_mul2 = _matmul(r)
    r.context = f"policy head {name!r}"
    # Before version 17 the count is implied: 1 to v11, 2 (normal, optimistic) to v15, and v16
    # nets may add the two q-value channels; the final convolution tells which.
    num_policy = declared if declared is not None else p2.out_channels
    allowed = {2, 4} if version >= 16 else {2} if version >= 12 else {1}
    _check(r, num_policy in allowed, f"{num_policy} policy channels is not valid for model version {version}")
    _check_conv(r, p1, channels, p1_norm.channels)
    _check_conv(r, g1, channels, g1_norm.channels)
    _check_matmul(r, to_bias, 3 * g1_norm.channels, p1_norm.channels)
    _check_conv(r, p2, p1_norm.channels, num_policy)
    if pass_mul2 is None:
        _check_matmul(r, pass_mul, 3 * g1_norm.channels, num_policy)
    else:
        assert pass_bias is not None
        _check_matmul(r, pass_mul, 3 * g1_norm.channels, pass_bias.channels)
        _check_matmul(r, pass_mul2, pass_bias.channels, num_policy)
    pass_layers = (pass_mul, pass_bias, pass_act, pass_mul2)
    return PolicyHead(name, num_policy, p1, g1, g1_norm, g1_act, to_bias, p1_norm, p1_act, p2, *pass_layers)


def _value_head(r: _Reader, version: int, channels: int) -> ValueHead:
    name = r.token("value head name")
    r.context = f"value head {name!r}"
    if version >= 17:
        for i in range(3):
            r.int(f"value head reserved field {i}")
    v1 = _conv(r)
    v1_norm = _batch_norm(r)
    v1_act = _activation(r, version)
    v2 = _matmul(r)
    v2_bias = _matbias(r)
    v2_act = _activation(r, version)
    v3 = _matmul(r)
    v3_bias = _matbias(r)
    sv3 = _matmul(r)
    sv3_bias = _matbias(r)
    own = _conv(r)
    r.context = f"value head {name!r}"
    _check_conv(r, v1, channels, v1_norm.channels)
    _check_matmul(r, v2, 3 * v1_norm.channels, v2_bias.channels)
    _check_matmul(r, v3, v2_bias.channels, 3)
    _check(r, v3_bias.channels == 3, f"value bias has {v3_bias.channels} channels, expected 3")
    _check(r, sv3.in_channels == v2_bias.channels, "misc value matmul input does not match the value layer")
    _check(r, sv3.out_channels >= 4 and sv3_bias.channels == sv3.out_channels, "misc value outputs must be >= 4")
    _check_conv(r, own, v1_norm.channels, 1)
    return ValueHead(name, v1, v1_norm, v1_act, v2, v2_bias, v2_act, v3, v3_bias, sv3, sv3_bias, own)


def _model(r: _Reader) -> ModelDesc:
    name = r.token("model name")
    version = r.int("model version")
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise UnsupportedModelError(
            f"model {name!r} has version {version}; miai supports model versions {MIN_VERSION} to {MAX_VERSION}"
        )
    num_inputs = r.int("spatial input channel count", 1)
    num_globals = r.int("global input channel count", 1)
    post = PostProcess()
    if version >= 13:
        post = PostProcess(*(r.float(f"post-process multiplier {i}") for i in range(7)))
    meta_version = 0
    if version >= 15:
        meta_version = r.int("metadata encoder version", 0)
        for i in range(7):
            r.int(f"header reserved field {i}")
    trunk = _trunk(r, version, num_inputs, num_globals, meta_version)
    policy = _policy_head(r, version, trunk.channels)
    value = _value_head(r, version, trunk.channels)
    r.context = "end of model"
    rest = r.data[r.pos :].strip()
    if rest:
        raise r.fail(f"{len(rest)} unexpected bytes after the value head (corrupt file or unsupported format)")
    return ModelDesc(name, version, num_inputs, num_globals, post, meta_version, trunk, policy, value)


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def parse_model_bytes(data: bytes, *, binary_floats: bool, progress: ProgressCallback | None = None) -> ModelDesc:
    """Parses an uncompressed model token stream.

    Raises:
        ModelFormatError: the stream is truncated or malformed (the message names layer and offset).
        UnsupportedModelError: the model is well formed but uses something miai does not support.
    """
    reader = _Reader(data, binary_floats, progress)
    desc = _model(reader)
    if progress is not None:
        progress(1.0)
    return desc


def _decompress(raw: bytes, path: Path) -> bytes:
    try:
        return gzip.decompress(raw)
    except gzip.BadGzipFile as exc:  # its text quotes the file's first bytes
        message = f"{path}: not a gzip file (KataGo's .gz models are gzip-compressed); corrupt or not a model"
        raise ModelFormatError(message) from exc
    except (OSError, EOFError, zlib.error) as exc:
        message = f"{path}: cannot decompress the gzip stream ({exc}); the file is truncated or corrupt"
        raise ModelFormatError(message) from exc


def load_model(path: str | Path, progress: ProgressCallback | None = None) -> ModelDesc:
    """Reads a KataGo model file (.bin.gz, .bin, .txt.gz, .txt or bare .gz).

    ``progress`` is called with the fraction (0..1) of the stream parsed so far.

    Raises:
        FileNotFoundError: no such file.
        ModelFormatError: the file is truncated, corrupt, or not a KataGo model.
        UnsupportedModelError: a KataGo model using features miai does not implement.
    """
    path = Path(path)
    raw = path.read_bytes()
    lower = path.name.lower()
    if lower.endswith((".txt", ".bin")):
        data, binary_options = raw, [lower.endswith(".bin")]
    elif lower.endswith(".gz"):
        data = _decompress(raw, path)
        # A bare .gz may hold either float encoding; try binary first as KataGo does.
        if lower.endswith(".txt.gz"):
            binary_options = [False]
        elif lower.endswith(".bin.gz"):
            binary_options = [True]
        else:
            binary_options = [True, False]
    else:
        raise ModelFormatError(f"{path}: a KataGo model file name ends in .bin.gz, .txt.gz, .bin, .txt or .gz")
    errors: list[ModelFormatError] = []
    for binary in binary_options:
        try:
            return parse_model_bytes(data, binary_floats=binary, progress=progress)
        except UnsupportedModelError:
            raise
        except ModelFormatError as exc:
            errors.append(exc)
    raise ModelFormatError(f"{path}: " + "; ".join(str(e) for e in errors))
