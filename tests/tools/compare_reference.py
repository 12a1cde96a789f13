"""Compare miai's kata-raw-nn outputs with recorded KataGo outputs: mismatch count and worst deviations.

Each file is a reference JSON-lines file (the shared test data's reference format); its positions are replayed with the test
helpers of tests/nets and evaluated with symmetry 0 by the net named in each record, looked up in ``--nets``.
Run from the repository root:

    python tests/tools/compare_reference.py --nets NETS_DIR REFERENCE.jsonl...
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.nets

from miai.nets.loading import load_evaluator  # noqa: E402
from miai.nets.rawnn import raw_nn  # noqa: E402
from tests.nets.reference_cases import compare, load_records, state_from_record  # noqa: E402

FIELDS = ("policy", "win", "loss", "lead", "ownership")


def check(path: Path, nets: Path, cache: Path) -> int:
    """Print every position outside the tolerances and a summary line; returns the number of such positions."""
    records = load_records(path)
    evaluators = {}
    worst = dict.fromkeys(FIELDS, 0.0)
    bad = 0
    for record in records:
        net = record["net"]
        if net not in evaluators:
            evaluators[net] = load_evaluator(nets / net, directory=cache)
        try:
            result = raw_nn(evaluators[net], state_from_record(record), [0])[0]
        except Exception as error:  # noqa: BLE001 - a report: any position that cannot be replayed is counted
            bad += 1
            print(f"{record['id']} {record['rules']}: cannot replay: {error}")
            continue
        mismatch = compare(result, record)
        for name in FIELDS:
            worst[name] = max(worst[name], getattr(mismatch, name))
        if not mismatch.within_tolerance():
            bad += 1
            print(f"{record['id']} {record['rules']} last {record['moves'][-1:]}: {mismatch}")
    summary = " ".join(f"{name} {value:.4f}" for name, value in worst.items())
    print(f"{path.name}: {bad}/{len(records)} outside the tolerances; worst {summary}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help="reference .jsonl files")
    parser.add_argument("--nets", required=True, type=Path, help="folder holding the nets the records name")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "miai-compare-nets",
                        help="where converted nets are kept")
    args = parser.parse_args(argv)
    bad = sum(check(path.resolve(), args.nets, args.cache) for path in args.files)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
