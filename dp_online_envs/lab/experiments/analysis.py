"""From records to numbers: means with 95% confidence intervals, curves, price of privacy.

Records are grouped by *setting* -- env (with its options), horizon, configured agent,
epsilon and delta -- and summarized over seeds. The interval is the Student-t 95%
confidence interval of the mean over seeds. Where the comparator is certified rather
than exact, the regret of a game is the midpoint of its interval ``[regret_lo,
regret_hi]`` and the summary keeps the mean ends too.

Rounding is not data: every interval here (:func:`mean_ci`, :func:`ratio_ci`) is at
least :func:`rounding_level` wide on each side of its point. A spread at the level of
floating-point rounding (deterministic games, whose last bits differ from one CPU's
kernels to another's) is then no spread, and a verdict that asks whether an interval
excludes a null value (``hi < null`` or ``lo > null``) is decided by the point, and
only where the point is farther from the null than rounding: the same on every CPU.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from dp_online_envs.lab.experiments.game import IDEALIZED, agent_label, env_options, is_idealized
from dp_online_envs.lab.experiments.resolver import default_resolver

#: The relative size of a floating-point rounding error: a spread, or a gap between a
#: point and a null value, smaller than this times the size of the numbers it was
#: computed from (at least 1) is rounding, not data (:func:`rounding_level`). Summing a
#: few thousand doubles in another order moves a result by about 1e-13 of its size;
#: no measured difference in this suite is near 1e-9 of the quantities compared.
ROUNDING = 1e-9


def rounding_level(*scales: float) -> float:
    """The largest spread or gap that is rounding for numbers of the size of ``scales``:
    :data:`ROUNDING` times the largest finite ``|scale|``, or times 1 if that is smaller
    (a difference of two numbers near 0, such as two slopes, is compared on the scale
    of 1)."""
    finite = [abs(float(v)) for v in scales if v is not None and math.isfinite(v)]
    return ROUNDING * max([1.0, *finite])


def mean_ci(values: Iterable[float], level: float = 0.95,
            scale: float | None = None) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the Student-t confidence interval of the mean, at least
    :func:`rounding_level` wide on each side of the mean.

    With a single value the interval is the value itself (give or take rounding).

    Args:
        values: The sample.
        level: The confidence level.
        scale: The size of the numbers the values were computed from (the regrets of a
            paired difference; default: the largest ``|value|``), which sets the
            rounding level.
    """
    x = np.asarray(list(values), dtype=np.float64)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    floor = rounding_level(float(np.max(np.abs(x))) if scale is None else scale)
    if x.size == 1:
        return m, m - floor, m + floor
    # Imported here: scipy.stats alone takes about 0.7 s to import, and only the
    # intervals need it (not the CLI's start, nor reading records).
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    half = max(half, floor) if math.isfinite(half) else half
    return m, m - half, m + half


def ratio_ci(a: Iterable[float], b: Iterable[float],
             level: float = 0.95) -> tuple[float, float | None, float | None]:
    """``(ratio, lo, hi)``: ``mean(a) / mean(b)`` for paired samples (``a[i]`` and
    ``b[i]`` from the same seed) with Fieller's confidence interval.

    The interval is the set of ``rho`` that the paired t-test of ``a - rho b`` at
    ``level`` does not reject: ``(m_a - rho m_b)^2 <= q (s_aa - 2 rho s_ab + rho^2 s_bb)``
    with ``q = t^2 / n`` (sample covariances ``s``), a quadratic in ``rho``. It is
    bounded only when ``mean(b)`` is itself significantly non-zero; otherwise ``lo`` and
    ``hi`` are ``None`` (unbounded), as they are with fewer than two pairs. A bounded
    interval is at least :func:`rounding_level` wide on each side of the ratio.

    Raises:
        ValueError: Samples of different lengths, or an empty one.
    """
    x, y = (np.asarray(list(v), dtype=np.float64) for v in (a, b))
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"ratio_ci needs two paired samples of one length, got {x.size} "
                         f"and {y.size} values")
    ma, mb = float(x.mean()), float(y.mean())
    ratio = ma / mb if mb != 0 else math.nan
    if x.size < 2:
        return ratio, None, None
    from scipy import stats

    q = float(stats.t.ppf(0.5 + level / 2, x.size - 1)) ** 2 / x.size
    cov = np.cov(x, y, ddof=1)
    a2 = mb * mb - q * cov[1, 1]
    a1 = ma * mb - q * cov[0, 1]
    a0 = ma * ma - q * cov[0, 0]
    if a2 <= 0:
        return ratio, None, None
    # The quadratic is -q var(a - ratio b) <= 0 at rho = ratio, so with a2 > 0 its
    # discriminant is >= 0: a negative one is rounding (pairs with no spread give 0).
    root = math.sqrt(max(a1 * a1 - a2 * a0, 0.0))
    floor = rounding_level(ratio)
    return ratio, min((a1 - root) / a2, ratio - floor), max((a1 + root) / a2, ratio + floor)


def privacy_label(epsilon: float | None, delta: float | None, idealized: bool = False) -> str:
    """``"non-private"``, ``"eps=1"``, ``"eps=1, delta=1e-05"``, or with ``idealized``
    (a guarantee of the idealized real-valued mechanism only, :func:`~.game.is_idealized`)
    ``"eps=1, delta=1e-05, idealized"``."""
    if epsilon is None:
        return "non-private"
    return (f"eps={epsilon:g}" + (f", delta={delta:g}" if delta else "")
            + (f", {IDEALIZED}" if idealized else ""))


def env_label(record: dict[str, Any]) -> str:
    """The env id, with the options of the game it played that differ from the id's
    defaults (``DPBandit-Matroid-v1(loss=distance, n=8, rank=3)``), so two games are
    never shown as one: the record's resolved ``env_options`` against the id's defaults
    resolved now; for a record without them, or of an id this version does not know,
    the options the user wrote (``env_kwargs``)."""
    options = record.get("env_options")
    defaults = _default_options(record["env_id"]) if isinstance(options, dict) else None
    if defaults is None:
        return agent_label(record["env_id"], record.get("env_kwargs") or {})
    return agent_label(record["env_id"], {k: v for k, v in options.items()
                                          if k not in defaults or defaults[k] != v})


@functools.cache
def _default_options(env_id: str) -> dict[str, Any] | None:
    """The resolved options of ``env_id`` at its defaults; ``None`` for an unknown id."""
    try:
        return env_options(env_id, {})
    except ValueError:
        return None


@dataclasses.dataclass(frozen=True, order=True)
class Setting:
    """What a group of records shares (everything but the seed)."""

    env: str
    horizon: int
    agent: str
    label: str
    eps_key: tuple[float, float]
    epsilon: float | None = dataclasses.field(compare=False)
    delta: float | None = dataclasses.field(compare=False)
    idealized: bool = dataclasses.field(default=False, compare=False)

    @property
    def privacy(self) -> str:
        """How the privacy level is shown (labelled when the guarantee is idealized)."""
        return privacy_label(self.epsilon, self.delta, self.idealized)


def setting_of(record: dict[str, Any]) -> Setting:
    """The setting a record belongs to."""
    eps = record.get("epsilon")
    return Setting(env=env_label(record), horizon=int(record["horizon"]),
                   agent=record["agent"], label=record.get("agent_label") or record["agent"],
                   eps_key=(math.inf if eps is None else float(eps), float(record.get("delta") or 0)),
                   epsilon=eps, delta=record.get("delta"), idealized=is_idealized(record))


def group(records: Iterable[dict[str, Any]]) -> dict[Setting, list[dict[str, Any]]]:
    """Records by setting, settings sorted (env, horizon, agent, epsilon; non-private last)."""
    out: dict[Setting, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        out[setting_of(r)].append(r)
    return {k: sorted(out[k], key=lambda r: r["seed_index"]) for k in sorted(out)}


#: The reference agents that do not learn (``agents.reference.REFERENCE_AGENTS``; kept
#: here so the analysis does not import the agents package).
REFERENCE_AGENTS: tuple[str, ...] = ("center", "uniform")


def summary(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per setting: final regret over seeds with its 95% CI, and the rest.

    Each row also gives the price of privacy in this setting, two ways:

    * ``counterpart`` / ``vs_counterpart``: the ratio of the mean regret to that of the
      same algorithm without noise -- the non-private learner the private one declares
      (:meth:`agents.base.Agent.counterpart_for`, stored in the record) -- in the same
      env and horizon, run with its default options (other options change its
      constants: it is then not the same algorithm);
    * ``baseline`` / ``vs_baseline``: the ratio to the non-private agent with the lowest
      mean regret in the same env and horizon.

    Each ratio ``vs_X`` is taken on the seeds both rows played (paired by seed index)
    and comes with ``vs_X_lo`` / ``vs_X_hi``, its 95% interval there (:func:`ratio_ci`;
    ``None`` where unbounded), and so does ``vs_trivial``.

    Either is ``None`` when that agent did not run (or has zero mean regret); the
    reference agents never count as the baseline. ``idealized`` marks the rows whose
    declared guarantee holds for the idealized real-valued mechanism only (the float
    outputs of the ``factorization`` and ``blt`` counters); their ``privacy`` label says
    so (``"eps=1, delta=1e-06, idealized"``). ``reference`` marks the rows of the
    reference agents (:data:`REFERENCE_AGENTS`), ``trivial`` is the lowest mean regret of
    a reference agent in the same env and horizon (what not learning costs; ``None`` if
    none was run) and ``vs_trivial`` the row's mean regret over it (below 1: better than
    not learning). ``trivial_ci_lo`` / ``trivial_ci_hi`` is that reference row's 95%
    interval, and ``not_learning`` (for every row but the references') says whether the
    row is not told apart from trivial play: ``True`` when, on the seed indices both
    played, the 95% interval of the mean paired difference (its regret minus trivial
    play's, :func:`paired_gap`) reaches 0 or above; ``None`` without a reference agent
    or with fewer than two shared seeds.
    """
    rows = []
    regrets: dict[int, dict[int, float]] = {}  # id(row) -> seed index -> regret
    for s, rs in group(records).items():
        m, lo, hi = mean_ci(r["regret"] for r in rs)
        pseudo = [r["pseudo_regret"] for r in rs if r.get("pseudo_regret") is not None]
        rows.append({
            "env": s.env, "horizon": s.horizon, "agent": s.agent, "agent_label": s.label,
            "private": bool(rs[0].get("private")), "epsilon": s.epsilon, "delta": s.delta,
            "counterpart": _counterpart(rs[0]),
            "privacy": s.privacy, "guarantee": rs[0].get("privacy", ""),
            "idealized": any(is_idealized(r) for r in rs),
            "n": len(rs), "regret_mean": m, "regret_ci_lo": lo, "regret_ci_hi": hi,
            "exact": all(r.get("exact", True) for r in rs),
            "regret_lo_mean": float(np.mean([r["regret_lo"] for r in rs])),
            "regret_hi_mean": float(np.mean([r["regret_hi"] for r in rs])),
            "pseudo_regret_mean": float(np.mean(pseudo)) if pseudo else None,
            "learner_loss_mean": float(np.mean([r["learner_loss"] for r in rs])),
            "clipped_feedback": int(sum(r.get("clipped_feedback", 0) for r in rs)),
            "projected_actions": int(sum(r.get("projected_actions", 0) for r in rs)),
            "switches_mean": (float(np.mean([r["switches"] for r in rs]))
                              if all(r.get("switches") is not None for r in rs) else None),
            "wall_time_mean": float(np.mean([r.get("wall_time", math.nan) for r in rs])),
            "reference": s.agent in REFERENCE_AGENTS,
        })
        regrets[id(rows[-1])] = {r["seed_index"]: r["regret"] for r in rs}
    trivial: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        key = (row["env"], row["horizon"])
        if row["reference"] and (key not in trivial
                                 or row["regret_mean"] < trivial[key]["regret_mean"]):
            trivial[key] = row
    for row in rows:
        t = trivial.get((row["env"], row["horizon"]))
        row["trivial"] = None if t is None else t["regret_mean"]
        row["trivial_ci_lo"] = None if t is None else t["regret_ci_lo"]
        row["trivial_ci_hi"] = None if t is None else t["regret_ci_hi"]
        _set_ratio(row, "vs_trivial", t, regrets)
        row["not_learning"] = None
        if t is not None and not row["reference"]:
            gap = paired_gap(regrets[id(row)], regrets[id(t)])
            row["not_learning"] = None if gap is None else gap[2] >= 0
    best: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        if row["private"] or row["reference"]:
            continue
        key = (row["env"], row["horizon"])
        if key not in best or row["regret_mean"] < best[key]["regret_mean"]:
            best[key] = row
    # the counterpart's row: that agent with its default options (same constants)
    plain = {(row["env"], row["horizon"], row["agent"]): row for row in rows
             if not row["private"] and row["agent_label"] == row["agent"]}
    for row in rows:
        base = best.get((row["env"], row["horizon"]))
        row["baseline"] = base["agent_label"] if base is not None else None
        _set_ratio(row, "vs_baseline", base, regrets)
        twin = (plain.get((row["env"], row["horizon"], row["counterpart"]))
                if row["private"] and row["counterpart"] else None)
        _set_ratio(row, "vs_counterpart", twin, regrets)
    return rows


def _set_ratio(row: dict[str, Any], key: str, other: dict[str, Any] | None,
               regrets: dict[int, dict[int, float]]) -> None:
    """``row[key]``: the ratio of the two rows' mean regrets on the seed indices both
    played, and ``row[key + "_lo" / "_hi"]`` its paired 95% interval there
    (:func:`ratio_ci`); without a shared seed, the ratio of the rows' means and no
    interval. ``None`` without the other row or when its mean (on the seeds compared)
    is not positive."""
    row[key] = row[f"{key}_lo"] = row[f"{key}_hi"] = None
    if other is None:
        return
    mine, theirs = regrets[id(row)], regrets[id(other)]
    both = sorted(set(mine) & set(theirs))
    if not both:
        if other["regret_mean"] > 0:
            row[key] = row["regret_mean"] / other["regret_mean"]
        return
    if not float(np.mean([theirs[i] for i in both])) > 0:
        return
    row[key], row[f"{key}_lo"], row[f"{key}_hi"] = ratio_ci([mine[i] for i in both],
                                                            [theirs[i] for i in both])


def paired_gap(a: dict[int, float], b: dict[int, float]
               ) -> tuple[float, float, float] | None:
    """``(mean, lo, hi)``: the mean of ``a[i] - b[i]`` over the seed indices ``i`` both
    hold, with its Student-t 95% interval (:func:`mean_ci`); ``None`` with fewer than
    two shared seed indices.

    Args:
        a, b: Final regrets by seed index (games of one seed index face the same losses).
    """
    both = sorted(set(a) & set(b))
    if len(both) < 2:
        return None
    scale = max(max(abs(a[i]), abs(b[i])) for i in both)
    return mean_ci((a[i] - b[i] for i in both), scale=scale)


def _counterpart(record: dict[str, Any]) -> str | None:
    """The non-private counterpart of a private record's agent.

    Records store it (``play_game``); for older records the agent class's declared
    :attr:`~agents.base.Agent.counterpart` is used if the agent is registered.
    """
    if not record.get("private"):
        return None
    if "counterpart" in record:
        return record["counterpart"]
    try:
        return default_resolver().resolve(record["agent"]).counterpart
    except (ImportError, ValueError):
        return None


def curve(records: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Mean regret curve over seeds with its 95% band, at the records' common checkpoints.

    Returns:
        ``{"t", "mean", "lo", "hi"}`` arrays (the curve of a game is the midpoint of its
        ``[regret_curve_lo, regret_curve_hi]``).
    """
    cps = [tuple(r["checkpoints"]) for r in records]
    common = sorted(set(cps[0]).intersection(*map(set, cps[1:]))) if cps else []
    t = np.asarray(common, dtype=np.float64)
    ys = []
    for r in records:
        idx = {c: i for i, c in enumerate(r["checkpoints"])}
        lo = np.asarray(r["regret_curve_lo"], dtype=np.float64)
        hi = np.asarray(r["regret_curve_hi"], dtype=np.float64)
        ys.append(np.array([0.5 * (lo[idx[c]] + hi[idx[c]]) for c in common]))
    y = np.vstack(ys) if ys else np.zeros((0, 0))
    stats = [mean_ci(y[:, j]) for j in range(y.shape[1])] if y.size else []
    return {"t": t, "mean": np.array([s[0] for s in stats]),
            "lo": np.array([s[1] for s in stats]), "hi": np.array([s[2] for s in stats])}


def counters_in(records: Iterable[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """``(env, agent) -> counters`` for the agents run with several ``counter`` options."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        c = (r.get("agent_kwargs") or {}).get("counter")
        if c is not None:
            found[(env_label(r), r["agent"])].add(str(c))
    return {k: sorted(v) for k, v in sorted(found.items()) if len(v) > 1}
