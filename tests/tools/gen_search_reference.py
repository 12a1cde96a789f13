"""Record what KataGo's search visits on reference positions, for the search parity test.

KataGo runs with one search thread and ``nnRandomize = false`` (the net always sees symmetry 0), so its search is
deterministic; miai with ``net.symmetry = "fixed"`` and ``search.batch_size = 1`` searches the same way. For each
position of the given reference files (the shared test data's format: size, rules, komi, handicap stones, moves),
KataGo searches ``--visits`` root visits from scratch (``clear_cache``) and ``kata-search_analyze`` reports the edge
visits of every root move. Each position becomes one JSON line: the reference file and id it came from, the
visits, ``edge_visits`` (GTP vertex -> visits) and ``root``, the rootInfo KataGo reports (winrate, scoreLead,
utility: its pruned root values, from the side to move's view).

Usage (paths are the user's; nothing is assumed about where KataGo lives):

    python tests/tools/gen_search_reference.py --katago PATH/katago --model PATH/net.bin.gz \\
        --config PATH/gtp.cfg --visits 200 --out tests/engine/data/katago_search_b6.jsonl \\
        PATH/pub_b6.jsonl PATH/pub_rules.jsonl

The committed file was made without ``--override``: every setting is KataGo's GTP default (root symmetry pruning,
the passing hacks and the dynamic playout doubling advantage included; docs/search.md, "Parity with KataGo, visit by
visit"). The copies KataGo prints of the moves symmetry pruning left out (``isSymmetryOf``) are not recorded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_reference import Gtp, add_katago_arguments, set_up, write_lines  # noqa: E402


def root_info(analysis: str) -> dict[str, float]:
    """kata-search_analyze's rootInfo (KataGo's pruned root values), from the side to move's view."""
    tokens = analysis.rsplit("rootInfo", 1)[1].split() if "rootInfo" in analysis else []
    fields = dict(zip(tokens[0::2], tokens[1::2]))
    return {key: float(fields[key]) for key in ("winrate", "scoreLead", "utility") if key in fields}


def edge_visits(analysis: str) -> dict[str, int]:
    """Root move -> edge visits from the last info line of a kata-search_analyze answer."""
    lines = [line for line in analysis.splitlines() if line.startswith("info")]
    visits: dict[str, int] = {}
    for part in (lines[-1].split("info ")[1:] if lines else []):
        tokens = part.split()
        if "isSymmetryOf" in tokens:
            continue  # a copy KataGo prints of a symmetric move it searched (root symmetry pruning): never searched
        fields = dict(zip(tokens[0::2], tokens[1::2]))
        visits[fields["move"].upper()] = int(fields["edgeVisits"])
    return visits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_katago_arguments(parser)
    parser.add_argument("--visits", type=int, default=200, help="root visits per search")
    parser.add_argument("--out", required=True, type=Path, help="JSON-lines file to write")
    parser.add_argument("--override", default="", help="more KataGo settings, e.g. \",subtreeValueBiasFactor=0\"")
    parser.add_argument("references", nargs="+", type=Path, help="reference files of positions")
    args = parser.parse_args(argv)
    gtp = Gtp([str(args.katago), "gtp", "-model", str(args.model), "-config", str(args.config),
               "-override-config", f"numSearchThreads=1,nnRandomize=false,maxVisits={args.visits}{args.override}"])
    out = []
    try:
        for path in args.references:
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if record.get("net") != args.model.name:
                    continue
                set_up(gtp, record["size"], record["rules"], record["komi"], len(record.get("handicap_stones") or []),
                       record["moves"])
                gtp.send("clear_cache")
                answer = gtp.send(f"kata-search_analyze {record['to_play']} 100000 rootInfo true")
                out.append({"reference": path.name, "id": record["id"], "visits": args.visits,
                            "edge_visits": edge_visits(answer), "root": root_info(answer)})
    finally:
        gtp.close()
    write_lines(args.out, out, "searches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
