"""Hostile learners against the vector guard (:class:`LinearVectorEnv`), door by door
as ``tests/envs/test_hostile_learners.py`` plays them against the scalar guard.

Each test plays a learner holding only what it is given (the vector env, or one
wrapped by Gymnasium's vector wrappers) that tries one trick to see more than its
feedback, never touching ``.unwrapped``, ``.env`` or a name starting with ``_`` by
itself; each trick must raise or learn nothing. The experimenter's side (the true
losses) is read through ``venv.unwrapped``, which is what the experimenter is entitled
to. The tricks that DO work in-process are asserted at the end ("Documented
limitations"), so the README stays true.
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from dp_online_envs.adversaries import LossSequence, ReplayAdversary
from dp_online_envs.envs.vector_env import (
    VECTOR_ENV_IDS,
    VECTOR_LEARNER_ATTRIBUTES,
    LinearVectorEnv,
)
from dp_online_envs.wrappers.feedback import WITHHELD

T, B = 40, 4
SEED = 12345  # the experimenter's seed, unknown to the learner

#: What the hostile learner read (``cumulative``, ``_losses``), the rest of the games'
#: state, and the scalar hostile suite's names.
SECRETS = ("cumulative", "_losses", "learner_loss", "projected_actions", "t", "_advs",
           "_adversary", "_generators", "_seeds", "_mu", "_summaries", "_curve", "_best",
           "env_id", "block", "domain", "loss", "horizon", "adversary", "played_losses",
           "cumulative_loss", "round", "checkpoints", "mean_param", "totals",
           "invalid_action", "game_metadata", "rounds")

#: Names the guard answers itself, with the learner's own value.
PUBLIC = {"problem", "num_envs", "metadata", "spec", "render_mode", "closed",
          "action_space", "observation_space", "single_action_space",
          "single_observation_space"}


def _make(env_id: str = "DPBandit-MAB-v0", **options) -> LinearVectorEnv:
    return LinearVectorEnv(env_id, B, horizon=T, **options)


def _actions(venv, n: int = T, seed: int = 0) -> list:
    venv.action_space.seed(seed)
    return [venv.action_space.sample() for _ in range(n)]


def _thetas(venv, actions: list, seed=SEED) -> np.ndarray:
    """Play ``actions`` from ``reset(seed)``; the experimenter's record of the losses,
    ``(B, T, P)``, from the cumulative parameter of the games (``.unwrapped``)."""
    venv.reset(seed=seed)
    sums = [np.zeros_like(venv.unwrapped.cumulative)]
    for a in actions:
        venv.step(a)
        sums.append(venv.unwrapped.cumulative.copy())
    return np.diff(np.stack(sums, axis=1), axis=1)


def _unrelated(a: np.ndarray, b: np.ndarray) -> bool:
    """Two loss records share no more equal rows and no more correlation than
    independent draws (MAB's Bernoulli rows repeat by chance: 2^-10 a round)."""
    a, b = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
    equal = int(np.sum(np.all(a == b, axis=1)))
    x, y = (a - a.mean(axis=0)).ravel(), (b - b.mean(axis=0)).ravel()
    corr = float(x @ y / max(np.linalg.norm(x) * np.linalg.norm(y), 1e-300))
    return equal <= 3 and abs(corr) < 0.2


# ------------------------------------------------------------------ attributes, get_attr
@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_no_public_name_reaches_the_games_state(env_id):
    """The exploit: ``envs.cumulative`` (every arm's loss so far) and
    ``envs._losses`` (the coming rounds), and every other attribute of the games."""
    venv = _make(env_id)
    venv.reset(seed=SEED)
    venv.step(venv.action_space.sample())
    names = set(SECRETS) | set(vars(venv.unwrapped))
    for name in sorted(names - PUBLIC):
        with pytest.raises(AttributeError, match="LinearVectorEnv has no attribute"):
            getattr(venv, name)
        assert not hasattr(venv, name)
    outer = RecordEpisodeStatistics(venv)  # Gymnasium's wrappers forward nothing more
    for name in ("cumulative", "_losses", "adversary"):
        assert not hasattr(outer, name)


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_get_attr_and_call_withhold_everything_but_the_allowlist(env_id):
    venv = _make(env_id)
    venv.reset(seed=SEED)
    for name in SECRETS + ("env", "unwrapped", "step", "reset"):
        for door in (venv.get_attr, venv.call):
            with pytest.raises(AttributeError, match=f"withholds {name!r}.*'problem'"):
                door(name)
    for name in VECTOR_LEARNER_ATTRIBUTES - {"summary"}:
        assert len(venv.get_attr(name)) == B
    assert [repr(p) for p in venv.get_attr("problem")] == [repr(venv.problem)] * B
    assert venv.problem.horizon == T


def test_summaries_are_withheld_mid_game_and_given_at_the_end():
    venv = _make()
    actions = _actions(venv)
    venv.reset(seed=SEED)
    infos = [venv.step(a)[4] for a in actions[:T // 2]]
    for door in (venv.summaries, lambda: venv.get_attr("summary"),
                 lambda: venv.call("summary")):
        with pytest.raises(RuntimeError, match="have not ended"):
            door()
    infos += [venv.step(a)[4] for a in actions[T // 2:]]
    assert all(i == {} for i in infos[:-1]) and set(infos[-1]) == {"regret", "_regret"}
    assert venv.summaries() == list(infos[-1]["regret"])
    assert venv.get_attr("summary") == tuple(infos[-1]["regret"])


def test_set_attr_and_np_random_cannot_be_replaced_nor_the_game_shortened():
    venv = _make()
    venv.reset(seed=SEED)
    for name, value in (("horizon", 3), ("adversary", None), ("np_random", None)):
        with pytest.raises(AttributeError, match=f"refuses set_attr\\({name!r}"):
            venv.set_attr(name, [value] * B)
    with pytest.raises(AttributeError, match="refuses to set np_random"):
        venv.np_random = tuple(np.random.default_rng(0) for _ in range(B))
    rounds, done = 0, False
    while not done:
        done = venv.step(venv.action_space.sample())[2].all()
        rounds += 1
    assert rounds == T and venv.summaries()[0].rounds == T


# ------------------------------------------------------------------ np_random and seeds
@pytest.mark.parametrize("env_id", ["DPBandit-MAB-v0", "DPFullInfo-Experts-v0"])
def test_copying_np_random_predicts_no_loss(env_id):
    venv = _make(env_id)
    actions = _actions(venv)
    venv.reset(seed=SEED)
    stolen = copy.deepcopy(venv.np_random)
    actual = _thetas(venv, actions)
    twin = _make(env_id)  # the learner's twin: its adversaries draw from the stolen copies
    twin.reset(seed=0)
    for game, generator in zip(twin.unwrapped._advs, stolen):
        game.np_random = generator
    predicted = []
    for a in actions:
        twin.step(a)
        predicted.append(twin.unwrapped.cumulative.copy())
    predicted = np.diff(np.stack([np.zeros_like(predicted[0])] + predicted, axis=1), axis=1)
    assert predicted.shape == actual.shape and _unrelated(predicted, actual)


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_drawing_from_np_random_steers_nothing(env_id):
    venv = _make(env_id)
    actions = _actions(venv)
    runs = []
    for draws in (0, 1000):
        venv.reset(seed=SEED)
        for generator in venv.np_random:
            generator.random(draws)  # try to shift the adversaries' streams
        runs.append(_thetas(venv, actions))
        runs.append([s.as_dict() for s in venv.summaries()])
    assert np.array_equal(runs[0], runs[2]) and runs[1] == runs[3]


def test_np_random_is_the_learners_own_generators_not_the_seeds():
    """Reseeding the games does not restart the learner's generators: they never come
    from the reset seeds (``tests/envs/test_seed_search.py`` searches for the seeds)."""
    venv = _make()
    venv.reset(seed=SEED)
    first = [g.random(5) for g in venv.np_random]
    venv.reset(seed=SEED)
    assert not any(np.array_equal(g.random(5), f) for g, f in zip(venv.np_random, first))
    assert not np.array_equal(first[0], first[1])  # one generator per game
    assert venv.get_attr("np_random") == venv.np_random
    assert venv.np_random_seed == venv.get_attr("np_random_seed") == (-1,) * B


def test_spec_and_public_seeds_do_not_rebuild_the_games():
    venv = _make()
    actions = _actions(venv)
    actual = _thetas(venv, actions)
    twin = gym.make_vec(venv.spec)  # the public spec: the default adversary, so it builds
    assert type(twin) is LinearVectorEnv
    guesses = {0, abs(venv.np_random_seed[0])}  # np_random holds no seed (test_seed_search)
    for guess in guesses:
        assert _unrelated(_thetas(twin, actions, seed=guess), actual)


def test_spec_withholds_adversary_objects_and_options():
    seq = LossSequence(np.random.default_rng(1).random((T, 10)))
    mean = np.linspace(0.2, 0.8, 10)
    for options in ({"adversary": ReplayAdversary(seq)},
                    {"adversary": "stochastic", "adversary_kwargs": {"mean": mean}}):
        venv = _make(**options)
        for spec in (venv.spec, *venv.get_attr("spec")):
            assert spec.kwargs["adversary"] == WITHHELD
            assert spec.kwargs["adversary_kwargs"] is None
            text = pickle.dumps(spec)
            assert b"ReplayAdversary" not in text and seq.thetas.tobytes() not in text
            assert mean.tobytes() not in text
        assert all(k in venv.unwrapped.spec.kwargs for k in options)  # the experimenter's
        with pytest.raises(ValueError, match="unknown adversary"):
            gym.make_vec(venv.spec)  # the withheld adversary does not rebuild


# ------------------------------------------------------------------ copies, info, options
def test_the_env_cannot_be_copied_or_pickled():
    venv = _make()
    venv.reset(seed=SEED)
    for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(venv)
    for attempt in (copy.deepcopy, pickle.dumps):  # nor through Gymnasium's wrappers
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(RecordEpisodeStatistics(venv))


@pytest.mark.parametrize("env_id", VECTOR_ENV_IDS)
def test_info_is_empty_until_the_last_round(env_id):
    venv = _make(env_id)
    _, info = venv.reset(seed=SEED)
    infos = [info] + [venv.step(a)[4] for a in _actions(venv)]
    assert all(i == {} for i in infos[:-1])
    assert set(infos[-1]) == {"regret", "_regret"}


def test_reset_options_are_refused():
    venv = _make()
    with pytest.raises(ValueError, match="takes no options but reset_mask"):
        venv.reset(seed=SEED, options={"horizon": 3})
    venv.reset(seed=SEED, options={})


def test_render_draws_nothing():
    venv = _make()
    venv.reset(seed=SEED)
    with pytest.warns(UserWarning, match="do not render"):
        assert venv.render() == (None,) * B
    with pytest.raises(ValueError, match="render_mode"):
        _make(render_mode="rgb_array")


# ------------------------------------------------------------- documented limitations
# In-process Python cannot stop these; the README ("What the learner sees") says so and
# points to process isolation. They are asserted, not skipped, to keep the docs true.

def test_limitation_unwrapped_and_env_reach_the_games():
    venv = _make()
    venv.reset(seed=SEED)
    assert venv.env is venv.unwrapped
    foresight = [copy.deepcopy(game).next_losses(1, 3) for game in venv.unwrapped._advs]
    actual = _thetas(venv, _actions(venv, 3))
    assert np.array_equal(np.stack(foresight), actual)
    assert venv.unwrapped.cumulative.shape == (B, 10)


def test_limitation_the_experimenters_seed_is_the_secret():
    """Whoever knows the reset seed rebuilds the games: the guard never hands it out."""
    venv = _make()
    actions = _actions(venv)
    actual = _thetas(venv, actions)
    twin = gym.make_vec(venv.unwrapped.spec)  # the experimenter's full spec
    assert np.array_equal(_thetas(twin, actions, seed=SEED), actual)
