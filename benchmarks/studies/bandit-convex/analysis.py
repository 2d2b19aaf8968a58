"""The bandit convex learners against their non-private counterparts (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes two blocks of
``docs/results.md``:

* :func:`render_ball`: ``bandit-pftal``, ``fkm`` and trivial play on the l2-ball ids at
  their defaults: per learner the mean regret at every ``T``, the slope of the means and
  the mean per-seed log-log slope [Student-t 95% interval], next to the theorem's
  exponent (:func:`slope_rows`); the horizon from which Smith-Thakurta's leading term
  ``p T^a chi`` is below trivial play's regret (:func:`crossing_rows`); the smoothing
  schedule split off (:func:`split_rows`); and the price of privacy
  (:func:`privacy_rows`).
* :func:`render_former`: ``private-projection-free`` (Laplace and Gaussian),
  ``garber-kretzu`` and ``fkm`` on the polytope ids' former instances and the 2-d ball,
  the same slope rows, the schedule split and the price of privacy.

The schedule split (:func:`schedule_split`, stored beside the results by
:func:`store_splits`: ``python benchmarks/studies/bandit-convex/analysis.py --split
RESULTS_DIR``): every game of a smoothed learner (:data:`SPLIT_POINTS`) is replayed on
its seeds, its realized regret checked against its record bit for bit. Each learner
plays ``x_t = y_t + radius u_t`` with ``y_t = (1 - alpha) z_t + alpha c`` (``c`` the
inner ball's center, ``alpha = radius / r``): ``z_t`` the unshrunk point (the blocked
learners' batch point, ``fkm``'s and ``bandit-pftal``'s iterate mapped back from the
shrunk set), ``y_t`` the unperturbed one. Per round the perturbation's cost ``f_t(x_t) -
f_t(y_t)`` and the shrink's cost ``f_t(y_t) - f_t(z_t)`` are summed; the remainder,
``regret - perturbation - shrink``, is the unshrunk points' own regret ``sum_t f_t(z_t)
- min_x sum_t f_t(x)``.

A slope is compared with a theorem's exponent only where the smoothing radius is free
(not clamped to ``r / 2``) at the smallest and the largest ``T``: while it is clamped
the learner plays a half-size copy of the domain and its regret grows linearly,
whatever the theorem's exponent (``n/a (clamped)``). Otherwise ``yes`` where the
per-seed slope's interval lies within ``exponent +- 0.1``, ``no`` where it lies outside,
``~`` where it straddles an edge. Whether that slope is the theorem's is the split's to
say (the one rule of every split, :func:`paired_stats.regime`): per step ``T0 -> T``,
``theorem's regime`` only where the radius is free at both horizons, the remainder is
the larger part (perturbation + shrink below half the regret) at both, and the
remainder's per-seed slope interval lies within ``exponent +- 0.1``, on both seed sets
(``~`` where it straddles an edge); the slope table's last
column names the steps where it is (:func:`theorem_cells`), and says ``not claimed``
for a learner whose games are not all split.

The price of privacy is the paired ratio ``mean(private) / mean(non-private)`` over the
seed indices both played (the same losses), with Fieller's interval
(:func:`paired_stats.ratio`): ``private higher`` where the interval lies above 1,
``private lower`` where below, ``~`` where it contains 1.
"""

from __future__ import annotations

import functools
import math
import pathlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

from dp_online_envs.lab.experiments.rates import below_from  # noqa: E402

STUDY = ps.Study(__file__)
#: How far a slope may be from the theorem's exponent to be called the theorem's.
SLOPE_TOLERANCE = ps.SLOPE_TOLERANCE

#: The ball block's rows: (experiment, env id, agent label, epsilon, exponent, source).
BALL_ROWS = (
    ("ball", "DPBandit-Convex-v1", "center", None, 1.0, "linear"),
    ("ball", "DPBandit-Convex-v1", "bandit-pftal", 1.0, 0.75, "ST13 Thm 17"),
    ("ball", "DPBandit-Convex-v1", "bandit-pftal", 10.0, 0.75, "ST13 Thm 17"),
    ("ball", "DPBandit-Convex-v1", "fkm", None, 0.75, "FKM05 Thm 3.3"),
    ("ball", "DPBandit-StronglyConvex-v1", "center", None, 1.0, "linear"),
    ("ball", "DPBandit-StronglyConvex-v1", "bandit-pftal", 1.0, 0.75, "ST13 Thm 6.2"),
    ("ball", "DPBandit-StronglyConvex-v1", "bandit-pftal", 10.0, 0.75, "ST13 Thm 6.2"),
    ("ball-oblivious", "DPBandit-StronglyConvex-v1", "bandit-pftal(adversary=oblivious)",
     1.0, 2 / 3, "ST13 Thm 6.1"),
    ("ball", "DPBandit-StronglyConvex-v1", "fkm", None, 0.75, "FKM05 Thm 3.3"),
)
POLYTOPES = ("DPBandit-Matroid-v1", "DPBandit-Flow-v1", "DPBandit-SubmodularBase-v1",
             "DPBandit-Birkhoff-v1")
BALL2 = "DPBandit-Convex-v1"
#: The former block's rows (the polytopes' former instances, then the 2-d ball).
FORMER_ROWS = tuple(
    row for env in POLYTOPES for row in (
        ("former", env, "private-projection-free", 1.0, 0.75, "ENV21 Thm 1.1"),
        ("former", env, "garber-kretzu", None, 0.75, "GK20"))
) + (
    ("theory", BALL2, "private-projection-free", 1.0, 0.75, "ENV21 Thm 1.1"),
    ("theory-gaussian", BALL2, "private-projection-free(noise=gaussian)", 1.0, 0.75,
     "ENV21 Thm 1.1"),
    ("theory", BALL2, "garber-kretzu", None, 0.75, "GK20"),
    ("theory", BALL2, "fkm", None, 0.75, "FKM05 Thm 3.3"),
)
#: Price of privacy: (env id, (experiment, label, epsilon) private, (experiment, label)
#: non-private).
BALL_PAIRS = (
    ("DPBandit-Convex-v1", ("ball", "bandit-pftal", 1.0), ("ball", "fkm")),
    ("DPBandit-StronglyConvex-v1", ("ball", "bandit-pftal", 1.0), ("ball", "fkm")),
    ("DPBandit-StronglyConvex-v1",
     ("ball-oblivious", "bandit-pftal(adversary=oblivious)", 1.0), ("ball", "fkm")),
)
FORMER_PAIRS = tuple(
    (env, ("former", "private-projection-free", 1.0), ("former", "garber-kretzu"))
    for env in POLYTOPES
) + (
    (BALL2, ("theory", "private-projection-free", 1.0), ("theory", "garber-kretzu")),
    (BALL2, ("theory-gaussian", "private-projection-free(noise=gaussian)", 1.0),
     ("theory", "garber-kretzu")),
)


def games(frame: Any, experiment: str, env_id: str) -> Any:
    """The games of one block (``tags.experiment``) of the sweep on ``env_id``."""
    return frame[(frame["tags.experiment"] == experiment) & (frame.env_id == env_id)]


def by_horizon(frame: Any, experiment: str, env_id: str, label: str,
               epsilon: float | None) -> dict[int, dict[int, float]]:
    """``{T: {seed_index: regret}}`` of one learner's games."""
    mine = games(frame, experiment, env_id)
    horizons = sorted(int(t) for t in mine[mine.agent_label == label].horizon.unique())
    return {t: ps.regrets(mine, label, t, epsilon) for t in horizons}


def exponent_verdict(lo: float, hi: float, exponent: float, clamped: bool) -> str:
    """``n/a (clamped)`` where the radius is clamped; otherwise
    :func:`paired_stats.exponent_verdict` (``yes`` where ``[lo, hi]`` lies within
    ``exponent +- SLOPE_TOLERANCE``, ``no`` where it lies outside, ``~`` where it
    straddles an edge or is not finite)."""
    if clamped:
        return "n/a (clamped)"
    return ps.exponent_verdict(lo, hi, exponent, SLOPE_TOLERANCE)


def _exponent_judge(exponent: float, clamped: bool, lo: float, hi: float) -> str:
    """:func:`exponent_verdict` with the exponent and the clamp bound first (for
    :func:`paired_stats.slope_verdict`)."""
    return exponent_verdict(lo, hi, exponent, clamped)


def _part(experiment: str, env_id: str, label: str) -> Any:
    """The sweep's part (env and agent settings) of one row."""
    from dp_online_envs.lab.experiments.game import agent_label
    from dp_online_envs.lab.experiments.sweep import load_sweep

    for part in load_sweep(STUDY.sweep).parts:
        if (part.tags.get("experiment") == experiment and part.env_id == env_id
                and agent_label(part.agent, part.agent_kwargs) == label):
            return part
    raise KeyError(f"no part {experiment}/{env_id}/{label} in {STUDY.sweep}")


def learner_at(experiment: str, env_id: str, label: str, epsilon: float | None,
               horizon: int) -> Any:
    """The row's learner as the sweep built it at ``horizon`` (seed 0: its parameters
    depend on the problem, ``T`` and the privacy only)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    part = _part(experiment, env_id, label)
    problem = build_env(env_id, horizon=horizon, **part.env_kwargs).get_wrapper_attr("problem")
    privacy = {}
    if epsilon is not None:
        delta = next(d for e, d in part.privacy if e is not None and math.isclose(e, epsilon))
        privacy = {"epsilon": float(epsilon), **({"delta": delta} if delta else {})}
    return make(part.agent, problem, seed=0, **privacy, **part.agent_kwargs)


def clamped_of(experiment: str, env_id: str, label: str, epsilon: float | None,
               horizon: int) -> bool:
    """Whether the row's learner clamps its smoothing radius to ``r / 2`` at ``horizon``
    (``fkm``'s ``delta``, ``bandit-pftal``'s ``beta``, the projection-free learners'
    ``zeta``; trivial play has none)."""
    return radius_clamped(learner_at(experiment, env_id, label, epsilon, horizon))


def slope_rows(frame: Any, rows: Sequence[tuple],
               clamped_at: Callable[..., bool] = clamped_of,
               cells: dict[tuple[str, str], str] | None = None) -> list[list[str]]:
    """One table row per learner in ``rows`` that ``frame`` holds: the mean regret at
    every ``T`` (on the seeds held at every ``T``), the slope of the means, the mean
    per-seed slope [95% interval], the exponent, the verdict, the clamping at the
    smallest and the largest ``T`` (``clamped_at(experiment, env_id, label, epsilon, T)``,
    default :func:`clamped_of`) and whether the slope may be the theorem's (``cells``,
    from :func:`theorem_cells`; a row missing there: :func:`paired_stats.theorem_cell`,
    not claimed)."""
    cells = cells or {}
    out = []
    for experiment, env_id, label, eps, exponent, source in rows:
        data = by_horizon(frame, experiment, env_id, label, eps)
        common = ps.on_common_seeds(data)
        if len(common) < 2 or not next(iter(common.values())):
            continue
        horizons = sorted(common)
        means = [float(np.mean(list(common[t].values()))) for t in horizons]
        of_means, _ = ps.slope_texts(data)
        clamped = [clamped_at(experiment, env_id, label, eps, t)
                   for t in (horizons[0], horizons[-1])]
        per_seed, verdict = ps.slope_verdict(
            data, functools.partial(_exponent_judge, exponent, any(clamped)))
        key = (ps.learner_cell(label, eps), short(env_id))
        out.append([key[0], key[1],
                    ps.seed_count(common[horizons[0]]), " / ".join(f"{m:,.0f}" for m in means),
                    of_means, per_seed, f"{exponent:.2f} ({source})",
                    verdict,
                    "/".join("yes" if c else "no" for c in clamped),
                    cells.get(key, ps.theorem_cell(label))])
    return out


SLOPE_HEAD = ("learner", "env", "seeds", "mean regret at T = {}", "slope of the means",
              "per-seed slope [95% CI]", "theorem", "within 0.1", "clamped (T min/max)",
              "the theorem's slope?")


def slope_table(frame: Any, rows: Sequence[tuple],
                clamped_at: Callable[..., bool] = clamped_of,
                cells: dict[tuple[str, str], str] | None = None) -> str:
    """The markdown table of :func:`slope_rows` (the horizons in the header)."""
    body = slope_rows(frame, rows, clamped_at, cells)
    first = rows[0]
    horizons = sorted(by_horizon(frame, first[0], first[1], first[2], first[3]))
    head = list(SLOPE_HEAD)
    head[3] = head[3].format(" / ".join(f"{t:,}" for t in horizons))
    return ps.table(head, body)


def privacy_rows(frame: Any, pairs: Sequence[tuple]) -> list[list[str]]:
    """Per pair and ``T``: both learners' regret [95% interval], their paired ratio
    private / non-private [Fieller's interval] and the side that interval supports."""
    out = []
    for env_id, (pexp, plabel, eps), (bexp, blabel) in pairs:
        priv = by_horizon(frame, pexp, env_id, plabel, eps)
        base = by_horizon(frame, bexp, env_id, blabel, None)
        for t in sorted(set(priv) & set(base)):
            text, side = ps.ratio(priv[t], base[t])
            out.append([f"{plabel} ε={eps:g} / {blabel}", short(env_id), f"{t:,}",
                        ps.seed_count(set(priv[t]) & set(base[t])), ps.mean_text(priv[t], ",.0f"),
                        ps.mean_text(base[t], ",.0f"), text,
                        {"above": "private higher", "below": "private lower"}.get(side, side)])
    return out


PRIVACY_HEAD = ("private / non-private", "env", "T", "seeds", "private regret [95% CI]",
                "non-private regret [95% CI]", "ratio [Fieller 95% CI]", "verdict")


def privacy_summary(rows: Sequence[Sequence[Any]]) -> str:
    """How many ratios lie above 1, below 1 and contain 1."""
    verdicts = [r[-1] for r in rows]
    return (f"{verdicts.count('private higher')} ratios above 1 (privacy costs regret), "
            f"{verdicts.count('private lower')} below 1, {verdicts.count(ps.NOISE)} "
            f"containing 1 (`~`), {verdicts.count(ps.NOT_REPLICATED)} not replicated (the "
            "two seed sets disagree).")


def st_leading_term(agent: Any, T: float) -> float:
    """Smith-Thakurta's leading term ``p T^a chi`` (logs and constants dropped, so a lower
    estimate of the bound). Thm. 6 (strongly convex): ``a = 2/3`` against an oblivious
    adversary, else ``3/4``, ``chi = B R + (1 + R/r) L + (H ||C|| + B)^2 / H (1 + B / eps)``
    with the agent's ``H``. Thm. 17 (convex, ``H = 1/T^{1/4}``): ``a = 3/4``,
    ``chi = B R + (1 + R/r) L + B^3 / eps`` (as printed in App. E.3)."""
    a, chi = st_exponent_and_chi(agent)
    return agent.geometry.rank * T**a * chi


def st_exponent_and_chi(agent: Any) -> tuple[float, float]:
    """``(a, chi)`` of :func:`st_leading_term` for a ``bandit-pftal`` learner."""
    prob = agent.problem
    r = agent.geometry.radius
    B, L, R = prob.bound, prob.lipschitz, prob.domain.norm_bound(2)
    par = agent.params
    base = B * R + (1 + R / r) * L
    if par.mode == "strongly-convex":
        a = 2 / 3 if par.adversary == "oblivious" else 0.75
        return a, base + (par.H * R + B) ** 2 / par.H * (1 + B / agent.epsilon)
    return 0.75, base + B**3 / agent.epsilon


def crossing_rows(frame: Any, learner: Callable[..., Any] = learner_at) -> list[list[str]]:
    """Per ``bandit-pftal`` row of :data:`BALL_ROWS`: ``chi``, the leading term and trivial
    play's regret [95% interval] at the largest ``T``, and the horizon from which the
    leading term is below trivial play's regret taken linear at its measured mean rate
    (``learner(experiment, env_id, label, epsilon, T)``: the learner, default
    :func:`learner_at`)."""
    out = []
    for experiment, env_id, label, eps, _, _ in BALL_ROWS:
        if not label.startswith("bandit-pftal"):
            continue
        trivial = by_horizon(frame, "ball", env_id, "center", None)
        if not trivial:
            continue
        t_max = max(trivial)
        triv = trivial[t_max]
        agent = learner(experiment, env_id, label, eps, t_max)
        _, chi = st_exponent_and_chi(agent)
        lead = st_leading_term(agent, t_max)
        rate = float(np.mean(list(triv.values()))) / t_max
        cross = below_from(lambda T, a=agent: st_leading_term(a, T),
                           lambda T, c=rate: c * T, t_max=1e30)
        out.append([f"{label} ε={eps:g}", short(env_id), f"{chi:.3g}", f"{t_max:,}",
                    f"{lead:.3g}", ps.mean_text(triv, ",.0f"),
                    "> 1e30" if math.isinf(cross) else f"{cross:.2g}"])
    return out


CROSSING_HEAD = ("learner", "env", "χ", "T max", "leading term at T max",
                 "trivial at T max [95% CI]", "leading term < trivial from T")


def short(env_id: str) -> str:
    """``DPBandit-Convex-v1`` -> ``Convex-v1``."""
    return env_id.replace("DPBandit-", "")


#: The file of the schedule split, in the results directory (:func:`store_splits`).
SPLIT_FILE = ps.Study.SPLIT_FILE


def _pftal_points(agent: Any) -> tuple[Any, Any]:
    """``bandit-pftal``'s ``(w_t, c + (w_t - c) / (1 - xi))``: its leader and the point
    of the domain the shrink maps to it (:meth:`~agents.bandit.smoothing.ShrunkSet.unshrink`
    of its own shrunk set)."""
    from agents.bandit.smoothing import ShrunkSet

    w = agent.center_point
    shrunk = ShrunkSet(agent.problem.domain, agent.geometry.center, agent.params.xi)
    return w, shrunk.unshrink(w)


#: The smoothed learners and, read before each round, their unperturbed point ``y_t``
#: and their unshrunk point ``z_t`` (the learner plays ``y_t + radius u_t``, ``y_t =
#: (1 - alpha) z_t + alpha c``).
SPLIT_POINTS: dict[str, Callable[[Any], tuple[Any, Any]]] = {
    "fkm": lambda agent: (agent.center_point, agent.unshrunk_point),
    "bandit-pftal": _pftal_points,
    "garber-kretzu": lambda agent: (agent.center_point, agent.unshrunk_point),
    "private-projection-free": lambda agent: (agent.center_point, agent.unshrunk_point),
}


def radius_clamped(agent: Any) -> bool:
    """Whether a smoothed learner clamps its smoothing radius to ``r / 2`` (``fkm``'s
    ``delta``, ``bandit-pftal``'s ``beta``, the projection-free learners' ``zeta``;
    ``False`` for a learner with none)."""
    params = getattr(agent, "params", None)
    if isinstance(params, dict):
        return bool(params.get("delta_clamped"))
    return bool(getattr(params, "zeta_clamped", getattr(params, "beta_clamped", False)))


def schedule_split(spec: Any) -> dict[str, float]:
    """Replay one game of a learner of :data:`SPLIT_POINTS` (the seeds of ``spec``) and
    split its realized regret, round by round, into the smoothing schedule's two costs
    and the rest.

    Returns:
        ``regret`` (realized: the record's, to check the replay), ``perturbation``
        (``sum_t f_t(x_t) - f_t(y_t)``, ``x_t`` the played point), ``shrink`` (``sum_t
        f_t(y_t) - f_t(z_t)``), ``remainder`` (``regret - perturbation - shrink``: the
        unshrunk points' own regret ``sum_t f_t(z_t) - min_x sum_t f_t(x)``) and
        ``clamped`` (1.0 where the radius is clamped to ``r / 2``, else 0.0).
    """
    points = SPLIT_POINTS[spec.agent]
    sums = {"perturbation": 0.0, "shrink": 0.0}
    fixed: dict[str, bool] = {}

    def before_act(agent: Any) -> Any:
        if not fixed:
            fixed["clamped"] = radius_clamped(agent)
        return points(agent)

    def after_step(state: Any, record: Any, loss: Any) -> None:
        y, z = state
        at_y = float(loss.value(record.theta, y))
        sums["perturbation"] += record.loss - at_y
        sums["shrink"] += at_y - float(loss.value(record.theta, z))

    regret = float(ps.replay_below_guard(spec, before_act, after_step).regret)
    perturbation, shrink = sums["perturbation"], sums["shrink"]
    return {"regret": regret, "perturbation": perturbation, "shrink": shrink,
            "remainder": regret - perturbation - shrink,
            "clamped": 1.0 if fixed["clamped"] else 0.0}


def _in_ball_block(spec: Any) -> bool:
    """Whether a game belongs to the l2-ball block (its experiment ``ball...``)."""
    return spec.tags.get("experiment", "").startswith("ball")


def drop_splits_without_shrink(results: str | pathlib.Path) -> int:
    """Remove from ``RESULTS/`` :data:`SPLIT_FILE` the splits that hold no ``shrink``
    part (the perturbation alone, as the study stored them before the shrink was split
    off), so that :func:`store_splits` computes them again. Returns how many."""
    import json

    from dp_online_envs.lab.experiments.store import atomic_write

    done = load_splits(results)
    kept = {g: v for g, v in done.items() if "shrink" in v}
    if len(kept) < len(done):
        atomic_write(pathlib.Path(results) / SPLIT_FILE, json.dumps(kept, sort_keys=True))
    return len(done) - len(kept)


def store_splits(results: str | pathlib.Path, log: Any = None) -> int:
    """:func:`schedule_split` of every stored game of :data:`SPLIT_POINTS`' learners not
    yet in ``RESULTS/`` :data:`SPLIT_FILE` (resumable), each replay checked against its
    record (:meth:`paired_stats.Study.store_splits`): the former block's games first,
    then the ball block's (a split without the shrink's part is computed again:
    :func:`drop_splits_without_shrink`). Returns how many were computed.

    Raises:
        RuntimeError: A replay whose realized regret is not the record's.
    """
    def note(split: dict[str, float]) -> str:
        return (f"regret {split['regret']:.6g}, perturbation {split['perturbation']:.6g}, "
                f"shrink {split['shrink']:.6g}")

    count = STUDY.store_splits(
        results, lambda g: g.agent in SPLIT_POINTS and not _in_ball_block(g),
        schedule_split, note=note, log=log)
    drop_splits_without_shrink(results)
    return count + STUDY.store_splits(
        results, lambda g: g.agent in SPLIT_POINTS and _in_ball_block(g),
        schedule_split, note=note, log=log)


load_splits = STUDY.load_splits


def _number(value: float) -> str:
    """A regret or a part: whole numbers from 100, three digits below."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _mean(values: dict[int, float]) -> float:
    return float(np.mean(list(values.values())))


def split_rows(frame: Any, splits: dict[str, dict[str, float]],
               rows: Sequence[tuple]) -> list[list[str]]:
    """Per learner of ``rows`` in :data:`SPLIT_POINTS` and ``T`` whose games all hold a
    :func:`schedule_split`: whether the radius is clamped, the regret, the perturbation's
    and the shrink's parts (means; their shares of the regret with Fieller's 95%
    interval, :func:`paired_stats.share_text`), the remainder, the per-seed slopes of
    the regret and the remainder from the previous ``T`` [Student-t 95% interval] and the
    regime (:func:`paired_stats.step_regime`), on both seed sets."""
    out = []
    for experiment, env_id, label, eps, exponent, _ in rows:
        if label.split("(")[0] not in SPLIT_POINTS:
            continue
        mine = ps.learner_games(games(frame, experiment, env_id), label, eps)
        previous = None
        for t in sorted(int(h) for h in mine.horizon.unique()):
            here = mine[mine.horizon == t]
            if here.empty or not all("shrink" in splits.get(g, {}) for g in here.game_id):
                previous = None
                continue
            at = {int(s): splits[g] for s, g in zip(here.seed_index, here.game_id)}
            regret, rest = ({s: v[k] for s, v in at.items()} for k in ("regret", "remainder"))
            schedule = {s: v["perturbation"] + v["shrink"] for s, v in at.items()}
            clamped = any(v["clamped"] for v in at.values())
            total = _mean(regret)
            parts = [f"{_number(_mean(part))} ({ps.on_both(ps.share_text, part, regret)[0]})"
                     for part in ({s: v[k] for s, v in at.items()}
                                  for k in ("perturbation", "shrink"))]
            row = [ps.learner_cell(label, eps), short(env_id), f"{t:,}", ps.seed_count(at),
                   "yes" if clamped else "no", _number(total), *parts, _number(_mean(rest)),
                   "", "", ""]
            if previous is not None:
                t0, regret0, rest0, schedule0, clamped0 = previous
                row[9] = ps.slope_verdict({t0: regret0, t: regret}, lambda lo, hi: "")[0]
                row[10], row[11] = ps.on_both(
                    functools.partial(ps.step_regime, exponent, t0, t,
                                      clamped=clamped0 or clamped),
                    rest0, rest, schedule0, regret0, schedule, regret)
            out.append(row)
            previous = (t, regret, rest, schedule, clamped)
    return out


#: The regimes of a step (:func:`paired_stats.regime`).
CLAMPED, SCHEDULE, THEOREM, NOT_PLACED, ANOTHER = (
    ps.SCHEDULE_CLAMPED, ps.SCHEDULE_LARGER, ps.THEOREMS_REGIME, ps.SLOPE_NOT_PLACED,
    ps.ANOTHER_SLOPE)


SPLIT_HEAD = ("learner", "env", "T", "seeds", "radius clamped", "regret",
              "perturbation's part (share [95% CI])", "shrink's part (share [95% CI])",
              "remainder",
              "regret's slope from previous T [95% CI]", "remainder's slope [95% CI]",
              "regime")
#: The theorem's-slope cell of a smoothed learner once its schedule is split off.
SPLIT_DECIDES = ps.SPLIT_DECIDES


def theorem_cells(frame: Any, splits: dict[str, dict[str, float]],
                  rows: Sequence[tuple]) -> dict[tuple[str, str], str]:
    """``{(learner cell, env cell): the theorem's-slope cell}`` of the rows of ``rows``
    split at every ``T`` they were played at (:func:`split_rows`): :data:`SPLIT_DECIDES`
    and the steps ``T0 → T`` whose regime is :data:`THEOREM` (``none`` where no step
    is). A row missing here keeps :func:`paired_stats.theorem_cell` (not claimed)."""
    table = split_rows(frame, splits, rows)
    cells = {}
    for experiment, env_id, label, eps, _, _ in rows:
        key = (ps.learner_cell(label, eps), short(env_id))
        mine = [r for r in table if (r[0], r[1]) == key]
        if not mine or len(mine) != len(by_horizon(frame, experiment, env_id, label, eps)):
            continue
        steps = [f"{a[2]} → {b[2]}" for a, b in zip(mine, mine[1:]) if b[-1] == THEOREM]
        cells[key] = f"{SPLIT_DECIDES}: {', '.join(steps) or 'none'}"
    return cells


def split_block(frame: Any, splits: dict[str, dict[str, float]], rows: Sequence[tuple]) -> str:
    """The schedule split's table of ``rows`` (:func:`split_rows`), or what to run for
    it."""
    table = split_rows(frame, splits, rows)
    if not table:
        return ("**The smoothing schedule split off**: not computed for these results "
                "(`python benchmarks/studies/bandit-convex/analysis.py --split RESULTS_DIR` "
                "replays the smoothed learners' games and stores it).")
    return ("**The smoothing schedule split off** (every game replayed on its seeds, its "
            "realized regret checked against its record; per round the perturbation's cost "
            "f_t(x_t) − f_t(y_t) and the shrink's cost f_t(y_t) − f_t(z_t), summed, with "
            "x_t the played point, y_t the unperturbed one and z_t the unshrunk one, "
            "y_t = (1 − α) z_t + α c; the remainder is the unshrunk points' own regret, "
            "the schedule's part perturbation + shrink. "
            + ps.regime_rule("the theorem's exponent", "the smoothing radius")
            + ". A horizon is listed once every game of the learner there is split):\n\n"
            + ps.table(SPLIT_HEAD, table))


def render_ball(results: str | pathlib.Path) -> str:
    """The l2-ball block: slopes, the leading term's crossing, the schedule split, the
    price of privacy."""
    frame = STUDY.load(results)
    splits = load_splits(results)
    pairs = privacy_rows(frame, BALL_PAIRS)
    return "\n\n".join([
        "**Slopes** (l2-ball ids at their defaults):",
        slope_table(frame, BALL_ROWS, cells=theorem_cells(frame, splits, BALL_ROWS)),
        "**Smith-Thakurta's leading term** `p T^a χ` (Thm 6 on StronglyConvex, Thm 17 on "
        "Convex; logs and constants dropped) against trivial play's regret, taken linear at "
        "its measured rate at T max:", ps.table(CROSSING_HEAD, crossing_rows(frame)),
        split_block(frame, splits, BALL_ROWS),
        "**Price of privacy**, paired by seed:", ps.table(PRIVACY_HEAD, pairs),
        privacy_summary(pairs)])


def render_former(results: str | pathlib.Path) -> str:
    """The former-instances block: slopes on the polytopes and the 2-d ball, the
    schedule split, the price of privacy."""
    frame = STUDY.load(results)
    splits = load_splits(results)
    pairs = privacy_rows(frame, FORMER_PAIRS)
    cells = theorem_cells(frame, splits, FORMER_ROWS)
    polytopes = [r for r in FORMER_ROWS if r[0] == "former"]
    ball = [r for r in FORMER_ROWS if r[0] != "former"]
    return "\n\n".join([
        "**Slopes** on the polytope ids' former instances:",
        slope_table(frame, polytopes, cells=cells),
        "**Slopes** on the 2-d l2 ball, distance losses:",
        slope_table(frame, ball, cells=cells),
        split_block(frame, splits, FORMER_ROWS),
        "**Price of privacy**, paired by seed:", ps.table(PRIVACY_HEAD, pairs),
        privacy_summary(pairs)])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--split"]:
        where = sys.argv[2] if len(sys.argv) > 2 else STUDY.results()
        print(f"{store_splits(where, log=sys.stderr)} games split into {where}/{SPLIT_FILE}")
    else:
        STUDY.main(render_ball, render_former)
