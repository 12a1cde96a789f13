"""miai: a Go engine in Python (Monte-Carlo graph search, KataGo-compatible nets)."""

__version__ = "0.1.0"
