"""The tuned projection-free learners: their parameters are the theorem's formulas at
the tuned radius, step and block length; the private one's calibration is the theorem's
at the radius it uses; the theorem variants are unchanged."""

import math

import numpy as np
import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import make
from agents.bandit.private_projection_free_tuned import DEFAULT_SHRINK, DEFAULT_STEP
from agents.bandit.smoothing import batch_gradient_bound, estimate_sensitivity
from dp_online_envs.envs.registry import build_env


def _problem(env_id="DPBandit-Matroid-v2", horizon=4096, **kw):
    return build_env(env_id, horizon=horizon, **kw).get_wrapper_attr("problem")


@pytest.mark.parametrize("name,kw", [("garber-kretzu-tuned", {}),
                                     ("private-projection-free-tuned", {"epsilon": 1.0})])
@pytest.mark.parametrize("shrink,step,batch", [(DEFAULT_SHRINK, DEFAULT_STEP, None),
                                               (0.1, 2.0, 16), (0.5, 1.0, 4096)])
def test_parameters_are_the_theorem_formulas_at_the_tuned_values(name, kw, shrink, step,
                                                                 batch):
    p = _problem()
    a = make(name, p, seed=0, shrink=shrink, step=step, batch=batch, **kw)
    r, n = a.geometry.radius, a.geometry.rank
    k = round(math.sqrt(4096)) if batch is None else batch
    m = -(-4096 // k)
    assert (a.batch, a.rounds, a.alpha) == (k, m, shrink)
    assert a.zeta == pytest.approx(shrink * r, rel=1e-15)
    kappa = math.sqrt(k) * n * p.bound / a.zeta + k * p.lipschitz
    assert kappa == pytest.approx(batch_gradient_bound(k, n, p.bound, p.lipschitz, a.zeta))
    assert a.eta == pytest.approx(step * p.diameter / (kappa * math.sqrt(m)), rel=1e-12)


def test_private_tuned_calibration_is_the_theorems_at_its_radius():
    """Sensitivity ``sqrt(n) 2 n B / zeta`` (Laplace) at the tuned zeta, the tree over the
    ``M`` blocks: the same guarantee and noise as the theorem variant would have there."""
    p = _problem()
    a = make("private-projection-free-tuned", p, seed=0, epsilon=1.0, shrink=0.125, batch=32)
    n = a.geometry.rank
    assert a.sensitivity == pytest.approx(estimate_sensitivity(n, p.bound, a.zeta, 1))
    assert a.counter_spec.horizon == a.rounds == 128
    assert a.counter_spec.sensitivity == a.sensitivity
    assert a.privacy.epsilon == 1.0


def test_theorem_variants_are_unchanged_by_the_tuned_ones():
    """With the theorem's own radius, step and block length, the tuned class plays the
    theorem variant's actions bit for bit (the tuned module changes parameters only)."""
    p = _problem(horizon=400)
    base = make("garber-kretzu", p, seed=3)
    tuned = make("garber-kretzu-tuned", p, seed=3, shrink=base.alpha,
                 step=1.0, batch=base.batch, baseline=False)
    assert tuned.eta == pytest.approx(base.eta, rel=1e-12) and tuned.zeta == base.zeta
    env = build_env("DPBandit-Matroid-v2", horizon=400)
    for agent in (base, tuned):
        agent.reset(3)
    env.reset(seed=3)
    for _ in range(400):
        x, y = base.act(), tuned.act()
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12)
        _, reward, *_ = env.step(x)
        fb = np.array([-reward])
        base.update(x, fb)
        tuned.update(y, fb)


@pytest.mark.parametrize("opts,match", [({"shrink": 0.0}, "shrink"), ({"shrink": 0.6}, "shrink"),
                                        ({"batch": 0}, "batch"), ({"batch": 5000}, "batch"),
                                        ({"step": -1.0}, "step")])
def test_bad_tuned_options_are_refused(opts, match):
    with pytest.raises(ValueError, match=match):
        make("garber-kretzu-tuned", _problem(), seed=0, **opts)


def _feed(agent, values):
    """Plays ``agent`` against the feedback ``values`` (one per round); returns the
    offsets ``b_m`` and base points ``y`` seen at the start of every block."""
    offsets, points = [], []
    for t, f in enumerate(values):
        if t % agent.batch == 0:
            offsets.append(agent._offset)
            points.append(agent._y.copy())
        agent.update(agent.act(), np.array([f]))
    return offsets, points


def test_the_baseline_is_the_mean_feedback_of_the_blocks_before():
    p = _problem(horizon=400)
    agent = make("garber-kretzu-tuned", p, seed=5)
    agent.reset(5)
    values = np.random.default_rng(0).uniform(-1.0, 1.0, 400)
    offsets, _ = _feed(agent, values)
    k = agent.batch
    assert offsets[0] == 0.0
    for m, b in enumerate(offsets[1:], 1):
        assert b == pytest.approx(values[:m * k].mean(), rel=1e-12), m


@pytest.mark.parametrize("baseline", [True, False])
def test_a_constant_loss_moves_only_the_learner_without_baseline(baseline):
    """Feedback 0.5 every round: with the baseline every estimate after the first block
    is exactly 0, so the point played stays where the first block's step put it."""
    p = _problem(horizon=400)
    agent = make("garber-kretzu-tuned", p, seed=5, baseline=baseline)
    agent.reset(5)
    _, points = _feed(agent, np.full(400, 0.5))
    moved = [not np.array_equal(a, b) for a, b in zip(points[1:], points[2:])]
    assert any(moved) != baseline, moved


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_a_baseline_that_is_not_a_bool_is_refused(bad):
    with pytest.raises(ValueError, match=rf"^baseline={bad!r} rejected: expected True or "
                                         rf"False, got an? \w+$"):
        make("garber-kretzu-tuned", _problem(), seed=0, baseline=bad)


def test_the_private_tuned_learner_has_no_baseline():
    """A baseline would carry every earlier loss into each block's sum, which the
    theorem's calibration of one block does not cover: the private variant refuses it
    and scales the feedback itself."""
    p = _problem()
    with pytest.raises(TypeError, match="baseline"):
        make("private-projection-free-tuned", p, seed=0, epsilon=1.0, baseline=True)
    agent = make("private-projection-free-tuned", p, seed=0, epsilon=1.0)
    assert agent._centered(0.75) == 0.75
