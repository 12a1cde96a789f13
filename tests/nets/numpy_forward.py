"""A direct numpy forward pass of a parsed KataGo model, written from the model description in
KATAGO.md section 4 and KataGo's training code conventions, independently of the ONNX emitter.

Slow and simple on purpose (explicit loops over kernel offsets and heads); used on small random
nets to check the emitted graph layer kinds that no real test net exercises (grouped RMSNorm
tips, SiLU feed-forward, four policy channels, ...).
"""

from __future__ import annotations

import numpy as np

from miai.nets.katago import (
    Activation,
    AttentionBlock,
    BatchNorm,
    Conv,
    FFNBlock,
    GPoolBlock,
    MatMul,
    ModelDesc,
    NestedBottleneckBlock,
    OrdinaryBlock,
    RMSNorm,
)


def conv(x: np.ndarray, c: Conv) -> np.ndarray:
    n, _, h, w = x.shape
    ry, rx = c.dilation_y * (c.kernel_y // 2), c.dilation_x * (c.kernel_x // 2)
    padded = np.pad(x, ((0, 0), (0, 0), (ry, ry), (rx, rx)))
    out = np.zeros((n, c.out_channels, h, w))
    for ky in range(c.kernel_y):
        for kx in range(c.kernel_x):
            oy, ox = ky * c.dilation_y, kx * c.dilation_x
            patch = padded[:, :, oy : oy + h, ox : ox + w]
            out += np.einsum("nihw,oi->nohw", patch, c.weights[:, :, ky, kx])
    return out


def act(x: np.ndarray, a: Activation) -> np.ndarray:
    if a.kind == "relu":
        return np.maximum(x, 0)
    if a.kind == "mish":
        return x * np.tanh(np.logaddexp(0, x))
    if a.kind == "silu":
        return x / (1 + np.exp(-x))
    return x


def norm(x: np.ndarray, nm: BatchNorm | RMSNorm, mask: np.ndarray) -> np.ndarray:
    shape = (1, -1, 1, 1)
    if isinstance(nm, BatchNorm):
        normed = (x - nm.mean.reshape(shape)) / np.sqrt(nm.variance.reshape(shape) + nm.epsilon)
        return normed * nm.scale.reshape(shape) + nm.bias.reshape(shape)
    if not nm.spatial:
        out = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + nm.epsilon)
    else:
        n, c, h, w = x.shape
        group = nm.group_size or c
        xg = x.reshape(n, c // group, group, h, w)
        area = mask.sum(axis=(1, 2, 3)).reshape(n, 1, 1, 1, 1)
        mean_sq = (xg * xg * mask[:, None]).sum(axis=(2, 3, 4), keepdims=True) / (group * area + nm.epsilon)
        out = (xg / np.sqrt(mean_sq + nm.epsilon)).reshape(n, c, h, w)
    return out * nm.weight.reshape(shape) + nm.bias.reshape(shape)


def nam(x: np.ndarray, nm: BatchNorm | RMSNorm, a: Activation, mask: np.ndarray) -> np.ndarray:
    return act(norm(x, nm, mask), a) * mask


def gpool(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    area = mask.sum(axis=(1, 2, 3))[:, None]
    mean = x.sum(axis=(2, 3)) / area
    big = np.where(mask > 0, x, -np.inf).max(axis=(2, 3))
    return np.concatenate([mean, mean * (np.sqrt(area) - 14) / 10, big], axis=1)


def value_pool(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    area = mask.sum(axis=(1, 2, 3))[:, None]
    mean = x.sum(axis=(2, 3)) / area
    s = np.sqrt(area) - 14
    return np.concatenate([mean, mean * s / 10, mean * (s * s / 100 - 0.1)], axis=1)


def mm(x: np.ndarray, m: MatMul) -> np.ndarray:
    return x @ m.weights


def token_norm(t: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return t / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps) * weight


def rope_angles(b: AttentionBlock, h: int, w: int) -> np.ndarray:
    """[S, kv_heads, pairs] rotation angles of every token's channel pairs."""
    rows, cols = np.divmod(np.arange(h * w), w)
    pairs = b.q_head_dim // 2
    if b.rope.learnable:
        f = b.rope.freqs.astype(np.float64)  # kv, pairs, (x, y)
        return cols[:, None, None] * f[None, :, :, 0] + rows[:, None, None] * f[None, :, :, 1]
    quarter = b.q_head_dim // 4
    base = b.rope.theta ** -(np.arange(0, pairs, 2) / pairs)
    per_pair = np.concatenate([rows[:, None] * base[None], cols[:, None] * base[None]], axis=1)  # S, pairs
    assert per_pair.shape[1] == 2 * quarter
    return np.repeat(per_pair[:, None, :], b.kv_heads, axis=1)


def rotate(v: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """v [N, S, heads, d] rotated pairwise by angles [S, heads, d/2]."""
    x0, x1 = v[..., 0::2], v[..., 1::2]
    c, s = np.cos(angles)[None], np.sin(angles)[None]
    out = np.empty_like(v)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def attention(t: np.ndarray, b: AttentionBlock, key_ok: np.ndarray, h: int, w: int) -> np.ndarray:
    n, s, _ = t.shape
    xn = token_norm(t, b.norm.weight, b.norm.epsilon)
    q = mm(xn, b.q_proj).reshape(n, s, b.heads, b.q_head_dim)
    k = mm(xn, b.k_proj).reshape(n, s, b.kv_heads, b.q_head_dim)
    v = mm(xn, b.v_proj).reshape(n, s, b.kv_heads, b.v_head_dim)
    rep = b.heads // b.kv_heads
    if b.rope is not None:
        ang = rope_angles(b, h, w)
        k = rotate(k, ang)
        q = rotate(q, np.repeat(ang, rep, axis=1))
    out = np.zeros((n, s, b.heads, b.v_head_dim))
    for head in range(b.heads):
        kv = head // rep
        logits = np.einsum("nqd,nkd->nqk", q[:, :, head], k[:, :, kv]) / np.sqrt(b.q_head_dim)
        logits = np.where(key_ok[:, None, :], logits, -np.inf)
        weights = np.exp(logits - logits.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        out[:, :, head] = np.einsum("nqk,nkd->nqd", weights, v[:, :, kv])
    return mm(out.reshape(n, s, -1), b.out_proj)


def ffn(t: np.ndarray, b: FFNBlock) -> np.ndarray:
    xn = token_norm(t, b.norm.weight, b.norm.epsilon)
    a = mm(xn, b.linear1)
    hidden = a / (1 + np.exp(-a))
    if b.gate is not None:
        hidden = hidden * mm(xn, b.gate)
    return mm(hidden, b.linear2)


def block(x: np.ndarray, b, mask: np.ndarray) -> np.ndarray:
    """x + the block's residual, x in NCHW."""
    n, c, h, w = x.shape
    if isinstance(b, (AttentionBlock, FFNBlock)):
        tokens = x.reshape(n, c, -1).transpose(0, 2, 1)
        if isinstance(b, AttentionBlock):
            res = attention(tokens, b, mask.reshape(n, -1) > 0, h, w)
        else:
            res = ffn(tokens, b)
        return x + res.transpose(0, 2, 1).reshape(n, c, h, w)
    if isinstance(b, OrdinaryBlock):
        mid = conv(nam(x, b.pre_norm, b.pre_act, mask), b.conv1)
        return x + conv(nam(mid, b.mid_norm, b.mid_act, mask), b.conv2)
    if isinstance(b, GPoolBlock):
        pre = nam(x, b.pre_norm, b.pre_act, mask)
        pooled = gpool(nam(conv(pre, b.gpool_conv), b.gpool_norm, b.gpool_act, mask), mask)
        mid = conv(pre, b.regular_conv) + mm(pooled, b.gpool_to_bias)[:, :, None, None]
        return x + conv(nam(mid, b.mid_norm, b.mid_act, mask), b.conv2)
    if isinstance(b, NestedBottleneckBlock):
        inner = conv(nam(x, b.pre_norm, b.pre_act, mask), b.pre_conv)
        for sub in b.blocks:
            inner = block(inner, sub, mask)
        return x + conv(nam(inner, b.post_norm, b.post_act, mask), b.post_conv)
    raise TypeError(type(b))


def forward(desc: ModelDesc, spatial: np.ndarray, glob: np.ndarray) -> dict[str, np.ndarray]:
    """The four outputs of the ONNX interface, computed in float64."""
    x, g = spatial.astype(np.float64), glob.astype(np.float64)
    mask = x[:, 0:1]
    t = desc.trunk
    trunk = conv(x, t.initial_conv) + mm(g, t.initial_matmul)[:, :, None, None]
    for b in t.blocks:
        trunk = block(trunk, b, mask)
    trunk = nam(trunk, t.tip_norm, t.tip_act, mask)

    p = desc.policy_head
    g1 = nam(conv(trunk, p.g1_conv), p.g1_norm, p.g1_act, mask)
    pooled = gpool(g1, mask)
    p1 = conv(trunk, p.p1_conv) + mm(pooled, p.gpool_to_bias)[:, :, None, None]
    p2 = conv(nam(p1, p.p1_norm, p.p1_act, mask), p.p2_conv)
    passed = mm(pooled, p.pass_mul)
    if p.pass_mul2 is not None:
        passed = mm(act(passed + p.pass_bias.weights, p.pass_act), p.pass_mul2)
    n = x.shape[0]
    policy = np.concatenate([p2.reshape(n, p.num_policy_channels, -1), passed[:, :, None]], axis=2)

    v = desc.value_head
    v1 = nam(conv(trunk, v.v1_conv), v.v1_norm, v.v1_act, mask)
    v2 = act(mm(value_pool(v1, mask), v.v2_mul) + v.v2_bias.weights, v.v2_act)
    return {
        "policy": policy,
        "value": mm(v2, v.v3_mul) + v.v3_bias.weights,
        "miscvalue": mm(v2, v.sv3_mul) + v.sv3_bias.weights,
        "ownership": conv(v1, v.ownership_conv),
    }
