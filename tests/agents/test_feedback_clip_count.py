"""The learner's count of clipped feedback (``Agent.clip_feedback``) on linear losses: a
value the clip changes counts once a round, a value it keeps (``-0.0`` made ``0.0``
included: the same number) never does."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from dp_online_envs.envs.registry import build_env


@pytest.mark.parametrize("env_id", ["DPFullInfo-Experts-v0", "DPFullInfo-Sphere-v1"])
def test_only_a_changed_value_counts_as_a_clip(env_id):
    env = build_env(env_id, horizon=5)
    learner = agents.make("hedge" if "Experts" in env_id else "ftrl",
                          env.get_wrapper_attr("problem"), seed=0)
    dim = learner.problem.dim
    zeros = np.full(dim, -0.0)  # the experts' clip makes it 0.0: no clip
    inside = np.full(dim, 0.25 / np.sqrt(dim))
    for fb in (zeros, inside, inside.copy()):
        got = learner.clip_feedback(fb)
        assert (got == fb).all() and learner.clipped_feedback == 0
    outside = inside.copy()
    outside[0] = 1.0 + 1e-12  # above [0, 1] and outside the unit ball
    assert learner.clip_feedback(outside)[0] <= 1.0
    assert learner.clipped_feedback == 1
    learner.clip_feedback(-outside)
    assert learner.clipped_feedback == 2
