"""The KaTrain nets (b15c192 v8, b18c384nbt v14 nested bottleneck, b10c384 v15 transformer)
converted and checked against KataGo 1.17.2 on the quiet reference positions.

The nets are downloaded once from PyPI into ~/.cache/miai (see miai.nets.katrain_nets); the tests
skip with the reason when that is impossible (offline).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from miai.nets.katago import AttentionBlock, NestedBottleneckBlock, RMSNorm, load_model
from miai.nets.katrain_nets import KatrainNetError, fetch_katrain_net

from .test_convert import check_reference_file

pytestmark = pytest.mark.download


def katrain_net(version: str) -> Path:
    try:
        return fetch_katrain_net(version)
    except KatrainNetError as exc:
        pytest.skip(f"KaTrain {version} net unavailable: {exc}")


def test_b15_resnet_matches_katago() -> None:
    net = katrain_net("1.9.3")
    assert check_reference_file("pub_b15.jsonl", net, dynamic=False) >= 4


def test_b18_nested_bottleneck_matches_katago() -> None:
    net = katrain_net("1.14.0")
    desc = load_model(net)
    assert desc.version == 14
    assert all(isinstance(b, NestedBottleneckBlock) for b in desc.trunk.blocks)
    assert check_reference_file("pub_nbt.jsonl", net, dynamic=True) >= 2


def test_b10_transformer_matches_katago() -> None:
    net = katrain_net("1.20.0")
    desc = load_model(net)
    assert desc.version == 15
    assert isinstance(desc.trunk.tip_norm, RMSNorm) and desc.trunk.tip_norm.spatial
    first = desc.trunk.blocks[0]
    assert isinstance(first, NestedBottleneckBlock) and isinstance(first.blocks[0], AttentionBlock)
    assert check_reference_file("pub_tf.jsonl", net, dynamic=True) >= 2
