"""Engine-against-engine matches over GTP: `run_match(black_cmd, white_cmd, config) -> MatchSummary`.

The runner is the referee. It keeps its own `GameState` with the match's rules, so it checks every move itself
instead of trusting the engines, and it decides how each game ended:

- **resignation** (`resign` answered to genmove);
- **two consecutive passes** or the **move limit**, then scoring: if both engines answer `final_score` with the
  same result, that result stands (method `final_score`); otherwise miai counts the board itself (method
  `count`), by the rules' scoring with the dead stones from the optional `dead_stones(state)` callback, or with
  every stone alive (Tromp-Taylor style) when there is none;
- **forfeits**, recorded as such: an illegal or unparseable move (`illegal`), a crash or failed command
  (`crash`), no answer in time or an exhausted clock (`time`);
- a **void** game when an engine rejects a move the referee found legal (the engines disagree on the rules), or
  the opening could not be replayed to an engine: nobody wins, and it does not count for the Elo estimate.

A crashed or hung engine is killed and restarted for the next game; the match goes on. The first engine is
always called A (`black_cmd`, Black in odd-numbered games when colours alternate) and the second B; wins, win
rate and Elo are A's. Each game is written as an SGF with the result, rules, komi and per-move timings in
comments; a line per game goes to stderr (or to the `progress` callback).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from miai.match.config import MatchConfig
from miai.match.results import ResultsError, ResultsFile, match_identity
from miai.gtp.client import GtpClientError, GtpCommandError, GtpEngine, GtpTimeout, split_command
from miai.match.summary import (
    COUNT,
    CRASH,
    FINAL_SCORE,
    ILLEGAL,
    RESIGN,
    TIME,
    VOID,
    EngineInfo,
    GameRecord,
    MatchSummary,
    ProgressPrinter,
    parse_score,
    summarize,
)
from miai.go.clock import Clock, TimeControl, TimeSystem
from miai.go.coords import PASS, Color, parse_gtp, to_gtp
from miai.go.errors import InvalidMoveError, SgfError
from miai.go.scoring import dead_chains
from miai.go.sgf import format_sgf, game_from_state, read_sgf_file
from miai.go.state import GameState

if TYPE_CHECKING:  # only the interface; the caller picks and loads the net
    from miai.nets.evaluator import Evaluator

__all__ = [
    "MatchError",
    "MatchConfig",
    "MatchLedger",
    "GameSpec",
    "schedule_game",
    "play_game_sgf",
    "GameRecord",
    "MatchSummary",
    "EngineInfo",
    "run_match",
    "ownership_dead_stones",
    "load_openings",
    "parse_score",
    "summarize",
    "ProgressPrinter",
]

# The dead stones for miai's own count of a finished game (e.g. from a net's ownership).
DeadStones = Callable[[GameState], Sequence[int]]


def ownership_dead_stones(evaluator: Evaluator, threshold: float = 0.0) -> DeadStones:
    """A `dead_stones` callback from a net's ownership: a chain is dead where the net gives it to the opponent.

    A chain counts as dead when the net's mean ownership of its stones, seen from its colour, is below `-threshold`
    (ownership is in [-1, 1]; 0 keeps chains of doubtful ownership alive only if the net leans their way); chains
    live or die whole (`miai.go.scoring.dead_chains`).

    Raises (when called):
        MatchError: the net has no ownership output.
    """

    def dead_stones(state: GameState) -> list[int]:
        evaluation = evaluator.evaluate([state])[0]
        if evaluation.ownership is None:
            raise MatchError("the net has no ownership output; it cannot find dead stones")
        # Ownership is from the side to move's view.
        black_ownership = evaluation.ownership * (1.0 if state.to_play == Color.BLACK else -1.0)
        return dead_chains(state.board.colors(), state.size, black_ownership.tolist(), threshold)

    return dead_stones


class MatchError(Exception):
    """The match cannot start: an engine does not start or speak GTP, or the openings are bad."""


# -- openings and clock ---------------------------------------------------------------------


def load_openings(path: str | Path, config: MatchConfig) -> list[list[int]]:
    """Read openings: one per line, GTP vertices separated by spaces or commas, colours alternating from Black
    (from White after handicap stones).

    `#` starts a comment; blank lines are skipped. A `.sgf` file, or a directory of them, gives one opening per
    file (its main line, via miai.go.sgf; the repairs an old file needs are printed to stderr). Every opening is replayed under the match's rules, komi and handicap.

    Raises:
        MatchError: an unreadable vertex or SGF file, an illegal move, a wrong board size or an empty file.
    """
    source, size = Path(path), config.size
    if source.is_dir() or source.suffix.lower() == ".sgf":
        openings = _sgf_openings(source, size)
    else:
        openings = []
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split("#")[0].replace(",", " ").split()
            if words:
                try:
                    openings.append([parse_gtp(w, size) for w in words])
                except InvalidMoveError as exc:
                    raise MatchError(f"{source}:{number}: {exc}") from None
    if not openings:
        raise MatchError(f"no openings in {source}")
    for index, opening in enumerate(openings, 1):
        _check_opening(opening, config, f"{source} opening {index}")
    return openings


def _sgf_openings(source: Path, size: int) -> list[list[int]]:
    files = sorted(source.glob("*.sgf")) if source.is_dir() else [source]
    openings = []
    for file in files:
        try:
            game = read_sgf_file(file)
        except SgfError as exc:  # the message names the file, the problem and where
            raise MatchError(str(exc)) from None
        for warning in game.warnings:  # an old file's quirks, repaired: say so, once per repair
            print(f"match: warning: {warning}", file=sys.stderr)
        if game.size != size:
            raise MatchError(f"{file}: board size {game.size}, match size {size}")
        openings.append([move for _color, move in game.moves])
    return openings


def _check_opening(opening: list[int], config: MatchConfig, where: str) -> None:
    state = config.new_state()
    for number, move in enumerate(opening, 1):
        reason = state.legality(move) if move != PASS else None
        if reason is not None:
            raise MatchError(f"{where}: move {number} {to_gtp(move, config.size)} is illegal ({reason.value})")
        state.push(move)


def _clock_commands(control: TimeControl) -> list[tuple[str, str]]:
    """(command, line) that set ``control`` in an engine, the most faithful first: byo-yomi as kgs-time_settings,
    Fischer as kata-time_settings, else as GTP's time_settings approximates them (as gtp2ogs does: byo-yomi as
    Canadian periods of one stone after the other periods' time; Fischer as main time, then the increment a move)."""
    main = f"{control.main_time:g}"
    if control.system is TimeSystem.BYOYOMI:
        period = f"{control.period_time:g}"
        return [("kgs-time_settings", f"kgs-time_settings byoyomi {main} {period} {control.periods}"),
                ("time_settings", f"time_settings {control.main_time + (control.periods - 1) * control.period_time:g} "
                                  f"{period} 1")]
    if control.system is TimeSystem.FISCHER:
        return [("kata-time_settings", f"kata-time_settings fischer {main} {control.increment:g}"),
                ("time_settings", f"time_settings {main} {control.increment:g} 1")]
    return [("time_settings", f"time_settings {control.gtp_arguments()}")]


def _time_left_command(clock: Clock, color: Color) -> str:
    """GTP `time_left` for `color`'s clock: whole seconds, and stones 0 while in main time."""
    seconds, stones = clock.reading()
    return f"time_left {'b' if color == Color.BLACK else 'w'} {int(seconds)} {stones}"


# -- engines -------------------------------------------------------------------------------------------------


class _Warnings:
    """The warnings one engine's processes have printed, so that each is printed once (thread-safe)."""

    def __init__(self) -> None:
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def first(self, name: str) -> bool:
        """Whether ``name`` is new (it is now said)."""
        with self._lock:
            new = name not in self._said
            self._said.add(name)
            return new


class _Player:
    """An engine slot (A or B; with concurrent games, one per game in progress): starts, handshakes and
    restarts its GtpEngine."""

    def __init__(self, label: str, command: str | Sequence[str], config: MatchConfig, slot: int = 0,
                 warned: _Warnings | None = None) -> None:
        self.label = label
        self.log_name = f"{label}.stderr" if slot == 0 else f"{label}{slot + 1}.stderr"
        self.argv = split_command(command)
        self.command = command if isinstance(command, str) else " ".join(command)
        self.config = config
        self.engine: GtpEngine | None = None
        self.info = EngineInfo(label, self.command)
        self._warned = warned if warned is not None else _Warnings()  # shared by one engine's slots

    def ensure_started(self) -> GtpEngine:
        """The running engine, starting (or restarting) it if needed.

        Raises:
            GtpClientError: it cannot be started or does not answer the handshake.
        """
        if self.engine is not None and self.engine.alive:
            return self.engine
        if self.engine is not None:
            self.engine.close(timeout=1.0)
        log = Path(self.config.log_dir) / self.log_name if self.config.log_dir else None
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
        self.engine = GtpEngine(self.argv, name=self.label, stderr_log=log)
        self._handshake(self.engine)
        return self.engine

    def _handshake(self, engine: GtpEngine) -> None:
        version = engine.send("protocol_version", self.config.start_timeout)
        timeout = self.config.command_timeout
        if version.strip() not in ("2", "2.0"):
            raise GtpCommandError("protocol_version", f"unsupported GTP protocol version {version!r}")
        name = engine.try_send("name", timeout) or "?"
        version_text = engine.try_send("version", timeout) or ""
        self.info = replace(self.info, name=name.strip(), version=version_text.strip())
        engine.known_commands(timeout)

    def new_game(self, clock: TimeControl | None = None) -> None:
        """Set up a game: board size, clear, komi, rules, time and visits, as far as the engine supports.

        Raises:
            GtpClientError: a required command failed, or the engine died or hung.
        """
        engine = self.ensure_started()
        c = self.config
        t = c.command_timeout
        engine.send(f"boardsize {c.size}", t)
        engine.send("clear_board", t)
        engine.send(f"komi {c.komi:g}", t)
        self._optional(engine, "kata-set-rules", [f"kata-set-rules {c.rules}"])
        if clock is not None:
            commands = _clock_commands(clock)
            name, line = next(((n, x) for n, x in commands if engine.knows(n)), commands[-1])
            self._optional(engine, name, [line])
        if c.visits is not None:
            # KataGo spells the parameter maxVisits, miai max_visits.
            self._optional(engine, "kata-set-param", [f"kata-set-param {key} {c.visits}"
                                                      for key in ("maxVisits", "max_visits")])

    def _optional(self, engine: GtpEngine, name: str, commands: Sequence[str]) -> None:
        """Send the first of `commands` the engine accepts if it lists `name`; else warn once (to stderr)."""
        if engine.knows(name):
            for command in commands:
                if engine.try_send(command, self.config.command_timeout) is not None:
                    return
            problem = f"refused {commands[-1]!r}"
        else:
            problem = f"does not list {name}, so {commands[0]!r} was not sent; set it on its command line"
        if self._warned.first(name):
            print(f"match: engine {self.label} ({self.info.display}) {problem}", file=sys.stderr)

    def close(self) -> None:
        """Quit the engine if it runs."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None


# -- one game ------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _GameEnd(Exception):
    """Raised inside a game to end it early with a result."""

    winner: str | None
    result: str
    method: str
    reason: str
    culprit: str | None = None


@dataclass
class _Game:
    """The mutable state of the game being played."""

    number: int
    players: dict[Color, _Player]
    config: MatchConfig
    state: GameState
    clocks: dict[Color, Clock] = field(default_factory=dict)
    move_times: list[float | None] = field(default_factory=list)  # per move; None for opening moves
    thinking: dict[Color, list[float]] = field(default_factory=lambda: {Color.BLACK: [], Color.WHITE: []})
    notes: dict[int, str] = field(default_factory=dict)  # extra SGF move comments, by 1-based move number
    engine_scores: tuple[str | None, str | None] = (None, None)
    score: float | None = None
    on_move: Callable[[int, int], None] | None = None  # (game number, moves played) after every move


def _letter(color: Color) -> str:
    return "B" if color == Color.BLACK else "W"


def _forfeit(color: Color, player: _Player, method: str, reason: str) -> _GameEnd:
    """The opponent of `color` wins because `color`'s engine broke a rule, crashed or ran out of time."""
    suffix = "T" if method == TIME else "F"
    return _GameEnd(_letter(color.opponent), f"{_letter(color.opponent)}+{suffix}", method,
                    f"{_letter(color)} ({player.label}): {reason}", culprit=player.label)


def _engine_failure(color: Color, player: _Player, exc: GtpClientError, doing: str) -> _GameEnd:
    """Turn a GTP client error of `color`'s engine into a forfeit with the right method."""
    if isinstance(exc, GtpTimeout):
        return _forfeit(color, player, TIME, f"no answer to {doing} within {exc.timeout:g} s")
    return _forfeit(color, player, CRASH, f"{doing}: {exc}")


def _setup(game: _Game, opening: Sequence[int]) -> None:
    for color, player in game.players.items():
        try:
            player.new_game(game.config.clock(game.number))
        except GtpClientError as exc:
            raise _engine_failure(color, player, exc, "game setup") from None
    if game.config.handicap:
        for color, player in game.players.items():
            _place_handicap(game, color, player)
    for move in opening:
        color = game.state.to_play
        game.state.push(move)
        game.move_times.append(None)
        for receiver in (Color.BLACK, Color.WHITE):  # neither engine chose an opening move: both are told
            _tell(game, receiver, color, move)
    if opening:
        game.notes[len(opening)] = f"end of opening ({len(opening)} moves)"


def _place_handicap(game: _Game, color: Color, player: _Player) -> None:
    """Put the referee's handicap stones on the engine's board: set_free_handicap if listed, else fixed_handicap
    (checked to give the same points)."""
    engine = player.engine
    assert engine is not None
    size, timeout = game.config.size, game.config.command_timeout
    points = sorted(m for m in range(size * size) if game.state.color_at(m) == Color.BLACK)
    try:
        if engine.knows("set_free_handicap"):
            engine.send("set_free_handicap " + " ".join(to_gtp(p, size) for p in points), timeout)
            return
        answer = engine.send(f"fixed_handicap {game.config.handicap}", timeout)
    except GtpClientError as exc:
        raise _engine_failure(color, player, exc, "handicap placement") from None
    try:
        placed = sorted(parse_gtp(v, size) for v in answer.split())
    except InvalidMoveError:
        placed = []
    if placed != points:
        raise _forfeit(color, player, CRASH, f"fixed_handicap placed {answer!r}, the referee "
                       + " ".join(to_gtp(p, size) for p in points))


def _tell_opponent(game: _Game, color: Color, move: int) -> None:
    """Send the move to the other engine (the mover chose it with genmove, so its board has it already)."""
    _tell(game, color.opponent, color, move)


def _tell(game: _Game, receiver: Color, color: Color, move: int) -> None:
    """Send ``play color move`` to the engine playing ``receiver``; a rejection of a referee-legal move voids the
    game."""
    other = game.players[receiver]
    assert other.engine is not None
    command = f"play {_letter(color)} {to_gtp(move, game.config.size)}"
    try:
        other.engine.send(command, game.config.command_timeout)
    except GtpCommandError as exc:
        raise _GameEnd(None, "Void", VOID, f"{_letter(receiver)} ({other.label}) rejected the legal "
                       f"{command!r}: {exc.message}") from None
    except GtpClientError as exc:
        raise _engine_failure(receiver, other, exc, repr(command)) from None


def _genmove(game: _Game, color: Color) -> str:
    """Ask `color`'s engine for a move, with its clock; returns its answer (lower case)."""
    player = game.players[color]
    engine = player.engine
    assert engine is not None
    timeout = game.config.move_timeout
    clock = game.clocks.get(color)
    try:
        if clock is not None:
            engine.try_send(_time_left_command(clock, color), game.config.command_timeout)
            timeout = min(timeout, clock.allowance() + game.config.time_margin)
        start = time.monotonic()
        answer = engine.send(f"genmove {_letter(color)}", timeout)
    except GtpClientError as exc:
        raise _engine_failure(color, player, exc, "genmove") from None
    elapsed = time.monotonic() - start
    game.move_times.append(elapsed)
    game.thinking[color].append(elapsed)
    if clock is not None and clock.charge(elapsed) > game.config.time_margin:
        raise _forfeit(color, player, TIME, f"clock overrun ({elapsed:.2f} s for this move)")
    return answer.strip().lower()


def _play_one_move(game: _Game) -> None:
    color = game.state.to_play
    player = game.players[color]
    answer = _genmove(game, color)
    if answer == "resign":
        raise _GameEnd(_letter(color.opponent), f"{_letter(color.opponent)}+R", RESIGN,
                       f"{_letter(color)} ({player.label}) resigned")
    try:
        move = parse_gtp(answer, game.config.size)
    except InvalidMoveError:
        raise _forfeit(color, player, ILLEGAL, f"unreadable move {answer!r}") from None
    reason = game.state.legality(move) if move != PASS else None
    if reason is not None:
        raise _forfeit(color, player, ILLEGAL, f"illegal move {answer.upper()} ({reason.value})")
    game.state.push(move)
    _tell_opponent(game, color, move)
    if game.on_move is not None:
        game.on_move(game.number, len(game.state.moves))


def _score_game(game: _Game, dead_stones: DeadStones | None, why: str) -> _GameEnd:
    """Adjudicate a finished game: the engines' agreed final_score (or agreed winner), else miai's own count."""
    answers = []
    for color in (Color.BLACK, Color.WHITE):
        engine = game.players[color].engine
        try:
            answers.append(engine.try_send("final_score", game.config.command_timeout) if engine else None)
        except GtpClientError:
            answers.append(None)  # a crash while scoring costs no game: the referee counts instead
    game.engine_scores = (answers[0], answers[1])
    scores = [parse_score(a) for a in answers]
    if scores[0] is not None and scores[0] == scores[1]:
        score, method, how = scores[0], FINAL_SCORE, "both engines' final_score"
    elif scores[0] is not None and scores[1] is not None and _same_winner(scores[0], scores[1]):
        # The winner is settled; an all-alive count could overturn it when dead stones remain on the board.
        score = min(scores[0], scores[1], key=abs)
        method, how = FINAL_SCORE, f"engines agree on the winner, not the margin ({answers[0]} / {answers[1]})"
    else:
        score, how = _count(game.state, dead_stones)
        method = COUNT
        if dead_stones is None and None not in scores:  # the winner may rest on stones one engine calls dead
            print(f"match: game {game.number}: the engines disagree on the winner ({answers[0]} / {answers[1]}); "
                  "every stone counted alive (--dead-model NET judges dead stones)", file=sys.stderr)
        how += f" (engines said {answers[0] or '-'} / {answers[1] or '-'})"
    game.score = score
    winner = None if score == 0 else ("W" if score > 0 else "B")
    return _GameEnd(winner, game.state.result_string(score), method, f"{why}; {how}")


def _same_winner(a: float, b: float) -> bool:
    return (a > 0 and b > 0) or (a < 0 and b < 0)


def _count(state: GameState, dead_stones: DeadStones | None) -> tuple[float, str]:
    """miai's own count (White's view) and how it was made; a failing dead-stone callback means all alive."""
    if dead_stones is not None:
        try:
            dead = list(dead_stones(state))
        except Exception as exc:  # noqa: BLE001 - one bad evaluation must not end a long match
            print(f"match: dead-stone detection failed ({exc}); counting every stone as alive", file=sys.stderr)
            return state.tromp_taylor_score(), f"miai's count, all stones alive (dead-stone detection failed: {exc})"
        return state.score(dead), f"miai's count with {len(dead)} dead stones"
    return state.tromp_taylor_score(), "miai's count, all stones alive"


def _play(game: _Game, opening: Sequence[int], dead_stones: DeadStones | None) -> _GameEnd:
    try:
        _setup(game, opening)
        while True:
            if game.state.is_over():
                return _score_game(game, dead_stones, "two passes")
            if len(game.state.moves) >= game.config.move_limit:
                return _score_game(game, dead_stones, f"move limit {game.config.move_limit}")
            _play_one_move(game)
    except _GameEnd as end:
        return end


def _total(times: list[float]) -> tuple[int, float]:
    return len(times), sum(times)


def play_game(
    number: int,
    black: _Player,
    white: _Player,
    config: MatchConfig,
    opening: Sequence[int] = (),
    dead_stones: DeadStones | None = None,
    on_move: Callable[[int, int], None] | None = None,
) -> GameRecord:
    """Play one game between two engine slots and return its record (also written as SGF if configured)."""
    record, sgf = play_game_sgf(number, black, white, config, opening, dead_stones, on_move)
    return write_sgf(record, sgf, config.sgf_dir)


def play_game_sgf(
    number: int,
    black: _Player,
    white: _Player,
    config: MatchConfig,
    opening: Sequence[int] = (),
    dead_stones: DeadStones | None = None,
    on_move: Callable[[int, int], None] | None = None,
) -> tuple[GameRecord, str]:
    """Play one game between two engine slots: its record and its SGF text (written nowhere)."""
    state = config.new_state()
    game = _Game(number, {Color.BLACK: black, Color.WHITE: white}, config, state, on_move=on_move)
    control = config.clock(number)
    if control is not None:
        game.clocks = {Color.BLACK: Clock(control), Color.WHITE: Clock(control)}
    start = time.monotonic()
    end = _play(game, opening, dead_stones)
    record = GameRecord(
        number=number, black=black.label, white=white.label, winner=end.winner, result=end.result,
        method=end.method, reason=end.reason, moves=len(state.moves), seconds=time.monotonic() - start,
        score=game.score, engine_scores=game.engine_scores, culprit=end.culprit,
        move_times=tuple(t for t in game.move_times if t is not None),
        thinking=(_total(game.thinking[Color.BLACK]), _total(game.thinking[Color.WHITE])),
    )
    if record.method in (ILLEGAL, CRASH, TIME, VOID, RESIGN) and record.moves:
        # Say on the last move why the game stopped there (an illegal move itself is not in the record).
        game.notes[record.moves] = "; ".join(filter(None, [game.notes.get(record.moves), record.reason]))
    return record, game_sgf(game, record)


def write_sgf(record: GameRecord, sgf: str, sgf_dir: str | None) -> GameRecord:
    """Write the game's SGF as `sgf_dir`/game-NNNN.sgf (if a folder is given); the record with its path."""
    if sgf_dir is None:
        return record
    path = Path(sgf_dir) / f"game-{record.number:04d}.sgf"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(sgf, encoding="utf-8")
    tmp.replace(path)  # a game stopped while writing leaves no half file
    return replace(record, sgf_path=str(path))


# -- SGF -----------------------------------------------------------------------------------------------------


def game_sgf(game: _Game, record: GameRecord) -> str:
    """The game as SGF: result, rules, komi, engines, how it ended (root comment), each move's time (comments)."""
    config = game.config
    names = {c: f"{game.players[c].info.display} ({game.players[c].label})" for c in (Color.BLACK, Color.WHITE)}
    comments = []
    for number, seconds in enumerate(game.move_times, 1):
        parts = [f"{seconds:.3f} s"] if seconds is not None else []
        if number in game.notes:
            parts.append(game.notes[number])
        comments.append("; ".join(parts) or None)
    sgf_game = game_from_state(
        game.state, record.result, comments=comments, black_player=names[Color.BLACK],
        white_player=names[Color.WHITE], date=datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    )
    root = [f"miai match game {record.number}: Black {record.black}, White {record.white}",
            f"ended by {record.method}: {record.reason}"]
    control = config.clock(record.number)
    if control is not None:
        root.append(f"time control {control.spec()} (seconds: M main, +B/S Canadian, +PxB byo-yomi, +If Fischer)")
    return format_sgf(replace(sgf_game, root_comment="\n".join(root)), program="miai match")


# -- the match -----------------------------------------------------------------------------------------------


def run_match(
    black_cmd: str | Sequence[str],
    white_cmd: str | Sequence[str],
    config: MatchConfig | None = None,
    *,
    dead_stones: DeadStones | None = None,
    progress: Callable[[GameRecord, MatchSummary], None] | None = None,
    on_move: Callable[[int, int], None] | None = None,
) -> MatchSummary:
    """Play `config.games` games of engine A (`black_cmd`) against engine B (`white_cmd`) and summarise them.

    A is Black in game 1 and, with `config.alternate`, in every odd-numbered game. With `config.first_game` N the
    match plays games N..`config.games` of that schedule (their numbers, openings and colours), so an interrupted run
    resumes where it stopped and its SGF files continue the series. With `config.sgf_dir`, every finished game is
    also appended to its results file (``miai.match.results``), and the games already there are counted, not
    played again. `dead_stones(state)` gives the
    dead stones for miai's own count when the engines' final_score answers disagree (default: all alive).
    `progress(record, summary)` is called after every game and `on_move(game number, moves played)` after every
    move (default for both: a ProgressPrinter on stderr). With `config.concurrency` N, N games run at once, each
    between its own pair of engine processes; games are handed out in schedule order, so each keeps its opening and
    colours, and the summary lists them by number whatever order they finish in.

    Raises:
        MatchError: an engine cannot be started or fails the GTP handshake, the openings file is bad, or the
            results file holds another match.
    """
    config = config or MatchConfig()
    openings = load_openings(config.openings, config) if config.openings else [[]]
    own_printer = ProgressPrinter() if progress is None else None
    if own_printer is not None:
        progress, on_move = own_printer, on_move or own_printer.move
    try:
        return _run_local(black_cmd, white_cmd, config, openings, dead_stones, progress, on_move)
    finally:
        if own_printer is not None:
            own_printer.close()


def _run_local(black_cmd: str | Sequence[str], white_cmd: str | Sequence[str], config: MatchConfig,
               openings: list[list[int]], dead_stones: DeadStones | None,
               progress: Callable[[GameRecord, MatchSummary], None] | None,
               on_move: Callable[[int, int], None] | None) -> MatchSummary:
    assert progress is not None
    ledger = MatchLedger(black_cmd, white_cmd, config, openings, progress)
    hooks = _Hooks(dead_stones, on_move)
    slots = min(config.concurrency, len(ledger.pending))
    if slots == 0:  # every game of the schedule is in the results file already
        return ledger.finish()
    warned = (_Warnings(), _Warnings())
    pairs = [(_Player("A", black_cmd, config, slot, warned[0]), _Player("B", white_cmd, config, slot, warned[1]))
             for slot in range(slots)]
    schedule = _Schedule(ledger, hooks)
    try:
        for player in (player for pair in pairs for player in pair):
            try:
                player.ensure_started()
            except GtpClientError as exc:
                hint = " (a slow start? see --start-timeout)" if isinstance(exc, GtpTimeout) else ""
                raise MatchError(f"engine {player.label} ({player.command}) does not start: {exc}{hint}") from None
        ledger.engines = (pairs[0][0].info, pairs[0][1].info)
        return schedule.play(pairs)
    finally:
        ledger.stop()  # after Ctrl-C, no worker starts another game (or restarts an engine closed below)
        ledger.close()
        for pair in pairs:
            for player in pair:
                player.close()


@dataclass(frozen=True)
class GameSpec:
    """One game of a schedule: its number, who is Black and its opening."""

    number: int  # 1-based
    a_is_black: bool
    opening: tuple[int, ...]


def schedule_game(config: MatchConfig, openings: Sequence[Sequence[int]], number: int) -> GameSpec:
    """Game `number` of the schedule: A is Black in odd games when colours alternate, and games 2k-1 and 2k
    share opening k (each game its own opening without alternation)."""
    index = number - 1
    swap = config.alternate and index % 2 == 1
    opening = openings[(index // 2 if config.alternate else index) % len(openings)]
    return GameSpec(number, not swap, tuple(opening))


class MatchLedger:
    """The games of a match so far, whoever plays them: the records, the running summary, the results file and
    whether a new game may start (thread-safe; `record` is the one way a finished game comes in)."""

    def __init__(self, black_cmd: str | Sequence[str], white_cmd: str | Sequence[str], config: MatchConfig,
                 openings: Sequence[Sequence[int]], progress: Callable[[GameRecord, MatchSummary], None]) -> None:
        """Raises:
            MatchError: the results file in `config.sgf_dir` is unreadable or holds another match.
        """
        self.config, self.openings, self.progress = config, openings, progress
        commands = tuple(c if isinstance(c, str) else " ".join(c) for c in (black_cmd, white_cmd))
        self.engines = (EngineInfo("A", commands[0]), EngineInfo("B", commands[1]))
        self.results: ResultsFile | None = None
        done: dict[int, GameRecord] = {}
        if config.sgf_dir is not None:
            try:
                self.results = ResultsFile(config.sgf_dir, match_identity(commands[0], commands[1], config, openings))
            except ResultsError as exc:
                raise MatchError(str(exc)) from None
            done = {n: r for n, r in self.results.records.items() if config.first_game <= n <= config.games}
            if self.results.engines is not None:
                self.engines = self.results.engines
        self.records = sorted(done.values(), key=lambda r: r.number)
        self.resumed = len(self.records)  # games counted from the results file
        if self.resumed and self.results is not None:
            print(f"match: {self.resumed} games of this schedule are in {self.results.path} already; they are counted, "
                  "not played again", file=sys.stderr)
        self.pending = [n for n in range(config.first_game, config.games + 1) if n not in done]
        self.summary = summarize(config, self.engines, self.records)
        self.decided = self._sprt_decided()  # no new game starts: the SPRT decided or the match stops
        self.lock = threading.Lock()
        self._next = 0

    def next_game(self) -> GameSpec | None:
        """The next game to play in schedule order, or None when none may start."""
        with self.lock:
            if self.decided or self._next >= len(self.pending):
                return None
            number = self.pending[self._next]
            self._next += 1
        return schedule_game(self.config, self.openings, number)

    def record(self, record: GameRecord, sgf: str, engines: tuple[EngineInfo, EngineInfo] | None = None) -> None:
        """A game has ended: write its SGF and its results line, update the summary, tell the progress hook, and
        stop new games once the SPRT decides. A game number already recorded is ignored (counted once)."""
        with self.lock:
            if any(r.number == record.number for r in self.records):
                return
            if engines is not None:
                self.engines = engines
            record = write_sgf(record, sgf, self.config.sgf_dir)
            if self.results is not None:
                self.results.append(record, self.engines)
            self.records.append(record)
            self.records.sort(key=lambda r: r.number)
            self.summary = summarize(self.config, self.engines, self.records)
            self.progress(record, self.summary)
            if self._sprt_decided():
                self.decided = True

    def _sprt_decided(self) -> bool:
        sprt = self.summary.sprt
        return self.config.sprt_stop and sprt is not None and sprt.verdict != "continue"

    def stop(self) -> None:
        """Start no more games."""
        with self.lock:
            self.decided = True

    def close(self) -> None:
        """Close the results file."""
        if self.results is not None:
            self.results.close()

    def finish(self) -> MatchSummary:
        """The summary of every game of the schedule recorded, marked as stopped early if games are missing."""
        with self.lock:
            early = len(self.records) < self.config.games - self.config.first_game + 1
            summary = summarize(self.config, self.engines, self.records, stopped_early=early and self.decided)
            self.summary = summary
            return summary


@dataclass(frozen=True)
class _Hooks:
    """The caller's callbacks for a match's games."""

    dead_stones: DeadStones | None
    on_move: Callable[[int, int], None] | None


class _Schedule:
    """The ledger's games handed out in order to one or more pairs of engines on this machine (one thread per
    pair when there are several); the callbacks see one game at a time."""

    def __init__(self, ledger: MatchLedger, hooks: _Hooks) -> None:
        self.ledger, self.hooks = ledger, hooks
        self.dead_lock = threading.Lock()
        self.failures: list[BaseException] = []

    def play(self, pairs: Sequence[tuple[_Player, _Player]]) -> MatchSummary:
        """Play the schedule with these pairs of engines; the summary of every game played."""
        if len(pairs) == 1:
            self._work(pairs[0])
        else:
            workers = [threading.Thread(target=self._guarded, args=(pair,), name=f"match-{k + 1}", daemon=True)
                       for k, pair in enumerate(pairs)]
            for worker in workers:
                worker.start()
            for worker in workers:
                while worker.is_alive():
                    worker.join(0.2)  # a timed wait, so that Ctrl-C reaches the main thread
            if self.failures:
                raise self.failures[0]
        return self.ledger.finish()

    def _guarded(self, pair: tuple[_Player, _Player]) -> None:
        try:
            self._work(pair)
        except BaseException as exc:  # handed to the main thread, which re-raises it after the others stop
            self.failures.append(exc)
            self.ledger.stop()

    def _work(self, pair: tuple[_Player, _Player]) -> None:
        dead_stones = self._dead_stones()
        while (spec := self.ledger.next_game()) is not None:
            black, white = pair if spec.a_is_black else (pair[1], pair[0])
            record, sgf = play_game_sgf(spec.number, black, white, self.ledger.config, spec.opening, dead_stones,
                                        self.hooks.on_move)
            self.ledger.record(record, sgf, (pair[0].info, pair[1].info))

    def _dead_stones(self) -> DeadStones | None:
        """The caller's callback, one call at a time (a net evaluator need not be thread-safe)."""
        callback = self.hooks.dead_stones
        if callback is None or self.ledger.config.concurrency == 1:
            return callback
        return self._locked_dead_stones

    def _locked_dead_stones(self, state: GameState) -> Sequence[int]:
        assert self.hooks.dead_stones is not None
        with self.dead_lock:
            return self.hooks.dead_stones(state)
