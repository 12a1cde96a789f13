"""tests/tools/gen_reference.py: its parser, and (with KataGo from ../shared/peers) that it reproduces every committed
file of tests/nets/data exactly, each with its own net."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.outside import shared

from .reference_cases import NETS_DIR

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DATA_FILES = sorted((Path(__file__).parent / "data").glob("*.jsonl"))
KATAGO = shared("peers/katago")


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "tests" / "tools" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_reference"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


BLOCK = """symmetry 0
whiteWin 0.250000
whiteLoss 0.750000
noResult 0.000000
whiteLead -1.500
whiteScoreSelfplay -2.000
whiteScoreSelfplaySq 9.000
policy
0.100000 NAN
0.300000 0.400000
policyPass 0.200000
whiteOwnership
-0.5 0.5
0.25 -0.25"""


def test_raw_nn_blocks_are_read_into_reference_keys() -> None:
    record = load_script().parse_raw_nn(BLOCK, 2)
    assert record["policy"] == [0.1, -1.0, 0.3, 0.4] and record["policy_pass"] == 0.2
    assert record["white_ownership"] == [-0.5, 0.5, 0.25, -0.25]
    assert (record["white_win"], record["white_lead"], record["no_result"]) == (0.25, -1.5, 0.0)


@pytest.mark.parametrize("data", DATA_FILES, ids=[path.stem for path in DATA_FILES])
def test_the_committed_positions_are_what_katago_answers(data: Path, tmp_path: Path) -> None:
    committed = [json.loads(line) for line in data.read_text().splitlines()]
    model = NETS_DIR / committed[0]["net"]
    if not KATAGO.is_file() or not model.is_file():
        pytest.skip("KataGo or the net is not in ../shared")
    try:
        subprocess.run([str(KATAGO), "version"], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"../shared/peers/katago does not start here ({exc}); see shared/peers/README.md")
    out = tmp_path / "extra.jsonl"
    code = load_script().main(["--katago", str(KATAGO), "--model", str(model),
                               "--config", str(shared("peers/katago_gtp.cfg")), "--out", str(out)])
    assert code == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == committed
