"""Record (or check) seeded self-play games: the moves miai's player chooses, move for move, under a few configs.

A refactor of the search that must not change its behaviour is checked by recording these games before it and
replaying them after (tests/engine/test_seeded_games.py replays tests/engine/data/seeded_games.jsonl). Each game is
played by one :class:`~miai.engine.player.EnginePlayer` for both sides from the empty board, with a fixed seed, a
visit limit and no time limit, so that nothing but the search decides the moves; temperature and root noise make the
seed matter. Run from the repository root:

    python tests/tools/record_games.py tests/engine/data/seeded_games.jsonl          # record
    python tests/tools/record_games.py --check tests/engine/data/seeded_games.jsonl  # compare

The net comes from the shared test data (tests/outside.py says where it is looked for).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.*

from miai.engine.cli.compose import build_evaluator  # noqa: E402
from miai.engine.config import Config, apply_overrides  # noqa: E402
from miai.engine.player import EnginePlayer  # noqa: E402
from miai.go.coords import Color, to_gtp  # noqa: E402
from miai.go.rules import Rules  # noqa: E402
from miai.go.state import GameState  # noqa: E402
from miai.gtp.player import RESIGN  # noqa: E402
from tests.outside import SHARED  # noqa: E402

NET = "nets/g170-b6c96-s175395328-d26788732.bin.gz"  # under the shared folder
# onnxruntime fp32 pinned: net.backend=auto picks bf16 where the CPU has it, and the recorded games are fp32's.
_COMMON = ("search.max_time=0", "search.max_playouts=0", "net.symmetry=fixed", "net.threads=1", "net.backend=onnxruntime",
           "search.temperature_early=0.8", "search.temperature=0.2", "search.temperature_halflife=8")

# name -> (model, size, moves at most, visits per move, overrides): the net under KataGo's defaults (overlapped
# batches, root noise), the graph's other rules (leaky descent, stale updates over ancestors, a tree, the classic
# final choice), and the random-playout evaluator under UCB1 with RAVE and UCB1-TUNED. The playouts are played in
# Python (``:python``): the compiled ones (the `fast` extra, numba) draw from numba's own generator, so the same seed
# gives other games where numba is installed, as in CI.
GAMES: dict[str, tuple[str, int, int, int, tuple[str, ...]]] = {
    "net-default": ("net", 9, 90, 40, ("search.seed=7", "search.root_noise=true", "search.batch_size=8")),
    "net-leaky-ancestors": ("net", 9, 90, 40, ("search.seed=11", "search.batch_size=1", "search.overlap=false",
                                               "search.child_visits_exceed_edge=leaky",
                                               "search.stale_update=ancestors")),
    "net-parents-continue": ("net", 7, 60, 60, ("search.seed=5", "search.batch_size=4",
                                                "search.child_visits_exceed_edge=continue",
                                                "search.stale_update=parents", "search.wide_root_noise=0.04")),
    "net-tree-wins": ("net", 9, 70, 32, ("search.seed=3", "search.graph=false", "search.final_choice=wins",
                                         "search.batch_size=4")),
    "playouts-ucb1-rave": ("playouts:4:python", 9, 90, 64, ("search.seed=13", "search.selection=ucb1",
                                                     "search.rave_equivalence=500", "search.batch_size=8")),
    "playouts-ucb1-tuned": ("playouts:4:python", 9, 90, 64, ("search.seed=17", "search.selection=ucb1-tuned",
                                                      "search.batch_size=8")),
}


def play(name: str, shared: Path) -> dict[str, Any]:
    """One seeded game under the named setup: its moves in GTP vertices (``resign`` ends a game)."""
    model, size, moves, visits, sets = GAMES[name]
    config = apply_overrides(Config(), [*_COMMON, f"search.max_visits={visits}", *sets])
    evaluator = build_evaluator(str(shared / NET) if model == "net" else model, config, progress=False)
    player = EnginePlayer(evaluator, config)
    state = GameState(size, Rules.preset("chinese"), komi=7.0)
    played: list[str] = []
    while len(played) < moves and not state.is_over():
        color = Color(state.to_play)
        move = player.genmove(state, color)
        if move == RESIGN:
            played.append("resign")
            break
        played.append(to_gtp(move, size))
        state.push(move, color)
    return {"name": name, "size": size, "moves": played}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=SHARED, help="the shared test data folder (KataGo test nets)")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    parser.add_argument("--only", action="append", default=[], help="just this game (repeatable)")
    parser.add_argument("games", type=Path, help="the JSON-lines file of recorded games")
    args = parser.parse_args(argv)
    names = args.only or list(GAMES)
    if not args.check:
        with args.games.open("w") as out:
            for name in names:
                game = play(name, args.shared)
                print(f"{name}: {len(game['moves'])} moves", file=sys.stderr)
                out.write(json.dumps(game) + "\n")
        return 0
    recorded = {g["name"]: g for g in map(json.loads, args.games.read_text().splitlines())}
    failed = 0
    for name in names:
        game = play(name, args.shared)
        same = game == recorded[name]
        failed += not same
        print(f"{name}: {'identical' if same else 'DIFFERS'} ({len(game['moves'])} moves)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
