"""The ASCII fixture helper reads diagrams the way GTP showboard prints them."""

from __future__ import annotations

import pytest

from miai.go.coords import Color, parse_gtp
from tests.go.fixtures import parse_board, render, state_from_board


def test_axis_labels_are_ignored_and_rows_run_top_down() -> None:
    size, colors = parse_board(
        """
        3 X . .
        2 . O .
        1 . . X
          A B C
        """
    )
    assert size == 3
    assert colors[parse_gtp("A3", 3)] == 1
    assert colors[parse_gtp("B2", 3)] == 2
    assert colors[parse_gtp("C1", 3)] == 1
    assert sum(1 for v in colors if v) == 3


def test_non_square_diagram_is_rejected() -> None:
    with pytest.raises(ValueError):
        parse_board(". .\n. . .")


def test_render_round_trips_and_to_play_is_respected() -> None:
    diagram = "X . O\n. O .\nX . ."
    state = state_from_board(diagram, to_play=Color.WHITE)
    assert render(state) == diagram
    assert state.to_play is Color.WHITE
