"""A compiled long-horizon path for the linear-loss polytope games (numba).

:func:`play_compiled` plays ``garber-kretzu`` and ``private-projection-free`` (and
their ``-tuned`` variants) on a polytope game with linear losses and the planted-vertex
(two-point box) adversary -- ``DPBandit-Matroid-v2``, ``DPBandit-Flow-v2``,
``DPBandit-SubmodularBase-v2`` and ``DPBandit-Birkhoff-v2`` at their defaults (a
partition or uniform matroid, the s-t paths of a DAG, a cardinality-based submodular
base polytope, a Birkhoff polytope: their linear oracles compiled) -- with the env, the
adversary, the learner (the tree counter with the exact discrete Laplace noise
included) and an O(dim) regret ledger in one compiled loop, 60 to 110 times the Python
path's rounds per CPU second; :func:`play_compiled_seeds` plays
several seeds in parallel threads (the loop releases the GIL).

The Python path is the reference: the game is set up by it (``agents.make``, the
env's reset, the seeds of :func:`agents.play`), the compiled loop continues from the
very generator objects it made, and a game reproduces the Python path's actions and
regret bit for bit, noise on or off (``tests/agents/test_compiled.py``;
``docs/algorithms/long-horizon.md``).

Needs the ``compiled`` extra: ``pip install 'dp-online-envs[compiled]'`` (numba).
"""

try:
    import numba  # noqa: F401
except ImportError as exc:  # the core install lacks it
    raise ImportError("the compiled long-horizon path needs numba: "
                      "pip install 'dp-online-envs[compiled]'") from exc

from agents.compiled.long_horizon import (  # noqa: E402
    SUPPORTED_AGENTS,
    CompiledGame,
    play_compiled,
    play_compiled_seeds,
)

__all__ = ["SUPPORTED_AGENTS", "CompiledGame", "play_compiled", "play_compiled_seeds"]
