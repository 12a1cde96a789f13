"""Administrative commands: identity, command list, parameters, stats, ids and errors."""

from __future__ import annotations

import json

from importlib.metadata import version as installed_version
from miai.gtp.config import GtpConfig

from .fakes import Driver, FakePlayer


def test_identity(driver: Driver) -> None:
    assert driver.ok("protocol_version") == "2"
    assert driver.ok("name") == "miai"
    version = driver.ok("version")
    assert version == installed_version("miai")  # the same text as `miai --version`
    int(version.split(".")[1])  # Lizzie splits on dots and parses the second part as an integer


def test_identity_comes_from_config() -> None:
    driver = Driver(config=GtpConfig(name="tester", version="3.14"))
    assert driver.ok("name") == "tester"
    assert driver.ok("version") == "3.14"


def test_ids_are_echoed_on_success_and_failure(driver: Driver) -> None:
    assert driver.raw("12 name") == "=12 miai\n\n"
    assert driver.raw("13 undo") == "?13 cannot undo: no move to undo\n\n"
    assert driver.raw("14 frobnicate") == "?14 unknown command\n\n"
    assert driver.raw("15") == "?15 unknown command\n\n"


def test_list_commands_matches_known_command_exactly(driver: Driver) -> None:
    listed = driver.ok("list_commands").split("\n")
    assert len(listed) == len(set(listed)) and "lz-analyze" in listed and "kata-analyze" in listed
    for name in listed:
        assert driver.ok(f"known_command {name}") == "true"
        # every listed command is dispatched: it never answers "unknown command"
        assert driver.raw(f"{name} ") != "? unknown command\n\n" or name == "quit"
    for name in ("frobnicate", "lz", "genmov", "play2", "gogui-analyze_commands"):
        assert driver.ok(f"known_command {name}") == "false"
        assert driver.fail(name).startswith("unknown command")


def test_unknown_command_is_never_prefix_matched(driver: Driver) -> None:
    assert driver.fail("gen").startswith("unknown command")
    assert driver.fail("genmovex b").startswith("unknown command")


def test_command_names_are_case_insensitive(driver: Driver) -> None:
    assert driver.ok("NAME") == "miai"
    assert driver.ok("Protocol_Version") == "2"


def test_blank_and_comment_lines_get_no_response(driver: Driver) -> None:
    for line in ("", "   ", "\t", "# just a comment", "\r", "\x00"):
        assert driver.raw(line) == ""


def test_quit_answers_and_marks_the_session(driver: Driver) -> None:
    assert driver.raw("7 quit") == "=7 \n\n"
    assert driver.session.quitting


def test_params_are_forwarded(driver: Driver, player: FakePlayer) -> None:
    assert driver.ok("kata-get-param maxVisits") == "100"
    assert driver.ok("kata-set-param maxVisits 50") == ""
    assert player.params["maxVisits"] == "50"
    assert driver.ok("kata-get-param maxVisits") == "50"
    assert driver.fail("kata-get-param nope").startswith("unknown parameter 'nope'")
    assert driver.fail("kata-set-param nope 1").startswith("unknown parameter 'nope'")
    assert driver.fail("kata-set-param maxVisits lots") == "cannot set parameter 'maxVisits' to 'lots': expected an integer"
    assert player.params["maxVisits"] == "50"


def test_search_stats_is_one_line_of_json(driver: Driver) -> None:
    text = driver.ok("miai-search_stats")
    assert "\n" not in text
    assert json.loads(text)["name"] == "fake"


def test_cputime_is_a_nonnegative_number(driver: Driver) -> None:
    assert float(driver.ok("cputime")) >= 0.0


def test_stop_and_clear_cache_succeed(driver: Driver) -> None:
    assert driver.ok("stop") == ""
    assert driver.ok("clear_cache") == ""


class ExplodingPlayer(FakePlayer):
    def search_stats(self) -> dict[str, object]:
        raise RuntimeError("boom\nsecond line")


def test_an_exception_in_a_handler_becomes_a_one_line_failure() -> None:
    driver = Driver(ExplodingPlayer())
    written = driver.raw("5 miai-search_stats")
    assert written == "?5 internal error: RuntimeError: boom second line\n\n"
    assert "Traceback" in driver.err.getvalue()
    assert driver.ok("name") == "miai"  # the session goes on
