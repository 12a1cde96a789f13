"""A soak of ``miai analysis``: 10,000 queries against one process, as a busy client sends them.

Analysis queries (small maxVisits, several in flight, one or two turns each, some reporting during the search),
``terminate`` (of open queries, of some of their turns, of ids that never existed), ``terminate_all``,
``query_version``, lines that are no JSON object (bad JSON, bytes that are no UTF-8, a JSON array, no id) and queries
with a bad field, mixed at random (seeded). Every query is answered as KataGo's docs/Analysis_Engine.md says: each
analysed turn ends with exactly one response whose ``isDuringSearch`` is false (``noResults`` only for a turn a
terminate could reach), no report after it; an action is echoed once; a bad field gets one error carrying the id and
the field; a line that is no query gets one error without an id. The engine's memory stays flat (the last quarter's
RSS against the second's, the first being warm-up), nothing hangs (the soak has a deadline) and the engine exits
cleanly when stdin closes.

The uniform evaluator keeps 10,000 queries inside the deadline: what is soaked is the engine's queueing, answering and
bookkeeping, not the net. Its evaluation cache is kept small (nnCacheSizePowerOfTwo=10), so that it is full after the
warm-up and a growing cache cannot hide or pass for a leak.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

QUERIES = 10_000
IN_FLIGHT = 8  # analysis queries open at once, at most
DEADLINE = 170.0  # seconds for the whole soak, so that a hang fails it instead of stalling the suite
RSS_TOLERANCE = 0.10

# Legal games on two boards: a query analyses a prefix of one.
GAMES = {9: ["E5", "C3", "G7", "C6", "F3", "D7", "G4", "C4"], 7: ["D4", "C3", "E5", "C5", "E3", "B4"]}

# Query fields that cannot be used, each with the field KataGo's error names.
BAD_FIELDS: list[tuple[dict[str, Any], str]] = [
    ({"komi": "seven"}, "komi"),
    ({"boardXSize": 40, "boardYSize": 40}, "boardXSize"),
    ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves"),
    ({"maxVisits": 0}, "maxVisits"),
    ({"analyzeTurns": [99]}, "analyzeTurns"),
    ({"rules": "nonsense"}, "rules"),
    ({"includeOwnership": "yes"}, "includeOwnership"),
    ({"reportDuringSearchEvery": -1}, "reportDuringSearchEvery"),
]
BAD_ACTIONS: list[tuple[dict[str, Any], str]] = [
    ({"action": "frobnicate"}, "action"),
    ({"action": "terminate"}, "terminateId"),
    ({"action": "terminate", "terminateId": "a0", "turnNumbers": "all"}, "turnNumbers"),
]
# Lines that are no query: each gets one error without an id.
NOT_QUERIES = [b'{"id": "x", "moves": [', b"analyse this please", b"[1, 2, 3]", b'{"moves": []}',
               b'{"id": "caf\xe9", "action": "query_version"}', b'{"id": 5, "action": "query_version"}']


def analysis_query(query_id: str, rng: random.Random) -> tuple[dict[str, Any], list[int]]:
    size = rng.choice([7, 9])
    moves = GAMES[size][:rng.randint(0, len(GAMES[size]))]
    turns = sorted(rng.sample(range(len(moves) + 1), k=min(len(moves) + 1, rng.choice([1, 1, 2]))))
    query: dict[str, Any] = {
        "id": query_id, "rules": rng.choice(["tromp-taylor", "japanese", "chinese"]), "komi": 7.5,
        "boardXSize": size, "boardYSize": size, "analyzeTurns": turns,
        # A few long searches, for terminates to stop mid-way.
        "maxVisits": rng.randint(1, 6) if rng.random() < 0.97 else 300,
        "moves": [["BW"[i % 2], move] for i, move in enumerate(moves)], "priority": rng.randint(0, 2)}
    if rng.random() < 0.1:
        query["reportDuringSearchEvery"] = 0.001
    if rng.random() < 0.2:
        query["includeOwnership"] = query["includePolicy"] = True
    return query, turns


@dataclass
class Ledger:
    """What was sent and what came back, filled by the writer (the test) and the reader thread."""

    open: dict[str, set[int]] = field(default_factory=dict)  # analysis id -> turns without their final response
    max_visits: dict[str, int] = field(default_factory=dict)
    reachable: set[str] = field(default_factory=set)  # analysis ids a terminate or terminate_all was sent for
    echoes: dict[str, dict[str, Any]] = field(default_factory=dict)  # action id -> the action sent
    bad: dict[str, str] = field(default_factory=dict)  # query id -> the field its error must name
    not_queries: int = 0
    responses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    without_id: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def read(self, stdout: Any) -> None:
        """The reader thread: every stdout line, as the engine writes it."""
        for raw in stdout:
            try:
                response = json.loads(raw)
            except ValueError:
                self.problems.append(f"not JSON on stdout: {raw[:200]!r}")
                continue
            with self.changed:
                self._take(response)
                self.changed.notify_all()

    def _take(self, response: dict[str, Any]) -> None:
        query_id = response.get("id")
        if query_id is None:
            self.without_id.append(response)
            return
        self.responses.setdefault(query_id, []).append(response)
        if "turnNumber" in response and response["isDuringSearch"] is False:
            turns = self.open.get(query_id, set())
            if response["turnNumber"] not in turns:
                self.problems.append(f"a second final response or one never asked for: {response}")
                return
            turns.discard(response["turnNumber"])
            if not turns:
                del self.open[query_id]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the engine's memory from /proc")
def test_ten_thousand_mixed_queries_all_answered_memory_flat(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "miai.engine", "analysis", "-model", "uniform",
                             "-analysis-threads", "2", "-override-config", "nnCacheSizePowerOfTwo=10"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                            env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    ledger = Ledger()
    reader = threading.Thread(target=ledger.read, args=(proc.stdout,), daemon=True)
    reader.start()
    errors: list[bytes] = []
    stderr = proc.stderr
    threading.Thread(target=lambda: errors.extend(stderr), daemon=True).start()
    rng = random.Random(72)
    kinds = Counter[str]()
    rss: list[int] = []
    start = time.monotonic()
    deadline = start + DEADLINE
    try:
        for n in range(QUERIES):
            kind = rng.choices(["analysis", "terminate", "terminate_all", "version", "not_query", "bad"],
                               weights=[45, 15, 3, 12, 10, 15])[0]
            kinds[kind] += 1
            line = _next_line(kind, n, rng, ledger, deadline)
            proc.stdin.write(line + b"\n")
            proc.stdin.flush()
            if n % 250 == 249:
                rss.append(rss_kib(proc.pid))
        with ledger.changed:
            assert ledger.changed.wait_for(lambda: not ledger.open and _all_echoed(ledger),
                                           timeout=max(0.0, deadline - time.monotonic())), \
                f"unanswered after {DEADLINE} s: {sorted(ledger.open)[:20]}"
        elapsed = time.monotonic() - start
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)

    assert ledger.problems == []
    _check_analyses(ledger)
    _check_actions_and_errors(ledger)
    assert len(ledger.without_id) == ledger.not_queries, ledger.without_id[:5]
    assert all(set(e) == {"error"} for e in ledger.without_id)
    quarter = len(rss) // 4
    second, last = sorted(rss[quarter:2 * quarter]), sorted(rss[-quarter:])
    first_mid, last_mid = second[len(second) // 2], last[len(last) // 2]
    answers = [r for query_id in ledger.max_visits for r in ledger.responses[query_id]]
    no_results = sum(1 for r in answers if r.get("noResults"))
    reports = sum(1 for r in answers if r["isDuringSearch"])
    cut = sum(1 for r in answers if not r["isDuringSearch"] and "rootInfo" in r
              and 1 < r["rootInfo"]["visits"] < ledger.max_visits[r["id"]])
    print(f"\nsoak: {QUERIES} queries in {elapsed:.1f} s ({QUERIES / elapsed:.0f}/s), {dict(kinds)}; "
          f"{no_results} turns terminated before a visit, {cut} stopped mid-way, {reports} reports during a search; "
          f"RSS median "
          f"{first_mid / 1024:.1f} MiB (2nd quarter) -> {last_mid / 1024:.1f} MiB (last quarter), "
          f"{100 * (last_mid - first_mid) / first_mid:+.1f}%")
    assert abs(last_mid - first_mid) <= RSS_TOLERANCE * first_mid, rss
    assert b"Traceback" not in b"".join(errors), b"".join(errors)[-3000:]


def _next_line(kind: str, n: int, rng: random.Random, ledger: Ledger, deadline: float) -> bytes:
    """The query line of this kind, entered in the ledger before it is sent (the reader may answer at once)."""
    with ledger.changed:
        if kind == "analysis":
            assert ledger.changed.wait_for(lambda: len(ledger.open) < IN_FLIGHT,
                                           timeout=max(0.0, deadline - time.monotonic())), \
                f"{IN_FLIGHT} analyses still open at the deadline: {sorted(ledger.open)}"
            query, turns = analysis_query(f"a{n}", rng)
            ledger.open[query["id"]] = set(turns)
            ledger.max_visits[query["id"]] = query["maxVisits"]
            return json.dumps(query).encode()
        if kind == "terminate":
            targets = sorted(ledger.open) or ["nobody"]
            target = rng.choice(targets + ["never-sent"])
            action: dict[str, Any] = {"id": f"t{n}", "action": "terminate", "terminateId": target}
            if target in ledger.open and rng.random() < 0.3:
                action["turnNumbers"] = sorted(ledger.open[target])[:1]
            ledger.reachable.add(target)
            ledger.echoes[action["id"]] = action
            return json.dumps(action).encode()
        if kind == "terminate_all":
            ledger.reachable.update(ledger.open)
            ledger.echoes[f"x{n}"] = action = {"id": f"x{n}", "action": "terminate_all"}
            return json.dumps(action).encode()
        if kind == "version":
            ledger.echoes[f"v{n}"] = action = {"id": f"v{n}", "action": "query_version"}
            return json.dumps(action).encode()
        if kind == "not_query":
            ledger.not_queries += 1
            return rng.choice(NOT_QUERIES)
        fields, named = rng.choice(BAD_FIELDS + BAD_ACTIONS)
        query = analysis_query(f"b{n}", rng)[0] if "action" not in fields else {"id": f"b{n}"}
        query.pop("analyzeTurns", None)  # (turns of the original moves would be the first field found wrong)
        query.update(fields)
        ledger.bad[query["id"]] = named
        return json.dumps(query).encode()


def _all_echoed(ledger: Ledger) -> bool:
    return all(query_id in ledger.responses for query_id in list(ledger.echoes) + list(ledger.bad))


def _check_analyses(ledger: Ledger) -> None:
    for query_id, visits in ledger.max_visits.items():
        responses = ledger.responses[query_id]
        assert all("error" not in r and "warning" not in r for r in responses), responses
        for turn in {r["turnNumber"] for r in responses}:
            ours = [r for r in responses if r["turnNumber"] == turn]
            assert ours[-1]["isDuringSearch"] is False  # the final one comes last, alone
            assert all(r["isDuringSearch"] for r in ours[:-1]), ours
            final = ours[-1]
            if final.get("noResults"):
                assert query_id in ledger.reachable, final  # only a terminate leaves a turn without results
            else:
                searched = final["rootInfo"]["visits"]
                assert 1 <= searched <= visits, final["rootInfo"]
                assert bool(final["moveInfos"]) == (searched > 1)  # the first visit is the root's own


def _check_actions_and_errors(ledger: Ledger) -> None:
    for query_id, action in ledger.echoes.items():
        (echo,) = ledger.responses[query_id]
        if action["action"] == "query_version":
            assert echo["version"] == "1.17.2" and echo["git_hash"] == "<omitted>"
            echo = {k: v for k, v in echo.items() if k in action}
        assert echo == action
    for query_id, named in ledger.bad.items():
        (error,) = ledger.responses[query_id]
        assert error["field"] == named and error["error"], error
