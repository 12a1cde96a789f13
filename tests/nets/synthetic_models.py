"""Writes small random KataGo model files of any supported layout, for converter tests.

The writer follows the model file format of KATAGO.md section 4 (the same token layout the
parser reads), in binary (``@BIN@``) or text float encoding. Weights are random but scaled so
activations stay O(1) through a few blocks, which keeps numeric comparisons meaningful.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

_ACT = {name: "ACTIVATION_" + name.upper() for name in ("identity", "relu", "mish", "silu")}


@dataclass(frozen=True)
class Attn:
    heads: int = 2
    kv_heads: int = 1
    q_dim: int = 8
    v_dim: int = 4
    rope: str = "learnable"  # "learnable", "fixed" or "none"


@dataclass(frozen=True)
class FFN:
    ffn: int = 24
    swiglu: bool = True


@dataclass(frozen=True)
class Ordinary:
    pass


@dataclass(frozen=True)
class GPool:
    pass


@dataclass(frozen=True)
class Nested:
    inner: tuple = (Ordinary(), GPool())
    mid: int = 8


@dataclass(frozen=True)
class Spec:
    """What to write. ``tip`` is "bn" or ("rms", spatial, group_size)."""

    version: int = 8
    channels: int = 12
    blocks: tuple = (Ordinary(), GPool())
    act: str = "relu"
    tip: object = "bn"
    policy_channels: int = 0  # 0: the version's default
    misc_channels: int = 4
    regular: int = 8
    gpool: int = 4
    seed: int = 0
    extra: dict = field(default_factory=dict)


class _Writer:
    def __init__(self, spec: Spec, binary: bool) -> None:
        self.spec = spec
        self.binary = binary
        self.parts: list[bytes] = []
        self.rng = np.random.default_rng(spec.seed)

    def tok(self, *values: object) -> None:
        self.parts.append((" ".join(str(v) for v in values) + "\n").encode())

    def floats(self, values: np.ndarray) -> None:
        flat = np.asarray(values, dtype=np.float32).reshape(-1)
        if self.binary:
            self.parts.append(b"@BIN@" + flat.astype("<f4").tobytes() + b"\n")
        else:
            self.parts.append((" ".join(repr(float(x)) for x in flat) + "\n").encode())

    def normal(self, scale: float, *shape: int) -> np.ndarray:
        return self.rng.normal(0.0, scale, size=shape).astype(np.float32)

    # layers ---------------------------------------------------------------------------------

    def conv(self, name: str, cin: int, cout: int, k: int = 3) -> None:
        self.tok(name, k, k, cin, cout, 1, 1)
        self.floats(self.normal(1.0 / np.sqrt(cin * k * k), k, k, cin, cout))

    def bn(self, name: str, c: int) -> None:
        self.tok(name, c, 1e-5, 1, 1)
        self.floats(self.normal(0.1, c))
        self.floats(self.rng.uniform(0.5, 1.5, c))
        self.floats(1.0 + self.normal(0.1, c))
        self.floats(self.normal(0.1, c))

    def act(self, name: str) -> None:
        if self.spec.version >= 11:
            self.tok(name, _ACT[self.spec.act])
        else:
            self.tok(name)

    def matmul(self, name: str, cin: int, cout: int) -> None:
        self.tok(name, cin, cout)
        self.floats(self.normal(1.0 / np.sqrt(cin), cin, cout))

    def matbias(self, name: str, c: int) -> None:
        self.tok(name, c)
        self.floats(self.normal(0.1, c))

    def token_norm(self, name: str, c: int) -> None:
        self.tok(name, c, 1e-6)
        self.floats(1.0 + self.normal(0.1, c))

    # blocks ---------------------------------------------------------------------------------

    def block(self, name: str, block: object, c: int) -> None:
        s = self.spec
        if isinstance(block, Ordinary):
            self.tok("ordinary_block")
            self.tok(name)
            self.bn(name + ".n1", c)
            self.act(name + ".a1")
            self.conv(name + ".c1", c, c)
            self.bn(name + ".n2", c)
            self.act(name + ".a2")
            self.conv(name + ".c2", c, c)
        elif isinstance(block, GPool):
            regular, gp = max(2, c * 2 // 3), max(1, c // 3)
            self.tok("gpool_block")
            self.tok(name)
            self.bn(name + ".n1", c)
            self.act(name + ".a1")
            self.conv(name + ".c1r", c, regular)
            self.conv(name + ".c1g", c, gp)
            self.bn(name + ".ng", gp)
            self.act(name + ".ag")
            self.matmul(name + ".lg", 3 * gp, regular)
            self.bn(name + ".n2", regular)
            self.act(name + ".a2")
            self.conv(name + ".c2", regular, c)
        elif isinstance(block, Nested):
            self.tok("nested_bottleneck_block")
            self.tok(name, len(block.inner))
            self.bn(name + ".np", c)
            self.act(name + ".ap")
            self.conv(name + ".cp", c, block.mid, 1)
            for i, inner in enumerate(block.inner):
                self.block(f"{name}.blockstack.{i}", inner, block.mid)
            self.bn(name + ".nq", block.mid)
            self.act(name + ".aq")
            self.conv(name + ".cq", block.mid, c, 1)
        elif isinstance(block, Attn):
            self.tok("transformer_attention_block")
            rope_flags = (int(block.rope != "none"), int(block.rope == "learnable"))
            self.tok(name, block.heads, block.kv_heads, block.q_dim, block.v_dim, *rope_flags)
            self.token_norm(name + ".norm1", c)
            self.matmul(name + ".q_proj", c, block.heads * block.q_dim)
            self.matmul(name + ".k_proj", c, block.kv_heads * block.q_dim)
            self.matmul(name + ".v_proj", c, block.kv_heads * block.v_dim)
            self.matmul(name + ".out_proj", block.heads * block.v_dim, c)
            if block.rope == "learnable":
                self.tok(name + ".rope_freqs", block.kv_heads, block.q_dim // 2, 2)
                self.floats(self.rng.uniform(-1.0, 1.0, (block.kv_heads, block.q_dim // 2, 2)))
            elif block.rope == "fixed":
                self.tok(name + ".rope_theta", 100.0)
        elif isinstance(block, FFN):
            self.tok("transformer_ffn_block")
            self.tok(name, c, block.ffn, int(block.swiglu))
            self.token_norm(name + ".norm", c)
            self.matmul(name + ".ffn_linear1", c, block.ffn)
            if block.swiglu:
                self.matmul(name + ".ffn_linear_gate", c, block.ffn)
            self.matmul(name + ".ffn_linear2", block.ffn, c)
        else:  # pragma: no cover
            raise TypeError(block)
        del s

    # whole model ----------------------------------------------------------------------------

    def model(self) -> bytes:
        s, c, v = self.spec, self.spec.channels, self.spec.version
        self.tok(f"synthetic-v{v}")
        self.tok(v)
        self.tok(22)
        self.tok(19)
        if v >= 13:
            for x in (20.0, 20.0, 20.0, 20.0, 40.0, 0.25, 30.0):
                self.tok(x)
        if v >= 15:
            self.tok(0)
            for _ in range(7):
                self.tok(0)
        self.tok("trunk", len(s.blocks), c, c, s.regular, s.gpool, s.gpool)
        if v >= 15:
            self.tok(0 if s.tip == "bn" else 1, 0, 0, 0, 0, 0)
        self.conv("model.conv_spatial", 22, c, 5)
        self.matmul("model.linear_global", 19, c)
        for i, block in enumerate(s.blocks):
            self.block(f"model.blocks.{i}", block, c)
        if s.tip == "bn":
            self.bn("model.norm_trunkfinal", c)
        else:
            _, spatial, group = s.tip
            self.tok("model.norm_trunkfinal", c, 1e-6, int(spatial), group)
            self.floats(1.0 + self.normal(0.1, c))
            self.floats(self.normal(0.1, c))
        self.act("model.act_trunkfinal")
        self.policy()
        self.value()
        return b"".join(self.parts)

    def policy(self) -> None:
        s, c, v = self.spec, self.spec.channels, self.spec.version
        p = s.policy_channels or (1 if v <= 11 else 2)
        self.tok("model.policy_head")
        if v >= 17:
            self.tok(p, 0, 0, 0)
        self.conv("model.policy_head.conv1p", c, 6, 1)
        self.conv("model.policy_head.conv1g", c, 4, 1)
        self.bn("model.policy_head.biasg", 4)
        self.act("model.policy_head.actg")
        self.matmul("model.policy_head.linear_g", 12, 6)
        self.bn("model.policy_head.bias2", 6)
        self.act("model.policy_head.act2")
        self.conv("model.policy_head.conv2p", 6, p, 1)
        if v >= 15:
            self.matmul("model.policy_head.linear_pass", 12, 6)
            self.matbias("model.policy_head.linear_pass_bias", 6)
            self.act("model.policy_head.act_pass")
            self.matmul("model.policy_head.linear_pass2", 6, p)
        else:
            self.matmul("model.policy_head.linear_pass", 12, p)

    def value(self) -> None:
        s, c, v = self.spec, self.spec.channels, self.spec.version
        self.tok("model.value_head")
        if v >= 17:
            self.tok(0, 0, 0)
        self.conv("model.value_head.conv1", c, 4, 1)
        self.bn("model.value_head.bias1", 4)
        self.act("model.value_head.act1")
        self.matmul("model.value_head.linear2", 12, 8)
        self.matbias("model.value_head.bias2", 8)
        self.act("model.value_head.act2")
        self.matmul("model.value_head.linear_valuehead", 8, 3)
        self.matbias("model.value_head.bias_valuehead", 3)
        self.matmul("model.value_head.linear_miscvaluehead", 8, s.misc_channels)
        self.matbias("model.value_head.bias_miscvaluehead", s.misc_channels)
        self.conv("model.value_head.conv_ownership", 4, 1, 1)


def write_model(spec: Spec, *, binary: bool = True) -> bytes:
    """The uncompressed token stream of a random model following ``spec``."""
    return _Writer(spec, binary).model()


def random_inputs(
    size: int, batch: int = 2, seed: int = 0, tensor_size: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Plausible random inputs: stones, sparse flags, mask plane 0 over a ``size`` board placed at
    the top-left of a ``tensor_size`` tensor (default: the board itself)."""
    rng = np.random.default_rng(seed)
    t = tensor_size or size
    spatial = np.zeros((batch, 22, t, t), np.float32)
    spatial[:, 0, :size, :size] = 1.0
    stones = rng.integers(0, 3, size=(batch, size, size))
    spatial[:, 1, :size, :size] = stones == 1
    spatial[:, 2, :size, :size] = stones == 2
    spatial[:, 3:18, :size, :size] = rng.random((batch, 15, size, size)) < 0.05
    glob = np.zeros((batch, 19), np.float32)
    glob[:, 5] = rng.normal(0, 0.4, batch)
    glob[:, 6:12] = rng.random((batch, 6)) < 0.3
    return spatial, glob
