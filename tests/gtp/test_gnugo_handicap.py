"""fixed_handicap must answer exactly what GNU Go 3.8 answers (the spec's reference implementation)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .fakes import Driver

GNUGO = Path("/usr/games/gnugo") if Path("/usr/games/gnugo").exists() else shutil.which("gnugo")

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo)"),
]


def gtp_answers(engine_lines: list[str]) -> list[str]:
    """Run GNU Go in GTP mode on ``engine_lines`` and return each response as ``=text`` or ``?text``."""
    script = "\n".join(engine_lines + ["quit"]) + "\n"
    done = subprocess.run([str(GNUGO), "--mode", "gtp"], input=script, capture_output=True, text=True, timeout=60,
                          check=True)
    responses = done.stdout.strip("\n").split("\n\n")
    return [r[0] + r[1:].strip() for r in responses][: len(engine_lines)]


def miai_answers(lines: list[str]) -> list[str]:
    driver = Driver()
    answers = []
    for line in lines:
        written = driver.raw(line)
        answers.append(written[0] + written[1:].strip())
    return answers


def handicap_script(size: int, counts: range) -> list[str]:
    lines = [f"boardsize {size}"]
    for count in counts:
        lines += ["clear_board", f"fixed_handicap {count}"]
    return lines


@pytest.mark.parametrize("size", [9, 13, 19])
def test_fixed_handicap_matches_gnugo_for_every_legal_count(size: int) -> None:
    lines = handicap_script(size, range(2, 10))
    gnugo, miai = gtp_answers(lines), miai_answers(lines)
    placed = [answer for line, answer in zip(lines, gnugo) if line.startswith("fixed_handicap")]
    assert all(answer.startswith("=") for answer in placed)  # 2..9 are all legal on these sizes
    assert miai == gnugo


@pytest.mark.parametrize("size", [7, 8, 10, 11, 12, 14, 15, 16, 17, 18])
def test_fixed_handicap_matches_gnugo_on_other_sizes(size: int) -> None:
    lines = handicap_script(size, range(2, 10))
    gnugo, miai = gtp_answers(lines), miai_answers(lines)
    for line, ours, theirs in zip(lines, miai, gnugo):
        if theirs.startswith("="):
            assert ours == theirs, line
        else:  # GNU Go says "invalid handicap"; miai uses the spec's text
            assert ours.startswith("?invalid number of stones: "), line


@pytest.mark.parametrize("size", [9, 19])
def test_invalid_counts_fail_in_both(size: int) -> None:
    lines = [f"boardsize {size}", "fixed_handicap 1", "fixed_handicap 0", "fixed_handicap 10"]
    assert [a[0] for a in gtp_answers(lines)] == [a[0] for a in miai_answers(lines)] == ["=", "?", "?", "?"]
