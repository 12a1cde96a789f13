"""KataGo 1.17.2 from the shared peers (../shared/peers/katago), for tests that compare miai's GTP answers with
KataGo's. Tests using it are slow and skip, naming what is missing, where KataGo cannot run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from miai.gtp.client import GtpCommandError, GtpEngine

from tests.outside import shared

KATAGO = "peers/katago"
NET = "nets/g170-b6c96-s175395328-d26788732.bin.gz"
CONFIG = "peers/katago_gtp.cfg"


def _runs() -> str | None:
    """Why KataGo cannot run here, or None when it can."""
    for relative in (KATAGO, NET, CONFIG):
        if not shared(relative).exists():
            return f"needs {relative} from the shared test data (../shared beside the checkout)"
    try:
        done = subprocess.run([str(shared(KATAGO)), "version"], capture_output=True, text=True, timeout=30)
    except OSError as error:
        return f"../shared/peers/katago does not start: {error}"
    if done.returncode != 0:
        return f"../shared/peers/katago does not start here ({done.stderr.strip()[-200:]}); see shared/peers/README.md"
    return None


_REASON = _runs()
needs_katago = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


class Answers:
    """One GTP engine process; :meth:`ask` gives ``(ok, text)`` for a command, failures included."""

    def __init__(self, engine: GtpEngine) -> None:
        self.engine = engine

    def ask(self, command: str, timeout: float = 120.0) -> tuple[bool, str]:
        try:
            return True, self.engine.send(command, timeout)
        except GtpCommandError as error:
            return False, error.message


def katago(cwd: Path) -> Iterator[Answers]:
    """KataGo in ``cwd`` with the shared 6-block net and its minimal GTP config (a generator for fixtures)."""
    command = [str(shared(KATAGO)), "gtp", "-model", str(shared(NET)), "-config", str(shared(CONFIG))]
    with GtpEngine(command, name="katago", cwd=cwd) as engine:
        yield Answers(engine)
