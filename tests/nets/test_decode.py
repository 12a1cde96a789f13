"""Decoding raw net outputs (KATAGO.md section 5) on synthetic logits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from miai.nets.decode import PostProcess, decode_batch, masked_softmax, softplus


def decode(policy, value, misc, ownership=None, legal=None, allow=True, post=PostProcess(), optimism=0.0):
    policy = np.asarray(policy, dtype=np.float32)
    if legal is None:
        legal = np.ones(policy.shape[-1], dtype=bool)
    return decode_batch(
        policy[None],
        np.asarray(value, dtype=np.float32)[None],
        np.asarray(misc, dtype=np.float32)[None],
        None if ownership is None else np.asarray(ownership, dtype=np.float32)[None],
        np.asarray(legal)[None],
        np.array([allow]),
        post,
        optimism,
    )


def test_policy_is_a_softmax_over_legal_moves_with_illegal_zero() -> None:
    logits = [[1.0, 2.0, 3.0, 0.0, 0.5]]  # 2x2 board + pass, one channel
    legal = np.array([True, False, True, True, True])
    out = decode(logits, [0, 0, 0], [0, 0, 0, 0], legal=legal)
    p = out.policy[0]
    assert p[1] == 0.0
    expected = np.exp([1.0, 3.0, 0.0, 0.5]) / np.exp([1.0, 3.0, 0.0, 0.5]).sum()
    assert np.allclose(p[[0, 2, 3, 4]], expected, atol=1e-6)
    assert math.isclose(float(p.sum()), 1.0, rel_tol=1e-6)


def test_policy_optimism_blends_the_two_channels() -> None:
    normal = [0.0, 0.0, 0.0, 0.0, 0.0]
    optimistic = [4.0, 0.0, 0.0, 0.0, 0.0]
    logits = [normal, optimistic]
    assert math.isclose(float(decode(logits, [0, 0, 0], [0] * 4).policy[0][0]), 0.2, rel_tol=1e-5)
    full = decode(logits, [0, 0, 0], [0] * 4, optimism=1.0).policy[0]
    assert math.isclose(float(full[0]), math.exp(4) / (math.exp(4) + 4), rel_tol=1e-5)
    half = decode(logits, [0, 0, 0], [0] * 4, optimism=0.5).policy[0]
    assert math.isclose(float(half[0]), math.exp(2) / (math.exp(2) + 4), rel_tol=1e-5)


def test_optimism_is_ignored_without_an_optimistic_channel() -> None:
    out = decode([[4.0, 0.0, 0.0, 0.0, 0.0]], [0, 0, 0], [0] * 4, optimism=1.0)
    assert math.isclose(float(out.policy[0][0]), math.exp(4) / (math.exp(4) + 4), rel_tol=1e-5)


def test_value_softmax_and_no_result_dropped_when_not_allowed() -> None:
    value = [1.0, 0.0, 0.5]
    kept = decode([[0.0] * 5], value, [0] * 4, allow=True)
    e = np.exp(value)
    assert np.allclose([kept.win[0], kept.loss[0], kept.no_result[0]], e / e.sum())
    dropped = decode([[0.0] * 5], value, [0] * 4, allow=False)
    assert dropped.no_result[0] == 0.0
    assert math.isclose(float(dropped.win[0]), math.e / (math.e + 1))


def test_scores_use_multipliers_softplus_and_the_no_result_factor() -> None:
    misc = [0.5, -1.0, 0.25, 0.3]
    value = [0.0, 0.0, 0.0]  # no result = 1/3
    out = decode([[0.0] * 5], value, misc, allow=True)
    survive = 2.0 / 3.0
    assert math.isclose(float(out.score_mean[0]), 20 * 0.5 * survive, rel_tol=1e-6)
    assert math.isclose(float(out.lead[0]), 20 * 0.25 * survive, rel_tol=1e-6)
    assert math.isclose(float(out.score_stdev[0]), 20 * math.log1p(math.exp(-1.0)), rel_tol=1e-6)
    assert math.isclose(float(out.var_time_left[0]), 40 * math.log1p(math.exp(0.3)), rel_tol=1e-6)
    # Only four misc heads: the short-term error heads are reported as missing (-1).
    assert out.shortterm_winloss_error[0] == -1.0


def test_custom_multipliers_come_from_metadata() -> None:
    post = PostProcess.from_metadata({"score_mean_multiplier": "10.0", "lead_multiplier": "5"})
    assert (post.score_mean, post.lead, post.score_stdev) == (10.0, 5.0, 20.0)
    out = decode([[0.0] * 5], [0, 0, 0], [1.0, 0.0, 1.0, 0.0], allow=False, post=post)
    assert math.isclose(float(out.score_mean[0]), 10.0, rel_tol=1e-6)
    assert math.isclose(float(out.lead[0]), 5.0, rel_tol=1e-6)
    with pytest.raises(ValueError):
        PostProcess(score_mean=0.0)


def test_ownership_is_tanh() -> None:
    out = decode([[0.0] * 5], [0, 0, 0], [0] * 4, ownership=[0.0, 1.0, -2.0, 30.0])
    assert np.allclose(out.ownership[0], np.tanh([0.0, 1.0, -2.0, 30.0]), atol=1e-7)


def test_huge_logits_do_not_overflow() -> None:
    p = masked_softmax(np.array([[1e4, 0.0, -1e4]]), np.array([[True, True, True]]))
    assert np.isfinite(p).all() and math.isclose(float(p[0, 0]), 1.0)
    assert np.isfinite(softplus(np.array([1e4, -1e4]))).all()


def test_a_row_without_legal_moves_is_an_error() -> None:
    with pytest.raises(ValueError):
        masked_softmax(np.zeros((1, 3)), np.zeros((1, 3), dtype=bool))


@settings(max_examples=60, deadline=None)
@given(
    logits=arrays(np.float32, (2, 10), elements=st.floats(-30, 30, width=32)),
    legal=arrays(np.bool_, 10),
    optimism=st.floats(0, 1),
    value=arrays(np.float32, 3, elements=st.floats(-20, 20, width=32)),
)
def test_decoded_outputs_are_probabilities(logits, legal, optimism, value) -> None:  # type: ignore[no-untyped-def]
    legal = legal.copy()
    legal[-1] = True  # pass
    out = decode(logits, value, [0.1, 0.2, 0.3, 0.4], legal=legal, optimism=optimism)
    p = out.policy[0]
    assert (p >= 0).all() and not p[~legal].any()
    assert float(p.sum()) == pytest.approx(1.0, abs=1e-5)
    # A higher blended logit never gets a lower probability.
    blended = logits[0] + (logits[1] - logits[0]) * optimism
    order = np.argsort(blended[legal])
    assert (np.diff(p[legal][order]) >= -1e-6).all()
    assert out.win[0] + out.loss[0] + out.no_result[0] == pytest.approx(1.0)


def test_passing_hack_caps_the_pass_prior_at_95_percent() -> None:
    """KataGo's enablePassingHacks (nneval.cpp): pass gets at most 19 times the other moves' mass."""
    from miai.nets.decode import cap_pass_prior

    policy = np.array([[0.01, 0.01, 0.98], [0.3, 0.2, 0.5], [0.0, 0.0, 1.0], [0.04, 0.0, 0.96]])
    capped = cap_pass_prior(policy)
    assert capped[0].tolist() == pytest.approx([0.025, 0.025, 0.95])
    assert capped[1].tolist() == pytest.approx([0.3, 0.2, 0.5])
    assert capped[2].tolist() == [0.0, 0.0, 1.0]  # nothing else has any mass: pass keeps it
    assert capped[3].tolist() == pytest.approx([0.05, 0.0, 0.95])
    legal = np.ones((1, 3), dtype=bool)
    logits = np.array([[0.0, 0.0, 10.0]])
    plain = decode_batch(logits, np.zeros((1, 3)), np.zeros((1, 4)), None, legal, np.array([True]), PostProcess())
    hacked = decode_batch(logits, np.zeros((1, 3)), np.zeros((1, 4)), None, legal, np.array([True]), PostProcess(),
                          cap_pass=True)
    assert plain.policy[0, 2] > 0.99 and hacked.policy[0, 2] == pytest.approx(0.95)


def test_shortterm_errors_read_as_katago_reads_each_model_version() -> None:
    """nneval.cpp: v14+ sqrt(m) * softplus(s / 2); v10-13 sqrt(m * softplus(s)); v9 softplus(s) and 10 softplus(s);
    none before v9 (supportsShorttermError). Worked by hand for s = 0 (softplus 0 = ln 2) and the default
    multipliers 0.25 and 30."""
    from miai.nets.decode import shortterm_errors

    misc = np.zeros((1, 6))
    post = PostProcess()
    ln2 = math.log(2.0)
    wl, score = shortterm_errors(misc, post, 17)
    assert wl[0] == pytest.approx(0.5 * ln2) and score[0] == pytest.approx(math.sqrt(30.0) * ln2)
    wl, score = shortterm_errors(misc, post, 11)
    assert wl[0] == pytest.approx(math.sqrt(0.25 * ln2)) and score[0] == pytest.approx(math.sqrt(30.0 * ln2))
    wl, score = shortterm_errors(misc, post, 9)
    assert wl[0] == pytest.approx(ln2) and score[0] == pytest.approx(10.0 * ln2)
    assert shortterm_errors(misc, post, 8)[0][0] == -1.0
    assert shortterm_errors(np.zeros((1, 4)), post, 17)[0][0] == -1.0
