"""``python -m miai.engine`` is the ``miai`` command."""

from miai.engine.cli.main import main

main()
