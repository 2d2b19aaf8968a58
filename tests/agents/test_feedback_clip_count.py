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


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_bandit_feedback_is_one_finite_number_clipped_to_the_bound(shape):
    """A bandit round's feedback, in any shape holding one number: clipped to ``[-B, B]``
    (a clip counted, the bound itself not), refused with the value named when it is not
    finite, and refused when it is not one number."""
    env = build_env("DPBandit-MAB-v0", horizon=5)
    learner = agents.make("exp3", env.get_wrapper_attr("problem"), seed=0)
    b = learner.problem.bound
    for value, expected, clips in ((0.25, 0.25, 0), (-0.0, -0.0, 0), (b, b, 0),
                                   (b + 1e-12, b, 1), (-3 * b, -b, 2)):
        got = learner.clip_feedback(np.full(shape, value))
        assert got.shape == (1,) and got.dtype == np.float64
        assert got[0] == expected and np.signbit(got[0]) == np.signbit(expected)
        assert learner.clipped_feedback == clips
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="feedback must be finite"):
            learner.clip_feedback(np.full(shape, bad))
    with pytest.raises(ValueError, match=r"bandit feedback here is 1 number\(s\)"):
        learner.clip_feedback([0.1, 0.2])
