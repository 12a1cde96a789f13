"""Helpers for comparing miai's search with KataGo's recorded searches (tests/tools/gen_search_reference.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from miai.engine.cli.compose import build_evaluator
from miai.engine.config import Config, set_option
from miai.engine.core.search import Search
from miai.engine.handicap import dynamic_pda_for_white
from miai.go.coords import Color, to_gtp
from miai.go.state import GameState
from miai.nets.evaluator import CachingEvaluator, set_playout_advantage
from tests.nets.reference_cases import load_records, state_from_record

# KataGo's search is deterministic with one thread and nnRandomize = false; so is miai's with these settings: one leaf
# at a time, and none chosen while another is being evaluated (search.overlap is the analogue of a second thread).
# onnxruntime fp32 pinned: the visit-for-visit parity is a claim about fp32, and net.backend=auto could pick bf16.
DETERMINISTIC = ("net.symmetry=fixed", "search.batch_size=1", "search.overlap=false", "net.threads=1",
                 "net.backend=onnxruntime", "net.precision=fp32")


def positions(rows: Sequence[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], GameState]]:
    """Each row with its position, replayed from the shared reference file it names."""
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["reference"], row["id"])
        if key not in records:
            records.update({(row["reference"], r["id"]): r for r in load_records(row["reference"])})
        record = records[key]
        row = {**row, "rules": record["rules"] if isinstance(record["rules"], str) else "json"}
        yield row, state_from_record(record)


@lru_cache(maxsize=4)
def _evaluator(net: Path, sets: tuple[str, ...]) -> tuple[Any, Config]:
    config = Config()
    for item in (*DETERMINISTIC, *sets):
        key, value = item.split("=", 1)
        config = set_option(config, key, value)
    return build_evaluator(str(net), config, progress=False), config


def miai_search(net: Path, state: GameState, visits: int, sets: Sequence[str] = ()) -> tuple[dict[str, int],
                                                                                        dict[str, float]]:
    """A fresh deterministic miai search of ``visits``: root move (GTP vertex, upper case) -> edge visits, and
    the root figures it reports (winrate, scoreLead, utility from the side to move's view, as KataGo's
    rootInfo). The evaluation cache is emptied first, as KataGo's reference searches began with ``clear_cache``:
    keyed by the situation, an entry from an earlier search would carry another history."""
    evaluator, config = _evaluator(net, tuple(sets))
    if isinstance(evaluator, CachingEvaluator):
        evaluator.clear()
    # As KataGo's genmove-like searches: the dynamic playout doubling advantage of a fresh position (the cap).
    for_white = dynamic_pda_for_white(state, config.player.dynamic_pda_cap_per_opp_lead, [], 0.0)
    set_playout_advantage(evaluator, int(Color.WHITE), for_white)
    search = Search(evaluator, config.search)
    search.set_root(state)
    snapshot = search.run(None, None, max_visits=visits, max_playouts=0, max_time=0)
    if search.root is None:  # the game is over: nothing to search
        return {}, {}
    root = snapshot.reported or snapshot.root
    assert root.utility is not None
    edges = {to_gtp(e.move, state.size).upper(): e.visits for e in search.root.edges if e.visits}
    return edges, {"winrate": root.winrate, "scoreLead": root.score_lead, "utility": root.utility}
