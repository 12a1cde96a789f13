"""The expected score value of an uncertain score, computed the way KataGo computes it.

A score ``s`` is worth ``(2 / pi) * atan((s - center) / (scale * sqrt(area)))`` to the search (the static and
dynamic score utilities, docs/search.md). A net's score is a distribution (mean and standard deviation), and
KataGo values it by the expectation of that function over a normal distribution. It does not integrate afresh
each time: it reads a table made once (cpp/neuralnet/nninputs.cpp, ``ScoreValue::initTables`` and
``ScoreValue::expectedWhiteScoreValue``), and miai reads the same table, so that every utility, and with it
every PUCT choice between close moves, is KataGo's to the last digits:

- The table lives in *units*: one unit is ``scale * sqrt(area) / 19`` points (19, KataGo's largest board side in
  its standard build), so that one table serves every board size and scale.
- An entry is the value for a mean at a half unit (``k - 0.5``) and a whole number of units of standard
  deviation ``j``: a weighted mean of the value at ``mean + j * t`` for ``t`` from -5 to 5 in steps of 0.1, each
  weighted by ``exp(-t^2 / 2)`` (a discretised normal, cut at five standard deviations).
- A lookup interpolates linearly in the mean and in the deviation between the four neighbouring entries; outside
  the table it uses the nearest edge.

The four entries around a lookup differ from the exact integral by up to about 1e-4 in value; a quadrature of a
few points is much worse when the deviation is large against the scale (a 12-point Gauss-Hermite rule was off by
0.02 for a deviation of 50 points at the dynamic scale of 19x19), which is what 19x19 openings see.

Columns (one deviation each) are made when first needed: a search touches a few dozen of them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["expected_score_value", "round_half_away"]

_TABLE_SIDE = 19  # KataGo's Board::MAX_LEN in its standard build: the table's assumed board side
_EXTRA_RADIUS = 60  # KataGo's NNPos::EXTRA_SCORE_DISTR_RADIUS
_MEAN_RADIUS = _TABLE_SIDE * _TABLE_SIDE + _EXTRA_RADIUS
_MEAN_LEN = 2 * _MEAN_RADIUS
_STDEV_LEN = _TABLE_SIDE * _TABLE_SIDE + _EXTRA_RADIUS
_STEPS = 10  # tenths of a unit and tenths of a standard deviation
_BOUND = 5  # standard deviations each side

_T = np.arange(-_BOUND * _STEPS, _BOUND * _STEPS + 1)
_NORMAL = np.exp(-0.5 * (_T / _STEPS) ** 2)
_NORMAL_SUM = float(_NORMAL.sum())
# Each mean index k stands for the mean k - radius - 0.5 units, in tenths of a unit.
_MEAN_STEPS = (np.arange(_MEAN_LEN) - _MEAN_RADIUS) * _STEPS - _STEPS // 2

_columns: dict[int, np.ndarray] = {}


def _column(stdev_index: int) -> np.ndarray:
    """The table's entries for a deviation of ``stdev_index`` units, one per mean index."""
    column = _columns.get(stdev_index)
    if column is None:
        steps = _MEAN_STEPS[:, None] + stdev_index * _T[None, :]
        values = np.arctan(steps / (_STEPS * _TABLE_SIDE)) * (2.0 / math.pi)
        column = (values @ _NORMAL) / _NORMAL_SUM
        _columns[stdev_index] = column
    return column


def round_half_away(x: float) -> float:
    """C's round(): halves go away from zero (Python's round() goes to the even neighbour)."""
    return math.floor(x + 0.5) if x >= 0.0 else -math.floor(-x + 0.5)


def expected_score_value(mean: float, stdev: float, center: float, scale: float, sqrt_area: float) -> float:
    """E[(2/pi) atan((S - center) / (scale * sqrt_area))] for S ~ Normal(mean, stdev), read from KataGo's table
    (see the module docstring)."""
    units = _TABLE_SIDE / (scale * sqrt_area)
    mean_scaled = (mean - center) * units
    stdev_scaled = max(0.0, stdev) * units
    mean_rounded = round_half_away(mean_scaled)
    stdev_floored = math.floor(stdev_scaled)
    m0 = int(mean_rounded) + _MEAN_RADIUS
    s0 = int(stdev_floored)
    m1, s1 = m0 + 1, s0 + 1
    if m0 < 0:
        m0 = m1 = 0
    if m1 >= _MEAN_LEN:
        m0 = m1 = _MEAN_LEN - 1
    if s1 >= _STDEV_LEN:
        s0 = s1 = _STDEV_LEN - 1
    lambda_mean = mean_scaled - mean_rounded + 0.5
    lambda_stdev = stdev_scaled - stdev_floored
    low, high = _column(s0), _column(s1)
    b0 = float(low[m0]) + lambda_stdev * (float(high[m0]) - float(low[m0]))
    b1 = float(low[m1]) + lambda_stdev * (float(high[m1]) - float(low[m1]))
    return b0 + lambda_mean * (b1 - b0)
