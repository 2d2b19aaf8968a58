"""Every private agent faces the black-box auditor at its claimed epsilon.

A private agent added to the registry without an entry in AUDITED fails
``test_every_private_agent_is_audited``, and one without an entry in POWER (where its
noise cut is refuted, or why nothing refutes it) fails
``test_every_audited_learner_names_where_its_power_is``. The full-information counter-based agents are
also audited with their counter's noise cut tenfold while still claiming the same
epsilon: the auditor must refute that claim on the released stream.
"""

from pathlib import Path

import pytest
from agent_helpers import claiming

import agents
from agents import agent_class, counter_agent, make
from dp_online_envs import build_env
from dp_online_envs.lab.audit import audit

#: private agent -> (env id, env options, agent options, tau)
AUDITED = {
    "private-ftrl": ("DPFullInfo-Experts-v0", {"n_arms": 3}, {"epsilon": 1.0}, 2),
    "private-ftpl": ("DPFullInfo-Experts-v0", {"n_arms": 3}, {"epsilon": 1.0, "delta": 1e-5}, 2),
    "private-lazy-mw": ("DPFullInfo-Experts-v0", {"n_arms": 3},
                        {"epsilon": 1.0, "delta": 1e-5}, 1),
    "pftal": ("DPFullInfo-StronglyConvex-v1", {"dim": 2}, {"epsilon": 1.0}, 2),
    "private-ftrl-grad": ("DPFullInfo-Convex-v1", {"dim": 2}, {"epsilon": 1.0}, 2),
    "private-ftpl-grad": ("DPFullInfo-Convex-v1", {"dim": 2}, {"epsilon": 1.0, "delta": 1e-5},
                          2),
    "submod-pftal": ("DPFullInfo-Submodular-v1", {"n": 3}, {"epsilon": 1.0}, 2),
    "private-exp2": ("DPBandit-MAB-v0", {"n_arms": 3}, {"epsilon": 1.0}, 2),
    "private-bandit": ("DPBandit-MAB-v0", {"n_arms": 3}, {"epsilon": 1.0, "base": "exp3"}, 2),
    "private-scrible": ("DPBandit-Linear-v1", {"dim": 2}, {"epsilon": 1.0}, 2),
    "private-batched-htinf": ("DPBandit-MAB-v0", {"n_arms": 3}, {"epsilon": 1.0}, 2),
    "adap-ucb": ("DPBandit-MAB-v0", {"n_arms": 3}, {"epsilon": 1.0}, 2),
    "adap-klucb": ("DPBandit-MAB-v0", {"n_arms": 3}, {"epsilon": 1.0}, 2),
    "bandit-pftal": ("DPBandit-Convex-v1", {"dim": 2}, {"epsilon": 1.0}, 2),
    "bandit-submod-pftal": ("DPBandit-Submodular-v1", {"n": 3}, {"epsilon": 1.0}, 2),
    "private-projection-free": ("DPBandit-Matroid-v1", {"n": 4, "rank": 2},
                                {"epsilon": 1.0}, 2),
    "private-projection-free-tuned": ("DPBandit-Matroid-v2", {"n": 4, "rank": 2},
                                      {"epsilon": 1.0}, 2),
    # contextual: the audit records each round's context and the neighbour keeps it (one
    # arm, so one round's change lands in the block the statistic reads)
    "jdp-linucb": ("DPBandit-ContextualLinear-v0", {"n_arms": 1, "loss_kwargs": {"context_dim": 2}},
                   {"epsilon": 1.0, "delta": 1e-5}, 1),
    "ldp-linucb": ("DPBandit-ContextualLinear-v0", {"n_arms": 1, "loss_kwargs": {"context_dim": 2}},
                   {"epsilon": 1.0, "delta": 1e-5}, 1),
}
HORIZON, RUNS = 8, 400


#: private agents the auditor cannot play yet, and why
NOT_AUDITED: dict[str, str] = {}


def test_every_private_agent_is_audited():
    private = {n for n, _ in agents.list_agents() if agent_class(n).private}
    assert private == set(AUDITED) | set(NOT_AUDITED)
    assert not set(AUDITED) & set(NOT_AUDITED)


def _env(name, horizon=HORIZON):
    env_id, env_kw, _, _ = AUDITED[name]
    return build_env(env_id, horizon=horizon, **env_kw)


#: Where each audited learner's "passes" above gets its power, the test that fails if
#: its noise is cut: ``"twin"``, this audit at these settings refutes the learner built
#: at 10^4 times its epsilon while claiming epsilon
#: (:func:`test_the_noise_free_twin_is_refuted_by_the_same_audit`); else the test that
#: refutes a noise cut of it on a game where an audit can see one; ``None``, no audit in
#: the suite has been measured to have power on it (its twin is not refuted here either),
#: with the reason. Measured at these settings (seed 0): the twins of adap-ucb,
#: adap-klucb, pftal, private-ftpl, private-ftrl, private-lazy-mw, submod-pftal,
#: jdp-linucb and ldp-linucb are refuted (eps_lb 1.80-3.49), the other ten not (-0.45 to
#: 0.94).
POWER: dict[str, str | None] = {
    "private-lazy-mw": "twin", "submod-pftal": "twin",
    "pftal": "tests/agents/test_privacy_audits.py::test_under_noised_copy_is_caught",
    "private-ftpl": "tests/agents/test_privacy_audits.py::test_under_noised_copy_is_caught",
    "private-ftrl": "tests/agents/test_privacy_audits.py::test_under_noised_copy_is_caught",
    "adap-ucb": "tests/agents/test_adap_bandits.py::"
                "test_tenth_of_the_noise_is_refuted_and_the_honest_learner_is_not",
    "adap-klucb": "tests/agents/test_adap_bandits.py::"
                  "test_tenth_of_the_noise_is_refuted_and_the_honest_learner_is_not",
    "private-exp2":
        "tests/audit/test_action_audit.py::test_power_run_refutes_a_tenfold_noise_cut_of_private_exp2",
    "private-bandit":
        "tests/agents/test_privacy_audits.py::test_private_bandits_twin_is_refuted_in_full_games",
    "private-batched-htinf":
        "tests/agents/test_private_batched_bandit.py::test_under_noised_batches_are_caught",
    "private-ftrl-grad": "tests/agents/test_full_info_grad.py::test_under_noised_copy_is_caught",
    "private-ftpl-grad": "tests/agents/test_full_info_grad.py::test_under_noised_copy_is_caught",
    "private-projection-free": "tests/agents/test_bandit_convex.py::"
                               "test_auditor_passes_projection_free_and_refutes_a_tenth_of_the_noise",
    "bandit-pftal": "tests/agents/test_bandit_convex.py::test_auditor_passes_bandit_pftal",
    "bandit-submod-pftal": "tests/agents/test_bandit_submodular.py::"
                           "test_black_box_audit_passes_and_catches_an_under_noised_copy",
    "private-projection-free-tuned": None,  # its twin's eps_lb here 0.68; its releases
    # are private-projection-free's mechanism on another block schedule, audited only there
    # the contextual learners: their twins are refuted here too (eps_lb 3.49 both, seed 0),
    # their tenfold noise cuts not at these settings (0.31, 0.61): the test named refutes
    # them at T = 2, 3000 runs
    "jdp-linucb": "tests/audit/test_contextual_release_audit.py::"
                  "test_a_tenth_of_the_noise_is_refuted",
    "ldp-linucb": "tests/audit/test_contextual_release_audit.py::"
                  "test_a_tenth_of_the_noise_is_refuted",
    "private-scrible": None,  # its twin is not refuted on its releases either (eps_lb 0.40,
    # tests/agents/test_bandit_exp2_scrible.py's settings): one round moves them too little
}


def test_every_audited_learner_names_where_its_power_is():
    """A "passes" is evidence only with the power to fail: every audited learner says
    where its noise cut is refuted, and each test it names exists."""
    assert set(POWER) == set(AUDITED)
    root = Path(__file__).resolve().parents[2]
    for name, where in POWER.items():
        if where in (None, "twin"):
            continue
        path, function = where.split("::")
        assert f"def {function}(" in (root / path).read_text(), (name, where)


@pytest.mark.parametrize("name", sorted(n for n, w in POWER.items() if w == "twin"))
def test_the_noise_free_twin_is_refuted_by_the_same_audit(name):
    env = _env(name)
    problem = env.get_wrapper_attr("problem")
    _, _, agent_kw, tau = AUDITED[name]

    def twin(seed):
        return claiming(make(name, problem, seed=seed,
                             **{**agent_kw, "epsilon": 1e4 * agent_kw["epsilon"]}),
                        agent_kw["epsilon"])

    result = audit(twin, env, tau=tau, runs=RUNS, seed=0)
    assert not result.passed and result.eps_lb > agent_kw["epsilon"], str(result)


def test_private_bandits_twin_is_refuted_in_full_games():
    """The action audit's short games cannot read ``private-bandit`` (its twin's eps_lb
    0.27 above); the one-run audit of 16 full games of ``T = 4096`` refutes its twin
    (eps_lb 1.80, 52 of 54 guesses right) and not the learner (0.31)."""
    from dp_online_envs.lab.audit.one_run import AuditGame, OneRunSettings, audit_one_run

    def build(epsilon):
        return lambda problem, space, seed: make("private-bandit", problem, epsilon=epsilon,
                                                 base="exp3", seed=seed)

    games, settings = [AuditGame("DPBandit-MAB-v0", {}, 4096)], OneRunSettings(games=16, seed=1)
    assert not audit_one_run(build(1.0), games, (1.0, 0.0), settings).refuted
    twin = audit_one_run(build(1e4), games, (1.0, 0.0), settings)
    assert twin.refuted and twin.eps_lb > 1.0, str(twin)


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_private_agent_passes_audit_at_claimed_epsilon(name):
    env = _env(name)
    problem = env.get_wrapper_attr("problem")
    _, _, agent_kw, tau = AUDITED[name]
    result = audit(lambda seed: make(name, problem, seed=seed, **agent_kw), env, tau=tau,
                   runs=RUNS, seed=0)
    assert result.passed, str(result)
    assert result.epsilon == pytest.approx(agent_kw["epsilon"], rel=1e-9)


#: Runs per side of each under-noised copy's audit: the fewest with the power of 1000.
#: Each copy's refutation rate, estimated from a 1000-run audit's samples (1000 draws of
#: n distinct runs per side, the same test on them): private-ftrl 1000/1000 at n = 1000
#: and at 400 (median eps_lb 2.09, 1.53); pftal 1000/1000 at 1000 and at 700 (1.66,
#: 1.49; 998/1000 at 600); private-ftpl 997/1000 at 1000 (965/1000 at 800: kept at
#: 1000). A miss rate above 0.3% would have shown a miss with probability 95%.
WEAK_RUNS = {"private-ftrl": 400, "pftal": 700, "private-ftpl": 1000}


# submod-pftal is left out: its calibration covers marginals of size 4M, while the
# registered families' marginals are far smaller (scaled by M / Z), so a tenfold cut
# still leaves more noise than this neighbouring pair needs (no test could refute it).
@pytest.mark.parametrize("name", sorted(WEAK_RUNS))
def test_under_noised_copy_is_caught(name, monkeypatch):
    """The counter sees epsilon * 10 (a tenth of the noise); the claim stays epsilon."""
    module = counter_agent  # where every counter-based agent builds its counter
    real = module.make_counter

    def weak_counter(*args, epsilon, **kwargs):
        return real(*args, epsilon=10.0 * epsilon, **kwargs)

    monkeypatch.setattr(module, "make_counter", weak_counter)
    # Round 1 of a short game: its release is the first gradient plus one node's noise,
    # before the agent's own noise has reached the iterates (the clearest signal).
    env = _env(name, horizon=4)
    problem = env.get_wrapper_attr("problem")
    _, _, agent_kw, _ = AUDITED[name]
    tau = 1

    def factory(seed):  # the counter's tenth of the noise, the claim kept: a false claim
        return claiming(make(name, problem, seed=seed, **agent_kw), agent_kw["epsilon"])

    result = audit(factory, env, tau=tau, runs=WEAK_RUNS[name], seed=1)
    assert not result.passed, str(result)
