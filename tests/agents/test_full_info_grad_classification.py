"""private-ftrl-grad / private-ftpl-grad on ``DPFullInfo-Classification-v0`` (the
``realdata`` extra): the counter's noise calibrated to the gradient bound ``L`` of the
real problem, the black-box audit on real examples, and the regret bounds of
``docs/algorithms/private-ftrl-grad.md`` against trivial play.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="the 'realdata' extra (scikit-learn) is not installed")

from agent_helpers import DELTA, discrete_gaussian_scale

import dp_online_envs  # noqa: F401  (registers the env ids)
from agents import make, play
from agents.privacy import laplace_scale
from dp_online_envs import build_env
from dp_online_envs.lab.audit import audit

CLS = "DPFullInfo-Classification-v0"
GRAD = {"private-ftrl-grad": {"epsilon": 1.0}, "private-ftpl-grad": {"epsilon": 1.0,
                                                                        "delta": DELTA}}


def _cls(horizon: int = 64, loss: str = "logistic"):
    env = build_env(CLS, horizon=horizon, loss=loss)
    return env, env.get_wrapper_attr("problem")


# ------------------------------------------------------------- calibration
def test_ftrl_grad_noise_is_calibrated_to_2L():
    _, problem = _cls(2048)
    T, d, L = problem.horizon, problem.dim, problem.lipschitz
    levels = T.bit_length()  # floor(log2 T) + 1
    lap = make("private-ftrl-grad", problem, epsilon=0.5, seed=0)
    assert lap.sensitivity == pytest.approx(2 * L * math.sqrt(d))
    assert lap.noise_scale == pytest.approx(laplace_scale(levels * 2 * L * math.sqrt(d), 0.5),
                                            rel=1e-4)
    gauss = make("private-ftrl-grad", problem, epsilon=0.5, delta=DELTA, seed=0)
    assert gauss.sensitivity == 2 * L
    assert gauss.noise_scale == discrete_gaussian_scale(2 * L, levels, d, 0.5, DELTA)
    for a, eps, delta in ((lap, 0.5, 0.0), (gauss, 0.5, DELTA)):
        assert a.privacy.epsilon == pytest.approx(eps, rel=1e-3)
        assert a.privacy.epsilon <= eps * (1 + 1e-4) + 1e-6 and a.privacy.delta == delta
    # l2 leader, the non-private rate
    assert lap.eta == pytest.approx(2 * problem.diameter / (L * math.sqrt(T)))


def test_ftpl_grad_noise_is_calibrated_to_2L():
    _, problem = _cls(2048)
    T, d, L = problem.horizon, problem.dim, problem.lipschitz
    levels = T.bit_length()  # floor(log2 T) + 1
    R = math.ceil(math.log2(T))
    a = make("private-ftpl-grad", problem, epsilon=1.0, delta=DELTA, seed=0)
    assert a.sensitivity == 2 * L and a.loss_norm == L
    assert a.sigma_privacy == discrete_gaussian_scale(2 * L, levels, d, 1.0, DELTA)
    assert a.sigma_regret == pytest.approx(L * math.sqrt(T / (math.sqrt(d) * R)))
    assert a.sigma == max(a.sigma_regret, a.sigma_privacy)
    assert a.privacy.epsilon <= 1.0 * (1 + 1e-4) + 1e-6 and a.privacy.delta == DELTA


# ----------------------------------------------------------- audit (black box)
@pytest.mark.parametrize("name", sorted(GRAD))
def test_black_box_audit_on_real_examples_does_not_refute_the_claim(name):
    """Round 1's label flipped (the default neighbour of a margin loss, ``(-a, -y)``, is
    the same loss: no signal)."""
    env, problem = _cls(4, "hinge")
    env.reset(seed=1)
    rows = np.array([problem.loss.clip_param(env.step(problem.domain.center)[0])
                     for _ in range(4)])
    flip = rows[0].copy()
    flip[-1] = -flip[-1]
    result = audit(lambda seed: make(name, problem, seed=seed, **GRAD[name]), env, tau=1,
                   runs=600, seed=1, sequence=rows, neighbour_theta=flip)
    assert result.passed, str(result)


# ------------------------------------------------------------------- regret
def _mean_regret(name, loss, seeds, **kw) -> float:
    env, problem = _cls(2048, loss)
    return float(np.mean([play(env, make(name, problem, seed=s, **kw), seed=s, agent_seed=s).regret_hi
                          for s in seeds]))


def test_ftrl_grad_logistic_regret_below_its_adaptive_bound_and_trivial_play():
    """Logistic: ``E[regret] <= D L sqrt(T) + D sqrt(T) E||Z||`` (the adaptive bound of
    docs/algorithms/private-ftrl-grad.md); at epsilon = 1000 (Gaussian) it is below
    trivial play (``center``), and so is the measured regret."""
    seeds = (0, 1)
    trivial = _mean_regret("center", "logistic", seeds)
    _, problem = _cls(2048)
    D, L, T = problem.diameter, problem.lipschitz, problem.horizon
    kw = {"epsilon": 1000.0, "delta": DELTA}
    agent = make("private-ftrl-grad", problem, seed=0, **kw)
    bound = agent.regret_bound()
    assert bound == pytest.approx(D * L * math.sqrt(T) + D * math.sqrt(T) * agent.noise_norm())
    assert bound < trivial
    r = _mean_regret("private-ftrl-grad", "logistic", seeds, **kw)
    assert r < bound
    # at epsilon = 1 the bound says nothing (it exceeds T B); the regret is measured only
    loose = make("private-ftrl-grad", problem, seed=0, epsilon=1.0, delta=DELTA)
    assert loose.regret_bound() > trivial


def test_ftrl_grad_hinge_regret_below_theorem_3_4_and_trivial_play():
    """Hinge on the unit ball is the oblivious linear game (see above), so Thm. 3.4's
    one-shot bound ``D L sqrt(T) + E[D_Z]``, ``D_Z = 2 ||Z||_2`` on the unit ball,
    applies; at epsilon = 4 (Gaussian) it is below trivial play, and so is the regret."""
    seeds = (0, 1)
    trivial = _mean_regret("center", "hinge", seeds)
    _, problem = _cls(2048, "hinge")
    D, L, T = problem.diameter, problem.lipschitz, problem.horizon
    kw = {"epsilon": 4.0, "delta": DELTA}
    bound = D * L * math.sqrt(T) + 2 * make("private-ftrl-grad", problem, seed=0,
                                            **kw).noise_norm()
    assert bound < trivial
    r = _mean_regret("private-ftrl-grad", "hinge", seeds, **kw)
    assert r < bound
