"""The compiled long-horizon path (:mod:`agents.compiled`) against the Python path.

* Same seed, same game: the compiled loop reproduces the Python path's actions and
  regret bit for bit (noise off and on, both learners and their tuned variants, a
  short last batch, Garber-Kretzu's capped projections), and trivial play's regret, on
  the matroid, s-t path, submodular base and Birkhoff defaults.
* The compiled linear oracles return the domains' own vertices, ties included, and the
  compiled feasibility test agrees with the domains' ``contains``.
* The compiled exact sampler draws numpy's discrete Laplace integers from the same
  generator state, and its law has the analytic variance and pmf.
* Regret distributions over 200 seeds at T = 2^12 agree between disjoint seed sets, and
  the same two-sample test rejects the law of twice (and half) the noise scale.
* Seeded runs repeat bit for bit, in threads or not; bad input is refused by name.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from agents import make, play
from agents.bandit.garber_kretzu import GarberKretzu
from agents.compiled import kernels, play_compiled, play_compiled_seeds
from agents.compiled.long_horizon import _setup, kernel_arguments, polytope_arrays
from agents.privacy.discrete import discrete_laplace, discrete_laplace_variance, word_source
from dp_online_envs.domains import Birkhoff, FlowPolytope, SubmodularBasePolytope
from dp_online_envs.envs.registry import build_env
from dp_online_envs.loop import game_seeds

ENV = "DPBandit-Matroid-v2"
#: The other real-size polytope defaults the compiled loop plays.
OTHER_ENVS = ("DPBandit-Flow-v2", "DPBandit-SubmodularBase-v2", "DPBandit-Birkhoff-v2")
T = 300  # round(sqrt 300) = 17: 18 batches, the last one of 11 rounds


def python_game(agent: str, horizon: int, seed: int, noise: bool = True, env_id: str = ENV,
                **kw):
    """The Python path's regret, actions and learner for one game."""
    env = build_env(env_id, horizon=horizon)
    a = make(agent, env.get_wrapper_attr("problem"), seed=seed, **kw)
    if not noise:
        a.noise = None
    actions = []
    act = a.act

    def recording_act():
        x = act()
        actions.append(np.array(x))
        return x

    a.act = recording_act
    # the compiled harness seeds the agent as game_seeds(seed) does
    summary = play(env, a, seed=seed, agent_seed=game_seeds(seed)[1])
    return summary.regret, np.array(actions), a


@pytest.mark.parametrize("agent, kw, noise", [
    ("garber-kretzu", {}, True),
    ("garber-kretzu-tuned", {}, True),
    ("garber-kretzu-tuned", {"max_fw_iterations": 1, "step": 128}, True),
    ("garber-kretzu-tuned", {"baseline": False}, True),
    ("private-projection-free", {"epsilon": 1.0}, False),
    ("private-projection-free", {"epsilon": 1.0}, True),
    ("private-projection-free-tuned", {"epsilon": 0.5}, True),
])
@pytest.mark.parametrize("seed", [0, 7])
def test_same_game_bit_for_bit(agent, kw, noise, seed):
    regret, actions, learner = python_game(agent, T, seed, noise, **kw)
    c = play_compiled(ENV, agent, T, seed, agent_kw=kw, noise=noise, record=T)
    assert np.array_equal(c.actions, actions)
    assert c.regret == regret
    assert c.lmo_calls == learner.lmo_calls
    if isinstance(learner, GarberKretzu):
        assert c.fw_cap_hits == learner.fw_cap_hits
        if kw.get("step") == 128:
            assert c.fw_cap_hits > 0  # the cap is exercised
    trivial, _, _ = python_game("center", T, seed)
    assert c.trivial_regret == trivial


@pytest.mark.parametrize("agent, kw, noise", [
    ("garber-kretzu", {}, True),
    ("garber-kretzu-tuned", {"max_fw_iterations": 1, "step": 128}, True),
    ("private-projection-free", {"epsilon": 1.0}, False),
    ("private-projection-free-tuned", {"epsilon": 0.5}, True),
])
@pytest.mark.parametrize("env_id", OTHER_ENVS)
def test_same_game_bit_for_bit_on_the_other_polytopes(env_id, agent, kw, noise):
    """The s-t path (17 edges, hull dimension 6), submodular base (n = 7, a strided hull
    basis) and Birkhoff (n = 4, hull dimension 9) defaults, seed 7: the hull basis is no
    identity here, and ``basis @ s`` goes to the BLAS ``dgemv`` in both paths."""
    regret, actions, learner = python_game(agent, T, 7, noise, env_id, **kw)
    c = play_compiled(env_id, agent, T, 7, agent_kw=kw, noise=noise, record=T)
    assert np.array_equal(c.actions, actions)
    assert c.regret == regret
    assert c.lmo_calls == learner.lmo_calls
    if isinstance(learner, GarberKretzu):
        assert c.fw_cap_hits == learner.fw_cap_hits
        assert (c.fw_cap_hits > 0) == (kw.get("step") == 128)
    trivial, _, _ = python_game("center", T, 7, env_id=env_id)
    assert c.trivial_regret == trivial


def _domains():
    """The defaults' domains and a few more: a DAG with parallel and useless edges, the
    Birkhoff polytopes n = 1..6."""
    envs = (ENV,) + OTHER_ENVS
    dag = FlowPolytope(6, [(0, 1), (1, 2), (0, 2), (2, 5), (1, 5), (3, 5), (0, 4),
                           (2, 5), (4, 1)], 0, 5)  # (3, 5) useless, (2, 5) twice
    return ([build_env(e, horizon=10).unwrapped.domain for e in envs]
            + [dag, SubmodularBasePolytope.permutahedron(5)]
            + [Birkhoff(n) for n in range(1, 7)])


def _costs(rng, dim, i):
    """Random costs, and the tie patterns: integers in {-2..2}, zeros, and values an ulp
    apart (0 or 0.1 plus 1e-17 noise)."""
    kind = i % 4
    if kind == 0:
        return rng.standard_normal(dim)
    if kind == 1:
        return rng.integers(-2, 3, dim).astype(float)
    if kind == 2:
        return np.zeros(dim)
    return rng.integers(0, 2, dim) * 0.1 + rng.standard_normal(dim) * 1e-17


def test_linear_oracles_are_the_domains():
    """The compiled oracle returns the domain's own vertex, bit for bit, on 600 costs per
    domain, a third of them with ties (the tie-breaks are the domains': first incoming
    edge, stable sort, scipy's assignment)."""
    rng = np.random.default_rng(5)
    for domain in _domains():
        kind, polytope = polytope_arrays(domain)
        for i in range(600):
            c = _costs(rng, domain.dim, i)
            assert np.array_equal(kernels.lmo(kind, c, polytope),
                                  domain.linear_minimizer(c)), (domain, c.tolist())


def test_outside_test_is_contains():
    """The compiled feasibility test of a played point agrees with the domain's
    ``contains`` (tolerance 1e-9) on points of the polytope moved by 1e-12 (inside) and
    on vertices moved by 1e-6 (mostly outside), and both answers occur."""
    rng = np.random.default_rng(9)
    for domain in _domains():
        kind, polytope = polytope_arrays(domain)
        vertices = np.array([domain.linear_minimizer(rng.standard_normal(domain.dim))
                             for _ in range(20)])
        seen = set()
        for i in range(200):
            if i % 2:
                x = rng.dirichlet(np.ones(20)) @ vertices + 1e-12 * rng.standard_normal(
                    domain.dim)
            else:
                x = vertices[i % 20] + 1e-6 * rng.standard_normal(domain.dim)
            inside = domain.contains(x, 1e-9)
            assert kernels.is_outside(kind, x, polytope) == (not inside), (domain, x.tolist())
            seen.add(inside)
        assert seen == {True, False}, domain


def test_noise_changes_the_game():
    """The noise is on by default: the regret differs from the noise-free game's."""
    on = play_compiled(ENV, "private-projection-free", T, 3, agent_kw={"epsilon": 1.0})
    off = play_compiled(ENV, "private-projection-free", T, 3, agent_kw={"epsilon": 1.0},
                        noise=False)
    assert on.regret != off.regret and on.trivial_regret == off.trivial_regret


@pytest.mark.parametrize("t", [1, 2, 7, 5967108])
def test_sampler_draws_numpys_integers(t):
    a, b = np.random.default_rng(t), np.random.default_rng(t)
    assert np.array_equal(kernels.discrete_laplace(word_source(a), t, 3000),
                          discrete_laplace(b, t, 3000))
    assert a.integers(0, 2**62) == b.integers(0, 2**62)  # the same state after


def test_sampler_law():
    """Variance within 5 standard errors of ``2 q / (1 - q)^2`` and the pmf ``(1 - q)/(1 +
    q) q^|y|`` (``q = e^{-1/t}``) by a chi-square test, on 400000 draws of scale 3."""
    t, n = 3, 400_000
    rng = np.random.default_rng(11)  # alive while the kernel draws from its addresses
    y = kernels.discrete_laplace(word_source(rng), t, n)
    var = discrete_laplace_variance(t)
    m2 = float(np.mean(y.astype(float) ** 2))
    m4 = float(np.mean(y.astype(float) ** 4))
    assert abs(float(y.mean())) < 5 * math.sqrt(var / n)
    assert abs(m2 - var) < 5 * math.sqrt((m4 - m2**2) / n)
    q = math.exp(-1.0 / t)
    ks = np.arange(-15, 16)
    pmf = (1 - q) / (1 + q) * q ** np.abs(ks)
    observed = np.array([np.sum(y == k) for k in ks] + [np.sum(np.abs(y) > 15)])
    expected = n * np.append(pmf, 1 - pmf.sum())
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def _excess(seeds, epsilon):
    games = play_compiled_seeds(ENV, "private-projection-free", 2**12, seeds,
                                agent_kw={"epsilon": epsilon})
    return np.array([g.regret for g in games])


def test_two_sample_law_and_its_power():
    """Two samples of 200 seeds at T = 2^12 (epsilon 4, where the regret still feels the
    noise scale; at epsilon 1 the noise saturates the iterate): the same law is not
    rejected, twice or half the noise scale (epsilon 2 or 8, the radius clamped either
    way, so only the noise differs) is, by Kolmogorov-Smirnov."""
    base = _excess(range(1, 201), 4.0)
    assert stats.ks_2samp(base, _excess(range(201, 401), 4.0)).pvalue > 0.01
    assert stats.ks_2samp(base, _excess(range(201, 401), 2.0)).pvalue < 1e-6
    assert stats.ks_2samp(base, _excess(range(201, 401), 8.0)).pvalue < 1e-6


def test_seeded_and_threaded_runs_repeat():
    kw = {"agent_kw": {"epsilon": 1.0}}
    one = play_compiled_seeds(ENV, "private-projection-free", 500, [4, 5, 6], **kw)
    two = play_compiled_seeds(ENV, "private-projection-free", 500, [4, 5, 6], workers=2, **kw)
    again = play_compiled(ENV, "private-projection-free", 500, 5, **kw)
    assert [g.regret for g in one] == [g.regret for g in two]
    assert one[1].regret == again.regret and one[0].regret != one[1].regret


def test_points_outside_are_caught(monkeypatch):
    """A learner whose perturbation leaves the polytope is reported, not played."""
    setup = GarberKretzu.setup

    def wide(self, *args, **kwargs):
        setup(self, *args, **kwargs)
        self.zeta = 4 * self.geometry.radius

    monkeypatch.setattr(GarberKretzu, "setup", wide)
    for env_id in (ENV,) + OTHER_ENVS:
        with pytest.raises(RuntimeError, match="outside the polytope"):
            play_compiled(env_id, "garber-kretzu", 200, 0)


def test_integer_grid_overflow_is_refused():
    env, learner, private = _setup(ENV, "private-projection-free", 200, 0, {},
                                   {"epsilon": 1.0}, True)
    args = list(kernel_arguments(env, learner, private))
    args[22] = 1e-300  # the grid: every input is far beyond 2^52 grid steps
    with pytest.raises(ValueError, match="exact integer grid"):
        kernels.play_game(*args)


@pytest.mark.parametrize("env_id, env_kw, agent, kw, match", [
    (ENV, {}, "fkm", {}, "the compiled loop plays"),
    (ENV, {"matroid": "graphic"}, "garber-kretzu", {}, "GraphicMatroid.*compiled loop needs"),
    (ENV, {}, "private-projection-free", {"epsilon": 1.0, "counter": "honaker"},
     "tree counter"),
    (ENV, {}, "private-projection-free",
     {"epsilon": 1.0, "delta": 1e-6, "noise": "gaussian"}, "tree counter"),
])
def test_refuses_what_it_does_not_play(env_id, env_kw, agent, kw, match):
    with pytest.raises(ValueError, match=match):
        play_compiled(env_id, agent, 100, 0, env_kw=env_kw, agent_kw=kw)


def test_refuses_a_base_polytope_not_cardinality_based():
    """Only ``f(S) = g(|S|)`` has its greedy compiled."""
    f = SubmodularBasePolytope(lambda m: float(min(int(m[:2].sum()), 1) + m[2]), 3)
    with pytest.raises(ValueError, match="cardinality-based submodular base"):
        polytope_arrays(f)


def test_refuses_bad_workers():
    with pytest.raises(ValueError, match="workers=0"):
        play_compiled_seeds(ENV, "garber-kretzu", 10, [0], workers=0)


CACHE_PROBE = """\
import json
from agents.compiled import kernels, play_compiled
play_compiled("DPBandit-Matroid-v2", "private-projection-free", 40, 0, agent_kw={"epsilon": 1.0})
used = [f for f in vars(kernels).values() if hasattr(f, "stats") and f.signatures]
print(json.dumps({"kernels": len(used),  # the kernels given a signature in this process
                  "hits": sum(sum(f.stats.cache_hits.values()) for f in used),
                  "misses": sum(sum(f.stats.cache_misses.values()) for f in used)}))
"""


def test_a_second_process_loads_the_kernels_from_the_disk_cache():
    """The kernels are cached on disk: a process compiles them, or finds them there
    (the package's cache, which the other tests of this run fill), and the next process
    loads every kernel it plays and compiles none."""
    import json
    import subprocess
    import sys

    runs = [json.loads(subprocess.run([sys.executable, "-c", CACHE_PROBE], check=True,
                                      capture_output=True, text=True,
                                      timeout=900).stdout) for _ in range(2)]
    first, second = runs
    assert first["kernels"] > 0 and first["hits"] + first["misses"] > 0
    # the entry point's cached code holds the kernels it calls: one hit, no compilation
    assert second["misses"] == 0 and second["hits"] >= 1
