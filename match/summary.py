"""The results of a match: game records, the summary (wins, Elo, SPRT, JSON) and the live progress table.

`miai.match.runner` plays the games and builds these; they are plain frozen dataclasses so a caller can keep,
print or serialise them. Everything is from engine A's point of view (A is the first engine of the match).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from miai.match.config import MatchConfig
from miai.match.elo import PAIR_SCORES, EloEstimate, SprtResult, estimate_elo, sprt, sprt_pentanomial

__all__ = [
    "RESIGN", "FINAL_SCORE", "COUNT", "ILLEGAL", "CRASH", "TIME", "VOID",
    "GameRecord", "EngineInfo", "MatchSummary", "summarize", "parse_score", "ProgressPrinter", "result_entry",
    "combine_entries", "pentanomial_counts",
]

# How a game was decided (GameRecord.method).
RESIGN, FINAL_SCORE, COUNT, ILLEGAL, CRASH, TIME, VOID = (
    "resign", "final_score", "count", "illegal", "crash", "time", "void"
)


# -- records -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameRecord:
    """One finished game. `winner` is "B", "W" or None (draw or void); A and B are the engine labels."""

    number: int  # 1-based
    black: str  # "A" or "B"
    white: str
    winner: str | None
    result: str  # SGF RE value: "B+R", "W+3.5", "B+T", "W+F", "0", "Void"
    method: str  # resign, final_score, count, illegal, crash, time or void
    reason: str  # human-readable detail
    moves: int
    seconds: float
    score: float | None = None  # White's final score when the game was scored (positive: White ahead)
    engine_scores: tuple[str | None, str | None] = (None, None)  # (Black's, White's) final_score answers
    culprit: str | None = None  # the engine that crashed, played illegally or lost on time
    move_times: tuple[float, ...] = ()  # seconds of every genmove answered with a move, in order
    thinking: tuple[tuple[int, float], tuple[int, float]] = ((0, 0.0), (0, 0.0))  # (genmoves, seconds): B, W
    sgf_path: str | None = None

    @property
    def winner_label(self) -> str | None:
        """"A" or "B" for the winning engine, None for a draw or a void game."""
        if self.winner == "B":
            return self.black
        if self.winner == "W":
            return self.white
        return None

    @property
    def is_void(self) -> bool:
        """Whether the game has no result (not counted as a draw)."""
        return self.method == VOID

    @property
    def points_a(self) -> float | None:
        """A's points from this game: 1 for a win, 1/2 for a draw, 0 for a loss; None for a void game."""
        if self.is_void:
            return None
        winner = self.winner_label
        return 0.5 if winner is None else 1.0 if winner == "A" else 0.0

    def to_json(self) -> dict[str, object]:
        """The record as a JSON-ready dict (``from_json`` reads it back)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> GameRecord:
        """A record from ``to_json``'s dict.

        Raises:
            ValueError: a field is missing or of the wrong kind.
        """
        try:
            fields = dict(data)
            scores = fields["engine_scores"]
            thinking = fields["thinking"]
            move_times = fields["move_times"]
            assert isinstance(scores, list) and isinstance(thinking, list) and isinstance(move_times, list)
            fields["engine_scores"] = (scores[0], scores[1])
            fields["thinking"] = ((int(thinking[0][0]), float(thinking[0][1])), (int(thinking[1][0]), float(thinking[1][1])))
            fields["move_times"] = tuple(float(t) for t in move_times)
            record = cls(**fields)  # type: ignore[arg-type]
        except (KeyError, TypeError, IndexError, AssertionError) as exc:
            raise ValueError(f"not a game record ({exc!r})") from None
        if not isinstance(record.number, int) or record.black not in ("A", "B") or record.white not in ("A", "B"):
            raise ValueError("not a game record (number or colours)")
        return record


@dataclass(frozen=True)
class EngineInfo:
    """How an engine was started and what it says it is."""

    label: str
    command: str
    name: str = "?"
    version: str = "?"

    @property
    def display(self) -> str:
        """Name and version, e.g. `GNU Go 3.8`."""
        return f"{self.name} {self.version}".strip()


@dataclass(frozen=True)
class MatchSummary:
    """The result of a match, from engine A's point of view."""

    config: MatchConfig
    engines: tuple[EngineInfo, EngineInfo]
    games: tuple[GameRecord, ...]
    elo: EloEstimate
    sprt: SprtResult | None = None
    stopped_early: bool = False

    @property
    def wins(self) -> tuple[int, int]:
        """(A's wins, B's wins)."""
        return self.elo.wins, self.elo.losses

    @property
    def draws(self) -> int:
        """Games that ended with a score of exactly 0."""
        return self.elo.draws

    @property
    def voids(self) -> int:
        """Games without a result."""
        return sum(1 for g in self.games if g.is_void)

    @property
    def pentanomial(self) -> tuple[int, int, int, int, int]:
        """Game pairs (one opening, colours swapped) in which A scored 0, 1/2, 1, 3/2 and 2 points."""
        return pentanomial_counts(self.games) if self.config.alternate else (0, 0, 0, 0, 0)

    @property
    def win_rate(self) -> float:
        """A's score (wins + draws/2) over the games with a result; 0.5 if there are none."""
        return self.elo.score

    def methods(self) -> dict[str, int]:
        """How many games each method decided."""
        return dict(Counter(g.method for g in self.games))

    def culprits(self) -> dict[str, dict[str, int]]:
        """Per engine label, how many games it forfeited by each of illegal / crash / time."""
        out: dict[str, dict[str, int]] = {"A": {}, "B": {}}
        for g in self.games:
            if g.culprit is not None:
                out[g.culprit][g.method] = out[g.culprit].get(g.method, 0) + 1
        return out

    def thinking(self) -> dict[str, dict[str, float]]:
        """Per engine label: genmoves answered, total seconds and mean seconds per genmove over all games."""
        totals = {"A": [0, 0.0], "B": [0, 0.0]}
        for g in self.games:
            for label, (moves, seconds) in zip((g.black, g.white), g.thinking):
                totals[label][0] += moves
                totals[label][1] += seconds
        return {label: {"genmoves": n, "seconds": t, "mean": t / n if n else 0.0} for label, (n, t) in totals.items()}

    def to_json(self) -> dict[str, object]:
        """The summary as a JSON-ready dict."""
        config = asdict(self.config)
        config["time"] = str(self.config.time) if self.config.time else None
        config["times"] = [control.spec() for control in self.config.times]
        return {
            "engines": {e.label: asdict(e) for e in self.engines},
            "config": config,
            "games_played": len(self.games),
            "wins": {"A": self.wins[0], "B": self.wins[1]},
            "draws": self.draws,
            "voids": self.voids,
            "win_rate_A": self.win_rate,
            "elo_A_minus_B": self.elo.to_json(),
            "pentanomial": list(self.pentanomial),
            "sprt": self.sprt.to_json() if self.sprt else None,
            "stopped_early": self.stopped_early,
            "methods": self.methods(),
            "forfeits": self.culprits(),
            "thinking": self.thinking(),
            "games": [{**asdict(g), "winner_label": g.winner_label} for g in self.games],
        }

    def write_json(self, path: str | Path) -> None:
        """Write `to_json()` to `path` (atomically: a reader never sees half a summary)."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        tmp.replace(target)

    def format(self) -> str:
        """A few lines for humans: standings, Elo, SPRT, how games ended."""
        a, b = self.engines
        lines = [
            f"A = {a.display} ({a.command})",
            f"B = {b.display} ({b.command})",
            f"{len(self.games)} games: A {self.wins[0]} - B {self.wins[1]}, {self.draws} draws, {self.voids} void; "
            f"A scores {100 * self.win_rate:.1f}%",
            f"Elo A - B: {self.elo}",
            "ended by: " + ", ".join(f"{k} {v}" for k, v in sorted(self.methods().items())),
            "seconds per move: " + ", ".join(f"{k} {v['mean']:.3f}" for k, v in self.thinking().items()),
        ]
        forfeits = {k: v for k, v in self.culprits().items() if v}
        if forfeits:
            lines.append("forfeits: " + "; ".join(
                f"{label} " + ", ".join(f"{method} {n}" for method, n in sorted(counts.items()))
                for label, counts in forfeits.items()))
        if self.config.alternate:
            lines.append("pairs by A's points 0, 1/2, 1, 3/2, 2 (pentanomial): "
                         + " ".join(str(n) for n in self.pentanomial))
        if self.sprt is not None:
            lines.append(str(self.sprt) + (" (stopped early)" if self.stopped_early else ""))
        return "\n".join(lines)


# -- scores ------------------------------------------------------------------------------------------------


def parse_score(text: str | None) -> float | None:
    """White's score from a `final_score` answer (`W+2.5` -> 2.5, `B+31` -> -31, `0` -> 0); None if unreadable.

    A result without a number (`B+R`, `W+`) is unreadable here: final_score must give a margin.
    """
    if text is None:
        return None
    text = text.strip().upper()
    if text in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(text) < 3 or text[0] not in "BW" or text[1] != "+":
        return None
    try:
        margin = float(text[2:])
    except ValueError:
        return None
    if not math.isfinite(margin):
        return None
    return margin if text[0] == "W" else -margin


# -- progress ------------------------------------------------------------------------------------------------


class ProgressPrinter:
    """The live table: a header, then one line per game with the running score, Elo and LLR (to stderr by default).

    On a terminal, a progress bar (tqdm) stays under the table: games done of the schedule, A's wins-losses-draws,
    Elo with its 95% interval, the SPRT's LLR and bounds, the games running on each node (`running`) and the move
    of the game last heard of (`move`). Anything else (a pipe, a log file) gets only the plain lines.
    """

    def __init__(self, stream: TextIO | None = None, total: int | None = None) -> None:
        """`total`: the games of the schedule, for the bar (default: from the first summary)."""
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self._header_done = False
        isatty = getattr(self.stream, "isatty", None)
        self._tty = bool(isatty and isatty())
        self._bar: Any = None
        self._lock = threading.RLock()
        self._standing = ""
        self._running = ""
        self._moving = ""
        self._drawn = 0.0

    def move(self, game: int, moves: int) -> None:
        """Show the move count of the game last heard of (terminals only; a log file gets only whole lines)."""
        if self._tty:
            with self._lock:
                self._moving = f"game {game} move {moves}"
                self._redraw(force=False)

    def running(self, by_node: Mapping[str, int]) -> None:
        """Show the games running on each node (terminals only)."""
        if self._tty:
            with self._lock:
                self._running = "running " + " ".join(f"{node}:{n}" for node, n in sorted(by_node.items()))
                self._redraw(force=True)

    def __call__(self, record: GameRecord, summary: MatchSummary) -> None:
        with self._lock:
            if not self._header_done:
                self._header_done = True
                a, b = summary.engines
                self._write(f"A = {a.display}\nB = {b.display}")
                self._write(f"{'game':>5} {'B':>2} {'W':>2} {'result':>8} {'moves':>5} {'secs':>7} {'method':<12}"
                            f"{'A-B-draw':>9}  Elo A-B (95%)" + ("   LLR" if summary.sprt is not None else ""))
            elo = summary.elo
            standing = f"{elo.wins}-{elo.losses}-{elo.draws}"
            llr = f"  {summary.sprt.llr:+5.2f}" if summary.sprt is not None else ""
            self._write(
                f"{record.number:>5} {record.black:>2} {record.white:>2} {record.result:>8} {record.moves:>5} "
                f"{record.seconds:>7.1f} {record.method:<12}{standing:>9}  "
                f"{elo.describe(compact=True)}{llr}"
                + (f"  [{record.reason}]" if record.method in (ILLEGAL, CRASH, TIME, VOID) else "")
            )
            if self._tty:
                self._standing = f"A-B-draw {standing} | Elo {elo.describe(compact=True)}"
                if summary.sprt is not None:
                    sprt = summary.sprt
                    self._standing += f" | LLR {sprt.llr:+.2f} ({sprt.lower:+.2f}, {sprt.upper:+.2f})"
                bar = self._ensure_bar(summary)
                bar.n = len(summary.games)
                self._redraw(force=True)

    def close(self) -> None:
        """Take the bar off the terminal (the table stays)."""
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None

    def _ensure_bar(self, summary: MatchSummary | None = None) -> Any:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, file=self.stream, unit="game", leave=False, dynamic_ncols=True,
                             bar_format="{n_fmt}/{total_fmt} games |{bar:12}| {elapsed} {desc}")
        if self._bar.total is None and summary is not None:
            self._bar.total = summary.config.games - summary.config.first_game + 1
        return self._bar

    def _redraw(self, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._drawn < 0.1:
            return
        self._drawn = now
        bar = self._ensure_bar()
        bar.set_description_str(" | ".join(filter(None, [self._standing, self._running, self._moving])),
                                refresh=False)
        bar.refresh()

    def _write(self, text: str) -> None:
        if self._bar is not None:
            self._bar.clear()
            print(text, file=self.stream, flush=True)
            self._bar.refresh()
        else:
            print(text, file=self.stream, flush=True)


# -- summary -----------------------------------------------------------------------------------------------


def summarize(
    config: MatchConfig, engines: tuple[EngineInfo, EngineInfo], games: Sequence[GameRecord], stopped_early: bool = False
) -> MatchSummary:
    """Count A's wins, draws and losses over `games` (void games excluded) into a MatchSummary."""
    winners = [g.winner_label for g in games if not g.is_void]
    wins, losses = winners.count("A"), winners.count("B")
    draws = winners.count(None)
    result = None
    if config.sprt is not None:  # pairs of games when colours alternate (fishtest's model), else game by game
        result = (sprt_pentanomial(pentanomial_counts(games), config.sprt) if config.alternate
                  else sprt(wins, draws, losses, config.sprt))
    return MatchSummary(config, engines, tuple(games), estimate_elo(wins, draws, losses), result, stopped_early)


def pentanomial_counts(games: Sequence[GameRecord]) -> tuple[int, int, int, int, int]:
    """Count the complete pairs among `games` by A's points in them (0, 1/2, 1, 3/2, 2).

    Games 2k-1 and 2k are a pair: the same opening with the colours swapped when colours alternate. A pair counts
    once both its games are in `games` with a result; a void game leaves its pair out.
    """
    halves: dict[int, list[float]] = {}
    for game in games:
        points = game.points_a
        if points is not None:
            halves.setdefault((game.number + 1) // 2, []).append(points)
    counts = [0] * len(PAIR_SCORES)
    for pair in halves.values():
        if len(pair) == 2:
            counts[round(2 * sum(pair))] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


# -- results kept elsewhere (a net's manifest) -----------------------------------------------------------------


_PAIRING_KEYS = ("A", "B", "size", "komi", "rules")
_COUNT_KEYS = ("games", "wins_A", "wins_B", "draws", "voids")


def result_entry(paths: Sequence[Path]) -> dict[str, object]:
    """The result of one or several ``miai match --json`` files as one record (engines, board, games, Elo).

    Several files are parts of one schedule (e.g. games 1-20 and 21-40 played as two streams side by side):
    they must pit the same engines on the same board; their games add up and the Elo is computed over all.

    Raises:
        ValueError: a file is not a ``miai match --json`` summary, or the files are of different pairings.
    """
    parts = [_Part.read(Path(path)) for path in paths]
    if not parts:
        raise ValueError("no match summary given")
    for path, part in zip(paths[1:], parts[1:]):
        if part.pairing != parts[0].pairing:
            raise ValueError(f"{path} is not the same pairing as {paths[0]} (engines, board size, komi, rules)")
    counts = [sum(column) for column in zip(*(part.counts for part in parts))]
    entry: dict[str, object] = dict(zip(_PAIRING_KEYS, parts[0].pairing))
    entry.update(zip(_COUNT_KEYS, counts))
    _add_elo(entry)
    for side, index in (("A", 0), ("B", 1)):
        moves = sum(part.genmoves[index] for part in parts)
        seconds = sum(part.seconds[index] for part in parts)
        entry[f"seconds_per_move_{side}"] = round(seconds / moves, 3) if moves else 0.0
        entry[f"genmoves_{side}"] = moves
    return entry


def combine_entries(stored: Mapping[str, object], new: Mapping[str, object]) -> dict[str, object]:
    """``stored`` (a ``result_entry`` kept in a manifest) with the games of ``new`` added: one schedule played
    in parts, whose earlier summary files need not exist any more.

    The counts add up and the Elo is computed over all games. Seconds per move are weighted by each part's
    move count, or by its games when either lacks one (entries stored before move counts were kept).

    Raises:
        ValueError: the entries are of different pairings (engines, board size, komi, rules), or one of them
            lacks a count or a time.
    """
    if any(stored.get(key) != new.get(key) for key in _PAIRING_KEYS):
        raise ValueError("the new games are not the same pairing (engines, board size, komi, rules) as the stored "
                         f"ones: {[new.get(key) for key in _PAIRING_KEYS]} against "
                         f"{[stored.get(key) for key in _PAIRING_KEYS]}")
    try:
        entry: dict[str, object] = {key: new[key] for key in _PAIRING_KEYS}
        entry.update({key: int(str(stored[key])) + int(str(new[key])) for key in _COUNT_KEYS})
        for side in ("A", "B"):
            entry.update(_combined_time(stored, new, side))
    except (KeyError, ValueError) as exc:
        raise ValueError(f"a match entry lacks {exc} or holds something else than a number there") from exc
    _add_elo(entry)
    return entry


def _combined_time(stored: Mapping[str, object], new: Mapping[str, object], side: str) -> dict[str, object]:
    """``side``'s seconds per move over both parts (and its move count when both kept one)."""
    moves_key, rate_key = f"genmoves_{side}", f"seconds_per_move_{side}"
    by_moves = moves_key in stored and moves_key in new
    weights = [float(str(part[moves_key if by_moves else "games"])) for part in (stored, new)]
    rates = [float(str(part[rate_key])) for part in (stored, new)]
    total = sum(weights)
    combined: dict[str, object] = {rate_key: round(sum(w * r for w, r in zip(weights, rates)) / total, 3)
                                   if total else 0.0}
    if by_moves:
        combined[moves_key] = round(total)
    return combined


def _add_elo(entry: dict[str, object]) -> None:
    elo = estimate_elo(int(str(entry["wins_A"])), int(str(entry["draws"])), int(str(entry["wins_B"])))
    entry.update(elo_A_minus_B=round(elo.elo), elo_95=[round(elo.low), round(elo.high)])


@dataclass(frozen=True)
class _Part:
    """What ``result_entry`` takes from one summary file."""

    pairing: tuple[str, str, int, float, str]  # engine A's and B's commands, size, komi, rules
    counts: tuple[int, int, int, int, int]  # games, wins of A, wins of B, draws, voids
    genmoves: tuple[int, int]  # A's, B's
    seconds: tuple[float, float]  # seconds of thinking in all, A's, B's

    @classmethod
    def read(cls, path: Path) -> _Part:
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
            config, engines, thinking, wins = summary["config"], summary["engines"], summary["thinking"], summary["wins"]
            return cls(
                (str(engines["A"]["command"]), str(engines["B"]["command"]), int(config["size"]),
                 float(config["komi"]), str(config["rules"])),
                (int(summary["games_played"]), int(wins["A"]), int(wins["B"]), int(summary["draws"]),
                 int(summary["voids"])),
                (int(thinking["A"]["genmoves"]), int(thinking["B"]["genmoves"])),
                (float(thinking["A"]["seconds"]), float(thinking["B"]["seconds"])),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} is not a miai match --json summary ({exc})") from exc
