"""Argument schemas and the command table."""

from __future__ import annotations

import pytest

from miai.go.coords import PASS, Color
from miai.gtp.args import COLOR, FLOAT, UINT, VERTEX, bind, many, named, optional
from miai.gtp.commands import default_table
from miai.gtp.errors import SYNTAX_ERROR, GtpSyntaxError
from miai.gtp.table import CommandSpec, CommandTable


def test_bind_parses_each_declared_argument() -> None:
    assert bind("play", (COLOR, VERTEX), ["B", "d4"], 19) == [Color.BLACK, 15 * 19 + 3]
    assert bind("play", (COLOR, VERTEX), ["white", "PASS"], 9) == [Color.WHITE, PASS]


def test_bind_optional_and_variadic() -> None:
    schema = (named(UINT, "size"), optional(named(UINT, "height")))
    assert bind("boardsize", schema, ["9"], 19) == [9, None]
    assert bind("boardsize", schema, ["9", "9"], 19) == [9, 9]
    assert bind("set_free_handicap", (many(VERTEX),), [], 9) == [[]]
    assert bind("set_free_handicap", (many(VERTEX),), ["a1", "j9"], 9) == [[72, 8]]


@pytest.mark.parametrize(
    ("tokens", "detail"),
    [
        ([], "expected 'play color vertex', got 0 argument(s)"),
        (["b"], "expected 'play color vertex', got 1 argument(s)"),
        (["b", "d4", "x"], "expected 'play color vertex', got 3 argument(s)"),
        (["red", "d4"], "invalid color 'red'"),
        (["b", "i5"], "invalid vertex 'i5'"),  # no I column
        (["b", "z1"], "invalid vertex 'z1'"),  # off a 19x19 board
        (["b", "a20"], "invalid vertex 'a20'"),
        (["b", "resign"], "invalid vertex 'resign'"),
    ],
)
def test_bind_errors_quote_the_bad_input(tokens: list[str], detail: str) -> None:
    with pytest.raises(GtpSyntaxError) as caught:
        bind("play", (COLOR, VERTEX), tokens, 19)
    assert caught.value.message == SYNTAX_ERROR
    assert caught.value.detail == detail


@pytest.mark.parametrize("token", ["nan", "inf", "-inf", "1e999", "x", ""])
def test_float_rejects_non_finite_and_garbage(token: str) -> None:
    with pytest.raises(GtpSyntaxError):
        bind("komi", (FLOAT,), [token], 19)


@pytest.mark.parametrize("token", ["-1", "+3", "1.0", "\u0663", "0x10"])
def test_uint_rejects_anything_but_ascii_digits(token: str) -> None:
    with pytest.raises(GtpSyntaxError):
        bind("boardsize", (UINT,), [token], 19)


def test_table_rejects_duplicate_names_and_keeps_order() -> None:
    table = CommandTable()

    @table.command("b")
    def b(session: object) -> str:
        return ""

    @table.command("a", COLOR)
    def a(session: object, color: Color) -> str:
        return ""

    assert table.names() == ["b", "a"]
    assert "a" in table and "c" not in table
    assert table.get("a") is not None and table.get("a").usage == "a color"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="registered twice"):
        table.add(CommandSpec("a", a, ()))


def test_default_table_has_every_required_and_promised_command() -> None:
    names = set(default_table().names())
    required = {"protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
                "clear_board", "komi", "play", "genmove"}
    promised = {"undo", "showboard", "fixed_handicap", "place_free_handicap", "set_free_handicap", "time_settings",
                "time_left", "kgs-time_settings", "kata-time_settings", "final_score", "final_status_list",
                "kgs-genmove_cleanup", "kgs-rules", "kata-set-rules", "kata-get-rules", "loadsgf", "printsgf",
                "reg_genmove", "lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze",
                "kata-raw-nn", "kata-set-param", "kata-get-param", "stop", "cputime", "clear_cache", "is_legal",
                "all_legal", "list_stones", "captures", "miai-search_stats", "help"}
    assert required | promised <= names
    # Private extensions carry a dash (spec section 2.14); the rest are GTP or GNU Go names.
    gnugo_names = {"is_legal", "all_legal", "list_stones", "captures", "cputime", "stop", "clear_cache", "help"}
    katago_names = {"get_komi", "rectangular_boardsize", "set_position", "genmove_debug"}  # KataGo's, undashed
    for name in names - required - gnugo_names - katago_names - {"undo", "showboard", "fixed_handicap", "place_free_handicap",
                                                  "set_free_handicap", "time_settings", "time_left",
                                                  "final_score", "final_status_list", "loadsgf", "printsgf",
                                                  "reg_genmove"}:
        assert "-" in name, name


def test_katago_unprefixed_aliases_work_but_stay_unlisted() -> None:
    """KataGo answers ``analyze`` and ``genmove_analyze`` without listing them; listing them would make Sabaki
    prefer them and read their kata- decimals as Leela Zero integers."""
    table = default_table()
    for alias in ("analyze", "genmove_analyze"):
        assert table.get(alias) is not None and alias not in table.names()


def test_docs_mention_every_command() -> None:
    """docs/gtp.md's command reference stays in step with the table."""
    from pathlib import Path

    docs = (Path(__file__).parents[2] / "docs" / "gtp.md").read_text(encoding="utf-8")
    missing = [name for name in default_table().names() if f"`{name}" not in docs]
    assert not missing
