"""The real-data envs: do their defaults separate, and what does privacy cost on real
examples? (the analysis)

Reads the stored results of ``sweep.yaml`` (next to this file) and writes the
``real-data`` block of ``docs/results.md``, every interval over paired seeds (the same
games for every learner of a table):

1. the separation rows of the two labelled-data ids at their default horizon ``T``:
   the separation study's own table and criteria (:func:`separation_block`, with
   :func:`id_rows <separation.analysis.id_rows>` of ``benchmarks/studies/separation``);
2. on ``DPFullInfo-Classification-v0`` with logistic and hinge losses, the private
   learners' regret by epsilon [Student-t 95% interval] against trivial play, ``ftal``
   and ``ftrl``, and where each is below trivial play (:func:`below_trivial`); the
   paired comparisons the prose rests on (:func:`comparison_rows`:
   ratios with Fieller's interval, differences with the paired t interval, a side named
   only where its interval excludes the null); ``private-ftrl-grad``'s regret bounds
   (``docs/algorithms/private-ftrl-grad.md``) from the learner itself
   (:func:`bound_rows`), and the linear-loss learners' refusal of these losses;
3. ``private-ftrl-grad``'s default step against the noise-balanced one, paired
   (:func:`step_rows`; the sweep's step is checked against :func:`balanced_eta`);
4. ``DPFullInfo-Portfolio-v1``: the pair screen over the 20 stocks (recomputed from the
   data, :func:`pair_screen`) with trivial play and ``ons`` on each candidate; the
   default pair's separation rows and ``pftal`` by epsilon against trivial play
   (:func:`pftal_rows`: ``below`` / ``above`` trivial play only where Fieller's interval
   of the paired ratio excludes 1, else "neither side shown"); the
   former 20-stock game. At ``T`` the portfolio game is one window of the data, the same
   for every seed, so a deterministic learner's regret there is exact (its interval has
   width 0); only trivial play's windows of ``T/4`` and the private learners' noise vary
   with the seed.
"""

from __future__ import annotations

import itertools
import json
import math
import pathlib
import sys
from typing import Any

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import paired_stats as ps  # noqa: E402

STUDY = ps.Study(__file__)
CLS = "DPFullInfo-Classification-v0"
CLASSES = "DPBandit-Classes-v0"
PF = "DPFullInfo-Portfolio-v1"
TRIVIAL = "center"
#: The separation rows: per id, its family's learners (non-private, private at eps = 1).
SEPARATION = {CLS: ("center", "ftal", "pftal"), CLASSES: ("center", "exp3", "private-exp2")}
#: The Gaussian learners' delta.
DELTA = 1e-6
#: The private learners by epsilon: (row label, agent label, delta).
PRIVATE_ROWS = (("pftal", "pftal", 0.0),
                ("ftrl-grad Laplace", "private-ftrl-grad", 0.0),
                ("ftrl-grad Gauss", "private-ftrl-grad", DELTA),
                ("ftpl-grad Gauss", "private-ftpl-grad", DELTA))
LOSSES = ("logistic", "hinge")
#: Epsilons searched for the first one at which a bound falls below trivial play.
BOUND_GRID = (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
#: The portfolio's default pair and the former 20-stock game.
DEFAULT_PAIR = ("GE", "MSFT")
PF_NON_PRIVATE = ("ons", "ftal", "hedge")
#: The screen's threshold: the uniform portfolio trails the best CRP by more than this.
SCREEN_THRESHOLD = 1.5


def column(frame: Any, name: str) -> Any:
    """``frame[name]``, or a column of ``None`` when no game has that option."""
    return frame[name] if name in frame else frame.index.to_series().map(lambda _: None)


def cls_games(frame: Any, loss: str) -> Any:
    """The classification games with ``loss``."""
    return frame[(frame.env_id == CLS) & (column(frame, "env_options.loss") == loss)]


def cell(frame: Any, label: str, horizon: int, epsilon: float | None = None,
         delta: float = 0.0) -> dict[int, float]:
    """``{seed_index: regret}`` of one learner at one ``(epsilon, delta)``."""
    if epsilon is not None:
        frame = frame[np.isclose(frame.delta.astype(float), delta)]
    return ps.regrets(frame, label, horizon, epsilon)


def horizon_of(env_id: str) -> int:
    """The id's default horizon."""
    from dp_online_envs.envs.registry import ENV_CONFIGS

    return int(ENV_CONFIGS[env_id].options()["horizon"])


# --- 1. separation


def separation_block(frame: Any) -> str:
    """The separation study's table and criteria on the labelled-data ids' games (trivial
    play, the family's non-private learner and its private learner at epsilon = 1)."""
    sep = ps.study_module("separation")
    parts = []
    for env_id, agents in SEPARATION.items():
        games = frame[(frame.env_id == env_id) & frame.agent.isin(agents)
                      & (frame.epsilon.isna() | np.isclose(frame.epsilon.astype(float), 1.0))
                      & (frame.delta.isna() | (frame.delta.astype(float) == 0))]
        if env_id == CLS:
            games = games[column(games, "env_options.loss") == "logistic"]
        parts.append(games[games.horizon.isin([horizon_of(env_id) // 4, horizon_of(env_id)])])
    import pandas as pd

    games = pd.concat(parts)
    rows = sep.rows_of(games, ids=tuple(SEPARATION))
    return sep.table(games, ids=tuple(SEPARATION), rows=rows)


# --- 2. the private learners by epsilon on the classification game


def epsilons_of(frame: Any) -> list[float]:
    """The private learners' epsilons on the classification game (``T`` = its default)."""
    games = frame[(frame.env_id == CLS) & (frame.horizon == horizon_of(CLS))
                  & (frame.agent_label == "private-ftpl-grad")]
    return sorted(float(e) for e in games.epsilon.dropna().unique())


def epsilon_table(frame: Any, loss: str) -> str:
    """Per private learner, its mean regret [95% interval] at every epsilon."""
    games, t = cls_games(frame, loss), horizon_of(CLS)
    epsilons = epsilons_of(frame)
    rows = [[label, *(ps.mean_text(cell(games, name, t, e, d), ".0f") for e in epsilons)]
            for label, name, d in PRIVATE_ROWS]
    return ps.table(["learner", *(f"ε={e:g}" for e in epsilons)], rows)


def below_trivial(frame: Any, loss: str) -> str:
    """Per private learner, the epsilons at which Fieller's interval of its paired ratio
    to trivial play lies below 1."""
    games, t = cls_games(frame, loss), horizon_of(CLS)
    trivial = cell(games, TRIVIAL, t)
    below = {label: [e for e in epsilons_of(frame)
                     if ps.ratio(cell(games, name, t, e, d), trivial)[1] == "below"]
             for label, name, d in PRIVATE_ROWS}
    return ("Below trivial play (Fieller interval of the paired ratio to `center` below 1): "
            + "; ".join(f"{label} at ε ∈ {ps.listed(es)}" for label, es in below.items())
            + ".")


def reference_line(frame: Any, loss: str) -> str:
    """Trivial play's, ``ftal``'s and ``ftrl``'s mean regret [95% interval]."""
    games, t = cls_games(frame, loss), horizon_of(CLS)
    return f"loss = {loss}, T = {t}: " + ", ".join(
        f"`{a}` {ps.mean_text(cell(games, a, t), '.2f')}" for a in (TRIVIAL, "ftal", "ftrl"))


COMPARISON_HEAD = ("ε", "pftal / trivial [Fieller]", "pftal / ftal [Fieller]",
                   "ftrl-grad Laplace − pftal [t]", "ftrl-grad Gauss − pftal [t]",
                   "ftpl-grad − ftrl-grad (Gauss) [t]")


def comparison_rows(frame: Any, loss: str) -> list[list[str]]:
    """Per epsilon, the paired comparisons: pftal against trivial play and ``ftal``
    (ratios), the Laplace and the Gaussian ``private-ftrl-grad`` against ``pftal`` and
    ``private-ftpl-grad`` against ``private-ftrl-grad`` (differences)."""
    games, t = cls_games(frame, loss), horizon_of(CLS)
    trivial, ftal = cell(games, TRIVIAL, t), cell(games, "ftal", t)
    rows = []
    for e in epsilons_of(frame):
        pftal = cell(games, "pftal", t, e)
        lap = cell(games, "private-ftrl-grad", t, e)
        gauss = cell(games, "private-ftrl-grad", t, e, DELTA)
        ftpl = cell(games, "private-ftpl-grad", t, e, DELTA)
        rows.append([f"{e:g}", " ".join(ps.ratio(pftal, trivial)),
                     " ".join(ps.ratio(pftal, ftal)),
                     " ".join(ps.difference(lap, pftal, ("Laplace", "pftal"), "+.0f")),
                     " ".join(ps.difference(gauss, pftal, ("Gauss", "pftal"), "+.0f")),
                     " ".join(ps.difference(ftpl, gauss, ("ftpl-grad", "ftrl-grad"), "+.0f"))])
    return rows


def ftrl_grad(loss: str, epsilon: float, **kw: Any) -> Any:
    """``private-ftrl-grad`` (Gaussian, ``delta = DELTA``) as built on the classification
    game with ``loss`` at its default horizon (its parameters depend on the problem,
    ``T`` and the privacy only)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    problem = build_env(CLS, loss=loss).get_wrapper_attr("problem")
    return make("private-ftrl-grad", problem, seed=0, epsilon=float(epsilon), delta=DELTA,
                **kw)


def adaptive_bound(agent: Any) -> float:
    """The bound for adaptive gradients, ``D L sqrt(T) + D sqrt(T) E||Z||``."""
    return float(agent.regret_bound())


def one_shot_bound(agent: Any) -> float:
    """Thm 3.4's one-shot bound ``D L sqrt(T) + 2 E||Z||`` (oblivious linear losses: the
    hinge loss linearized on the unit ball)."""
    p = agent.problem
    return p.diameter * agent.gradient_bound * math.sqrt(p.horizon) + 2.0 * agent.noise_norm()


def bound_rows(frame: Any, learner: Any = ftrl_grad) -> list[list[str]]:
    """Per loss and bound: its value at every epsilon and the first epsilon of
    :data:`BOUND_GRID` at which it is below trivial play's mean regret
    (``learner(loss, epsilon)``: the Gaussian ``private-ftrl-grad``)."""
    rows = []
    epsilons = epsilons_of(frame)
    for loss in LOSSES:
        trivial = cell(cls_games(frame, loss), TRIVIAL, horizon_of(CLS))
        if not trivial:
            continue
        level = float(np.mean(list(trivial.values())))
        bounds = [("adaptive gradients", adaptive_bound)]
        if loss == "hinge":
            bounds.append(("Thm 3.4, one shot", one_shot_bound))
        for name, bound in bounds:
            first = next((e for e in BOUND_GRID if bound(learner(loss, e)) < level), None)
            rows.append([loss, name, *(f"{bound(learner(loss, e)):,.0f}" for e in epsilons),
                         f"{level:.0f}", "none of the grid" if first is None else f"ε = {first:g}"])
    return rows


def refusals() -> list[str]:
    """The linear-loss learners' answers to the logistic loss (they refuse it)."""
    from agents import make
    from dp_online_envs.envs.registry import build_env

    problem = build_env(CLS, horizon=10).get_wrapper_attr("problem")
    out = []
    for name, extra in (("private-ftrl", {}), ("private-ftpl", {"delta": DELTA})):
        try:
            make(name, problem, seed=0, epsilon=1.0, **extra)
            out.append(f"`{name}` accepts the logistic loss")
        except ValueError as exc:
            out.append(f"`{name}` refuses it ({str(exc).split(':')[0]})")
    return out


# --- 3. private-ftrl-grad's step


def balanced_eta(epsilon: float, loss: str = "logistic") -> float:
    """The noise-balanced step ``eta/2 = D / sqrt(T (L^2 + 2 L E||Z||))`` of the Gaussian
    ``private-ftrl-grad`` at ``epsilon`` (it minimizes the adaptive bound)."""
    a = ftrl_grad(loss, epsilon)
    D, L, T = a.problem.diameter, a.gradient_bound, a.problem.horizon
    return 2.0 * D / math.sqrt(T * (L * L + 2.0 * L * a.noise_norm()))


def sweep_steps() -> dict[float, float]:
    """``{epsilon: eta}`` of the sweep's noise-balanced ``private-ftrl-grad`` games."""
    from dp_online_envs.lab.experiments.sweep import load_sweep

    return {float(g.epsilon): float(g.agent_kwargs["eta"]) for g in load_sweep(STUDY.sweep).games
            if g.agent == "private-ftrl-grad" and "eta" in g.agent_kwargs}


def check_steps(steps: dict[float, float], balanced: Any = balanced_eta) -> None:
    """Raises ValueError where a sweep's step is not the learner's noise-balanced step
    (a stale value after the learner's noise changed)."""
    for eps, eta in steps.items():
        want = balanced(eps)
        if not math.isclose(eta, want, rel_tol=1e-9):
            raise ValueError(f"sweep.yaml's step at epsilon {eps:g} is {eta!r}, but the "
                             f"noise-balanced step is now {want!r}: update the sweep")


def step_rows(frame: Any, steps: dict[float, float]) -> list[list[str]]:
    """Per epsilon: the default step's and the balanced step's regret [95% interval] and
    their paired difference balanced - default [t interval] with its side."""
    from dp_online_envs.lab.experiments.game import agent_label

    games, t = cls_games(frame, "logistic"), horizon_of(CLS)
    rows = []
    for eps, eta in sorted(steps.items()):
        default = cell(games, "private-ftrl-grad", t, eps, DELTA)
        label = agent_label("private-ftrl-grad", {"eta": eta})
        balanced = cell(games, label, t, eps, DELTA)
        if not default or not balanced:
            continue
        eta0 = ftrl_grad("logistic", eps).eta
        text, verdict = ps.difference(balanced, default, ("balanced", "default"), "+.0f")
        rows.append([f"{eps:g}", f"{ps.mean_text(default, '.0f')} (η {eta0:.4f})",
                     f"{ps.mean_text(balanced, '.0f')} (η {eta:.4f})", text,
                     {"default": "the default", "balanced": "the balanced step"}.get(
                         verdict, verdict)])
    return rows


STEP_HEAD = ("ε", "default step [95% CI]", "balanced step [95% CI]",
             "balanced − default [t]", "lower regret")


# --- 4. the portfolio game


def tickers(frame: Any) -> Any:
    """The games' ticker tuples (``env_options.tickers``, JSON text in the frame)."""
    return column(frame, "env_options.tickers").map(
        lambda v: tuple(json.loads(v)) if isinstance(v, str) else None)


def portfolio_games(frame: Any, pair: tuple[str, ...], loss_kwargs: dict | None = None) -> Any:
    """The portfolio games on ``pair`` with ``loss_kwargs`` (``None``: the id's default
    range; the records hold the resolved options)."""
    if loss_kwargs is None:
        from dp_online_envs.lab.experiments.game import env_options

        loss_kwargs = env_options(PF, {})["loss_kwargs"]
    games = frame[np.asarray((frame.env_id == PF) & (tickers(frame) == tuple(pair)),
                             dtype=bool)]
    kw = column(games, "env_options.loss_kwargs").map(
        lambda v: json.loads(v) if isinstance(v, str) else None)
    return games[np.asarray(kw.map(lambda v: v == loss_kwargs), dtype=bool)]


def pair_screen(threshold: float = SCREEN_THRESHOLD) -> list[tuple[float, tuple[str, str],
                                                                   tuple[float, float]]]:
    """Every pair of the 20 stocks over the whole range, descending: the uniform
    portfolio's regret against the certified best constant-rebalanced portfolio (upper
    end of its interval, so a lower estimate of the regret) for the pairs above
    ``threshold``, with each pair's range: the data's extremes rounded out to a
    multiple of 0.05."""
    from dp_online_envs import datasets
    from dp_online_envs.losses.portfolio import best_rebalanced_portfolio

    d = datasets.load_sp500()
    rel = d.relatives()
    out = []
    for i, j in itertools.combinations(range(len(d.tickers)), 2):
        rows = rel[:, [i, j]]
        _, hi, _ = best_rebalanced_portfolio(rows)
        trivial = float(-np.log(rows.mean(axis=1)).sum() - hi)
        if trivial > threshold:
            rng = (math.floor(rows.min() * 20) / 20, math.ceil(rows.max() * 20) / 20)
            out.append((trivial, (d.tickers[i], d.tickers[j]), rng))
    return sorted(out, reverse=True)


def screen_rows(frame: Any, screen: list[tuple] | None = None) -> list[list[str]]:
    """Per candidate of :func:`pair_screen` (``screen`` when already computed): trivial
    play's regret at ``T`` and its per-seed slope from ``T/4`` [95% interval], ``ons``'s
    regret at ``T`` and its ratio to trivial play (exact: one window, deterministic)."""
    sep = ps.study_module("separation")
    rows = []
    for _, pair, (lo, hi) in pair_screen() if screen is None else screen:
        games = portfolio_games(frame, pair, {"r_min": lo, "r_max": hi})
        by = {r["learner"]: r for r in sep.id_rows(games, PF)}
        trivial, ons = by.get(f"{TRIVIAL} (trivial)"), by.get("ons")
        if trivial is None or ons is None:
            rows.append(["-".join(pair), f"[{lo:.2f}, {hi:.2f}]", "not played", "", "", ""])
            continue
        rows.append(["-".join(pair), f"[{lo:.2f}, {hi:.2f}]", trivial["regret"],
                     trivial["ratio"].removeprefix("slope "), ons["regret"], ons["ratio"]])
    return rows


SCREEN_HEAD = ("pair", "range", "trivial at T", "trivial's slope from T/4 [95% CI]",
               "ons at T", "ons / trivial")


def default_table(frame: Any, pair: tuple[str, ...] = DEFAULT_PAIR,
                  loss_kwargs: dict | None = None) -> str:
    """The separation study's rows (trivial play with its slope, the non-private
    learners with their ratio and criterion) on one portfolio game."""
    sep = ps.study_module("separation")
    games = portfolio_games(frame, pair, loss_kwargs)
    games = games[games.agent.isin((TRIVIAL, *PF_NON_PRIVATE))]
    return sep.table(games, ids=(PF,))


def pftal_rows(frame: Any) -> list[list[str]]:
    """Per epsilon, ``pftal`` on the default portfolio game: its regret [95% interval],
    the paired ratio to trivial play [Fieller] and what it supports (below, above or
    indistinguishable from trivial play), and in how many seeds it is above."""
    games = portfolio_games(frame, DEFAULT_PAIR)
    t = horizon_of(PF)
    trivial = cell(games, TRIVIAL, t)
    rows = []
    for eps in sorted(float(e) for e in games[games.agent == "pftal"].epsilon.dropna().unique()):
        p = cell(games, "pftal", t, eps)
        seeds = sorted(set(p) & set(trivial))
        text, side = ps.ratio(p, trivial)
        above = sum(p[s] > trivial[s] for s in seeds)
        rows.append([f"{eps:g}", len(seeds), ps.mean_text(p, ".3f"), text,
                     {"below": "below trivial play", "above": "above trivial play",
                      ps.NOT_REPLICATED: ps.NOT_REPLICATED}.get(
                         side, "neither side shown (the interval holds 1)"),
                     f"{above} of {len(seeds)}"])
    return rows


PFTAL_HEAD = ("ε", "seeds", "pftal regret [95% CI]", "/ trivial [Fieller]", "verdict",
              "seeds above trivial")


def render(results: str | pathlib.Path) -> str:
    """The section's block, parts 1-4."""
    from dp_online_envs import datasets

    frame = STUDY.load(results)
    steps = sweep_steps()
    check_steps(steps)
    former = {"r_min": 0.5, "r_max": 2.0}
    parts = [
        "**1. Separation** at each labelled-data id's default horizon T (trivial play's "
        "slope from T/4), private ε = 1:", separation_block(frame),
        f"**2. `{CLS}`**, private learners by ε: mean regret [Student-t 95% interval] "
        f"(Gauss: δ = {DELTA:g}; the others pure ε-DP)."]
    for loss in LOSSES:
        parts += [reference_line(frame, loss), epsilon_table(frame, loss),
                  below_trivial(frame, loss),
                  f"Paired comparisons ({loss}): ratio [Fieller 95%] or difference [paired t "
                  "95%], then the side the interval supports (`~`: it contains the null):",
                  ps.table(COMPARISON_HEAD, comparison_rows(frame, loss))]
    parts += [
        "`private-ftrl-grad`'s regret bounds (Gaussian) against trivial play's mean regret, "
        f"and the first ε of the grid {ps.listed(BOUND_GRID)} where the bound is below it:",
        ps.table(["loss", "bound", *(f"ε={e:g}" for e in epsilons_of(frame)), "trivial",
                  "below trivial from"], bound_rows(frame)),
        "Linear-loss learners on the logistic loss: " + "; ".join(refusals()) + ".",
        "**3. `private-ftrl-grad`'s step** (logistic, Gaussian), default against the "
        "noise-balanced `η/2 = D / sqrt(T (L² + 2 L E‖Z‖))`, paired:",
        ps.table(STEP_HEAD, step_rows(frame, steps)),
        f"**4. `{PF}`**, T = {horizon_of(PF)} (every trading day: one window, the same in "
        "every seed; trivial play's slope from seeded windows of T/4). (a) The pairs of the "
        f"20 stocks whose uniform portfolio trails the best constant-rebalanced portfolio "
        f"by more than {SCREEN_THRESHOLD:g} over the whole range, `ons` at each pair's "
        "range:", ps.table(SCREEN_HEAD, screen_rows(frame)),
        f"(b) The default ({'-'.join(DEFAULT_PAIR)}, relatives in [0.8, 1.2]):",
        default_table(frame), "`pftal` on the default, paired with trivial play:",
        ps.table(PFTAL_HEAD, pftal_rows(frame)),
        "(c) The former game (all 20 stocks, relatives clipped to [0.5, 2]):",
        default_table(frame, datasets.SP500_TICKERS, former)]
    return "\n\n".join(parts)


if __name__ == "__main__":
    STUDY.main(render)
