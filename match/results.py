"""The durable results of a match: one JSON line per finished game in ``results.jsonl`` beside the SGF files.

A line is appended (and flushed to disk) as soon as a game ends, after its SGF file is written, so a match that is
stopped, killed or loses its machine keeps every game it finished. Rerunning the same command reads the file back:
the games in it are not played again but counted in the summary, each once (the first line of a game number wins).

The file's first line names the match (engines, board, rules, clock, openings, ...: ``match_identity``); a rerun
with another match in the same folder is refused rather than mixed in. ``--games`` and ``--first-game`` may change
between runs (they say which part of the schedule to play, not which match it is). A last line cut short by a crash
is dropped when the file is opened again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from miai.match.config import MatchConfig
from miai.match.summary import EngineInfo, GameRecord

__all__ = ["RESULTS_NAME", "ResultsError", "ResultsFile", "match_identity"]

RESULTS_NAME = "results.jsonl"
_FORMAT = 1  # the version of the file's layout, in its first line


class ResultsError(ValueError):
    """The results file cannot be read, or it holds another match's games."""


def match_identity(black_cmd: str, white_cmd: str, config: MatchConfig,
                   openings: Sequence[Sequence[int]]) -> dict[str, object]:
    """What makes two runs the same match: engines, board, rules, clock, limits and the openings' moves."""
    digest = hashlib.sha256(json.dumps([list(o) for o in openings]).encode()).hexdigest()[:16]
    return {
        "A": black_cmd, "B": white_cmd, "size": config.size, "komi": config.komi, "rules": config.rules,
        "handicap": config.handicap, "alternate": config.alternate,
        "time": config.time.spec() if config.time else None, "visits": config.visits,
        **({"times": [control.spec() for control in config.times]} if config.times else {}),
        "max_moves": config.move_limit, "openings": digest,
    }


@dataclass(frozen=True)
class _Loaded:
    records: dict[int, GameRecord]
    engines: tuple[EngineInfo, EngineInfo] | None


class ResultsFile:
    """``results.jsonl`` in a match's SGF folder: the games it holds, and an append-only writer for new ones."""

    def __init__(self, folder: str | Path, identity: dict[str, object]) -> None:
        """Open (or create) the file for the match `identity`.

        Raises:
            ResultsError: the file is unreadable or holds another match.
        """
        self.path = Path(folder) / RESULTS_NAME
        self.identity = identity
        loaded = self._load()
        self.records = loaded.records  # by game number
        self.engines = loaded.engines  # as the last game recorded them
        self._stream: TextIO | None = None

    def _load(self) -> _Loaded:
        if not self.path.exists():
            return _Loaded({}, None)
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise ResultsError(f"{self.path}: cannot read it ({exc.strerror})") from None
        if raw and not raw.endswith(b"\n"):  # a line cut short by a crash: drop it
            raw = raw[: raw.rfind(b"\n") + 1]
            self.path.write_bytes(raw)
        lines = raw.decode("utf-8", errors="replace").splitlines()
        if not lines:
            return _Loaded({}, None)
        self._check_header(lines[0])
        records: dict[int, GameRecord] = {}
        engines = None
        for number, line in enumerate(lines[1:], 2):
            try:
                entry = json.loads(line)
                record = GameRecord.from_json(entry["game"])
                engines = (EngineInfo(**entry["engines"]["A"]), EngineInfo(**entry["engines"]["B"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise ResultsError(f"{self.path}:{number}: not a game's result ({exc})") from None
            records.setdefault(record.number, record)
        return _Loaded(records, engines)

    def _check_header(self, line: str) -> None:
        try:
            header = json.loads(line)
            stored = header["match"]
            version = header["miai_match_results"]
        except (ValueError, KeyError, TypeError):
            raise ResultsError(f"{self.path}: not a miai match results file (its first line)") from None
        if version != _FORMAT:
            raise ResultsError(f"{self.path}: results format {version}, this miai reads {_FORMAT}")
        differ = [key for key in sorted(set(stored) | set(self.identity)) if stored.get(key) != self.identity.get(key)]
        if differ:
            key = differ[0]
            raise ResultsError(f"{self.path} holds the games of another match ({key}: {stored.get(key)!r} there, "
                               f"{self.identity.get(key)!r} now); give this match another --sgf-dir")

    def append(self, record: GameRecord, engines: tuple[EngineInfo, EngineInfo]) -> None:
        """Record a finished game durably (written and synced before this returns); a number already held is
        not written again."""
        if record.number in self.records:
            return
        if self._stream is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists() or self.path.stat().st_size == 0
            self._stream = self.path.open("a", encoding="utf-8")
            if new:
                self._write({"miai_match_results": _FORMAT, "match": self.identity})
        self._write({"game": record.to_json(), "engines": {e.label: _engine_json(e) for e in engines}})
        self.records[record.number] = record
        self.engines = engines

    def _write(self, entry: dict[str, object]) -> None:
        assert self._stream is not None
        self._stream.write(json.dumps(entry) + "\n")
        self._stream.flush()
        os.fsync(self._stream.fileno())

    def close(self) -> None:
        """Close the file (appending opens it again)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _engine_json(engine: EngineInfo) -> dict[str, str]:
    return {"label": engine.label, "command": engine.command, "name": engine.name, "version": engine.version}

