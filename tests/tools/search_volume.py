"""How much each engine searched per move in a match: root visits, visits carried over from the last move, new
playouts and net evaluations, read from the engines' stderr kept by ``miai match --log-dir``.

miai writes one line per genmove at ``--log-level debug`` ("genmove B move 7: F3, 800 visits, 535 playouts (265
carried over, 380 net evals) ..."); KataGo with ``logSearchInfo = true`` and ``logToStderr = true`` writes "Root
visits", "New playouts" and "NN rows" per move. Usage::

    python tests/tools/search_volume.py LOG_DIR [LOG_DIR ...]

prints, per engine log found (A.stderr, B.stderr), the means over all moves and over the game's phases (by move
number: 1-20, 21-40, 41 and later).
"""

from __future__ import annotations

import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

MIAI_LINE = re.compile(r"genmove [BW] move (\d+): \S+, (\d+) visits, (\d+) playouts \((\d+) carried over"
                       r"(?:, (\d+) net evals, (\d+) cache hits)?\)")
KATAGO_BLOCK = re.compile(r"MoveNum: (\d+) .*?Root visits: (\d+)\nNew playouts: (\d+)\nNN rows: (\d+)", re.S)
PHASES = ((1, 20), (21, 40), (41, 10_000))


@dataclass(frozen=True)
class MoveVolume:
    """One genmove's search: the move's number in the game (1 = the first move), the root's visits at the end,
    the new playouts of this search, the positions the net ran and those its evaluation cache answered (None when
    the log does not say; KataGo's log gives no cache figure)."""

    move: int
    root_visits: int
    playouts: int
    net_evals: int | None
    cache_hits: int | None = None

    @property
    def carried(self) -> int:
        return max(0, self.root_visits - self.playouts)


def read_log(path: Path) -> tuple[str, list[MoveVolume]]:
    """The engine's name ("miai" or "KataGo") and its moves, from one stderr log."""
    text = path.read_text(errors="replace")
    miai = [MoveVolume(int(m[1]), int(m[2]), int(m[3]), *(None if m[k] is None else int(m[k]) for k in (5, 6)))
            for m in MIAI_LINE.finditer(text)]
    if miai or "KataGo" not in text:
        return "miai", miai
    # KataGo's MoveNum counts the moves already played.
    return "KataGo", [MoveVolume(int(m[1]) + 1, int(m[2]), int(m[3]), int(m[4])) for m in KATAGO_BLOCK.finditer(text)]


def summary(name: str, moves: list[MoveVolume]) -> str:
    """One line of means over ``moves``."""
    if not moves:
        return f"{name:8} no moves"
    evals = [m.net_evals for m in moves if m.net_evals is not None]
    hits = [m.cache_hits for m in moves if m.cache_hits is not None]
    evals_text = f"{statistics.mean(evals):7.1f}" if evals else "      ?"
    hits_text = f"{statistics.mean(hits):7.1f}" if hits else "      ?"
    root = sum(m.root_visits for m in moves)
    return (f"{name:8} moves {len(moves):5}  root visits {statistics.mean(m.root_visits for m in moves):7.1f}  "
            f"carried {statistics.mean(m.carried for m in moves):7.1f}  new playouts "
            f"{statistics.mean(m.playouts for m in moves):7.1f}  net evals {evals_text}  cache hits {hits_text}  "
            f"carried share {sum(m.carried for m in moves) / max(root, 1):.2f}")


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for directory in map(Path, argv):
        for log in sorted(directory.glob("*.stderr")):
            name, moves = read_log(log)
            print(f"{log}:")
            print("  " + summary(name, moves))
            for first, last in PHASES:
                phase = [m for m in moves if first <= m.move <= last]
                print("  " + summary(f"{first}-{last if last < 10_000 else ''}", phase))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
