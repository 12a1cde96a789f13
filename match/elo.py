"""Elo difference from a match result, with a 95% interval, and a sequential probability ratio test (SPRT).

Notation: a match of `n = wins + draws + losses` games gives the score `s = (wins + draws / 2) / n` for the first
engine. The logistic Elo model maps an expected score `s` to the difference `d = -400 log10(1/s - 1)`, and back by
`s = 1 / (1 + 10^(-d/400))`.

- **Interval.** The per-game score is a trinomial variable (1, 1/2, 0) with sample variance
  `var = (w (1-s)^2 + d (1/2-s)^2 + l s^2) / n`. The 95% interval of the score is Wilson's score interval with that
  variance, `(s + z^2/2n +- z sqrt(var/n + z^2/4n^2)) / (1 + z^2/n)` with `z = 1.959964`, mapped to Elo through
  the (monotone) logistic. Unlike the plain normal interval `s +- z sqrt(var/n)` (which it approaches for many
  games) it does not collapse to a point when one engine won every game: 2-0 gives at most +113 Elo for the
  loser, not a certain -1000 (the clamp, ELO_CAP, is never printed: EloEstimate.describe). Draws lower the
  variance and so narrow it.
- **SPRT** (Wald's test of H0: d = elo0 against H1: d = elo1, error rates alpha and beta) treats each game as a
  Bernoulli trial with success probability `p0 = s(elo0)` under H0 and `p1 = s(elo1)` under H1, a draw counting as
  half a win and half a loss: `LLR = (w + d/2) log(p1/p0) + (l + d/2) log((1-p1)/(1-p0))`. It accepts H1 when
  `LLR >= log((1 - beta) / alpha)` and H0 when `LLR <= log(beta / (1 - alpha))`. Unlike the normal approximation
  it needs no variance estimate, so a short run of wins cannot end the test at once.
- **Pentanomial SPRT** (``sprt_pentanomial``), fishtest's model for matches played in pairs (one opening, colours
  swapped): the unit is a pair, whose score for the first engine is 0, 1/4, 1/2, 3/4 or 1 (0 to 2 points over its two
  games). The test is the generalized SPRT: each hypothesis ``s = s(elo_i)`` is the maximum-likelihood pentanomial
  distribution with expected score ``s_i``, and ``LLR = sum_j n_j log(p1_j / p0_j)`` over the five outcomes. Maximizing
  ``sum_j n_j log p_j`` under ``sum_j p_j = 1`` and ``sum_j p_j x_j = s`` (Lagrange) gives
  ``p_j = f_j / (1 + lambda (x_j - s))`` with ``f_j = n_j / N`` the observed frequencies and ``lambda`` the root of
  ``sum_j f_j (x_j - s) / (1 + lambda (x_j - s)) = 0``, which decreases strictly in ``lambda`` between the poles
  ``-1 / (max x - s)`` and ``1 / (s - min x)``, so bisection finds it. This is the test of M. Van den Bergh's notes
  for fishtest ("A practical introduction to the GSPRT", "Comments on Normalized Elo"); their further
  approximation ``LLR ~ N (s1 - s0) (2 mean - s0 - s1) / (2 var)`` agrees with it to first order (a test checks
  that). An outcome never seen is given a count of ``EMPTY_COUNT`` (as fishtest regularizes), so that every ``s``
  in (0, 1) has a distribution and a run of identical pairs gives a finite LLR. Elo here is **logistic Elo**
  (fishtest's ``logistic`` model), the scale of the estimate above: the bounds are mapped by
  ``s_i = 1 / (1 + 10^(-elo_i/400))``. It is BayesElo too for games without draws (BayesElo's draw Elo is then
  0); normalized Elo is not used, because its unit depends on the variance that pairing changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

__all__ = [
    "EloEstimate", "SprtConfig", "SprtResult", "elo_from_score", "score_from_elo", "estimate_elo", "sprt",
    "PAIR_SCORES", "generalized_llr", "sprt_pentanomial",
]

# Two-sided 95% quantile of the standard normal distribution.
Z95 = 1.959963984540054
# Elo shown for a perfect or zero score, where the logistic is infinite.
ELO_CAP = 1000.0
# A pair's score for the first engine, by its points over the pair's two games (0, 1/2, 1, 3/2, 2) divided by 2.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
# The count given to an outcome never seen (fishtest regularizes its pentanomial counts the same way).
EMPTY_COUNT = 1e-3


def score_from_elo(elo: float) -> float:
    """Expected score of a player `elo` points stronger than its opponent."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_from_score(score: float) -> float:
    """Elo difference that gives the expected `score` (clamped to +-ELO_CAP for scores of 0 and 1)."""
    if score <= 0.0:
        return -ELO_CAP
    if score >= 1.0:
        return ELO_CAP
    # + 0.0 turns the -0.0 of an even score into 0.0, which prints as +0 rather than -0.
    return max(-ELO_CAP, min(ELO_CAP, -400.0 * math.log10(1.0 / score - 1.0))) + 0.0


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference of the first engine over the second, with its 95% interval (in Elo points)."""

    wins: int
    draws: int
    losses: int
    score: float  # (wins + draws/2) / games; 0.5 with no games
    elo: float
    low: float  # lower end of the 95% interval
    high: float  # upper end of the 95% interval
    los: float  # likelihood of superiority, P(first engine is stronger), from wins and losses only

    @property
    def games(self) -> int:
        """Number of decided games (wins + draws + losses)."""
        return self.wins + self.draws + self.losses

    def __str__(self) -> str:
        return f"{self.describe()}, LOS {100 * self.los:.1f}%" if self.games else self.describe()

    def describe(self, compact: bool = False) -> str:
        """The estimate and its 95% interval as people read them: ``+35 Elo (95% -20 .. +90)``.

        A score of 100% or 0% has no finite estimate and its interval is open on one side: it reads as the bound
        the data give (``> -113 Elo (95%)`` after 2-0), never as the +-ELO_CAP the numbers are clamped to. With no
        games there is nothing to say. ``compact`` is the progress table's form: ``+35 (-20..+90)``, ``> -113``.
        """
        if self.games == 0:
            return "no games" if compact else "no games played"
        if self.score >= 1.0:
            return f"> {self.low:+.0f}" if compact else f"> {self.low:+.0f} Elo (95%; every game won)"
        if self.score <= 0.0:
            return f"< {self.high:+.0f}" if compact else f"< {self.high:+.0f} Elo (95%; every game lost)"
        if compact:
            return f"{self.elo:+.0f} ({self.low:+.0f}..{self.high:+.0f})"
        return f"{self.elo:+.0f} Elo (95% {self.low:+.0f} .. {self.high:+.0f})"

    def to_json(self) -> dict[str, float | int]:
        """The estimate as a JSON-ready dict."""
        return asdict(self)


def _score_and_variance(wins: int, draws: int, losses: int) -> tuple[float, float]:
    n = wins + draws + losses
    s = (wins + 0.5 * draws) / n
    var = (wins * (1.0 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s**2) / n
    return s, var


def estimate_elo(wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo difference with a 95% interval from a match record (see the module docstring for the model).

    With no games the estimate is 0 with the interval (-ELO_CAP, +ELO_CAP).

    Raises:
        ValueError: a negative count.
    """
    if min(wins, draws, losses) < 0:
        raise ValueError(f"negative game count in {wins}/{draws}/{losses}")
    n = wins + draws + losses
    los = _likelihood_of_superiority(wins, losses)
    if n == 0:
        return EloEstimate(0, 0, 0, 0.5, 0.0, -ELO_CAP, ELO_CAP, los)
    s, var = _score_and_variance(wins, draws, losses)
    low, high = _wilson_interval(s, var, n)
    return EloEstimate(wins, draws, losses, s, elo_from_score(s), elo_from_score(low), elo_from_score(high), los)


def _wilson_interval(score: float, variance: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a mean score with per-game `variance` over `n` games."""
    z2n = Z95 * Z95 / n
    centre = (score + z2n / 2.0) / (1.0 + z2n)
    half_width = Z95 * math.sqrt(variance / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return max(0.0, centre - half_width), min(1.0, centre + half_width)


def _likelihood_of_superiority(wins: int, losses: int) -> float:
    """P(stronger) under the normal approximation; draws carry no information about it."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


@dataclass(frozen=True)
class SprtConfig:
    """An SPRT of H0: elo = elo0 against H1: elo = elo1, with false-positive rate alpha and false-negative beta."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"SPRT needs elo1 > elo0, got {self.elo0} and {self.elo1}")
        if not (0.0 < self.alpha < 0.5 and 0.0 < self.beta < 0.5):
            raise ValueError(f"SPRT error rates must lie in (0, 0.5), got {self.alpha} and {self.beta}")

    @property
    def lower_bound(self) -> float:
        """LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper_bound(self) -> float:
        """LLR at or above which H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True)
class SprtResult:
    """The state of an SPRT after some games: its log-likelihood ratio, bounds and verdict."""

    config: SprtConfig
    llr: float
    lower: float
    upper: float
    verdict: Literal["H0", "H1", "continue"]
    model: Literal["trinomial", "pentanomial"] = "trinomial"  # games one by one, or pairs of games

    def __str__(self) -> str:
        c = self.config
        names = {"H0": f"accept H0 (elo <= {c.elo0:g})", "H1": f"accept H1 (elo >= {c.elo1:g})", "continue": "continue"}
        return (f"SPRT [{c.elo0:g}, {c.elo1:g}] ({self.model}): LLR {self.llr:.2f} ({self.lower:.2f}, {self.upper:.2f}) "
                f"{names[self.verdict]}")

    def to_json(self) -> dict[str, object]:
        """The SPRT state as a JSON-ready dict."""
        return {"config": asdict(self.config), "model": self.model, "llr": self.llr, "lower": self.lower,
                "upper": self.upper, "verdict": self.verdict}


def sprt(wins: int, draws: int, losses: int, config: SprtConfig) -> SprtResult:
    """Log-likelihood ratio and verdict of the SPRT `config` after the record wins/draws/losses."""
    p0, p1 = score_from_elo(config.elo0), score_from_elo(config.elo1)
    llr = (wins + 0.5 * draws) * math.log(p1 / p0) + (losses + 0.5 * draws) * math.log((1.0 - p1) / (1.0 - p0))
    lower, upper = config.lower_bound, config.upper_bound
    verdict: Literal["H0", "H1", "continue"] = "H1" if llr >= upper else "H0" if llr <= lower else "continue"
    return SprtResult(config, llr, lower, upper, verdict)


def sprt_pentanomial(pairs: Sequence[int], config: SprtConfig) -> SprtResult:
    """LLR and verdict of the SPRT `config` from pentanomial counts: `pairs[k]` pairs in which the first engine
    scored k/2 points (k = 0..4), under logistic Elo (module docstring)."""
    if len(pairs) != len(PAIR_SCORES) or min(pairs) < 0:
        raise ValueError(f"pentanomial counts are five counts >= 0, got {list(pairs)}")
    llr = 0.0
    if sum(pairs):
        counts = [float(n) if n else EMPTY_COUNT for n in pairs]
        llr = generalized_llr(counts, PAIR_SCORES, score_from_elo(config.elo0), score_from_elo(config.elo1))
    lower, upper = config.lower_bound, config.upper_bound
    verdict: Literal["H0", "H1", "continue"] = "H1" if llr >= upper else "H0" if llr <= lower else "continue"
    return SprtResult(config, llr, lower, upper, verdict, "pentanomial")


def generalized_llr(counts: Sequence[float], scores: Sequence[float], s0: float, s1: float) -> float:
    """Log-likelihood ratio of the maximum-likelihood distributions over `scores` with expected score `s1` and `s0`,
    given `counts[j]` observations of `scores[j]` (module docstring).

    Raises:
        ValueError: no observations, or an expected score outside the observed scores' range.
    """
    total = sum(counts)
    if total <= 0:
        raise ValueError("no observations")
    observed = [(n / total, x) for n, x in zip(counts, scores) if n > 0]
    p0, p1 = _constrained_mle(observed, s0), _constrained_mle(observed, s1)
    return total * sum(f * math.log(b / a) for (f, _x), a, b in zip(observed, p0, p1))


def _constrained_mle(observed: Sequence[tuple[float, float]], s: float) -> list[float]:
    """The probabilities f / (1 + lambda (x - s)) of the observed (frequency f, score x) with mean score s."""
    low_x, high_x = min(x for _f, x in observed), max(x for _f, x in observed)
    if not low_x < s < high_x:
        raise ValueError(f"expected score {s} outside the observed scores {low_x}..{high_x}")

    def slope(lam: float) -> float:  # strictly decreasing in lam between the poles
        return sum(f * (x - s) / (1.0 + lam * (x - s)) for f, x in observed)

    low, high = -1.0 / (high_x - s), 1.0 / (s - low_x)
    for _ in range(200):  # bisection to machine precision (the interval halves each step)
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if slope(middle) > 0.0:
            low = middle
        else:
            high = middle
    lam = 0.5 * (low + high)
    return [f / (1.0 + lam * (x - s)) for f, x in observed]
