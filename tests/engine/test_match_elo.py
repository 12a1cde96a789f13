"""Elo estimate, interval and SPRT of miai.match.elo."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from miai.match.elo import ELO_CAP, SprtConfig, elo_from_score, estimate_elo, score_from_elo, sprt


def test_score_elo_round_trip_and_known_points() -> None:
    assert elo_from_score(0.5) == 0.0 and f"{elo_from_score(0.5):+.0f}" == "+0"
    # 10^(1/2) odds: a 400-point edge is 10:1 odds.
    assert score_from_elo(400) == pytest.approx(10 / 11)
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    for elo in (-350.0, -20.0, 0.0, 5.0, 190.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)


def test_perfect_and_zero_scores_are_capped() -> None:
    assert elo_from_score(1.0) == ELO_CAP
    assert elo_from_score(0.0) == -ELO_CAP
    est = estimate_elo(10, 0, 0)
    assert est.elo == ELO_CAP and est.score == 1.0


def test_estimate_by_hand_30_wins_10_losses() -> None:
    est = estimate_elo(30, 0, 10)
    # s = 0.75, per-game variance 0.75 * 0.25; Wilson: centre (s + z^2/80) / (1 + z^2/40), half width
    # z sqrt(0.1875/40 + z^2/6400) / (1 + z^2/40).
    z = 1.959964
    centre = (0.75 + z * z / 80) / (1 + z * z / 40)
    half = z * math.sqrt(0.1875 / 40 + z * z / 6400) / (1 + z * z / 40)
    assert est.score == 0.75
    assert est.elo == pytest.approx(190.85, abs=0.01)
    assert est.low == pytest.approx(elo_from_score(centre - half), abs=0.01)
    assert est.high == pytest.approx(elo_from_score(centre + half), abs=0.01)
    assert est.low == pytest.approx(69.0, abs=0.5) and est.high == pytest.approx(312.7, abs=0.5)
    assert est.games == 40
    # LOS from wins and losses: (30 - 10) / sqrt(2 * 40) = 2.236 standard deviations.
    assert est.los == pytest.approx(0.5 * (1 + math.erf(20 / math.sqrt(80))))


def test_a_clean_sweep_still_has_a_wide_interval() -> None:
    est = estimate_elo(0, 0, 2)
    assert est.elo == -ELO_CAP and est.low == -ELO_CAP
    assert est.high == pytest.approx(113, abs=1)
    # Many games: Wilson approaches the normal interval.
    big = estimate_elo(3000, 0, 1000)
    se = math.sqrt(0.1875 / 4000)
    assert big.low == pytest.approx(elo_from_score(0.75 - 1.959964 * se), abs=1.0)


def test_no_games_gives_an_uninformative_estimate() -> None:
    est = estimate_elo(0, 0, 0)
    assert (est.elo, est.low, est.high, est.los) == (0.0, -ELO_CAP, ELO_CAP, 0.5)


def test_draws_count_half_and_narrow_the_interval() -> None:
    decisive = estimate_elo(10, 0, 10)
    drawn = estimate_elo(5, 10, 5)
    assert decisive.elo == drawn.elo == 0.0
    assert drawn.high - drawn.low < decisive.high - decisive.low


def test_negative_counts_are_rejected() -> None:
    with pytest.raises(ValueError):
        estimate_elo(-1, 0, 3)


@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 300))
def test_estimate_is_antisymmetric_and_bracketed(wins: int, draws: int, losses: int) -> None:
    est = estimate_elo(wins, draws, losses)
    mirror = estimate_elo(losses, draws, wins)
    assert est.low <= est.elo <= est.high
    assert est.elo == pytest.approx(-mirror.elo, abs=1e-9)
    assert est.low == pytest.approx(-mirror.high, abs=1e-9)


def test_more_games_narrow_the_interval() -> None:
    small, large = estimate_elo(6, 0, 4), estimate_elo(60, 0, 40)
    assert small.elo == pytest.approx(large.elo)
    assert large.high - large.low < small.high - small.low


def test_sprt_bounds_and_verdicts() -> None:
    config = SprtConfig(elo0=0, elo1=50, alpha=0.05, beta=0.05)
    assert config.upper_bound == pytest.approx(math.log(19))
    assert config.lower_bound == pytest.approx(-math.log(19))
    assert sprt(0, 0, 0, config).verdict == "continue"
    assert sprt(5, 0, 4, config).verdict == "continue"
    assert sprt(150, 0, 50, config).verdict == "H1"
    assert sprt(50, 0, 150, config).verdict == "H0"


def test_sprt_llr_by_hand() -> None:
    config = SprtConfig(elo0=0, elo1=100)
    result = sprt(30, 4, 10, config)
    p0, p1 = 0.5, 1 / (1 + 10 ** (-100 / 400))
    expected = 32 * math.log(p1 / p0) + 12 * math.log((1 - p1) / (1 - p0))
    assert result.llr == pytest.approx(expected)
    assert "LLR" in str(result)


def test_sprt_needs_several_wins_even_without_losses() -> None:
    # Each win adds log(p1/p0) = log(1.519) = 0.418 for elo1 = 200; the bound log(19) = 2.94 needs 8 of them.
    config = SprtConfig(elo0=0, elo1=200)
    assert sprt(7, 0, 0, config).verdict == "continue"
    assert sprt(8, 0, 0, config).verdict == "H1"
    assert sprt(0, 0, 8, config).verdict == "H0"


def test_sprt_config_is_validated() -> None:
    with pytest.raises(ValueError):
        SprtConfig(elo0=10, elo1=0)
    with pytest.raises(ValueError):
        SprtConfig(alpha=0.7)


def test_elo_beyond_the_data_reads_as_a_bound_not_a_clamp() -> None:
    sweep = estimate_elo(2, 0, 0)
    assert str(sweep) == "> -113 Elo (95%; every game won), LOS 92.1%"
    assert sweep.describe(compact=True) == "> -113"
    assert str(estimate_elo(0, 0, 2)).startswith("< +113 Elo (95%; every game lost)")
    assert estimate_elo(30, 0, 0).describe(compact=True) == "> +357"
    assert str(estimate_elo(30, 0, 10)) == "+191 Elo (95% +69 .. +313), LOS 99.9%"
    assert estimate_elo(30, 0, 10).describe(compact=True) == "+191 (+69..+313)"
    assert str(estimate_elo(0, 0, 0)) == "no games played"
    for record in [(2, 0, 0), (0, 0, 2), (9, 1, 0), (0, 0, 0)]:
        assert "1000" not in str(estimate_elo(*record)) + estimate_elo(*record).describe(compact=True)
