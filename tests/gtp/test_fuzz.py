"""Fuzzing: tens of thousands of random and malformed lines must never crash the session, never produce a
malformed response, and never change the game unless the command succeeded and is one that may change it."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from miai.gtp.commands import default_table
from miai.gtp.protocol import parse_command, preprocess

from .fakes import Driver, FakePlayer

pytestmark = pytest.mark.slow

COMMANDS = default_table().names()
READ_ONLY = {spec.name for spec in default_table() if not spec.mutates}
RESPONSE = re.compile(r"\A[=?]\d* [^\n]*(\n[^\n]+)*\n\n\Z|\A=\d*\n([^\n]+\n)*\n\Z")
TOKENS = [
    "b", "w", "B", "white", "Black", "x", "pass", "PASS", "resign", "a1", "A1", "e5", "J9", "j10", "t19", "T19", "i5",
    "z25", "a0", "aa1", "0", "1", "2", "3", "9", "19", "25", "26", "-1", "-0", "+5", "2147483648",
    "99999999999999999999",
    "1.5", "6.5", "-7.5", "nan", "inf", "-inf", "1e308", "1e999", "0x10", "true", "false", "all", "{", "}", '{"ko":',
    '{"ko":"SIMPLE"}', "[1]", "japanese", "chinese", "aga", "new_zealand", "tromp-taylor", "none", "absolute",
    "canadian", "byoyomi", "fischer", "fischer-capped", "interval", "ownership", "rootInfo", "avoid", "allow",
    "minmoves", "maxmoves", "a1,b2", ",", "alive", "dead", "seki", "maxVisits", "\u00e9", "\u4e2d", "\u0663", "..",
    "nonexistent.sgf", "/", "/dev/null", ".",
]
# Lines whose success is allowed to change the game; everything else must leave it exactly as it was.
NOT_FUZZED = {"quit"}  # answered and harmless, but it would end a run() loop; handle_line ignores it anyway


def fingerprint(driver: Driver) -> tuple[object, ...]:
    state = driver.session.state
    return (state.size, state.komi, state.rules, state.handicap, state.to_play, tuple(state.moves),
            state.stones().tobytes(), state.captures(1), state.captures(2), state.situation_hash)


def random_line(rng: random.Random) -> str:
    """A random line: mostly a real command with random arguments, else noise, with random ids and junk."""
    kind = rng.random()
    if kind < 0.7:
        words = [rng.choice(COMMANDS)] + [rng.choice(TOKENS) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 8]))]
    elif kind < 0.8:
        words = [rng.choice(TOKENS) for _ in range(rng.randint(1, 4))]
    elif kind < 0.9:
        alphabet = string.printable + "\x00\x01\x07\x1b\x7f\u00e9\u4e2d\r"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
    else:
        words = [rng.choice(COMMANDS).upper()] + [rng.choice(TOKENS).upper() for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.3:
        words.insert(0, str(rng.choice([0, 1, 42, 2**31 - 1, 2**31])))
    separator = rng.choice([" ", " ", "\t", "  "])
    line = separator.join(words)
    if rng.random() < 0.2:
        line += rng.choice(["\r", " # comment", "\x00", "\t", " ;"])
    return line


def setup_position(driver: Driver) -> None:
    for line in ("boardsize 9", "komi 5.5", "play b e5", "play w e6", "play b d6", "play w f6", "play b e7",
                 "play w a1"):
        driver.ok(line)


@pytest.mark.parametrize("seed", range(6))
def test_random_lines_never_crash_or_corrupt(seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # printsgf FILE may write files; keep them out of the repository
    rng = random.Random(seed)
    driver = Driver(FakePlayer(seed=seed))
    setup_position(driver)
    failures = 0
    for _ in range(5000):
        line = random_line(rng)
        text = preprocess(line)
        if text is not None and parse_command(text).name in NOT_FUZZED:
            continue
        before = fingerprint(driver)
        written = driver.raw(line)
        if text is None:
            assert written == "", (line, written)
            continue
        assert RESPONSE.match(written), (line, written)
        assert "internal error" not in written, (line, written, driver.err.getvalue()[-2000:])
        command = parse_command(text)
        if written.startswith("?") or command.name in READ_ONLY:
            assert fingerprint(driver) == before, (line, written)
        failures += written.startswith("?")
        if len(driver.session.state.moves) > 60 or driver.session.state.size != 9:
            driver = Driver(FakePlayer(seed=seed))
            setup_position(driver)
    assert failures > 2500  # the generator mostly produces bad lines: the invariants were really exercised


# Malformed or refused forms of every command that can change the game (each must fail).
MALFORMED = {
    "boardsize": ["", "x", "-1", "0", "1", "26", "9.0", "9 13", "9 9 9", "2147483648"],
    "clear_board": ["x", "1"],
    "komi": ["", "x", "nan", "inf", "1e999", "1 2", "5,5"],
    "play": ["", "b", "e5", "b e5", "w e5", "x a1", "b z9", "b i3", "b j10", "b resign", "b a0", "b e5 e5",
             "black", "pass b"],
    "undo": ["x", "1"],
    "kgs-rules": ["", "chinese-ogs", "martian", "chinese japanese"],
    "kata-set-rules": ["", "martian", "{", '{"ko": "NONE"}', '{"scoring": 3}', "[1]", "1", '{"komi": 7}',
                       "koSIMPLEkomi7", "koBOGUS", '{"ko": "SPIGHT"}'],
    "kata-set-rule": ["", "ko", "ko SIMPLE x", "komi 7", "ko BOGUS", "suicide maybe", "hasButton 2"],
    "fixed_handicap": ["", "x", "2", "4", "-2", "2 3"],
    "place_free_handicap": ["", "x", "2", "-1", "2 3"],
    "set_free_handicap": ["", "c3", "c3 g7", "c3 c3", "c3 pass", "z1 a2"],
    "genmove": ["", "x", "b w", "pass"],
    "genmove_debug": ["", "x", "b w", "pass"],
    "rectangular_boardsize": ["", "x", "0", "26", "9 13", "9 9 9", "-9 9"],
    "set_position": ["b", "b d4 w", "x d4", "b z9", "b pass", "b d4 w d4", "b a1 w a2 w b1", "d4 b"],
    "kgs-genmove_cleanup": ["", "x", "b w"],
    "loadsgf": ["", "nonexistent.sgf", "nonexistent.sgf 3", "game.sgf x", "a b c"],
    "lz-genmove_analyze": ["x", "b interval", "b 10 ownership maybe", "b -5", "b 10 avoid"],
    "kata-genmove_analyze": ["x", "w interval x", "b 10 allow b a1 1 avoid b b1 1", "b 10 unknownkey 1"],
    "genmove_analyze": ["x", "b 10 noResultValue true", "b pvVisits maybe"],
}


def test_malformed_lines_only_leave_the_board_untouched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """20,000 refused commands, with random ids and noise: every one fails and the game does not move at all."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(99)
    driver = Driver()
    setup_position(driver)
    start = fingerprint(driver)
    mutating = sorted(spec.name for spec in default_table() if spec.mutates)
    assert sorted(MALFORMED) == mutating  # a new board-changing command needs malformed examples here
    for _ in range(20000):
        name = rng.choice(mutating)
        line = f"{name} {rng.choice(MALFORMED[name])}"
        if rng.random() < 0.3:
            line = f"{rng.randint(0, 2**31 - 1)} {line}"
        line = line.replace(" ", rng.choice([" ", "\t", "  "])) + rng.choice(["", "\r", " # note"])
        written = driver.raw(line)
        assert written.startswith("?") and "internal error" not in written, (line, written)
    assert fingerprint(driver) == start


@given(st.text(max_size=200))
def test_preprocess_output_is_clean(line: str) -> None:
    text = preprocess(line)
    if text is None:
        return
    assert text == text.strip() and text
    assert "  " not in text and "#" not in text and "\t" not in text
    assert not any(ord(c) < 32 or ord(c) == 127 for c in text)
    command = parse_command(text)
    assert command.name == command.name.lower()


@pytest.mark.parametrize("seed", range(4))
def test_random_scripts_through_the_reader_get_one_response_per_command(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole random scripts, analysis commands included, fed through ``run()``: an analysis must never swallow
    the line that stops it, so the number of responses equals the number of non-blank command lines."""
    from .fakes import run_transcript

    monkeypatch.chdir(tmp_path)
    rng = random.Random(1000 + seed)
    analysis = ["lz-analyze", "kata-analyze", "lz-genmove_analyze", "kata-genmove_analyze"]
    lines = ["boardsize 9"]
    for _ in range(400):
        if rng.random() < 0.7:
            line = random_line(rng)
        else:
            line = f"{rng.choice(analysis)} {rng.choice(['', 'b 1', 'w', '5'])}"
        text = preprocess(line)
        if text is not None and parse_command(text).name == "quit":
            continue
        lines.append(line.replace("\n", " "))
    out, _ = run_transcript("\n".join(lines) + "\n", FakePlayer(seed=seed))
    expected = sum(1 for line in lines if preprocess(line) is not None)
    assert out.endswith("\n\n") and "\n\n\n" not in out
    blocks = out[:-2].split("\n\n")
    assert len(blocks) == expected
    for block in blocks:
        assert RESPONSE.match(block + "\n\n"), block
