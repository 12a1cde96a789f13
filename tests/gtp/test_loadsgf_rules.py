"""loadsgf takes rules as KataGo does: the file's RU where it names rules miai knows, else the rules in force (one
warning line for an RU it cannot read); komi from KM, else the RU's default komi, else the komi in force. Each case
is checked in process, and against KataGo's own kata-get-rules and get_komi where KataGo runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fakes import Driver
from .katago_peer import Answers, katago, needs_katago

# (file name, SGF text): each loaded after `kata-set-rules japanese` and `komi 5.5`.
RECORDS = [
    ("no-ru.sgf", "(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];W[cc])"),
    ("no-ru-no-km.sgf", "(;GM[1]FF[4]SZ[9];B[ee];W[cc])"),
    ("japanese.sgf", "(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese];B[ee];W[cc])"),
    ("chinese.sgf", "(;GM[1]FF[4]SZ[9]KM[7.5]RU[Chinese];B[ee];W[cc])"),
    ("aga-no-km.sgf", "(;GM[1]FF[4]SZ[9]RU[AGA];B[ee])"),
    ("nz-no-km.sgf", "(;GM[1]FF[4]SZ[9]RU[NZ];B[ee])"),
    ("tromp-taylor.sgf", "(;GM[1]FF[4]SZ[9]RU[tromp-taylor];B[ee])"),
    ("korean.sgf", "(;GM[1]FF[4]SZ[9]RU[Korean];B[ee])"),
    ("compact.sgf", "(;GM[1]FF[4]SZ[9]KM[0.5]RU[koPOSITIONALscoreAREAtaxNONEsui1];B[ee])"),
    ("unreadable-ru.sgf", "(;GM[1]FF[4]SZ[9]RU[Foobar];B[ee];W[cc])"),
]
START = ("kata-set-rules japanese", "komi 5.5")


def _rules(driver: Driver) -> dict[str, object]:
    return dict(json.loads(driver.ok("kata-get-rules")))


@pytest.fixture
def files(tmp_path: Path) -> Path:
    for name, text in RECORDS:
        (tmp_path / name).write_text(text)
    return tmp_path


def _loaded(files: Path, name: str) -> Driver:
    driver = Driver()
    for line in START:
        driver.ok(line)
    driver.ok(f"loadsgf {files / name}")
    return driver


def test_a_record_without_ru_keeps_the_rules_in_force(files: Path) -> None:
    driver = _loaded(files, "no-ru.sgf")
    assert _rules(driver)["scoring"] == "TERRITORY" and _rules(driver)["ko"] == "SIMPLE"  # still Japanese
    assert driver.ok("get_komi") == "7.5"  # KM of the file
    assert driver.err.getvalue() == ""


def test_a_record_without_ru_or_km_keeps_the_komi_too(files: Path) -> None:
    driver = _loaded(files, "no-ru-no-km.sgf")
    assert driver.session.state.rules.name == "japanese" and driver.ok("get_komi") == "5.5"


def test_ru_naming_known_rules_is_adopted(files: Path) -> None:
    driver = _loaded(files, "chinese.sgf")
    assert _rules(driver) == {"friendlyPassOk": True, "hasButton": False, "ko": "SIMPLE", "scoring": "AREA",
                              "suicide": False, "tax": "NONE", "whiteHandicapBonus": "N"}
    assert driver.ok("get_komi") == "7.5"


def test_ru_without_km_takes_the_rules_default_komi(files: Path) -> None:
    assert _loaded(files, "nz-no-km.sgf").ok("get_komi") == "7"
    assert _loaded(files, "aga-no-km.sgf").ok("get_komi") == "7.5"


def test_an_unreadable_ru_keeps_the_rules_in_force_with_one_warning(files: Path) -> None:
    driver = _loaded(files, "unreadable-ru.sgf")
    assert driver.session.state.rules.name == "japanese" and driver.ok("get_komi") == "5.5"
    (warning,) = driver.err.getvalue().splitlines()
    assert "unreadable-ru.sgf" in warning and "RU[Foobar]" in warning and "japanese" in warning


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:
    yield from katago(tmp_path_factory.mktemp("katago"))


@pytest.mark.slow
@needs_katago
@pytest.mark.parametrize("name", [name for name, _ in RECORDS])
def test_rules_and_komi_after_loadsgf_are_katagos(files: Path, peer: Answers, name: str) -> None:
    for line in START:
        assert peer.ask(line)[0]
    assert peer.ask(f"loadsgf {files / name}")[0]
    ok, katago_rules = peer.ask("kata-get-rules")
    driver = _loaded(files, name)
    assert ok and json.loads(katago_rules) == _rules(driver)
    assert float(peer.ask("get_komi")[1]) == float(driver.ok("get_komi"))
