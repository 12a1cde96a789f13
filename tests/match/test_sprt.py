"""The pentanomial SPRT (miai.match.elo.sprt_pentanomial) against values worked by hand from its formulas, and the
pentanomial counts of a match's games.

The formulas (match/elo.py's docstring): a hypothesis of expected pair score s gives the maximum-likelihood
distribution p_j = f_j / (1 + lambda (x_j - s)) over the observed pair scores x_j with frequencies f_j, lambda the
root of sum_j f_j (x_j - s) / (1 + lambda (x_j - s)) = 0; LLR = N sum_j f_j log(p1_j / p0_j); the bounds are
log(beta / (1 - alpha)) and log((1 - beta) / alpha); s_i = 1 / (1 + 10^(-elo_i / 400)) (logistic Elo).
"""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from miai.engine.cli.main import main
from miai.match.elo import SprtConfig, generalized_llr, score_from_elo, sprt_pentanomial
from miai.match.summary import GameRecord, pentanomial_counts


def test_two_pair_outcomes_by_hand() -> None:
    """10 pairs: 4 scored 1/2 point of 2 (x = 1/4), 6 scored 3/2 (x = 3/4); H0 elo 0, H1 elo 30.

    With two outcomes the constraint fixes the distribution: p(3/4) = (s - 1/4) / (1/2).
      s0 = 1/2                                  -> p0 = (1/2, 1/2)
      s1 = 1 / (1 + 10^-0.075) = 1 / 1.841395142 = 0.5430665
                                                -> p1(3/4) = 0.2930665 / 0.5 = 0.5861330, p1(1/4) = 0.4138670
      LLR = 6 ln(0.5861330 / 0.5) + 4 ln(0.4138670 / 0.5)
          = 6 (0.1589386) + 4 (-0.1890634) = 0.9536316 - 0.7562536 = 0.1973780
    """
    assert score_from_elo(30) == pytest.approx(0.5430665, abs=1e-7)
    s0, s1 = score_from_elo(0), score_from_elo(30)
    assert generalized_llr([4, 6], [0.25, 0.75], s0, s1) == pytest.approx(0.1973780, abs=1e-6)
    # The same pairs through the pentanomial test: the three outcomes never seen get a tiny count, which moves
    # the LLR by far less than its printed precision.
    result = sprt_pentanomial([0, 4, 0, 6, 0], SprtConfig(0, 30))
    assert result.llr == pytest.approx(0.1973780, abs=2e-3)
    assert result.verdict == "continue" and result.model == "pentanomial"


def test_a_sample_whose_mean_is_s0_keeps_its_frequencies_under_h0() -> None:
    """Mean pair score 1/2 = s0: lambda = 0 solves H0's equation, so p0 = f and the LLR is N sum f log(p1 / f),
    which is negative (f itself is the unconstrained maximum): the data lean to H0."""
    counts, scores = [2, 6, 2], [0.25, 0.5, 0.75]
    llr = generalized_llr(counts, scores, 0.5, score_from_elo(30))
    assert llr < 0
    # Swapping the hypotheses changes the sign exactly.
    assert generalized_llr(counts, scores, score_from_elo(30), 0.5) == pytest.approx(-llr, abs=1e-12)


def test_three_outcomes_worked_out_by_newton_steps() -> None:
    """pairs at 1/4: 3, 1/2: 4, 3/4: 3 (f = 0.3, 0.4, 0.3) and s = 0.6, so x - s = -0.35, -0.1, 0.15; lambda solves
    g(L) = 0.3 (-0.35) / (1 - 0.35 L) + 0.4 (-0.1) / (1 - 0.1 L) + 0.3 (0.15) / (1 + 0.15 L) = 0.
    Newton from L = 0: g(0) = -0.105 - 0.04 + 0.045 = -0.1, g'(0) = -(0.3 * 0.1225 + 0.4 * 0.01 + 0.3 * 0.0225)
    = -0.0475, so L1 = -2.10526; g(L1) = -0.027729, g'(L1) = -0.029331, L2 = -3.05064; g(L2) = 0.0015338,
    g'(L2) = -0.033888, L3 = -3.00538; one more step: L = -3.00510. Then p = f / (1 + L (x - s)):
    p(1/4) = 0.3 / 2.051785 = 0.146214, p(1/2) = 0.4 / 1.300510 = 0.307572, p(3/4) = 0.3 / 0.549235 = 0.546214
    (they sum to 1, mean 0.6). Against s = 1/2, the sample mean (p = f), the LLR is
    10 (0.3 ln(0.146214/0.3) + 0.4 ln(0.307572/0.4) + 0.3 ln(0.546214/0.3))
    = 10 (-0.215613 - 0.105103 + 0.179769) = -1.40947.
    """
    llr = generalized_llr([3, 4, 3], [0.25, 0.5, 0.75], 0.5, 0.6)
    assert llr == pytest.approx(-1.40947, abs=1e-4)


def test_the_normal_approximation_agrees_for_many_pairs_and_close_hypotheses() -> None:
    """Van den Bergh's approximation LLR ~ N (s1 - s0) (2 mean - s0 - s1) / (2 var) holds to first order: here
    1000 pairs with mean 0.5075 (about 5 Elo), tested between 0 and 10 Elo."""
    counts = [60, 220, 420, 230, 70]
    n = sum(counts)
    scores = [0.0, 0.25, 0.5, 0.75, 1.0]
    mean = sum(c * x for c, x in zip(counts, scores)) / n
    var = sum(c * (x - mean) ** 2 for c, x in zip(counts, scores)) / n
    s0, s1 = score_from_elo(0), score_from_elo(10)
    approx = n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)
    exact = generalized_llr(counts, scores, s0, s1)
    assert exact == pytest.approx(approx, rel=1e-3)
    assert sprt_pentanomial(counts, SprtConfig(0, 10)).llr == pytest.approx(exact, rel=1e-4)


def test_bounds_by_hand() -> None:
    """alpha = beta = 0.05: log(0.05 / 0.95) = -log 19 = -2.944439 and +2.944439; alpha 0.05, beta 0.1:
    log(0.1 / 0.95) = -2.251292, log(0.9 / 0.05) = log 18 = 2.890372."""
    result = sprt_pentanomial([0, 0, 0, 0, 0], SprtConfig(0, 30))
    assert (result.llr, result.lower, result.upper) == (0.0, pytest.approx(-2.944439), pytest.approx(2.944439))
    config = SprtConfig(0, 30, 0.05, 0.1)
    assert (config.lower_bound, config.upper_bound) == (pytest.approx(-2.251292), pytest.approx(2.890372))
    assert "LLR 0.00 (-2.94, 2.94) continue" in str(result)


def test_mirrored_pairs_and_hypotheses_negate_the_llr() -> None:
    """Swapping the engines turns pair score x into 1 - x and elo into -elo: H1 and H0 change places."""
    counts = [3, 5, 9, 7, 4]
    forward = sprt_pentanomial(counts, SprtConfig(0, 30)).llr
    mirrored = sprt_pentanomial(counts[::-1], SprtConfig(-30, 0)).llr
    assert mirrored == pytest.approx(-forward, abs=1e-9)


def test_verdicts_end_at_the_bounds() -> None:
    """Only 2-0 pairs (the other outcomes at their tiny count): 7 pairs leave the test open at elo1 = 200,
    8 accept H1; only 0-2 pairs accept H0 as soon."""
    config = SprtConfig(0, 200)
    assert sprt_pentanomial([0, 0, 0, 0, 7], config).verdict == "continue"
    assert sprt_pentanomial([0, 0, 0, 0, 8], config).verdict == "H1"
    assert sprt_pentanomial([8, 0, 0, 0, 0], config).verdict == "H0"
    with pytest.raises(ValueError, match="five counts"):
        sprt_pentanomial([1, 2, 3], config)


def _game(number: int, winner_label: str | None, void: bool = False) -> GameRecord:
    black, white = ("A", "B") if number % 2 else ("B", "A")
    winner = None if winner_label is None else ("B" if winner_label == black else "W")
    return GameRecord(number, black, white, winner, "?", "void" if void else "resign", "", 10, 1.0)


def test_pentanomial_counts_pair_games_2k_minus_1_and_2k() -> None:
    games = [
        _game(1, "A"), _game(2, "A"),  # 2 points
        _game(3, "A"), _game(4, "B"),  # 1
        _game(5, None), _game(6, "B"),  # 1/2
        _game(7, "B"), _game(8, "B"),  # 0
        _game(9, "A"), _game(10, "A", void=True),  # a void game leaves the pair out
        _game(11, "A"),  # an incomplete pair is not counted yet
        _game(14, None), _game(13, "A"),  # 3/2, in any order (a resumed or concurrent match)
    ]
    assert pentanomial_counts(games) == (1, 1, 1, 1, 1)


def test_cli_takes_alpha_and_beta_and_rejects_bad_sprt_options() -> None:
    runner = CliRunner()
    for bad, message in (("0", "ELO0,ELO1"), ("0,30,0.05", "ELO0,ELO1"), ("a,b", "numbers"),
                         ("30,0", "elo1 > elo0"), ("0,30,0.6,0.05", "error rates")):
        result = runner.invoke(main, ["match", "--black", "x", "--white", "y", "--sprt", bad])
        assert result.exit_code != 0 and message in result.output, (bad, result.output)
    assert math.isclose(SprtConfig(0, 30, 0.05, 0.1).beta, 0.1)
