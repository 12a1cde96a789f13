"""Log files as KataGo's (a file per run in a folder, GTP traffic, each move's search) and --log-level anywhere."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from miai.engine.cli.logs import close_log_file, open_log_file, set_stderr_level
from miai.engine.cli.main import main
from miai.engine.config import LogConfig
from miai.engine.katago_config import load_configs
from tests.gtp.fakes import Driver


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_log_file()
    set_stderr_level("warning")


def test_katagos_log_keys_map_onto_the_log_options(tmp_path: Path) -> None:
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text(f"logDir = {tmp_path / 'logs'}\nlogAllGTPCommunication = false\nlogSearchInfo = false\n")
    log = load_configs([cfg]).config.log
    assert (log.dir, log.gtp, log.search_info) == (str(tmp_path / "logs"), False, False)
    assert load_configs([], ["logFile=gtp.log"]).config.log.file == "gtp.log"


def test_a_log_file_per_run_records_the_gtp_traffic(tmp_path: Path) -> None:
    folder = tmp_path / "logs" / "gtp"  # created when missing
    path = open_log_file(LogConfig(dir=str(folder)), "miai gtp -config x.cfg")
    assert path is not None and path.parent == folder and re.fullmatch(r"\d{8}-\d{6}-\d+\.log", path.name)
    driver = Driver()
    driver.ok("name")
    driver.fail("bogus")
    logging.getLogger("miai.engine.player").warning("a warning")
    lines = path.read_text(encoding="utf-8").splitlines()
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{4} "
    assert re.fullmatch(stamp + "miai gtp -config x.cfg", lines[0])
    assert [line.split(" ", 2)[2] for line in lines[1:]] == [
        "< name", "> = miai", "< bogus", "> ? unknown command", "WARNING: a warning"]
    assert "<" not in driver.err.getvalue() and ">" not in driver.err.getvalue()  # the traffic never goes there


def test_the_traffic_channel_can_be_off_and_nothing_is_written_without_a_folder(tmp_path: Path) -> None:
    assert open_log_file(LogConfig(), "miai gtp") is None
    Driver().ok("name")
    path = open_log_file(LogConfig(file=str(tmp_path / "gtp.log"), gtp=False), "miai gtp")
    assert path == tmp_path / "gtp.log"
    Driver().ok("name")
    assert "name" not in path.read_text(encoding="utf-8").split("\n", 1)[1]


def test_an_unwritable_log_folder_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(main, ["gtp", "--model", "playouts", "-override-config", f"logDir={blocker}/logs"],
                                input="quit\n")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot create log folder {blocker}/logs") and \
        len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("args", [["--log-level", "debug", "match", "--help"], ["match", "--log-level", "debug",
                                                                             "--help"],
                                  ["bench", "search", "--log-level", "info", "--help"],
                                  ["analysis", "--log-level", "error", "--help"]])
def test_log_level_is_taken_before_and_after_every_sub_command(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "--log-level" in result.output


def test_log_level_after_the_sub_command_wins() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--log-level", "error", "match", "--log-level", "bogus", "--black", "x",
                                  "--white", "y"])
    assert result.exit_code == 2 and "Invalid value for '--log-level'" in result.stderr
    assert logging.getLogger("miai").getEffectiveLevel() == logging.ERROR
    result = runner.invoke(main, ["--log-level", "error", "match", "--log-level", "debug", "--games", "0"])
    assert result.exit_code == 2  # the bad --games stops it after --log-level was read
    assert logging.getLogger("miai").getEffectiveLevel() == logging.DEBUG


@pytest.mark.slow
def test_gtp_debug_prints_each_genmoves_search_and_the_log_file_has_its_moves(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "miai.engine", "gtp", "--log-level", "debug", "-model", "playouts",
         "-override-config", f"logDir={tmp_path},maxTime=0,maxVisits=30"],
        input="boardsize 7\nclear_board\ngenmove b\nquit\n", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = [line for line in done.stderr.splitlines() if line.startswith("miai DEBUG genmove B move 1: ")]
    assert len(summary) == 1 and " 30 visits, " in summary[0], done.stderr
    (log,) = tmp_path.glob("*.log")
    text = log.read_text(encoding="utf-8")
    assert "< genmove b" in text and "genmove B move 1: " in text
    moves = [line for line in text.splitlines() if re.match(r"\s+[A-HJ-T]\d+ visits\s+\d+ winrate", line)]
    assert moves, text
