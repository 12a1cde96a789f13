"""The product names no path of one particular machine: code, configs, docs, scripts and manifests must work on a
user's machine, where /work, someone's home directory, a scratch file in /tmp and ../shared do not exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ["README.md", "pyproject.toml", "docs", "go", "nets", "gtp", "engine", "match", "configs", "tests/tools", ".ci"]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".cfg", ".ini", ".sh", ""}
MACHINE_PATHS = re.compile(r"/work/|/home/\w|/Users/\w|/tmp/\w|\.\./shared|\bshared/(?:nets|reference|data)\b")
# .ci/run is the one place that knows the CI machine's layout: ../shared beside the checkout, by design;
# docs/development.md's "Tests" section says where the optional test data may sit.
ALLOWED = {(".ci/run", "../shared")}
ALLOWED_SECTIONS = {"docs/development.md": "## Tests"}


def exempt_lines(relative: str, lines: list[str]) -> set[int]:
    """Line numbers of the section of ``relative`` that may name ../shared (from its heading to the next one)."""
    heading = ALLOWED_SECTIONS.get(relative)
    if heading is None or heading not in lines:
        return set()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return set(range(start + 1, end + 1))


def product_files() -> list[Path]:
    files: list[Path] = []
    for entry in PRODUCT:
        path = REPO / entry
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        files += [p for p in candidates if p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts]
    return files


def test_the_product_names_no_machine_specific_path() -> None:
    found = []
    for path in product_files():
        relative = path.relative_to(REPO).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        exempt = exempt_lines(relative, lines)
        for number, line in enumerate(lines, 1):
            for match in MACHINE_PATHS.finditer(line):
                if (relative, match.group()) not in ALLOWED and not (number in exempt and match.group() == "../shared"):
                    found.append(f"{relative}:{number}: {line.strip()}")
    assert not found, "machine-specific paths:\n" + "\n".join(found)


@pytest.mark.parametrize("text", ["/work/shared/nets/x.bin.gz", "see ../shared/KATAGO.md", "/home/alice/net.bin.gz",
                                  "--dump /tmp/f.npz", "keys of shared/reference/*.jsonl"])
def test_the_pattern_catches_each_kind(text: str) -> None:
    assert MACHINE_PATHS.search(text)
