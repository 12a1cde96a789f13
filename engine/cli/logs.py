"""Where miai's diagnostics go: stderr at ``--log-level``, and log files as KataGo writes them.

``--log-level`` is taken before the sub-command (``miai --log-level debug gtp``) and after it (``miai gtp
--log-level debug``, added to every sub-command by :func:`add_log_level`); the one given last wins. It sets what
reaches stderr: at ``debug`` each genmove prints its search summary there.

The ``[log]`` options (KataGo's ``logDir``, ``logFile``, ``logAllGTPCommunication``, ``logSearchInfo``) open a log
file for the run: every message at ``info`` and above with its time, plus two channels that only the file gets: the
GTP traffic (``< command`` and ``> answer`` lines) and each genmove's search (visits, time, the best moves and their
principal variations). Nothing of either channel goes to stderr, which a GUI may show to its user.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from miai.engine.config import LogConfig
from miai.go.oserrors import describe

__all__ = ["LEVELS", "set_stderr_level", "add_log_level", "open_log_file", "close_log_file"]

LEVELS = ("debug", "info", "warning", "error")


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a record comes (click's test runner swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed stderr must not take the engine down
            pass


class _FileFormatter(logging.Formatter):
    """``time message``, with the level named from warnings up, as KataGo's log lines."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(message)s", "%Y-%m-%d %H:%M:%S%z")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if record.levelno < logging.WARNING:
            return text
        stamp, _, message = text.partition(" ")  # date, then time and message
        clock, _, message = message.partition(" ")
        return f"{stamp} {clock} {record.levelname}: {message}"


_STDERR = _StderrHandler()
_STDERR.setFormatter(logging.Formatter("miai %(levelname)s %(message)s"))
_FILE: list[logging.Handler] = []  # the run's log file handler, once opened


# miai's own messages: the libraries' loggers (numba's debug output, ...) are left to Python's defaults.
_MIAI = logging.getLogger("miai")


def set_stderr_level(level: str) -> None:
    """Send miai's messages at ``level`` (one of :data:`LEVELS`) and above to stderr."""
    if _STDERR not in _MIAI.handlers:
        _MIAI.addHandler(_STDERR)
    _STDERR.setLevel(level.upper())
    _update_level()


def _update_level() -> None:
    """miai's logger passes what the least strict handler wants (a file records info even when stderr shows only
    warnings)."""
    levels = [_STDERR.level or logging.WARNING] + [logging.INFO for _ in _FILE]
    _MIAI.setLevel(min(levels))


def _level_callback(_ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        set_stderr_level(value)


_Command = TypeVar("_Command", bound=Callable[..., Any])


def log_level_option(default: str | None = None) -> Callable[[_Command], _Command]:
    """``--log-level`` as a click option that takes effect when it is read."""
    return click.option("--log-level", default=default, show_default=default is not None, expose_value=False,
                        type=click.Choice(LEVELS), callback=_level_callback,
                        help="Messages on stderr at this level and above (debug: each genmove's search summary).")


def add_log_level(command: click.Command) -> None:
    """Give ``command`` and every sub-command under it ``--log-level`` (groups included)."""
    if not any(param.name == "log_level" for param in command.params):
        log_level_option()(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            add_log_level(sub)


def open_log_file(config: LogConfig, what: str) -> Path | None:
    """Open the run's log file as ``config`` says (None when it names none): a new file named by the start time
    in ``config.dir``, or ``config.file`` appended to. ``what`` (the command line) is its first line.

    Raises:
        click.ClickException: the folder or file cannot be created or opened (naming it).
    """
    if not config.dir and not config.file:
        return None
    if config.file:
        path = Path(config.file).expanduser()
    else:
        folder = Path(config.dir).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise click.ClickException(f"cannot create log folder {folder}: {describe(exc, folder)}") from exc
        path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot open log file {path}: {describe(exc, path)}") from exc
    handler.setFormatter(_FileFormatter())
    handler.setLevel(logging.INFO)  # debug output is for stderr: the search channel has each move's search
    _FILE.append(handler)
    _MIAI.addHandler(handler)
    _update_level()
    from miai.engine.core.snapshot import search_info_log
    from miai.gtp.session import traffic_log

    # The two channels only a log file records (logAllGTPCommunication, logSearchInfo); they never propagate.
    for channel, enabled in ((traffic_log, config.gtp), (search_info_log, config.search_info)):
        channel.setLevel(logging.INFO if enabled else logging.CRITICAL + 1)
        channel.addHandler(handler)
    _MIAI.info("%s", what)
    return path


def close_log_file() -> None:
    """Close the run's log file, if one is open (its channels go quiet again)."""
    from miai.engine.core.snapshot import search_info_log
    from miai.gtp.session import traffic_log

    while _FILE:
        handler = _FILE.pop()
        for logger in (_MIAI, traffic_log, search_info_log):
            logger.removeHandler(handler)
        handler.close()
    for channel in (traffic_log, search_info_log):
        channel.setLevel(logging.NOTSET)
    _update_level()
