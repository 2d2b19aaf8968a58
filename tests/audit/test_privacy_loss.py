"""The exact privacy loss of exponential weights on arms, against an enumeration of every
action sequence of small games."""

import itertools
import math

import numpy as np
import pytest

from dp_online_envs.lab.audit.privacy_loss import (
    exp_weights_privacy_loss,
    exp_weights_probabilities,
)


def _sequence_probability(seq, losses, k, eta, gamma):
    """P[seq | losses] by direct replay (the brute force)."""
    lw = np.zeros(k)
    prob = 1.0
    for s, a in enumerate(seq):
        w = np.exp(lw - lw.max())
        p = (1 - gamma) * w / w.sum() + gamma / k
        prob *= p[a]
        lw[a] -= eta * losses[s, a] / p[a]
    return prob


@pytest.mark.parametrize("k", [2, 3])
def test_matches_enumeration_of_every_sequence(k):
    rng = np.random.default_rng(k)
    horizon, eta, gamma = 5, 0.7, 0.2
    losses = rng.integers(0, 2, size=(horizon, k)).astype(float)
    for t in range(horizon - 1):
        other = losses.copy()
        other[t] = 1.0 - losses[t]  # the neighbour: round t's loss vector flipped
        total = 0.0
        for seq in itertools.product(range(k), repeat=horizon):
            arms = np.array(seq)
            p = _sequence_probability(seq, losses, k, eta, gamma)
            q = _sequence_probability(seq, other, k, eta, gamma)
            fed = losses[np.arange(horizon), arms]
            loss = exp_weights_privacy_loss(arms, fed, fed, other[np.arange(horizon), arms],
                                            [t], k=k, eta=eta, gamma=gamma)[0]
            assert loss == pytest.approx(math.log(p / q), abs=1e-10)
            total += p * math.exp(-loss)
        assert total == pytest.approx(1.0, abs=1e-12)  # E[e^-L] = 1 under the first input


def test_window_counts_only_the_rounds_after():
    rng = np.random.default_rng(5)
    horizon, k = 40, 3
    arms = rng.integers(0, k, horizon)
    fed = rng.random(horizon)
    other = 1.0 - fed
    full = exp_weights_privacy_loss(arms, fed, fed, other, [3, 10], k=k, eta=0.3, gamma=0.1)
    cut = exp_weights_privacy_loss(arms, fed, fed, other, [3, 10], k=k, eta=0.3, gamma=0.1,
                                   window=5)
    # brute force of the window: the product of the 5 rounds' probability ratios
    for i, t in enumerate([3, 10]):
        a = fed.copy()
        b = fed.copy()
        b[t] = other[t]
        _, pa = exp_weights_probabilities(arms, a, k, 0.3, 0.1)
        _, pb = exp_weights_probabilities(arms, b, k, 0.3, 0.1)
        assert cut[i] == pytest.approx(np.log(pa[t + 1:t + 6] / pb[t + 1:t + 6]).sum())
        assert full[i] == pytest.approx(np.log(pa[t + 1:] / pb[t + 1:]).sum())


def test_laplace_noise_bounds_the_loss_and_vanishes_to_the_exact_one():
    rng = np.random.default_rng(9)
    horizon, k = 60, 4
    arms = rng.integers(0, k, horizon)
    fed = rng.integers(0, 2, horizon).astype(float)
    other = 1.0 - fed
    rounds = np.arange(0, 50, 7)
    exact = exp_weights_privacy_loss(arms, fed, fed, other, rounds, k=k, eta=0.5, gamma=0.2)
    assert np.abs(exact).max() > 1.0  # the noise-free mechanism leaks more than 1
    noisy = exp_weights_privacy_loss(arms, fed, fed, other, rounds, k=k, eta=0.5, gamma=0.2,
                                     noise_scale=1.0, nodes=401)
    # Laplace(1) on a loss that moves by 1 is 1-DP; the actions are post-processing
    assert np.abs(noisy).max() <= 1.0 + 1e-3
    tiny = exp_weights_privacy_loss(arms, fed, fed, other, rounds, k=k, eta=0.5, gamma=0.2,
                                    noise_scale=1e-6, nodes=5)
    np.testing.assert_allclose(tiny, exact, atol=1e-3)


@pytest.mark.parametrize("kwargs, match", [
    ({"rounds": [7]}, "rounds range"),
    ({"nodes": 4}, "odd"),
    ({"gamma": 1.5}, "gamma"),
    ({"first": np.zeros(3)}, "one loss a round"),
    ({"arms": np.array([0, 2, 0, 1])}, "expected 0..1"),
    ({"fed": np.zeros(3)}, "same \\(T,\\) shape"),
    ({"window": 0}, "window"),
    ({"noise_scale": -1.0}, "noise_scale"),
])
def test_bad_input_is_named(kwargs, match):
    args = {"arms": np.array([0, 1, 0, 1]), "fed": np.zeros(4), "first": np.zeros(4),
            "second": np.ones(4), "rounds": [1], "k": 2, "eta": 0.1, "gamma": 0.1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        exp_weights_privacy_loss(args.pop("arms"), args.pop("fed"), args.pop("first"),
                                 args.pop("second"), args.pop("rounds"), **args)


def test_tree_laplace_loss_has_the_laplace_mean_and_bound():
    from dp_online_envs.lab.audit.privacy_loss import tree_laplace_privacy_loss

    b, levels = 2.0, 3
    counts = np.full(40000, 2)
    draws = tree_laplace_privacy_loss(counts, levels, b, np.random.default_rng(0))
    kl = 1.0 / b + math.exp(-1.0 / b) - 1.0  # KL(Lap(0, b) || Lap(-1, b)) per term
    assert draws.mean() == pytest.approx(levels * 2 * kl, abs=4 * draws.std() / 200)
    assert np.abs(draws).max() <= levels * 2 / b + 1e-12
    assert np.abs(draws).max() > 0.9 * levels * 2 / b  # the bound is reached, nearly
    assert np.all(tree_laplace_privacy_loss(np.zeros(5, int), levels, b,
                                            np.random.default_rng(0)) == 0)
    with pytest.raises(ValueError, match="scale"):
        tree_laplace_privacy_loss(counts, levels, 0.0, np.random.default_rng(0))
