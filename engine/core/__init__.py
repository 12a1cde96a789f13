"""The search core: the graph search and everything it is made of, apart from the apps around it.

It imports only miai.go and the nets' protocol (miai.nets.protocol); the player, the analysis engine, self-play, the
command line and the benchmarks use it from around it (tests/test_layers.py checks the rule).
"""

import miai.go  # noqa: F401  (it decides, before any module here is imported, whether the compiled ones run)
