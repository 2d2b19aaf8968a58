"""One refill of exact noise: counters, the private reductions and the vector forms all
draw their exact integers through :class:`agents.privacy.noise.ExactNoise`.

Checked: each consumer's draws go through ``ExactNoise.refill`` (a refill that returns
other numbers changes what each of them releases), the refill draws ``n * width``
integers in row order, and no other module of ``agents`` calls ``draw_int`` (read from
the source).
"""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import agents
from agents.privacy.counters import make_counter
from agents.privacy.noise import DiscreteLaplaceNoise, ExactNoise, VectorExactNoise
from agents.vector import make_vector
from agents.vector.counters import VectorAgarwalSingh
from dp_online_envs.envs.registry import build_env
from dp_online_envs.envs.vector_env import LinearVectorEnv

ROOT = pathlib.Path(agents.__file__).resolve().parent


def test_a_refill_is_n_times_width_draws_in_row_order():
    ns = DiscreteLaplaceNoise(1.0, 1.0).calibrate()
    buf = ExactNoise(ns, width=3)
    rows = buf.refill(np.random.default_rng(4), 5)
    assert rows.shape == (5, 3)
    np.testing.assert_array_equal(rows.reshape(-1), ns.draw_int(np.random.default_rng(4), 15))
    rng = np.random.default_rng(0)
    got = [buf.next_row(rng, 2).copy() for _ in range(7)]  # 5 left, then 2 + 2 new rows
    assert buf.left == 0 and buf.used == 2
    np.testing.assert_array_equal(got[:5], rows)


def test_vector_buffers_continue_the_games_blocks_and_refuse_different_positions():
    ns = DiscreteLaplaceNoise(1.0, 1.0).calibrate()
    rngs = [np.random.default_rng(s) for s in (1, 2)]
    games = [ExactNoise(ns, 2) for _ in rngs]
    for g, r in zip(games, rngs):
        g.next_row(r, 3)
    both = VectorExactNoise(games, rngs)
    np.testing.assert_array_equal(both.next_rows(3), [games[0].rows[1], games[1].rows[1]])
    games[0].used = 2
    with pytest.raises(ValueError, match="buffers differ"):
        VectorExactNoise(games, rngs)


class _Shifted(ExactNoise):
    """A refill that returns other numbers: every consumer's releases must change."""

    def refill(self, rng, n_rows):
        return super().refill(rng, n_rows).__iadd__(2**40)


@pytest.fixture
def shifted(monkeypatch):
    def use(module_attr: list[tuple[object, str]]) -> None:
        for module, name in module_attr:
            monkeypatch.setattr(module, name, _Shifted)
    return use


def _counter_releases() -> np.ndarray:
    c = make_counter("agarwal-singh", 10, 2, epsilon=1.0, sensitivity=1.0,
                     noise="discrete-laplace", rng=np.random.default_rng(3))
    return np.array([c.add(np.zeros(2)) for _ in range(10)])


def test_the_counter_draws_through_the_refill(shifted):
    from agents.privacy.counters import base
    before = _counter_releases()
    shifted([(base, "ExactNoise")])
    assert np.all(np.abs(_counter_releases() - before) > 1.0)


def _reduction_releases() -> list[float]:
    problem = build_env("DPBandit-MAB-v0", horizon=40).get_wrapper_attr("problem")
    agent = agents.make("private-exp2", problem, epsilon=1.0, seed=5)
    agent.record_releases = True
    out = []
    for _ in range(40):
        a = agent.act()
        agent.update(a, [0.5])
        out.append(float(agent.releases[-1][1].reshape(-1)[0]))
    return out


def test_the_reduction_draws_through_the_refill(shifted):
    from agents import common
    before = _reduction_releases()
    shifted([(common, "ExactNoise")])
    assert _reduction_releases() != before


def _vector_counter_releases() -> np.ndarray:
    counters = [make_counter("agarwal-singh", 10, 2, epsilon=1.0, sensitivity=1.0,
                             noise="discrete-laplace", rng=np.random.default_rng(s)) for s in (1, 2)]
    both = VectorAgarwalSingh(counters)
    return np.array([both.add_batch(np.zeros((2, 2))) for _ in range(10)])


def test_the_vector_counter_draws_through_the_refill(shifted):
    from agents.privacy.counters import base
    before = _vector_counter_releases()
    shifted([(base, "ExactNoise")])
    assert np.all(np.abs(_vector_counter_releases() - before) > 1.0)


def _vector_exp2_actions() -> list[float]:
    venv = LinearVectorEnv("DPBandit-MAB-v0", 2, horizon=30)
    learner = make_vector("private-exp2", venv.problem, epsilon=1.0)
    venv.reset(seed=[3, 4])
    learner.reset_batch([3, 4])
    actions = []
    for _ in range(30):
        a = learner.act_batch()
        obs, *_ = venv.step(a)
        learner.update_batch(a, obs)
        actions.append(np.asarray(a).tolist())
    return actions


def test_the_vector_reduction_draws_through_the_refill(shifted):
    from agents.privacy import noise
    from agents.vector import arms
    before = _vector_exp2_actions()
    shifted([(arms, "ExactNoise"), (noise, "ExactNoise")])
    assert _vector_exp2_actions() != before


def test_no_other_module_of_agents_calls_draw_int():
    callers = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "draw_int"):
                callers.append((path.relative_to(ROOT).as_posix(), node.lineno))
    where = sorted({p for p, _ in callers})
    # noise.py: the strategies' own float draws and ExactNoise.refill; arms.py: the
    # audit's shared-stream form, one generator for all runs (not a per-game buffer)
    assert where == ["privacy/noise.py", "vector/arms.py"]
    assert len([c for c in callers if c[0] == "vector/arms.py"]) == 1


@pytest.mark.parametrize("counts", [(1, 2, 3), (4, 4, 4), (9,), (2, 7, 1, 5)])
def test_a_sum_of_rows_is_the_sum_of_the_rows_handed_out_one_by_one(counts):
    """``next_rows_sum`` hands out the rows ``next_row`` would (across refills of the
    same block size, at the same points) and sums them exactly; the vector form does
    the same per game."""
    ns = DiscreteLaplaceNoise(1.0, 1.0).calibrate()
    one, many = ExactNoise(ns, width=2), ExactNoise(ns, width=2)
    r1, r2 = np.random.default_rng(3), np.random.default_rng(3)
    for count in counts:
        want = sum(one.next_row(r1, 4).copy() for _ in range(count))
        got = many.next_rows_sum(r2, 4, count)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)
        assert (many.used, len(many.rows)) == (one.used, len(one.rows))
    assert r1.bit_generator.state == r2.bit_generator.state
    games = [np.random.default_rng(s) for s in (5, 6)]
    vector = VectorExactNoise([ExactNoise(ns, 2), ExactNoise(ns, 2)],
                                [np.random.default_rng(s) for s in (5, 6)])
    singles = [ExactNoise(ns, 2), ExactNoise(ns, 2)]
    for count in counts:
        want = [sum(b.next_row(r, 4).copy() for _ in range(count))
                for b, r in zip(singles, games)]
        np.testing.assert_array_equal(vector.next_rows_sum(4, count), want)
