"""Noise blocks sized to the game (agents.common.noise_block): a short game draws only
the values it uses, a long one blocks of NOISE_BLOCK and a last block of the rounds
left, in the scalar reduction and its batched form alike."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.common import NOISE_BLOCK, noise_block
from agents.vectorized import make_batched
from dp_online_envs import build_env


@pytest.mark.parametrize(("left", "block"), [(64, 64), (1, 1), (NOISE_BLOCK, NOISE_BLOCK),
                                             (NOISE_BLOCK + 1, NOISE_BLOCK), (0, 1), (-3, 1)])
def test_noise_block_is_the_rounds_left_capped(left, block):
    assert noise_block(left) == block


def _problem(horizon):
    return build_env("DPBandit-MAB-v0", horizon=horizon).get_wrapper_attr("problem")


def test_scalar_and_batched_blocks_follow_the_rounds_left():
    horizon = NOISE_BLOCK + 5
    problem = _problem(horizon)
    scalar = agents.make("private-exp2", problem, epsilon=1.0, seed=3)
    scalar.reset(3)
    batched = make_batched("private-exp2", problem, epsilon=1.0)
    batched.reset_batch([3])
    sizes, batched_sizes = [], []
    for _ in range(horizon):
        before = id(scalar._noise._block)  # the reduction's NoiseQueue
        scalar.update(scalar.act(), np.zeros(1))
        if id(scalar._noise._block) != before:
            sizes.append(len(scalar._noise._block))
        arms = batched.act_batch()
        before = id(batched._noise)
        batched.update_batch(arms, np.zeros((1, 1)))
        if id(batched._noise) != before:
            batched_sizes.append(batched._noise.shape[0])
            assert batched._noise[:, 0].tolist() == scalar._noise._block  # the same values
    assert sizes == batched_sizes == [NOISE_BLOCK, 5]
