"""Streaming analysis: lz-analyze, kata-analyze and their genmove_analyze forms (GTP.md section 2).

The response head ``=id`` goes out at once; each snapshot the player emits becomes one ``info ...`` line;
``*-analyze`` ends when any input line arrives (that line is left for the session to execute next), and
``*-genmove_analyze`` ends with ``play <move>`` once the search is done. The closing blank line is written by
the session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis import Flavour, format_snapshot, parse_analyze_args
from ..args import STRING, many, named
from ..player import AnalysisSnapshot, AnalyzeRequest, Emit
from ..table import CommandTable
from .game import generate, move_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from miai.go.coords import Color

    from ..context import Session

table = CommandTable()
_ARGS = many(named(STRING, "arg"))


def _parse(s: Session, tokens: list[str], flavour: Flavour) -> tuple[Color, AnalyzeRequest]:
    return parse_analyze_args(tokens, s.state.size, s.state.to_play, s.config.analysis_interval_cs, flavour)


def _emitter(s: Session, flavour: Flavour, request: AnalyzeRequest) -> tuple[Emit, Callable[[], None]]:
    """An ``emit(snapshot)`` writing formatted lines into the open response, and its ``close``."""
    emit_line, close = s.stream_writer()
    size = s.state.size

    def emit(snapshot: AnalysisSnapshot) -> None:
        emit_line(format_snapshot(snapshot, size, flavour, request))

    return emit, close


def analyze(s: Session, flavour: Flavour, tokens: list[str]) -> str:
    """Run the player's analysis until input is pending."""
    color, request = _parse(s, tokens, flavour)
    s.open_stream()
    emit, close = _emitter(s, flavour, request)
    try:
        s.player.analyze(s.state.copy(), color, request, emit, s.stop_event)
    finally:
        close()
    return ""


def genmove_analyze(s: Session, flavour: Flavour, tokens: list[str]) -> str:
    """Generate and play a move while streaming analysis; the last line is ``play <move>``."""
    color, request = _parse(s, tokens, flavour)
    s.open_stream()
    emit, close = _emitter(s, flavour, request)
    try:
        move = generate(s, color, analysis=request, emit=emit)
    finally:
        close()
    return "play " + move_text(move, s.state.size)


@table.command("lz-analyze", _ARGS, streaming=True)
def lz_analyze(s: Session, tokens: list[str]) -> str:
    """``lz-analyze [color] [interval] [keys]``: integer winrates (ten-thousandths)."""
    return analyze(s, "lz", tokens)


@table.command("kata-analyze", _ARGS, streaming=True)
def kata_analyze(s: Session, tokens: list[str]) -> str:
    """``kata-analyze [color] [interval] [keys]``: decimal winrates, score, optional ownership/rootInfo."""
    return analyze(s, "kata", tokens)


@table.command("lz-genmove_analyze", _ARGS, mutates=True, streaming=True)
def lz_genmove_analyze(s: Session, tokens: list[str]) -> str:
    """``lz-genmove_analyze [color] [interval] [keys]``."""
    return genmove_analyze(s, "lz", tokens)


@table.command("kata-genmove_analyze", _ARGS, mutates=True, streaming=True)
def kata_genmove_analyze(s: Session, tokens: list[str]) -> str:
    """``kata-genmove_analyze [color] [interval] [keys]``."""
    return genmove_analyze(s, "kata", tokens)


# KataGo also answers ``analyze`` and ``genmove_analyze`` (its "Sabaki flavour": kata- output) without listing them.
# They stay out of list_commands here too: Sabaki would pick the unprefixed names first and, since its current
# parser reads their winrates as Leela Zero integers, would misread kata- decimals.
@table.command("analyze", _ARGS, streaming=True, listed=False)
def plain_analyze(s: Session, tokens: list[str]) -> str:
    """``analyze [color] [interval] [keys]``: kata-analyze under KataGo's unprefixed name."""
    return analyze(s, "kata", tokens)


@table.command("genmove_analyze", _ARGS, mutates=True, streaming=True, listed=False)
def plain_genmove_analyze(s: Session, tokens: list[str]) -> str:
    """``genmove_analyze [color] [interval] [keys]``: kata-genmove_analyze under KataGo's unprefixed name."""
    return genmove_analyze(s, "kata", tokens)
