"""Batch analysis with ``miai analysis``: every position of an SGF game in one query, the results as JSON lines.

It is the recipe the README points to for KataGo-style batch work: the game becomes one query with ``analyzeTurns``
listing every turn, ``miai analysis`` searches the turns (several at once with ``-analysis-threads``), and each
response is written to OUT (one line per turn, in turn order). A table goes to stdout: the move played, Black's
winrate and score lead before it, the engine's best move, and how many points the played move lost by the engine's
estimate (the drop of the mover's score lead from one turn to the next).

Usage: python docs/examples/analyze_sgf.py GAME.sgf OUT.jsonl [--visits 200] [--model default] [--threads 2]
       [--rules chinese] [--ownership]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from miai.go.coords import Color, to_gtp
from miai.go.sgf import parse_rules_text, read_sgf_file


def build_query(path: Path, visits: int, rules: str, ownership: bool) -> dict[str, Any]:
    """One query for every turn of the game in ``path`` (RU is used when miai knows it, else ``rules``)."""
    game = read_sgf_file(path)
    for warning in game.warnings:  # what an old file needed repaired, one line each
        print(f"warning: {warning}", file=sys.stderr)
    size = game.size
    ru = game.rules if game.rules and parse_rules_text(game.rules) is not None else rules
    query: dict[str, Any] = {
        "id": path.stem, "boardXSize": size, "boardYSize": size, "rules": ru,
        "initialStones": [["B", to_gtp(p, size)] for p in game.setup_black]
                         + [["W", to_gtp(p, size)] for p in game.setup_white],
        "moves": [["B" if color == Color.BLACK else "W", to_gtp(move, size)] for color, move in game.moves],
        "analyzeTurns": list(range(len(game.moves) + 1)), "maxVisits": visits, "includeOwnership": ownership,
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"},
    }
    if game.komi is not None:
        query["komi"] = game.komi
    if game.player_to_move is not None:
        query["initialPlayer"] = "B" if game.player_to_move == Color.BLACK else "W"
    return query


def analyse(query: dict[str, Any], model: str, threads: int) -> list[dict[str, Any]]:
    """Run ``miai analysis`` on one query; the final response of every turn, in turn order.

    Raises:
        RuntimeError: the engine answered with an error (e.g. an illegal move in the game).
    """
    command = [sys.executable, "-m", "miai.engine", "analysis", "-model", model, "-analysis-threads", str(threads)]
    done = subprocess.run(command, input=json.dumps(query) + "\n", capture_output=True, text=True, check=False)
    responses = [json.loads(line) for line in done.stdout.splitlines()]
    errors = [r["error"] for r in responses if "error" in r]
    if errors or done.returncode != 0:
        raise RuntimeError("; ".join(errors) or done.stderr.strip())
    finals = [r for r in responses if "turnNumber" in r and not r.get("isDuringSearch")]
    return sorted(finals, key=lambda r: r["turnNumber"])


def table(query: dict[str, Any], results: list[dict[str, Any]]) -> list[str]:
    """One line per move: Black's winrate and lead before it, the best move there, and the points it lost."""
    lines = [f"{'turn':>4} {'move':>6} {'B win%':>7} {'B lead':>7} {'best':>6} {'lost':>6}"]
    for turn, (color, vertex) in enumerate(query["moves"]):
        before, after = results[turn]["rootInfo"], results[turn + 1]["rootInfo"]
        sign = 1 if color == "B" else -1  # leads are Black's: the mover lost what their own lead dropped
        lost = sign * (before["scoreLead"] - after["scoreLead"])
        best = results[turn]["moveInfos"][0]["move"] if results[turn]["moveInfos"] else "-"
        lines.append(f"{turn:>4} {color + ' ' + vertex:>6} {100 * before['winrate']:>7.1f} "
                     f"{before['scoreLead']:>7.1f} {best:>6} {lost:>6.1f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sgf", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rules", default="chinese", help="rules when the SGF's RU is missing or unknown")
    parser.add_argument("--ownership", action="store_true", help="also store the ownership map of every turn")
    args = parser.parse_args()
    query = build_query(args.sgf, args.visits, args.rules, args.ownership)
    try:
        results = analyse(query, args.model, args.threads)
    except RuntimeError as exc:
        sys.exit(f"analyze_sgf: {args.sgf}: {exc}")
    args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    print("\n".join(table(query, results)))


if __name__ == "__main__":
    main()
