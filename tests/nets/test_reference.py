"""miai against KataGo 1.17.2, position by position (reference/*.jsonl, see tests/outside.py).

Every file of shared/reference whose net is in shared/nets (pub_rules.jsonl covers KataGo's rule presets, half of
its positions right after a pass) and our own KataGo positions in tests/nets/data. For every recorded position: every
policy probability within 0.002 of KataGo's, win and loss within 0.002, lead within 0.05 points, ownership within
0.01, and the same illegal points. Each net is converted once per test session into a temporary cache. The whole
file takes about 20 s on one core (the KaTrain nets are downloaded once into ~/.cache/miai, with
MIAI_DOWNLOAD_NETS=1 only).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from miai.nets.evaluator import OnnxEvaluator
from miai.nets.loading import load_evaluator
from miai.nets.rawnn import raw_nn

from tests.outside import missing_reason, require_shared

from .reference_cases import NETS_DIR, REFERENCE_DIR, compare, load_records, state_from_record

pytestmark = pytest.mark.slow

SMALL_NETS = {
    "pub_b6.jsonl": "g170-b6c96-s175395328-d26788732.bin.gz",
    "pub_t7a.jsonl": "b7c96h3tfrs-test5-cnorm.bin.gz",
    "pub_t7b.jsonl": "b7c96h6kv3qk32v16tflrs-fson-bnh.bin.gz",
}
DATA_DIR = Path(__file__).parent / "data"  # positions we generated with KataGo (tests/tools/gen_reference.py)


def local_reference_files() -> list[Path]:
    """Every reference file whose net is in ../shared/nets: all of ../shared/reference (pub_rules.jsonl
    included) and tests/nets/data. Empty when ../shared is absent."""
    if not NETS_DIR.is_dir():
        return []
    files = sorted(REFERENCE_DIR.glob("*.jsonl")) + sorted(DATA_DIR.glob("*.jsonl"))
    return [path for path in files if (NETS_DIR / _net_of(path)).is_file()]


def _net_of(path: Path) -> str:
    with path.open() as f:
        return str(json.loads(f.readline())["net"])
KATRAIN_NETS = {"pub_b15.jsonl": "1.9.3", "pub_nbt.jsonl": "1.14.0", "pub_tf.jsonl": "1.20.0"}


@pytest.fixture(scope="session")
def net_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("converted-nets")


_evaluators: dict[str, OnnxEvaluator] = {}


def evaluator_for(model: Path, cache: Path, board_size: int | None = None) -> OnnxEvaluator:
    """Convert (once per session) and load a KataGo model, with a dynamic or fixed board size."""
    key = f"{model}:{board_size}"
    if key not in _evaluators:
        evaluator = load_evaluator(model, directory=cache, board_size=board_size)
        assert isinstance(evaluator, OnnxEvaluator)
        _evaluators[key] = evaluator
    return _evaluators[key]


def katrain_model(version: str) -> Path:
    """The net inside a KaTrain wheel, downloaded once; skips when that is impossible."""
    from miai.nets.katrain_nets import KatrainNetError, fetch_katrain_net

    try:
        return fetch_katrain_net(version)
    except (KatrainNetError, OSError) as exc:
        pytest.skip(f"cannot download the KaTrain {version} net ({exc}); reference test skipped")


def check_file(reference: str | Path, model: Path, cache: Path, board_size: int | None = None) -> None:
    records = load_records(reference)
    if not records:
        pytest.skip(missing_reason(f"reference/{reference}"))
    evaluator = evaluator_for(model, cache, board_size)
    failures = []
    for record in records:
        result = raw_nn(evaluator, state_from_record(record), [0])[0]
        mismatch = compare(result, record)
        if not mismatch.within_tolerance():
            failures.append(f"{record['id']} ({record['rules']}): {mismatch}")
    assert not failures, f"{len(failures)} of {len(records)} positions differ from KataGo:\n" + "\n".join(failures)


LOCAL_FILES = local_reference_files()


@pytest.mark.parametrize("board_size", [None, 19], ids=["dynamic", "fixed19"])
@pytest.mark.parametrize("reference", LOCAL_FILES or [None], ids=[p.name for p in LOCAL_FILES] or ["none"])
def test_every_position_with_a_shared_net_matches_katago(
    reference: Path | None, board_size: int | None, net_cache: Path
) -> None:
    """Every position of every reference file whose net is in ../shared/nets, under every rule preset, within the
    tolerances. Dynamic-size nets see each board at its size; 19x19 nets see small boards padded."""
    if reference is None:
        pytest.skip(missing_reason("nets/ and reference/"))
    check_file(reference, NETS_DIR / _net_of(reference), net_cache, board_size)


def test_the_shared_reference_files_are_all_checked() -> None:
    """The files named in shared/README.md whose nets are shared are among the checked ones (none silently
    dropped because a net name changed)."""
    if not NETS_DIR.is_dir():
        pytest.skip(missing_reason("nets/"))
    checked = {path.name for path in LOCAL_FILES}
    assert set(SMALL_NETS) | {"pub_rules.jsonl"} <= checked
    assert {path.name for path in DATA_DIR.glob("*.jsonl")} <= checked


@pytest.mark.download
def test_b15_katrain_net_matches_katago(net_cache: Path) -> None:
    check_file("pub_b15.jsonl", katrain_model(KATRAIN_NETS["pub_b15.jsonl"]), net_cache)


@pytest.mark.download
@pytest.mark.parametrize("reference", ["pub_nbt.jsonl", "pub_tf.jsonl"])
def test_big_katrain_nets_match_katago(reference: str, net_cache: Path) -> None:
    check_file(reference, katrain_model(KATRAIN_NETS[reference]), net_cache)


def parse_raw_nn_block(text: str, size: int) -> dict[str, object]:
    """Read one kata-raw-nn block back into the reference records' keys."""
    lines = text.splitlines()
    values = {line.split()[0]: line.split()[1] for line in lines if len(line.split()) == 2}
    start = lines.index("policy") + 1
    policy = [float(v) for row in lines[start : start + size] for v in row.split()]  # "NAN" parses as nan
    own_start = lines.index("whiteOwnership") + 1
    ownership = [float(v) for row in lines[own_start : own_start + size] for v in row.split()]
    return {
        "white_win": float(values["whiteWin"]),
        "white_loss": float(values["whiteLoss"]),
        "white_lead": float(values["whiteLead"]),
        "policy": policy,
        "policy_pass": float(values["policyPass"]),
        "white_ownership": ownership,
    }


def test_printed_kata_raw_nn_text_matches_katago(net_cache: Path) -> None:
    from miai.nets.rawnn import format_raw_nn

    model = require_shared(f"nets/{SMALL_NETS['pub_b6.jsonl']}")
    records = load_records("pub_b6.jsonl") or pytest.skip(missing_reason("reference/pub_b6.jsonl"))
    evaluator = evaluator_for(model, net_cache)
    for record in records[:8]:
        state = state_from_record(record)
        text = format_raw_nn(raw_nn(evaluator, state, [0]), state.size)
        parsed = parse_raw_nn_block(text, state.size)
        assert compare(parsed, record).within_tolerance(), record["id"]


# KataGo's own GTP regression test (cpp/tests/results/gtp/rawnn.txt.log, KataGo 1.8.0, the same
# b6c96 net on an exact 9x9 buffer): 9x9, chinese rules, komi 7.5, B C3, W C6, then
# kata-raw-nn 1, 4 and 6. Row 3 of the policy grid (GTP row 6) and the headline numbers.
KATAGO_SYMMETRY_OUTPUTS = {
    1: (0.532945, 0.576, [0.000015, 0.000238, None, 0.106903, 0.188649, 0.294320, 0.006735, 0.000030, 0.000019]),
    4: (0.525360, 0.407, [0.000016, 0.000149, None, 0.206358, 0.242040, 0.282600, 0.006111, 0.000035, 0.000017]),
    6: (0.549906, 1.019, [0.000012, 0.000112, None, 0.141518, 0.216001, 0.335663, 0.006140, 0.000032, 0.000016]),
}


def test_symmetry_numbering_matches_katago(net_cache: Path) -> None:
    from miai.go.coords import Color, parse_gtp
    from miai.go.rules import Rules
    from miai.go.state import GameState

    model = require_shared(f"nets/{SMALL_NETS['pub_b6.jsonl']}")
    state = GameState(size=9, rules=Rules.preset("chinese"), komi=7.5)
    state.push(parse_gtp("C3", 9), Color.BLACK)
    state.push(parse_gtp("C6", 9), Color.WHITE)
    results = raw_nn(evaluator_for(model, net_cache), state, sorted(KATAGO_SYMMETRY_OUTPUTS))
    for result in results:
        win, lead, row = KATAGO_SYMMETRY_OUTPUTS[result["symmetry"]]
        assert result["white_win"] == pytest.approx(win, abs=0.002)
        assert result["white_lead"] == pytest.approx(lead, abs=0.05)
        for ours, theirs in zip(result["policy"][27:36], row):
            if theirs is None:
                assert ours != ours  # NaN: C6 is occupied
            else:
                assert ours == pytest.approx(theirs, abs=0.002)
