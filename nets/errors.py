"""The nets layer's error: a net that cannot be loaded or run.

Its own module so that the backends (``miai.nets.backends``), which the evaluators use, can raise it without
importing the evaluators back.
"""

from __future__ import annotations

__all__ = ["EvaluatorError"]


class EvaluatorError(RuntimeError):
    """A net cannot be loaded or run."""
