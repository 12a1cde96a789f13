"""KataGo -> ONNX conversion: the file interface, and outputs equal to KataGo's own.

The reference check runs every *quiet* position of KataGo's reference outputs (tests/outside.py) (see
katago_reference.encode_quiet) through the converted nets and compares the decoded numbers with
KataGo 1.17.2's within the tolerances of issue 3: policy 0.002, win/loss 0.002, lead 0.05 points,
ownership 0.01.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from miai.nets.convert import convert_cached, convert_model
from miai.nets.katago import GPoolBlock, ModelFormatError, load_model, parse_model_bytes
from miai.nets.onnx_export import CONVERTER_VERSION, build_onnx
from tests.outside import needs_shared

from .katago_reference import NETS_DIR, REFERENCE_FILES, decode, encode_quiet, load_rows, policy_probs
from .numpy_forward import forward as numpy_forward
from .synthetic_models import FFN, Attn, GPool, Nested, Ordinary, Spec, random_inputs, write_model

SHARED_NETS = {name: NETS_DIR / net for name, net in REFERENCE_FILES.items() if (NETS_DIR / net).exists()}
B6 = NETS_DIR / "g170-b6c96-s175395328-d26788732.bin.gz"

needs_nets = needs_shared(f"nets/{B6.name}", "nets/" + REFERENCE_FILES["pub_t7a.jsonl"],
                          "nets/" + REFERENCE_FILES["pub_t7b.jsonl"])

POLICY_TOL, VALUE_TOL, LEAD_TOL, OWNERSHIP_TOL = 0.002, 0.002, 0.05, 0.01


def session(model: onnx.ModelProto | Path) -> ort.InferenceSession:
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def run(sess: ort.InferenceSession, spatial: np.ndarray, glob: np.ndarray) -> dict[str, np.ndarray]:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, {"input_spatial": spatial, "input_global": glob})))


def assert_matches_reference(row: dict, outputs: dict[str, np.ndarray], quiet, lead_multiplier: float) -> None:
    got = decode(outputs, quiet, lead_multiplier)
    probs = policy_probs(got["policy_logits"], row["policy"])
    expected = np.array([max(p, 0.0) for p in row["policy"]] + [row["policy_pass"]])
    where = row["id"]
    assert np.abs(probs - expected).max() < POLICY_TOL, where
    assert abs(got["white_win"] - row["white_win"]) < VALUE_TOL, where
    assert abs(got["white_loss"] - row["white_loss"]) < VALUE_TOL, where
    assert abs(got["white_lead"] - row["white_lead"]) < LEAD_TOL, where
    assert np.abs(got["white_ownership"] - np.array(row["white_ownership"])).max() < OWNERSHIP_TOL, where


def check_reference_file(file_name: str, net: Path, dynamic: bool) -> int:
    """Compares all quiet rows of one reference file; returns how many were compared."""
    desc = load_model(net)
    sessions: dict[int | None, ort.InferenceSession] = {}
    compared = 0
    for row in load_rows(file_name):
        quiet = encode_quiet(row)
        if quiet is None:
            continue
        key = None if dynamic else row["size"]
        if key not in sessions:
            sessions[key] = session(build_onnx(desc, key))
        raw = run(sessions[key], quiet.spatial[None], quiet.global_[None])
        assert_matches_reference(row, {k: v[0] for k, v in raw.items()}, quiet, desc.post_process.lead)
        compared += 1
    return compared


# -- the shared nets against KataGo ---------------------------------------------------------------


@needs_nets
@pytest.mark.parametrize("file_name", ["pub_b6.jsonl", "pub_t7a.jsonl", "pub_t7b.jsonl"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["fixed", "dynamic"])
@pytest.mark.slow
def test_shared_nets_match_katago(file_name: str, dynamic: bool) -> None:
    compared = check_reference_file(file_name, SHARED_NETS[file_name], dynamic)
    assert compared >= 2  # every reference file has a few quiet positions


# -- convert_model's contract -----------------------------------------------------------------------


@needs_nets
def test_convert_model_writes_the_agreed_interface(tmp_path: Path) -> None:
    stages: list[tuple[float, str]] = []
    with pytest.raises(FileNotFoundError, match="output directory .*out does not exist"):
        convert_model(B6, tmp_path / "out" / "b6.onnx")  # it creates no directories
    dst = tmp_path / "b6.onnx"
    result = convert_model(B6, dst, board_size=None, progress=lambda f, s: stages.append((f, s)))
    assert result.path == dst and dst.stat().st_size == result.bytes_written
    assert (result.model_version, result.num_policy_channels, result.board_size) == (8, 1, None)
    fractions = [f for f, _ in stages]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert [s for _, s in stages][-1] == "done"
    assert {"reading", "building", "writing"} <= {s for _, s in stages}

    model = onnx.load(str(dst))
    onnx.checker.check_model(model)
    meta = {p.key: p.value for p in model.metadata_props}
    assert meta["model_name"] == "g170-b6c96-s175395328-d26788732"
    assert meta["model_version"] == "8"
    assert meta["num_policy_channels"] == "1"
    assert meta["num_input_channels"] == "22" and meta["num_input_global_channels"] == "19"
    assert meta["score_mean_multiplier"] == "20.0" and meta["variance_time_multiplier"] == "40.0"
    assert meta["board_size"] == "dynamic" and meta["miai_converter_version"] == CONVERTER_VERSION

    sess = session(dst)
    assert [(i.name, i.shape) for i in sess.get_inputs()] == [
        ("input_spatial", ["N", 22, "H", "W"]),
        ("input_global", ["N", 19]),
    ]
    assert [o.name for o in sess.get_outputs()] == ["policy", "value", "miscvalue", "ownership"]
    spatial, glob = random_inputs(9, batch=3)
    out = run(sess, spatial, glob)
    assert out["policy"].shape == (3, 1, 82)
    assert out["value"].shape == (3, 3) and out["miscvalue"].shape == (3, 4)
    assert out["ownership"].shape == (3, 1, 9, 9)


@needs_nets
def test_fixed_size_model_declares_its_size(tmp_path: Path) -> None:
    convert_model(B6, tmp_path / "b6_13.onnx", board_size=13)
    sess = session(tmp_path / "b6_13.onnx")
    assert sess.get_inputs()[0].shape == ["N", 22, 13, 13]
    assert sess.get_outputs()[0].shape == ["N", 1, 170]
    with pytest.raises(ValueError, match="board size"):
        convert_model(B6, tmp_path / "bad.onnx", board_size=26)


def test_corrupt_source_raises_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "broken.bin"
    src.write_bytes(write_model(Spec(version=8))[:5000])
    with pytest.raises(ModelFormatError, match="truncated"):
        convert_model(src, tmp_path / "out.onnx")
    assert list(tmp_path.iterdir()) == [src]


def test_convert_cached_converts_once_per_content(tmp_path: Path) -> None:
    src = tmp_path / "small.bin"
    src.write_bytes(write_model(Spec(version=10)))
    first = convert_cached(src, cache_dir=tmp_path / "cache")
    stamp = first.stat().st_mtime_ns
    assert convert_cached(src, cache_dir=tmp_path / "cache") == first
    assert first.stat().st_mtime_ns == stamp
    assert convert_cached(src, board_size=9, cache_dir=tmp_path / "cache") != first
    src.write_bytes(write_model(Spec(version=10, seed=1)))
    assert convert_cached(src, cache_dir=tmp_path / "cache") != first


# -- properties of the emitted graph ---------------------------------------------------------------

SYNTHETIC = {
    "v8-resnet": Spec(version=8),
    "v12-nested-mish": Spec(version=12, act="mish", blocks=(Ordinary(), Nested())),
    "v15-nested-transformer": Spec(
        version=15,
        act="silu",
        blocks=(Nested(inner=(Attn(), FFN(), Attn(rope="fixed"), FFN(swiglu=False))),),
        tip=("rms", True, 0),
    ),
    "v17-transformer": Spec(
        version=17,
        act="silu",
        blocks=(Attn(heads=4, kv_heads=2), FFN(), Attn(rope="fixed", kv_heads=4, heads=4), FFN(swiglu=False), GPool()),
        tip=("rms", True, 4),
        policy_channels=4,
        misc_channels=6,
    ),
    "v17-rmsnorm-per-point": Spec(version=17, act="relu", blocks=(Attn(rope="none"), FFN()), tip=("rms", False, 0)),
}


def synthetic(spec: Spec):
    return parse_model_bytes(write_model(spec), binary_floats=True)


def with_negative_pooling(desc):
    """Shifts every pooled activation far below zero: a maximum that let off-board zeros in would
    then be 0 instead of about -100."""
    def shift(block):
        if isinstance(block, GPoolBlock):
            norm = dataclasses.replace(block.gpool_norm, bias=block.gpool_norm.bias - 100.0)
            return dataclasses.replace(block, gpool_norm=norm)
        return block

    trunk = dataclasses.replace(desc.trunk, blocks=tuple(shift(b) for b in desc.trunk.blocks))
    head = desc.policy_head
    policy = dataclasses.replace(head, g1_norm=dataclasses.replace(head.g1_norm, bias=head.g1_norm.bias - 100.0))
    return dataclasses.replace(desc, trunk=trunk, policy_head=policy)


SYNTHETIC_DESCS = {name: (lambda spec=spec: synthetic(spec)) for name, spec in SYNTHETIC.items()}
SYNTHETIC_DESCS["v11-negative-pooling"] = lambda: with_negative_pooling(
    synthetic(Spec(version=11, act="identity", blocks=(GPool(), Ordinary())))
)


def on_board(out: dict[str, np.ndarray], size: int, tensor: int) -> dict[str, np.ndarray]:
    """The outputs restricted to a size x size board at the top-left of a tensor x tensor input."""
    n, p, _ = out["policy"].shape
    board = out["policy"][:, :, : tensor * tensor].reshape(n, p, tensor, tensor)[:, :, :size, :size].reshape(n, p, -1)
    return {
        "policy": np.concatenate([board, out["policy"][:, :, -1:]], axis=2),
        "value": out["value"],
        "miscvalue": out["miscvalue"],
        "ownership": out["ownership"][:, :, :size, :size],
    }


@pytest.mark.parametrize("name", sorted(SYNTHETIC_DESCS))
def test_off_board_points_do_not_matter(name: str) -> None:
    """A 5x5 board inside a 9x9 tensor gives the same on-board outputs as a 5x5 tensor: masking
    after norms, pooling over on-board points only (mean and max), attention keys masked."""
    sess = session(build_onnx(SYNTHETIC_DESCS[name](), None))
    spatial, glob = random_inputs(5, batch=3, seed=7, tensor_size=9)
    padded = on_board(run(sess, spatial, glob), 5, 9)
    exact = run(sess, np.ascontiguousarray(spatial[:, :, :5, :5]), glob)
    for key in exact:
        np.testing.assert_allclose(padded[key], exact[key], rtol=1e-4, atol=2e-4, err_msg=f"{name}: {key}")


@needs_nets
@pytest.mark.parametrize("net", ["pub_b6.jsonl", "pub_t7b.jsonl"])
def test_off_board_points_do_not_matter_for_real_nets(net: str) -> None:
    sess = session(build_onnx(load_model(SHARED_NETS[net]), None))
    spatial, glob = random_inputs(7, batch=2, seed=3, tensor_size=11)
    padded = on_board(run(sess, spatial, glob), 7, 11)
    exact = run(sess, np.ascontiguousarray(spatial[:, :, :7, :7]), glob)
    for key in exact:
        np.testing.assert_allclose(padded[key], exact[key], rtol=1e-4, atol=5e-4, err_msg=key)


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_fixed_and_dynamic_graphs_agree(name: str) -> None:
    desc = synthetic(SYNTHETIC[name])
    spatial, glob = random_inputs(7, batch=2, seed=1)
    fixed = run(session(build_onnx(desc, 7)), spatial, glob)
    dynamic = run(session(build_onnx(desc, None)), spatial, glob)
    for key in fixed:
        np.testing.assert_allclose(fixed[key], dynamic[key], rtol=1e-4, atol=1e-4, err_msg=key)
    assert fixed["policy"].shape[1] == (SYNTHETIC[name].policy_channels or (1 if desc.version <= 11 else 2))


@pytest.mark.parametrize("name", ["v8-resnet", "v17-transformer"])
def test_batch_rows_are_independent(name: str) -> None:
    sess = session(build_onnx(synthetic(SYNTHETIC[name]), None))
    spatial, glob = random_inputs(6, batch=4, seed=2)
    together = run(sess, spatial, glob)
    for i in range(4):
        alone = run(sess, spatial[i : i + 1], glob[i : i + 1])
        for key in alone:
            np.testing.assert_allclose(together[key][i : i + 1], alone[key], rtol=1e-4, atol=1e-5)


def test_text_model_converts_to_the_same_graph_outputs(tmp_path: Path) -> None:
    spec = SYNTHETIC["v17-transformer"]
    (tmp_path / "m.bin").write_bytes(write_model(spec, binary=True))
    (tmp_path / "m.txt").write_bytes(write_model(spec, binary=False))
    convert_model(tmp_path / "m.bin", tmp_path / "bin.onnx", board_size=5)
    convert_model(tmp_path / "m.txt", tmp_path / "txt.onnx", board_size=5)
    spatial, glob = random_inputs(5)
    a, b = run(session(tmp_path / "bin.onnx"), spatial, glob), run(session(tmp_path / "txt.onnx"), spatial, glob)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


def test_human_metadata_nets_are_refused() -> None:
    desc = dataclasses.replace(synthetic(SYNTHETIC["v8-resnet"]), meta_encoder_version=1)
    with pytest.raises(ModelFormatError, match="metadata"):
        build_onnx(desc)


@pytest.mark.parametrize("name", sorted(SYNTHETIC_DESCS))
def test_graph_matches_a_direct_numpy_forward_pass(name: str) -> None:
    """The emitted graph computes what the model description says, layer by layer, including the
    layer kinds no real test net has (grouped RMSNorm tip, SiLU MLP, four policy channels)."""
    desc = SYNTHETIC_DESCS[name]()
    spatial, glob = random_inputs(5, batch=2, seed=11, tensor_size=7)
    got = run(session(build_onnx(desc, None)), spatial, glob)
    expected = numpy_forward(desc, spatial, glob)
    board = on_board(got, 5, 7)
    wanted = on_board(expected, 5, 7)
    for key in board:
        np.testing.assert_allclose(board[key], wanted[key], rtol=1e-3, atol=1e-3, err_msg=f"{name}: {key}")


@needs_nets
def test_transformer_net_matches_the_numpy_forward_pass() -> None:
    desc = load_model(SHARED_NETS["pub_t7a.jsonl"])
    spatial, glob = random_inputs(5, batch=1, seed=5, tensor_size=6)
    got = on_board(run(session(build_onnx(desc, None)), spatial, glob), 5, 6)
    expected = on_board(numpy_forward(desc, spatial, glob), 5, 6)
    for key in got:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-3, atol=2e-3, err_msg=key)


def test_rectangular_boards_work_with_dynamic_graphs() -> None:
    """KataGo allows non-square boards; a dynamic graph takes H != W (RoPE rows and columns)."""
    desc = synthetic(SYNTHETIC["v17-transformer"])
    spatial, glob = random_inputs(7, batch=2, seed=4)
    spatial = np.ascontiguousarray(spatial[:, :, :5, :])  # 5 rows, 7 columns
    got = run(session(build_onnx(desc, None)), spatial, glob)
    expected = numpy_forward(desc, spatial, glob)
    assert got["policy"].shape == (2, 4, 36) and got["ownership"].shape == (2, 1, 5, 7)
    for key in got:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-3, atol=1e-3, err_msg=key)


def test_conversion_is_deterministic(tmp_path: Path) -> None:
    src = tmp_path / "m.bin"
    src.write_bytes(write_model(SYNTHETIC["v15-nested-transformer"]))
    convert_model(src, tmp_path / "a.onnx")
    convert_model(src, tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def test_layer_names_that_look_generated_do_not_collide() -> None:
    # "model.conv_spatial" twice would be renamed model.conv_spatial_1; a real layer of that
    # name must still get a distinct tensor name, or the graph would be invalid.
    data = write_model(Spec(version=8)).replace(b"model.blocks.0.c2 ", b"model.blocks.0.c1_1 ", 1)
    data = data.replace(b"model.blocks.1.c2 ", b"model.blocks.0.c1 ", 1)
    model = build_onnx(parse_model_bytes(data, binary_floats=True), 5)
    onnx.checker.check_model(model)
    outputs = [o for node in model.graph.node for o in node.output]
    assert len(outputs) == len(set(outputs))


@needs_nets
def test_fixed_size_graph_serves_smaller_boards_like_katago() -> None:
    """KataGo evaluates small boards in its fixed-size buffer; a graph converted for 11x11 does the
    same for a 7x7 board at the top-left (learnable RoPE tables built for 11x11 included)."""
    desc = load_model(SHARED_NETS["pub_t7b.jsonl"])
    spatial, glob = random_inputs(7, batch=2, seed=9, tensor_size=11)
    padded = on_board(run(session(build_onnx(desc, 11)), spatial, glob), 7, 11)
    exact = run(session(build_onnx(desc, 7)), np.ascontiguousarray(spatial[:, :, :7, :7]), glob)
    for key in exact:
        np.testing.assert_allclose(padded[key], exact[key], rtol=1e-4, atol=5e-4, err_msg=key)
