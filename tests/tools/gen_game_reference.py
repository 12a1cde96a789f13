"""Record a game KataGo plays against itself, for the game parity test (tree reuse, the GTP player).

KataGo runs with one search thread and ``nnRandomize = false`` (deterministic), no temperature and no resignation,
starts each game with an empty NN cache and plays each move with ``kata-genmove_analyze``, so it keeps its tree from
move to move as in a real game. Each move's root edge visits are recorded with the move it played. One JSON line per
game: size, rules, komi, visits, the opening (moves played before the first search) and ``turns`` (colour, move,
``edge_visits``: GTP vertex -> visits).

Usage (paths are the user's; nothing is assumed about where KataGo lives):

    python tests/tools/gen_game_reference.py --katago PATH/katago --model PATH/net.bin.gz --config PATH/gtp.cfg \\
        --visits 400 --turns 24 --out tests/engine/data/katago_games_b6.jsonl "D6 F6 F5" "E5 C4 G5"
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_reference import Gtp, add_katago_arguments, set_up, write_lines  # noqa: E402
from gen_search_reference import edge_visits  # noqa: E402


def play_game(gtp: Gtp, size: int, rules: str, komi: float, opening: list[str], turns: int) -> list[dict[str, Any]]:
    """KataGo's moves from the opening on, each with the edge visits of its search."""
    moves = [["b" if i % 2 == 0 else "w", vertex] for i, vertex in enumerate(opening)]
    set_up(gtp, size, rules, komi, 0, moves)
    gtp.send("clear_cache")  # each game from an empty NN cache, as the test replays it
    color = "w" if len(moves) % 2 else "b"
    played = []
    for _ in range(turns):
        answer = gtp.send(f"kata-genmove_analyze {color} 100000")
        move = answer.strip().splitlines()[-1].split()[-1].upper()
        played.append({"color": color, "move": move, "edge_visits": edge_visits(answer)})
        if move in ("PASS", "RESIGN"):
            break
        color = "b" if color == "w" else "w"
    return played


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_katago_arguments(parser)
    parser.add_argument("--visits", type=int, default=400, help="root visits per move (kept ones included)")
    parser.add_argument("--turns", type=int, default=24, help="moves to search and play after the opening")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--rules", default="chinese")
    parser.add_argument("--komi", type=float, default=7.0)
    parser.add_argument("--out", required=True, type=Path, help="JSON-lines file to write")
    parser.add_argument("openings", nargs="+", help="openings, each a quoted list of GTP vertices from Black")
    args = parser.parse_args(argv)
    overrides = (f"numSearchThreads=1,nnRandomize=false,maxVisits={args.visits},chosenMoveTemperatureEarly=0,"
                 "chosenMoveTemperature=0,allowResignation=false")
    gtp = Gtp([str(args.katago), "gtp", "-model", str(args.model), "-config", str(args.config),
               "-override-config", overrides])
    games = []
    try:
        for number, opening in enumerate(args.openings):
            turns = play_game(gtp, args.size, args.rules, args.komi, opening.split(), args.turns)
            games.append({"id": f"game-{number}", "net": args.model.name, "size": args.size, "rules": args.rules,
                          "komi": args.komi, "visits": args.visits, "opening": opening.split(), "turns": turns})
    finally:
        gtp.close()
    write_lines(args.out, games, "games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
