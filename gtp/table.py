"""The command table: handlers register with a decorator that declares their argument schema.

``list_commands`` and ``known_command`` are derived from the table, so what the engine lists is exactly what it
implements (gtp2ogs and Sabaki gate features on that list).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from .args import Arg, usage

Handler = Callable[..., Any]
_H = TypeVar("_H", bound=Handler)


@dataclass(frozen=True)
class CommandSpec:
    """A registered command.

    ``mutates``: the command may change the game (the session tells the player after it succeeds).
    ``streaming``: the handler writes its own response head and lines (analysis commands) and returns the last
    line, or ``""``, before the terminating blank line.
    ``listed``: shown by ``list_commands`` and ``known_command`` (False for aliases a controller must not pick).
    ``clock``: a clock command, which a controller sends together with the move it times (gtp2ogs writes
    ``time_left`` and the ``genmove`` in one go, its clock running from then): the command queued behind it starts
    when it started, not when it was answered (:class:`~miai.gtp.session.GtpSession` says when a command starts).
    """

    name: str
    handler: Handler
    schema: tuple[Arg, ...]
    mutates: bool = False
    streaming: bool = False
    listed: bool = True
    clock: bool = False

    @property
    def usage(self) -> str:
        """The command and its arguments, for error messages and docs."""
        return usage(self.name, self.schema)


class CommandTable:
    """An ordered mapping from command name to :class:`CommandSpec`."""

    def __init__(self) -> None:
        self._specs: dict[str, CommandSpec] = {}

    def command(
        self, name: str, *schema: Arg, mutates: bool = False, streaming: bool = False, listed: bool = True,
        clock: bool = False,
    ) -> Callable[[_H], _H]:
        """Decorator registering ``handler(session, *values)`` under ``name`` with the argument ``schema``.

        The handler comes back unchanged, its signature too (handlers call one another)."""

        def register(handler: _H) -> _H:
            self.add(CommandSpec(name, handler, tuple(schema), mutates, streaming, listed, clock))
            return handler

        return register

    def add(self, spec: CommandSpec) -> None:
        """Register ``spec``; a name can only be registered once, so two modules cannot silently clash."""
        if spec.name in self._specs:
            raise ValueError(f"GTP command {spec.name!r} registered twice")
        self._specs[spec.name] = spec

    def get(self, name: str) -> CommandSpec | None:
        """The spec for an exact (lower-case) name; never a prefix match."""
        return self._specs.get(name)

    def names(self) -> list[str]:
        """Every listed name (see ``CommandSpec.listed``), in registration order."""
        return [name for name, spec in self._specs.items() if spec.listed]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[CommandSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def merge(self, other: CommandTable) -> None:
        """Add every command of ``other`` (keeping its order)."""
        for spec in other:
            self.add(spec)
