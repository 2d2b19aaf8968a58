"""``import agents`` stays light: the accountant and scipy's heavy subpackages are
imported where a calibration or a solver needs them, not when the package loads (every
isolated or sandboxed learner process pays the package's import; the speed harness
measures it against ``import gymnasium``)."""

from __future__ import annotations

import json
import subprocess
import sys

#: Imported on first use only.
DEFERRED = ("dp_accounting", "scipy.optimize", "scipy.stats", "scipy.signal", "scipy.special",
            "numba")


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {list(DEFERRED)!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout)


def test_importing_agents_and_listing_them_defers_the_accountant_and_the_solvers():
    assert _loaded_after("import agents; agents.list_agents()") == []


def test_learners_releasing_discrete_laplace_draws_never_import_the_accountant():
    """Each isolated or sandboxed learner process builds its learner: with the
    accountant's import (about 0.8 s of CPU) that was most of its start. Their guarantee
    is checked exactly (``tests/privacy/test_discrete.py`` compares it with the
    accountant's): the scalar releases, and the trees of counts noised with discrete
    Laplace noise (the default noise of ``private-ftrl`` and the follow-the-leader
    learners)."""
    code = ("import gymnasium as gym, agents, dp_online_envs\n"
            "p = gym.make('DPBandit-MAB-v0').get_wrapper_attr('problem')\n"
            "for name in ('private-exp2', 'private-bandit', 'private-batched-htinf', "
            "'adap-ucb', 'adap-klucb'):\n"
            "    for noise in (True, False):\n"
            "        agents.make(name, p, epsilon=1.0, seed=0, add_noise=noise)\n"
            "for env, name in (('DPFullInfo-Experts-v0', 'private-ftrl'), "
            "('DPBandit-Convex-v1', 'private-projection-free'), "
            "('DPBandit-Convex-v1', 'bandit-pftal'), "
            "('DPBandit-Submodular-v2', 'bandit-submod-pftal')):\n"
            "    agents.make(name, gym.make(env).get_wrapper_attr('problem'), epsilon=1.0, "
            "seed=0)")
    assert "dp_accounting" not in _loaded_after(code)


def test_a_private_learner_imports_the_accountant_when_it_calibrates():
    """A learner whose guarantee needs the accountant (Gaussian noise on a tree of
    counts, (epsilon, delta)) imports it when it calibrates; the learners releasing
    single discrete Laplace draws check theirs exactly and never import it
    (``tests/privacy/test_discrete.py``)."""
    code = ("import gymnasium as gym, agents, dp_online_envs\n"
            "problem = gym.make('DPFullInfo-Experts-v0', horizon=50)"
            ".get_wrapper_attr('problem')\n"
            "a = agents.make('private-ftrl', problem, epsilon=1.0, delta=1e-5, seed=0)\n"
            "assert a.privacy.epsilon <= 1.0")
    assert "dp_accounting" in _loaded_after(code)


def test_importing_the_packages_reads_no_installed_metadata():
    """The version (and skfolio's data file) are read through ``importlib.metadata`` on
    first use: an import of the packages does not load it (about a tenth of ``import
    agents``)."""
    probe = ("import sys, agents, dp_online_envs\n"
             "print('importlib.metadata' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout == "False\n"
