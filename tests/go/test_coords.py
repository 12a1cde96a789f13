"""Coordinates: doctests of the go modules, and round trips over every point of every size."""

from __future__ import annotations

import ast
import doctest
import sys
from pathlib import Path
from types import ModuleType

import pytest

from miai.go import board, coords, rules, state
from miai.go.coords import GTP_COLUMNS, PASS, Color, parse_color, parse_gtp, parse_sgf, policy_index, to_gtp, to_sgf
from miai.go.errors import InvalidMoveError


@pytest.mark.parametrize("module", [coords, rules, board, state])
def test_doctests(module: ModuleType) -> None:
    if Path(module.__file__ or "").suffix == ".py":
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    else:  # compiled by mypyc (miai.go.native): its functions keep no docstrings, so run its source's on it
        package, _, name = module.__name__.rpartition(".")
        source = next(Path(folder, name + ".py") for folder in sys.modules[package].__path__
                      if Path(folder, name + ".py").is_file())
        result = source_doctests(source, vars(module))
    assert result.attempted > 0 and result.failed == 0


def source_doctests(source: Path, globs: dict[str, object]) -> doctest.TestResults:
    """The examples in the docstrings of ``source`` run on ``globs``, each docstring on a fresh copy (as testmod)."""
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and (text := ast.get_docstring(node)):
            line = getattr(node, "lineno", 0)
            runner.run(parser.get_doctest(text, dict(globs), f"{source.name}:{line}", str(source), line))
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("size", range(2, 26))
def test_round_trips_on_every_point(size: int) -> None:
    for move in range(size * size):
        assert parse_gtp(to_gtp(move, size), size) == move
        assert parse_gtp(to_gtp(move, size).lower(), size) == move
        assert parse_sgf(to_sgf(move, size), size) == move
        assert policy_index(move, size) == move
    assert policy_index(PASS, size) == size * size


def test_gtp_conventions() -> None:
    assert "I" not in GTP_COLUMNS and len(GTP_COLUMNS) == 25
    assert parse_gtp("A1", 19) == 18 * 19  # bottom left
    assert parse_gtp("T19", 19) == 18  # top right
    assert parse_gtp("J1", 9) == 80  # J follows H
    assert to_gtp(parse_gtp("Z25", 25), 25) == "Z25"
    assert parse_gtp("  pass ", 19) == PASS and to_gtp(PASS, 19) == "pass"


@pytest.mark.parametrize("text", ["I5", "A0", "A20", "T", "5A", "", "AA1", "K-1", "resign", "U1"])
def test_bad_gtp_vertices(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        parse_gtp(text, 19)


def test_sgf_pass_and_bounds() -> None:
    assert parse_sgf("tt", 19) == PASS
    assert parse_sgf("tt", 20) == 19 * 20 + 19  # on a 20x20 board tt is a real point
    assert to_sgf(PASS, 19) == ""
    for bad in ("jj", "a", "abc", "A1", "zz"):
        with pytest.raises(InvalidMoveError):
            parse_sgf(bad, 9)


def test_colors() -> None:
    assert [parse_color(t) for t in ("b", "B", "black", "WHITE", "w")] == [1, 1, 1, 2, 2]
    assert Color.BLACK.opponent is Color.WHITE and Color.WHITE.opponent is Color.BLACK
    assert Color.EMPTY.opponent is Color.EMPTY
    with pytest.raises(InvalidMoveError):
        parse_color("red")
