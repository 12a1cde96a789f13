"""Files from outside the repository that some tests compare against, and the one way those tests skip.

A clean clone passes its tests with nothing beside it. Some tests check miai against things a clone does not hold:

- ``../shared`` beside the checkout (or ``$MIAI_SHARED``): KataGo test nets (``nets/``), KataGo 1.17.2's raw outputs
  on reference positions (``reference/``) and real game records (``data/``). Without it those tests skip, each
  naming the file it needs.
- KaTrain's nets, downloaded from PyPI (about 290 MB): tests marked ``download`` run only with
  ``MIAI_DOWNLOAD_NETS=1`` (tests/conftest.py). The KataGo outputs they compare with are committed in
  ``tests/nets/reference/``, so they need nothing else.
- GNU Go and Node.js skip in their own test modules, naming the package to install.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MIAI_SHARED") or REPO.parent / "shared")
COMMITTED_REFERENCE = REPO / "tests" / "nets" / "reference"
DOWNLOAD_VARIABLE = "MIAI_DOWNLOAD_NETS"


def shared(relative: str) -> Path:
    """A file or folder of the shared test data (which may not exist)."""
    return SHARED / relative


def missing_reason(relative: str) -> str:
    """The skip reason of every test that needs ``relative`` from the shared data."""
    return (f"needs {relative} from the shared test data (../shared beside the checkout, or $MIAI_SHARED); "
            "not part of a clone")


def needs_shared(*relatives: str) -> pytest.MarkDecorator:
    """Skip the test (or module, as ``pytestmark``) unless every ``relative`` path exists in the shared data."""
    missing = [r for r in relatives if not shared(r).exists()]
    return pytest.mark.skipif(bool(missing), reason=missing_reason(missing[0]) if missing else "")


def require_shared(relative: str) -> Path:
    """The shared path ``relative``, or skip the running test with the common reason."""
    path = shared(relative)
    if not path.exists():
        pytest.skip(missing_reason(relative))
    return path


def reference_file(name: str) -> Path:
    """A KataGo reference output file: committed in tests/nets/reference/ for the downloadable nets, else from
    ../shared/reference (which may not exist)."""
    committed = COMMITTED_REFERENCE / name
    return committed if committed.is_file() else shared(f"reference/{name}")


def downloads_allowed() -> bool:
    """Whether tests may download large files (``MIAI_DOWNLOAD_NETS=1``)."""
    return os.environ.get(DOWNLOAD_VARIABLE, "") == "1"


DOWNLOAD_REASON = (f"downloads KaTrain's nets from PyPI (about 290 MB, kept in ~/.cache/miai); "
                   f"set {DOWNLOAD_VARIABLE}=1 to run")
