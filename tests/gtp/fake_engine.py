"""A GTP engine process built from GtpSession and the test FakePlayer, for driving over real pipes
(the @sabaki/gtp test in tests/gtp/js). Usage: python tests/gtp/fake_engine.py [seed]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from miai.gtp.session import GtpConfig, GtpSession  # noqa: E402
from tests.gtp.fakes import FakePlayer  # noqa: E402


def main() -> int:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    player = FakePlayer(seed=seed, max_snapshots=100_000)
    session = GtpSession(player, sys.stdin, sys.stdout, sys.stderr, GtpConfig(board_size=9))
    return session.run()


if __name__ == "__main__":
    sys.exit(main())
