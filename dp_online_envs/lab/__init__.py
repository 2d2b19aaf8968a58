"""The lab: where learners are played against the games, measured, audited and graded.

``dp_online_envs`` is three layers, each importing only the ones below it:

1. the game (the rest of ``dp_online_envs``: problem, domains, losses, adversaries, envs,
   wrappers, hindsight comparators, validation, and the one round loop and release
   channel that learners and the lab share) -- what a Gymnasium user imports;
2. the learners (the ``agents`` package), which import the game only;
3. the lab (this package), the only code that imports ``agents``, and which nothing
   outside it imports.

It is named for what it holds: the experimenter's bench, not the world the learner plays
in. Its modules form layers of their own: :mod:`.sandbox` (confinement) <
:mod:`.isolation` (a learner in its own process) < :mod:`.experiments` (games, sweeps,
results, reports; the ``agents`` registry is reached in one function,
:func:`~dp_online_envs.lab.experiments.resolver.default_resolver`) < :mod:`.audit`
(black-box privacy audits) < :mod:`.grading` (course assignments) < :mod:`.cli` (the
``dp-online`` command, the composition root); :mod:`.html` holds the HTML helpers the
reports share.

Importing ``dp_online_envs.lab`` imports none of them: each is imported on its own.
"""
