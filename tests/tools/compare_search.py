"""Compare miai's search with KataGo's on the positions of a search reference file (gen_search_reference.py).

miai searches each position deterministically (``net.symmetry = "fixed"``, ``search.batch_size = 1``, no overlap, one
onnxruntime thread, no tree kept between positions, the evaluation cache emptied before each), as KataGo did with
one thread, ``nnRandomize = false`` and ``clear_cache``,
and the root's edge visits are compared move by move. Printed: every position that differs (move -> KataGo's
visits, miai's visits) and how many are identical. Run from the repository root:

    python tests/tools/compare_search.py --net PATH/net.bin.gz tests/engine/data/katago_search_b6.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.*

from tests.engine.katago_search import miai_search, positions  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--net", required=True, type=Path, help="the KataGo net the reference was made with")
    parser.add_argument("reference", type=Path, help="a file written by gen_search_reference.py")
    parser.add_argument("--set", dest="sets", action="append", default=[], help="extra miai config KEY=VALUE")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.reference.read_text().splitlines() if line.strip()]
    same = 0
    for row, state in positions(rows):
        theirs = {move: n for move, n in row["edge_visits"].items() if n}
        mine, _ = miai_search(args.net, state, row["visits"], args.sets)
        if mine == theirs:
            same += 1
            continue
        diff = {m: (theirs.get(m, 0), mine.get(m, 0)) for m in sorted(set(theirs) | set(mine))
                if theirs.get(m, 0) != mine.get(m, 0)}
        print(f"{row['id']} ({state.size}x{state.size}, {row['rules']}): {diff}")
    print(f"{same}/{len(rows)} searches identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
