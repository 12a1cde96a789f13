"""Fixed handicap placement checked against GNU Go 3.8 itself (the GTP spec's reference implementation)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from miai.go.coords import to_gtp
from miai.go.errors import SetupError
from miai.go.state import fixed_handicap_points

GNUGO = Path("/usr/games/gnugo")
SIZES = range(5, 20)
COUNTS = range(1, 11)


def gnugo_answers() -> dict[tuple[int, int], str | None]:
    """GNU Go's ``fixed_handicap`` answer for every size and count (None for a failure), from one batch session."""
    commands = [f"boardsize {size}\nclear_board\nfixed_handicap {n}" for size in SIZES for n in COUNTS]
    script = "\n".join(commands) + "\nquit\n"
    out = subprocess.run([str(GNUGO), "--mode", "gtp"], input=script, capture_output=True, text=True, timeout=60).stdout
    responses = [block.strip() for block in out.split("\n\n") if block.strip()]
    answers = {}
    keys = [(size, n) for size in SIZES for n in COUNTS]
    for i, key in enumerate(keys):
        reply = responses[3 * i + 2]  # boardsize, clear_board, fixed_handicap
        answers[key] = reply[1:].strip() if reply.startswith("=") else None
    return answers


@pytest.mark.gnugo
@pytest.mark.skipif(not GNUGO.exists(), reason="GNU Go is not installed")
def test_fixed_handicap_matches_gnugo_on_every_size() -> None:
    for (size, n), expected in gnugo_answers().items():
        try:
            ours: str | None = " ".join(to_gtp(m, size) for m in fixed_handicap_points(size, n))
        except SetupError:
            ours = None
        assert ours == expected, (size, n)
