"""GTP command handlers, one module per group; :func:`default_table` assembles them in listing order."""

from __future__ import annotations

from ..table import CommandTable
from . import admin, analyze, board, game, handicap, query, timing


def default_table() -> CommandTable:
    """Every command miai implements, in the order ``list_commands`` shows them."""
    table = CommandTable()
    for module in (admin, board, handicap, game, timing, query, analyze):
        table.merge(module.table)
    return table
