"""Noise blocks sized to the game (agents.common.noise_block): a short game draws only
the values it uses, a long one blocks of NOISE_BLOCK and a last block of the rounds
left, in the scalar reduction and its vector form alike."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.common import NOISE_BLOCK, noise_block
from agents.vector import make_vector
from dp_online_envs import build_env


@pytest.mark.parametrize(("left", "block"), [(64, 64), (1, 1), (NOISE_BLOCK, NOISE_BLOCK),
                                             (NOISE_BLOCK + 1, NOISE_BLOCK), (0, 1), (-3, 1)])
def test_noise_block_is_the_rounds_left_capped(left, block):
    assert noise_block(left) == block


def _problem(horizon):
    return build_env("DPBandit-MAB-v0", horizon=horizon).get_wrapper_attr("problem")


def test_scalar_and_vector_blocks_follow_the_rounds_left():
    horizon = NOISE_BLOCK + 5
    problem = _problem(horizon)
    scalar = agents.make("private-exp2", problem, epsilon=1.0, seed=3)
    scalar.reset(3)
    vector = make_vector("private-exp2", problem, epsilon=1.0)
    vector.reset_batch([3])
    sizes, vector_sizes = [], []
    for _ in range(horizon):
        before = id(scalar._noise._block)  # the reduction's NoiseQueue
        scalar.update(scalar.act(), np.zeros(1))
        if id(scalar._noise._block) != before:
            sizes.append(len(scalar._noise._block))
        arms = vector.act_batch()
        before = id(vector._noise)
        vector.update_batch(arms, np.zeros((1, 1)))
        if id(vector._noise) != before:
            vector_sizes.append(vector._noise.shape[0])
            assert vector._noise[:, 0].tolist() == scalar._noise._block  # the same values
    assert sizes == vector_sizes == [NOISE_BLOCK, 5]
