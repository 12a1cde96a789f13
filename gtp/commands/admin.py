"""Administrative commands: identity, the command list, engine parameters, statistics, quit."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from ..args import STRING, many, named
from ..errors import GtpError, GtpSyntaxError
from ..table import CommandTable

if TYPE_CHECKING:
    from ..context import Session

table = CommandTable()


@table.command("protocol_version")
def protocol_version(s: Session) -> str:
    """GTP version 2."""
    return "2"


@table.command("name")
def name(s: Session) -> str:
    """The engine's name."""
    return s.config.name


@table.command("version")
def version(s: Session) -> str:
    """The engine's version, ``X.Y``."""
    return s.config.version


@table.command("known_command", named(STRING, "command_name"))
def known_command(s: Session, command_name: str) -> str:
    """``true`` if the command is listed (exact name, case-insensitive like the dispatcher)."""
    return "true" if command_name.lower() in s.table.names() else "false"


@table.command("list_commands")
def list_commands(s: Session) -> str:
    """One implemented command per line, straight from the command table."""
    return "\n".join(s.table.names())


@table.command("help")
def help_(s: Session) -> str:
    """The command list, as GNU Go answers ``help`` (KataGo 1.17 answers ``unknown command``)."""
    return list_commands(s)


@table.command("quit")
def quit_(s: Session) -> str:
    """Answer, then end the session."""
    s.request_quit()
    return ""


@table.command("kgs-game_over")
def kgs_game_over(s: Session) -> str:
    """kgsGtp's end of a game: stop thinking and, with ``gtp.exit_on_game_over``, end the session once answered
    (kgsGtp starts the engine again for its next game)."""
    s.player.stop_pondering()
    if s.config.exit_on_game_over:
        s.request_quit()
    return ""


@table.command("kgs-chat", named(STRING, "where"), named(STRING, "name"), many(named(STRING, "word")))
def kgs_chat(s: Session, where: str, name: str, words: list[str]) -> str:
    """kgsGtp passes on a chat message (``game`` or ``private``, the sender, the text); kgsGtp posts the answer
    back to the sender."""
    if where.lower() not in ("game", "private"):
        raise GtpSyntaxError(f"expected game or private, got '{where}'")
    return f"Hello {name}, I am {s.config.name}, a Go program; I cannot chat, but thank you for the message."


@table.command("cputime")
def cputime(s: Session) -> str:
    """CPU seconds used by the process (all threads), as twogtp collects it."""
    return f"{time.process_time():.3f}"


@table.command("stop")
def stop(s: Session) -> str:
    """Stop thinking. Analysis and pondering already stop when any line arrives, so there is nothing left."""
    return ""


@table.command("clear_cache")
def clear_cache(s: Session) -> str:
    """Forget the player's cached evaluations and search trees."""
    s.player.clear_cache()
    return ""


@table.command("kata-get-param", named(STRING, "name"))
def kata_get_param(s: Session, param: str) -> str:
    """The current value of a player parameter (a KataGo name such as ``maxVisits``, or miai's option key)."""
    try:
        return s.player.get_param(param)
    except KeyError as error:
        raise GtpError(f"unknown parameter '{param}'", _reason(error)) from error


@table.command("kata-set-param", named(STRING, "name"), named(STRING, "value"))
def kata_set_param(s: Session, param: str, value: str) -> str:
    """Change a player parameter for the rest of the session: every KataGo name ``kata-list-params`` lists, and
    miai's own option keys. A KataGo parameter miai has no equivalent for, or one fixed when the net loads, is
    refused by name with the reason (never accepted without an effect)."""
    try:
        s.player.set_param(param, value)
    except KeyError as error:
        raise GtpError(f"unknown parameter '{param}'", _reason(error)) from error
    except ValueError as error:
        raise GtpError(f"cannot set parameter '{param}' to '{value}'", str(error)) from error
    return ""


def _reason(error: KeyError) -> str | None:
    """The reason a player gave with a KeyError (``KeyError(name, reason)``), if any."""
    return str(error.args[1]) if len(error.args) > 1 else None


@table.command("kata-list-params")
def kata_list_params(s: Session) -> str:
    """The KataGo parameter names kata-set-param honours, on one line as KataGo lists them."""
    return " ".join(s.player.list_params())


@table.command("kata-get-models")
def kata_get_models(s: Session) -> str:
    """The loaded net(s) for the current board size as KataGo's JSON list (``[]`` when no net plays)."""
    return json.dumps(s.player.models(s.state.size), separators=(",", ":"))


@table.command("miai-graph_dump", named(STRING, "file"))
def graph_dump(s: Session, path: str) -> str:
    """Write the current search graph to FILE as JSON (nodes, edges, visits, values; docs/gtp.md)."""
    try:
        dump = s.player.search_graph(s.state)
    except NotImplementedError as error:
        raise GtpError(str(error)) from error
    text = json.dumps(dump, separators=(",", ":"))
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text + "\n")
    except OSError as error:
        raise GtpError(f"cannot write {path}: {error.strerror or error}") from error
    return ""


@table.command("miai-search_stats")
def search_stats(s: Session) -> str:
    """Statistics of the last search as one line of JSON."""
    return json.dumps(s.player.search_stats(), sort_keys=True, default=str)
