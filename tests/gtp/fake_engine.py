"""A GTP engine process built from GtpSession and the test FakePlayer, for driving over real pipes
(the @sabaki/gtp test in tests/gtp/js). Usage: python tests/gtp/fake_engine.py [seed] [--noisy]

``--noisy``: the player print()s debug text while thinking, as careless engine code might."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from miai.gtp.config import GtpConfig  # noqa: E402
from miai.gtp.session import GtpSession  # noqa: E402
from tests.gtp.fakes import FakePlayer  # noqa: E402


class NoisyPlayer(FakePlayer):
    def genmove(self, *args: Any, **kwargs: Any) -> Any:
        print("debug: thinking hard")  # must not reach the controller
        return super().genmove(*args, **kwargs)


def main() -> int:
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    seed = int(args[0]) if args else 1
    kind = NoisyPlayer if "--noisy" in sys.argv else FakePlayer
    player = kind(seed=seed, max_snapshots=100_000)
    session = GtpSession(player, sys.stdin, sys.stdout, sys.stderr, GtpConfig(board_size=9))
    return session.run()


if __name__ == "__main__":
    sys.exit(main())
