"""The leaderboard's score: what one number per learner means (definition ``leaderboard-v4``).

**Games.** Every registered benchmark id (:data:`~dp_online_envs.envs.registry.ENV_IDS`)
at its defaults, at each horizon of :attr:`Benchmark.horizons`, on seed indices ``0 ..
seeds - 1`` whose seeds are derived from a secret (the runner's ``seed_secret``): hidden
from a submitted learner, and the same games for every learner (paired).

**Yardsticks.** On each id, *trivial play* is the ``center`` reference (the domain's
center on ``Box`` actions, a uniformly random arm or subset otherwise; its regret is
linear in ``T`` on every benchmark id) and the *references* are the family's
non-private learners (:data:`FAMILIES`): every registered non-private learner that
plays the id and is a natural baseline for it (on the bandit polytope ids ``exp2`` over
the vertices where it plays, ``fkm`` and both Garber-Kretzu learners; on
``DPFullInfo-Matroid`` ``online-fw``, ``ftrl`` and ``ftal``), so the score's 1 is the
best non-private learner the suite has for the game. At each id and horizon ``T``, the best
reference ``k*`` is the one with the smallest mean regret over the seeds, and the
*margin* is ``D = mean_s R_trivial(s) - mean_s R_k*(s)``.

**Score of a game.** A learner's regret ``R_L(s)`` in the game of seed ``s`` scores::

    x(s) = (R_trivial(s) - R_L(s)) / D

so trivial play scores exactly 0 and the best reference scores exactly 1 on average
(``> 1``: better than every reference; ``< 0``: worse than not learning). The
difference is paired: the learner and trivial play met the same losses. An id and
horizon whose margin is not positive (no reference beats trivial play there) is left
out of every learner's score and named on the page.

**Score of an id.** ``x_id(s)`` is the mean of ``x(s)`` over the id's horizons; the
id's score is the mean over seeds with its Student-t 95% interval
(:func:`~dp_online_envs.lab.experiments.analysis.mean_ci`).

**Benchmark score.** Over the ids of the learner's feedback kind (a bandit learner: the
bandit ids; a full-information learner: the full-information ids), ``y(s)`` is the
mean of ``x_id(s)``, where an id the learner cannot play (it refuses the decision set
or the loss) counts as trivial play (0) and the coverage (ids played of ids of the
kind) is shown next to the score. The benchmark score is ``mean_s y(s)`` with its
Student-t 95% interval over the seeds. The margins ``D`` are the benchmark's fixed
yardstick (the same for every learner), so the interval is the learner's own seed
variation, paired with trivial play's.

**Failures.** A learner with a game that crashed, timed out, broke a limit or played an
infeasible action (projected onto the decision set) has no score: its row gives the
first reason.

**Privacy.** Private learners are scored at each epsilon of :attr:`Benchmark.epsilons`
(``delta = 0``, or :data:`BENCHMARK_DELTA` for a learner that needs ``delta > 0``), each
epsilon a table of its own; the row shows the budget the learner *declares* at the end
of its games, and the verdict of the one-run privacy audit
(:mod:`dp_online_envs.lab.audit.one_run`) of that claim on its feedback kind's audit
game at every scored horizon (``audit_games`` games per horizon, each drawn as a scored
game of that horizon is, so a learner cannot be private only at a horizon no scored game
has) (:data:`AUDIT_GAMES`: ``DPBandit-MAB-v0`` for bandit learners, whose arms it reads,
``DPFullInfo-Experts-v0`` for full-information learners, whose simplex points it
reads; both games' rounds are i.i.d. two-point losses the audit can pair). A bandit
learner that does not play ``DPBandit-MAB-v0`` is audited on the first game of
:data:`AUDIT_GAMES` it plays (polytopes, the ball, subsets; their stochastic
adversaries draw two-point losses too), whose released points the audit reads
(:func:`~dp_online_envs.lab.audit.one_run.guess_explorations`: a post-processing of the
output, valid for any learner). The row names its audit game, with the audit's power
there at that epsilon (the smallest noise cut of that game's reference,
:data:`AUDIT_REFERENCES`, it refutes). A private learner is ranked among the private
learners only when it declares a budget within its table's epsilon that the audit
does not refute: a refuted claim is shown as ``refuted`` beside the score, and a
learner the audit cannot play (it refuses its kind's audit game, or fails in it) is
not ranked either, its row saying why.

Any change to this definition, to :data:`FAMILIES` or to :data:`DEFAULT_BENCHMARK`
bumps :data:`SCORE_VERSION`, which every output records.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np

from dp_online_envs.lab.experiments.analysis import mean_ci

#: The version of the definition above; recorded in every page, CSV and JSON, and part of
#: the key of every stored game seed and audit finding. ``leaderboard-v4``: the audit's
#: fourth arm rule (calibrated returns; each rule's bound at alpha / 4), which changes
#: verdicts ``leaderboard-v3`` gave.
SCORE_VERSION = "leaderboard-v4"
#: Trivial play: the registered reference agent whose regret is the score's 0.
TRIVIAL = "center"
#: The delta of a private learner that refuses ``delta = 0``.
BENCHMARK_DELTA = 1e-6
_STOCHASTIC = {"adversary": "stochastic"}
#: Feedback kind -> the games its learners' privacy audit may play, in order: a learner
#: is audited on the first it can play. Each is ``(env id, env options)`` whose rounds
#: are i.i.d. two-point losses the one-run audit can pair (a stochastic adversary on a
#: box of parameters: ``DPBandit-Linear-v1``'s default l2-ball parameters are not one,
#: so its audit game takes the cube ``theta_set='linf'``).
AUDIT_GAMES: dict[str, tuple[tuple[str, Mapping[str, object]], ...]] = {
    "bandit": (("DPBandit-MAB-v0", {}),
               ("DPBandit-Matroid-v2", _STOCHASTIC),
               ("DPBandit-Flow-v2", _STOCHASTIC),
               ("DPBandit-Convex-v1", _STOCHASTIC),
               ("DPBandit-Submodular-v2", _STOCHASTIC),
               ("DPBandit-Linear-v1", {**_STOCHASTIC, "loss_kwargs": {"theta_set": "linf"}})),
    "full": (("DPFullInfo-Experts-v0", {}),),
}
#: Audit game id -> the private reference whose noise cuts measure the audit's power there.
AUDIT_REFERENCES: dict[str, str] = {
    "DPBandit-MAB-v0": "private-exp2", "DPBandit-Matroid-v2": "bandit-pftal",
    "DPBandit-Flow-v2": "bandit-pftal", "DPBandit-Convex-v1": "bandit-pftal",
    "DPBandit-Submodular-v2": "bandit-submod-pftal", "DPBandit-Linear-v1": "private-scrible",
    "DPFullInfo-Experts-v0": "private-ftrl"}


@dataclasses.dataclass(frozen=True)
class Family:
    """The learners of one game (an id's name, without its version).

    Attributes:
        nonprivate: The non-private references (the score's 1 is the best of them);
            the first is the family's own, which the separation study plays.
        private: The family's private learner (with which the separation study,
            ``benchmarks/studies/separation``, checks the id separates).
        private_kwargs: Its options (besides epsilon).
    """

    nonprivate: tuple[str, ...]
    private: str
    private_kwargs: Mapping[str, float] = dataclasses.field(default_factory=dict)


_ARMS = Family(("exp3", "ucb1", "thompson"), "private-exp2")
_CONVEX_BANDIT = Family(("fkm",), "bandit-pftal")
_POLYTOPE_BANDIT = Family(("garber-kretzu", "garber-kretzu-tuned", "exp2", "fkm"),
                          "private-projection-free")
#: Game name (an id without ``-vN``) -> its :class:`Family`.
FAMILIES: dict[str, Family] = {
    "DPFullInfo-Experts": Family(("hedge",), "private-ftrl"),
    "DPBandit-MAB": _ARMS,
    "DPFullInfo-Sphere": Family(("ftrl",), "private-ftrl"),
    "DPFullInfo-Cube": Family(("ftrl",), "private-ftrl"),
    "DPBandit-Linear": Family(("scrible",), "private-scrible"),
    "DPFullInfo-Convex": Family(("ftal",), "pftal"),
    "DPFullInfo-StronglyConvex": Family(("ftal",), "pftal"),
    "DPBandit-Convex": _CONVEX_BANDIT,
    "DPBandit-StronglyConvex": _CONVEX_BANDIT,
    "DPBandit-Matroid": _POLYTOPE_BANDIT,
    "DPBandit-Flow": _POLYTOPE_BANDIT,
    "DPBandit-SubmodularBase": Family(("garber-kretzu", "garber-kretzu-tuned", "fkm"),
                                      "private-projection-free"),
    "DPBandit-Birkhoff": _POLYTOPE_BANDIT,
    "DPFullInfo-Matroid": Family(("online-fw", "ftrl", "ftal"), "private-ftpl",
                                 {"delta": BENCHMARK_DELTA}),
    "DPFullInfo-Submodular": Family(("hazan-kale-submodular",), "submod-pftal"),
    "DPBandit-Submodular": Family(("hazan-kale-submodular-bandit",), "bandit-submod-pftal"),
    "DPFullInfo-Classification": Family(("ftal",), "pftal"),
    "DPBandit-Classes": _ARMS,
    "DPFullInfo-Portfolio": Family(("ons",), "pftal"),
}


def family(env_id: str) -> Family:
    """The :class:`Family` of a registered id (any version of its game).

    Raises:
        ValueError: An id whose game has no family (named, with the games that have).
    """
    name = env_id.rsplit("-v", 1)[0]
    if name not in FAMILIES:
        raise ValueError(f"{env_id!r} has no learner family; expected an id of one of "
                         f"{sorted(FAMILIES)}")
    return FAMILIES[name]


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """The games a leaderboard plays (the default is :data:`DEFAULT_BENCHMARK`).

    Attributes:
        ids: The ids scored, at their defaults.
        horizons: ``T`` of each id's games.
        seeds: Seed indices per id and horizon (the seeds themselves come from the
            secret).
        epsilons: The epsilons private learners are scored at.
        audit_horizon: ``None`` (the benchmark's): the audit plays every scored horizon;
            a ``T`` plays the audit at that horizon only, a setting that is not the
            benchmark's (its page says so), kept for small trial runs.
        audit_games: Audit games per learner, epsilon and audited horizon.
        power_factors: Noise cuts of the audit's references (:data:`AUDIT_REFERENCES`)
            whose refutation measures the audit's power.
    """

    ids: tuple[str, ...]
    horizons: tuple[int, ...] = (1024, 4096)
    seeds: int = 4
    epsilons: tuple[float, ...] = (0.1, 1.0, 10.0)
    audit_horizon: int | None = None
    audit_games: int = 16
    power_factors: tuple[float, ...] = (3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)

    def __post_init__(self) -> None:
        if not self.ids:
            raise ValueError("ids is empty: a benchmark scores at least one id")
        for env_id in self.ids:
            family(env_id)
        for name, values in (("horizons", self.horizons), ("epsilons", self.epsilons)):
            if not values or any(not (isinstance(v, (int, float)) and v > 0) for v in values):
                raise ValueError(f"{name}={values!r}, expected a non-empty tuple of numbers > 0")
        if any(isinstance(h, bool) or not isinstance(h, int) for h in self.horizons):
            raise ValueError(f"horizons={self.horizons!r}, expected whole numbers")
        for name in ("seeds", "audit_horizon", "audit_games"):
            value = getattr(self, name)
            if name == "audit_horizon" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}, expected an integer >= 1")
        if self.seeds < 2:
            raise ValueError(f"seeds={self.seeds}, expected at least 2 (the 95% interval "
                             "needs two seeds)")

    @property
    def audit_horizons(self) -> tuple[int, ...]:
        """The horizons the audit plays: every scored one (or ``audit_horizon``)."""
        return self.horizons if self.audit_horizon is None else (self.audit_horizon,)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON values."""
        return {k: list(v) if isinstance(v, tuple) else v
                for k, v in dataclasses.asdict(self).items()}


def default_benchmark() -> Benchmark:
    """The benchmark of :data:`SCORE_VERSION`: every registered id, ``T`` in (1024,
    4096), 4 seeds, epsilon in (0.1, 1, 10), audits of 16 games at each scored ``T``
    (the games scored, drawn as they are), the power measured at noise cuts up to 1000
    (the full-information audit's reach)."""
    from dp_online_envs.envs.registry import ENV_IDS

    return Benchmark(ids=tuple(ENV_IDS))


# --------------------------------------------------------------------- arithmetic
@dataclasses.dataclass(frozen=True)
class Yardstick:
    """Trivial play and the best reference at one id and horizon.

    Attributes:
        trivial: Trivial play's regret per seed.
        best: The best reference's name.
        reference_means: Each reference's mean regret.
        margin: ``D = mean(trivial) - mean(best)`` (``<= 0``: not scorable).
    """

    trivial: np.ndarray
    best: str
    reference_means: Mapping[str, float]
    margin: float

    @property
    def scorable(self) -> bool:
        """Whether some reference beats trivial play here (``D > 0``)."""
        return bool(self.margin > 0)


def yardstick(trivial: Sequence[float], references: Mapping[str, Sequence[float]]) -> Yardstick:
    """The yardstick of one id and horizon from the regrets per seed.

    Args:
        trivial: Trivial play's regret per seed.
        references: Each reference's regret per seed (the same seeds, same order).

    Raises:
        ValueError: No reference, or samples of different lengths.
    """
    t = np.asarray(trivial, np.float64)
    if not references:
        raise ValueError("references is empty: the score's 1 needs a reference")
    means = {}
    for name, values in references.items():
        v = np.asarray(values, np.float64)
        if v.shape != t.shape:
            raise ValueError(f"reference {name!r} has {v.size} regrets for {t.size} seeds of "
                             "trivial play; expected one per seed")
        means[name] = float(v.mean())
    best = min(sorted(means), key=lambda n: means[n])
    return Yardstick(t, best, means, float(t.mean()) - means[best])


def game_scores(regrets: Sequence[float], stick: Yardstick) -> np.ndarray:
    """``x(s) = (R_trivial(s) - R_L(s)) / D`` per seed.

    Raises:
        ValueError: A yardstick that is not scorable, or a sample of another length.
    """
    r = np.asarray(regrets, np.float64)
    if r.shape != stick.trivial.shape:
        raise ValueError(f"{r.size} regrets for {stick.trivial.size} seeds; expected one per "
                         "seed")
    if not stick.scorable:
        raise ValueError(f"margin {stick.margin:g} <= 0: no reference beats trivial play, "
                         "so this game has no score")
    return (stick.trivial - r) / stick.margin


@dataclasses.dataclass(frozen=True)
class Interval:
    """A score with its Student-t 95% interval over the seeds.

    Attributes:
        score: The mean.
        lo, hi: The interval's ends.
        per_seed: The values averaged.
    """

    score: float
    lo: float
    hi: float
    per_seed: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Interval:
        """The mean of ``values`` with its interval."""
        m, lo, hi = mean_ci(values)
        return cls(m, lo, hi, tuple(float(v) for v in values))


def id_score(per_horizon: Sequence[np.ndarray]) -> Interval:
    """An id's score from its scorable horizons' :func:`game_scores` (mean over
    horizons per seed, then over seeds).

    Raises:
        ValueError: No horizon.
    """
    if not per_horizon:
        raise ValueError("no scorable horizon: the id has no score")
    return Interval.of(np.mean(np.stack(per_horizon), axis=0))


def benchmark_score(per_id: Mapping[str, Interval | None], seeds: int) -> Interval:
    """The benchmark score: per seed, the mean over the ids of the learner's kind of
    its id scores (``None``: an id it cannot play, counted as 0), then over seeds.

    Args:
        per_id: Every scorable id of the learner's feedback kind.
        seeds: The number of seeds.

    Raises:
        ValueError: No id.
    """
    if not per_id:
        raise ValueError("no scorable id of the learner's feedback kind")
    rows = [np.zeros(seeds) if s is None else np.asarray(s.per_seed) for s in per_id.values()]
    return Interval.of(np.mean(np.stack(rows), axis=0))


def finite(x: float) -> float | None:
    """``x``, or ``None`` when it is not finite (for JSON and CSV)."""
    return float(x) if math.isfinite(x) else None


__all__ = ["AUDIT_GAMES", "AUDIT_REFERENCES", "BENCHMARK_DELTA", "FAMILIES", "SCORE_VERSION",
           "TRIVIAL", "Benchmark", "Family", "Interval", "Yardstick", "benchmark_score",
           "default_benchmark", "family", "finite", "game_scores", "id_score", "yardstick"]
