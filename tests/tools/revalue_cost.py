"""What revaluing a kept graph costs when a new search begins (engine/core/graph.py ``revalue``).

Searches the empty 9x9 board to ``VISITS`` root visits with the default net and config (evaluation cache on),
then starts one more search on the same root, which revalues every node against the new score centre before its
single visit. Run from the repository root:

    python tests/tools/revalue_cost.py [VISITS]
"""

from __future__ import annotations

import sys
import time

from miai.engine.cli.compose import build_evaluator
from miai.engine.config import Config
from miai.engine.core.search import Search
from miai.go.rules import Rules
from miai.go.state import GameState


def main(visits: int) -> None:
    config = Config()
    search = Search(build_evaluator("default", config, progress=False), config.search)
    search.set_root(GameState(9, Rules.preset("chinese"), 7.0))
    start = time.perf_counter()
    search.run(None, None, max_visits=visits, max_playouts=0, max_time=0)
    first = time.perf_counter() - start
    nodes = len(search.table)
    root = search.root
    assert root is not None
    start = time.perf_counter()
    search.run(None, None, max_visits=root.visits + 1, max_playouts=0, max_time=0)
    again = time.perf_counter() - start
    print(f"{visits} visits in {first:.1f} s, {nodes} nodes kept; the next search began in {1000 * again:.0f} ms "
          f"({1e6 * again / max(1, nodes):.0f} us a node)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
