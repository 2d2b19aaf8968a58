"""The per-round checks, made cheap, still refuse what they refused: the action's
finiteness and realness, the decision set's membership, the learner's feedback check,
each compared with the plain numpy test it replaces (brute force over hostile values)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import agents
from dp_online_envs import build_env
from dp_online_envs.domains import Simplex
from dp_online_envs.domains.base import all_finite, fast_clip
from dp_online_envs.envs.online_env import _is_complex

#: Entries that break a fast test: non-finite ones, finite ones whose squares overflow
#: (a dot product of them is infinite), subnormal ones and signed zeros.
SPECIAL = (np.nan, np.inf, -np.inf, 1e200, -1e200, np.finfo(float).max, 5e-324, -0.0, 0.0,
           1.0, 0.5)


def _vectors(dim: int) -> list[np.ndarray]:
    """Every vector of ``dim`` entries drawn from :data:`SPECIAL`, and random ones."""
    out = [np.array(v, dtype=np.float64) for v in itertools.product(SPECIAL, repeat=dim)]
    rng = np.random.default_rng(0)
    out += [rng.uniform(-2, 2, dim) for _ in range(50)]
    return out


@pytest.mark.parametrize("dim", [0, 1, 2, 3])
def test_all_finite_is_numpys_isfinite_all(dim):
    for v in _vectors(dim):
        assert all_finite(v) == bool(np.isfinite(v).all()), v


def test_all_finite_takes_a_large_vector_whose_dot_product_overflows():
    v = np.full(10_000, 1e200)
    assert all_finite(v)  # the exact test decides, not the overflowing dot product
    v[-1] = np.nan
    assert not all_finite(v)


def test_fast_clip_is_np_clip_bit_for_bit():
    low, high = np.array([0.0, -1.0, -0.0]), np.array([1.0, 1.0, 0.0])
    for v in _vectors(3):
        a, b = fast_clip(v, low, high), np.clip(v, low, high)
        assert a.tobytes() == b.tobytes() or (np.isnan(a) == np.isnan(b)).all() and \
            np.array_equal(a[~np.isnan(a)], b[~np.isnan(b)]) and \
            (np.signbit(a) == np.signbit(b)).all(), (v, a, b)


def _simplex_reference(x, k: int, atol: float) -> bool:
    a = np.asarray(x, dtype=np.float64)
    return bool(a.shape == (k,) and np.isfinite(a).all() and a.min() >= -atol
                and abs(a.sum() - 1.0) <= atol)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_simplex_membership_of_a_float_vector_refuses_non_finite_points(k):
    """The fast path (a float64 vector of the right shape) tests no finiteness apart:
    a NaN or an infinite entry must still make it False."""
    s = Simplex(k)
    points = _vectors(k) + [np.eye(k)[0], np.full(k, 1.0 / k), np.full(k, 1.0 / k) + 1e-10,
                            np.full(k, 1.0 / k) + 1e-8]
    for x in points:
        for atol in (1e-9, 0.0, np.inf):
            assert s.contains(x, atol) == _simplex_reference(x, k, atol), (x, atol)


def test_simplex_membership_of_other_inputs_goes_through_the_checks():
    s = Simplex(3)
    assert s.contains([1, 0, 0]) and s.contains(np.array([0, 1, 0]))  # ints, a list
    assert not s.contains(np.zeros((3, 1))) and not s.contains(np.eye(3)[0][:2])
    assert not s.contains(["a", "b", "c"]) and not s.contains(None)
    assert not s.contains(np.array([np.nan, 1, 0], dtype=np.float32))


@pytest.mark.parametrize("action", [1, 1.5, 1 + 2j, np.complex128(1j), np.float64(2.0),
                                    np.array([1.0, 2.0]), np.array([1j, 0]),
                                    np.array([1, 2], dtype=np.complex64), [1, 2j], [1.0, 2.0],
                                    (0, 1), True, np.int64(3), "ab", None])
def test_the_complex_test_is_numpys(action):
    assert _is_complex(action) == np.iscomplexobj(action)


@pytest.mark.parametrize("bad", [np.array([np.nan] + [0.1] * 9), np.array([np.inf] + [0.0] * 9),
                                 np.array([0.1] * 9 + [-np.inf]), np.array([0.5j] + [0.0] * 9),
                                 np.array([0.1] * 10, dtype=np.complex64)])
def test_an_experts_env_refuses_a_non_finite_or_complex_action_and_changes_nothing(bad):
    env = build_env("DPFullInfo-Experts-v0", horizon=5)
    env.reset(seed=0)
    env.step(np.full(10, 0.1))
    base = env.unwrapped
    before = (base.totals.rounds, base.totals.learner_loss,
              base.adversary.np_random.bit_generator.state)
    with pytest.raises(ValueError, match="must be finite|is complex"):
        env.step(bad)
    assert (base.totals.rounds, base.totals.learner_loss,
            base.adversary.np_random.bit_generator.state) == before


@pytest.mark.parametrize("far", [[1e200, -1e200] + [0.0] * 8, [1e17] + [0.0] * 9,
                                 [np.finfo(float).max, -np.finfo(float).max] + [0.0] * 8,
                                 [-1e300] * 9 + [1e300]])
def test_an_experts_env_projects_a_huge_finite_action_onto_a_vertex(far):
    """Entries of 1e16 and more once made the sort projection find no index (an
    IndexError out of step); the point played is now the vertex of the largest entry."""
    env = build_env("DPFullInfo-Experts-v0", horizon=5, record_losses=True)
    env.reset(seed=0)
    env.step(np.array(far))
    base = env.unwrapped
    assert base.totals.projected_actions == 1
    theta = base.played_losses().thetas[0]
    assert base.totals.learner_loss == theta[int(np.argmax(far))]


def test_the_learner_refuses_non_finite_feedback_and_counts_every_clip():
    env = build_env("DPFullInfo-Experts-v0", horizon=5)
    hedge = agents.make("hedge", env.get_wrapper_attr("problem"), seed=0)
    hedge.reset(0)
    for bad in (np.array([np.nan] + [0.5] * 9), np.array([0.5] * 9 + [-np.inf])):
        with pytest.raises(ValueError, match="feedback must be finite"):
            hedge.update(0, bad)
    assert hedge.clipped_feedback == 0 and hedge.t == 0
    hedge.update(0, np.full(10, 0.5))
    assert hedge.clipped_feedback == 0
    huge = np.array([1e200] * 5 + [-1e200] * 5)  # finite: clipped into [0, 1], counted
    assert (hedge.clip_feedback(huge) == [1.0] * 5 + [0.0] * 5).all()
    assert hedge.clipped_feedback == 1
    hedge.clip_feedback(np.array([1.0 + 1e-12] + [0.0] * 9))
    assert hedge.clipped_feedback == 2
