"""Helpers for comparing miai's evaluations with KataGo's recorded kata-raw-nn outputs.

Each line of shared/reference/*.jsonl holds a position (size, komi, rules preset, handicap stones,
moves) and KataGo 1.17.2's outputs for symmetry 0 and optimism 0, from White's view.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from miai.go.coords import parse_color, parse_gtp
from miai.go.rules import Rules
from miai.go.state import GameState
from tests.outside import reference_file, shared

REFERENCE_DIR = shared("reference")
NETS_DIR = shared("nets")

NETS_DIR = shared("nets")

# The tolerances issue 3 asks for.
POLICY_TOL = 0.002
WINLOSS_TOL = 0.002
LEAD_TOL = 0.05
OWNERSHIP_TOL = 0.01


def load_records(name: str | Path) -> list[dict[str, Any]]:
    """The records of one reference file: a name (committed, or in the shared folder) or a path (empty when it is
    absent)."""
    path = name if isinstance(name, Path) else reference_file(name)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def state_from_record(record: dict[str, Any]) -> GameState:
    """Replay a reference position the way KataGo's GTP front end was driven."""
    size = int(record["size"])
    rules = record["rules"]  # a preset name, or a KataGo rules JSON object as kata-set-rules takes it
    state = GameState(size=size, rules=Rules.parse(rules if isinstance(rules, str) else json.dumps(rules)),
                      komi=float(record["komi"]))
    stones = record.get("handicap_stones") or []
    if stones:
        placed = state.fixed_handicap(len(stones))
        assert sorted(placed) == sorted(parse_gtp(v, size) for v in stones), "handicap placement differs"
    for color, vertex in record["moves"]:
        state.push(parse_gtp(vertex, size), parse_color(color))
    assert state.to_play == parse_color(record["to_play"]), "side to move differs from the record"
    return state


@dataclass(frozen=True)
class Mismatch:
    """The worst deviation of each compared quantity for one record."""

    policy: float
    win: float
    loss: float
    lead: float
    ownership: float
    illegal_disagreements: int

    def within_tolerance(self) -> bool:
        return (
            self.policy <= POLICY_TOL
            and self.win <= WINLOSS_TOL
            and self.loss <= WINLOSS_TOL
            and self.lead <= LEAD_TOL
            and self.ownership <= OWNERSHIP_TOL
            and self.illegal_disagreements == 0
        )


def compare(result: dict[str, Any], record: dict[str, Any]) -> Mismatch:
    """Compare a ``miai.nets.rawnn.white_view`` dict with a reference record."""
    ours = np.array(result["policy"], dtype=np.float64)
    theirs = np.array(record["policy"], dtype=np.float64)
    their_illegal = theirs < 0
    our_illegal = np.isnan(ours)
    legal = ~their_illegal & ~our_illegal
    policy_err = float(np.max(np.abs(ours[legal] - theirs[legal]), initial=0.0))
    policy_err = max(policy_err, abs(result["policy_pass"] - record["policy_pass"]))
    own_err = float(np.max(np.abs(np.array(result["white_ownership"]) - np.array(record["white_ownership"]))))
    return Mismatch(
        policy=policy_err,
        win=abs(result["white_win"] - record["white_win"]),
        loss=abs(result["white_loss"] - record["white_loss"]),
        lead=abs(result["white_lead"] - record["white_lead"]),
        ownership=own_err,
        illegal_disagreements=int(np.sum(their_illegal != our_illegal)),
    )
