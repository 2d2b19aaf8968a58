"""Seeded games of every agent, fingerprinted: a refactoring that changes any bit of any
agent's play fails here.

Each case of ``test_all_agents.PLAYS``, and the extra paths in :data:`EXTRA` (EXP2 on a
non-arm finite set, the NumPy path of the arms engine, every counter under both noises),
is played for :data:`ROUNDS` rounds with a fixed
seed through the one game loop; it has two fingerprints: ``play``, the SHA-256 of the
points played, the feedback received and the clipped-feedback count (the agent's and the
env's behaviour), and ``regret``, that of the final regret bounds (the recorder's
comparator), so a better comparator moves only the second.
When a change of behaviour is intended (a new default instance, a corrected constant),
regenerate consciously and say why in the commit::

    python tests/agents/test_fingerprints.py   # rewrites fingerprints.json
"""

from __future__ import annotations

import hashlib
import json
import pathlib

import numpy as np
import pytest

from agents import make
from dp_online_envs import build_env
from dp_online_envs.loop import run_rounds

from test_all_agents import CASES as AGENT_CASES

PRIV = {"epsilon": 1.0}
GAUSS = {"epsilon": 1.0, "delta": 1e-5}
CUBE = {"domain": "cube", "dim": 3}   # 8 vertices: EXP2's general finite-set path
#: Paths the registered cases do not reach.
EXTRA = [
    ("exp2", "DPBandit-Linear-v0", CUBE, {}),
    ("private-exp2", "DPBandit-Linear-v0", CUBE, PRIV),
    ("private-bandit", "DPBandit-Linear-v0", CUBE, {**PRIV, "base": "exp2"}),
    ("exp2", "DPBandit-MAB-v0", {"n_arms": 100}, {}),
    ("exp3", "DPBandit-MAB-v0", {"n_arms": 100}, {}),
    ("private-exp2", "DPBandit-MAB-v0", {"n_arms": 100}, PRIV),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "tree"}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "honaker"}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"}),
    ("private-ftrl", "DPFullInfo-Sphere-v0", {}, {**GAUSS, "counter": "factorization"}),
    ("private-ftrl", "DPFullInfo-Sphere-v0", {}, {**GAUSS, "counter": "tree"}),
    ("private-ftpl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"}),
]
CASES = AGENT_CASES + EXTRA
ROUNDS = 40
SEED = 7
STORE = pathlib.Path(__file__).with_name("fingerprints.json")


def case_id(case: tuple) -> str:
    name, env_id, env_kw, agent_kw = case
    return f"{name}|{env_id}|{json.dumps(env_kw, sort_keys=True)}|{json.dumps(agent_kw, sort_keys=True)}"


def fingerprint(name: str, env_id: str, env_kw: dict, agent_kw: dict) -> dict[str, str]:
    """``{"play": ..., "regret": ...}``: SHA-256 digests of one seeded game."""
    env = build_env(env_id, horizon=ROUNDS, **env_kw)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=SEED, **agent_kw)
    agent.reset(SEED)
    env.reset(seed=SEED)
    play = hashlib.sha256()

    def absorb(t: int, action, feedback: np.ndarray) -> None:
        play.update(np.ascontiguousarray(problem.domain.to_point(action), np.float64).tobytes())
        play.update(np.ascontiguousarray(feedback, np.float64).tobytes())

    summary = run_rounds(env, agent, absorb)["regret"]
    play.update(str(int(agent.clipped_feedback)).encode())
    regret = hashlib.sha256(
        np.array([summary.regret_lo, summary.regret_hi], np.float64).tobytes())
    return {"play": play.hexdigest(), "regret": regret.hexdigest()}


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_seeded_play_is_unchanged(case):
    recorded = json.loads(STORE.read_text())
    assert case_id(case) in recorded, (
        f"no fingerprint for {case_id(case)}: regenerate with python tests/agents/test_fingerprints.py")
    assert fingerprint(*case) == recorded[case_id(case)]


if __name__ == "__main__":
    STORE.write_text(json.dumps({case_id(c): fingerprint(*c) for c in CASES}, indent=1,
                                sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} fingerprints to {STORE}")
