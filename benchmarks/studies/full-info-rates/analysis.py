"""Regret rates of the Agarwal-Singh learners, "privacy for free", counters at equal
privacy (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the markdown
of the ``full-info-rates`` section of ``docs/results.md``:

0. rates at T up to 1e5 on ``DPFullInfo-Experts-v0`` and ``DPBandit-MAB-v0`` at their
   defaults: each learner's mean regret at every ``T``, the slope of the means and the
   mean per-seed slope [Student-t 95% interval], whether that interval holds the
   theorems' exponent 0.5, and three figures of the explicit bound (its local slope at
   the largest ``T``, the horizon from which that slope stays within 0.1 of 0.5, the
   horizon from which it is below trivial play's regret) (:func:`rates_block`); then
   ``exp2``'s and ``private-exp2``'s exploration split off (:func:`split_block`, from
   the stored split of :func:`store_splits`, ``python benchmarks/studies/
   full-info-rates/analysis.py --split RESULTS_DIR``): both play ``p_t = (1 - gamma) q_t
   + gamma / K``, so given ``q_t`` the round's expected loss is ``<q_t, l_t> + gamma
   (mean(l_t) - <q_t, l_t>)``; each game is replayed (its realized regret checked
   against the record's, exactly) and the second term, the exploration's cost, summed
   per round, the remainder being the weights' own regret. Their slope rows are the
   theorem's only where the split's regime column says ``theorem's regime``: ``gamma <
   1`` at both horizons, the remainder the larger part at both and its per-seed slope
   interval within ``0.5 +- 0.1``, on both seed sets (:func:`paired_stats.regime`, the
   rule of every split); not claimed
   while no split is stored. Below it, per learner, the exploration's share at the
   largest ``T`` (Fieller) and the remainder's per-seed slope over the last three
   horizons (:func:`split_summary`);
1. slopes in ``T`` on the slopes' horizons next to the exponent each paper promises
   (:func:`slopes_block`);
2. private over non-private regret on the experts game as ``T`` grows: paired ratios
   with Fieller's interval, and whether ``private-ftrl``'s ratio to ``hedge`` falls
   over the last horizons (its per-seed slope minus hedge's, paired t)
   (:func:`free_block`);
3. ``private-ftrl`` with Gaussian noise and every counter at one (epsilon, delta): mean
   regret [95% interval] with the counter's worst noise std, and each counter's paired
   ratio to the factorization (:func:`counters_block`).

A side is named only where its interval excludes the null value (``~``: the
interval holds the null, neither side shown).
"""

from __future__ import annotations

import math
import pathlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

from dp_online_envs.lab.experiments.rates import (  # noqa: E402
    below_from,
    local_slope,
    slope_reached,
)

STUDY = ps.Study(__file__)
EXPERTS, MAB = "DPFullInfo-Experts-v0", "DPBandit-MAB-v0"
TRIVIAL = "center"
#: The exponent of ``sqrt(T)`` the theorems promise (others: :data:`EXPONENT`).
HALF = 0.5
#: Online Frank-Wolfe's bound is ``T^{3/4}`` (Hazan-Kale 2012).
EXPONENT = {"online-fw": 0.75}
#: Section 0: ``(env id, bound kind, non-private learner, private learner)``.
RATE_BLOCKS = ((EXPERTS, "ftrl", "hedge", "private-ftrl"),
               (MAB, "exp2", "exp2", "private-exp2"))
#: Section 2: the non-private reference and the private learners over it.
REFERENCE, FTRL, FTPL = "hedge", "private-ftrl", "private-ftpl"
#: How many of the last horizons the ratio's trend is fitted over (section 2).
TREND_HORIZONS = 4
COUNTER = "private-ftrl(counter="


# --- the explicit bounds of section 0


def expected_normal_range(n: int) -> float:
    """``E[max - min]`` of ``n`` i.i.d. standard normals (numerical integral)."""
    from scipy import integrate, stats

    def integrand(x: float) -> float:
        return 1.0 - stats.norm.cdf(x) ** n - stats.norm.sf(x) ** n

    return float(integrate.quad(integrand, -np.inf, np.inf)[0])


def ftrl_noise_sd(horizon: float, n: int, epsilon: float, smooth: bool = False) -> float:
    """Per-coordinate noise std of one Agarwal-Singh release (Laplace, l1 sensitivity
    ``n`` of the experts' loss set ``[0, 1]^n``).

    Args:
        horizon: ``T``.
        n: The number of experts.
        epsilon: The privacy parameter.
        smooth: Drop the integer parts (``log2 T``, ``log2 T + 1``), so that the bound
            has a local slope (the steps at powers of two would dominate a numerical
            derivative).

    Returns:
        ``sqrt(2 R) levels n / eps`` with ``R = ceil(log2 T)`` draws and
        ``levels = floor(log2 T) + 1``.
    """
    if smooth:
        lg = math.log2(horizon)
        return math.sqrt(2.0 * lg) * (lg + 1.0) * n / epsilon
    t = max(round(horizon), 2)
    levels = t.bit_length()  # floor(log2 t) + 1
    draws = max((t - 1).bit_length(), (t + 1).bit_length() - 1)
    return math.sqrt(2.0 * draws) * levels * n / epsilon


def counter_noise_sd(env_id: str, label: str, horizon: int, epsilon: float,
                     delta: float = 0.0, **options: Any) -> float:
    """The worst per-coordinate noise std of a private learner's counter, from the
    learner built at ``horizon`` on the id's defaults."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    problem = build_env(env_id, horizon=horizon).get_wrapper_attr("problem")
    agent = make(label, problem, epsilon=epsilon, delta=delta, **options)
    return math.sqrt(agent.counter.max_noise_variance())


def check_noise_sd(horizon: int, n: int, epsilon: float) -> None:
    """Raises ValueError unless ``private-ftrl``'s counter on the experts id at
    ``horizon`` has the std :func:`ftrl_noise_sd` gives (within 2%)."""
    got = counter_noise_sd(EXPERTS, FTRL, horizon, epsilon)
    want = ftrl_noise_sd(horizon, n, epsilon)
    if abs(got / want - 1.0) >= 0.02:
        raise ValueError(f"private-ftrl's noise std at T={horizon}, eps={epsilon:g} is "
                         f"{got:.1f}; the bound's formula gives {want:.1f}")


def exp2_bound(horizon: float, n: int, noise_scale: float) -> float:
    """Agarwal-Singh Lemma 4.4 with Theorem 4.1's parameters (``N`` arms, Laplace scale
    ``lambda`` on the ``[0, 1]`` loss scale): ``2 gamma T + ln N / eta + eta N T c + 1``,
    ``c = 1 + 2 lambda^2 ln(N T)`` (the bound on ``E[sum_i p_i l~_i^2]`` per round given
    the noise event, plus 1 for its complement), ``gamma`` clamped to 1."""
    from agents.bandit.exp2 import theorem_4_1_parameters

    eta, gamma = theorem_4_1_parameters(max(int(horizon), 1), n, noise_scale)
    c = 1.0 + 2.0 * noise_scale**2 * math.log(n * horizon)
    return 2.0 * min(gamma, 1.0) * horizon + math.log(n) / eta + eta * n * horizon * c + 1.0


def bound_of(kind: str, n: int, epsilon: float | None) -> Callable[[float], float]:
    """``T -> bound``: ``sqrt(T ln N / 2) + kappa_N sd_T`` (``docs/algorithms/
    private-ftrl.md``, ``kind="ftrl"``; no noise term without ``epsilon``) or
    :func:`exp2_bound` (``kind="exp2"``, ``lambda = 1 / epsilon``)."""
    if kind == "ftrl":
        kappa = expected_normal_range(n) if epsilon is not None else 0.0

        def bound(t: float) -> float:
            noise = 0.0 if epsilon is None else kappa * ftrl_noise_sd(t, n, epsilon, True)
            return math.sqrt(t * math.log(n) / 2.0) + noise
        return bound
    return lambda t: exp2_bound(t, n, 0.0 if epsilon is None else 1.0 / epsilon)


def _fmt_t(t: float) -> str:
    if math.isinf(t):
        return "> 1e30"
    return f"{t:.2g}" if t >= 1e4 else f"{t:.0f}"


# --- shared pieces


#: A row's learner cell (``private-ftrl ε=1``).
named = ps.learner_cell


def epsilons_of(frame: Any, label: str, horizons: Sequence[int]) -> list[float]:
    """The epsilons ``label`` played at every horizon of ``horizons``."""
    rows = frame[frame.agent_label == label]
    return sorted(float(e) for e in rows.epsilon.dropna().unique()
                  if set(horizons) <= set(rows[np.isclose(rows.epsilon.astype(float),
                                                          float(e))].horizon))


def horizons_of(frame: Any, label: str, epsilon: float | None = None) -> list[int]:
    """The horizons at which ``label`` (at ``epsilon``) played."""
    return sorted(int(t) for t in ps.learner_games(frame, label, epsilon).horizon.unique())


def slope_cells(by: dict[int, dict[int, float]], exponent: float) -> list[str]:
    """``[slope of the means, mean per-seed slope [95% CI], the CI against the exponent]``:
    ``below e`` / ``above e`` where the interval excludes ``e``, ``~ e`` where it holds it."""
    of_means, _ = ps.slope_texts(by)
    slopes = np.array([s for s in ps.seed_slopes(by).values() if math.isfinite(s)])
    if slopes.size < 2:
        return [of_means, ps.slope_texts(by)[1], "n/a"]
    per_seed, verdict = ps.slope_verdict(
        by, lambda lo, hi: ps.side(lo, hi, ("below", "above"), null=exponent))
    return [of_means, per_seed, f"{verdict} {exponent:g}"]


def means_over(by: dict[int, dict[int, float]], horizons: Sequence[int],
               spec: str = ".1f") -> list[str]:
    """The mean regret at each horizon (``n/a`` where none)."""
    return [f"{np.mean(list(by[t].values())):{spec}}" if by.get(t) else "n/a"
            for t in horizons]


def seed_count(by: dict[int, dict[int, float]]) -> int:
    """The seeds held at every horizon."""
    common = ps.on_common_seeds(by)
    return len(next(iter(common.values()))) if common else 0


# --- section 0


#: The theorem's-slope cell of a full-information learner (no schedule: no exploration,
#: smoothing or shrink carries part of its regret).
NO_SCHEDULE = "no schedule: the slope is the learner's"


def theorem_cell(label: str, epsilon: float | None,
                 split: set[tuple[str, float | None]]) -> str:
    """Section 0's "the theorem's slope?" cell: trivial play's reference, a learner of
    :data:`EXPLORING` defers to the exploration split where ``split`` (the ``(label,
    epsilon)`` with split rows) holds it and is not claimed where it does not, a
    full-information learner has no schedule."""
    if label == TRIVIAL:
        return ps.NO_SCHEDULE
    if label in EXPLORING:
        return ps.SPLIT_DECIDES if (label, epsilon) in split else ps.SCHEDULE_NOT_SPLIT
    return NO_SCHEDULE


def rate_rows(frame: Any, env_id: str, kind: str, learners: Sequence[str],
              check: bool = True, split: set[tuple[str, float | None]] = frozenset()
              ) -> tuple[list[list[str]], str]:
    """Section 0's rows of one id (trivial play, then each learner and epsilon) and its
    note (trivial play's rate, the bound's constants); ``split``: the ``(label,
    epsilon)`` whose exploration split is stored (:func:`theorem_cell`)."""
    games = frame[frame.env_id == env_id]
    horizons = horizons_of(games, TRIVIAL)
    if len(horizons) < 2:
        return [], ""
    from dp_online_envs.envs.registry import build_env

    n = build_env(env_id, horizon=horizons[0]).get_wrapper_attr("problem").dim
    short = env_id.split("-")[1]
    trivial = ps.on_common_seeds({t: ps.regrets(games, TRIVIAL, t) for t in horizons})
    per_round = float(np.mean(list(trivial[horizons[-1]].values()))) / horizons[-1]
    cells = slope_cells(trivial, 1.0)  # linear: the slope's interval holds 1
    rows = [[short, "trivial (center)", *means_over(trivial, horizons, ".0f"), *cells,
             theorem_cell(TRIVIAL, None, split), "", "", ""]]
    for label in learners:
        for eps in ([None] if label == learners[0] else epsilons_of(games, label, horizons)):
            by = ps.on_common_seeds({t: ps.regrets(games, label, t, eps) for t in horizons})
            if not all(by.values()):
                continue
            if check and kind == "ftrl" and eps is not None:
                for t in horizons:
                    check_noise_sd(t, n, eps)
            bound = bound_of(kind, n, eps)
            rows.append([short, named(label, eps), *means_over(by, horizons),
                         *slope_cells(by, HALF), theorem_cell(label, eps, split),
                         f"{local_slope(bound, horizons[-1]):.2f}",
                         _fmt_t(slope_reached(bound, HALF)),
                         _fmt_t(below_from(bound, lambda t, c=per_round: c * t))])
    note = f"{short}: trivial play taken as {per_round:.3f} T (its rate at the largest T)"
    if kind == "ftrl":
        note += (f"; bound `sqrt(T ln N / 2) + kappa_N sd_T` (docs/algorithms/private-ftrl.md),"
                 f" kappa_{n} = {expected_normal_range(n):.3f}, sd_T = sqrt(2 log2 T) "
                 f"(log2 T + 1) N / ε (at T = {horizons[-1]}: "
                 f"{ftrl_noise_sd(horizons[-1], n, 1.0):.0f} at ε = 1; checked against the "
                 f"counter's own noise variance at every T)")
    else:
        note += ("; bound: Lemma 4.4 with Theorem 4.1's eta, gamma: `2 gamma T + ln N / eta "
                 "+ eta N T (1 + 2 lambda^2 ln NT) + 1`, lambda = 1/ε")
    return rows, note


def rates_block(frame: Any, check: bool = True,
                splits: dict[str, dict[str, float]] | None = None) -> str:
    """Section 0: the rates at the ids' defaults against the explicit bounds, then the
    exploration split of ``exp2`` and ``private-exp2`` (:func:`split_block`, from
    ``splits``: the stored :func:`store_splits`; ``None``: none stored)."""
    split_table = split_rows(frame, splits or {})
    split = {(learner, eps) for learner, eps, _ in split_learners(frame)
             if any(r[0] == named(learner, eps) for r in split_table)}
    rows, notes, horizons, seeds = [], [], [], set()
    for env_id, kind, reference, private in RATE_BLOCKS:
        got, note = rate_rows(frame, env_id, kind, (reference, private), check, split)
        if got:
            games = frame[frame.env_id == env_id]
            horizons = horizons_of(games, TRIVIAL)
            seeds |= set(games[games.horizon.isin(horizons)].groupby(
                "agent_label").seed_index.nunique())
            rows += got
            notes.append(note)
    if not rows:
        return ""
    head = ["env", "learner", *(f"T={t}" for t in horizons), "slope of the means",
            "per-seed slope [95% CI]", "CI vs 0.5", "the theorem's slope?",
            "bound's slope at the largest T",
            "bound's slope within 0.1 of 0.5 from T", "bound < trivial from T"]
    return (f"**0. Rates at T = {horizons[0]} .. {horizons[-1]}** (ids at their defaults, "
            f"{'/'.join(map(str, sorted(seeds)))} paired seeds; trivial play's slope against "
            f"1, the others' against the theorems' exponent 0.5)\n\n"
            + ps.table(head, rows) + "\n\n" + ";\n".join(notes) + "."
            + ("\n\n" + split_block(frame, splits or {}) if split_learners(frame) else ""))



# --- section 0: the exploration schedule split off


#: The file of the exploration split, in the results directory (:func:`store_splits`).
SPLIT_FILE = ps.Study.SPLIT_FILE
#: The learners of section 0 that mix an exploration probability into their play.
EXPLORING = ("exp2", "private-exp2")


def exploration_split(spec: Any) -> dict[str, float]:
    """Replay one ``exp2`` / ``private-exp2`` game on K arms (the seeds of ``spec``, a
    :class:`~dp_online_envs.lab.experiments.game.GameSpec`) and split its expected
    regret, round by round, into the exploration's cost and the rest.

    Each round the learner (for ``private-exp2`` its base EXP2) plays ``p_t = (1 -
    gamma) q_t + gamma / K``, ``q_t`` its normalized exponential weights (the arms
    engine's ``weights_distribution()`` before ``act``), so given ``q_t`` the round's
    expected loss is ``<q_t, l_t> + gamma (mean(l_t) - <q_t, l_t>)`` (``l_t`` the arms'
    losses, from the env's loss family).

    Returns:
        ``regret`` (realized: the record's, to check the replay), ``expected`` (``sum_t
        <p_t, l_t>`` minus the comparator's loss), ``exploration`` (``sum_t gamma
        (mean(l_t) - <q_t, l_t>)``), ``remainder`` (``expected - exploration``: the
        weights' ``q_t`` own regret) and ``gamma``.
    """
    fixed: dict[str, Any] = {}  # gamma and the arms (the rows of the identity), set once
    sums = {"exploration": 0.0, "points": 0.0}

    def before_act(agent: Any) -> Any:
        engine = getattr(agent, "base", agent)  # private-exp2: its base EXP2
        if not fixed:
            if not getattr(engine, "plays_arms", False):
                raise ValueError(f"{spec.label} on {spec.env_id}: the split reads the arms "
                                 "engine's weights; expected a game on K arms")
            fixed.update(gamma=float(engine.gamma), arms=np.eye(engine.k))
        return engine.weights_distribution()

    def after_step(q: Any, record: Any, loss: Any) -> None:
        values = np.asarray(loss.values(record.theta, fixed["arms"]), dtype=np.float64)
        ps.explore_round(sums, fixed["gamma"], q, values)

    summary = ps.replay_below_guard(spec, before_act, after_step)
    return ps.explore_parts(summary, sums, fixed["gamma"])


def store_splits(results: str | pathlib.Path, log: Any = None) -> int:
    """Compute :func:`exploration_split` for every stored game of :data:`EXPLORING` (the
    sweep plays them on :data:`MAB` only) not yet in ``RESULTS/`` :data:`SPLIT_FILE`
    (resumable: the file is rewritten after each game), checking each replay's realized
    regret against its record (:meth:`paired_stats.Study.store_splits`). Returns how
    many were computed.

    Raises:
        RuntimeError: A replay whose realized regret is not the record's (the split
            would not be of the stored game).
    """
    return STUDY.store_splits(
        results, lambda g: g.agent in EXPLORING, exploration_split,
        note=lambda split: f"{split['exploration'] / split['expected']:.0%} exploration",
        log=log)


load_splits = STUDY.load_splits


def split_learners(frame: Any) -> list[tuple[str, float | None, float]]:
    """``(label, epsilon, exponent)`` of the section-0 learners of :data:`EXPLORING`
    played on :data:`MAB` at every horizon of trivial play there (the theorem's exponent
    :data:`HALF`)."""
    games = frame[frame.env_id == MAB]
    horizons = horizons_of(games, TRIVIAL)
    out = []
    for label in EXPLORING:
        epsilons = [None] if label == EXPLORING[0] else epsilons_of(games, label, horizons)
        out += [(label, eps, HALF) for eps in epsilons
                if horizons and set(horizons) <= set(horizons_of(games, label, eps))]
    return out


def split_rows(frame: Any, splits: dict[str, dict[str, float]]) -> list[list[str]]:
    """Per learner of :func:`split_learners` and ``T`` whose games are all split: the
    largest gamma, the expected regret, the exploration's part (share), the remainder,
    the per-seed slopes of the regret and the remainder from the previous ``T``
    [Student-t 95% interval] and the regime, each on both seed sets
    (:func:`paired_stats.schedule_split_rows`, the regime by
    :func:`paired_stats.regime`)."""
    return ps.schedule_split_rows(frame[frame.env_id == MAB], split_learners(frame), splits)


#: How many of the largest horizons :func:`split_summary` fits the remainder's slope over.
SUMMARY_HORIZONS = 3


def split_summary(frame: Any, splits: dict[str, dict[str, float]]) -> list[str]:
    """Per learner of :func:`split_learners` whose games are all split at its last
    :data:`SUMMARY_HORIZONS` horizons: the exploration's share of the expected regret at
    the largest ``T`` (the paired ratio of the means, Fieller's 95% interval) and the
    remainder's per-seed slope over those horizons [Student-t 95% interval], each on
    both seed sets."""
    games = frame[frame.env_id == MAB]
    out = []
    for label, eps, _ in split_learners(frame):
        mine = ps.learner_games(games, label, eps)
        horizons = horizons_of(mine, label, eps)[-SUMMARY_HORIZONS:]
        mine = mine[mine.horizon.isin(horizons)]
        if len(horizons) < 2 or not all(g in splits for g in mine.game_id):
            continue
        parts = {t: {int(s): splits[g] for s, g in zip(at.seed_index, at.game_id)}
                 for t, at in ((t, mine[mine.horizon == t]) for t in horizons)}
        top = parts[horizons[-1]]
        share = ps.ratio({s: v["exploration"] for s, v in top.items()},
                         {s: v["expected"] for s, v in top.items()}, ".3f")[0]
        slope = ps.slope_texts({t: {s: v["remainder"] for s, v in at.items()}
                                for t, at in parts.items()})[1]
        out.append(f"`{named(label, eps)}`: the exploration's share at T = "
                   f"{horizons[-1]:,} [Fieller 95% CI] {_both(share)}; the remainder's "
                   f"per-seed slope over T = {horizons[0]:,} .. {horizons[-1]:,} [95% CI] "
                   f"{_both(slope)}")
    return out


def _both(text: str) -> str:
    """``d; replication r`` (two seed sets' texts) as ``d (replication r)``."""
    first, _, second = text.partition("; replication ")
    return f"{first} (replication {second})" if second else first


def split_block(frame: Any, splits: dict[str, dict[str, float]]) -> str:
    """The exploration split's table (:func:`split_rows`), or what to run for it."""
    rows = split_rows(frame, splits)
    if not rows:
        return ("**The exploration schedule split off**: not computed for these results "
                "(`python benchmarks/studies/full-info-rates/analysis.py --split "
                "RESULTS_DIR` replays the exp2 and private-exp2 games and stores it); "
                "until it is, their slopes are not claimed as the theorem's.")
    regimes = [r[-1] for r in rows if r[-1]]
    return (f"**The exploration schedule split off** (`{MAB}`: every `exp2` and "
            "`private-exp2` game replayed on its seeds, its realized regret checked against "
            "its record; each round plays p_t = (1 − γ) q_t + γ/K, so its expected loss "
            "is <q_t, l_t> + γ (mean_i l_t(i) − <q_t, l_t>): the second term is the "
            "exploration's cost, the remainder the exponential weights q_t's own regret; "
            "γ from Theorem 4.1, clamped at 1). A horizon is listed once every game of the "
            "learner there is split. " + ps.regime_rule(HALF, "γ") + ":\n\n"
            + ps.table(ps.SPLIT_HEAD, rows) + "\n\n"
            + f"{regimes.count(ps.THEOREMS_REGIME)} of {len(regimes)} slopes from the "
            "previous T in the theorem's regime, "
            f"{regimes.count(ps.NOT_REPLICATED)} not replicated (the two seed sets disagree)."
            + "".join(f"{chr(10) if i else chr(10) * 2}* {line}."
                      for i, line in enumerate(split_summary(frame, splits))))


# --- section 1


def slope_learners(frame: Any) -> list[tuple[str, str, float | None]]:
    """``(env id, label, epsilon)`` of section 1: the experts learners of section 2, then
    every learner of the other full-information ids (not the rate ids)."""
    out = []
    experts = frame[frame.env_id == EXPERTS]
    horizons = free_horizons(frame)
    for label in (REFERENCE, FTRL, FTPL):
        for eps in ([None] if label == REFERENCE else epsilons_of(experts, label, horizons)):
            out.append((EXPERTS, label, eps))
    others = frame[~frame.env_id.isin([EXPERTS, MAB])]
    for env_id in sorted(others.env_id.unique()):
        games = others[others.env_id == env_id]
        for label in sorted(games.agent_label.unique(),
                            key=lambda x: (x.startswith("private"), x)):
            epss = sorted(float(e) for e in games[games.agent_label == label].epsilon.unique()
                          if not np.isnan(e))
            out += [(env_id, label, e) for e in epss] or [(env_id, label, None)]
    return out


def slopes_block(frame: Any) -> str:
    """Section 1: regret against ``T`` and the per-seed slopes, next to each paper's
    exponent, on the horizons the other full-information ids played."""
    others = frame[~frame.env_id.isin([EXPERTS, MAB])]
    horizons = sorted(int(t) for t in others.horizon.unique())
    if len(horizons) < 2:
        return ""
    rows, seeds = [], set()
    for env_id, label, eps in slope_learners(frame):
        games = frame[frame.env_id == env_id]
        by = ps.on_common_seeds({t: ps.regrets(games, label, t, eps) for t in horizons})
        if not all(by.values()):
            continue
        seeds.add(seed_count(by))
        short = env_id.replace("DPFullInfo-", "")
        exponent = EXPONENT.get(label, HALF)
        rows.append([named(label, eps), short, *means_over(by, horizons),
                     *slope_cells(by, exponent), f"{exponent:g}"])
    head = ["learner", "env", *(f"T={t}" for t in horizons), "slope of the means",
            "per-seed slope [95% CI]", "CI vs the paper's exponent", "paper"]
    return (f"**1. Regret against T and log-log slopes** ({'/'.join(map(str, sorted(seeds)))}"
            f" paired seeds; the non-experts ids under their `stochastic` adversary)\n\n"
            + ps.table(head, rows))


# --- section 2


def free_horizons(frame: Any) -> list[int]:
    """The horizons at which the experts game was played by both ``hedge`` and
    ``private-ftpl`` (section 2's)."""
    experts = frame[frame.env_id == EXPERTS]
    return sorted(set(horizons_of(experts, REFERENCE))
                  & {int(t) for t in experts[experts.agent_label == FTPL].horizon})


def free_rows(frame: Any) -> list[dict[str, Any]]:
    """Per horizon of section 2: ``{"T", "seeds", label: mean text, (label, eps):
    (ratio text, verdict)}`` for every private learner and epsilon over ``hedge``."""
    experts = frame[frame.env_id == EXPERTS]
    horizons = free_horizons(frame)
    privates = [(label, e) for label in (FTRL, FTPL)
                for e in epsilons_of(experts, label, horizons)]
    rows = []
    for t in horizons:
        ref = ps.regrets(experts, REFERENCE, t)
        row: dict[str, Any] = {"T": t, "seeds": len(ref), REFERENCE: ps.mean_text(ref)}
        for label, eps in privates:
            mine = ps.regrets(experts, label, t, eps)
            row[named(label, eps)] = ps.mean_text(mine)
            row[(label, eps)] = ps.ratio(mine, ref)
        rows.append(row)
    return rows


def trend(frame: Any, label: str, epsilon: float) -> tuple[list[int], str, str]:
    """``(horizons, text, verdict)``: over the last :data:`TREND_HORIZONS` horizons of
    section 2, ``label``'s per-seed log-log slope minus ``hedge``'s, paired by seed
    (Student-t interval); ``ratio falls`` where it lies below 0, ``ratio rises`` where
    above (the log of the ratio's slope)."""
    experts = frame[frame.env_id == EXPERTS]
    horizons = free_horizons(frame)[-TREND_HORIZONS:]
    mine = ps.seed_slopes({t: ps.regrets(experts, label, t, epsilon) for t in horizons})
    ref = ps.seed_slopes({t: ps.regrets(experts, REFERENCE, t) for t in horizons})
    text, verdict = ps.difference(mine, ref, ("ratio falls", "ratio rises"), spec="+.2f")
    return horizons, text, verdict


def same_rate(horizons: Sequence[int]) -> bool:
    """Whether ``hedge`` plays ``private-ftrl``'s learning rate at its defaults on the
    experts id at every horizon (so that the ratio isolates the cost of the noise)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    for t in horizons:
        problem = build_env(EXPERTS, horizon=t).get_wrapper_attr("problem")
        if not math.isclose(make(REFERENCE, problem).eta,
                            make(FTRL, problem, epsilon=1.0).eta, rel_tol=1e-12):
            return False
    return True


def free_block(frame: Any, rate_check: Callable[[Sequence[int]], bool] = same_rate) -> str:
    """Section 2: the ratios of private to non-private regret as ``T`` grows."""
    rows = free_rows(frame)
    if not rows:
        return ""
    privates = [k for k in rows[0] if isinstance(k, tuple)]
    head = ["T", "seeds", f"{REFERENCE} [95% CI]"]
    for label, eps in privates:
        head += [f"{named(label, eps)} [95% CI]", f"/ {REFERENCE} [Fieller]", ""]
    body = []
    for r in rows:
        cells = [r["T"], r["seeds"], r[REFERENCE]]
        for key in privates:
            cells += [r[named(*key)], *r[key]]
        body.append(cells)
    horizons = [r["T"] for r in rows]
    lines = []
    for label, eps in privates:
        above = [r["T"] for r in rows if r[(label, eps)][1] == "above"]
        noise = [r["T"] for r in rows if r[(label, eps)][1] == ps.NOISE]
        below = [r["T"] for r in rows if r[(label, eps)][1] == "below"]
        unreplicated = [r["T"] for r in rows if r[(label, eps)][1] == ps.NOT_REPLICATED]
        part = (f"`{named(label, eps)}` over `{REFERENCE}`: above 1 at T ∈ {ps.listed(above)}"
                + (f", neither side shown (the interval holds 1) at T ∈ {ps.listed(noise)}"
                   if noise else "")
                + (f", below 1 at T ∈ {ps.listed(below)}" if below else "")
                + (f", not replicated (the two seed sets disagree) at T ∈ "
                   f"{ps.listed(unreplicated)}" if unreplicated else ""))
        if len(horizons) >= TREND_HORIZONS >= 2:
            ts, text, verdict = trend(frame, label, eps)
            part += (f"; over T = {ts[0]} .. {ts[-1]} its per-seed slope minus "
                     f"{REFERENCE}'s is {text}: "
                     + {ps.NOISE: "neither side shown (the interval holds 0)",
                        ps.NOT_REPLICATED: "not replicated (the two seed sets disagree)"}
                     .get(verdict, f"the {verdict}"))
        lines.append(part)
    eta = ("`hedge` plays `private-ftrl`'s learning rate at every T here, so the ratio of "
           "`private-ftrl` over `hedge` is the cost of the noise alone" if rate_check(horizons)
           else "`hedge` and `private-ftrl` play different learning rates at some T")
    return (f"**2. Privacy for free?** `{EXPERTS}` (K = 10): private over non-private "
            f"regret, paired seeds; ratio of the means with Fieller's 95% interval; `above`/"
            f"`below` where it excludes 1 (`~`: it holds 1, neither side shown). {eta}.\n\n"
            + ps.table(head, body) + "\n\n" + ";\n".join(lines) + ".")


# --- section 3


def counters_block(frame: Any, noise_sd: Callable[..., float] = counter_noise_sd) -> str:
    """Section 3: ``private-ftrl`` with every counter at one (epsilon, delta)."""
    games = frame[(frame.env_id == EXPERTS) & frame.agent_label.str.startswith(COUNTER)]
    if games.empty:
        return ""
    labels = sorted(games.agent_label.unique(), key=lambda x: (x.endswith("factorization)"),
                                                                x))
    (eps,) = {float(e) for e in games.epsilon}
    (delta,) = {float(d) for d in games.delta}
    base = next((x for x in labels if x.endswith("factorization)")), labels[-1])
    horizons = sorted(int(t) for t in games.horizon.unique())

    def short(label: str) -> str:
        ideal = games[games.agent_label == label].privacy.str.contains("idealized").any()
        return label[len(COUNTER):-1] + (" (idealized)" if ideal else "")

    body, ratios = [], []
    for t in horizons:
        by = {x: ps.regrets(games, x, t, eps) for x in labels}
        body.append([t, len(by[base]), *(
            f"{ps.mean_text(by[x])} ({noise_sd(EXPERTS, FTRL, t, eps, delta, counter=x[len(COUNTER):-1]):.0f})"
            for x in labels)])
        ratios.append([t, *(" ".join(ps.ratio(by[x], by[base])) for x in labels if x != base)])
    head = ["T", "seeds", *(f"{short(x)} [95% CI] (worst noise std)" for x in labels)]
    ratio_head = ["T", *(f"{short(x)} / {short(base)} [Fieller]" for x in labels if x != base)]
    return (f"**3. Gaussian `private-ftrl` on `{EXPERTS}`, ε = {eps:g}, δ = {delta:g}: "
            f"counters at equal privacy** (paired seeds; idealized: a Gaussian counter whose "
            f"guarantee holds for the real-valued mechanism, not its float64 computation)\n\n"
            + ps.table(head, body) + "\n\n" + ps.table(ratio_head, ratios))


def render(results: str | pathlib.Path, check: bool = True) -> str:
    """The section's block: sections 0 to 3 from the stored results of the sweep."""
    frame = STUDY.load(results)
    parts = [rates_block(frame, check, load_splits(results)), slopes_block(frame),
             free_block(frame),
             counters_block(frame)]
    return "\n\n".join(p for p in parts if p)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--split"]:
        where = sys.argv[2] if len(sys.argv) > 2 else STUDY.results()
        print(f"{store_splits(where, log=sys.stderr)} games split into {where}/{SPLIT_FILE}")
    else:
        STUDY.main(render)
