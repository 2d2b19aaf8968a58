"""Tests of dp_online_envs.lab.audit.audit_actions / audit_power: a black box seen only
through its actions.

The bound is checked against a learner whose action-level epsilon is known exactly
(randomized response on the loss of round 1); the cheat (plain EXP3 declaring
``(1, 0)``-DP) is caught in its own process and in-process; ``private-exp2`` is not
refuted; the power run refutes a cut of ``private-exp2``'s noise.
"""

from __future__ import annotations

import json
import math

import pytest

import agents
from agents.vector import make_vector
from dp_online_envs.lab.audit import (
    AgentSession,
    AuditFinding,
    AuditPower,
    AuditSettings,
    ResettingSession,
    audit_actions,
    audit_power,
)
from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits

from .audit_agents import EXP3ClaimsPrivacy, RandomizedResponseArm

MAB = "DPBandit-MAB-v0"
CLAIM = (1.0, 0.0)
#: Small settings: EXP3 at T = 32 moves a lot after one loss of 1.
SMALL = AuditSettings(horizon=32, runs=400, pilot_runs=60, taus=(1,), seed=3)


def _in_process(cls, **options):
    return lambda problem, space: AgentSession(
        lambda seed: cls(problem, seed=seed, **options))


def _vector(name, **options):
    """All runs in one vector pass: the scalar path's finding, bit for bit (the same run
    seeds give the same games; tests/audit/test_vector_audit.py checks it)."""
    return lambda problem, space: make_vector(name, problem, **options)


@pytest.fixture(scope="module")
def exp3_small():
    """The in-process finding on the cheat at SMALL, shared by the tests that read it
    (each audit is seeded: a second call returns an equal finding, which
    ``test_same_seed_same_finding_other_seed_other_runs`` checks)."""
    return audit_actions(_in_process(EXP3ClaimsPrivacy), MAB, {}, CLAIM, SMALL)


# ------------------------------------------------------------------ the cheat
def test_refutes_exp3_declaring_privacy_isolated(exp3_small):
    def isolated(problem, space):
        return IsolatedLearner(EXP3ClaimsPrivacy, problem, space, IsolationLimits(timeout=30))

    f = audit_actions(isolated, MAB, {}, CLAIM, SMALL)
    assert isinstance(f, AuditFinding)
    assert f.refuted and f.eps_lb > 1.0, str(f)
    assert f.tau == 1 and f.runs == SMALL.runs and f.claimed_epsilon == 1.0
    assert "arm played in round tau" in f.statistic
    # the same finding in-process: the isolated learner plays bit for bit the same
    assert exp3_small == f


def test_refutes_exp3_declaring_privacy_at_the_default_env():
    f = audit_actions(_in_process(EXP3ClaimsPrivacy), MAB, {"n_arms": 10}, CLAIM,
                      AuditSettings(horizon=64, runs=600, pilot_runs=100, seed=1))
    assert f.refuted, str(f)
    assert "REFUTED" in str(f)


# ------------------------------------------------------------ the true claims
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_private_exp2_is_not_refuted(seed):
    """The runs are played by the vector form: the scalar games' finding, bit for bit."""
    settings = AuditSettings(horizon=32, runs=600, pilot_runs=100, seed=seed)
    f = audit_actions(_vector("private-exp2", epsilon=1.0), MAB, {}, CLAIM, settings)
    assert not f.refuted and f.eps_lb <= 1.0, str(f)
    assert "not refuted" in str(f)


def test_bound_is_valid_and_tight_on_exact_randomized_response():
    """Randomized response at eps = 1 on the round-1 loss is exactly 1-DP on its
    actions: the audit must not refute eps = 1, and must refute eps = 0.5 (its bound
    lies between the two)."""
    settings = AuditSettings(horizon=8, runs=1500, pilot_runs=200, taus=(1, 2), seed=5)
    make = _in_process(RandomizedResponseArm, rr_epsilon=1.0)
    f = audit_actions(make, MAB, {"n_arms": 2}, CLAIM, settings)
    assert not f.refuted and 0.5 < f.eps_lb <= 1.0, str(f)
    assert f.tau == 1  # a change in round 2 is invisible to this learner
    weaker = audit_actions(make, MAB, {"n_arms": 2}, (0.5, 0.0), settings)
    assert weaker.refuted and weaker.eps_lb == f.eps_lb
    # delta enters the bound: with delta = 0.2 the same counts give a smaller eps_lb
    lax = audit_actions(make, MAB, {"n_arms": 2}, (0.5, 0.2), settings)
    assert lax.eps_lb < f.eps_lb and lax.counts == f.counts


def test_false_refutations_of_an_exactly_private_learner_are_rare():
    """The worst case for validity: a learner exactly 1-DP on its actions, audited at
    its true epsilon on 10 seeds. Each refutation has probability <= 5% by
    construction (the audits are conservative: Clopper-Pearson and Bonferroni); 3 or
    more of 10 would happen with probability 1.2% at a rate of 5% (measured: none, the
    bounds lie in [0.74, 0.90] on seeds 0..19)."""
    make = _in_process(RandomizedResponseArm, rr_epsilon=1.0)
    lbs = [audit_actions(make, MAB, {"n_arms": 2}, CLAIM,
                         AuditSettings(horizon=2, runs=1000, pilot_runs=100, taus=(1,),
                                       seed=seed)).eps_lb for seed in range(10)]
    assert sum(lb > 1.0 for lb in lbs) <= 2, lbs
    assert min(lbs) > 0.6, lbs  # and the audit sees most of the true epsilon every time


# ----------------------------------------------------------------- the power
def test_power_run_refutes_a_tenfold_noise_cut_of_private_exp2():
    """Near the default settings (one tau and 2000 runs to keep the test short)."""
    settings = AuditSettings(runs=2000, pilot_runs=300, taus=(1,))
    power = audit_power("private-exp2", MAB, {}, CLAIM, settings, factors=(10,))
    assert isinstance(power, AuditPower)
    assert power.factors == (10.0,) and power.refuted == (True,), power.eps_lbs
    assert power.smallest_refuted == 10.0
    assert str(power) == "refutes private-exp2 with noise cut 10x or more"
    d = json.loads(json.dumps(power.to_dict()))
    assert d["smallest_refuted"] == 10.0 and d["refuted"] == [True]


def test_power_reports_none_when_nothing_is_refuted():
    power = AuditPower("private-exp2", (2.0, 5.0), (False, False), None, (0.1, 0.2), 1.0)
    assert str(power) == ("refutes no noise cut of private-exp2 up to 5x "
                          "(a weak audit at these settings)")
    assert power.to_dict()["smallest_refuted"] is None


# ------------------------------------------------------------ the black box
class FrozenProxy:
    """A session that refuses every attribute assignment once built."""

    __slots__ = ("_learner", "closed")

    def __init__(self, learner):
        object.__setattr__(self, "_learner", learner)
        object.__setattr__(self, "closed", 0)

    def __setattr__(self, name, value):
        raise AttributeError(f"frozen proxy: cannot set {name!r}")

    def reset(self, seed):
        self._learner.reset(seed)

    def act(self):
        return self._learner.act()

    def update(self, action, feedback):
        self._learner.update(action, feedback)

    def close(self):
        object.__setattr__(self, "closed", self.closed + 1)


def test_the_audit_sets_nothing_on_the_session_and_closes_it():
    made = []

    def make(problem, space):
        made.append(FrozenProxy(EXP3ClaimsPrivacy(problem)))
        return made[-1]

    f = audit_actions(make, MAB, {}, CLAIM, SMALL)
    assert f.refuted and len(made) == 1 and made[0].closed == 1
    # the same result as rebuilding the agent every run: reset(seed) is a fresh game
    assert f == audit_actions(lambda p, s: ResettingSession(EXP3ClaimsPrivacy(p)), MAB, {},
                              CLAIM, SMALL)


def test_the_session_is_closed_when_it_fails():
    class Fails(FrozenProxy):
        __slots__ = ()

        def act(self):
            raise RuntimeError("boom")

    made = []

    def make(problem, space):
        made.append(Fails(EXP3ClaimsPrivacy(problem)))
        return made[-1]

    with pytest.raises(RuntimeError, match="boom"):
        audit_actions(make, MAB, {}, CLAIM, SMALL)
    assert made[0].closed == 1


def test_test_runs_never_reuse_pilot_seeds_and_the_audit_sets_the_horizon():
    seeds, problems = [], []

    class Recorder(FrozenProxy):
        __slots__ = ()

        def reset(self, seed):
            seeds.append(seed)
            self._learner.reset(seed)

    def make(problem, space):
        problems.append(problem)
        return Recorder(EXP3ClaimsPrivacy(problem))

    settings = AuditSettings(horizon=16, runs=30, pilot_runs=20, taus=(1, 3))
    audit_actions(make, MAB, {"horizon": 999, "n_arms": 4}, CLAIM, settings)
    assert problems[0].horizon == 16 and problems[0].domain.dim == 4
    pilot, test = seeds[:4 * 2 * 20], seeds[4 * 2 * 20:]
    assert len(test) == 2 * 30 and len(set(seeds)) == len(seeds)  # every run its own seed
    assert not set(pilot) & set(test)


def test_not_a_session_is_refused():
    with pytest.raises(TypeError, match="must return a session"):
        audit_actions(lambda p, s: object(), MAB, {}, CLAIM, SMALL)
    with pytest.raises(TypeError, match="factory must be callable"):
        AgentSession(3)
    with pytest.raises(TypeError, match="learner must have reset"):
        ResettingSession(object())


# ---------------------------------------------------------------- determinism
def test_same_seed_same_finding_other_seed_other_runs(exp3_small):
    make = _in_process(EXP3ClaimsPrivacy)
    a = exp3_small
    b = audit_actions(make, MAB, {}, CLAIM, SMALL)
    assert a == b
    c = audit_actions(make, MAB, {}, CLAIM, AuditSettings(**{**SMALL.to_dict(), "seed": 4,
                                                            "taus": SMALL.taus}))
    assert c.counts != a.counts


def test_finding_serializes(exp3_small):
    f = exp3_small
    d = json.loads(json.dumps(f.to_dict()))
    assert d["refuted"] is True and d["counts"] == list(f.counts)
    assert set(d) == {"claimed_epsilon", "claimed_delta", "eps_lb", "refuted", "confidence",
                      "runs", "tau", "statistic", "event", "counts", "neighbour"}
    flat = AuditFinding(1.0, 0.0, -math.inf, False, 0.95, 10, 1, "s", "e", (0, 0), "n")
    assert flat.to_dict()["eps_lb"] is None


def test_generic_fallback_on_continuous_actions():
    """Box actions (the l2 ball): the pilot chooses between the two generic statistics;
    a learner that ignores its feedback gives no evidence."""

    class Still(agents.Agent):
        name = "test-still"
        feedback = "bandit"

        def act(self):
            return self.rng.normal(size=self.problem.dim) * 0.1

        def update(self, action, feedback):
            self.t += 1

    f = audit_actions(_in_process(Still), "DPBandit-Linear-v1", {"dim": 2}, CLAIM,
                      AuditSettings(horizon=8, runs=200, pilot_runs=20))
    assert not f.refuted and f.eps_lb <= 0.5
    assert "x_t" in f.statistic and f.tau in (1, 2)


# --------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, match", [
    ({"horizon": 1}, "horizon=1"),
    ({"horizon": 2.5}, "horizon=2.5"),
    ({"runs": 9}, "runs=9"),
    ({"pilot_runs": 0}, "pilot_runs=0"),
    ({"confidence": 1.0}, "confidence=1.0"),
    ({"confidence": 0}, "confidence=0"),
    ({"seed": -1}, "seed=-1"),
    ({"taus": ()}, "taus=()"),
    ({"taus": (1, 1)}, "repeats"),
    ({"horizon": 4, "taus": (4,)}, "tau=4"),
    ({"taus": 1}, "taus=1"),
])
def test_settings_validation(kwargs, match):
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
        AuditSettings(**kwargs)


@pytest.mark.parametrize("claim, match", [
    ((0.0, 0.0), "epsilon=0.0"),
    ((1.0, 1.0), "delta=1.0"),
    ((1.0,), "expected a pair"),
    ("1", "expected a pair"),
])
def test_claim_validation(claim, match):
    with pytest.raises(ValueError, match=match):
        audit_actions(_in_process(EXP3ClaimsPrivacy), MAB, {}, claim, SMALL)


def test_power_validation():
    with pytest.raises(ValueError, match="factor=0.5"):
        audit_power("private-exp2", MAB, {}, CLAIM, SMALL, factors=(0.5,))
    with pytest.raises(ValueError, match="factors=()"):
        audit_power("private-exp2", MAB, {}, CLAIM, SMALL, factors=())
    with pytest.raises(Exception, match="unknown agent 'private-exp9'"):
        audit_power("private-exp9", MAB, {}, CLAIM, SMALL, factors=(2,))


