"""Record KataGo's raw net outputs for positions that stress the rule-dependent net inputs.

Each position is set up over GTP on a real KataGo (``boardsize``, ``kata-set-rules``, ``komi``, ``fixed_handicap``,
``play``...), KataGo answers ``kata-raw-nn 0 0`` (symmetry 0, policy optimism 0), and the position is written as
one JSON line in the format of the shared test data's reference files: id, size, komi,
rules, handicap_stones, moves, to_play, net, symmetry 0, optimism 0, and KataGo's outputs from White's view. ``rules``
is a preset name or, for rules that are no preset, KataGo's JSON rules object.

The cases cover what pub_rules.jsonl does not: two passes (the game is over), moves after the game ended, handicap
with a pass, territory scoring after a pass, button Go after the button pass, friendlyPassOk switched on or off by
JSON, and the repeated-pass ending of simple ko.

Usage (paths are the user's; nothing is assumed about where KataGo lives):

    python tests/tools/gen_reference.py --katago PATH/katago --model PATH/net.bin.gz --config PATH/gtp.cfg \\
        --out tests/nets/data/katago_rules_extra_b6.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"

# On 3x3 under simple ko: Black passes, then a capture and two recaptures bring back the same stones with Black
# to move, so a black pass now repeats an earlier one and ends the game.
REPEAT_3X3 = "b B2 w A2 b B3 w B1 b pass w A3 b A1 w A2"
OPENING_9 = "b E5 w C3 b G7 w C7 b G3 w E3 b D4 w F6"


@dataclass(frozen=True)
class Case:
    """One position: rules (a preset name or a JSON object), komi, handicap stones and moves (``"b E5 w pass"``)."""

    size: int
    rules: str | dict[str, Any]
    komi: float
    moves: str = ""
    handicap: int = 0
    note: str = field(default="", compare=False)


CASES: list[Case] = [
    # Two passes: the game is over (area rules, friendly or not; territory with KataGo's cleanup phase prevented).
    Case(9, "chinese", 7.5, OPENING_9 + " b pass w pass", note="game over, friendly pass rules"),
    Case(9, "tromp-taylor", 7.5, OPENING_9 + " b pass w pass", note="game over"),
    Case(9, "japanese", 6.5, OPENING_9 + " b pass w pass", note="territory, past the normal phase end"),
    Case(9, "aga", 7.5, OPENING_9 + " b pass", note="one pass, situational ko"),
    # A move after the game ended: history restarts at the ending pass.
    Case(9, "chinese", 7.5, OPENING_9 + " b pass w pass b D6", note="move after game end"),
    Case(9, "tromp-taylor", 7.5, OPENING_9 + " b pass w pass b D6", note="move after game end"),
    Case(9, "japanese", 6.5, OPENING_9 + " b pass w pass b D6 w pass", note="territory, move and pass after end"),
    Case(9, "tromp-taylor", 7.5, OPENING_9 + " b pass w pass b D6 w pass", note="pass after a move after game end"),
    Case(9, "japanese", 6.5, OPENING_9 + " b pass w pass b pass w pass", note="territory, four passes"),
    Case(9, "stone-scoring", 7.5, OPENING_9 + " b pass w pass b pass", note="a third pass after the game end"),
    # Handicap and a pass: White's bonus (N, N-1, 0) in komi while the friendly pass hides the history.
    Case(9, "chinese", 0.5, "w E5 b pass", handicap=2, note="handicap, friendly pass"),
    Case(9, "aga", 0.5, "w E5 b pass", handicap=3, note="handicap N-1, friendly pass"),
    Case(9, "tromp-taylor", 0.5, "w E5 b pass", handicap=2, note="handicap without bonus, pass shown"),
    Case(9, "japanese", 0.5, "w E5 b pass", handicap=2, note="territory handicap, pass"),
    # Free placement: an initial run of black moves counts as handicap stones for White's bonus.
    Case(9, "chinese", 0.5, "b C3 b G7 w E5 b pass", note="free handicap by repeated black moves, pass"),
    Case(9, "aga", 0.5, "b C3 b G7 b C7 w E5 b D4 w pass", note="free handicap N-1, pass"),
    Case(9, "aga-button", 7.0, "w pass", handicap=2, note="handicap, White takes the button"),
    # Territory scoring right after a pass.
    Case(9, "korean", 6.5, OPENING_9 + " b pass", note="territory after a pass"),
    Case(9, "ancient-territory", 6.5, OPENING_9 + " b pass", note="territory, tax all, after a pass"),
    Case(9, "goe", 7.5, OPENING_9 + " b pass", note="Ing rules after a pass"),
    # Button Go: the button pass, then a friendly pass; White taking the button; a button without friendly passes.
    Case(9, "aga-button", 7.0, OPENING_9 + " b pass", note="button taken by Black"),
    Case(9, "aga-button", 7.0, OPENING_9 + " b pass w pass", note="button taken, then a friendly pass"),
    Case(9, "aga-button", 7.0, OPENING_9 + " b D6 w pass b pass w pass", note="button taken by White, game over"),
    Case(9, {"ko": "POSITIONAL", "scoring": "AREA", "tax": "NONE", "suicide": True, "hasButton": True,
             "whiteHandicapBonus": "0", "friendlyPassOk": False}, 7.0, OPENING_9 + " b pass w pass",
         note="button without friendly passes"),
    Case(9, "aga-button", 7.0, OPENING_9, note="button still available"),
    Case(9, "aga-button", 7.0, "b pass w pass b pass", note="button pass and two passes: game over"),
    # friendlyPassOk set by JSON, against the preset's value.
    Case(9, {"ko": "POSITIONAL", "scoring": "AREA", "tax": "NONE", "suicide": True, "hasButton": False,
             "whiteHandicapBonus": "0", "friendlyPassOk": True}, 7.5, OPENING_9 + " b pass",
         note="tromp-taylor with friendly passes"),
    Case(9, {"ko": "SIMPLE", "scoring": "AREA", "tax": "NONE", "suicide": False, "hasButton": False,
             "whiteHandicapBonus": "N", "friendlyPassOk": False}, 7.5, OPENING_9 + " b pass",
         note="chinese without friendly passes"),
    Case(9, {"ko": "SIMPLE", "scoring": "TERRITORY", "suicide": False, "friendlyPassOk": True}, 6.5,
         OPENING_9 + " b pass", note="friendly passes do not apply to territory scoring"),
    # Simple ko: a pass that repeats an earlier pass by the same player in the same position ends the game.
    Case(3, "chinese", 7.5, REPEAT_3X3, note="a pass now repeats Black's earlier pass"),
    Case(3, "chinese", 7.5, REPEAT_3X3 + " b pass", note="game over by a repeated pass"),
    Case(3, "japanese", 6.5, REPEAT_3X3, note="territory: a pass now repeats Black's earlier pass"),
    Case(3, "tromp-taylor", 7.5, "b B2 w A2 b B3 w B1 b pass w A3 b A1", note="positional superko, no such rule"),
]


class Gtp:
    """A KataGo GTP session on pipes."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    def send(self, line: str) -> str:
        """The answer to one command, without the leading ``= ``; raises on ``?``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            text = self.process.stdout.readline()
            if not text:
                raise RuntimeError(f"KataGo exited while answering {line!r}")
            if text.strip() == "" and lines:
                break
            if text.strip():
                lines.append(text.rstrip("\n"))
        answer = "\n".join(lines)
        if answer.startswith("?"):
            raise RuntimeError(f"KataGo refused {line!r}: {answer}")
        return answer[1:].strip()

    def close(self) -> None:
        try:
            self.send("quit")
        finally:
            self.process.wait(timeout=30)


def parse_raw_nn(text: str, size: int) -> dict[str, Any]:
    """KataGo's ``kata-raw-nn`` block as the reference keys (illegal points: -1)."""
    lines = text.splitlines()
    pairs = {line.split()[0]: line.split()[1] for line in lines if len(line.split()) == 2}

    def grid(title: str) -> list[float]:
        start = lines.index(title) + 1
        values = [v for row in lines[start : start + size] for v in row.split()]
        return [-1.0 if v == "NAN" else float(v) for v in values]

    return {
        "white_win": float(pairs["whiteWin"]),
        "white_loss": float(pairs["whiteLoss"]),
        "no_result": float(pairs["noResult"]),
        "white_lead": float(pairs["whiteLead"]),
        "white_score_selfplay": float(pairs["whiteScoreSelfplay"]),
        "policy": grid("policy"),
        "policy_pass": float(pairs["policyPass"]),
        "white_ownership": grid("whiteOwnership"),
    }


def set_up(gtp: Gtp, size: int, rules: str | dict[str, Any], komi: float, handicap: int,
           moves: list[list[str]]) -> list[str]:
    """A position on KataGo over GTP, as the reference files are made; returns the handicap stones it placed."""
    gtp.send(f"boardsize {size}")
    gtp.send("clear_board")
    rules_text = rules if isinstance(rules, str) else json.dumps(rules, separators=(",", ":"))
    gtp.send(f"kata-set-rules {rules_text}")
    gtp.send(f"komi {komi:g}")
    stones = gtp.send(f"fixed_handicap {handicap}").split() if handicap else []
    for color, vertex in moves:
        gtp.send(f"play {color} {vertex}")
    return stones


def add_katago_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every generator takes to run KataGo: the executable, the net and the GTP config."""
    parser.add_argument("--katago", required=True, type=Path, help="KataGo executable")
    parser.add_argument("--model", required=True, type=Path, help="KataGo net (.bin.gz)")
    parser.add_argument("--config", required=True, type=Path, help="KataGo GTP config file")


def write_lines(out: Path, rows: list[dict[str, Any]], what: str) -> None:
    """``rows`` as a JSON-lines file, and one line on stderr saying so."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"wrote {len(rows)} {what} to {out}", file=sys.stderr)


def run_case(gtp: Gtp, case: Case, index: int, net: str) -> dict[str, Any]:
    """Set the position up on KataGo and record its outputs."""
    tokens = case.moves.split()
    moves = [[color, vertex.upper() if vertex.lower() != "pass" else "PASS"]
             for color, vertex in zip(tokens[::2], tokens[1::2])]
    stones = set_up(gtp, case.size, case.rules, case.komi, case.handicap, moves)
    to_play = ("w" if moves[-1][0] == "b" else "b") if moves else ("w" if stones else "b")
    outputs = parse_raw_nn(gtp.send("kata-raw-nn 0 0"), case.size)  # symmetry 0, policy optimism 0
    return {
        "id": f"extra-{index:04d}", "note": case.note, "size": case.size, "komi": case.komi, "rules": case.rules,
        "handicap_stones": stones, "moves": moves, "to_play": to_play, "net": net, "symmetry": 0, "optimism": 0,
        **outputs,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_katago_arguments(parser)
    parser.add_argument("--out", required=True, type=Path, help="JSON-lines file to write")
    args = parser.parse_args(argv)
    gtp = Gtp([str(args.katago), "gtp", "-model", str(args.model), "-config", str(args.config)])
    try:
        records = [run_case(gtp, case, index, args.model.name) for index, case in enumerate(CASES)]
    finally:
        gtp.close()
    write_lines(args.out, records, "positions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
