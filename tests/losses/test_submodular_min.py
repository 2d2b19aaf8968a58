"""Exact submodular minimization: min-norm point (Fujishige-Wolfe) against brute force."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from loss_helpers import random_edges

from dp_online_envs.losses import (
    ConcaveModularLoss,
    FacilityLocationLoss,
    GraphCutLoss,
    brute_force_minimize,
    fujishige_wolfe,
    minimize_submodular,
)
from dp_online_envs.losses.submodular_min import all_masks


def make_family(kind: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "cut":
        return GraphCutLoss(n, random_edges(n, 0.35, seed), unary=True)
    if kind == "concave":
        groups = [sorted(rng.choice(n, size=int(rng.integers(2, n + 1)), replace=False))
                  for _ in range(int(rng.integers(1, 6)))]
        return ConcaveModularLoss(n, groups)
    return FacilityLocationLoss(n, n_customers=int(rng.integers(1, 5)))


def batch(fam, theta):
    return lambda masks: fam.set_values(theta, masks)


def check_against_brute(fam, theta):
    fn = batch(fam, theta)
    exact, _ = brute_force_minimize(fn, fam.n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no convergence" warning allowed
        res = fujishige_wolfe(fn, fam.n)
    assert res.value == pytest.approx(exact, abs=1e-9), (fam, theta)
    assert fam.set_value(theta, res.mask) == pytest.approx(res.value, abs=1e-12)
    # weak duality certificate: sum_i min(x_i, 0) <= min f, and the gap is tiny
    assert np.minimum(res.x, 0).sum() <= exact + 1e-9
    assert res.gap <= 1e-8
    return res


@pytest.mark.parametrize("kind", ["cut", "concave", "facility"])
def test_min_norm_point_equals_brute_force_small(kind):
    rng = np.random.default_rng(0)
    for trial in range(25):
        n = int(rng.integers(6, 13))
        fam = make_family(kind, n, seed=trial)
        for theta in (fam.sample_param(rng), fam.sample_param(rng)):
            check_against_brute(fam, theta)


@pytest.mark.parametrize(("kind", "n"), [("cut", 16), ("concave", 16), ("facility", 16),
                                         ("cut", 18), ("concave", 20)])
def test_min_norm_point_equals_brute_force_large(kind, n):
    rng = np.random.default_rng(n)
    fam = make_family(kind, n, seed=n)
    for _ in range(2):
        check_against_brute(fam, fam.sample_param(rng))


def test_fujishige_theorem_minimal_minimizer_is_negative_support():
    """On an instance with a unique minimizer, the min-norm point's negative set is it."""
    n = 10
    rng = np.random.default_rng(1)
    fam = ConcaveModularLoss(n, [list(range(n))])
    for _ in range(5):
        theta = fam.sample_param(rng)
        fn = batch(fam, theta)
        vals = fn(all_masks(n))
        best = np.argsort(vals)[:2]
        if vals[best[1]] - vals[best[0]] < 1e-6:
            continue
        res = fujishige_wolfe(fn, n)
        np.testing.assert_array_equal(res.mask, all_masks(n)[best[0]])
        np.testing.assert_array_equal(res.x < 0, res.mask)
        assert np.minimum(res.x, 0).sum() == pytest.approx(vals[best[0]], abs=1e-9)


def test_integer_valued_cuts_with_many_ties():
    rng = np.random.default_rng(2)
    for trial in range(40):
        n = int(rng.integers(2, 13))
        fam = GraphCutLoss(n, random_edges(n, 0.4, trial), unary=True,
                           scale=float(len(random_edges(n, 0.4, trial)) + n))
        theta = np.concatenate([rng.integers(0, 2, fam.n_edges),
                                rng.integers(-1, 2, n)]).astype(float)
        check_against_brute(fam, theta)


def test_minimize_submodular_dispatch_and_plain_callable():
    n = 15  # above the brute-force threshold: min-norm point under "auto"
    rng = np.random.default_rng(3)
    fam = make_family("concave", n, seed=3)
    theta = fam.sample_param(rng)
    calls = []

    def fn(mask):  # one mask at a time
        assert mask.shape == (n,) and mask.dtype == bool
        calls.append(1)
        return fam.set_value(theta, mask)

    val, mask = minimize_submodular(fn, n)
    assert len(calls) < 2**n  # did not enumerate
    exact, _ = minimize_submodular(batch(fam, theta), n, vectorized=True, method="brute")
    assert val == pytest.approx(exact, abs=1e-9)
    assert fn(mask) == pytest.approx(val)
    # below the threshold "auto" is brute force, with the first minimizer in bit order
    small = make_family("cut", 8, seed=4)
    th = small.sample_param(rng)
    v1, m1 = minimize_submodular(batch(small, th), 8, vectorized=True)
    v2, m2 = brute_force_minimize(batch(small, th), 8)
    assert v1 == v2 and np.array_equal(m1, m2)


def test_family_minimize_on_sums_and_nonlinear_sums():
    """The comparator's use: min over S of sum_t f_t(S)."""
    rng = np.random.default_rng(5)
    n = 16
    cut = make_family("cut", n, seed=5)
    thetas = [cut.sample_param(rng) for _ in range(20)]
    v, m = cut.minimize(sum(thetas), method="min_norm")
    exact, _ = cut.minimize(sum(thetas), method="brute")
    assert v == pytest.approx(exact, abs=1e-9)
    assert v == pytest.approx(sum(cut.set_value(t, m) for t in thetas))
    fac = FacilityLocationLoss(12, n_customers=2)
    fthetas = [fac.sample_param(rng) for _ in range(6)]

    def total(masks):
        return sum(fac.set_values(t, masks) for t in fthetas)

    v1, _ = minimize_submodular(total, 12, vectorized=True, method="min_norm")
    v2, _ = minimize_submodular(total, 12, vectorized=True, method="brute")
    assert v1 == pytest.approx(v2, abs=1e-9)


def test_nonzero_empty_value_and_trivial_functions():
    n = 17
    val, mask = minimize_submodular(lambda m: 5.0, n)
    assert val == 5.0 and not mask.any()
    w = np.linspace(-1, 1, n)
    val, mask = minimize_submodular(lambda m: 2.0 + float(w[m].sum()), n)
    assert val == pytest.approx(2.0 + w[w < 0].sum())
    assert np.array_equal(mask, w < 0) or np.array_equal(mask, w <= 0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n": 0}, "n="), ({"n": 3, "method": "greedy"}, "method"),
     ({"n": 3, "tol": -1.0}, "tol"), ({"n": True}, "n=")],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        minimize_submodular(lambda m: 0.0, **kwargs)


def test_vectorized_fn_with_wrong_output_size_is_reported():
    with pytest.raises(ValueError, match="values"):
        minimize_submodular(lambda masks: np.zeros(3), 4, vectorized=True)


@pytest.mark.parametrize("mode", ["dropped", "dependent"])
def test_stops_when_the_new_vertex_cannot_enter_the_corral(monkeypatch, mode):
    """The corral is the shared :class:`~dp_online_envs.domains.wolfe.Corral`. When the
    greedy vertex is refused (affinely dependent on the corral, up to rounding) or
    dropped by the minor cycles, x is optimal to rounding: the loop stops (converged,
    no warning) instead of re-adding the same vertex until the cap. Simulated on the
    first major cycle; the answer is then the best set seen, still certified."""
    from dp_online_envs.domains import wolfe

    fam = make_family("cut", 10, 3)
    theta = fam.sample_param(np.random.default_rng(3))
    calls = []
    if mode == "dropped":
        real = wolfe.Corral.minor_cycles

        def drop_newest(self, weight_tol=wolfe.WEIGHT_TOL):
            calls.append(1)
            if len(calls) == 1:  # pretend the new vertex lost its weight
                self.keep(np.arange(self.size - 1))
                self.lam[: self.size] = 1.0 / self.size
                return None
            return real(self, weight_tol)

        monkeypatch.setattr(wolfe.Corral, "minor_cycles", drop_newest)
    else:
        real_insert = wolfe.Corral.try_insert

        def refuse_second(self, v, key):
            calls.append(1)
            return real_insert(self, v, key) if len(calls) == 1 else False

        monkeypatch.setattr(wolfe.Corral, "try_insert", refuse_second)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fujishige_wolfe(batch(fam, theta), fam.n, max_iter=50)
    assert res.iterations == 1
    assert fam.set_value(theta, res.mask) == pytest.approx(res.value, abs=1e-12)
    assert np.minimum(res.x, 0).sum() <= res.value + 1e-9  # weak duality still holds
