"""The regret rates the agents' papers prove, and fitting measured regret to them.

``rate(agent, env_id)`` is the exponent ``a`` of ``R(T) = O~(T^a)`` (log factors and the
dependence on epsilon and the dimension dropped). An agent class may declare its own
with a class attribute ``regret_rate``; otherwise the table below is used, and 0.5 when
the agent is not in it.

The benchmarks compare measured regret with these exponents through
:func:`loglog_slope` (least-squares slope of ``log R`` on ``log T``),
:func:`local_slope` (``d log f / d log T`` of an explicit bound ``f``) and
:func:`slope_reached` (the horizon from which such a bound's local slope stays within a
tolerance of the exponent: where its polylog or ``1/epsilon`` term stops dominating).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from dp_online_envs.lab.experiments.resolver import AgentResolver, resolve_agent
from dp_online_envs.validation import check_real

#: Default exponent for an agent the table does not know.
DEFAULT_RATE = 0.5

#: Exponent by agent name (the paper's headline rate for the agent's main setting).
RATES: dict[str, float] = {
    # full information, linear losses (Agarwal-Singh 2017, Tables 1-2; Freund-Schapire)
    "hedge": 0.5,
    "ftrl": 0.5,
    "private-ftrl": 0.5,
    "private-ftpl": 0.5,
    "online-fw": 0.75,  # Hazan-Kale 2012, projection-free
    # full information, convex losses (Smith-Thakurta 2013): sqrt(T)/eps
    "ftal": 0.5,
    "pftal": 0.5,
    # submodular (Hazan-Kale 2012; Cardoso-Cummings 2019)
    "hazan-kale-submodular": 0.5,
    "submod-pftal": 0.5,
    "bandit-submod-pftal": 0.75,
    "hazan-kale-submodular-bandit": 2.0 / 3.0,
    # bandits: Agarwal-Singh 2017 (private EXP2 / SCRiBLe reduction): sqrt(T)/eps
    "exp3": 0.5,
    "exp2": 0.5,
    "private-exp2": 0.5,
    "private-bandit": 0.5,
    "scrible": 0.5,
    "private-scrible": 0.5,
    # bandit convex optimization: T^{3/4} (FKM 2005; Smith-Thakurta 2013;
    # Garber-Kretzu 2020; Ene-Nguyen-Vladu 2021)
    "fkm": 0.75,
    "bandit-pftal": 0.75,
    "garber-kretzu": 0.75,
    "private-projection-free": 0.75,
}

#: Exponents that depend on the env as well: strongly convex losses are easier.
ENV_RATES: dict[tuple[str, str], float] = {
    ("ftal", "DPFullInfo-StronglyConvex-v1"): 0.0,  # log T (Hazan-Agarwal-Kale 2007)
    ("pftal", "DPFullInfo-StronglyConvex-v1"): 0.0,  # polylog T / eps (Smith-Thakurta Thm. 3)
    ("bandit-pftal", "DPBandit-StronglyConvex-v1"): 2.0 / 3.0,  # oblivious, Thm. 6
}


def rate(agent: str, env_id: str | None = None,
         resolver: AgentResolver | None = None) -> float:
    """The exponent of the agent's proven regret rate (default :data:`DEFAULT_RATE`).

    Args:
        agent: The agent's name (as recorded).
        env_id: The env, for the exponents of :data:`ENV_RATES`.
        resolver: Where the agent's class, and its ``regret_rate`` if it declares one,
            is looked up (``None``: the ``agents`` registry, see :mod:`.resolver`).
    """
    try:
        declared = getattr(resolve_agent(agent, resolver), "regret_rate", None)
    except Exception:  # noqa: BLE001 - an agent that is no longer importable
        declared = None
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        return float(declared)
    if env_id is not None and (agent, env_id) in ENV_RATES:
        return ENV_RATES[(agent, env_id)]
    return RATES.get(agent, DEFAULT_RATE)


def loglog_slope(horizons: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of ``log(values)`` on ``log(horizons)``.

    Args:
        horizons: At least two distinct positive horizons ``T``.
        values: The measured (mean) regret at each horizon.

    Returns:
        The fitted exponent ``a`` of ``values ~ c T^a``; ``nan`` when a value is not a
        positive finite number (a log-log fit is then undefined).

    Raises:
        ValueError: On mismatched lengths, fewer than two distinct horizons, or a
            horizon that is not positive.
    """
    t = np.asarray(horizons, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape or t.ndim != 1:
        raise ValueError(f"horizons and values must be 1-d of equal length, got shapes "
                         f"{t.shape} and {v.shape}")
    if np.any(~np.isfinite(t)) or np.any(t <= 0):
        raise ValueError(f"horizons must be positive and finite, got {t.tolist()}")
    if np.unique(t).size < 2:
        raise ValueError(f"need at least two distinct horizons, got {t.tolist()}")
    if np.any(~np.isfinite(v)) or np.any(v <= 0):
        return math.nan
    return float(np.polyfit(np.log(t), np.log(v), 1)[0])


def local_slope(bound: Callable[[float], float], horizon: float,
                step: float = 1e-3) -> float:
    """``d log bound(T) / d log T`` at ``T = horizon`` (central difference in ``log T``).

    A ``log^k T`` bound has local slope ``k / ln T``, not 0; a ``c sqrt(T) + polylog``
    bound tends to 0.5 from wherever its polylog term leaves it.

    Raises:
        ValueError: On a non-positive horizon or step, or a bound that is not positive
            and finite near ``horizon``.
    """
    horizon = check_real("horizon", horizon, 0.0, low_inclusive=False)
    step = check_real("step", step, 0.0, low_inclusive=False)
    lo, hi = bound(horizon * math.exp(-step)), bound(horizon * math.exp(step))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo > 0 and hi > 0):
        raise ValueError(f"the bound must be positive and finite near T={horizon:g}, got "
                         f"{lo!r} and {hi!r}")
    return (math.log(hi) - math.log(lo)) / (2.0 * step)


def slope_reached(bound: Callable[[float], float], exponent: float, tol: float = 0.1,
                  t_min: float = 2.0, t_max: float = 1e30, per_octave: int = 4) -> float:
    """The horizon from which ``bound``'s local slope stays within ``tol`` of ``exponent``.

    Scans ``T = t_min * 2^(k / per_octave)`` up to ``t_max`` and returns the first ``T``
    after which every scanned local slope (:func:`local_slope`) is within ``tol`` of
    ``exponent`` (refined by bisection between the last failing and the first passing
    grid point): the crossing horizon at which a lower-order term of an explicit
    regret bound (``polylog T / epsilon``, a noise term) stops hiding the rate.

    Returns:
        That horizon, ``t_min`` if the slope is within ``tol`` everywhere, ``inf`` if it
        is not yet within ``tol`` at ``t_max``.

    Raises:
        ValueError: On ``tol <= 0``, ``t_min < 1``, ``t_max <= t_min`` or
            ``per_octave < 1``.
    """
    tol = check_real("tol", tol, 0.0, low_inclusive=False)
    return _holds_from(lambda t: abs(local_slope(bound, t) - exponent) <= tol,
                       t_min, t_max, per_octave)


def _holds_from(pred: Callable[[float], bool], t_min: float, t_max: float,
                per_octave: int) -> float:
    """First ``T`` of the grid ``t_min 2^(k/per_octave) <= t_max`` after which ``pred``
    holds at every grid point, refined by bisection in ``log T`` against the grid point
    before it (40 halvings); ``t_min`` / ``inf`` when it holds everywhere / not at the end.
    """
    t_min = check_real("t_min", t_min, 1.0)
    t_max = check_real("t_max", t_max, t_min, low_inclusive=False)
    if not isinstance(per_octave, int) or isinstance(per_octave, bool) or per_octave < 1:
        raise ValueError(f"per_octave={per_octave!r}, expected an int >= 1")
    n = math.floor(per_octave * math.log2(t_max / t_min)) + 1
    grid = [t_min * 2.0 ** (k / per_octave) for k in range(n)]
    inside = [bool(pred(t)) for t in grid]
    if not inside[-1]:
        return math.inf
    k = len(inside) - 1
    while k > 0 and inside[k - 1]:
        k -= 1
    if k == 0:
        return grid[0]
    lo, hi = math.log(grid[k - 1]), math.log(grid[k])  # pred false at lo, true at hi
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if pred(math.exp(mid)) else (mid, hi)
    return math.exp(hi)


def below_from(bound: Callable[[float], float], other: Callable[[float], float],
               t_min: float = 2.0, t_max: float = 1e30, per_octave: int = 4) -> float:
    """The horizon from which ``bound(T) <= other(T)`` on the scan grid of :func:`slope_reached`.

    Used with ``other`` = trivial play's regret (``c T``, linear): until ``bound`` falls
    below it the theorem promises nothing better than not learning, and measured regret
    need not show the theorem's exponent.

    Returns:
        The first ``T`` (scanned, then refined by bisection) after which
        ``bound <= other`` holds at every scanned horizon; ``t_min`` if it holds
        everywhere, ``inf`` if not at ``t_max``.

    Raises:
        ValueError: As :func:`slope_reached`.
    """
    return _holds_from(lambda t: bound(t) <= other(t), t_min, t_max, per_octave)


def geometric_horizons(t_max: int, decades: float = 2.0, per_decade: int = 2) -> list[int]:
    """``T_max 10^(-k / per_decade)`` for ``k = decades * per_decade .. 0``, rounded, ascending.

    ``geometric_horizons(100_000)`` is ``[1000, 3162, 10000, 31623, 100000]``.

    Raises:
        ValueError: On ``t_max < 2``, ``decades <= 0`` or ``per_decade < 1``, or when the
            smallest horizon would fall below 2.
    """
    if not isinstance(t_max, int) or isinstance(t_max, bool) or t_max < 2:
        raise ValueError(f"t_max={t_max!r}, expected an int >= 2")
    decades = check_real("decades", decades, 0.0, low_inclusive=False)
    if not isinstance(per_decade, int) or per_decade < 1:
        raise ValueError(f"per_decade={per_decade!r}, expected an int >= 1")
    n = round(decades * per_decade)
    ts = [round(t_max * 10.0 ** (-k / per_decade)) for k in range(n, -1, -1)]
    if ts[0] < 2:
        raise ValueError(f"t_max={t_max} over {decades:g} decades starts at T={ts[0]} < 2")
    return sorted(set(ts))
