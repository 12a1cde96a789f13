"""Random games replayed in GNU Go 3.8 and in miai must give the same answers to GNU Go's board queries
(list_stones, captures, all_legal, is_legal) under matching rules (simple ko, no suicide)."""

from __future__ import annotations

import random
import subprocess

import pytest

from .fakes import Driver
from .test_gnugo_handicap import GNUGO

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo)"),
]

QUERIES = ["list_stones black", "list_stones white", "captures black", "captures white", "all_legal black",
           "all_legal white"]


def random_game(seed: int, size: int, moves: int) -> list[str]:
    """A random legal game (with some passes), as GTP commands, with queries every few moves."""
    rng = random.Random(seed)
    driver = Driver()
    script = [f"boardsize {size}", "clear_board", "kata-set-rules japanese"]
    for line in script:
        driver.ok(line)
    color = "black"
    for number in range(moves):
        legal = driver.ok(f"all_legal {color}").split()
        vertex = "pass" if not legal or rng.random() < 0.03 else rng.choice(legal)
        line = f"play {color} {vertex}"
        driver.ok(line)
        script.append(line)
        if number % 7 == 6:
            script += QUERIES
            script.append(f"is_legal {'white' if color == 'black' else 'black'} {rng.choice(legal or ['A1'])}")
        color = "white" if color == "black" else "black"
    return script + QUERIES


def answers(lines: list[str], engine: str) -> list[str]:
    """Each response to ``lines`` (miai's rules command excluded), with vertex lists sorted for comparison."""
    commands = [line for line in lines if not line.startswith("kata-")]
    if engine == "gnugo":
        script = "\n".join(commands) + "\nquit\n"
        done = subprocess.run([str(GNUGO), "--mode", "gtp"], input=script, capture_output=True, text=True,
                              timeout=120, check=True)
        raw = done.stdout.strip("\n").split("\n\n")[: len(commands)]
    else:
        driver = Driver()
        raw = []
        for line in lines:
            written = driver.raw(line)
            if not line.startswith("kata-"):
                raw.append(written.strip("\n"))
    return [" ".join(sorted(answer.split())) for answer in raw]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.slow
def test_board_queries_agree_with_gnugo(seed: int) -> None:
    lines = random_game(seed, size=(9, 7, 13, 5)[seed % 4], moves=120)
    ours, theirs = answers(lines, "miai"), answers(lines, "gnugo")
    commands = [line for line in lines if not line.startswith("kata-")]
    mismatches = [(c, o, t) for c, o, t in zip(commands, ours, theirs) if o != t]
    assert len(ours) == len(theirs) == len(commands)
    assert not mismatches, mismatches[:5]
    captured = [int(o.replace("=", "")) for c, o in zip(commands, ours) if c.startswith("captures")]
    assert max(captured) > 0  # the games were long enough to test captures
    assert sum(1 for c in commands if c.startswith("play")) == 120
