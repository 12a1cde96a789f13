"""``python -m miai`` is the ``miai`` command."""

from miai.engine.cli import main

main()
