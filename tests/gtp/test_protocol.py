"""GTP framing: preprocessing (spec section 3.1), command parsing and response formatting."""

from __future__ import annotations

import pytest

from miai.gtp.protocol import Command, format_response, parse_command, preprocess


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("play b d4", "play b d4"),
        ("play b d4\r\n", "play b d4"),  # gtp2ogs ends lines with CRLF
        ("play\tb\t\td4", "play b d4"),  # HT becomes a space, runs of spaces collapse
        ("  10   genmove   w  ", "10 genmove w"),
        ("genmove w # comment # more", "genmove w"),
        ("pl\x00ay b\x07 d4\x1b", "play b d4"),  # control characters vanish
        ("play b d4\x7f", "play b d4"),
        ("name\x0b", "name"),
    ],
)
def test_preprocess_cleans_lines(raw: str, expected: str) -> None:
    assert preprocess(raw) == expected


@pytest.mark.parametrize("raw", ["", "\n", "   ", "\t\t", "# only a comment", "  # indented comment", "\r", "\x01\x02"])
def test_preprocess_discards_empty_lines(raw: str) -> None:
    assert preprocess(raw) is None


def test_parse_command_with_and_without_id() -> None:
    assert parse_command("play b d4") == Command(None, "play", ("b", "d4"))
    assert parse_command("42 genmove w") == Command(42, "genmove", ("w",))
    assert parse_command("0 name") == Command(0, "name", ())


def test_command_names_are_case_insensitive_but_args_are_kept() -> None:
    assert parse_command("PLAY B D4") == Command(None, "play", ("B", "D4"))


def test_parse_command_id_edge_cases() -> None:
    assert parse_command("2147483647 name").id == 2147483647
    # Too big for a GTP id: it is then the command name, which the session answers with unknown command.
    assert parse_command("2147483648 name") == Command(None, "2147483648", ("name",))
    assert parse_command("17") == Command(17, "", ())
    assert parse_command("-1 name") == Command(None, "-1", ("name",))
    assert parse_command("\u0663 name").id is None  # a non-ASCII digit is not an id


def test_format_response_framing() -> None:
    assert format_response(True, None) == "= \n\n"
    assert format_response(True, 7, "D4") == "=7 D4\n\n"
    assert format_response(False, None, "illegal move") == "? illegal move\n\n"
    assert format_response(False, 3, "cannot undo") == "?3 cannot undo\n\n"


def test_format_response_never_contains_an_empty_line() -> None:
    text = format_response(True, 1, "a\n\nb\r\n  \nc  ")
    assert text == "=1 a\nb\nc\n\n"
    assert "\n\n" not in text[:-2]


def test_format_response_keeps_a_leading_newline_for_diagrams() -> None:
    assert format_response(True, None, "\n A B\n1 . .") == "= \n A B\n1 . .\n\n"
