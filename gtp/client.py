"""A GTP client for engines running as subprocesses: the controller side of GTP v2.

The match runner talks to any engine that speaks GTP (miai, GNU Go, KataGo, a test script) through
`GtpEngine`. What makes a controller robust, and what this module guarantees:

- **Per-command timeouts.** `send(command, timeout=...)` waits at most `timeout` seconds. A reader thread
  collects stdout lines into a queue, so a hung engine can never block the caller. After a timeout the engine's
  state is unknown (a late answer would be taken for the next command's), so the engine is killed.
- **stderr is always drained** by its own thread (an undrained pipe fills up and hangs the engine; Sabaki#545).
  The last lines are kept for crash reports and can be copied to a log file.
- **Crash detection.** End of stdout or a broken stdin pipe raises `GtpEngineDied` carrying the exit code and
  the stderr tail.
- **Framing per the spec (GTP.md section 1.1):** commands carry an id; a response is `=[id] text` or `?[id] text`
  ended by an empty line; CR is dropped; lines before the first `=`/`?` line are ignored, as Sabaki does.

Errors form a small hierarchy under `GtpClientError`: `GtpCommandError` (the engine answered `?`),
`GtpTimeout`, `GtpEngineDied`, `GtpProtocolError`.
"""

from __future__ import annotations

import collections
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = [
    "GtpClientError",
    "GtpCommandError",
    "GtpTimeout",
    "GtpEngineDied",
    "GtpProtocolError",
    "GtpEngine",
    "split_command",
]

# How many stderr lines a crash report keeps.
STDERR_TAIL_LINES = 40
# Sentinel the stdout reader puts in the queue at end of file.
_EOF = None


class GtpClientError(Exception):
    """Base class of everything that can go wrong talking to a GTP engine."""


class GtpCommandError(GtpClientError):
    """The engine answered a command with a failure (`? message`)."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(f"{command!r} failed: {message}")
        self.command = command
        self.message = message


class GtpTimeout(GtpClientError):
    """The engine did not answer within the command's timeout (the engine has been killed)."""

    def __init__(self, command: str, timeout: float) -> None:
        super().__init__(f"no answer to {command!r} within {timeout:g} s")
        self.command = command
        self.timeout = timeout


class GtpEngineDied(GtpClientError):
    """The engine process exited or closed its pipes; `returncode` is None if it is still (half) running."""

    def __init__(self, name: str, returncode: int | None, stderr_tail: Sequence[str]) -> None:
        tail = "\n".join(stderr_tail[-5:])
        detail = f" (exit code {returncode})" if returncode is not None else ""
        super().__init__(f"engine {name!r} died{detail}" + (f"; stderr ends with:\n{tail}" if tail else ""))
        self.returncode = returncode
        self.stderr_tail = list(stderr_tail)


class GtpProtocolError(GtpClientError):
    """The engine wrote something that is not a GTP response (e.g. a wrong id)."""


def split_command(command: str | Sequence[str]) -> list[str]:
    """Turn a shell-like command line (`"gnugo --mode gtp"`) or an argv list into an argv list."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("empty engine command")
    return argv


class GtpEngine:
    """One GTP engine subprocess, driven command by command.

    Use as a context manager, or call `close()`; the process is started by the constructor.

    Args:
        command: the engine's command line, a string split like a shell would, or an argv list.
        name: a label for messages; defaults to the program's file name.
        cwd, env: passed to the subprocess.
        stderr_log: if given, every stderr line of the engine is appended to this file.

    Raises:
        GtpEngineDied: the program cannot be started (not found, not executable).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        name: str | None = None,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
        stderr_log: str | Path | None = None,
    ) -> None:
        self.argv = split_command(command)
        self.name = name or Path(self.argv[0]).name
        self._next_id = 1
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_log = open(stderr_log, "a", encoding="utf-8") if stderr_log else None  # noqa: SIM115
        self._dead = False
        self._known: frozenset[str] | None = None
        try:
            # A new session, so that killing the engine also kills anything it started (e.g. via `sh -c`).
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            self._dead = True
            if self._stderr_log is not None:
                self._stderr_log.close()
            raise GtpEngineDied(self.name, None, [str(exc)]) from exc
        self._threads = [
            threading.Thread(target=self._read_stdout, name=f"gtp-stdout-{self.name}", daemon=True),
            threading.Thread(target=self._drain_stderr, name=f"gtp-stderr-{self.name}", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # -- context manager -------------------------------------------------------------------------------------

    def __enter__(self) -> GtpEngine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- background threads ----------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for raw in iter(stdout.readline, b""):
            self._lines.put(_clean_line(raw))
        self._lines.put(_EOF)

    def _drain_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for raw in iter(stderr.readline, b""):
            line = _clean_line(raw)
            self._stderr_tail.append(line)
            if self._stderr_log is not None:
                try:
                    self._stderr_log.write(line + "\n")
                    self._stderr_log.flush()
                except (OSError, ValueError):  # closed under us by close(); the tail still has it
                    pass

    # -- state -----------------------------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """True while the process runs and has not failed a command by timeout or crash."""
        return not self._dead and self.process.poll() is None

    def stderr_tail(self) -> list[str]:
        """The last stderr lines of the engine (at most STDERR_TAIL_LINES)."""
        return list(self._stderr_tail)

    # -- commands --------------------------------------------------------------------------------------------

    def send(self, command: str, timeout: float | None = 30.0) -> str:
        """Send one command and return the text of its success response (without `=` and id).

        Raises:
            GtpCommandError: the engine answered `?`.
            GtpTimeout: no complete answer within `timeout` seconds; the engine is killed.
            GtpEngineDied: the engine is dead, or dies before answering.
            GtpProtocolError: the answer carries another command's id.
            ValueError: `command` spans several lines.
        """
        if "\n" in command.strip() or "\r" in command:
            raise ValueError(f"a GTP command is one line: {command!r}")
        if self._dead:
            raise self._died()
        command_id = self._next_id
        self._next_id += 1
        self._write(f"{command_id} {command.strip()}\n")
        deadline = None if timeout is None else time.monotonic() + timeout
        ok, response_id, text = self._read_response(command, timeout, deadline)
        if response_id is not None and response_id != command_id:
            self.kill()
            raise GtpProtocolError(f"{self.name}: answer id {response_id} to command {command_id} {command!r}")
        if not ok:
            raise GtpCommandError(command, text)
        return text

    def try_send(self, command: str, timeout: float | None = 30.0) -> str | None:
        """Like `send`, but a `?` failure returns None (timeouts and crashes still raise)."""
        try:
            return self.send(command, timeout)
        except GtpCommandError:
            return None

    def known_commands(self, timeout: float = 10.0) -> frozenset[str]:
        """The engine's `list_commands`, asked once and cached (empty if the engine fails the command)."""
        if self._known is None:
            listing = self.try_send("list_commands", timeout) or ""
            self._known = frozenset(line.strip() for line in listing.splitlines() if line.strip())
        return self._known

    def knows(self, command_name: str, timeout: float = 10.0) -> bool:
        """Whether `command_name` is in the engine's `list_commands`."""
        return command_name in self.known_commands(timeout)

    def _write(self, text: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(text.encode())
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise self._died() from exc

    def _read_response(self, command: str, timeout: float | None, deadline: float | None) -> tuple[bool, int | None, str]:
        """Collect lines up to the empty line that ends a response; returns (success, id, text)."""
        first: str | None = None
        body: list[str] = []
        while True:
            line = self._next_line(command, timeout, deadline)
            if first is None:
                if line[:1] in ("=", "?"):
                    first = line
                continue  # junk before the response (or a stray empty line), as Sabaki ignores it
            if line == "":
                break
            body.append(line)
        ok, response_id, head = _parse_first_line(first)
        return ok, response_id, "\n".join([head, *body]) if body else head

    def _next_line(self, command: str, timeout: float | None, deadline: float | None) -> str:
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            line = self._lines.get(timeout=remaining)
        except queue.Empty:
            self.kill()
            assert timeout is not None
            raise GtpTimeout(command, timeout) from None
        if line is _EOF:
            raise self._died()
        return line

    def _died(self) -> GtpEngineDied:
        self._dead = True
        try:
            returncode = self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            returncode = None
        # Give the stderr thread a moment to collect the engine's last words.
        self._threads[1].join(timeout=1.0)
        return GtpEngineDied(self.name, returncode, self.stderr_tail())

    # -- shutdown --------------------------------------------------------------------------------------------

    def kill(self) -> None:
        """Kill the engine (and its process group) at once; later commands raise GtpEngineDied."""
        self._dead = True
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        try:
            self.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail in practice
            pass

    def close(self, timeout: float = 3.0) -> int | None:
        """Send `quit`, wait up to `timeout` seconds for the exit, then kill. Returns the exit code."""
        if self.process.poll() is None and not self._dead:
            try:
                self.try_send("quit", timeout)
                self.process.wait(timeout=timeout)
            except (GtpClientError, subprocess.TimeoutExpired):
                pass
        self.kill()
        for thread in self._threads:
            thread.join(timeout=1.0)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                _close_quietly(pipe)
        if self._stderr_log is not None:
            self._stderr_log.close()
            self._stderr_log = None
        return self.process.returncode


def _clean_line(raw: bytes) -> str:
    """Decode one output line; drop the newline and every CR (GTP.md section 1.1)."""
    return raw.decode("utf-8", errors="replace").rstrip("\n").replace("\r", "").replace("\t", " ")


def _parse_first_line(line: str) -> tuple[bool, int | None, str]:
    """Split `=12 text` / `?12 text` / `= text` into (success, id or None, text)."""
    ok = line[0] == "="
    rest = line[1:]
    digits = len(rest) - len(rest.lstrip("0123456789"))
    response_id = int(rest[:digits]) if digits else None
    return ok, response_id, rest[digits:].strip()


def _close_quietly(pipe: IO[bytes]) -> None:
    try:
        pipe.close()
    except OSError:
        pass
