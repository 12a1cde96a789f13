"""A stdin reader thread that feeds a queue, so the session can tell when input is pending.

Analysis commands run until the next input line arrives and must not consume it (GTP.md section 2.3). A
``select()`` on ``sys.stdin`` would miss lines already held in Python's buffer, so one thread reads lines as
they come and puts them on a queue; ``pending`` (an Event) is set while the queue holds unread input, and the
analysis loop uses it as its stop signal. ``quit_seen`` is set whenever a ``quit`` line is read, even while the
session is busy with a search, so that a running genmove can stop and the session reach the ``quit``.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from .protocol import parse_command, preprocess

_EOF = None


class InputReader:
    """Reads raw lines from ``stream`` on a daemon thread; ``get()`` returns them in order, then ``None``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._queue: queue.Queue[tuple[str, float] | None] = queue.Queue()
        self.ready = 0.0  # time.monotonic() when the line get() returned last could start (see get())
        self.arrival = 0.0  # time.monotonic() when that line arrived (stamped by the reader thread)
        self.pending = threading.Event()
        self.quit_seen = threading.Event()
        self._at_eof = False
        self._thread = threading.Thread(target=self._read_all, name="gtp-stdin", daemon=True)

    def start(self) -> None:
        """Start the reader thread."""
        self._thread.start()

    def get(self, timeout: float | None = None, idle_since: float | None = None) -> str | None:
        """The next raw line (without its newline), or ``None`` at end of input (repeatedly, once reached).

        ``ready`` then says when the line's command could start: the later of the line's arrival and this call
        (the session asks for a line once it has answered the one before). A line that arrives while the engine
        is idle starts at its arrival, stamped by the reader thread however late the main thread wakes (a server's
        clock runs from then); one queued behind a command still running starts when that command is answered, so a
        genmove piped behind another gets its own time, as when sent after the answer. ``arrival`` says when the
        line arrived (the session starts a command queued behind a clock command from there). ``idle_since``: when
        the session became free for the next line, if earlier than this call (it started a ponder search first,
        which a line arriving meanwhile must not be charged to).

        Raises:
            queue.Empty: ``timeout`` elapsed with no input.
        """
        if self._at_eof:
            return _EOF
        asked = time.monotonic() if idle_since is None else min(idle_since, time.monotonic())
        item = self._queue.get(timeout=timeout)
        if item is _EOF:
            self._at_eof = True
            return _EOF
        line, arrival = item
        self.arrival = arrival
        self.ready = max(arrival, asked)
        self._refresh_pending()
        return line

    def has_input(self) -> bool:
        """Whether a line (or the end of input) is waiting."""
        return self._at_eof or not self._queue.empty()

    def _refresh_pending(self) -> None:
        # Clear first, then re-check: a line the reader queued in between has its own set() after our clear().
        self.pending.clear()
        if not self._queue.empty():
            self.pending.set()

    def _read_all(self) -> None:
        try:
            for line in self._lines():
                self._queue.put((line, time.monotonic()))
                if _is_quit(line):
                    self.quit_seen.set()
                self.pending.set()
        except (OSError, ValueError) as error:  # a closed or broken stdin ends the session like EOF
            print(f"miai: stdin read failed: {error}", file=sys.stderr, flush=True)
        finally:
            self._queue.put(_EOF)
            self.pending.set()

    def _lines(self) -> Iterator[str]:
        """Lines without their LF. The process's real stdin is read through its file descriptor."""
        if self._stream is sys.stdin or self._stream is sys.__stdin__:
            # Reading the fd directly keeps this daemon thread out of the BufferedReader lock, which would
            # otherwise abort interpreter shutdown after quit while the thread is blocked in readline().
            yield from _fd_lines(self._stream.fileno())
            return
        for line in iter(self._stream.readline, ""):
            yield line[:-1] if line.endswith("\n") else line


def _is_quit(line: str) -> bool:
    """Whether ``line`` is a ``quit`` command (with or without an id)."""
    text = preprocess(line)
    return text is not None and parse_command(text).name == "quit"


def _fd_lines(fd: int) -> Iterator[str]:
    buffer = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            yield raw.decode("utf-8", errors="replace")
    if buffer:
        yield buffer.decode("utf-8", errors="replace")
