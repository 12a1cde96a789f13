"""Coordinates: doctests of the go modules, and round trips over every point of every size."""

from __future__ import annotations

import doctest

import pytest

from miai.go import board, coords, rules, state
from miai.go.coords import GTP_COLUMNS, PASS, Color, parse_color, parse_gtp, parse_sgf, policy_index, to_gtp, to_sgf
from miai.go.errors import InvalidMoveError


@pytest.mark.parametrize("module", [coords, rules, board, state])
def test_doctests(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


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
