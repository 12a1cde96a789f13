"""A machine made busy on purpose: processes that spin on the CPU beside the one a test measures.

Cheap bot hosts and CI machines are shared, and a bot must keep to its clock when it gets less CPU than it measured.
:func:`busy_cores` starts ``per_core`` spinning processes per core (plain ``python -c 'while 1: pass'``, at the
default priority, as another user's search would run) and ends exactly those processes when the block ends.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

__all__ = ["busy_cores"]


@contextlib.contextmanager
def busy_cores(per_core: int = 2) -> Iterator[int]:
    """Keep ``per_core`` processes per core spinning while the block runs; yields how many were started."""
    count = per_core * (os.cpu_count() or 1)
    spinners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            spinners.append(subprocess.Popen([sys.executable, "-c", "while 1: pass"], stdin=subprocess.DEVNULL))
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
