"""Hostile learners against the in-process FeedbackGuard.

Each test plays a learner that tries one trick to see more than its feedback, holding
only what ``gym.make`` returns and never touching ``env.unwrapped``, the ``.env`` chain
or a name starting with ``_``; each trick must raise or learn nothing. The tricks that
DO work in-process (``.unwrapped``/``.env``, walking stack frames) are asserted at the
end, under "Documented limitations", so the README stays true: process isolation is the
boundary for untrusted learners.

The experimenter's side of each test (the true losses) is read through
``env.unwrapped``, which is what the experimenter is entitled to.
"""

from __future__ import annotations

import copy
import inspect
import pickle
import sys

import gymnasium as gym
import numpy as np
import pytest

from agents.base import Agent
from agents.loop import play
from dp_online_envs import ENV_IDS, OnlineLearningEnv, build_env
from dp_online_envs.adversaries import ADVERSARIES, LossSequence, ReplayAdversary
from dp_online_envs.rendering import GREEN, RED
from dp_online_envs.wrappers import regret_summary
from dp_online_envs.wrappers.feedback import LEARNER_ATTRIBUTES, WITHHELD

BANDIT_IDS = [i for i in ENV_IDS if i.startswith("DPBandit-")]
FULL_IDS = [i for i in ENV_IDS if i.startswith("DPFullInfo-")]
T = 40
SEED = 12345  # the experimenter's seed, unknown to the learner

#: What the hostile learner asked ``get_wrapper_attr`` for, plus the rest of the
#: env's and recorder's state.
SECRETS = ("adversary", "played_losses", "cumulative_loss", "domain", "loss", "env",
           "unwrapped", "horizon", "round", "projected_actions", "feedback",
           "record_losses", "invalid_action", "checkpoints", "mean_param", "totals")


def test_there_are_ten_bandit_ids():
    assert len(BANDIT_IDS) == 10


def _make(env_id: str, horizon: int = T, **kwargs) -> gym.Env:
    return gym.make(env_id, horizon=horizon, record_losses=True, **kwargs)


def _actions(env: gym.Env, n: int = T, seed: int = 0) -> list:
    env.action_space.seed(seed)
    return [env.action_space.sample() for _ in range(n)]


def _true_thetas(env: gym.Env) -> np.ndarray:
    """The experimenter's record of the losses played (through ``.unwrapped``)."""
    return env.unwrapped.played_losses().thetas


def _messages(exc: BaseException) -> str:
    """The messages of an exception and of its causes (gymnasium's outer wrappers
    re-raise the guard's AttributeError with their own message)."""
    out = []
    while exc is not None:
        out.append(str(exc))
        exc = exc.__cause__
    return " | ".join(out)


def _play_all(env: gym.Env, actions: list, seed: int = SEED) -> list[dict]:
    env.reset(seed=seed)
    infos = []
    for a in actions:
        *_, info = env.step(a)
        infos.append(info)
    return infos


# ------------------------------------------------------------ get/set/has_wrapper_attr
@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_get_wrapper_attr_withholds_everything_but_the_allowlist(env_id):
    env = _make(env_id)
    env.reset(seed=SEED)
    env.step(env.action_space.sample())
    guard = build_env(env_id, horizon=T)  # the guard itself, without gym.make's wrappers
    guard.reset(seed=SEED)
    for name in SECRETS:
        if name not in ("env", "unwrapped"):  # gym.make's outer wrappers have these
            with pytest.raises(AttributeError) as err:
                env.get_wrapper_attr(name)
            assert f"FeedbackGuard withholds {name!r}" in _messages(err.value)
            assert not env.has_wrapper_attr(name)
        with pytest.raises(AttributeError, match=f"FeedbackGuard withholds {name!r}.*'problem'"):
            guard.get_wrapper_attr(name)
        assert not guard.has_wrapper_attr(name)
    for problem in (env.get_wrapper_attr("problem"), guard.get_wrapper_attr("problem")):
        assert (problem.horizon, problem.feedback) == (T, "bandit")
    assert all(guard.has_wrapper_attr(n) for n in LEARNER_ATTRIBUTES)


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_attribute_forwarding_is_closed(env_id):
    env = _make(env_id)
    env.reset(seed=SEED)
    for name in ("adversary", "cumulative_loss", "played_losses", "horizon"):
        with pytest.raises(AttributeError):
            getattr(env, name)
        assert not hasattr(env, name)


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_summary_is_withheld_mid_game_and_given_at_the_end(env_id):
    env = _make(env_id)
    infos = _play_all(env, _actions(env)[:T // 2])
    with pytest.raises(RuntimeError, match="withholds the regret summary while a game"):
        env.get_wrapper_attr("summary")()
    assert regret_summary(env).rounds == T // 2  # the experimenter's door
    for a in _actions(env)[T // 2:]:
        *_, info = env.step(a)
    assert env.get_wrapper_attr("summary")() == info["regret"]
    assert all(i == {} for i in infos)


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_set_wrapper_attr_cannot_shorten_the_game(env_id):
    env = _make(env_id)
    env.reset(seed=SEED)
    with pytest.raises(AttributeError) as err:
        env.set_wrapper_attr("horizon", 3)
    assert "refuses set_wrapper_attr('horizon'" in _messages(err.value)
    for name, value in (("adversary", None), ("np_random", np.random.default_rng(0))):
        with pytest.raises(AttributeError):
            env.set_wrapper_attr(name, value)
    with pytest.raises(AttributeError, match="refuses to set np_random"):
        env.np_random = np.random.default_rng(0)
    rounds, terminated = 0, False
    while not terminated:
        *_, terminated, _, info = env.step(env.action_space.sample())
        rounds += 1
    assert rounds == T and info["regret"].rounds == T


# ------------------------------------------------------------------ np_random and seeds
def _predict_with(env_id: str, generator: np.random.Generator, actions: list) -> np.ndarray:
    """The learner's twin: the id's public defaults, its adversary drawing from
    ``generator`` from round 1 on, for as many rounds as ``actions``."""
    twin = _make(env_id, horizon=len(actions))
    twin.reset(seed=0)
    twin.unwrapped.adversary.np_random = generator  # its own twin: .unwrapped is fair game
    for a in actions:
        twin.step(a)
    return _true_thetas(twin)


def _matches(a: np.ndarray, b: np.ndarray) -> int:
    """How many rounds have exactly the same parameter."""
    return int(np.sum(np.all(a == b, axis=1)))


def _chance_matches(a: np.ndarray, b: np.ndarray) -> float:
    """How many equal rounds two independent games with these draws' frequencies share
    on average: ``sum_r n_a(r) n_b(r) / T`` over distinct parameters ``r``. About 0 for
    continuous draws; most rounds for a planted default with few likely parameters
    (e.g. ``DPBandit-Convex-v1``: two-point draws near one vertex in dimension 2)."""
    counts: dict[bytes, list[int]] = {}
    for i, rows in enumerate((a, b)):
        for row in rows:
            counts.setdefault(row.tobytes(), [0, 0])[i] += 1
    return sum(na * nb for na, nb in counts.values()) / len(a)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the entries' fluctuations about their coordinate's mean
    (about 0 +- 0.07 for independent draws). Centering each coordinate on its own mean
    keeps a default whose draws share a planted mean (``adversary='planted'``) from
    counting as a prediction; a real prediction (equal draws) still gives 1."""
    a, b = (a - a.mean(axis=0)).ravel(), (b - b.mean(axis=0)).ravel()
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))


#: Rounds of the prediction test: the guard's ``np_random`` is a fresh, unpredictable
#: generator in every process, so the twin's losses are a random draw of the id's
#: defaults. At 40 rounds the correlation of two independent games of
#: ``DPBandit-Convex-v1`` (two-point draws in dimension 2) has a standard deviation of
#: 0.11 and passed 0.3 in 7 of 200 draws; at 200 rounds it is at most 0.041 on every id
#: (100 draws each), so 0.3 is 7 standard deviations away while a prediction gives 1.
PREDICTION_T = 200


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_copying_np_random_predicts_no_loss(env_id):
    env = _make(env_id, horizon=PREDICTION_T)
    env.reset(seed=SEED)
    stolen = copy.deepcopy(env.np_random)  # the hostile learner's trick, through the guard
    actions = _actions(env, PREDICTION_T)
    for a in actions:
        env.step(a)
    actual = _true_thetas(env)
    predicted = _predict_with(env_id, stolen, actions)
    assert predicted.shape == actual.shape
    # data replays have few distinct rows (two on DPBandit-Classes-v0): compare to chance
    chance = _chance_matches(predicted, actual)
    assert _matches(predicted, actual) <= 2 + chance + 4 * np.sqrt(chance), \
        "the guard's np_random predicts the losses"
    assert abs(_correlation(predicted, actual)) < 0.3


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_drawing_from_np_random_steers_nothing_for_any_adversary(env_id):
    """Same seed, same losses bit for bit, whatever the learner draws from np_random."""
    played = 0
    for adversary in sorted(ADVERSARIES):
        try:
            envs = [gym.make(env_id, horizon=12, record_losses=True, adversary=adversary)
                    for _ in range(2)]
            envs[0].reset(seed=SEED)
        except (ValueError, TypeError):  # an adversary this loss family does not admit
            continue
        actions = _actions(envs[0], 12)
        runs = []
        for env, draws in zip(envs, (0, 1000)):
            env.reset(seed=SEED)
            env.np_random.random(draws)  # try to shift the adversary's stream
            for a in actions:
                env.step(a)
            runs.append(_true_thetas(env))
        np.testing.assert_array_equal(runs[0], runs[1])
        played += 1
    assert played >= 3


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_np_random_is_the_learners_own_generator_not_the_seeds(env_id):
    """Reseeding the game does not restart the learner's generator: it never comes from
    the reset seed (``tests/envs/test_seed_search.py`` searches for the seed in it)."""
    env = _make(env_id)
    env.reset(seed=SEED)
    a = env.np_random.random(5)
    env.reset(seed=SEED)
    assert not np.array_equal(env.np_random.random(5), a)
    assert env.get_wrapper_attr("np_random") is env.np_random
    assert env.np_random_seed == -1  # the reset seed is not handed out


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_spec_and_public_seeds_do_not_rebuild_the_game(env_id):
    env = _make(env_id)
    actions = _actions(env)
    _play_all(env, actions)
    actual = _true_thetas(env)
    spec = env.spec  # the public spec: here the id's default adversary, so it builds
    with pytest.raises(gym.error.Error):
        gym.make(spec).reset(seed=env.np_random_seed)  # -1 is no seed
    # The learner's best guesses from what the guard lets it read (its np_random holds
    # no seed: tests/envs/test_seed_search.py searches it).
    guesses = {0, abs(env.np_random_seed)}
    for guess in guesses:
        twin = gym.make(spec)
        _play_all(twin, actions, seed=guess)
        guessed = _true_thetas(twin)
        chance = _chance_matches(guessed, actual)
        assert _matches(guessed, actual) <= 2 + chance + 4 * np.sqrt(chance)
        assert abs(_correlation(guessed, actual)) < 0.3


def test_spec_withholds_adversary_objects_and_options():
    seq = LossSequence(np.random.default_rng(1).random((T, 10)))
    mean = np.linspace(0.2, 0.8, 10)
    for kwargs in ({"adversary": ReplayAdversary(seq)},
                   {"adversary": "stochastic", "adversary_kwargs": {"mean": mean}}):
        env = _make("DPBandit-MAB-v0", **kwargs)
        env.reset(seed=SEED)
        spec = env.spec
        assert spec.kwargs["adversary"] == WITHHELD and spec.kwargs["adversary_kwargs"] is None
        text = pickle.dumps(spec)
        assert b"ReplayAdversary" not in text and seq.thetas.tobytes() not in text
        assert mean.tobytes() not in text
        assert all(k in env.unwrapped.spec.kwargs for k in kwargs)  # the experimenter's
        with pytest.raises(ValueError, match="unknown adversary"):
            gym.make(spec)  # the withheld adversary does not rebuild


# ------------------------------------------------------------------ copies, info, options
@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_the_env_cannot_be_copied_or_pickled(env_id):
    env = _make(env_id)
    env.reset(seed=SEED)
    for attempt in (copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            attempt(env)
    with pytest.raises(TypeError, match="cannot be copied or pickled"):
        copy.copy(build_env(env_id, horizon=T))


@pytest.mark.parametrize("env_id", BANDIT_IDS + FULL_IDS)
def test_info_is_empty_until_the_last_round(env_id):
    env = _make(env_id)
    _, info = env.reset(seed=SEED)
    infos = [info] + [env.step(a)[4] for a in _actions(env)]
    assert all(i == {} for i in infos[:-1])
    assert set(infos[-1]) == {"regret"}


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_reset_options_are_refused(env_id):
    env = _make(env_id)
    with pytest.raises(ValueError, match="takes no options"):
        env.reset(seed=SEED, options={"horizon": 3})
    env.reset(seed=SEED, options={})


# ------------------------------------------------------------------------- rendering
def _pictures(env_id: str, thetas: np.ndarray, actions: list, mode: str, **kw):
    env = _make(env_id, adversary=ReplayAdversary(thetas), render_mode=mode, **kw)
    _play_all(env, actions)
    return env.render(), env.unwrapped.render()


def _twins_mab(rng: np.random.Generator):
    """Two loss sequences equal on the arms played, different elsewhere."""
    a = (rng.random((T, 10)) < 0.5).astype(float)
    b = 1.0 - a
    arms = [int(i) for i in rng.integers(0, 10, T)]
    for t, i in enumerate(arms):
        b[t, i] = a[t, i]
    return a, b, arms


def _twins_linear(rng: np.random.Generator, dim: int = 5):
    """Two sequences with the same <theta_t, x_t> on the points played."""
    xs = [v / np.linalg.norm(v) for v in rng.standard_normal((T, dim))]
    a = rng.standard_normal((T, dim))
    a /= 2 * np.linalg.norm(a, axis=1, keepdims=True)
    b = a.copy()
    for t, x in enumerate(xs):
        d = rng.standard_normal(dim)
        d -= (d @ x) * x  # orthogonal to the point played
        b[t] = a[t] + 0.4 * d / np.linalg.norm(d)
        assert np.linalg.norm(b[t]) <= 1
    return a, b, xs


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
@pytest.mark.parametrize("env_id", ["DPBandit-MAB-v0", "DPBandit-Linear-v1"])
def test_render_shows_only_the_learners_own_history(env_id, mode):
    rng = np.random.default_rng(3)
    a, b, actions = _twins_mab(rng) if "MAB" in env_id else _twins_linear(rng)
    guard_a, full_a = _pictures(env_id, a, actions, mode)
    guard_b, full_b = _pictures(env_id, b, actions, mode)
    if mode == "ansi":
        assert guard_a == guard_b
        return
    np.testing.assert_array_equal(guard_a, guard_b)  # the learner cannot tell a from b
    assert not np.array_equal(full_a, full_b)  # the experimenter can
    for colour in (RED, GREEN):
        assert not np.all(guard_a == colour, axis=-1).any()
        assert np.all(full_a == colour, axis=-1).any()


@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_rendered_picture_has_no_loss_parameters_under_bandit_feedback(env_id):
    env = _make(env_id, render_mode="rgb_array")
    _play_all(env, _actions(env))
    img = env.render()
    assert (img != 255).any()  # the learner's own play is drawn
    for colour in (RED, GREEN):
        assert not np.all(img == colour, axis=-1).any()


def test_full_information_learner_sees_the_full_picture_unless_downgraded():
    env = _make("DPFullInfo-Experts-v0", render_mode="rgb_array")
    _play_all(env, _actions(env))
    np.testing.assert_array_equal(env.render(), env.unwrapped.render())
    env = _make("DPFullInfo-Experts-v0", render_mode="rgb_array", feedback="bandit")
    _play_all(env, _actions(env))
    assert not np.all(env.render() == RED, axis=-1).any()


# ------------------------------------------------------------- documented limitations
# In-process Python cannot stop these; the README ("What the learner sees") says so and
# points to process isolation. They are asserted, not skipped, to keep the docs true.

@pytest.mark.parametrize("env_id", BANDIT_IDS)
def test_limitation_unwrapped_and_env_chain_reach_the_adversary(env_id):
    env = _make(env_id)
    env.reset(seed=SEED)
    via_chain = env
    while isinstance(via_chain, gym.Wrapper):
        via_chain = via_chain.env
    assert via_chain is env.unwrapped
    foresight = copy.deepcopy(env.unwrapped.adversary)
    predicted = [foresight.next_loss(t) for t in range(1, 4)]
    for a in _actions(env, 3):
        env.step(a)
    np.testing.assert_array_equal(np.array(predicted), _true_thetas(env))


class _FrameWalker(Agent):
    """A bandit learner that looks for the env in its callers' frames and plays the
    arm with the smallest next loss (predicted from a copy of the adversary)."""

    name = "frame-walker"
    feedback = "bandit"

    def setup(self, use_inspect: bool = False) -> None:
        self.use_inspect = use_inspect
        self.foreseen = []

    def _frames(self) -> list:
        if self.use_inspect:
            return [info.frame for info in inspect.stack(context=0)]  # no source lines read
        frames, frame = [], sys._getframe()
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        return frames

    def _find_env(self):
        for frame in self._frames():
            for value in frame.f_locals.values():
                if isinstance(value, gym.Env) and isinstance(value.unwrapped, OnlineLearningEnv):
                    return value
        return None

    def act(self):
        env = self._find_env()
        theta = copy.deepcopy(env.unwrapped.adversary).next_loss(env.unwrapped.round + 1)
        self.foreseen.append(theta)
        return int(np.argmin(theta))

    def update(self, action, feedback) -> None:
        pass


@pytest.mark.parametrize("use_inspect", [False, True])
def test_limitation_stack_frames_lead_to_the_env(use_inspect):
    env = _make("DPBandit-MAB-v0")
    agent = _FrameWalker(env.get_wrapper_attr("problem"), seed=0, use_inspect=use_inspect)
    summary = play(env, agent, seed=SEED, agent_seed=SEED)
    np.testing.assert_array_equal(np.array(agent.foreseen), _true_thetas(env))
    assert summary.learner_loss == pytest.approx(_true_thetas(env).min(axis=1).sum())


def test_limitation_the_experimenters_seed_is_the_secret():
    """Whoever knows the reset seed rebuilds the game: the guard never hands it out, so
    the experimenter must not give it away either (graders: seeds from a secret)."""
    env = _make("DPBandit-MAB-v0")
    actions = _actions(env)
    _play_all(env, actions)
    twin = gym.make(env.unwrapped.spec)  # the experimenter's full spec
    _play_all(twin, actions, seed=SEED)
    np.testing.assert_array_equal(_true_thetas(twin), _true_thetas(env))
