"""The ``miai`` command line (``miai.engine.cli.main:main``), one module per group of subcommands."""
