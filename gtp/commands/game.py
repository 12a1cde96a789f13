"""Move generation, end of game (scoring, dead stones) and SGF in and out."""

from __future__ import annotations

import errno
import operator
from pathlib import Path
from typing import TYPE_CHECKING, SupportsIndex

from miai.go.coords import PASS, Color, to_gtp
from miai.go.errors import GoError, SgfError
from miai.go.rules import Rules
from miai.go.state import GameState
from miai.go.oserrors import describe

from ..args import COLOR, FLOAT, STRING, UINT, named, optional
from ..errors import CANNOT_LOAD_FILE, CANNOT_SCORE, GtpError, GtpSyntaxError
from ..player import RESIGN, AnalysisSnapshot, AnalyzeRequest, Emit, MoveInfo
from ..table import CommandTable

if TYPE_CHECKING:
    from miai.go.sgf import SgfGame

    from ..context import Session

table = CommandTable()


def generate(
    s: Session,
    color: Color,
    *,
    cleanup: bool = False,
    play: bool = True,
    analysis: AnalyzeRequest | None = None,
    emit: Emit | None = None,
) -> int | str:
    """Ask the player for a move for ``color``, check it and (if ``play``) play it. Returns a move or RESIGN.

    Raises:
        GtpError: the player answered something that is not a legal move for ``color``; the game is unchanged.
    """
    result = s.player.genmove(s.state.copy(), color, cleanup=cleanup, analysis=analysis, emit=emit)
    if isinstance(result, str) and result == RESIGN:
        return RESIGN
    size = s.state.size
    move = _as_move(result, size)
    if move != PASS and not s.state.is_legal(move, color):
        raise GtpError(f"engine chose an illegal move {to_gtp(move, size)}")
    if play:
        s.state.push(move, color)
    return move


def _as_move(result: object, size: int) -> int:
    """A player's move as a plain int (numpy integers accepted), or GtpError if it is not a move index."""
    try:
        move = operator.index(result) if isinstance(result, SupportsIndex) else None
    except TypeError:
        move = None
    if isinstance(result, bool) or move is None or not PASS <= move < size * size:
        raise GtpError(f"engine returned an invalid move {result!r}")
    return move


def move_text(move: int | str, size: int) -> str:
    """GTP text of a genmove result: upper-case vertex, ``pass`` or ``resign``."""
    return RESIGN if move == RESIGN else to_gtp(int(move), size)


# No analysis during the search: the player emits only its final snapshot (what the chat and the debug lines report).
_FINAL_ONLY = AnalyzeRequest(interval=None, root_info=True)
# Moves of the PV in the chat line and the debug lines (KataGo's analysisPVLen is 15 after the first move).
_PV_MOVES = 16
# Searched moves genmove_debug lists, best first.
_DEBUG_MOVES = 10


@table.command("genmove", COLOR, mutates=True)
def genmove(s: Session, color: Color) -> str:
    """Generate and play a move; with ``gtp.ogs_chat_to_stderr`` KataGo's ``MALKOVICH:`` line follows on stderr."""
    return _searched(s, color, play=True, debug=False)


@table.command("genmove_debug", COLOR, mutates=True)
def genmove_debug(s: Session, color: Color) -> str:
    """KataGo's genmove that also writes the search's figures to stderr: the root, then each searched move."""
    return _searched(s, color, play=True, debug=True)


@table.command("kata-search", COLOR)
def kata_search(s: Session, color: Color) -> str:
    """KataGo's search as for genmove (same limits and clock), answering the move without playing it."""
    return _searched(s, color, play=False, debug=False)


@table.command("kata-search_debug", COLOR)
def kata_search_debug(s: Session, color: Color) -> str:
    """kata-search that also writes the search's figures to stderr, as genmove_debug."""
    return _searched(s, color, play=False, debug=True)


@table.command("kata-search_cancellable", COLOR)
def kata_search_cancellable(s: Session, color: Color) -> str:
    """kata-search that stops at the next input line (any command, or an empty line) and answers its best move
    so far; that line is then executed."""
    with s.input_interrupts():
        return _searched(s, color, play=False, debug=False)


def _searched(s: Session, color: Color, *, play: bool, debug: bool) -> str:
    """A genmove-like search for ``color``, played or not, with the chat line and the debug lines on stderr when
    asked (the player's final snapshot is taken only then, so a plain genmove is unchanged)."""
    report = debug or s.config.ogs_chat_to_stderr
    finals: list[AnalysisSnapshot] = []
    move = generate(s, color, play=play, analysis=_FINAL_ONLY if report else None,
                    emit=finals.append if report else None)
    size = s.state.size
    if finals and s.config.ogs_chat_to_stderr:
        s.write_stderr(malkovich_line(finals[-1], move, size))
    if finals and debug:
        for line in debug_lines(finals[-1], move, size):
            s.log(line)
    return move_text(move, size)


def _chosen(snapshot: AnalysisSnapshot, move: int | str) -> MoveInfo | None:
    """The snapshot's record of the chosen move, else its best move (a resignation reports the best move)."""
    for info in snapshot.moves:
        if info.move == move:
            return info
    return snapshot.moves[0] if snapshot.moves else None


def _pv_text(info: MoveInfo | None, size: int, move: int | str | None = None) -> str:
    """The move's PV in GTP vertices; a move the search chose without visiting it (a search of one visit) is its
    own PV, as KataGo prints it."""
    pv: tuple[int, ...] = info.pv[:_PV_MOVES] if info is not None else ()
    if isinstance(move, int) and (not pv or pv[0] != move):
        pv = (move,)
    return " ".join(to_gtp(point, size) for point in pv)


def malkovich_line(snapshot: AnalysisSnapshot, move: int | str, size: int) -> str:
    """KataGo's ``ogsChatToStderr`` line (cpp/command/gtp.cpp, v1.17.2): ``MALKOVICH:Visits N Winrate W% ScoreLead L
    ScoreStdev D PV ...``, from the view of the player who moved; gtp2ogs posts what follows ``MALKOVICH:`` to
    the game's Malkovich chat (src/Bot.ts), and its KataGo PV parser reads the same fields."""
    info = _chosen(snapshot, move)
    root = snapshot.root
    visits = root.visits if root is not None else sum(m.visits for m in snapshot.moves)
    winrate = root.winrate if root is not None else (info.winrate if info is not None else 0.5)
    lead = root.score_lead if root is not None else 0.0
    stdev = root.score_stdev if root is not None and root.score_stdev is not None else 0.0
    return (f"MALKOVICH:Visits {visits} Winrate {100 * winrate:.2f}% ScoreLead {lead:.1f} ScoreStdev {stdev:.1f} "
            f"PV {_pv_text(info, size, move)}").rstrip()


def debug_lines(snapshot: AnalysisSnapshot, move: int | str, size: int) -> list[str]:
    """genmove_debug's report: the chosen move and the root's figures, then a line for each of the best searched
    moves."""
    root = snapshot.root
    lines = [f"chose {move_text(move, size)}"
             + (f"; root visits {root.visits} winrate {100 * root.winrate:.2f}% scoreLead {root.score_lead:.1f}"
                if root is not None else "")]
    for info in snapshot.moves[:_DEBUG_MOVES]:
        lead = f" scoreLead {info.score_lead:.1f}" if info.score_lead is not None else ""
        lines.append(f"{to_gtp(info.move, size):>4} visits {info.visits} winrate {100 * info.winrate:.2f}%{lead} "
                     f"prior {100 * info.prior:.2f}% pv {_pv_text(info, size)}")
    return lines


@table.command("kgs-genmove_cleanup", COLOR, mutates=True)
def genmove_cleanup(s: Session, color: Color) -> str:
    """Like genmove, but the player must capture dead stones before passing (KGS cleanup phase)."""
    return move_text(generate(s, color, cleanup=True), s.state.size)


@table.command("reg_genmove", COLOR)
def reg_genmove(s: Session, color: Color) -> str:
    """Generate a move without playing it; a pass is ``PASS`` as the regression suites expect."""
    text = move_text(generate(s, color, play=False), s.state.size)
    return "PASS" if text == "pass" else text


def dead_stones(s: Session) -> list[int]:
    """The player's dead stones, checked to be stones on the board."""
    dead = [int(point) for point in s.player.final_status(s.state.copy())]
    stones = s.state.stones()
    if any(not 0 <= point < len(stones) or stones[point] == 0 for point in dead):
        raise GtpError("engine reported dead stones on empty points")
    return sorted(set(dead))


@table.command("final_score")
def final_score(s: Session) -> str:
    """``B+x``, ``W+x`` or ``0`` under the current rules, with the player's dead stones removed."""
    try:
        return s.state.result_string(s.state.score(dead_stones(s)))
    except (GoError, ValueError, GtpError) as error:
        raise GtpError(CANNOT_SCORE, str(error)) from error


@table.command("final_status_list", named(STRING, "status"))
def final_status_list(s: Session, status: str) -> str:
    """Stones of one status, one chain per line. miai does not detect seki, so ``seki`` is always empty."""
    status = status.lower()
    if status not in ("alive", "dead", "seki"):
        raise GtpSyntaxError(f"invalid status '{status}' (expected alive, dead or seki)")
    if status == "seki":
        return ""
    dead = set(dead_stones(s))
    chains = _chains(s.state)
    wanted = [chain for chain in chains if (chain[0] in dead) == (status == "dead")]
    size = s.state.size
    return "\n".join(" ".join(to_gtp(point, size) for point in chain) for chain in wanted)


def _chains(state: GameState) -> list[list[int]]:
    """Every chain on the board, each sorted, in board order."""
    seen: set[int] = set()
    chains = []
    for point, color in enumerate(state.stones()):
        if color and point not in seen:
            chain = sorted(state.chain(point))
            seen.update(chain)
            chains.append(chain)
    return chains


@table.command("loadsgf", named(STRING, "filename"), optional(named(UINT, "move_number")), mutates=True)
def loadsgf(s: Session, filename: str, move_number: int | None) -> str:
    """Load a game: the position before ``move_number`` (the whole game without it). Answers the colour to move.

    Rules as KataGo takes them: the file's RU where it names rules miai knows, else the rules in force (one warning
    line for an RU it cannot read); komi from KM, else the default komi of the RU's rules, else the komi in force.
    The quirks of old files are repaired, each with a warning line on stderr naming the file, line and column."""
    from miai.go.sgf import load_sgf  # late: the SGF module is optional for everything else

    try:
        text = _read_sgf_file(Path(filename))
    except OSError as error:
        raise GtpError(CANNOT_LOAD_FILE, f"{filename}: {describe(error, filename)}") from error
    try:
        game = load_sgf(text, source=filename)
    except (GoError, ValueError, IndexError, KeyError) as error:
        raise GtpError(CANNOT_LOAD_FILE, _sgf_problem(error, filename)) from error
    rules = _sgf_rules(s, game, filename)
    try:
        state = game.to_state(move_number, rules=rules)
    except (GoError, ValueError, IndexError, KeyError) as error:
        raise GtpError(CANNOT_LOAD_FILE, _sgf_problem(error, filename)) from error
    finally:  # the reader's repairs and those found replaying the moves (a move only superko forbids)
        for warning in game.warnings:
            s.log(f"warning: {warning}")
    if rules is not None and game.komi is None:
        state.komi = s.state.komi  # neither RU nor KM: the game keeps the komi in force, as KataGo does
    s.state = state
    return state.to_play.name.lower()


def _sgf_rules(s: Session, game: SgfGame, filename: str) -> Rules | None:
    """The rules to load ``game`` under when its RU does not name rules miai knows: the rules in force (None: the
    file's own)."""
    from miai.go.sgf import parse_rules_text

    if game.rules and parse_rules_text(game.rules) is not None:
        return None
    if game.rules:
        s.log(f"warning: {filename}: cannot read the rules RU[{game.rules}]; keeping the rules in force "
              f"({s.state.rules.name})")
    return s.state.rules


def _sgf_problem(error: Exception, filename: str) -> str:
    """What is wrong with an SGF file in a user's words: the file, and the line and column where the text is
    malformed."""
    if isinstance(error, SgfError) and error.line is not None:
        return f"{filename}: line {error.line}, column {error.column}: {error.problem}"
    return f"{filename}: {error}"


MAX_SGF_BYTES = 10_000_000  # a game record is kilobytes; a bigger "file" is a mistake (or /dev/zero)


def _read_sgf_file(path: Path) -> str:
    """The text of a regular file of sane size (devices and pipes would block or never end).

    Raises:
        OSError: not a regular file, too big, or unreadable.
    """
    from miai.go.sgf import decode_sgf  # late, as in loadsgf

    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if path.exists() and not path.is_file():
        raise OSError("not a regular file (a device or a pipe)")
    with path.open("rb") as handle:
        data = handle.read(MAX_SGF_BYTES + 1)
    if len(data) > MAX_SGF_BYTES:
        raise OSError(f"larger than {MAX_SGF_BYTES} bytes")
    return decode_sgf(data)  # BOM, CA[] charset, UTF-8, Latin-1: as every reader of SGF files


@table.command("printsgf", optional(named(STRING, "filename")))
def printsgf(s: Session, filename: str | None) -> str:
    """The game as SGF; written to ``filename`` instead when one is given."""
    from miai.go.sgf import write_sgf

    text = write_sgf(s.state)
    if filename is None:
        return text
    path = Path(filename)
    try:
        if path.exists() and not path.is_file():  # e.g. /dev/stdout would corrupt the protocol stream
            raise OSError("not a regular file" if not path.is_dir() else "is a directory, not a file")
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise GtpError(f"cannot write file '{filename}'", describe(error, filename)) from error
    return ""


@table.command("kata-raw-nn", named(STRING, "symmetry"), optional(named(FLOAT, "optimism")))
def kata_raw_nn(s: Session, symmetry_text: str, optimism: float | None) -> str:
    """The net's raw outputs for the position, symmetry 0..7 or ``all``."""
    if symmetry_text.lower() == "all":
        symmetry: int | None = None
    elif symmetry_text.isdigit() and int(symmetry_text) < 8:
        symmetry = int(symmetry_text)
    else:
        raise GtpSyntaxError(f"invalid symmetry '{symmetry_text}' (expected 0..7 or all)")
    try:
        return s.player.raw_nn(s.state.copy(), symmetry, 0.0 if optimism is None else optimism)
    except NotImplementedError as error:
        raise GtpError("no neural net available", str(error)) from error


# Positions kata-benchmark searches, as KataGo's 10 positions of its benchmark game.
BENCHMARK_POSITIONS = 10


@table.command("kata-benchmark", named(UINT, "visits"))
def kata_benchmark(s: Session, visits: int) -> str:
    """KataGo's quick benchmark: up to 10 positions of the current game (the latest, each searched afresh with
    ``visits`` visits; the game is unchanged), reported on one line in KataGo's words."""
    if visits < 1:
        raise GtpSyntaxError(f"invalid number of visits {visits} (expected 1 or more)")
    states = [s.state.copy()]
    replay = s.state.copy()
    while replay.moves and len(states) < BENCHMARK_POSITIONS:
        replay.pop()
        states.append(replay.copy())
    try:
        result = s.player.benchmark(states, visits)
    except NotImplementedError as error:
        raise GtpError("cannot benchmark", str(error)) from error
    seconds = max(result.seconds, 1e-9)
    batch = result.net_evals / result.batches if result.batches else 0.0
    return (f"\nnumSearchThreads = {result.threads:2d}: {result.positions} / {result.positions} positions, "
            f"visits/s = {result.visits / seconds:.2f} nnEvals/s = {result.net_evals / seconds:.2f} "
            f"nnBatches/s = {result.batches / seconds:.2f} avgBatchSize = {batch:.2f} ({result.seconds:.1f} secs)")
