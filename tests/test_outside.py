"""The rules of tests/outside.py: without MIAI_DOWNLOAD_NETS=1 nothing is downloaded, and a test needing the shared
data skips with one reason naming the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.outside import DOWNLOAD_REASON, REPO, missing_reason

pytestmark = pytest.mark.slow


def run_pytest(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("MIAI_DOWNLOAD_NETS", "MIAI_SHARED")}
    environment.update({"MIAI_CACHE_DIR": str(tmp_path / "cache"), **env})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *args],
                          cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)


def test_download_tests_skip_before_downloading_unless_asked(tmp_path: Path) -> None:
    done = run_pytest(["tests/nets/test_convert_katrain.py", "tests/nets/test_reference.py", "-m", "download"],
                      tmp_path)
    assert done.returncode == 0, done.stdout
    assert "6 skipped" in done.stdout and DOWNLOAD_REASON in done.stdout
    assert not (tmp_path / "cache").exists()  # not a byte fetched


def test_shared_data_tests_skip_with_the_file_they_need(tmp_path: Path) -> None:
    done = run_pytest(["tests/nets/test_loading.py", "tests/go/test_sgf.py", "-k", "converted_once or real_games"],
                      tmp_path, MIAI_SHARED=str(tmp_path / "no-shared"))
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout
    assert missing_reason("nets/g170-b6c96-s175395328-d26788732.bin.gz") in done.stdout
    assert missing_reason("data/tom/all.kifu") in done.stdout
