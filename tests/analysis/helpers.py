"""Driving the analysis engine in-process: query lines in, parsed response lines out."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from miai.engine.analysis.server import AnalysisServer
from miai.engine.analysis.settings import AnalysisSettings, apply_settings, base_settings
from miai.engine.config import Config, set_option


@lru_cache(maxsize=1)
def default_net() -> Any:
    """miai's bundled nets (one evaluator for the whole test session; it is thread-safe)."""
    from miai.engine.cli.compose import build_evaluator

    # The identity symmetry, so that two searches of one position agree exactly (KataGo's random one is the default).
    return build_evaluator("default", set_option(Config(), "net.symmetry", "fixed"), progress=False)


def settings(**katago: Any) -> AnalysisSettings:
    """Analysis settings as from a KataGo config with these keys."""
    base, _ = base_settings(None)
    return apply_settings(base, katago).settings if katago else base


def query(**fields: Any) -> dict[str, Any]:
    """A 9x9 query with KataGo's required fields filled in (override any of them)."""
    return {"id": "q", "moves": [], "rules": "tromp-taylor", "komi": 7, "boardXSize": 9, "boardYSize": 9,
            "maxVisits": 20, **fields}


def serve(lines: Iterable[dict[str, Any] | str], *, evaluator: Any = None, config: AnalysisSettings | None = None,
          delay: float = 0.0, threads: int = 1) -> list[dict[str, Any]]:
    """Run a server over these query lines (dicts are dumped to JSON) until every turn is answered.

    ``delay`` holds the net back that long after the lines are read, so every query is queued before any search."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    net = evaluator if evaluator is not None else default_net()

    def load() -> Any:
        time.sleep(delay)
        return net

    chosen = dataclasses.replace(config or settings(), analysis_threads=threads)
    out, err = io.StringIO(), io.StringIO()
    AnalysisServer(load, chosen, out, err).serve(io.StringIO(text))
    return [json.loads(line) for line in out.getvalue().splitlines()]


def finals(responses: list[dict[str, Any]], query_id: str = "q") -> list[dict[str, Any]]:
    """The final (not isDuringSearch) analyses of one query id, in output order."""
    return [r for r in responses if r.get("id") == query_id and "turnNumber" in r and not r["isDuringSearch"]]


def only(responses: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    found = [r for r in responses if test(r)]
    assert len(found) == 1, responses
    return found[0]
