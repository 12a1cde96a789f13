"""A tiny synchronous GTP client for driving GNU Go from tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import TracebackType

GNUGO = Path("/usr/games/gnugo")


class GtpError(RuntimeError):
    """The engine answered a command with ``? message``."""


class GtpClient:
    """Runs an engine subprocess and exchanges GTP commands with it, one at a time."""

    def __init__(self, argv: list[str]) -> None:
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1
        )

    def send(self, command: str) -> str:
        """Send one command and return the response text (without ``=``); raises GtpError on ``?``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise GtpError(f"engine exited during {command!r}")
            line = line.rstrip("\r\n")
            if not line and lines:
                break
            if line:
                lines.append(line)
        status, first = lines[0][0], lines[0][1:].strip()
        body = "\n".join([first, *lines[1:]]).strip()
        if status == "?":
            raise GtpError(f"{command!r} failed: {body}")
        if status != "=":
            raise GtpError(f"{command!r}: malformed response {lines!r}")
        return body

    def close(self) -> None:
        """Ask the engine to quit and wait for it."""
        try:
            self.send("quit")
        except (GtpError, OSError):
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> GtpClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def gnugo(*extra: str) -> GtpClient:
    """GNU Go in GTP mode with Chinese rules (area scoring; simple ko and no suicide by default)."""
    return GtpClient([str(GNUGO), "--mode", "gtp", "--chinese-rules", "--level", "0", *extra])
