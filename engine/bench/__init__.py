"""Benchmarks behind ``miai bench``: rules and playout speed, raw net evaluations, search playouts, KataGo side by side."""
