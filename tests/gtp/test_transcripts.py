"""Golden transcripts: each ``fixtures/NAME.gtp`` is fed to a whole session (reader thread and all) with the
deterministic :class:`FakePlayer`, and stdout must equal ``fixtures/NAME.expected`` byte for byte.

After an intended change of output, regenerate with ``python -m tests.gtp.test_transcripts`` and review the diff.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from miai.gtp.protocol import parse_command, preprocess

from .fakes import FakePlayer, run_transcript

FIXTURES = Path(__file__).parent / "fixtures"
TRANSCRIPTS = sorted(FIXTURES.glob("*.gtp"))
RESPONSE = re.compile(r"^[=?]\d* ", re.M)


def play_transcript(path: Path) -> str:
    """The session's stdout for one fixture, run from the fixtures directory (loadsgf uses relative paths)."""
    previous = Path.cwd()
    os.chdir(FIXTURES)
    try:
        out, _ = run_transcript(path.read_text(encoding="utf-8"), FakePlayer(seed=1))
    finally:
        os.chdir(previous)
    return out


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcript(path: Path) -> None:
    expected = path.with_suffix(".expected").read_text(encoding="utf-8")
    assert play_transcript(path) == expected


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.stem for p in TRANSCRIPTS])
def test_transcript_framing(path: Path) -> None:
    """One response per command line, in order, each ending in exactly one blank line."""
    out = play_transcript(path)
    assert out.endswith("\n\n") and "\n\n\n" not in out
    responses = out[:-2].split("\n\n")
    commands = [line for line in _command_lines(path)]
    assert len(responses) == len(commands)
    for response, command in zip(responses, commands):
        head = response.split("\n", 1)[0]
        parsed_id = parse_command(command).id
        command_id = "" if parsed_id is None else str(parsed_id)
        assert re.match(rf"^[=?]{command_id}( |$)", head), (command, head)


def _command_lines(path: Path) -> list[str]:
    lines = []
    for raw in path.read_text(encoding="utf-8").split("\n"):
        text = preprocess(raw)
        if text is not None:
            lines.append(text)
            if text.split()[-1] == "quit" and len(text.split()) <= 2:
                break
    return lines


if __name__ == "__main__":  # regenerate the golden files
    for fixture in TRANSCRIPTS:
        fixture.with_suffix(".expected").write_text(play_transcript(fixture), encoding="utf-8")
        print(f"wrote {fixture.with_suffix('.expected').name}", file=sys.stderr)
