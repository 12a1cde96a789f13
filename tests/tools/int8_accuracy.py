"""Accuracy of ``net.precision = "int8"`` against fp32 on KataGo reference positions.

Usage (from the repository root):
    python tests/tools/int8_accuracy.py pub_b6.jsonl g170-b6c96-s175395328-d26788732.bin.gz

Every row of the reference file (a position and KataGo's raw net outputs for it) is evaluated by miai's fp32
and int8 evaluators (symmetry 0, no cache). Printed: how often the top policy move agrees (int8 with fp32, and
each with KataGo's recorded policy), and the mean and largest differences of value (win - loss) and lead
between int8 and fp32.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from miai.go.coords import parse_color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.nets.loading import load_evaluator


def replay(row: dict) -> GameState:
    """The row's position: size, rules, komi, handicap stones and moves."""
    size = int(row["size"])
    state = GameState(size=size, rules=Rules.preset(row["rules"]), komi=float(row["komi"]))
    if row.get("handicap_stones"):
        state.fixed_handicap(len(row["handicap_stones"]))
    for color, vertex in row["moves"]:
        state.push(parse_gtp(vertex, size), parse_color(color))
    return state


def main(reference: str, model: str) -> None:
    rows = [json.loads(line) for line in open(reference, encoding="utf-8") if line.strip()]
    nets = {p: load_evaluator(model, precision=p, intra_op_threads=1) for p in ("fp32", "int8")}
    agree = {"int8 = fp32": 0, "fp32 = KataGo": 0, "int8 = KataGo": 0}
    value_err, lead_err, policy_err = [], [], []
    for row in rows:
        state = replay(row)
        fp32, int8 = (nets[p].evaluate([state])[0] for p in ("fp32", "int8"))
        theirs = np.array(row["policy"] + [row["policy_pass"]])
        top = int(np.argmax(theirs))
        agree["int8 = fp32"] += int(np.argmax(int8.policy) == np.argmax(fp32.policy))
        agree["fp32 = KataGo"] += int(np.argmax(fp32.policy) == top)
        agree["int8 = KataGo"] += int(np.argmax(int8.policy) == top)
        value_err.append(abs(int8.value - fp32.value))
        lead_err.append(abs(int8.lead - fp32.lead))
        policy_err.append(float(np.max(np.abs(int8.policy - fp32.policy))))
    print(f"{len(rows)} positions from {reference}")
    for name, count in agree.items():
        print(f"top move {name}: {count}/{len(rows)}")
    for name, errors in (("value (win-loss)", value_err), ("lead (points)", lead_err), ("policy (max |p|)", policy_err)):
        print(f"int8 - fp32 {name}: mean {np.mean(errors):.4f}, max {np.max(errors):.4f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
