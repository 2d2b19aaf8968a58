"""What every registered game has played, version by version: the version history of
the ids (Gymnasium keeps it in the env's docstring; here it is data, which the docstring
of :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv` and the env pages of the
site are written from).

Any change to what an id plays bumps its version; the former version stays registered
and builds the former game (``gym.make`` warns that it is out of date). Each entry says
what the version plays that the one before did not, in the docstrings' markup.
"""

from __future__ import annotations

import textwrap

#: Groups of games (ids without their version) that share one history, and that
#: history: ``(version, what it plays)``, newest first.
GROUPS: tuple[tuple[tuple[str, ...], tuple[tuple[int, str], ...]], ...] = (
    (('DPFullInfo-Experts', 'DPBandit-MAB', 'DPFullInfo-Classification', 'DPBandit-Classes'),
     (
         (0, 'initial release (unchanged since).'),
     )),
    (('DPFullInfo-Sphere', 'DPBandit-Linear'),
     (
         (1, "``adversary='stochastic'``."),
         (0, "initial release, ``adversary='oblivious'``."),
     )),
    (('DPFullInfo-Cube',),
     (
         (2, "``dim=10, adversary='planted-vertex'``, linear losses with parameters in "
          "``[-1, 1]^10`` (``loss_kwargs={'theta_set': 'linf'}``, B = 10): the mean is "
          '``0.9 c`` with ``c`` a random permutation of ``linspace(-1, 1, 10)``, so the '
          'vertex ``-sign(c)`` is the unique best with margin ``2 * 0.9 / 9 = 0.2`` a '
          'round and trivial play (the center) loses 5.0 a round, on every seed.'),
         (1, "``adversary='stochastic'``, ``loss_kwargs={'theta_set': 'l1'}`` (a random mean"
          ' in the l1 ball: the best two vertices differ by ``2 min_i |mu_i|``, as little'
          ' as 4e-5 a round over game seeds 0-99).'),
         (0, "initial release, ``adversary='oblivious'``, ``loss_kwargs={'theta_set': "
          "'l1'}``."),
     )),
    (('DPFullInfo-Submodular', 'DPBandit-Submodular'),
     (
         (2, "``n=8, adversary='planted-vertex'``: a random set of 4 elements planted as the"
          ' unique best of the concave-of-modular mean, every other set worse by at least'
          ' ``0.01877`` a round (0.0214 for the planted sets of size 4) and a uniform '
          'subset losing at least 0.207 a round over game seeds 0-99 (B = 1).'),
         (1, "``adversary='stochastic'`` (random means, whose best two sets can nearly tie: "
          'a margin of 1.3e-4 a round, and a uniform subset losing 0.069 a round, on the '
          'worst of game seeds 0-99).'),
         (0, "initial release, ``adversary='oblivious'``."),
     )),
    (('DPFullInfo-Convex', 'DPFullInfo-StronglyConvex'),
     (
         (1, "``adversary='planted'`` (the loss parameters' mean pulled to a random vertex "
          'of their box, so the best action is far from the center).'),
         (0, "initial release, ``adversary='oblivious'``."),
     )),
    (('DPBandit-Convex', 'DPBandit-StronglyConvex'),
     (
         (1, "``dim=2, adversary='planted'`` (in dimension 2 the smoothing radii of ``fkm`` "
          'and ``bandit-pftal`` stay below the clamp of :mod:`agents.bandit.smoothing` '
          'from T = 2^12 on).'),
         (0, "initial release, ``dim=5, adversary='oblivious'``."),
     )),
    (('DPFullInfo-Matroid',),
     (
         (2, "``n=10, rank=4, adversary='planted-vertex'`` (hull dimension 10; a planted "
          'basis is the unique best vertex with margin 0.9 a round, and trivial play '
          'loses 4.15 a round).'),
         (1, "``n=8, rank=3, adversary='stochastic'``."),
         (0, "initial release, ``n=8, rank=3, adversary='oblivious'``."),
     )),
    (('DPBandit-Matroid',),
     (
         (2, "``n=10, rank=4, adversary='planted-vertex'`` (hull dimension 10, 386 vertices;"
          ' the planted basis is the unique best vertex with margin 0.9 a round; trivial '
          "play loses 4.15 a round). ``matroid='partition'`` and ``matroid='graphic'`` "
          'select the other matroids.'),
         (1, "``n=3, rank=2, loss='linear', adversary='planted'`` (hull dimension 3, so that"
          ' the scale-aware smoothing radius of ``garber-kretzu`` shrinks the domain by '
          "``alpha ~ 0.15-0.35`` at T = 2^14 instead of the clamp's 1/2)."),
         (0, "initial release, ``n=8, rank=3, loss='distance', adversary='oblivious'``. "
          "(Between the two, for a day, the id played ``adversary='planted'`` with v0's "
          'sizes under the v0 name: ``gym.make("DPBandit-Matroid-v1", n=8, rank=3, '
          'loss="distance")`` is that game.)'),
     )),
    (('DPBandit-Flow',),
     (
         (2, "``grid=(3, 4), adversary='planted-vertex'`` (10 paths, hull dimension 6; "
          'margin 3.6, trivial play at least 5.3 a round).'),
         (1, "``grid=(2, 3), loss='linear', adversary='planted'`` (hull dimension 2)."),
         (0, "initial release, ``grid=(3, 4), loss='distance', adversary='oblivious'`` "
          "(between the two: ``adversary='planted'`` with v0's grid and loss)."),
     )),
    (('DPBandit-SubmodularBase',),
     (
         (2, "``n=7, adversary='planted-vertex'`` (hull dimension 6, 5040 vertices; margin "
          '0.0051, trivial play 0.87 a round).'),
         (1, "``n=2, loss='linear', adversary='planted'`` (hull dimension 1)."),
         (0, "initial release, ``n=6, loss='distance', adversary='oblivious'`` (between the "
          "two: ``adversary='planted'`` with v0's ``n`` and loss)."),
     )),
    (('DPBandit-Birkhoff',),
     (
         (2, "``n=4, loss='linear', adversary='planted-vertex'`` (hull dimension 9, 24 "
          'vertices; margin 3.6, trivial play 5.4 a round).'),
         (1, "``n=2, loss='absolute', adversary='planted'`` (hull dimension 1)."),
         (0, "initial release, ``n=4, loss='distance', adversary='oblivious'`` (between the "
          "two: ``adversary='planted'`` with v0's ``n`` and loss)."),
     )),
    (('DPBandit-ContextualLinear',),
     (
         (0, "initial release: ``n_arms=5``, contexts in R^5 (``loss_kwargs={'context_dim': "
          "5}``), ``adversary='stochastic-linear'`` (hidden ``theta_a = (1, u_a)/sqrt(2)``,"
          ' contexts ``(1, z_t)/sqrt(2)`` with ``u_a``, ``z_t`` uniform on the sphere, '
          'Bernoulli losses of mean ``<theta_a, c_t>``), ``horizon=2000``; regret against '
          'the per-context best arm; ``adversary=\'adversarial-context\'`` plays oblivious '
          'contexts in phases of doubling length instead.'),
     )),
    (('DPBandit-ContextualClasses',),
     (
         (0, "initial release: ``dataset='wine'`` (178 examples, 13 features, 3 classes; "
          "also ``'breast-cancer'`` and ``'digits'``), ``adversary='data'`` (an example "
          'drawn uniformly with replacement each round, context ``(1, x_i)/sqrt(2)`` with '
          '``x_i`` the standardized features scaled to unit norm, losses ``1[a != y_i]``),'
          " ``horizon=2000``; regret against the per-context majority label."),
     )),
    (('DPFullInfo-Portfolio',),
     (
         (1, "the stocks GE and MSFT, ``tickers=('GE', 'MSFT')``, relatives in ``[0.8, "
          '1.2]`` (every relative of the two: nothing clipped), ``horizon=8312`` (the '
          "whole range), where the uniform portfolio's regret is linear in T and ``ons`` "
          'halves it; registered.'),
         (0, 'all 20 stocks, ``tickers=datasets.SP500_TICKERS``, relatives clipped to '
          "``loss_kwargs={'r_min': 0.5, 'r_max': 2.0}``, ``horizon=2048``: built by "
          "``build_env`` only, since it did not separate (the uniform portfolio's regret "
          'grew like ``T^0.26`` and ``ons`` got 0.92 of it); registered now as a former '
          'version.'),
     )),
)

#: Game name -> its history, ``(version, what it plays)``, newest first.
VERSION_HISTORY: dict[str, tuple[tuple[int, str], ...]] = {
    name: entries for names, entries in GROUPS for name in names}


def history_section(indent: str = "    ") -> str:
    """The history as the bullet list of a docstring's ``Version History`` section:
    one bullet per group of games, one sub-bullet per version."""
    lines = []
    for names, entries in GROUPS:
        head = ", ".join(f"``{n}``" for n in names) + ":"
        lines += textwrap.wrap(head, 88, initial_indent=indent + "* ",
                               subsequent_indent=indent + "  ") + [""]
        for version, text in entries:
            lines += textwrap.wrap(f"v{version}: {text}", 88, initial_indent=indent + "  - ",
                                   subsequent_indent=indent + "    ",
                                   break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + "\n"
