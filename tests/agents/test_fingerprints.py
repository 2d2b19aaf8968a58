"""Seeded games of every agent, fingerprinted: a change that moves any agent's play fails
here, on every CPU.

Each case of ``test_all_agents.PLAYS``, and the extra paths in :data:`EXTRA` (EXP2 on a
non-arm finite set, the NumPy path of the arms engine, every counter under both noises),
is played for :data:`ROUNDS` rounds with a fixed seed through the one game loop and
recorded in two parts, checked in two ways:

* ``exact``: what the game's semantics fix and integer arithmetic reproduces on every
  machine, compared bit for bit: the SHA-256 of the integer actions (arms, subsets) in
  order, and the number of clipped feedbacks.
* ``trace`` and ``regret``: the floating-point results, whose last bits depend on the
  CPU's SIMD paths in NumPy and OpenBLAS (summation order, fused multiply-add), so a
  digest of their bits would differ between machines for the same game. Per round the
  trace holds two numbers, the point played and the feedback received each projected on
  fixed integer weights (:func:`projection`, a correctly rounded sum), and ``regret``
  holds the final regret bounds. Both are compared within :data:`RTOL` times the
  part's scale (its largest magnitude, at least 1): far above the drift between SIMD
  levels (measured between AVX-512, AVX2, AVX and SSE4.2 dispatch of NumPy and
  OpenBLAS: at most 2e-10, for ``private-scrible``, whose Newton steps near the
  barrier's boundary amplify rounding; at most 1e-14 for every other case) and far
  below what a change of a learner or env produces (Hedge's learning rate changed by
  one part in 100,000 moves its trace by more than 1e-6 of its scale).

When a change of behaviour is intended (a new default instance, a corrected constant),
regenerate consciously and say why in the commit::

    python tests/agents/test_fingerprints.py   # rewrites fingerprints.json
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib

import numpy as np
import pytest
from test_all_agents import CASES as AGENT_CASES

from agents import make
from dp_online_envs import build_env
from dp_online_envs.loop import run_rounds

PRIV = {"epsilon": 1.0}
GAUSS = {"epsilon": 1.0, "delta": 1e-5}
CUBE = {"domain": "cube", "dim": 3}   # 8 vertices: EXP2's general finite-set path
#: Paths the registered cases do not reach.
EXTRA = [
    ("exp2", "DPBandit-Linear-v1", CUBE, {}),
    ("private-exp2", "DPBandit-Linear-v1", CUBE, PRIV),
    ("private-bandit", "DPBandit-Linear-v1", CUBE, {**PRIV, "base": "exp2"}),
    ("exp2", "DPBandit-MAB-v0", {"n_arms": 100}, {}),
    ("exp3", "DPBandit-MAB-v0", {"n_arms": 100}, {}),
    ("private-exp2", "DPBandit-MAB-v0", {"n_arms": 100}, PRIV),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "tree"}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "honaker"}),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"}),
    ("private-ftrl", "DPFullInfo-Sphere-v1", {}, {**GAUSS, "counter": "factorization"}),
    ("private-ftrl", "DPFullInfo-Sphere-v1", {}, {**GAUSS, "counter": "tree"}),
    ("private-ftpl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"}),
]
CASES = AGENT_CASES + EXTRA
ROUNDS = 40
SEED = 7
#: Tolerance of the floating-point parts (module docstring): ``|a - b| <= RTOL * scale``,
#: ``scale`` the largest magnitude of the recorded part (trace or regret), at least 1.
RTOL = 1e-8
STORE = pathlib.Path(__file__).with_name("fingerprints.json")


def case_id(case: tuple) -> str:
    name, env_id, env_kw, agent_kw = case
    return f"{name}|{env_id}|{json.dumps(env_kw, sort_keys=True)}|{json.dumps(agent_kw, sort_keys=True)}"


def projection(v: np.ndarray) -> float:
    """``sum_k w_k v_k`` with fixed integer weights ``w_k`` in ``[1, 1024)`` (PCG64's
    integers, the same on every machine), summed with :func:`math.fsum` (correctly
    rounded), so the number depends only on ``v``'s bits."""
    flat = np.asarray(v, dtype=np.float64).ravel()
    weights = np.random.default_rng(0).integers(1, 1024, size=flat.size).astype(np.float64)
    return math.fsum((flat * weights).tolist())


def fingerprint(name: str, env_id: str, env_kw: dict, agent_kw: dict) -> dict:
    """One seeded game's record: ``exact`` (hex digest and clip count), ``trace`` (per
    round, the projected point and feedback) and ``regret`` (``[lo, hi]``)."""
    env = build_env(env_id, horizon=ROUNDS, **env_kw)
    problem = env.get_wrapper_attr("problem")
    agent = make(name, problem, seed=SEED, **agent_kw)
    agent.reset(SEED)
    env.reset(seed=SEED)
    actions = hashlib.sha256()
    trace: list[list[float]] = []

    def absorb(t: int, action, feedback: np.ndarray) -> None:
        a = np.asarray(action)
        if a.dtype.kind in "biu":    # arms and subsets: integers, exact everywhere
            actions.update(a.astype(np.int64).tobytes())
        trace.append([projection(problem.domain.to_point(action)), projection(feedback)])

    summary = run_rounds(env, agent, absorb)["regret"]
    return {"exact": [actions.hexdigest(), int(agent.clipped_feedback)],
            "trace": trace, "regret": [float(summary.regret_lo), float(summary.regret_hi)]}


def first_difference(got: dict, want: dict) -> str | None:
    """Where two records differ (``exact`` bit for bit, floats within :data:`RTOL` of
    the recorded part's scale), or ``None`` if they agree."""
    if got["exact"] != want["exact"]:
        return f"exact part (integer actions digest, clip count): {got['exact']} != {want['exact']}"
    if len(got["trace"]) != len(want["trace"]):
        return f"{len(got['trace'])} rounds played, {len(want['trace'])} recorded"
    parts = [([f"round {t + 1}" for t in range(len(want["trace"]))], got["trace"], want["trace"]),
             (["regret [lo, hi]"], [got["regret"]], [want["regret"]])]
    for names, rows, recorded in parts:
        scale = max(1.0, *(abs(v) for row in recorded for v in row))
        for where, g, w in zip(names, rows, recorded):
            if any(not abs(a - b) <= RTOL * scale for a, b in zip(g, w)):
                return f"{where}: {g} != recorded {w} (tolerance {RTOL * scale:.1e})"
    return None


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_seeded_play_is_unchanged(case):
    recorded = json.loads(STORE.read_text())
    assert case_id(case) in recorded, (
        f"no fingerprint for {case_id(case)}: regenerate with python tests/agents/test_fingerprints.py")
    assert first_difference(fingerprint(*case), recorded[case_id(case)]) is None


def test_a_tiny_change_of_a_learner_is_caught(monkeypatch):
    """A learning rate one part in 100,000 off moves Hedge's recorded game."""
    from agents.full_info import hedge

    case = ("hedge", "DPFullInfo-Experts-v0", {}, {})
    recorded = json.loads(STORE.read_text())[case_id(case)]
    real_setup = hedge.Hedge.setup

    def off_by_a_millionth(self, **options):
        real_setup(self, **options)
        self.eta *= 1.0 + 1e-5

    monkeypatch.setattr(hedge.Hedge, "setup", off_by_a_millionth)
    assert first_difference(fingerprint(*case), recorded) is not None


def test_the_tolerance_absorbs_last_bit_drift_only():
    """Records that differ in the last bits of every float agree; an integer action, a
    clip or a float moved by 1e-7 of its scale does not."""
    rec = {"exact": ["ab", 0], "trace": [[1.0, 3.25], [-2.5, 1e-3]], "regret": [4.0, 5.0]}
    drift = {**rec, "trace": [[np.nextafter(a, 9.0) for a in row] for row in rec["trace"]],
             "regret": [np.nextafter(4.0, 0.0), 5.0]}
    assert first_difference(drift, rec) is None
    assert "round 2" in first_difference({**rec, "trace": [[1.0, 3.25], [-2.5, 1e-3 + 1e-7]]}, rec)
    assert "exact" in first_difference({**rec, "exact": ["ac", 0]}, rec)
    assert "exact" in first_difference({**rec, "exact": ["ab", 1]}, rec)
    assert "regret" in first_difference({**rec, "regret": [4.0, 5.0 + 1e-6]}, rec)


if __name__ == "__main__":
    records = {case_id(c): fingerprint(*c) for c in CASES}
    STORE.write_text("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(records[k])}"
                                         for k in sorted(records)) + "\n}\n")
    print(f"wrote {len(CASES)} fingerprints to {STORE}")
