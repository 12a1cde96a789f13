"""The GTP session: reads commands, dispatches them through the command table, writes framed responses.

The session owns the game (a ``GameState``) and handles every board command itself; it asks its
:class:`~miai.gtp.player.Player` only for decisions. Only this module writes to stdout, and only complete GTP
responses (or analysis lines inside an open response), flushed at once. Logging goes to stderr.

Reading order: ``protocol`` (framing) -> ``args`` and ``table`` (schemas) -> ``config`` and ``context`` (the
session as a handler sees it) -> ``commands/*`` -> this module.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TextIO

import numpy as np

from miai.go.coords import Color
from miai.go.rules import Rules
from miai.go.state import GameState

from .args import bind
from .commands import default_table
from .config import GtpConfig
from .context import Session
from .errors import UNKNOWN_COMMAND, GtpError
from .player import Player
from .protocol import Command, format_response, parse_command, preprocess, response_head
from .reader import InputReader
from .table import CommandTable

# Every command and answer, for a log file only (KataGo's logAllGTPCommunication): it never reaches stderr, and
# records only once a log file gives it a handler and a level (miai.engine.cli.logs).
traffic_log = logging.getLogger("miai.gtp.traffic")
traffic_log.propagate = False
# Each command's times on the monotonic clock (which other processes of the machine share), at debug: when its line
# arrived, when it started and when its answer was written, so a controller's own stamps can be set beside them.
timing_log = logging.getLogger(__name__)


class OutputClosedError(Exception):
    """The controller closed our stdout (it exited or was killed): the session can only end."""


class GtpSession:
    """One GTP conversation between a controller and ``player``.

    ``run()`` reads ``stdin`` until ``quit`` or end of input. ``handle_line()`` executes one line without the
    reader thread (tests, scripting); analysis commands then stop after their first snapshot, as if the next
    line were already waiting.
    """

    def __init__(
        self,
        player: Player,
        stdin: TextIO,
        stdout: TextIO,
        stderr: TextIO,
        config: GtpConfig | None = None,
        table: CommandTable | None = None,
    ) -> None:
        self.player = player
        self.config = config or GtpConfig()
        self.table = table if table is not None else default_table()
        self.state = GameState(self.config.board_size, Rules.parse(self.config.rules), self.config.komi)
        self._stdin, self._stdout, self._stderr = stdin, stdout, stderr
        self._reader: InputReader | None = None
        self._always_stop = threading.Event()
        self._always_stop.set()
        self._write_lock = threading.Lock()
        self._command: Command | None = None
        self._stream_open = False
        self._quit = False
        self._clock_start: float | None = None  # when the last command began, if it was a clock command (else None)

    # ----------------------------------------------------------------------------------------- main loop

    def run(self) -> int:
        """Serve commands until ``quit`` or end of input; returns the process exit code (0)."""
        self._reader = InputReader(self._stdin)
        self.player.set_interrupt(self._reader.quit_seen)
        self._reader.start()
        guard = self._stdout is sys.stdout
        if guard:  # a stray print() anywhere in the engine would corrupt the protocol: send it to stderr
            sys.stdout = self._stderr
        try:
            while not self._quit:
                line = self._next_line()
                if line is None:
                    break
                # A quit already queued behind this command waits its turn (scripts pipe "genmove b" and "quit"
                # together); only a quit that arrives while this command runs interrupts its search.
                self._reader.quit_seen.clear()
                start = self._start_time()
                if timing_log.isEnabledFor(logging.DEBUG):
                    timing_log.debug("%.4f read %r (arrived %.4f, clock from %.4f)", time.monotonic(), line,
                                     self._reader.arrival, start)
                self.player.command_arrived(start)
                self._clock_start = start if self._is_clock_command(line) else None
                self.handle_line(line)
        except OutputClosedError:
            self.log("stdout closed by the controller; exiting")
        finally:
            if guard:
                sys.stdout = self._stdout
        return 0

    def _start_time(self) -> float:
        """When the command just read could start (``time.monotonic()``): the later of its line's arrival and the
        answer to the command before it, or, behind a clock command, the later of its arrival and that command's
        start. A controller sends the clock with the move it times (gtp2ogs writes ``time_left`` and ``genmove``
        in one go, and its clock runs from then): the time the engine takes to reach and answer the clock commands
        (a ponder search stopped first) is on the move's clock, while a genmove queued behind another genmove
        still gets its own time."""
        assert self._reader is not None
        if self._clock_start is None:
            return self._reader.ready
        return max(self._reader.arrival, self._clock_start)

    def _is_clock_command(self, raw_line: str) -> bool:
        text = preprocess(raw_line)
        spec = None if text is None else self.table.get(parse_command(text).name)
        return spec is not None and spec.clock

    def _next_line(self) -> str | None:
        """The next input line, pondering while none is waiting (if enabled)."""
        assert self._reader is not None
        if self.config.ponder and not self._reader.has_input():
            # A line that arrives while the ponder search starts could start at once: its clock runs from then.
            idle_since = time.monotonic()
            self.player.start_pondering(self.state.copy(), self.state.to_play)
            try:
                return self._reader.get(idle_since=idle_since)
            finally:
                self.player.stop_pondering()
        return self._reader.get()

    @property
    def stop_event(self) -> threading.Event:
        """Set while input is pending: the stop signal of a running analysis."""
        return self._reader.pending if self._reader is not None else self._always_stop

    @property
    def quitting(self) -> bool:
        """True once ``quit`` has been answered."""
        return self._quit

    def request_quit(self) -> None:
        """End the session after the current response (the ``quit`` handler calls this)."""
        self._quit = True

    def handle_line(self, raw_line: str) -> None:
        """Preprocess, parse and execute one raw input line, writing its response (none for a blank line)."""
        text = preprocess(raw_line)
        if text is None:
            return
        traffic_log.info("< %s", text)
        command = parse_command(text)
        spec = self.table.get(command.name)
        if spec is None:
            self._finish_failed(command, GtpError(UNKNOWN_COMMAND, f"unknown command '{command.name}'"))
            return
        self._command, self._stream_open = command, False
        try:
            values = bind(command.name, spec.schema, command.args, self.state.size)
            context: Session = self  # what the handlers may use of the session
            result = spec.handler(context, *values)
        except GtpError as error:
            self._finish_failed(command, error)
        except OutputClosedError:
            raise
        except Exception as error:  # a bug must cost one command, never the session
            self.log("".join(traceback.format_exception(error)).rstrip())
            self._finish_failed(command, GtpError(f"internal error: {type(error).__name__}: {error}"))
        else:
            if spec.mutates:  # before the answer: what the player prepares (a new board size warms up the net)
                self._notify_player()  # must not run on the clock of the controller's next command
            self._finish_ok(command, "" if result is None else str(result))
        finally:
            self._command, self._stream_open = None, False

    def _notify_player(self) -> None:
        try:
            self.player.on_state_changed(self.state)
        except Exception as error:  # the command succeeded; only log
            self.log(f"player.on_state_changed failed: {error!r}")

    # -------------------------------------------------------------------------------------------- output

    def _finish_ok(self, command: Command, text: str) -> None:
        if self._stream_open:
            self._write((text.replace("\n", " ") + "\n" if text else "") + "\n")
        else:
            self._write(format_response(True, command.id, text))

    def _finish_failed(self, command: Command, error: GtpError) -> None:
        if self._stream_open:  # too late for '?': end the open response cleanly
            self.log(f"{command}: {error.reply}")
            self._write("\n")
            return
        if not error.reason_in_reply:
            self.log(f"{command}: {error.detail}")
        self._write(format_response(False, command.id, error.reply))

    def open_stream(self) -> None:
        """Write the head of a streamed response (``=id``); the handler then emits lines and returns the last."""
        assert self._command is not None, "open_stream() outside a command"
        self._write(response_head(True, self._command.id) + "\n")
        self._stream_open = True

    def stream_writer(self) -> tuple[Callable[[str], None], Callable[[], None]]:
        """``(emit_line, close)``: ``emit_line`` writes one non-empty line while the response is open (safe from
        any thread); after ``close()`` late calls (a search thread still finishing) are dropped."""
        active = [True]

        def emit_line(line: str) -> None:
            line = " ".join(line.split())  # one line, single spaces: an empty line would end the response
            if not line:
                return
            with self._write_lock:
                if active[0]:
                    try:
                        self._stdout.write(line + "\n")
                        self._stdout.flush()
                    except (OSError, ValueError):  # the controller is gone; the loop will notice and end
                        active[0] = False

        def close() -> None:
            with self._write_lock:
                active[0] = False

        return emit_line, close

    def _write(self, text: str) -> None:
        """Write and flush at once (a controller waits for each response).

        Raises:
            OutputClosedError: stdout is closed or its reader has gone.
        """
        with self._write_lock:
            try:
                self._stdout.write(text)
                self._stdout.flush()
            except (OSError, ValueError) as error:
                raise OutputClosedError(str(error)) from error
        if timing_log.isEnabledFor(logging.DEBUG) and text.strip():
            timing_log.debug("%.4f answered %r", time.monotonic(), text.strip().split("\n")[0][:40])
        if text.strip():
            traffic_log.info("> %s", text.strip())

    def log(self, message: str) -> None:
        """A diagnostic line on stderr (never stdout)."""
        self.write_stderr(f"miai: {message}")

    def write_stderr(self, line: str) -> None:
        """One line on stderr as it is, for the bridges that read stderr (gtp2ogs's chat lines)."""
        try:
            self._stderr.write(line + "\n")
            self._stderr.flush()
        except (OSError, ValueError):  # a closed stderr must not take the engine down
            pass

    @contextlib.contextmanager
    def input_interrupts(self) -> Iterator[None]:
        """While it lasts, any input line (not only ``quit``) stops the player's search (kata-search_cancellable).
        Without the reader thread (``handle_line``) nothing can arrive, and nothing changes."""
        if self._reader is None:
            yield
            return
        self.player.set_interrupt(self._reader.pending)
        try:
            yield
        finally:
            self.player.set_interrupt(self._reader.quit_seen)

    # --------------------------------------------------------------------------------------------- game

    def new_game(self, size: int | None = None, rules: Rules | None = None, komi: float | None = None) -> None:
        """Replace the game by an empty board, keeping whatever is not given."""
        self.state = GameState(
            self.state.size if size is None else size,
            self.state.rules if rules is None else rules,
            self.state.komi if komi is None else komi,
        )

    def rebuild(self, rules: Rules | None = None, komi: float | None = None) -> None:
        """Replay the current game (setup stones and moves) under new rules or komi.

        Raises:
            GtpError: the history is not legal under the new rules (the game is then left unchanged).
        """
        old = self.state
        new = GameState(old.size, old.rules if rules is None else rules, old.komi if komi is None else komi)
        try:
            _copy_setup(old, new)
            for color, move in old.moves:
                new.push(move, color)
        except ValueError as error:
            raise GtpError("the game so far is illegal under these rules", str(error)) from error
        self.state = new

    def any_stones_or_moves(self) -> bool:
        """Whether the board has a stone or the game a move (handicap commands need an empty game)."""
        return bool(self.state.moves) or bool(np.any(self.state.stones()))


def _copy_setup(old: GameState, new: GameState) -> None:
    """Put ``old``'s stones from before its first move onto the empty ``new``."""
    start = old.board_history(len(old.moves))
    black = [int(p) for p in np.flatnonzero(start == int(Color.BLACK))]
    white = [int(p) for p in np.flatnonzero(start == int(Color.WHITE))]
    if old.handicap and black and not white:
        new.set_handicap(black)
    elif black or white:
        new.set_stones(black, white)
