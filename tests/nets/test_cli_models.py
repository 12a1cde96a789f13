"""`miai gtp --model` and `miai convert` as a user meets them: messages for bad inputs, the progress display in a
log, the file a conversion writes, and an unwritable cache. A tiny random KataGo model stands in for a real net, so
nothing here needs files from outside the repository."""

from __future__ import annotations

import gzip
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from miai.engine.cli.compose import ProgressBar

from .synthetic_models import Spec, write_model

pytestmark = pytest.mark.slow


def miai(args: list[str], cwd: Path, stdin: str = "quit\n", **env: str) -> subprocess.CompletedProcess[str]:
    """``miai ARGS`` in ``cwd`` with stderr piped (not a terminal), umask 022 and the cache in ``cwd``."""
    environment = {**os.environ, "MIAI_CACHE_DIR": str(cwd / "cache"), **env}
    return subprocess.run([sys.executable, "-m", "miai.engine", *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, env=environment, timeout=300, preexec_fn=lambda: os.umask(0o022))


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.bin.gz"
    path.write_bytes(gzip.compress(write_model(Spec(version=8))))
    return path


@pytest.fixture
def garbage(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.txt"
    path.write_bytes(bytes(range(256)) * 8)
    return path


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The failure's stderr, asserted to be exactly one ``Error:`` line after any progress lines."""
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if not line.startswith("converting")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr and "\\x" not in done.stderr and "Errno" not in done.stderr
    return lines[0]


@pytest.mark.parametrize("model, expected", [
    (".", "Error: cannot load model .: is a directory, not a net file (nor a folder of nets with manifests, "
          "like nets/default)"),
    ("missing.bin.gz", "Error: cannot load model missing.bin.gz: no such file"),
    ("no-dir/net.onnx", "Error: cannot load model no-dir/net.onnx: no such directory no-dir"),
])
def test_gtp_model_that_is_not_a_file(tmp_path: Path, model: str, expected: str) -> None:
    assert error_line(miai(["gtp", "--model", model], tmp_path)) == expected


@pytest.mark.parametrize("name, expected", [
    ("garbage.txt", "binary data (not a KataGo model, or a corrupt one)"),
    ("garbage.bin.gz", "not a gzip file"),
    ("garbage.onnx", "not an ONNX model"),
])
def test_gtp_model_of_binary_garbage_is_described_not_echoed(tmp_path: Path, garbage: Path, name: str,
                                                             expected: str) -> None:
    garbage.rename(tmp_path / name)
    line = error_line(miai(["gtp", "--model", name], tmp_path))
    assert line.startswith(f"Error: cannot load model {name}: ") and expected in line
    assert line.isprintable() and line.isascii()


def test_convert_into_a_missing_directory_fails_and_creates_nothing(tmp_path: Path, tiny_model: Path) -> None:
    line = error_line(miai(["convert", tiny_model.name, "out/sub/tiny.onnx"], tmp_path))
    assert line == "Error: cannot write out/sub/tiny.onnx: no such directory out"
    assert not (tmp_path / "out").exists()


def test_convert_writes_a_normal_file_and_plain_progress_lines_into_a_log(tmp_path: Path, tiny_model: Path) -> None:
    done = miai(["convert", tiny_model.name, "tiny.onnx"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr  # stderr is a pipe here: no redrawn bar
    assert done.stderr.splitlines() == ["converting: started", "converting: done", "wrote tiny.onnx"]
    assert stat.S_IMODE((tmp_path / "tiny.onnx").stat().st_mode) == 0o644  # 0666 less umask 022, not 0600


def test_a_failed_conversion_in_a_log_keeps_the_error_on_its_own_line(tmp_path: Path, garbage: Path) -> None:
    done = miai(["convert", garbage.name, "out.onnx"], tmp_path)
    assert done.stderr.splitlines()[0] == "converting: started"
    assert error_line(done).startswith("Error: cannot convert garbage.txt: ")
    assert not (tmp_path / "out.onnx").exists()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_an_interrupted_bar_on_a_terminal_ends_its_line() -> None:
    screen = Terminal()
    bar = ProgressBar("converting", stream=screen)
    bar(0.0, "reading")
    bar(0.3, "reading")
    bar.close()  # what build_evaluator and convert do when the conversion raises
    assert screen.getvalue().count("\r") == 2 and screen.getvalue().endswith("\n")
    finished = Terminal()
    bar = ProgressBar("converting", stream=finished)
    bar(1.0, "done")
    bar.close()
    assert finished.getvalue().count("\n") == 1  # no blank line after a finished bar


def test_an_unwritable_cache_converts_in_memory_and_plays(tmp_path: Path, tiny_model: Path) -> None:
    (tmp_path / "a-file").write_text("")
    done = miai(["gtp", "--model", tiny_model.name, "--set", "search.max_visits=8"], tmp_path,
                "boardsize 9\ngenmove b\nquit\n", MIAI_CACHE_DIR=str(tmp_path / "a-file" / "cache"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n\n")[1].startswith("= ")  # genmove answered
    warnings = [line for line in done.stderr.splitlines() if "cannot write the net cache" in line]
    assert len(warnings) == 1 and "converted in memory" in warnings[0] and "MIAI_CACHE_DIR" in warnings[0]
