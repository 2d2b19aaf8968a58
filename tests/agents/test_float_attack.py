"""Mironov's low-order-bits attack (CCS 2012) on the first release of every private agent.

With continuous noise added in float64, ``1 + n`` is a multiple of ``2^-53`` whenever
``|1 + n| < 0.5`` (its exponent is at least that of 1/2... and the sum was rounded on the
grid of the larger operand), while ``0 + n = n`` almost never is. The event

    E(y) = any coordinate with |y_i| < 0.5 and y_i * 2^53 not an integer

therefore has probability zero on one neighbour and a positive one on the other: no
epsilon covers that. The exact mechanisms release integer multiples of a power-of-two
grid ``g >= 2^-53``, so ``E`` never happens on either side. The first test pins that for
every private agent, pure-DP (discrete Laplace) and ``(epsilon, delta)`` (discrete
Gaussian) alike (its first release, two neighbouring sequences differing in round 1,
many seeds); the others show the event does separate the float mechanisms (Laplace and
Gaussian), so the first test can fail. Only the factorization counter (real
coefficients) keeps a real-valued Gaussian, and its guarantee says so.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_privacy_audits import AUDITED

from agents import agent_class, counter_agent, make
from dp_online_envs import build_env
from dp_online_envs.adversaries import LossSequence
from dp_online_envs.lab.audit import neighbour_param, replay_env
from dp_online_envs.loop import run_rounds

HORIZON = 4
#: the pure-DP private agents (all but the Gaussian private-ftpl) and extra counters
CASES = [(n, {}) for n, (_, _, kw, _) in sorted(AUDITED.items()) if "delta" not in kw]
CASES += [("private-ftrl", {"counter": c}) for c in ("tree", "agarwal-singh", "honaker")]
#: every (epsilon, delta) agent: the counter agents with the exact discrete Gaussian
GAUSS = ("private-ftrl", "private-ftpl", "pftal", "submod-pftal", "bandit-pftal",
         "bandit-submod-pftal", "private-projection-free", "private-projection-free-tuned",
         "private-ftrl-grad", "private-ftpl-grad")
CASES += [(n, {"delta": 1e-5}) for n in GAUSS]
CASES += [("private-ftrl", {"delta": 1e-5, "counter": c}) for c in ("tree", "honaker")]


def low_bits_event(y: np.ndarray) -> bool:
    """``E(y)``: some coordinate below 0.5 in magnitude is not a multiple of 2^-53."""
    y = np.ravel(np.asarray(y, dtype=np.float64))
    small = y[np.abs(y) < 0.5]
    return bool(np.any(small * 2.0**53 != np.round(small * 2.0**53)))


class _Released(Exception):
    """Ends a game at its first release (the later rounds cannot change it)."""


def first_releases(name: str, kw: dict, sequences, runs: int, env_id=None, env_kw=None):
    """The first release of ``runs`` seeded games on each of ``sequences`` (each game
    played up to the round of its first release)."""
    a_env, a_env_kw, agent_kw, _ = AUDITED[name]
    env = build_env(env_id or a_env, horizon=HORIZON, **(a_env_kw if env_kw is None else env_kw))
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=0, **{**agent_kw, **kw})
    if sequences is None:  # round 1: a far parameter vs its far neighbour (for a box
        seq = _sequence(problem)  # of parameters, opposite corners: losses 0 vs 1)
        first = neighbour_param(problem.loss, seq.thetas[0])
        seq = seq.replace(1, first)
        sequences = (seq, seq.replace(1, neighbour_param(problem.loss, first)))
    def stop_at_release(t, action, feedback):
        if agent.releases:
            raise _Released

    out = []
    for side, seq in enumerate(sequences):
        replay = replay_env(problem, seq)
        rows = []
        for s in range(runs):
            agent.record_releases = True
            agent.reset(10_000 * side + s)
            replay.reset(seed=0)
            try:
                run_rounds(replay, agent, stop_at_release)
            except _Released:
                pass
            assert agent.releases, f"{name} released nothing"
            rows.append(agent.releases[0][1])
        out.append(rows)
    return agent, out


def _sequence(problem) -> LossSequence:
    """A fixed admissible sequence of the problem's loss: ``HORIZON`` sampled parameters."""
    rng = np.random.default_rng(1)
    return LossSequence(np.stack([problem.loss.clip_param(problem.loss.sample_param(rng))
                                  for _ in range(HORIZON)]))


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}{kw or ''}" for n, kw in CASES])
def test_exact_mechanisms_leave_no_low_bits_signal(name, kw):
    agent, (left, right) = first_releases(name, kw, None, runs=150)
    assert agent.privacy.idealized is False
    counts = [sum(low_bits_event(y) for y in side) for side in (left, right)]
    assert counts == [0, 0], counts
    # every first release is an integer multiple of the mechanism's grid step
    counter = getattr(agent, "_counter", None)
    g = counter.grid if counter is not None else agent.noise_strategy.grid
    assert g >= 2.0**-53 and g == 2.0 ** np.round(np.log2(g))
    values = np.concatenate([np.ravel(y) for y in left + right])
    assert np.array_equal(values / g, np.round(values / g))


def test_every_delta_agent_is_covered():
    """A private agent that takes a delta (a counter agent) must be in GAUSS."""
    assert {n for n, (_, _, kw, _) in AUDITED.items() if hasattr(
        agent_class(n), "_use_counter")} == set(GAUSS)


def _float_counter(monkeypatch):
    real = counter_agent.make_counter
    old = {"discrete-laplace": "laplace", "discrete-gaussian": "gaussian"}

    def floats(*args, noise, **kwargs):
        return real(*args, noise=old.get(noise, noise), **kwargs)

    monkeypatch.setattr(counter_agent, "make_counter", floats)


@pytest.mark.parametrize("kw", [{"counter": "tree"}, {"counter": "tree", "delta": 1e-5}],
                         ids=["laplace", "gaussian"])
def test_the_event_separates_the_float_counters(monkeypatch, kw):
    """private-ftrl (tree) with the old float Laplace / Gaussian noise: losses 1 vs 0 in
    round 1."""
    _float_counter(monkeypatch)
    ones, zeros = np.ones((HORIZON, 3)), np.zeros((HORIZON, 3))
    zeros[1:] = 1.0
    agent, (one_side, zero_side) = first_releases(
        "private-ftrl", kw, (LossSequence(ones), LossSequence(zeros)), runs=1500)
    assert agent.privacy.idealized is True
    c1 = sum(low_bits_event(y) for y in one_side)
    c0 = sum(low_bits_event(y) for y in zero_side)
    assert c1 == 0 and c0 > 10, (c1, c0)


def test_the_event_separates_float_laplace_on_a_loss():
    """The reduction's old mechanism, ``f + Lap(b)`` in float64, on losses 1 and 0."""
    rng = np.random.default_rng(0)
    n = rng.laplace(0.0, 1.0, 1500)
    assert sum(low_bits_event(1.0 + z) for z in n) == 0
    assert sum(low_bits_event(0.0 + z) for z in n) > 100


@pytest.mark.parametrize("name,kw,idealized", [
    ("private-ftpl", {"epsilon": 1.0, "delta": 1e-5}, False),
    ("private-ftrl", {"epsilon": 1.0, "delta": 1e-5}, False),
    ("private-ftrl", {"epsilon": 1.0, "delta": 1e-5, "counter": "factorization"}, True),
])
def test_only_the_factorization_gaussian_is_marked_idealized(name, kw, idealized):
    """The tree counters' Gaussian is the exact discrete Gaussian; the factorization
    counter's real coefficients keep a real-valued Gaussian, whose (epsilon, delta) claim
    is for the idealized mechanism and says so."""
    env = build_env("DPFullInfo-Experts-v0", horizon=HORIZON, n_arms=3)
    agent = make(name, env.get_wrapper_attr("problem"), seed=0, **kw)
    assert agent.privacy.idealized is idealized
    assert ("[IDEALIZED" in str(agent.privacy)) is idealized
    assert agent.privacy.delta == 1e-5 and agent.privacy.epsilon == 1.0
