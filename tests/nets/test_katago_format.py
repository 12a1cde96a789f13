"""Reading KataGo model files: structure of real nets, both float encodings, clear errors."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from miai.nets.katago import (
    AttentionBlock,
    FFNBlock,
    GPoolBlock,
    ModelFormatError,
    NestedBottleneckBlock,
    OrdinaryBlock,
    RMSNorm,
    UnsupportedModelError,
    load_model,
    parse_model_bytes,
)

from tests.outside import needs_shared, require_shared

from .katago_reference import NETS_DIR
from .synthetic_models import FFN, GPool, Attn, Nested, Spec, write_model

B6 = NETS_DIR / "g170-b6c96-s175395328-d26788732.bin.gz"
T7A = NETS_DIR / "b7c96h3tfrs-test5-cnorm.bin.gz"
T7B = NETS_DIR / "b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz"

needs_nets = needs_shared(f"nets/{B6.name}", f"nets/{T7A.name}", f"nets/{T7B.name}")


@pytest.fixture(scope="module")
def b6_bytes() -> bytes:
    return gzip.decompress(require_shared(f"nets/{B6.name}").read_bytes())


@needs_nets
def test_b6_resnet_structure() -> None:
    desc = load_model(B6)
    assert (desc.name, desc.version) == ("g170-b6c96-s175395328-d26788732", 8)
    assert (desc.num_input_channels, desc.num_input_global_channels) == (22, 19)
    kinds = [type(b) for b in desc.trunk.blocks]
    assert kinds == [OrdinaryBlock, OrdinaryBlock, GPoolBlock, OrdinaryBlock, GPoolBlock, OrdinaryBlock]
    assert desc.trunk.channels == 96
    assert desc.num_policy_channels == 1  # v8: no optimistic policy yet
    assert desc.num_misc_value_channels == 4
    # Version 8 has no post-process multipliers in the header: the defaults apply.
    assert (desc.post_process.score_mean, desc.post_process.variance_time) == (20.0, 40.0)
    # Activations are implicit (relu) before version 11.
    assert {b.pre_act.kind for b in desc.trunk.blocks} == {"relu"}


@needs_nets
def test_transformer_structures() -> None:
    a, b = load_model(T7A), load_model(T7B)
    for desc in (a, b):
        assert desc.version == 17
        assert [type(x) for x in desc.trunk.blocks] == [AttentionBlock, FFNBlock] * 7
        assert desc.num_policy_channels == 2
        assert desc.post_process.shortterm_score_error == 150.0
    attn_a, attn_b = a.trunk.blocks[0], b.trunk.blocks[0]
    assert isinstance(attn_a, AttentionBlock) and isinstance(attn_b, AttentionBlock)
    assert attn_a.rope is not None and not attn_a.rope.learnable and attn_a.rope.theta == 100.0
    assert (attn_b.heads, attn_b.kv_heads, attn_b.q_head_dim, attn_b.v_head_dim) == (6, 3, 32, 16)
    assert attn_b.rope is not None and attn_b.rope.learnable
    assert attn_b.rope.freqs is not None and attn_b.rope.freqs.shape == (3, 16, 2)
    assert isinstance(a.trunk.tip_norm, RMSNorm) and not a.trunk.tip_norm.spatial
    assert b.trunk.tip_act.kind == "relu" and a.trunk.tip_act.kind == "silu"


def test_conv_weights_are_reordered_to_out_in_y_x(b6_bytes: bytes) -> None:
    desc = parse_model_bytes(b6_bytes, binary_floats=True)
    conv = desc.trunk.initial_conv
    # The file stores y, x, in, out: the first floats after the initial conv's @BIN@ are
    # w[y=0, x=0, in=0, out=0..]. Check them against the reordered array.
    start = b6_bytes.index(b"@BIN@") + 5
    first = np.frombuffer(b6_bytes, "<f4", count=conv.out_channels, offset=start)
    np.testing.assert_array_equal(conv.weights[:, 0, 0, 0], first)
    assert conv.weights.shape == (conv.out_channels, 22, conv.kernel_y, conv.kernel_x)


@pytest.mark.parametrize(
    "spec",
    [
        Spec(version=8),
        Spec(version=12, act="mish", blocks=(Nested(),)),
        Spec(version=15, act="silu", blocks=(Nested(inner=(Attn(), FFN(swiglu=False))),), tip=("rms", True, 0)),
        Spec(
            version=17,
            act="silu",
            blocks=(Attn(rope="fixed", kv_heads=2), FFN()),
            tip=("rms", False, 0),
            policy_channels=4,
        ),
    ],
    ids=["v8", "v12-nested", "v15-nested-transformer", "v17"],
)
def test_text_and_binary_encodings_read_the_same(spec: Spec) -> None:
    binary = parse_model_bytes(write_model(spec, binary=True), binary_floats=True)
    text = parse_model_bytes(write_model(spec, binary=False), binary_floats=False)
    assert binary.version == text.version == spec.version
    np.testing.assert_array_equal(binary.trunk.initial_conv.weights, text.trunk.initial_conv.weights)
    np.testing.assert_array_equal(binary.value_head.ownership_conv.weights, text.value_head.ownership_conv.weights)
    assert len(binary.trunk.blocks) == len(spec.blocks)


def test_nested_block_with_gpool_inner_block() -> None:
    desc = parse_model_bytes(write_model(Spec(version=14, act="mish", blocks=(Nested(),))), binary_floats=True)
    nested = desc.trunk.blocks[0]
    assert isinstance(nested, NestedBottleneckBlock)
    assert [type(b) for b in nested.blocks] == [OrdinaryBlock, GPoolBlock]
    assert nested.pre_conv.out_channels == 8 and nested.post_conv.out_channels == 12


def test_file_suffixes(tmp_path: Path, b6_bytes: bytes) -> None:
    raw = tmp_path / "net.bin"
    raw.write_bytes(b6_bytes)
    assert load_model(raw).name == "g170-b6c96-s175395328-d26788732"
    text = tmp_path / "small.txt.gz"
    text.write_bytes(gzip.compress(write_model(Spec(version=10), binary=False)))
    assert load_model(text).version == 10
    bare = tmp_path / "small.gz"  # ambiguous: binary is tried first, then text
    bare.write_bytes(gzip.compress(write_model(Spec(version=10), binary=False)))
    assert load_model(bare).version == 10
    other = tmp_path / "net.onnx"
    other.write_bytes(b"not a katago model")
    with pytest.raises(ModelFormatError, match="file name ends in"):
        load_model(other)


@pytest.mark.parametrize("fraction", [0.001, 0.3, 0.77, 0.999])
def test_truncated_stream_names_layer_and_offset(tmp_path: Path, b6_bytes: bytes, fraction: float) -> None:
    path = tmp_path / "cut.bin"
    path.write_bytes(b6_bytes[: int(len(b6_bytes) * fraction)])
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    message = str(info.value)
    assert "truncated" in message
    assert "byte offset" in message
    assert "in " in message  # names the layer (or header) being read


@needs_nets
def test_truncated_gzip_file(tmp_path: Path) -> None:
    data = B6.read_bytes()
    path = tmp_path / "cut.bin.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match="gzip"):
        load_model(path)


def test_corrupt_binary_marker_names_the_layer(b6_bytes: bytes) -> None:
    # Break the marker of the second float array: the weights of the initial matmul.
    first = b6_bytes.index(b"@BIN@")
    second = b6_bytes.index(b"@BIN@", first + 5)
    broken = b6_bytes[:second] + b"@BIX@" + b6_bytes[second + 5 :]
    with pytest.raises(ModelFormatError) as info:
        parse_model_bytes(broken, binary_floats=True)
    assert "'@BIN@'" in str(info.value)
    assert "matmul layer 'ginputw'" in str(info.value)
    assert f"offset {second}" in str(info.value)


def test_nan_weight_is_rejected(b6_bytes: bytes) -> None:
    first = b6_bytes.index(b"@BIN@") + 5
    broken = b6_bytes[:first] + np.array([np.nan], "<f4").tobytes() + b6_bytes[first + 4 :]
    with pytest.raises(ModelFormatError, match="NaN"):
        parse_model_bytes(broken, binary_floats=True)


def test_unknown_block_kind() -> None:
    data = write_model(Spec(version=8)).replace(b"gpool_block", b"weird_block", 1)
    with pytest.raises(ModelFormatError, match="unknown block kind 'weird_block'"):
        parse_model_bytes(data, binary_floats=True)


def test_channel_mismatch_is_reported() -> None:
    # Declare the trunk one channel wider than the initial convolution produces.
    data = write_model(Spec(version=8, channels=12)).replace(b"trunk 2 12", b"trunk 2 13", 1)
    with pytest.raises(ModelFormatError, match="expected 22->13"):
        parse_model_bytes(data, binary_floats=True)


@pytest.mark.parametrize("version", [7, 18])
def test_unsupported_versions(version: int) -> None:
    data = write_model(Spec(version=8)).replace(b"\n8\n22\n", f"\n{version}\n22\n".encode(), 1)
    with pytest.raises(UnsupportedModelError, match=f"version {version}"):
        parse_model_bytes(data, binary_floats=True)


def test_trailing_garbage_is_reported() -> None:
    with pytest.raises(ModelFormatError, match="unexpected bytes after the value head"):
        parse_model_bytes(write_model(Spec(version=8)) + b"extra tokens", binary_floats=True)


def test_binary_file_read_as_text_fails_clearly(b6_bytes: bytes) -> None:
    with pytest.raises(ModelFormatError, match="expected a number"):
        parse_model_bytes(b6_bytes, binary_floats=False)


def test_progress_reaches_one(b6_bytes: bytes) -> None:
    seen: list[float] = []
    parse_model_bytes(b6_bytes, binary_floats=True, progress=seen.append)
    assert seen[-1] == 1.0
    assert seen == sorted(seen) and len(seen) > 10


def test_truncated_text_model() -> None:
    text = write_model(Spec(version=10), binary=False)
    cut = text[: len(text) // 2]
    with pytest.raises(ModelFormatError, match="truncated"):
        parse_model_bytes(cut, binary_floats=False)


def test_text_model_with_a_bad_number_names_it() -> None:
    text = write_model(Spec(version=10), binary=False)
    # Corrupt one weight of the initial convolution (its line starts after the conv header).
    header = b"model.conv_spatial 5 5 22 12 1 1\n"
    at = text.index(header) + len(header)
    broken = text[:at] + b"0.5x " + text[at:]
    expected = r"expected a number in weights of conv 'model.conv_spatial', found '0.5x'"
    with pytest.raises(ModelFormatError, match=expected):
        parse_model_bytes(broken, binary_floats=False)


@pytest.mark.parametrize(
    ("version", "channels", "ok"), [(8, 1, True), (8, 2, False), (14, 2, True), (16, 4, True), (17, 3, False)]
)
def test_policy_channel_counts_per_version(version: int, channels: int, ok: bool) -> None:
    data = write_model(Spec(version=version, policy_channels=channels))
    if ok:
        assert parse_model_bytes(data, binary_floats=True).num_policy_channels == channels
    else:
        with pytest.raises(ModelFormatError, match=f"{channels} policy channels is not valid"):
            parse_model_bytes(data, binary_floats=True)


def test_unknown_trunk_norm_kind_is_unsupported() -> None:
    data = write_model(Spec(version=17, blocks=(FFN(),), tip=("rms", True, 4)))
    data = data.replace(b"\n1 0 0 0 0 0\n", b"\n7 0 0 0 0 0\n", 1)
    with pytest.raises(UnsupportedModelError, match="trunk norm kind 7"):
        parse_model_bytes(data, binary_floats=True)


_SMALL = write_model(
    Spec(version=17, act="silu", blocks=(Nested(inner=(Attn(), FFN())), GPool()), tip=("rms", True, 0))
)
_SMALL_TEXT = write_model(Spec(version=12, act="mish", blocks=(GPool(),)), binary=False)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
@pytest.mark.slow
def test_damaged_files_raise_only_model_format_errors(data: st.DataObject) -> None:
    """Whatever the damage (cut, overwritten bytes, inserted bytes), the reader either still
    reads a model (damage inside weights) or raises ModelFormatError, never anything else."""
    binary = data.draw(st.booleans())
    stream = bytearray(_SMALL if binary else _SMALL_TEXT)
    kind = data.draw(st.sampled_from(["cut", "overwrite", "insert"]))
    at = data.draw(st.integers(0, len(stream) - 1))
    if kind == "cut":
        stream = stream[:at]
    elif kind == "overwrite":
        stream[at : at + 4] = data.draw(st.binary(min_size=1, max_size=4))
    else:
        stream[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    try:
        parse_model_bytes(bytes(stream), binary_floats=binary)
    except ModelFormatError:
        pass


def test_a_weight_beyond_float32_is_rejected_without_a_numpy_warning() -> None:
    text = write_model(Spec(version=10), binary=False)
    header = b"model.conv_spatial 5 5 22 12 1 1\n"
    at = text.index(header) + len(header)
    broken = text[:at] + b"1e39 " + text[at:]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning from numpy's cast would fail here
        with pytest.raises(ModelFormatError, match="NaN or infinite weight"):
            parse_model_bytes(broken, binary_floats=False)


@pytest.mark.parametrize("name", ["junk.txt", "junk.bin", "junk.bin.gz", "junk.txt.gz"])
def test_binary_garbage_is_named_not_echoed(tmp_path: Path, name: str) -> None:
    """Random bytes make a one-line message of plain text: no raw bytes, no escapes, no quoted gzip header."""
    raw = bytes(np.random.default_rng(5).integers(0, 256, 3000, dtype=np.uint8))
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name == "junk.txt.gz" else raw)
    with pytest.raises(ModelFormatError) as info:
        load_model(path)
    message = str(info.value)
    assert message.isprintable() and message.isascii() and "\\x" not in message and "b'" not in message
    expected = "not a gzip file" if name == "junk.bin.gz" else "binary data"
    assert expected in message and message.startswith(str(path))
