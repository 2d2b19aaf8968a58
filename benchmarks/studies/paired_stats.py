"""What the studies' analyses share: paired regrets out of a results frame, and the
paired intervals and verdicts their tables print.

Every comparison is paired: two learners' games of one seed index face the same losses
(the env's seed derives from its settings and the seed index only), so the analyses
compare ``{seed_index: regret}`` maps on the seed indices both hold. A difference gets
the Student-t 95% interval of its mean (:func:`~dp_online_envs.lab.experiments.
analysis.paired_gap`), a ratio Fieller's interval (:func:`~dp_online_envs.lab.
experiments.analysis.ratio_ci`), a slope in ``T`` the Student-t interval of the mean of
the per-seed least-squares slopes (:func:`~dp_online_envs.lab.experiments.rates.
loglog_slope`). A side is named only where its interval excludes the null value;
otherwise the verdict is ``~``: not shown either way (the interval contains the null;
that is not a claim that the two are equal: :func:`equivalence` makes that claim, at a
stated margin, where the whole interval lies within it). Those intervals are never narrower than
rounding (:data:`~dp_online_envs.lab.experiments.analysis.ROUNDING`, the one tolerance):
games with no spread, or a spread of a few ulps, are decided by their point, and a point
within rounding of the null is ``~``, so every verdict is the same on every CPU.

Replication: every study plays two disjoint seed sets, the discovery seeds (indices
below :data:`REPLICATION_FIRST`, blocks tagged ``seed_set: discovery``) and a
replication set from :data:`REPLICATION_FIRST` on (``seed_set: replication``). Where
the data hold both, every verdict (:func:`difference`, :func:`ratio`,
:func:`slope_verdict`, :func:`on_both`) is computed on each set apart and written only
where the two agree; where they do not, the verdict is :data:`NOT_REPLICATED` and the
text gives both intervals (``<discovery>; replication <replication>``).

Every study's analysis (``benchmarks/studies/NAME/analysis.py``) describes its folder
with a :class:`Study` and runs as ``python benchmarks/studies/NAME/analysis.py
[RESULTS_DIR]`` (:meth:`Study.main`: the study's blocks, printed).
"""

from __future__ import annotations

import math
import pathlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dp_online_envs.lab.experiments.analysis import mean_ci, paired_gap, ratio_ci  # noqa: E402
from dp_online_envs.lab.experiments.rates import loglog_slope  # noqa: E402

#: The verdict of an interval that contains the null value.
NOISE = "~"
#: The first seed index of a study's replication set (its discovery seeds lie below).
REPLICATION_FIRST = 5000
#: The two seed sets, in the order their texts are written.
SEED_SETS = ("discovery", "replication")
#: The verdict where the two seed sets support different verdicts.
NOT_REPLICATED = "not replicated"
#: What the tables' verdicts ``~`` and :data:`NOT_REPLICATED` mean, in their captions.
LEGEND = ("(`~`: the interval holds the null, neither side shown; `not replicated`: the "
          "two seed sets disagree, both intervals given)")
#: How far a slope may be from a theorem's exponent to be called the theorem's.
SLOPE_TOLERANCE = 0.1


def load_study(results: str | pathlib.Path, sweep: str | pathlib.Path) -> Any:
    """The games of ``sweep`` stored in ``results``, as a
    :func:`~dp_online_envs.lab.experiments.table.load_results` frame (records of other
    games in the directory, e.g. of an earlier version of the sweep, are left out)."""
    from dp_online_envs.lab.experiments.sweep import load_sweep
    from dp_online_envs.lab.experiments.table import load_results

    frame = load_results(results)
    wanted = {g.game_id for g in load_sweep(sweep).games}
    return frame[frame.game_id.isin(wanted)]


def replay_below_guard(spec: Any, before_act: Callable[[Any], Any],
                       after_step: Callable[[Any, Any, Any], None]) -> Any:
    """Replay the game ``spec`` (a :class:`~dp_online_envs.lab.experiments.game.GameSpec`:
    its env, learner and seeds) below the feedback guard, whose info holds each round's
    record. Each round calls ``state = before_act(agent)``, plays, then
    ``after_step(state, record, loss)`` (the round's
    :class:`~dp_online_envs.rounds.RoundRecord` and the env's loss family).

    Returns:
        The game's regret summary (realized; a split checks it against the record).
    """
    from dp_online_envs.envs.registry import build_env
    from dp_online_envs.rounds import ROUND_INFO_KEY
    from dp_online_envs.wrappers.regret import REGRET_INFO_KEY

    env = build_env(spec.env_id, horizon=spec.horizon, **spec.env_kwargs)
    try:
        agent = spec.agent_class()(env.get_wrapper_attr("problem"), epsilon=spec.epsilon,
                                   delta=spec.delta or 0.0, seed=spec.agent_seed,
                                   **spec.agent_kwargs)
        agent.reset(spec.agent_seed)
        env.reset(seed=spec.env_seed)
        inner, loss = env.env, env.unwrapped.loss
        done, info = False, {}
        while not done:
            state = before_act(agent)
            action = agent.act()
            obs, _, terminated, truncated, info = inner.step(action)
            agent.update(action, obs)
            after_step(state, info[ROUND_INFO_KEY], loss)
            done = terminated or truncated
        return info[REGRET_INFO_KEY]
    finally:
        env.close()


class Study:
    """The folder of a study: its sweep (``sweep.yaml``) next to its analysis module.

    Args:
        analysis: The analysis module's ``__file__`` (``benchmarks/studies/NAME/
            analysis.py``).
    """

    def __init__(self, analysis: str | pathlib.Path) -> None:
        self.folder = pathlib.Path(analysis).resolve().parent
        self.sweep = self.folder / "sweep.yaml"

    def load(self, results: str | pathlib.Path) -> Any:
        """The games of the study's sweep stored in ``results`` (:func:`load_study`)."""
        return load_study(results, self.sweep)

    def results(self) -> pathlib.Path:
        """Where the sweep stores its games (its ``results``, below the repository)."""
        from dp_online_envs.lab.experiments.sweep import load_sweep

        return ROOT / load_sweep(self.sweep).results

    #: The file of a schedule split, in the results directory (:meth:`store_splits`).
    SPLIT_FILE = "schedule-split.json"

    def store_splits(self, results: str | pathlib.Path, wanted: Callable[[Any], bool],
                     split: Callable[[Any], dict[str, float]],
                     note: Callable[[dict[str, float]], str] | None = None,
                     log: Any = None) -> int:
        """``split(spec)`` of every stored game of the sweep that ``wanted(spec)`` keeps
        and ``RESULTS/`` :data:`SPLIT_FILE` does not hold yet, the cheap games first;
        the file is rewritten after each (resumable). ``split`` replays the game and
        returns its parts with the realized ``regret``, which must be the record's.
        Each game is named on ``log`` (with ``note(split)`` after it). Returns how many
        were computed.

        Raises:
            RuntimeError: A replay whose realized regret is not the record's.
        """
        import json

        from dp_online_envs.lab.experiments.store import atomic_write
        from dp_online_envs.lab.experiments.sweep import load_sweep

        path = pathlib.Path(results) / self.SPLIT_FILE
        done = self.load_splits(results)
        frame = self.load(results)
        stored = dict(zip(frame.game_id, frame.regret.astype(float)))
        todo = sorted((g for g in load_sweep(self.sweep).games
                       if wanted(g) and g.game_id in stored and g.game_id not in done),
                      key=lambda g: (g.horizon, g.seed_index))
        for spec in todo:
            parts = split(spec)
            if parts["regret"] != stored[spec.game_id]:
                raise RuntimeError(f"replay of game {spec.game_id} gives regret "
                                   f"{parts['regret']!r}, its record {stored[spec.game_id]!r}")
            done[spec.game_id] = parts
            atomic_write(path, json.dumps(done, sort_keys=True))
            if log is not None:
                print(f"{spec.label} eps={spec.epsilon} T={spec.horizon} "
                      f"seed={spec.seed_index}{': ' + note(parts) if note else ''}",
                      file=log, flush=True)
        return len(todo)

    def load_splits(self, results: str | pathlib.Path) -> dict[str, dict[str, float]]:
        """The stored splits of :meth:`store_splits` (``{}`` when none)."""
        import json

        path = pathlib.Path(results) / self.SPLIT_FILE
        return json.loads(path.read_text()) if path.exists() else {}

    def main(self, *renders: Callable[[str | pathlib.Path], str]) -> None:
        """The command line ``python benchmarks/studies/NAME/analysis.py [RESULTS_DIR]``:
        prints the blocks ``renders`` draw from ``RESULTS_DIR`` (default: the sweep's
        :meth:`results`), a blank line between two."""
        where = sys.argv[1] if len(sys.argv) > 1 else self.results()
        print("\n\n".join(render(where) for render in renders))


def learner_cell(label: str, epsilon: float | None) -> str:
    """A row's learner cell: ``private-ftrl ε=1`` (the label alone without epsilon)."""
    return label if epsilon is None else f"{label} ε={epsilon:g}"


def learner_games(frame: Any, label: str, epsilon: float | None = None) -> Any:
    """The rows of ``frame`` played by the configured learner ``label`` at ``epsilon``
    (``None``: a non-private learner's games, whose epsilon is empty)."""
    rows = frame[frame.agent_label == label]
    if epsilon is None:
        return rows[rows.epsilon.isna()]
    return rows[np.isclose(rows.epsilon.astype(float), float(epsilon))]


def regrets(frame: Any, label: str, horizon: int, epsilon: float | None = None,
            adversary: str | None = None, column: str = "regret") -> dict[int, float]:
    """``{seed_index: value}`` of one learner's games.

    Args:
        frame: A :func:`~dp_online_envs.lab.experiments.table.load_results` frame (the
            columns ``agent_label``, ``horizon``, ``epsilon``, ``seed_index``,
            ``env_options.adversary`` and ``column``).
        label: The configured learner (``agent_label``: ``private-ftrl(counter=tree)``).
        horizon: ``T``.
        epsilon: The learner's epsilon (``None``: a non-private learner's games).
        adversary: ``env_options.adversary`` (``None``: any).
        column: The value read (``regret``, ``switches``).
    """
    rows = learner_games(frame, label, epsilon)
    rows = rows[rows.horizon == horizon]
    if adversary is not None:
        rows = rows[rows["env_options.adversary"] == adversary]
    return dict(zip(rows.seed_index.astype(int), rows[column].astype(float)))


def fmt(m: float, lo: float | None, hi: float | None, spec: str = ".1f") -> str:
    """``m [lo, hi]`` in format ``spec`` (``m [unbounded]`` when an end is ``None``)."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{m:{spec}} [unbounded]"
    return f"{m:{spec}} [{lo:{spec}}, {hi:{spec}}]"


def mean_text(values: dict[int, float], spec: str = ".1f") -> str:
    """The mean over the seeds and its Student-t 95% interval (``n/a`` when empty)."""
    if not values:
        return "n/a"
    return fmt(*mean_ci(list(values.values())), spec=spec)


def side(lo: float, hi: float, names: tuple[str, str], null: float = 0.0) -> str:
    """``names[0]`` where ``[lo, hi]`` lies below ``null``, ``names[1]`` where above,
    :data:`NOISE` where it contains it (or an end is missing)."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return NOISE
    return names[0] if hi < null else names[1] if lo > null else NOISE


def band(lo: float | None, hi: float | None, low: float, high: float) -> str:
    """``yes`` where ``[lo, hi]`` lies within ``[low, high]`` (either may be infinite),
    ``no`` where the two are disjoint, :data:`NOISE` where ``[lo, hi]`` straddles an edge
    (or an end is missing or not finite)."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return NOISE
    if low <= lo and hi <= high:
        return "yes"
    return "no" if hi < low or lo > high else NOISE


def seed_set(seed: int) -> str:
    """The seed set a seed index belongs to: ``replication`` from
    :data:`REPLICATION_FIRST` on, ``discovery`` below."""
    return "replication" if int(seed) >= REPLICATION_FIRST else "discovery"


def _restrict(values: Any, name: str) -> Any:
    """``values`` (``{seed: v}`` or ``{T: {seed: v}}``) on the seeds of set ``name``."""
    if values and isinstance(next(iter(values.values())), dict):
        return {t: _restrict(v, name) for t, v in values.items()}
    return {s: v for s, v in values.items() if seed_set(s) == name}


def _has_data(values: Any) -> bool:
    if values and isinstance(next(iter(values.values())), dict):
        return any(_has_data(v) for v in values.values())
    return bool(values)


def by_seed_set(*values: Any) -> dict[str, tuple[Any, ...]]:
    """``{set: (values restricted to it, ...)}`` for each seed set of :data:`SEED_SETS`
    in which every argument holds data (an argument: ``{seed: value}`` or ``{T: {seed:
    value}}``)."""
    out = {}
    for name in SEED_SETS:
        parts = tuple(_restrict(v, name) for v in values)
        if all(_has_data(p) for p in parts):
            out[name] = parts
    return out


def seed_count(seeds: Any) -> int | str:
    """How many seeds ``seeds`` (indices, or a ``{seed: value}`` map) holds: a number
    for one seed set, ``"d + r"`` (discovery + replication) for both."""
    sets = [sum(seed_set(s) == name for s in seeds) for name in SEED_SETS]
    return f"{sets[0]} + {sets[1]}" if all(sets) else sum(sets)


def replicated(found: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """``(text, verdict)`` of one comparison made on each seed set apart (``found``:
    ``{set: (text, verdict)}``). One set: its own. Both: the texts joined
    (``<discovery>; replication <replication>``) and the verdict both support, or
    :data:`NOT_REPLICATED` where they differ."""
    if not found:
        return "n/a", NOISE
    if len(found) == 1:
        return next(iter(found.values()))
    (text_d, verdict_d), (text_r, verdict_r) = found["discovery"], found["replication"]
    verdict = verdict_d if verdict_d == verdict_r else NOT_REPLICATED
    return f"{text_d}; replication {text_r}", verdict


def on_both(compare: Callable[..., tuple[str, str]], *values: Any) -> tuple[str, str]:
    """``compare(*values)`` (``-> (text, verdict)``) on each seed set apart, combined by
    :func:`replicated`."""
    return replicated({name: compare(*parts) for name, parts in by_seed_set(*values).items()})


def _difference(a: dict[int, float], b: dict[int, float], names: tuple[str, str],
                spec: str) -> tuple[str, str]:
    gap = paired_gap(a, b)
    if gap is None:
        return "n/a", NOISE
    m, lo, hi = gap
    return fmt(m, lo, hi, spec), side(lo, hi, names)


def difference(a: dict[int, float], b: dict[int, float], names: tuple[str, str],
               spec: str = "+.1f") -> tuple[str, str]:
    """``(text, verdict)`` of the paired difference ``a - b``: ``mean [lo, hi]``
    (in format ``spec``) and the name of the one with the lower regret where the interval
    excludes 0 (:data:`NOISE` otherwise, or with fewer than two shared seeds); on both
    seed sets where the data hold both (:func:`on_both`)."""
    return on_both(lambda x, y: _difference(x, y, names, spec), a, b)


def equivalence(a: dict[int, float], b: dict[int, float], margin: float,
                spec: str = "+.1f") -> tuple[str, str]:
    """``(text, verdict)`` of an equivalence claim at ``margin``: ``within ±margin``
    where the paired interval of ``a - b`` lies inside ``[-margin, margin]``, ``differ``
    where it lies wholly outside, :data:`NOISE` otherwise; on both seed sets where the
    data hold both. The text is the interval and the margin: "within noise" is never
    inferred from an interval that merely contains 0."""
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin > 0):
        raise ValueError(f"margin={margin!r}: expected a finite number > 0")

    def one(x: dict[int, float], y: dict[int, float]) -> tuple[str, str]:
        gap = paired_gap(x, y)
        if gap is None:
            return "n/a", NOISE
        m, lo, hi = gap
        verdict = {"yes": f"within ±{margin:.4g}", "no": "differ"}.get(
            band(lo, hi, -margin, margin), NOISE)
        return f"{fmt(m, lo, hi, spec)} (margin ±{margin:.4g})", verdict

    return on_both(one, a, b)


def paired_ratio(a: dict[int, float], b: dict[int, float]
                 ) -> tuple[float, float | None, float | None] | None:
    """``(ratio, lo, hi)``: ``mean(a) / mean(b)`` over the seed indices both hold, with
    Fieller's 95% interval (an end ``None``: unbounded); ``None`` with fewer than two
    shared seed indices."""
    seeds = sorted(set(a) & set(b))
    if len(seeds) < 2:
        return None
    return ratio_ci([a[s] for s in seeds], [b[s] for s in seeds])


def _ratio(a: dict[int, float], b: dict[int, float], spec: str) -> tuple[str, str]:
    found = paired_ratio(a, b)
    if found is None:
        return "n/a", NOISE
    r, lo, hi = found
    return fmt(r, lo, hi, spec), side(lo, hi, ("below", "above"), null=1.0)


def ratio(a: dict[int, float], b: dict[int, float], spec: str = ".2f") -> tuple[str, str]:
    """``(text, verdict)`` of the paired ratio ``mean(a) / mean(b)`` with Fieller's
    interval (in format ``spec``): ``below`` where it lies below 1, ``above`` where
    above, :data:`NOISE` where it contains 1 or is unbounded; on both seed sets where
    the data hold both (:func:`on_both`)."""
    return on_both(lambda x, y: _ratio(x, y, spec), a, b)


def ratio_verdict(a: dict[int, float], b: dict[int, float],
                  judge: Callable[[float | None, float | None], str],
                  spec: str = ".2f") -> tuple[str, str]:
    """``(text, verdict)`` of the paired ratio ``mean(a) / mean(b)`` [Fieller's 95%
    interval] judged by ``judge(lo, hi)`` (a band, a threshold), on both seed sets where
    the data hold both (:func:`on_both`)."""
    def one(x: dict[int, float], y: dict[int, float]) -> tuple[str, str]:
        found = paired_ratio(x, y)
        if found is None:
            return "n/a", NOISE
        r, lo, hi = found
        return fmt(r, lo, hi, spec), judge(lo, hi)

    return on_both(one, a, b)


def on_common_seeds(by_horizon: dict[int, dict[int, float]]) -> dict[int, dict[int, float]]:
    """``by_horizon`` restricted to the seed indices held at every horizon (so that
    means at different ``T`` average the same seeds)."""
    if not by_horizon:
        return {}
    seeds = set.intersection(*(set(r) for r in by_horizon.values()))
    return {t: {s: r[s] for s in sorted(seeds)} for t, r in by_horizon.items()}


def seed_slopes(by_horizon: dict[int, dict[int, float]]) -> dict[int, float]:
    """``{seed_index: slope}``: per seed index held at every horizon, the least-squares
    log-log slope of its regret over the horizons (``nan`` where a regret is not
    positive)."""
    horizons = sorted(by_horizon)
    common = on_common_seeds(by_horizon)
    seeds = sorted(common[horizons[0]]) if horizons else []
    return {s: loglog_slope(horizons, [common[t][s] for t in horizons]) for s in seeds}


def _per_seed_slope(by_horizon: dict[int, dict[int, float]],
                    judge: Callable[[float | None, float | None], str] | None
                    ) -> tuple[str, str]:
    slopes = np.array(list(seed_slopes(by_horizon).values()))
    finite = slopes[np.isfinite(slopes)]
    if not finite.size:
        return "n/a", NOISE
    m, lo, hi = mean_ci(finite)
    return fmt(m, lo, hi, spec=".2f"), NOISE if judge is None else judge(lo, hi)


def slope_verdict(by_horizon: dict[int, dict[int, float]],
                  judge: Callable[[float | None, float | None], str]) -> tuple[str, str]:
    """``(text, verdict)``: the mean per-seed log-log slope [Student-t 95% interval]
    over the horizons (on the seed indices held at every horizon) and ``judge(lo, hi)``
    of that interval (:func:`exponent_verdict`, :func:`band`, :func:`side`), on both
    seed sets where the data hold both (:func:`on_both`)."""
    return on_both(lambda d: _per_seed_slope(d, judge), by_horizon)


def slope_texts(by_horizon: dict[int, dict[int, float]]) -> tuple[str, str]:
    """``(slope of the means, mean per-seed slope [95% interval])`` over the horizons,
    on the seed indices held at every horizon (the per-seed slope on each seed set apart
    where the data hold both: :func:`slope_verdict`)."""
    horizons = sorted(by_horizon)
    common = on_common_seeds(by_horizon)
    means = [float(np.mean(list(common[t].values()))) for t in horizons]
    of_means = loglog_slope(horizons, means)
    return f"{of_means:.2f}", on_both(lambda d: _per_seed_slope(d, None), by_horizon)[0]


#: The theorem's-slope cell of a learner whose schedule (exploration probability,
#: smoothing radius, shrink, block length) carries part of its regret, where that part
#: has not been computed and split off: its slope is never called the theorem's.
SCHEDULE_NOT_SPLIT = "not claimed: the schedule's part is not split off"
#: The theorem's-slope cell of trivial play (a reference, no theorem).
NO_SCHEDULE = "reference (linear)"


def theorem_cell(label: str) -> str:
    """The theorem's-slope cell of a slope row: :data:`NO_SCHEDULE` for trivial play
    (``center``, ``uniform``), else :data:`SCHEDULE_NOT_SPLIT` (every bandit learner of
    the studies that print it runs on a schedule)."""
    return NO_SCHEDULE if label in ("center", "uniform") else SCHEDULE_NOT_SPLIT


def exponent_verdict(lo: float, hi: float, exponent: float,
                     tolerance: float = SLOPE_TOLERANCE) -> str:
    """``yes`` where the slope interval ``[lo, hi]`` lies within ``exponent +-
    tolerance``, ``no`` where it lies outside, :data:`NOISE` where it straddles an edge
    (or an end is missing or not finite)."""
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return NOISE
    a, b = exponent - tolerance, exponent + tolerance
    if a <= lo and hi <= b:
        return "yes"
    return "no" if hi < a or lo > b else NOISE


#: The theorem's-slope cell of a learner whose schedule's part is split off and stored:
#: the split's regime column (:func:`schedule_split_rows`) decides.
SPLIT_DECIDES = "only where the split below says theorem's regime"
#: The regimes of one step ``T0 -> T`` of a schedule split (:func:`regime`).
FIXED_SCHEDULE = "tuned (fixed schedule)"
SCHEDULE_CLAMPED = "schedule clamped"
SCHEDULE_LARGER = "schedule (the larger part)"
THEOREMS_REGIME = "theorem's regime"
SLOPE_NOT_PLACED = "free, slope not placed (~)"
ANOTHER_SLOPE = "free, another slope"
#: The head of a schedule split's table (:func:`schedule_split_rows`).
SPLIT_HEAD = ("learner", "T", "seeds", "γ", "expected regret",
              "exploration's part (share [95% CI])", "remainder",
              "regret's slope from previous T [95% CI]", "remainder's slope [95% CI]",
              "regime")


def regime(exponent: float, lo: float | None, hi: float | None, *, clamped: bool,
           shares: Sequence[float], fixed: bool = False) -> str:
    """The regime of one step ``T0 -> T`` of a schedule split, on one seed set (the one
    rule of every rate table that splits a schedule off):

    * :data:`FIXED_SCHEDULE` for a learner whose schedule is fixed by hand (a tuned
      variant: its slope is never the theorem's);
    * :data:`SCHEDULE_CLAMPED` where the schedule (exploration probability, smoothing
      radius) is clamped at either horizon;
    * :data:`SCHEDULE_LARGER` where the schedule's share of the regret (``shares``, one
      per horizon) is at least 1/2 at either horizon: the remainder is not the larger part;
    * else by the remainder's per-seed slope interval ``[lo, hi]`` against ``exponent +-``
      :data:`SLOPE_TOLERANCE` (:func:`exponent_verdict`): :data:`THEOREMS_REGIME` where it
      lies within, :data:`ANOTHER_SLOPE` where it lies outside, :data:`SLOPE_NOT_PLACED`
      where it straddles an edge. Being the theorem's slope is a claim of equivalence at
      the margin, so an interval that merely meets the band does not make it.
    """
    if fixed:
        return FIXED_SCHEDULE
    if clamped:
        return SCHEDULE_CLAMPED
    if not all(share < 0.5 for share in shares):
        return SCHEDULE_LARGER
    return {"yes": THEOREMS_REGIME, "no": ANOTHER_SLOPE}.get(
        exponent_verdict(lo, hi, exponent), SLOPE_NOT_PLACED)


def explore_round(sums: dict[str, float], gamma: float, weights: np.ndarray,
                  values: np.ndarray) -> None:
    """Add one round of a learner that plays ``p_t = (1 - gamma) w_t + gamma u`` (``u``
    uniform over the points whose losses are ``values``, ``w_t`` the ``weights`` on them)
    to ``sums``: ``"exploration"`` gains ``gamma (mean(values) - <w_t, values>)``, the
    exploration's expected cost, and ``"points"`` the weights' own loss ``<w_t, values>``."""
    here = float(weights @ values)
    sums["exploration"] += gamma * (float(values.mean()) - here)
    sums["points"] += here


def explore_parts(summary: Any, sums: dict[str, float], gamma: float) -> dict[str, float]:
    """The split of a replayed game from its regret ``summary`` and the :func:`explore_round`
    ``sums``: ``regret`` (realized: the record's, to check the replay), ``expected`` (the
    expected loss minus the comparator's), ``exploration``, ``remainder`` (the weights'
    own regret: ``expected - exploration``) and ``gamma``."""
    comparator = summary.learner_loss - summary.regret
    return {"regret": float(summary.regret),
            "expected": sums["points"] + sums["exploration"] - comparator,
            "exploration": sums["exploration"], "remainder": sums["points"] - comparator,
            "gamma": gamma}


def regime_rule(exponent: float | str, schedule: str) -> str:
    """The sentence stating :func:`regime` under a split's table (``exponent``: the
    theorem's, or words naming it where the table holds several; ``schedule``: what is
    clamped, e.g. ``γ``)."""
    band = exponent if isinstance(exponent, str) else f"{exponent:.2g}"
    return (f"Regime, on each seed set: `{SCHEDULE_CLAMPED}` where {schedule} is clamped at "
            f"either horizon, `{SCHEDULE_LARGER}` where the schedule's part is at least "
            f"half the regret at either horizon, `{THEOREMS_REGIME}` where the remainder's "
            f"per-seed slope interval lies within {band} ± {SLOPE_TOLERANCE:g}, "
            f"`{ANOTHER_SLOPE}` where it lies outside, `{SLOPE_NOT_PLACED}` where it "
            f"straddles an edge; `{NOT_REPLICATED}` where the two seed sets disagree")


def mean_share(part: dict[int, float], whole: dict[int, float]) -> float:
    """``mean(part) / mean(whole)`` over the seed indices both hold (nan without any, or
    where the mean of ``whole`` is 0)."""
    seeds = sorted(set(part) & set(whole))
    if not seeds:
        return math.nan
    total = float(np.mean([whole[s] for s in seeds]))
    return float(np.mean([part[s] for s in seeds])) / total if total else math.nan


def step_regime(exponent: float, t0: int, t: int, rest0: dict[int, float],
                rest: dict[int, float], part0: dict[int, float], whole0: dict[int, float],
                part: dict[int, float], whole: dict[int, float], *, clamped: bool,
                fixed: bool = False) -> tuple[str, str]:
    """``(the remainder's per-seed slope from t0 to t [95% interval], its regime)`` on
    one seed set (for :func:`on_both`): :func:`regime` with the schedule's shares
    ``part / whole`` at ``t0`` and at ``t``."""
    shares = (mean_share(part0, whole0), mean_share(part, whole))
    return _per_seed_slope({t0: rest0, t: rest}, lambda lo, hi: regime(
        exponent, lo, hi, clamped=clamped, shares=shares, fixed=fixed))


def share_text(part: dict[int, float], whole: dict[int, float]) -> tuple[str, str]:
    """``(text, "")``: the paired ratio ``mean(part) / mean(whole)`` in whole percent with
    Fieller's 95% interval (:func:`paired_ratio`; ``n/a`` with fewer than two seeds,
    ``[unbounded]`` where an end is), for :func:`on_both`."""
    found = paired_ratio(part, whole)
    if found is None or not math.isfinite(found[0]):
        return "n/a", ""
    r, lo, hi = found
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{round(100 * r)}% [unbounded]", ""
    return f"{round(100 * r)}% [{round(100 * lo)}, {round(100 * hi)}]", ""


def schedule_split_rows(frame: Any, learners: Sequence[tuple[str, float | None, float]],
                        splits: dict[str, dict[str, float]]) -> list[list[str]]:
    """The rows of a schedule split's table (:data:`SPLIT_HEAD`): per ``(label,
    epsilon, exponent)`` of ``learners`` and ``T`` whose games are all in ``splits``
    (``{game_id: {"expected", "exploration", "remainder", "gamma"}}``, of
    :meth:`Study.store_splits`): the largest gamma, the mean expected regret, the
    exploration's part (its share), the remainder, the per-seed slopes of the regret and
    of the remainder from the previous such ``T`` [Student-t 95% interval] and the
    regime (:func:`step_regime`: clamped where gamma is 1 at either horizon), each on
    both seed sets (:func:`on_both`).

    Args:
        frame: A results frame (``game_id``, ``agent_label``, ``epsilon``, ``horizon``,
            ``seed_index``).
        learners: ``(agent label, epsilon or None, the theorem's exponent)``.
        splits: The stored splits, by game id.
    """
    import functools

    out = []
    for label, eps, exponent in learners:
        mine = learner_games(frame, label, eps)
        previous = None
        for t in sorted(int(h) for h in mine.horizon.unique()):
            games = mine[mine.horizon == t]
            if not all(g in splits for g in games.game_id):
                previous = None
                continue
            at = {int(s): splits[g] for s, g in zip(games.seed_index, games.game_id)}
            expected = {s: v["expected"] for s, v in at.items()}
            rest = {s: v["remainder"] for s, v in at.items()}
            explore = {s: v["exploration"] for s, v in at.items()}
            gamma = max(v["gamma"] for v in at.values())
            row = [learner_cell(label, eps), f"{t:,}", seed_count(at),
                   f"{gamma:.3g}" + (" (clamped at 1)" if gamma >= 1.0 else ""),
                   f"{np.mean(list(expected.values())):,.0f}",
                   f"{np.mean(list(explore.values())):,.0f} "
                   f"({on_both(share_text, explore, expected)[0]})",
                   f"{np.mean(list(rest.values())):,.0f}", "", "", ""]
            if previous is not None:
                t0, expected0, rest0, explore0, gamma0 = previous
                row[7] = slope_verdict({t0: expected0, t: expected}, lambda lo, hi: "")[0]
                row[8], row[9] = on_both(
                    functools.partial(step_regime, exponent, t0, t,
                                      clamped=max(gamma0, gamma) >= 1.0),
                    rest0, rest, explore0, expected0, explore, expected)
            out.append(row)
            previous = (t, expected, rest, explore, gamma)
    return out


def study_module(name: str) -> Any:
    """The analysis module of the study ``benchmarks/studies/NAME`` (a study reusing
    another's table, e.g. the separation criteria)."""
    import importlib.util

    path = pathlib.Path(__file__).resolve().parent / name / "analysis.py"
    spec = importlib.util.spec_from_file_location(f"study_{name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table(head: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def listed(values: Sequence[float]) -> str:
    """``{0.1, 0.3}`` (``{}`` when empty)."""
    return "{" + ", ".join(f"{v:g}" for v in values) + "}"
