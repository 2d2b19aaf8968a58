"""``gym.make_vec(id, num_envs=B)``: B scalar games in Gymnasium's ``SyncVectorEnv``,
with the vector env's own doors guarded as the scalar guard's are.

Gymnasium's own ``SyncVectorEnv`` keeps what ``gym.make_vec`` was given: its ``spec``
carries every option (an adversary object, a replay of the losses, the adversary's
mean) and its ``env_fns`` hold them in closures, so a learner holding the vector env
would read its coming losses there. Every registered id has
:data:`SYNC_ENTRY_POINT` as its vector entry point, so ``gym.make_vec``'s default mode
builds :class:`GuardedSyncVectorEnv` instead: the same ``SyncVectorEnv`` (step, reset,
autoreset, ``info`` and seeding unchanged, each game ``gym.make(id, **options)`` behind
its :class:`~dp_online_envs.wrappers.FeedbackGuard`) whose ``spec`` is the public spec,
whose ``env_fns`` are withheld, and whose ``get_attr``/``call`` answer only the scalar
guard's :data:`~dp_online_envs.wrappers.feedback.LEARNER_ATTRIBUTES`.

Gymnasium's own vectorizers stay one argument away (``vectorization_mode="sync"`` or
``"async"``, needed for ``vector_kwargs`` and ``wrappers``, which Gymnasium refuses in
the entry-point mode): they keep the options in ``spec`` and ``env_fns`` as above, so
do not hand one to a learner that must not see the adversary's options.
"""

from __future__ import annotations

import functools
from typing import Any, NoReturn

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from dp_online_envs.envs.registry import SYNC_ENTRY_POINT
from dp_online_envs.validation import check_int
from dp_online_envs.wrappers.feedback import LEARNER_ATTRIBUTES, public_spec

__all__ = ["SYNC_ENTRY_POINT", "GuardedSyncVectorEnv", "make_sync_vector_env"]

_WITHHELD_DOORS = ("GuardedSyncVectorEnv withholds {name!r}: the learner's doors are "
                   "get_attr/call of " + str(sorted(LEARNER_ATTRIBUTES)) + " (env.envs "
                   "and their .unwrapped/.env chains are not protected in-process; run "
                   "untrusted learners in their own process)")


def make_sync_vector_env(num_envs: int = 1, env_id: str = "DPBandit-MAB-v0",
                         **options: Any) -> GuardedSyncVectorEnv:
    """``GuardedSyncVectorEnv(env_id, num_envs, **options)``: the vector entry point of
    every registered id (:data:`SYNC_ENTRY_POINT`)."""
    return GuardedSyncVectorEnv(env_id, num_envs, **options)


class GuardedSyncVectorEnv(gym.vector.SyncVectorEnv):
    """B scalar games of one id, ``gym.make(env_id, **options)`` each, in Gymnasium's
    ``SyncVectorEnv``: what ``gym.make_vec(env_id, num_envs=B, **options)`` returns.

    Everything Gymnasium's ``SyncVectorEnv`` does is unchanged (it is one); the doors of
    the vector env itself are guarded:

    * ``spec`` is the public spec (:func:`~dp_online_envs.wrappers.feedback.public_spec`):
      the adversary options given read ``adversary="<withheld by FeedbackGuard>",
      adversary_kwargs=None``; ``gym.make_vec(envs.spec)`` remakes the games when none
      was given, and refuses (``ValueError``) when one was withheld.
    * ``env_fns`` (which would hold the options) raises ``AttributeError``.
    * ``get_attr(name)`` and ``call(name, ...)`` answer only the scalar guard's
      :data:`~dp_online_envs.wrappers.feedback.LEARNER_ATTRIBUTES` (each game's
      guard answers them); ``set_attr`` is refused. ``np_random`` is the games'
      learner generators, ``np_random_seed`` their ``-1``.
    * ``copy.deepcopy`` and ``pickle`` refuse (``TypeError``): a copy would hold the
      adversaries.

    ``envs`` holds the B scalar envs, each the env ``gym.make`` returns (its guard's
    doors as in the scalar game; its ``.unwrapped``/``.env`` chain is the documented
    in-process limit).

    Args:
        env_id: A registered id.
        num_envs: ``B >= 1``.
        autoreset_mode: Gymnasium's :class:`~gymnasium.vector.AutoresetMode` (or its
            value), default ``NEXT_STEP`` (in ``gym.make_vec``'s default mode, pass it
            as a keyword: Gymnasium refuses ``vector_kwargs`` there).
        copy: As ``SyncVectorEnv`` (copy the observations returned).
        **options: The id's options, as ``gym.make`` takes them.

    Raises:
        ValueError: ``num_envs`` not an integer >= 1, an unknown ``autoreset_mode``, or
            an option the id refuses (as ``gym.make``).
    """

    def __init__(self, env_id: str, num_envs: int, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 copy: bool = True, **options: Any) -> None:
        num_envs = check_int("num_envs", num_envs, 1)
        try:
            mode = (autoreset_mode if isinstance(autoreset_mode, AutoresetMode)
                    else AutoresetMode(autoreset_mode))
        except ValueError:
            raise ValueError(f"autoreset_mode={autoreset_mode!r}, expected one of "
                             f"{[m.value for m in AutoresetMode]}") from None
        self._public_spec: gym.envs.registration.EnvSpec | None = None
        make = functools.partial(gym.make, env_id, **options)
        super().__init__([make] * num_envs, copy=copy, autoreset_mode=mode)

    @property
    def env_fns(self) -> NoReturn:
        """Withheld: the functions that make the games hold their options."""
        raise AttributeError(_WITHHELD_DOORS.format(name="env_fns"))

    @env_fns.setter
    def env_fns(self, value: Any) -> None:
        """Kept nowhere (``SyncVectorEnv.__init__`` sets it and only iterates it)."""

    @property
    def spec(self) -> gym.envs.registration.EnvSpec | None:
        """The public spec: the one ``gym.make_vec`` gave, the adversary options withheld."""
        return public_spec(self._public_spec)

    @spec.setter
    def spec(self, value: gym.envs.registration.EnvSpec | None) -> None:
        self._public_spec = public_spec(value)  # the options given are never kept

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``SyncVectorEnv.call`` for a name in the scalar guard's
        :data:`~dp_online_envs.wrappers.feedback.LEARNER_ATTRIBUTES`.

        Raises:
            AttributeError: For every other name.
        """
        if name not in LEARNER_ATTRIBUTES:
            raise AttributeError(_WITHHELD_DOORS.format(name=name))
        return super().call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``call(name)`` (as ``SyncVectorEnv.get_attr``)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> NoReturn:
        """Refused: a game is configured when the env is made.

        Raises:
            AttributeError: Always.
        """
        raise AttributeError(f"GuardedSyncVectorEnv refuses set_attr({name!r}, ...): a game "
                             "is configured when the env is made")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError("a GuardedSyncVectorEnv cannot be copied or pickled: the copy would "
                        "hold the adversaries (stepping it foresees the losses); make a new "
                        "one with gym.make_vec")

    def __deepcopy__(self, memo: dict) -> NoReturn:
        self.__reduce_ex__(4)
