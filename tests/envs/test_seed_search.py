"""No public generator gives the game's seed away.

Whoever knows a game's seed and its public spec rebuilds the game and foresees every
loss; a generator derived from the seed gives a small seed away to a search (0.1 CPU
second for seeds below 10^4). The search here tries every way a scheme could derive a
generator from a reset seed (``SeedSequence(s)`` itself, as ``np.random.default_rng(s)``
and gymnasium's seeding do, and its first spawned children) against every generator a
learner can reach through each door, and fails if it finds the seed.
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from dp_online_envs.envs.vector_env import LinearVectorEnv

SEED = 321  # small on purpose: the search covers it
SEARCH = range(1000)
B = 3


def _first_words(generator: np.random.Generator) -> tuple[int, ...]:
    """The first four 64-bit words of a copy of ``generator`` (the original is left)."""
    return tuple(copy.deepcopy(generator).bit_generator.random_raw(4).tolist())


def _derived(seed: int) -> list[tuple[int, ...]]:
    """The first words of every generator a scheme derives from ``seed``: the root
    sequence and its first three spawned children (``spawn(k)[i]`` for ``i < 3``)."""
    root = np.random.SeedSequence(seed)
    return [tuple(np.random.PCG64(seq).random_raw(4).tolist())
            for seq in (root, *root.spawn(3))]


def _found(generators: list[np.random.Generator]) -> list[int]:
    """The seeds in :data:`SEARCH` some generator of ``generators`` derives from."""
    wanted = {_first_words(g) for g in generators}
    return [s for s in SEARCH if wanted.intersection(_derived(s))]


def test_the_search_finds_a_seed_derived_generator():
    """The search is strong enough: it finds the seed of a generator spawned from it
    (the scheme the guard used to have) and of the env's own generator, which only
    ``.unwrapped`` reaches (a documented limit of in-process play)."""
    env = gym.make("DPBandit-MAB-v0", horizon=5)
    env.reset(seed=SEED)
    spawned = np.random.Generator(np.random.PCG64(np.random.SeedSequence(SEED).spawn(2)[1]))
    assert _found([spawned]) == [SEED]
    assert _found([env.unwrapped.np_random]) == [SEED]


def _scalar_generators(env: gym.Env) -> list[np.random.Generator]:
    return [env.np_random, env.get_wrapper_attr("np_random"),
            env.action_space.np_random, env.observation_space.np_random,
            env.get_wrapper_attr("action_space").np_random,
            env.get_wrapper_attr("problem").domain.action_space.np_random]


@pytest.mark.parametrize("env_id", ["DPBandit-MAB-v0", "DPFullInfo-Sphere-v1",
                                    "DPBandit-Matroid-v2"])
def test_no_scalar_door_gives_the_seed_away(env_id):
    env = gym.make(env_id, horizon=5)
    env.reset(seed=SEED)
    first = _scalar_generators(env)
    env.reset(seed=SEED)  # and after a second reset with the seed
    assert _found(first + _scalar_generators(env)) == []


def test_no_vector_door_gives_the_seeds_away():
    venv = LinearVectorEnv("DPBandit-MAB-v0", B, horizon=5)
    venv.reset(seed=SEED)  # games SEED, SEED + 1, SEED + 2
    generators = [*venv.np_random, *venv.get_attr("np_random"),
                  venv.single_action_space.np_random, venv.action_space.np_random,
                  *(s.np_random for s in venv.get_attr("action_space"))]
    assert _found(generators) == []


def test_no_door_of_make_vec_gives_the_seeds_away():
    envs = gym.make_vec("DPBandit-MAB-v0", num_envs=B, horizon=5)
    envs.reset(seed=SEED)
    generators = [*envs.get_attr("np_random"), *envs.np_random,
                  envs.single_action_space.np_random, envs.action_space.np_random,
                  *(s.np_random for s in envs.get_attr("action_space"))]
    assert _found(generators) == []


# ------------------------------------------------------------ the learner's own seed
def _derived_seeds(seed: int) -> set[int]:
    """Every integer agent seed a scheme derives from ``seed``: ``seed`` itself and the
    63-bit seeds of its root sequence and first children (``seed_of``), among them the
    one ``agents.play`` used to give (``game_seeds(seed)[1]``)."""
    from dp_online_envs.loop import seed_of

    root = np.random.SeedSequence(seed)
    return {seed, *(seed_of(seq) for seq in (root, *root.spawn(3)))}


def _seed_search(agent_seeds: list[int], generators: list[np.random.Generator]) -> list[int]:
    """The seeds in :data:`SEARCH` that an agent seed or an agent generator comes from."""
    ints = set(agent_seeds)
    return sorted({s for s in SEARCH if ints & _derived_seeds(s)} | set(_found(generators)))


class _SeedKeeper:
    """A learner that keeps what it is seeded with (and plays arm 0)."""

    def __init__(self, problem) -> None:
        self.problem = problem
        self.seeds: list[int] = []
        self.generators: list[np.random.Generator] = []

    def reset(self, seed=None) -> None:
        self.seeds.append(seed)
        self.generators.append(np.random.default_rng(seed))

    def act(self):
        return 0

    def update(self, action, feedback) -> None:
        pass


def test_the_search_finds_the_seed_play_used_to_derive():
    from dp_online_envs.loop import game_seeds

    keeper = _SeedKeeper(None)
    keeper.reset(game_seeds(SEED)[1])
    assert _seed_search(keeper.seeds, keeper.generators) == [SEED]


def test_play_gives_the_learner_no_seed_of_the_game():
    """``agents.play(env, agent, seed=s)`` with a small ``s``: neither the seed the
    learner is reset with nor its generator leads back to ``s``; the summary records the
    learner's seed, and playing with it replays the game."""
    import agents

    env = gym.make("DPBandit-MAB-v0", horizon=5)
    keeper = _SeedKeeper(env.get_wrapper_attr("problem"))
    first = agents.play(env, keeper, seed=SEED)
    second = agents.play(env, keeper, seed=SEED)
    assert _seed_search(keeper.seeds, keeper.generators) == []
    assert keeper.seeds == [first.agent_seed, second.agent_seed]
    assert first.agent_seed != second.agent_seed  # fresh entropy each game
    again = agents.play(env, keeper, seed=SEED, agent_seed=first.agent_seed)
    assert keeper.seeds[-1] == first.agent_seed and again.agent_seed == first.agent_seed


def test_play_batch_gives_the_learners_no_seed_of_the_games():
    import agents
    from agents.vector import make_vector

    venv = LinearVectorEnv("DPBandit-MAB-v0", B, horizon=5)
    learner = make_vector("exp3", venv.problem)
    seen: list[int] = []
    reset_batch = learner.reset_batch
    learner.reset_batch = lambda seeds: (seen.extend(seeds), reset_batch(seeds))
    summaries = agents.play_batch(venv, learner, seeds=[SEED, SEED + 1, SEED + 2])
    assert seen == [s.agent_seed for s in summaries] and len(set(seen)) == B
    assert _seed_search(seen, []) == []
