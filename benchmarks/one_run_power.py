"""The one-run audit's power on each registered private learner, at the leaderboard's
audit settings.

For every registered private learner, on the first audit game of its feedback kind it
plays (:data:`~dp_online_envs.lab.leaderboard.score.AUDIT_GAMES`), at every scored
horizon of the default benchmark (``T`` in 1024 and 4096, 16 games each), claiming
epsilon = 1: the learner built at ``epsilon * c`` for each noise cut ``c`` (its
noise-free twin is ``c`` = :data:`~dp_online_envs.lab.audit.one_run.TWIN_FACTOR`),
in process, one learner after another. Prints one line per (learner, cut): the right
guesses of the reported rule (named) with their two-sided 95% Clopper-Pearson interval,
the bound, the verdict, the CPU seconds, and every rule's right / guesses with its own
bound (each at ``1 - 0.05 / rules``)::

    python benchmarks/one_run_power.py [--seed S] [--cuts 3,10000] [--only NAME ...]
        [--option KEY=VALUE ...]

``--privacy-loss`` measures instead what the best possible audit of the arms would see on
a learner that feeds exponential weights on arms (``private-exp2``, ``private-bandit``):
on ``--rounds`` rounds drawn at random among each game's rounds whose pair differs on the
arm played, the exact privacy loss ``L_t`` of the action sequence
(:func:`~dp_online_envs.lab.audit.privacy_loss.exp_weights_privacy_loss`, every other
round's input known, round ``t``'s Laplace noise integrated), its quantiles, and the
bound of the oracle that guesses the rounds with ``|L_t| > c`` (``--window``: count only
the arms of the rounds after ``t``); on a full-information learner fed by a Laplace tree
counter (``private-ftrl``), draws of the loss of every round seen by an auditor reading
every node; on ``private-batched-htinf`` (one round a batch at epsilon >= 1) by replaying
a copy of its base; on ``adap-ucb`` and ``adap-klucb``, every round, from the interval of
episode releases its arm's later choices allow (found on copies of the learner)::

    python benchmarks/one_run_power.py --privacy-loss --only private-exp2 --cuts 10000,3

``--contextual`` counts, for the noise-free twin (``add_noise=False``) of a contextual
learner (``jdp-linucb``, ``ldp-linucb``) on ``DPBandit-ContextualLinear-v0``, the sampled
rounds whose other loss changes some later action (replayed from a copy of the learner;
the played loss must reproduce the game, a control)::

    python benchmarks/one_run_power.py --contextual --only jdp-linucb ldp-linucb

With ``--replay`` it audits instead, claiming ``(1, 1e-5)``, the twin, the learner at
epsilon 1 and at 10 (a tenth of the noise, about) with the replay decoder
(``audit_one_run(..., replay=True)``: the ``hidden`` and ``replay`` rules) on audit seed
``--seed``, and prints each rule's right / guesses, the bound and the CPU seconds::

    python benchmarks/one_run_power.py --contextual --replay --seed 0 --only jdp-linucb

``--false-rate N`` audits each learner at its own epsilon instead (built at ``c`` and
claiming ``c`` for each cut ``c``: an exactly ``c``-DP learner's true claim) on the audit
seeds ``--seed`` to ``--seed + N - 1``, and prints how many of the ``N`` audits refuted
it (at most 5% in expectation for a learner that is ``c``-DP), the largest ``eps_lb`` and
the CPU seconds::

    python benchmarks/one_run_power.py --false-rate 100 --only adap-ucb --cuts 1

``--decode STRIDE`` measures a white-box audit that could be run: canaries one round in
``STRIDE`` (offset drawn apart from the game), every other round's loss known, the
learner's own ``eta`` and ``gamma``; the canaries are decoded in order, each by the
log-likelihood ratio of the arms up to the next canary (the earlier canaries fed their
decoded loss), and the rounds with ``|ratio| > c`` are guessed::

    python benchmarks/one_run_power.py --decode 512 --only private-exp2 --cuts 10000 --seed 0
"""

from __future__ import annotations

import argparse
import math
import re
import time

import numpy as np

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.envs import build_env
from dp_online_envs.lab.audit.one_run import (
    AuditGame,
    OneRunSettings,
    audit_one_run,
    game_seeds,
    one_run_eps_lower_bound,
    partner_losses,
    play_audit_game,
)
from dp_online_envs.lab.audit.privacy_loss import (
    exp_weights_privacy_loss,
    tree_laplace_privacy_loss,
)
from dp_online_envs.lab.audit.statistics import clopper_pearson
from dp_online_envs.lab.leaderboard.score import AUDIT_GAMES, default_benchmark

#: Learners whose claims need delta > 0 (as the leaderboard plays them).
NEEDS_DELTA = {"private-ftpl", "private-ftpl-grad", "private-lazy-mw"}


def audit_game(cls) -> tuple[str, dict] | None:
    """The first audit game of the learner's kind it accepts (``None``: none)."""
    for env, kwargs in AUDIT_GAMES.get(cls.feedback, ()):
        problem = build_env(env, horizon=64, **kwargs).get_wrapper_attr("problem")
        try:
            cls(problem, epsilon=1.0, delta=1e-6 if cls.name in NEEDS_DELTA else 0.0, seed=0)
        except (ValueError, TypeError):
            continue
        return env, dict(kwargs)
    return None


def played_with_partners(make, game: AuditGame, env_seed: int, agent_seed: int,
                         rng: np.random.Generator) -> tuple:
    """One audit game played by ``make``'s learner, with the partner loss of every round
    (:func:`partner_losses` from ``rng``): ``(played, met, other)``, the losses the
    played arms met and their partners'."""
    played = play_audit_game(make, game, env_seed, agent_seed)
    rows = np.arange(game.horizon)
    partners = partner_losses(played.thetas, played.mean, played.low, played.high, rng)
    return played, played.thetas[rows, played.arms], partners[rows, played.arms]


def privacy_losses(cls, game: AuditGame, epsilon: float, seed: int, games: int,
                   rounds: int, window: int | None) -> np.ndarray:
    """The exact privacy loss ``L_t`` of ``rounds`` rounds of each of ``games`` games of
    a private reduction around exponential weights on arms (``L_t > 0``: the input
    played is the likelier, so the oracle's guess is right)."""
    out = []
    for env_seed, agent_seed, partner_seed in game_seeds(seed, games):
        kept: dict = {}

        def make(problem, space, s, kept=kept):
            learner = cls(problem, epsilon=epsilon, delta=0.0, seed=s)
            fed = kept["fed"] = []
            feed = learner._feed

            def record(action, noisy):  # the (noisy) loss the weights are updated with
                fed.append(noisy)
                return feed(action, noisy)

            learner._feed = record
            kept["learner"] = learner
            return learner

        played, met, other = played_with_partners(make, game, env_seed, agent_seed,
                                                  np.random.default_rng(partner_seed))
        learner = kept["learner"]
        base = learner.base
        c = base.arms_constants
        differ = np.flatnonzero(met != other)
        chosen = np.sort(np.random.default_rng(partner_seed).choice(
            differ, min(rounds, differ.size), replace=False))
        out.append(exp_weights_privacy_loss(
            played.arms, np.asarray(kept["fed"]) - c.lo, met - c.lo, other - c.lo, chosen,
            k=c.k, eta=c.eta_per_width, gamma=base.gamma, noise_scale=learner.noise_scale,
            window=window))
    return np.concatenate(out)


def replayed_privacy_losses(cls, game: AuditGame, epsilon: float, seed: int, games: int,
                            rounds: int) -> np.ndarray:
    """The exact privacy loss of sampled rounds of a learner whose base learner (``base``)
    is fed one loss a round through ``base.observe_loss(arm, loss)`` and plays from
    ``base.probabilities()`` (``private-batched-htinf`` at a batch of one round, as at
    epsilon >= 1): the base copied before round ``t``'s update, fed each member of the
    pair, then the played arms and losses, the log-probability of the arms summed. Only
    for noise-free learners (a twin): the replay feeds the other rounds what the learner
    was fed, round ``t`` the pair's loss exactly."""
    import copy

    out = []
    for env_seed, agent_seed, partner_seed in game_seeds(seed, games):
        picked = set(np.random.default_rng(partner_seed).choice(
            game.horizon - 1, size=min(rounds, game.horizon - 1), replace=False).tolist())
        kept: dict = {"fed": [], "copies": {}}

        def make(problem, space, s, kept=kept, picked=picked):
            learner = cls(problem, epsilon=epsilon, delta=0.0, seed=s)
            if getattr(learner, "batch", 1) != 1:
                raise ValueError(f"{learner!r} plays batches of {learner.batch} rounds")
            base = learner.base  # kept by reset(), which resets its state only
            observe = base.observe_loss

            def record(action, loss):
                t = len(kept["fed"])
                if t in picked:
                    kept["copies"][t] = copy.deepcopy(base)
                kept["fed"].append(loss)
                return observe(action, loss)

            base.observe_loss = record
            return learner

        played, met, other = played_with_partners(make, game, env_seed, agent_seed,
                                                  np.random.default_rng(partner_seed))
        fed = np.asarray(kept["fed"])
        for t, snapshot in sorted(kept["copies"].items()):
            if met[t] == other[t]:
                continue
            logp = []
            for value in (met[t], other[t]):
                base = copy.deepcopy(snapshot)
                # the class's method: the copy's own attribute is the recording wrapper
                observe = type(base).observe_loss
                observe(base, played.arms[t], value)
                total = 0.0
                for s in range(t + 1, game.horizon):
                    total += math.log(base.probabilities()[played.arms[s]])
                    observe(base, played.arms[s], fed[s])
                logp.append(total)
            out.append(logp[0] - logp[1])
    return np.asarray(out)


def deterministic_changes(cls, game: AuditGame, epsilon: float, delta: float, seed: int,
                          games: int, rounds: int) -> tuple[int, int]:
    """``(changed, rounds)``: of ``rounds`` sampled rounds per game whose pair differs on
    the arm played, how many change some LATER action when fed the pair's other loss
    vector, every other round as played: a noise-free learner whose choices are a
    function of its inputs (a contextual twin, ``add_noise=False``). Its output is then
    impossible under the other input: the privacy loss of such a round is infinite for
    the actions of the other rounds (joint DP's output), 0 for every other round."""
    import copy

    changed = total = 0
    for env_seed, agent_seed, partner_seed in game_seeds(seed, games):
        picked = set(np.random.default_rng(partner_seed).choice(
            np.arange(1, game.horizon - 1), size=min(rounds, game.horizon - 2),
            replace=False).tolist())
        kept: dict = {"feedback": [], "copies": {}}

        def make(problem, space, s, kept=kept, picked=picked):
            learner = cls(problem, epsilon=epsilon, delta=delta, seed=s, add_noise=False)
            update = learner.update

            def record(action, feedback):
                t = len(kept["feedback"])
                if t in picked:
                    kept["copies"][t] = copy.deepcopy(learner)
                kept["feedback"].append(np.array(feedback, np.float64))
                return update(action, feedback)

            learner.update = record
            return learner

        played, met, other = played_with_partners(make, game, env_seed, agent_seed,
                                                  np.random.default_rng(partner_seed))
        recorded = kept["feedback"]
        for t, snapshot in sorted(kept["copies"].items()):
            if met[t] == other[t]:
                continue
            total += 1
            for loss in (met[t], other[t]):  # the played loss first: a control
                learner = copy.deepcopy(snapshot)
                update = type(learner).update  # the copy's attribute is the recorder
                fed = recorded[t].copy()
                fed[0] = loss  # the loss of the arm played, the context kept
                update(learner, played.arms[t], fed)
                differs = False
                for s in range(t + 1, game.horizon):
                    if learner.act() != played.arms[s]:
                        differs = True
                        break
                    update(learner, played.arms[s], recorded[s])
                if loss == met[t] and differs:
                    raise RuntimeError(f"{name_of(cls)}: the replay of round {t} with the "
                                       "loss played does not reproduce the game: not a "
                                       "function of its inputs")
                changed += int(differs and loss == other[t])
    return changed, total


def name_of(cls) -> str:
    """A learner class's registered name."""
    return getattr(cls, "name", cls.__name__)


def _laplace_mass(lo: float, hi: float, b: float) -> float:
    """``P[lo <= Z <= hi]`` for ``Z ~ Laplace(b)`` (``b = 0``: a point mass at 0)."""
    def cdf(z: float) -> float:
        if b == 0:
            return float(z >= 0)
        return 0.5 * math.exp(z / b) if z < 0 else 1.0 - 0.5 * math.exp(-z / b)
    return max(cdf(hi) - cdf(lo), 0.0)


def episode_privacy_losses(cls, game: AuditGame, epsilon: float, seed: int,
                           games: int) -> np.ndarray:
    """The exact privacy loss of every round (whose pair differs on the arm played) of an
    AdaP learner (``adap-ucb``, ``adap-klucb``): given every other episode's release and
    every other round, the arms show only which choices the learner made while the round's
    episode release was its arm's last one; each choice bounds that release (the index is
    decreasing in the released loss sum), so ``P[arms | loss x] = P[lo <= S + Z <= hi]``
    with ``S`` the episode's exact sum with ``x`` and ``Z`` its Laplace noise (continuous
    here). At each choice, on a copy of the learner taken there, the interval is how far
    from the release drawn the choice still holds, either way (bisection on the learner's
    own index; the copy must reproduce the choice at the release drawn, a control)."""
    import copy

    from agents.bandit.stochastic import best_arm

    out = []
    for env_seed, agent_seed, partner_seed in game_seeds(seed, games):
        kept: dict = {"choices": [], "episodes": []}

        def make(problem, space, s, kept=kept):
            learner = cls(problem, epsilon=epsilon, delta=0.0, seed=s)
            act, end = learner.act, learner._end_episode

            def record_act():
                if learner._left == 0 and learner.t >= learner.k:  # a choice
                    snapshot = copy.deepcopy(learner)
                    arm = act()
                    kept["choices"].append((learner.t, snapshot, arm))
                    return arm
                return act()

            def record_end():
                start = learner.t - learner._in_episode
                end()
                a = learner._arm
                kept["episodes"].append((a, start, learner.t, learner.last_sum[a]))

            learner.act, learner._end_episode = record_act, record_end
            return learner

        played, met, other = played_with_partners(make, game, env_seed, agent_seed,
                                                  np.random.default_rng(partner_seed))
        b = kept["choices"][0][1].noise_scale if kept["choices"] else 0.0
        for arm, start, end, total in kept["episodes"]:
            lo, hi = -math.inf, math.inf
            for t, snapshot, chosen in kept["choices"]:
                if t < end:
                    continue

                def picks(value: float, snapshot=snapshot, arm=arm) -> int:
                    kept_value = snapshot.last_sum[arm]  # the copy serves every episode
                    snapshot.last_sum[arm] = value
                    try:
                        return best_arm(snapshot.indices())
                    finally:
                        snapshot.last_sum[arm] = kept_value

                # the choice holds at the release drawn; find how far either way it still
                # holds (ties at a clipped index can make it fail at both ends)
                if picks(total) != chosen:
                    raise RuntimeError(f"a copy of {name_of(cls)} at round {t} does not "
                                       "reproduce its choice")
                reach = 10.0 * (end - start) + 50.0 * b + 10.0
                for side in (-1.0, 1.0):
                    inside, outside = total, total + side * reach
                    if picks(outside) == chosen:
                        continue  # no bound on this side
                    for _ in range(60):
                        mid = 0.5 * (inside + outside)
                        if picks(mid) == chosen:
                            inside = mid
                        else:
                            outside = mid
                    if side < 0:
                        lo = max(lo, inside)
                    else:
                        hi = min(hi, inside)
                if chosen == arm:  # the arm's next episode: its release is forgotten
                    break
            exact = float(met[start:end].sum())
            base = _laplace_mass(lo - exact, hi - exact, b)
            for t in range(start, end):
                if met[t] == other[t]:
                    continue
                moved = _laplace_mass(lo - exact + met[t] - other[t],
                                      hi - exact + met[t] - other[t], b)
                out.append(math.log(base) - math.log(moved) if moved > 0 else math.inf)
    return np.asarray(out)


def tree_privacy_losses(cls, game: AuditGame, epsilon: float, seed: int,
                        games: int) -> np.ndarray:
    """Draws of the privacy loss of every round of ``games`` games of a learner fed by a
    Laplace tree counter (``private-ftrl``), seen by an auditor that reads every node and
    knows every other round: each round's pair differs on each coordinate ``i`` with
    probability ``2 min(p_i, 1 - p_i)`` (the antithetic pair of the game's law)."""
    out = []
    for env_seed, agent_seed, partner_seed in game_seeds(seed, games):
        env = build_env(game.env_id, horizon=game.horizon, **game.env_kwargs)
        env.reset(seed=env_seed)
        base = env.unwrapped
        width = base.loss.param_space.high - base.loss.param_space.low
        p = (np.asarray(base.adversary.mean_param) - base.loss.param_space.low) / width
        learner = cls(env.get_wrapper_attr("problem"), epsilon=epsilon, delta=0.0,
                      seed=agent_seed)
        rng = np.random.default_rng(partner_seed)
        counts = (rng.random((game.horizon, p.size)) < 2 * np.minimum(p, 1 - p)).sum(axis=1)
        # losses on [0, 1] coordinates: a pair differs by 1 where it differs
        out.append(tree_laplace_privacy_loss(counts, learner.levels, learner.noise_scale, rng))
        env.close()
    return np.concatenate(out)


def decode_canaries(arms: np.ndarray, known: np.ndarray, x: np.ndarray, y: np.ndarray,
                    canary: np.ndarray, k: int, eta: float, gamma: float) -> np.ndarray:
    """The white-box decoder of ``--decode``: ``(T,)`` the log-likelihood ratio (``x``
    fed against ``y``) of each canary round's arms up to the next canary, the earlier
    canaries fed their likelier loss (0 off the canaries)."""
    lw = np.zeros((2, k))  # the two branches of the current canary
    ll = np.zeros(2)
    out = np.zeros(arms.size)
    current = -1
    for s in range(arms.size):
        if canary[s]:
            if current >= 0:
                out[current] = ll[0] - ll[1]
                lw = np.repeat(lw[int(np.argmax(ll))][None, :], 2, axis=0)
            ll = np.zeros(2)
            current = s
        a = arms[s]
        w = np.exp(lw - lw.max(axis=1, keepdims=True))
        p = (1 - gamma) * w[:, a] / w.sum(axis=1) + gamma / k
        ll += np.log(p)
        fed = np.array([x[s], y[s]]) if canary[s] else known[s]
        lw[:, a] -= eta * fed / p
    if current >= 0:
        out[current] = ll[0] - ll[1]
    return out


def decoded_audit(cls, games: list[AuditGame], epsilon: float, seed: int, n_games: int,
                  stride: int) -> None:
    """Prints the ``--decode`` audit's counts and bound (confidence 0.95, one rule)."""
    ratios, canaries = [], 0
    for game in games:
        for env_seed, agent_seed, partner_seed in game_seeds(seed, n_games):
            kept: dict = {}

            def make(problem, space, s, kept=kept):
                kept["learner"] = cls(problem, epsilon=epsilon, delta=0.0, seed=s)
                return kept["learner"]

            rng = np.random.default_rng(partner_seed)
            played, met, other = played_with_partners(make, game, env_seed, agent_seed, rng)
            base = kept["learner"].base
            c = base.arms_constants
            rows = np.arange(game.horizon)
            canary = rows % stride == int(rng.integers(stride))
            canaries += int(canary.sum())
            ratio = decode_canaries(played.arms, met - c.lo, met - c.lo, other - c.lo, canary,
                                    c.k, c.eta_per_width, base.gamma)
            ratios.append(ratio[canary & (met != other)])
    ratio = np.concatenate(ratios)
    print(f"  stride {stride}: {canaries} canaries, {ratio.size} whose pair differs",
          flush=True)
    for c in (0.0, 0.5, 1.0, 2.0):
        guessed = np.abs(ratio) > c
        r, v = int(guessed.sum()), int((ratio[guessed] > 0).sum())
        print(f"  decoder guessing |ratio| > {c:g}: {v} / {r} right, eps_lb "
              f"{one_run_eps_lower_bound(r, v):.2f}", flush=True)


def report_privacy_losses(losses: np.ndarray, claim: float = 1.0) -> None:
    """Prints the quantiles of ``|L_t|`` and the oracle audit's bound per threshold."""
    q = np.quantile(np.abs(losses), [0.5, 0.9, 0.99], method="inverted_cdf")  # inf kept
    print(f"  {losses.size} rounds: |L| median {q[0]:.3g}, 90% {q[1]:.3g}, 99% {q[2]:.3g}; "
          f"share with |L| > {claim:g}: {np.mean(np.abs(losses) > claim):.3f}", flush=True)
    for c in (0.0, 0.25, 0.5, 1.0, 2.0):
        guessed = np.abs(losses) > c
        r, v = int(guessed.sum()), int((losses[guessed] > 0).sum())
        print(f"  oracle guessing |L| > {c:g}: {v} / {r} right, eps_lb "
              f"{one_run_eps_lower_bound(r, v):.2f}", flush=True)


def reported_rule(rule: str) -> str:
    """The name of the rule whose bound a finding reports (its only rule when one)."""
    found = re.search(r"\(the (\w+) rule's here\)", rule)
    return found.group(1) if found else rule.split(" ", 1)[0]


def every_rule(finding, delta: float = 0.0, canaries: int = 0) -> str:
    """Each rule's right / guesses and bound at the finding's per-rule confidence (at
    ``delta`` with ``canaries`` canaries, as the audit's own bound)."""
    found = re.findall(r"(?:^|; )([\w ]+?) \((\d+) of (\d+) right\)", finding.rule)
    level = 1.0 - (1.0 - finding.confidence) / max(len(found), 1)
    return ", ".join(
        f"{name} {v}/{r} {one_run_eps_lower_bound(int(r), int(v), confidence=level, delta=delta, canaries=max(canaries, int(r))):.2f}"  # noqa: E501
        for name, v, r in found)


def false_rate(cls, games: list[AuditGame], epsilon: float, delta: float, seed: int,
               seeds: int, n_games: int, label: str, options: dict) -> None:
    """Prints how many of ``seeds`` audits (audit seeds ``seed`` on) refute the learner
    built at ``epsilon`` claiming ``epsilon`` (its true claim)."""
    start = time.process_time()
    refuted, bounds = [], []
    for s in range(seed, seed + seeds):
        def make(problem, space, agent_seed, cls=cls):
            return cls(problem, epsilon=epsilon, delta=delta, seed=agent_seed, **options)

        f = audit_one_run(make, games, (epsilon, delta), OneRunSettings(games=n_games, seed=s))
        bounds.append(f.eps_lb)
        if f.refuted:
            refuted.append(f"{s} ({reported_rule(f.rule)}, {f.eps_lb:.2f})")
    print(f"{label} at its own epsilon {epsilon:g}, audit seeds {seed}-{seed + seeds - 1}: "
          f"refuted in {len(refuted)} of {seeds} audits{': ' if refuted else ''}"
          f"{', '.join(refuted)}; largest eps_lb {max(bounds):.2f}, median "
          f"{float(np.median(bounds)):.2f} ({time.process_time() - start:.1f} s CPU)",
          flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--cuts", default="3,10000")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--privacy-loss", action="store_true")
    parser.add_argument("--rounds", type=int, default=100, help="rounds per game (--privacy-loss)")
    parser.add_argument("--window", type=int, default=None)
    parser.add_argument("--decode", type=int, default=None, metavar="STRIDE")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of every learner built (e.g. base=exp3 for "
                             "private-bandit); audits and --false-rate only")
    parser.add_argument("--false-rate", type=int, default=None, metavar="N",
                        help="audit each cut at its own epsilon on N audit seeds")
    parser.add_argument("--contextual", action="store_true",
                        help="the noise-free contextual twin's rounds that change a later "
                             "action (jdp-linucb, ldp-linucb)")
    parser.add_argument("--contextual-horizon", type=int, default=2000)
    parser.add_argument("--replay", action="store_true",
                        help="with --contextual: audit the twin, epsilon 1 and epsilon 10 "
                             "with the replay decoder, claiming (1, 1e-5)")
    args = parser.parse_args(argv)
    opts = dict(o.split("=", 1) for o in args.option)
    bench = default_benchmark()
    settings = OneRunSettings(games=bench.audit_games, seed=args.seed)
    cuts = [float(c) for c in args.cuts.split(",")]
    names = args.only or sorted(a.name for a in agents.list_agents()
                                if agents.agent_class(a.name).private)
    horizons = (args.contextual_horizon,) if args.contextual else bench.audit_horizons
    claim = "each cut's own epsilon" if args.false_rate is not None else "epsilon = 1"
    print(f"audit seed {args.seed}; T = {horizons}, {bench.audit_games} games "
          f"each; claim {claim}", flush=True)
    for name in names:
        cls = agents.agent_class(name)
        found = ("DPBandit-ContextualLinear-v0", {}) if args.contextual else audit_game(cls)
        if found is None:
            print(f"{name}: plays no audit game", flush=True)
            continue
        env, kwargs = found
        games = [AuditGame(env, kwargs, h) for h in bench.audit_horizons]
        if args.contextual:
            game = AuditGame("DPBandit-ContextualLinear-v0", {}, args.contextual_horizon)
            if args.replay:
                for label, eps, noise in (("twin", 1.0, False), ("epsilon 1", 1.0, True),
                                          ("epsilon 10", 10.0, True)):
                    start = time.process_time()

                    def make(problem, space, s, cls=cls, eps=eps, noise=noise):
                        return cls(problem, epsilon=eps, delta=1e-5, seed=s,
                                   add_noise=noise)

                    f = audit_one_run(make, [game], (1.0, 1e-5), settings, replay=True)
                    print(f"{name} {label} on {game.env_id}, T = {game.horizon}, claim "
                          f"(1, 1e-5): eps_lb {f.eps_lb:.2f} ({reported_rule(f.rule)}), "
                          f"{'REFUTED' if f.refuted else 'not refuted'}; "
                          f"{every_rule(f, 1e-5, f.canaries)}; "
                          f"{time.process_time() - start:.1f} s CPU", flush=True)
                continue
            start = time.process_time()
            changed, total = deterministic_changes(cls, game, 1.0, 1e-5, args.seed,
                                                   bench.audit_games, args.rounds)
            print(f"{name} twin (add_noise=False) on {game.env_id}, T = {game.horizon}: "
                  f"{changed} of {total} rounds change a later action "
                  f"({time.process_time() - start:.1f} s CPU)", flush=True)
            continue
        if args.decode is not None:
            for c in cuts:
                print(f"{name} on {env} cut {c:g}, white-box decoder:", flush=True)
                decoded_audit(cls, games, c, args.seed, bench.audit_games, args.decode)
            continue
        if args.privacy_loss:
            tree = cls.feedback == "full"
            for c in cuts:
                if tree:  # every round of every game at once, the audit's m
                    losses = np.concatenate([tree_privacy_losses(cls, g, c, args.seed,
                                                                 bench.audit_games)
                                             for g in games])
                    print(f"{name} on {env} cut {c:g} (every round of T = "
                          f"{bench.audit_horizons}, tree counter):", flush=True)
                    report_privacy_losses(losses)
                    continue
                for game in games:
                    start = time.process_time()
                    if name in ("adap-ucb", "adap-klucb"):
                        losses = episode_privacy_losses(cls, game, c, args.seed,
                                                        bench.audit_games)
                    elif name == "private-batched-htinf":
                        losses = replayed_privacy_losses(cls, game, c, args.seed,
                                                         bench.audit_games, args.rounds)
                    else:
                        losses = privacy_losses(cls, game, c, args.seed, bench.audit_games,
                                                args.rounds, args.window)
                    print(f"{name} on {env} T = {game.horizon} cut {c:g}"
                          f"{'' if args.window is None else f', window {args.window}'} "
                          f"({time.process_time() - start:.1f} s CPU):", flush=True)
                    report_privacy_losses(losses)
            continue
        delta = 1e-6 if name in NEEDS_DELTA else 0.0
        if args.false_rate is not None:
            for c in cuts:
                false_rate(cls, games, c, delta, args.seed, args.false_rate,
                           bench.audit_games, f"{name}{opts or ''} on {env}", opts)
            continue
        for c in cuts:
            start = time.process_time()

            def make(problem, space, seed, c=c, cls=cls, delta=delta):
                return cls(problem, epsilon=c, delta=delta, seed=seed, **opts)

            f = audit_one_run(make, games, (1.0, delta), settings)
            lo, hi = clopper_pearson(f.correct, f.guesses, 0.95) if f.guesses else (0.0, 1.0)
            print(f"{name}{opts or ''} on {env} cut {c:g}: {f.correct}/{f.guesses} right "
                  f"[{lo:.2f}, {hi:.2f}] ({reported_rule(f.rule)}), eps_lb {f.eps_lb:.2f}, "
                  f"{'REFUTED' if f.refuted else 'not refuted'}, rr {f.rr_epsilon:.3g}, "
                  f"{time.process_time() - start:.1f} s CPU; {every_rule(f)}", flush=True)


if __name__ == "__main__":
    main()
