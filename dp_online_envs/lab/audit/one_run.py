"""A one-run privacy audit: full-length games, every round a canary.

The action audit of :mod:`.actions` plays thousands of short games on constant loss
sequences: a learner can tell those games from the ones it is graded on (their horizon,
their losses, how often its process is reset) and be private only there.
:func:`audit_one_run` audits games that are drawn exactly as graded games are: each is
one game of the graded env and horizon, in its own session (one build, one reset with
the seed it was built with, ``T`` rounds, the end-of-game summary), the losses drawn by
the env's own adversary. What makes it an audit happens after the game, from what was
recorded (the losses and the actions), so a learner cannot see which games are audited.

The method is one-run auditing (Steinke, Nasr and Jagielski, *Privacy auditing with one
(1) training run*, NeurIPS 2023), with the rounds as the canaries:

1. **Canaries.** For the i.i.d. two-point draws of a box-parameter
   :class:`~dp_online_envs.adversaries.StochasticAdversary` (Bernoulli losses on
   ``DPBandit-MAB-v0`` and ``DPFullInfo-Experts-v0``), every round ``t`` gets a partner
   ``theta'_t`` drawn from the antithetic coupling of the round's law given the loss
   that was played (:func:`partner_losses`): ``(theta_t, theta'_t)`` is exchangeable
   with the env's law as both marginals. Ordering the pair by a fair coin ``S_t`` makes the game the
   one-run experiment "the learner played the loss of the pair that ``S_t`` chose", the
   neighbouring inputs differing in round ``t`` only, for every ``t`` at once.
2. **Guesses** (:func:`guess_rounds`; with arms also :func:`guess_leaves`,
   :func:`guess_returns` and :func:`guess_calibrated`, the first two skipping the plays
   of a schedule common to the games, :func:`scheduled_plays`, each rule's bound at
   ``alpha / 4`` and the largest reported): in round ``t`` the learner played arm ``a``; when
   the pair differs there (``theta_t[a] != theta'_t[a]``), the auditor guesses that the
   learner met the pair's *higher* loss when the arm, played before at a mean gap of
   ``g >= min_gap`` rounds (over its last ``history`` plays), is next played only
   ``>= ratio * g`` rounds after (or never again): a learner that drops an arm after
   one high loss (the other three rules: a leader left, the return after a short run,
   and that return compared with the returns after runs whose losses the pairs tell).
   Everything a guess reads is the actions and the unordered pair, never which loss
   was played. With points for actions (full information on
   ``DPFullInfo-Experts-v0``: a point of the simplex per round, the learner seeing every
   coordinate of ``theta_t``, so that the arm-dropping rule has nothing to read) the
   guess is :func:`guess_moves`: in each game's ``moves`` rounds where the released
   point moved most along the pair's difference (``|<x_{t+1} - x_t, theta_t -
   theta'_t>|``), the auditor guesses the loss of the pair the learner moved *away* from
   (the one higher where the learner's weight fell). The guess reads the released points
   (the output itself; any summary of them, such as the arm of largest weight, is a
   post-processing, so an epsilon-DP output sequence stays epsilon-DP under it) and the
   unordered pair only. A contextual game (``DPBandit-ContextualLinear-v0``, whose
   learners claim JOINT DP: the actions of the rounds other than ``t`` protect round
   ``t``'s data, round ``t``'s own action is not protected) pairs each round's loss
   vector given its context (:func:`partner_losses` with each round's law, the context
   kept) and guesses by :func:`guess_hidden` on a fixed set of canary rounds
   (:func:`hidden_rounds`, one in six) whose arms no guess reads; with
   ``audit_one_run(..., replay=True)`` (learners in process) also by
   :func:`decode_hidden`, a copy of the learner built apart from the game fed the other
   rounds' losses and split on each canary's unordered pair.
3. **Bound** (:func:`one_run_eps_lower_bound`): with ``r`` guesses of which ``v`` are
   right, an ``epsilon``-DP learner makes ``v`` at most a ``Binomial(r, e^eps / (1 +
   e^eps))`` (their Theorem 3.1): ``eps_lb`` is the largest epsilon whose tail
   ``P[Binomial >= v]`` is at most ``1 - confidence`` (a one-sided Clopper-Pearson bound
   on the guessing accuracy, through its log-odds), and ``eps_lb > epsilon`` refutes the
   claim. With ``delta > 0`` the bound is the larger of the paper's (its extra term
   added, :func:`one_run_p_value`) and the f-DP bound of Mahloujifar, Melis and Chaudhuri
   for the trade-off function of ``(epsilon, delta)``-DP (:func:`fdp_eps_lower_bound`).
4. **Power** (:attr:`OneRunFinding.verdict`): ``refuted``, ``not refuted`` (with the
   power on the learner: :func:`rr_power`, the randomized response its guessed rounds
   would have to leak, and its noise-free twin where played) or ``no audit power``.

Validity, the conditioning on the number of guesses and the coupling:
``docs/algorithms/one-run-audit.md``. Power: :func:`one_run_power` (the noise cuts of a
reference learner the same audit refutes; ``private-exp2`` for arms, ``private-ftrl``
for the points of ``DPFullInfo-Experts-v0``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from scipy import optimize, stats

from dp_online_envs.adversaries.contextual import PhasedContexts, StochasticLinearContexts
from dp_online_envs.adversaries.stochastic import StochasticAdversary
from dp_online_envs.lab.audit.statistics import check_confidence, clopper_pearson
from dp_online_envs.loop import run_rounds, seed_of
from dp_online_envs.losses.linear import LinearLoss
from dp_online_envs.problem import Problem
from dp_online_envs.validation import (
    check_bool,
    check_delta,
    check_epsilon,
    check_int,
    check_real,
)

__all__ = ["AuditGame", "DEFAULT_ONE_RUN", "OneRunFinding", "OneRunSettings",
           "PlayedGame", "TWIN_FACTOR", "arm_pairs", "audit_one_run", "check_canary_env",
           "decode_hidden", "fdp_eps_lower_bound", "fdp_p_value", "guess_calibrated",
           "guess_explorations", "guess_hidden", "guess_leaves", "guess_moves",
           "guess_returns", "guess_rounds", "hidden_rounds", "one_run_eps_lower_bound",
           "one_run_p_value", "one_run_power", "partner_losses", "play_audit_game",
           "rr_power", "scheduled_plays"]


@dataclasses.dataclass(frozen=True)
class OneRunSettings:
    """Settings of a one-run audit.

    Attributes:
        games: Audit games per env and horizon (each one full game in its own session).
        confidence: Confidence of the bound, in ``(0, 1)``.
        seed: Seeds the games (env and learner seeds, the partners' draws).
        min_gap: Smallest mean gap between the arm's previous plays for a round to be
            guessed (``None``: ``ceil(sqrt(T))``).
        ratio: A guess needs the arm's next play ``>= ratio`` times that mean gap after
            the round (``> 1``).
        history: Previous plays of the arm whose gaps are averaged (``>= 1``).
        moves: Full information: the rounds guessed per game, those where the released
            point moved most along the pair's difference (:func:`guess_moves`, ``>= 1``);
            a bandit learner's points: the rounds guessed per game by
            :func:`guess_explorations`.
        window: A bandit learner's points: released points averaged on each side of a
            round for its centre's move (:func:`guess_explorations`, ``>= 1``).
        streak: Arms: plays of the arm before a round, and of other arms after it, for
            the ``leave`` rule (:func:`guess_leaves`), and the longest run the
            ``returns`` rule guesses (:func:`guess_returns`; ``>= 1``).

    Raises:
        ValueError: An invalid setting, named with what was expected.
    """

    games: int = 16
    confidence: float = 0.95
    seed: int = 0
    min_gap: int | None = None
    ratio: float = 6.0
    history: int = 3
    moves: int = 64
    window: int = 8
    streak: int = 2

    def __post_init__(self) -> None:
        check_int("games", self.games, 1)
        check_confidence(self.confidence)
        check_int("seed", self.seed, 0)
        if self.min_gap is not None:
            check_int("min_gap", self.min_gap, 1)
        check_real("ratio", self.ratio, 1.0, low_inclusive=False)
        check_int("history", self.history, 1)
        check_int("moves", self.moves, 1)
        check_int("window", self.window, 1)
        check_int("streak", self.streak, 1)

    def gap(self, horizon: int) -> int:
        """The ``min_gap`` of a game of ``horizon`` rounds."""
        return self.min_gap if self.min_gap is not None else math.isqrt(horizon - 1) + 1

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values."""
        return dataclasses.asdict(self)


#: The default settings.
DEFAULT_ONE_RUN = OneRunSettings()


# --------------------------------------------------------------------------
# the bound
# --------------------------------------------------------------------------
def _counts(guesses: int, correct: int) -> tuple[int, int]:
    r = check_int("guesses", guesses, 0)
    return r, check_int("correct", correct, 0, r)


def one_run_p_value(guesses: int, correct: int, epsilon: float, *, delta: float = 0.0,
                    canaries: int = 0) -> float:
    """``P[v >= correct]`` for an ``(epsilon, delta)``-DP learner (Steinke et al. 2023,
    Thm. 3.1): ``f(v) + 2 m delta max_{1 <= i <= v} (f(v - i) - f(v)) / i`` with
    ``f(v) = P[Binomial(r, e^eps / (1 + e^eps)) >= v]``, ``r = guesses``, ``m =
    canaries`` (the term vanishes for ``delta = 0``). Capped at 1.

    Raises:
        ValueError: Invalid counts, epsilon or delta.
    """
    r, v = _counts(guesses, correct)
    eps = check_real("epsilon", epsilon, 0.0)
    check_delta(delta)
    q = 1.0 / (1.0 + math.exp(-eps)) if math.isfinite(eps) else 1.0
    f = float(stats.binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if delta > 0 and v > 0:
        m = check_int("canaries", canaries, r)
        i = np.arange(1, v + 1)
        between = np.cumsum(stats.binom.pmf(v - i, r, q))  # P[v > Binomial >= v - i]
        f += 2.0 * m * float(delta) * float(np.max(between / i))
    return min(f, 1.0)


def _fdp_mass(guesses: int, correct: int, epsilon: float, delta: float, canaries: int,
              tail: float) -> float:
    """The least ``R_0 + H_0`` (``guesses`` times the total probability) of a law of the
    right guesses that the ``(epsilon, delta)`` trade-off allows with ``P[v >= correct]
    >= tail``, exactly ``guesses`` of ``canaries`` rounds guessed: the greedy recursion of
    :func:`fdp_p_value`. Stops as soon as the sum exceeds ``guesses`` (then returns a value
    above it), or once ``H`` stops growing (then nothing else changes)."""
    r, v, m = guesses, correct, canaries
    big, budget = m * delta, float(r)
    shrink, grow = math.exp(-epsilon), math.exp(min(epsilon, 700.0))  # no overflow
    right, wrong = tail * v, tail * (r - v)  # R_v, H_v: the tail's mass, all at v
    for i in range(v - 1, -1, -1):
        # H_i >= m fbar^{-1}(R_{i+1} / m), fbar the blow-up of the (eps, delta) trade-off
        need = max((right - big) * shrink, m * (1.0 - delta) - grow * (m - right))
        if need <= wrong:  # H stays, so R stays: every later step changes nothing
            break
        right += i / (r - i) * (need - wrong)
        wrong = need
        if right + wrong > budget:
            break
    return right + wrong


def fdp_p_value(guesses: int, correct: int, epsilon: float, *, delta: float = 0.0,
                canaries: int = 0) -> float:
    """The largest ``P[v >= correct]`` the trade-off function of ``(epsilon, delta)``-DP
    allows when exactly ``guesses`` of ``canaries`` rounds are guessed (Mahloujifar, Melis
    and Chaudhuri 2024, the one-run f-DP audit with abstentions).

    With ``R_i = E[v; v >= i]`` and ``H_i = E[r - v; v >= i]``, the trade-off of one
    canary gives ``R_i <= m fbar(H_{i-1} / m)``, ``fbar(x) = min(1, delta + e^eps x, 1 -
    e^-eps (1 - delta - x))``; the least ``E[r] = R_0 + H_0`` of a law whose tail at
    ``correct`` is ``tau`` is a greedy recursion from ``R_v = tau v``, ``H_v = tau (r -
    v)`` down to 0, and ``tau`` is possible exactly when it is at most ``r``. The value is
    the largest such ``tau``, found by bisection on its logarithm to a relative ``1e-9``
    (the upper end returned), so it is at least the exact maximum of this relaxation
    (``docs/algorithms/one-run-audit.md``). It is never below the binomial tail of
    :func:`one_run_p_value` at ``delta = 0`` (which is exact there); with ``delta > 0``
    and few guesses it is far below Steinke et al.'s.

    Raises:
        ValueError: Invalid counts, epsilon or delta, or ``canaries < max(guesses, 1)``.
    """
    r, v = _counts(guesses, correct)
    eps = check_real("epsilon", epsilon, 0.0)
    check_delta(delta)
    m = check_int("canaries", canaries, max(r, 1))
    if v == 0:
        return 1.0
    if _fdp_mass(r, v, eps, float(delta), m, 1.0) <= r:
        return 1.0
    # the mass is increasing in tau: bisect ln(tau) for the last feasible tau
    lo, hi = math.log(sys.float_info.min), 0.0
    if _fdp_mass(r, v, eps, float(delta), m, math.exp(lo)) > r:
        return math.exp(lo)
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if _fdp_mass(r, v, eps, float(delta), m, math.exp(mid)) <= r:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def fdp_eps_lower_bound(guesses: int, correct: int, *, confidence: float = 0.95,
                        delta: float = 0.0, canaries: int = 0) -> float:
    """The largest epsilon that :func:`fdp_p_value` refutes at ``confidence``: the
    supremum of the epsilons at which no law the ``(epsilon, delta)`` trade-off allows
    has ``P[v >= correct] >= 1 - confidence`` (0 when it refutes none).

    The needed mass is decreasing in epsilon (a larger epsilon, a smaller inverse
    blow-up), so the set refuted is an interval from 0; its end is found by bisection to
    ``1e-9``, the lower end returned (never above the supremum).

    Raises:
        ValueError: Invalid counts, confidence or delta, or ``canaries < max(guesses,
            1)``.
    """
    r, v = _counts(guesses, correct)
    alpha = 1.0 - check_confidence(confidence)
    check_delta(delta)
    m = check_int("canaries", canaries, max(r, 1))
    if v == 0:
        return 0.0

    def refuted(eps: float) -> bool:
        return _fdp_mass(r, v, eps, float(delta), m, alpha) > r

    if not refuted(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while refuted(hi):
        if hi > 1e3:  # no tail as large as alpha at any finite epsilon
            return math.inf
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if refuted(mid):
            lo = mid
        else:
            hi = mid
    return lo


def one_run_eps_lower_bound(guesses: int, correct: int, *, confidence: float = 0.95,
                            delta: float = 0.0, canaries: int = 0) -> float:
    """The largest epsilon that ``correct`` right guesses out of ``guesses`` refute at
    ``confidence`` (0 when they refute none).

    ``delta = 0``: the tail ``P[Binomial(r, q) >= v]`` is at most ``alpha = 1 -
    confidence`` exactly for ``q`` up to the one-sided Clopper-Pearson lower bound
    ``q_lo`` of ``v`` out of ``r``, so ``eps_lb = ln(q_lo / (1 - q_lo))``
    (:func:`~dp_online_envs.lab.audit.statistics.clopper_pearson`); randomized response
    attains this tail, so no analysis refutes more. ``delta > 0``: the larger of the root
    in epsilon of :func:`one_run_p_value` ``= alpha`` (Steinke et al.) and
    :func:`fdp_eps_lower_bound` (Mahloujifar et al.), ``canaries`` being the ``m`` of
    both. Both bound the same tail ``P[v >= correct]``, so their minimum does, and the
    larger bound is valid at ``confidence`` without a union bound
    (``docs/algorithms/one-run-audit.md``).

    Raises:
        ValueError: Invalid counts, confidence or delta, or (``delta > 0``) ``canaries <
            guesses``.
    """
    r, v = _counts(guesses, correct)
    alpha = 1.0 - check_confidence(confidence)
    check_delta(delta)
    if v == 0:
        return 0.0
    if delta == 0:
        q_lo = clopper_pearson(v, r, 1.0 - 2.0 * alpha)[0]
        return math.log(q_lo / (1.0 - q_lo)) if q_lo > 0.5 else 0.0
    fdp = fdp_eps_lower_bound(r, v, confidence=1.0 - alpha, delta=delta, canaries=canaries)

    def excess(eps: float) -> float:
        return one_run_p_value(r, v, eps, delta=delta, canaries=canaries) - alpha

    if excess(0.0) > 0:
        return fdp
    hi = 1.0
    while excess(hi) <= 0:
        if hi > 1e3:  # the tail never exceeds alpha: no finite epsilon survives
            return math.inf
        hi *= 2.0
    return max(fdp, float(optimize.brentq(excess, 0.0, hi, xtol=1e-10)))


# --------------------------------------------------------------------------
# canaries and guesses
# --------------------------------------------------------------------------
#: The contextual adversaries whose rounds the audit pairs: Bernoulli losses, independent
#: across arms, of mean ``mu_a(c_t)`` given the round's context (exactly these classes,
#: not subclasses, which could change the law).
CONTEXTUAL_CANARY_ADVERSARIES = (StochasticLinearContexts, PhasedContexts)


def is_contextual_canary(adversary: Any) -> bool:
    """Whether ``adversary`` is one of :data:`CONTEXTUAL_CANARY_ADVERSARIES` (a game
    audited as joint DP: :func:`guess_hidden`)."""
    return type(adversary) in CONTEXTUAL_CANARY_ADVERSARIES


def check_canary_env(adversary: Any, loss: Any) -> None:
    """Refuse an env whose rounds the audit cannot pair.

    Raises:
        ValueError: The adversary is neither a box-parameter i.i.d.
            :class:`~dp_online_envs.adversaries.StochasticAdversary` nor one of
            :data:`CONTEXTUAL_CANARY_ADVERSARIES` (named, with what is needed).
    """
    if is_contextual_canary(adversary) and getattr(loss, "param_is_box", False):
        return
    if type(adversary) is not StochasticAdversary or not getattr(loss, "param_is_box", False):
        raise ValueError(
            f"the one-run audit needs i.i.d. two-point losses (a stochastic adversary on a "
            f"box parameter set, e.g. DPBandit-MAB-v0 or DPFullInfo-Experts-v0, or the "
            f"stochastic linear contexts of DPBandit-ContextualLinear-v0), got "
            f"{type(adversary).__name__} on {type(loss).__name__}")


def partner_losses(thetas: np.ndarray, mean: np.ndarray, low: np.ndarray, high: np.ndarray,
                   rng: np.random.Generator) -> np.ndarray:
    """Each round's partner ``theta'_t``, from the antithetic coupling given ``theta_t``.

    Coordinate ``i`` of a round is ``high_i`` with probability ``p_i = (mean_i - low_i) /
    (high_i - low_i)``, else ``low_i``. The antithetic pair ``(1{U < p}, 1{1 - U < p})``
    of one uniform ``U`` has both marginals Bernoulli(p), is exchangeable, and differs
    with probability ``2 min(p, 1 - p)`` (the most any coupling can); the partner is
    drawn from its law given the played coordinate: a high one has a low partner with
    probability ``min(p, 1 - p) / p``, a low one a high partner with probability
    ``min(p, 1 - p) / (1 - p)``.

    Args:
        thetas: ``(T, P)`` the played parameters (each coordinate ``low_i`` or ``high_i``).
        mean: ``(P,)`` the adversary's mean, or ``(T, P)`` each round's own (a contextual
            game: the arms' mean losses ``mu_a(c_t)`` given the round's context).
        low, high: ``(P,)`` the parameter box.
        rng: Draws the partners.

    Returns:
        ``(T, P)`` partners.
    """
    thetas = np.asarray(thetas, dtype=np.float64)
    low = np.broadcast_to(np.asarray(low, np.float64), thetas.shape)
    high = np.broadcast_to(np.asarray(high, np.float64), thetas.shape)
    mean = np.asarray(mean, np.float64)
    if mean.shape not in (thetas.shape[1:], thetas.shape):
        raise ValueError(f"mean of shape {mean.shape} rejected: expected {thetas.shape[1:]} "
                         f"(one law for every round) or {thetas.shape} (a law per round)")
    width = high - low
    p = np.divide(mean - low, width, out=np.zeros(thetas.shape), where=width > 0)
    both = np.minimum(p, 1.0 - p)
    is_high = thetas == high
    flip_high = np.divide(both, p, out=np.zeros_like(p), where=p > 0)
    flip_low = np.divide(both, 1.0 - p, out=np.zeros_like(p), where=p < 1)
    flip = rng.random(thetas.shape) < np.where(is_high, flip_high, flip_low)
    return np.where(flip, np.where(is_high, low, high), thetas)


def guess_rounds(arms: np.ndarray, differ: np.ndarray, min_gap: int, ratio: float,
                 history: int = 3, free: np.ndarray | None = None) -> np.ndarray:
    """The rounds where the auditor guesses "the learner met the pair's higher loss".

    Round ``t`` (0-based here) is guessed when ``differ[t]``, the arm ``a = arms[t]`` was
    played ``history`` times before with a mean gap ``g = (t - (the history-th previous
    play of a)) / history >= min_gap`` rounds, and its next play is ``>= ratio * g``
    rounds after ``t`` (never again counts as ``T - t`` rounds): the arm's rate of play
    fell by ``ratio`` right after the round.

    Args:
        arms: ``(T,)`` the arms played.
        differ: ``(T,)`` whether the round's pair differs on the arm played.
        min_gap: Smallest mean gap ``g`` guessed.
        ratio: The factor.
        history: Previous plays averaged into ``g``.
        free: ``(T,)`` bool, the plays that count (``None``: all). A play outside it (a
            scheduled play, :func:`scheduled_plays`) is neither guessed nor counted as a
            play of its arm: a learner that forces every arm into play on a fixed
            schedule is read on its other plays.

    Returns:
        ``(T,)`` bool.
    """
    arms = np.asarray(arms, dtype=np.int64)
    horizon = arms.size
    times = np.arange(horizon) if free is None else np.flatnonzero(free)
    n = times.size
    out = np.zeros(horizon, bool)
    if n == 0:
        return out
    order = np.lexsort((times, arms[times]))  # by arm, then by round
    rounds = times[order]
    same = arms[rounds]
    starts = np.r_[0, np.flatnonzero(same[1:] != same[:-1]) + 1]
    run_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    j = np.arange(n)
    gap = np.zeros(n)
    seen = j - run_start >= history
    gap[seen] = (rounds[seen] - rounds[j[seen] - history]) / history
    last = np.r_[same[1:] != same[:-1], True]
    nxt = np.where(last, horizon - rounds, np.r_[rounds[1:], horizon] - rounds)
    out[rounds] = (np.asarray(differ, bool)[rounds] & (gap >= min_gap) & (nxt >= ratio * gap)
                   & (gap > 0))
    return out


def scheduled_plays(games: Sequence[np.ndarray], share: float = 0.9) -> list[np.ndarray]:
    """Each game's plays that follow a schedule, read from the games' arms alone.

    Round ``t`` is scheduled when one arm is played there in at least ``max(3, share *
    G)`` of the ``G`` games (games of one env and horizon, each with its own losses and
    seeds): a forced-exploration schedule (round-robin every ``k``-th round, the first
    ``K`` rounds) shows as the same arm in the same round of every game. A game's play
    is scheduled when it is that arm.

    It reads the released arms of all the games (the output) and nothing else, so a
    guess rule restricted to the other plays is still a function of the output and the
    unordered pairs.

    Args:
        games: ``(T,)`` arms of each game (the same ``T``).
        share: The share of games that makes a round scheduled.

    Returns:
        ``(T,)`` bool per game.
    """
    if not games:
        return []
    arms = np.stack([np.asarray(a, np.int64) for a in games])
    n_games, horizon = arms.shape
    counts = np.zeros((int(arms.max()) + 1, horizon), np.int64)
    np.add.at(counts, (arms, np.broadcast_to(np.arange(horizon), arms.shape)), 1)
    mode, top = counts.argmax(axis=0), counts.max(axis=0)
    common = top >= max(3.0, share * n_games)
    return list((arms == mode[None, :]) & common[None, :])


def guess_leaves(arms: np.ndarray, differ: np.ndarray, streak: int = 2,
                 free: np.ndarray | None = None) -> np.ndarray:
    """The rounds where the auditor guesses "the learner met the pair's higher loss"
    because it left the arm right after: a learner that follows a leader (greedy on
    empirical means, follow-the-leader) switches away from it only when a high loss
    pushed it behind another.

    Among the counted plays (``free``, all when ``None``), round ``t`` is guessed when
    ``differ[t]``, the ``streak`` counted plays before it were the same arm ``a =
    arms[t]``, round ``t + 1`` is a counted play, and the ``streak`` counted plays after
    ``t`` are all other arms. (A scheduled play in between would let a low loss of the
    scheduled arm cause the switch, so round ``t + 1`` must be counted.)

    Args:
        arms: ``(T,)`` the arms played.
        differ: ``(T,)`` whether the round's pair differs on the arm played.
        streak: Counted plays of the arm before, and of other arms after (``>= 1``).
        free: ``(T,)`` bool, the plays counted (``None``: all).

    Returns:
        ``(T,)`` bool.
    """
    streak = check_int("streak", streak, 1)
    arms = np.asarray(arms, np.int64)
    horizon = arms.size
    times = np.arange(horizon) if free is None else np.flatnonzero(free)
    out = np.zeros(horizon, bool)
    n = times.size
    if n < 2 * streak + 1:
        return out
    seq = arms[times]
    j = np.arange(streak, n - streak)
    ok = np.asarray(differ, bool)[times[j]] & (times[j + 1] == times[j] + 1)
    for s in range(1, streak + 1):
        ok &= (seq[j - s] == seq[j]) & (seq[j + s] != seq[j])
    out[times[j[ok]]] = True
    return out


def guess_returns(arms: np.ndarray, differ: np.ndarray, longest: int = 2,
                  tail: float = 0.25, free: np.ndarray | None = None) -> np.ndarray:
    """Guesses from when the learner came back to an arm after a short run of it: a
    learner that plays an arm for an episode and ranks arms by the episode's losses (an
    index on the last episode's mean, as AdaP-UCB's doubling episodes) returns early to
    an arm whose episode went well and late to one whose episode went badly.

    Among the counted plays (``free``; all when ``None``), a *run* is a maximal stretch
    of plays of one arm; its return time is the number of rounds from its last play to
    the arm's next counted play (``T`` minus it when there is none). For each run length
    ``m <= longest`` with at least 4 runs in the game, a run whose return time is below
    the ``tail`` quantile of those runs' return times guesses the pair's lower loss in
    each of its rounds whose pair differs (``-1``), one above the ``1 - tail`` quantile
    the higher (``+1``). The guesses read the arms and the unordered pairs only.

    Args:
        arms: ``(T,)`` the arms played.
        differ: ``(T,)`` whether the round's pair differs on the arm played.
        longest: Longest run guessed (``>= 1``): a round of a long run moves its
            episode's mean little.
        tail: The quantile of the early and of the late returns, in ``(0, 0.5]``.
        free: ``(T,)`` bool, the plays counted (``None``: all).

    Returns:
        ``(T,)`` int8: ``+1`` (the higher loss), ``-1`` (the lower) or ``0``.
    """
    longest = check_int("longest", longest, 1)
    tail = check_real("tail", tail, 0.0, 0.5, low_inclusive=False)
    arms = np.asarray(arms, np.int64)
    horizon = arms.size
    times = np.arange(horizon) if free is None else np.flatnonzero(free)
    out = np.zeros(horizon, np.int8)
    if times.size == 0:
        return out
    seq = arms[times]
    starts = np.r_[0, np.flatnonzero(seq[1:] != seq[:-1]) + 1]
    ends = np.r_[starts[1:], seq.size]  # exclusive, in counted plays
    run_arm = seq[starts]
    last = times[ends - 1]
    back = np.full(starts.size, float(horizon)) - last
    for a in np.unique(run_arm):
        mine = np.flatnonzero(run_arm == a)
        back[mine[:-1]] = times[starts[mine[1:]]] - last[mine[:-1]]
    length = ends - starts
    for m in range(1, longest + 1):
        runs = np.flatnonzero(length == m)
        if runs.size < 4:
            continue
        lo, hi = np.quantile(back[runs], [tail, 1.0 - tail])
        for sign, chosen in ((-1, runs[back[runs] < lo]), (1, runs[back[runs] > hi])):
            for i in chosen:
                out[times[starts[i]:ends[i]]] = sign
    return np.where(np.asarray(differ, bool), out, 0).astype(np.int8)


#: The ``calibrated`` rule (:func:`guess_calibrated`): the longest run it guesses, the
#: share of the reference runs a return must beat, the fewest references it needs.
CALIBRATED_LONGEST, CALIBRATED_TAIL, CALIBRATED_LEAST = 2, 0.05, 4


def guess_calibrated(games: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                     longest: int = CALIBRATED_LONGEST, tail: float = CALIBRATED_TAIL,
                     least: int = CALIBRATED_LEAST) -> list[np.ndarray]:
    """Guesses from when the learner came back to an arm after a short run of it, each
    return compared with the returns after runs whose losses are known.

    A learner that plays an arm for an episode and ranks arms by the episode's losses
    (AdaP's doubling episodes: one noisy release per episode) comes back early after an
    episode that went well. Where a round's pair agrees, its loss is known from the
    unordered pair; a run all of whose rounds agree is a *reference* of known loss sum.
    A run whose pair differs in exactly one round has one of two sums, and the references
    of the same kind with each of those sums say which its return looks like.

    In each game a *run* is a maximal stretch of plays of one arm, its return time the
    rounds from its last play to the arm's next play (``T`` minus the last play when there
    is none), its *kind* the triple (its length ``m <= longest``, the plays of its arm
    before it, and its sum of known losses). The references are pooled over ``games``
    (games of one env and horizon). A run of length ``m <= longest`` whose pair differs
    in exactly one round ``t``, with known sum ``s`` over its other rounds and pair
    ``lower_t < upper_t``, is guessed

    - ``-1`` (the lower loss) when at least ``least`` references of its length and prior
      plays have sum ``s + upper_t`` and at most a share ``tail`` of them returned no
      later than it (it came back sooner than nearly every run of the higher sum);
    - ``+1`` (the higher loss) when at least ``least`` such references have sum ``s +
      lower_t`` and at most a share ``tail`` of them returned no sooner than it;
    - ``0`` otherwise (neither, or both).

    Only round ``t`` of such a run is guessed. Everything read is the arms (the output)
    and the unordered pairs (``lower``, ``upper``: which of the two was played is never
    read), so the guesses are a function ``A(output, pairs)`` as the one-run bound needs,
    for any learner.

    Args:
        games: ``(arms, lower, upper)`` per game: ``(T,)`` the arms played and the
            smaller and larger loss of each round's pair on the arm played (equal where
            the pair agrees); every game of the same ``T``.
        longest: Longest run guessed (``>= 1``).
        tail: The share of the references a return must beat, in ``(0, 0.5]``.
        least: The fewest references of a sum that are compared (``>= 1``).

    Returns:
        ``(T,)`` int8 per game: ``+1`` (the higher loss), ``-1`` (the lower) or ``0``.

    Raises:
        ValueError: Games of different lengths or mismatched arrays, or a bad setting.
    """
    longest = check_int("longest", longest, 1)
    tail = check_real("tail", tail, 0.0, 0.5, low_inclusive=False)
    least = check_int("least", least, 1)
    columns: list[list[np.ndarray]] = [[] for _ in range(9)]  # every game's short runs
    outs = []
    horizon = None
    for g, (arms, lower, upper) in enumerate(games):
        arms = np.asarray(arms, np.int64)
        lower, upper = np.asarray(lower, np.float64), np.asarray(upper, np.float64)
        if arms.ndim != 1 or lower.shape != arms.shape or upper.shape != arms.shape:
            raise ValueError(f"game {g}: arms {arms.shape}, lower {lower.shape} and upper "
                             f"{upper.shape} must all be (T,)")
        if horizon is not None and arms.size != horizon:
            raise ValueError(f"game {g} has {arms.size} rounds, the first {horizon}: the "
                             "references are pooled over games of one horizon")
        horizon = arms.size
        outs.append(np.zeros(horizon, np.int8))
        if horizon == 0:
            continue
        starts = np.r_[0, np.flatnonzero(arms[1:] != arms[:-1]) + 1]
        length = np.diff(np.r_[starts, horizon])
        # by arm, then by round: each run's earlier plays of its arm and its return
        order = np.lexsort((starts, arms[starts]))
        size = length[order]
        first = np.r_[True, arms[starts][order][1:] != arms[starts][order][:-1]]
        done = np.cumsum(size) - size
        prior = np.empty_like(starts)
        prior[order] = done - np.maximum.accumulate(np.where(first, done, 0))
        back = np.empty_like(starts)
        following = np.where(np.r_[~first[1:], False], np.r_[starts[order][1:], 0], horizon)
        back[order] = following - (starts[order] + size - 1)
        differ = lower != upper
        count = np.add.reduceat(differ.astype(np.int64), starts)
        known = np.add.reduceat(np.where(differ, 0.0, lower), starts)
        # the round whose pair differs, in a run with one such round (else its first)
        where = np.where(count == 1, np.add.reduceat(np.where(differ, np.arange(horizon), 0),
                                                     starts), starts)
        keep = (length <= longest) & (count <= 1)
        for column, values in zip(columns, (np.full(starts.size, g), where, length, prior,
                                            back, count, known, known + lower[where],
                                            known + upper[where])):
            column.append(values[keep])
    if horizon is None or not columns[0]:
        return outs
    game, where, length, prior, back, count, known, low_sum, high_sum = map(np.concatenate,
                                                                             columns)
    ref, guessed = count == 0, count == 1
    if not guessed.any():
        return outs
    sums = {"ref": known[ref], "low": low_sum[guessed], "high": high_sum[guessed]}
    # one id per (length, prior plays, sum) of the references and of the guessed runs' sums
    keys = np.concatenate([np.stack([length[rows], prior[rows], np.round(total, 9)], axis=1)
                           for rows, total in ((ref, sums["ref"]), (guessed, sums["low"]),
                                               (guessed, sums["high"]))])
    order = np.lexsort(keys.T[::-1])
    step = np.r_[False, np.any(keys[order][1:] != keys[order][:-1], axis=1)]
    ids = np.empty(keys.shape[0], np.int64)
    ids[order] = np.cumsum(step)
    n_ref, n_guessed = int(ref.sum()), int(guessed.sum())
    ref_id, low_id, high_id = (ids[:n_ref], ids[n_ref:n_ref + n_guessed],
                               ids[n_ref + n_guessed:])
    span = horizon + 2  # returns are in 1..T: (id, return) coded as one integer, sorted
    coded = np.sort(ref_id * span + back[ref])
    refs = np.bincount(ref_id, minlength=int(ids.max()) + 1)
    b = back[guessed]
    # references of the higher sum that returned no later, of the lower no sooner
    no_later = (np.searchsorted(coded, high_id * span + b, side="right")
                - np.searchsorted(coded, high_id * span, side="left"))
    sooner_ones = (np.searchsorted(coded, low_id * span + b, side="left")
                   - np.searchsorted(coded, low_id * span, side="left"))
    no_sooner = refs[low_id] - sooner_ones
    sooner = (refs[high_id] >= least) & (no_later <= tail * refs[high_id])
    later = (refs[low_id] >= least) & (no_sooner <= tail * refs[low_id])
    sign = np.where(sooner & ~later, -1, np.where(later & ~sooner, 1, 0)).astype(np.int8)
    for g, out in enumerate(outs):
        mine = game[guessed] == g
        out[where[guessed][mine]] = sign[mine]
    return outs


def _strongest(weight: np.ndarray, moves: int) -> np.ndarray:
    """The indices of the (at most) ``moves`` largest positive entries of ``weight``,
    largest first, the earlier index first on ties."""
    nonzero = np.flatnonzero(weight)
    return nonzero[np.lexsort((nonzero, -weight[nonzero]))][:moves]


def guess_moves(points: np.ndarray, first: np.ndarray, second: np.ndarray,
                moves: int, values: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                ) -> np.ndarray:
    """Full-information guesses: which loss of each round's pair the learner met, read
    from where its released point moved next.

    With ``d_t = first_t - second_t`` and ``s_t = <points[t + 1] - points[t], d_t>``
    (``0`` in the last round, which has no next point): ``s_t < 0`` means the learner
    moved weight away from the coordinates where ``first_t`` is the higher loss, so the
    guess is ``first_t`` (``+1``); ``s_t > 0`` guesses ``second_t`` (``-1``). Only the
    ``moves`` rounds with the largest ``|s_t| > 0`` are guessed (ties: the earlier round),
    the others get ``0``. A learner that moves its weight away from a coordinate after a
    high loss on it (Hedge, FTRL: ``x_{t+1, i}`` proportional to ``x_{t, i} e^{-eta
    theta_{t, i}}``) is guessed right in every round whose pair differs; one that plays
    vertices (the leader) moves only when its leader changes, and the guess is then
    the loss of the pair that is higher on the old leader than on the new one.

    The guesses read the released points (the learner's output itself) and the pair
    as an unordered pair: swapping ``first`` and ``second`` negates every guess, so the
    loss guessed is the same. Any other summary of the points computed without the
    losses (e.g. the one-hot of the arm of largest weight) is a post-processing of the
    output and may be passed as ``points`` instead: an epsilon-DP output sequence stays
    epsilon-DP under it, so the audit's bound holds for it too.

    **Any loss** (``values`` given): ``s_t = d_t(x_{t+1}) - d_t(x_t)`` with ``d_t(x) =
    f(first_t, x) - f(second_t, x)``, the change the move made to how much more the
    first loss costs than the second; for a linear loss ``f(theta, x) = <theta, x>`` it
    is the form above. The points may then be any released actions (points of a
    polytope or a ball, subsets as 0/1 vectors) and the parameters of another dimension.
    It reads the released points, the unordered pair and the public loss family only,
    so it is a post-processing of the output like the linear form: valid for any
    learner's released actions (a bandit learner's included), whatever its power.

    Args:
        points: ``(T, P)`` the released points (``(T, N)`` with ``values``).
        first, second: ``(T, P)`` the two losses of each round's pair (scaled alike, e.g.
            to a unit box).
        moves: Rounds guessed at most (``>= 1``).
        values: ``values(theta, xs) -> (m,)`` the loss at each row of ``xs`` (a
            :class:`~dp_online_envs.losses.base.LossFamily`'s ``values``); ``None``: the
            linear form.

    Returns:
        ``(T,)`` int8: ``+1`` (guess ``first``), ``-1`` (guess ``second``) or ``0``.

    Raises:
        ValueError: Arrays of different shapes, or ``moves < 1``.
    """
    moves = check_int("moves", moves, 1)
    points = np.asarray(points, np.float64)
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    if values is None:
        if points.ndim != 2 or first.shape != points.shape or second.shape != points.shape:
            raise ValueError(f"points {points.shape}, first {first.shape} and second "
                             f"{second.shape} must be the same (T, P) shape")
        s = np.zeros(points.shape[0])
        s[:-1] = np.einsum("tk,tk->t", np.diff(points, axis=0), (first - second)[:-1])
    else:
        if (points.ndim != 2 or first.ndim != 2 or first.shape != second.shape
                or first.shape[0] != points.shape[0]):
            raise ValueError(f"points {points.shape} (T, N), first {first.shape} and second "
                             f"{second.shape} (T, P) must have the same number of rounds")
        s = np.zeros(points.shape[0])
        for t in np.flatnonzero(np.any(first[:-1] != second[:-1], axis=1)):
            pair = points[t:t + 2]
            d = np.asarray(values(first[t], pair)) - np.asarray(values(second[t], pair))
            s[t] = float(d[1] - d[0])
    chosen = _strongest(np.abs(s), moves)
    out = np.zeros(points.shape[0], np.int8)
    out[chosen] = np.where(s[chosen] < 0, 1, -1)
    return out


def guess_explorations(points: np.ndarray, met: np.ndarray, other: np.ndarray, moves: int,
                       window: int) -> np.ndarray:
    """Bandit guesses from released points: did the learner's centre move away from the
    round's exploration direction by more than the pair's mean loss explains?

    A one-point-estimate learner (FKM, Garber-Kretzu, the projection-free and PFTAL
    bandit learners) releases ``x_t = y_t + delta u_t`` around a centre ``y_t`` it does
    not release, and moves its centre by about ``-c f_t(x_t) u_t``: the higher the loss
    it met, the further away from the direction it explored. With ``m_-`` and ``m_+``
    the means of the ``window`` released points before and after round ``t`` (the
    centre before and after, up to exploration), ``c_t = <m_+ - m_-, x_t - m_->`` reads
    that move; its part explained by the pair's mean loss ``(a_t + b_t) / 2`` at
    ``x_t`` is removed by a least-squares line over the game's rounds, leaving ``r_t``.
    ``r_t < 0`` (moved further away than the mean loss explains) guesses the pair's
    loss that is higher at ``x_t``; ``r_t > 0`` the lower. Only the ``moves`` rounds
    with the largest ``|r_t (a_t - b_t)|`` are guessed (ties: the earlier round).

    Everything read is the released points, the public loss at them and the pair as an
    unordered pair (swapping ``met`` and ``other`` negates every guess and leaves the
    fitted line unchanged): a post-processing of the output, so the audit's bound holds
    for any learner, whatever the rule's power on it.

    Args:
        points: ``(T, N)`` the released points.
        met, other: ``(T,)`` the losses of each round's pair at ``x_t`` (any order: the
            guess ``+1`` names ``met``, ``-1`` names ``other``).
        moves: Rounds guessed at most (``>= 1``).
        window: Points averaged on each side (``>= 1``).

    Returns:
        ``(T,)`` int8: ``+1`` (guess ``met``), ``-1`` (guess ``other``) or ``0``.

    Raises:
        ValueError: Arrays of mismatched shapes, ``moves < 1`` or ``window < 1``.
    """
    moves, window = check_int("moves", moves, 1), check_int("window", window, 1)
    points = np.asarray(points, np.float64)
    a, b = np.asarray(met, np.float64), np.asarray(other, np.float64)
    if points.ndim != 2 or a.shape != (points.shape[0],) or b.shape != a.shape:
        raise ValueError(f"points {points.shape} (T, N), met {a.shape} and other {b.shape} "
                         "(T,) must have the same number of rounds")
    horizon = points.shape[0]
    out = np.zeros(horizon, np.int8)
    t = np.arange(window, horizon - window)
    diff = a[t] - b[t]
    used = diff != 0
    if used.sum() < 3:
        return out
    sums = np.cumsum(np.vstack([np.zeros(points.shape[1]), points]), axis=0)
    before = (sums[t] - sums[t - window]) / window
    after = (sums[t + 1 + window] - sums[t + 1]) / window
    c = np.einsum("tk,tk->t", after - before, points[t] - before)
    mid = (a[t] + b[t]) / 2
    line = np.vstack([mid[used], np.ones(int(used.sum()))]).T
    coef = np.linalg.lstsq(line, c[used], rcond=None)[0]
    r = c - (coef[0] * mid + coef[1])
    weight = np.where(used, np.abs(r * diff), 0.0)
    chosen = _strongest(weight, moves)
    out[t[chosen]] = np.where((r[chosen] < 0) == (diff[chosen] > 0), 1, -1)
    return out


#: :func:`guess_hidden`'s defaults: the arm inferred for a round must have a span
#: ``HIDDEN_MARGIN`` times any other arm's, and a guess needs one side of it
#: ``HIDDEN_RATIO`` times the other.
HIDDEN_MARGIN, HIDDEN_RATIO = 1.5, 2.0
#: A contextual game's canaries: one round in ``HIDDEN_STRIDE``, at an offset drawn
#: apart from the game (:func:`hidden_rounds`).
HIDDEN_STRIDE = 6


def hidden_rounds(horizon: int, rng: np.random.Generator,
                  stride: int = HIDDEN_STRIDE) -> np.ndarray:
    """The canary rounds of a joint-DP audit: ``t % stride == offset`` (0-based), the
    offset uniform from ``rng`` (drawn apart from the game, so the set does not depend on
    the output). Guesses read the arms of the other rounds only (:func:`guess_hidden`).

    Returns:
        ``(horizon,)`` bool.
    """
    stride = check_int("stride", stride, 2)
    return np.arange(check_int("horizon", horizon, 0)) % stride == int(rng.integers(stride))


def _around(arms: np.ndarray, k: int, seen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(last, next)``, each ``(T, k)``: for each round ``t`` and arm ``a``, the last
    seen round ``s < t`` with ``arms[s] == a`` (``-1``: none) and the first seen ``s >
    t`` (``T``: none). Neither reads ``arms[s]`` for a round ``s`` not ``seen``."""
    horizon = arms.size
    t = np.arange(horizon)
    last, nxt = np.empty((horizon, k), np.int64), np.empty((horizon, k), np.int64)
    for a in range(k):
        mine = (arms == a) & seen
        upto = np.maximum.accumulate(np.where(mine, t, -1))  # the last at or before t
        last[:, a] = np.r_[-1, upto[:-1]]
        after = np.minimum.accumulate(np.where(mine, t, horizon)[::-1])[::-1]
        nxt[:, a] = np.r_[after[1:], horizon]
    return last, nxt


def guess_hidden(arms: np.ndarray, first: np.ndarray, second: np.ndarray, n_arms: int,
                 hidden: np.ndarray | None = None, margin: float = HIDDEN_MARGIN,
                 ratio: float = HIDDEN_RATIO) -> tuple[np.ndarray, np.ndarray]:
    """Joint-DP guesses: which loss of each canary round's pair the learner met, read
    from the arms of the rounds that are NOT canaries.

    Joint DP protects, for each round ``t``, the actions of the rounds ``s != t``, not
    round ``t``'s own; so a guess about round ``t`` may not read ``arms[t]``. That is not
    enough for the one-run bound, which needs ONE output that is DP with respect to
    every canary: guesses about two canaries ``t, u`` that read ``arms[u]`` and
    ``arms[t]`` respectively can each decode the other's loss (a jointly DP learner can
    hide round ``t``'s loss with a key it plays in round ``t``) and be right or wrong
    together, a heavier tail than the bound allows. With ``hidden`` the canary rounds
    ``H``, every guess reads only ``arms`` outside ``H``: a post-processing of the actions
    of the rounds ``s != t`` for every ``t`` in ``H``, so one output, ``(epsilon,
    delta)``-DP in each canary's coin when the learner is jointly DP.

    For each hidden round ``t`` and arm ``a``, ``last_a`` and ``next_a`` are the arm's
    plays outside ``H`` just before and just after ``t`` (``-1`` and ``T`` when there
    are none) and its span
    ``next_a - last_a``. The arm of round ``t`` is inferred as the arm of the largest span
    ``a^_t`` (ties: the lowest index): hiding round ``t`` leaves a hole exactly in the
    span of the arm played there. The round is guessed when that span is at least
    ``margin`` times every other arm's and the pair differs on ``a^_t``: the guess is the
    pair's loss higher on ``a^_t`` when the arm's return after ``t``, ``next - t``, is
    at least ``ratio`` times its absence before, ``t - last`` (the learner turned away
    from the arm: an optimistic learner after a high loss), the lower one when the
    absence before is at least ``ratio`` times the return.

    Everything read is the arms outside ``H`` and the pair as an unordered pair (swapping
    ``first`` and ``second`` negates every guess), so the audit's bound holds for a
    jointly DP learner whatever its canary rounds' own actions reveal;
    ``tests/audit/test_contextual_audit.py`` checks that changing the arms of the hidden
    rounds never changes a guess.

    Args:
        arms: ``(T,)`` the arms played.
        first, second: ``(T, K)`` the two loss vectors of each round's pair.
        n_arms: ``K``.
        hidden: ``(T,)`` bool, the canary rounds (the only ones guessed, and never read);
            ``None``: every round, each guess then reading the other rounds (valid for
            one guess at a time, not for the one-run bound over many).
        margin: How much the inferred arm's span must exceed every other's (``>= 1``).
        ratio: How much one side must exceed the other for a guess (``>= 1``).

    Returns:
        ``(guess, inferred)``: ``(T,)`` int8, ``+1`` (guess ``first``), ``-1`` (guess
        ``second``) or ``0``; ``(T,)`` the inferred arms.

    Raises:
        ValueError: Mismatched shapes, arms outside ``0..K-1``, or ``margin`` / ``ratio``
            below 1.
    """
    k = check_int("n_arms", n_arms, 1)
    margin = check_real("margin", margin, 1.0)
    ratio = check_real("ratio", ratio, 1.0)
    arms = np.asarray(arms, np.int64)
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    horizon = arms.size
    if arms.ndim != 1 or first.shape != (horizon, k) or second.shape != first.shape:
        raise ValueError(f"arms {arms.shape} (T,), first {first.shape} and second "
                         f"{second.shape} must be (T,) and (T, {k})")
    if horizon and (arms.min() < 0 or arms.max() >= k):
        raise ValueError(f"arms range over [{arms.min()}, {arms.max()}], expected 0..{k - 1}")
    hide = np.ones(horizon, bool) if hidden is None else np.asarray(hidden, bool)
    if hide.shape != (horizon,):
        raise ValueError(f"hidden of shape {hide.shape} rejected: expected ({horizon},)")
    out = np.zeros(horizon, np.int8)
    if horizon == 0:
        return out, np.zeros(0, np.int64)
    if hidden is None:  # each round alone: every other round seen
        last, nxt = _around(arms, k, np.ones(horizon, bool))
    else:
        last, nxt = _around(arms, k, ~hide)
    t = np.arange(horizon)
    span = nxt - last
    inferred = np.argmax(span, axis=1)
    top = span[t, inferred]
    runner = np.max(np.where(np.arange(k)[None, :] == inferred[:, None], -1, span), axis=1) \
        if k > 1 else np.zeros(horizon, np.int64)
    sure = hide & (top >= margin * runner)
    diff = first[t, inferred] - second[t, inferred]
    after, before = nxt[t, inferred] - t, t - last[t, inferred]
    turned = sure & (diff != 0) & (after >= ratio * before)
    stayed = sure & (diff != 0) & (before >= ratio * after) & ~turned
    # +1 names the pair's loss higher on the inferred arm; in first/second terms:
    out[turned] = np.where(diff[turned] > 0, 1, -1)
    out[stayed] = np.where(diff[stayed] > 0, -1, 1)
    return out, inferred


#: :func:`decode_hidden`'s defaults: the most hypotheses kept, and the rounds at the
#: start of a game whose action the replay does not check (a contextual learner plays
#: round 1 before it has seen a context: a draw of its own randomness).
REPLAY_BEAM, REPLAY_FREE = 64, 1


def decode_hidden(replay: Any, arms: np.ndarray, known: np.ndarray, first: np.ndarray,
                  second: np.ndarray, hidden: np.ndarray,
                  feedback: Callable[[int, float], np.ndarray], beam: int = REPLAY_BEAM,
                  free: int = REPLAY_FREE) -> tuple[np.ndarray, int]:
    """Joint-DP guesses by replay: which loss of each canary round's pair the learner
    met, decoded by a copy of the learner built apart from the game and fed the rounds
    the game is known to have had.

    The replay is a fresh learner (built and reset with a seed the game never saw). A
    *hypothesis* is a copy of it and the losses it was fed in the canary rounds so far;
    the decoder plays the rounds in order. In a round that is not a canary every
    hypothesis is asked for its action (``act()``), dropped when it is not the arm played
    (from round ``free`` on), and fed the arm played with that round's loss (``known``).
    In a canary round ``t`` every hypothesis plays ITS OWN arm ``a`` (``arms[t]`` is never
    read) and is split in two, fed the smaller and the larger of ``first[t, a]`` and
    ``second[t, a]`` in that order (one copy when they are equal; before round ``free``,
    one per arm and loss, with no guess), and the first ``beam`` hypotheses are kept.
    At the end, round ``t`` is guessed when at least one hypothesis survives and every
    survivor was fed a loss of the pair that differs on its arm, the same member of the
    pair: ``+1`` when that loss is ``first``'s, ``-1`` when ``second``'s.

    For a learner whose choices are a function of its inputs (a noise-free twin) the
    hypothesis of the losses played is never dropped (unless the beam drops it), so every
    guess is right; for a learner with randomness of its own the replay's draws are not
    the game's and the hypotheses die out (no guesses).

    Everything read is the arms of the rounds that are not canaries (the output), their
    losses and each round's context (data drawn independently of the canaries' coins:
    conditioned on), the canary pairs as unordered pairs (the order of the split and the
    beam's cut use the smaller loss first, never which member is ``first``: swapping
    ``first`` and ``second`` in a canary round negates that round's guess and changes
    nothing else) and the replay, whose randomness is independent of the game. So the
    guesses are ``A(output, data, pairs, independent randomness)`` and the one-run bound
    holds for a jointly DP learner (``docs/algorithms/one-run-audit.md``, "Decoding by
    replay"); ``tests/audit/test_contextual_audit.py`` checks by brute force that no guess
    reads a canary's arm or its played loss.

    Args:
        replay: A fresh learner with ``act()`` and ``update(action, feedback)`` that
            :func:`copy.deepcopy` copies (an in-process learner), reset with a seed drawn
            apart from the game.
        arms: ``(T,)`` the arms played (read only outside ``hidden``).
        known: ``(T, K)`` the loss vectors played (read only outside ``hidden``).
        first, second: ``(T, K)`` the two loss vectors of each round's pair (read only in
            ``hidden``, as an unordered pair).
        hidden: ``(T,)`` bool, the canary rounds.
        feedback: ``feedback(t, loss)``: round ``t``'s feedback to the learner when the
            arm it played met ``loss`` (a contextual game: ``[loss, c_t, c_{t+1}]``).
        beam: The most hypotheses kept (``>= 1``).
        free: The first rounds, whose action is not checked (``>= 0``).

    Returns:
        ``(guess, survivors)``: ``(T,)`` int8, ``+1`` (guess ``first``), ``-1`` (guess
        ``second``) or ``0``; the hypotheses alive at the end.

    Raises:
        ValueError: Mismatched shapes, or a bad ``beam`` / ``free``.
    """
    beam = check_int("beam", beam, 1)
    free = check_int("free", free, 0)
    arms = np.asarray(arms, np.int64)
    known = np.asarray(known, np.float64)
    first, second = np.asarray(first, np.float64), np.asarray(second, np.float64)
    hide = np.asarray(hidden, bool)
    horizon = arms.size
    if (arms.ndim != 1 or known.ndim != 2 or known.shape[0] != horizon
            or first.shape != known.shape or second.shape != known.shape
            or hide.shape != (horizon,)):
        raise ValueError(f"arms {arms.shape}, known {known.shape}, first {first.shape}, "
                         f"second {second.shape} and hidden {hide.shape} must be (T,), "
                         "(T, K), (T, K), (T, K) and (T,)")
    k = known.shape[1]
    out = np.zeros(horizon, np.int8)
    # a hypothesis: (learner, its canary losses as a linked list (t, sign, rest))
    hypotheses: list[tuple[Any, Any]] = [(replay, None)]
    for t in range(horizon):
        grown: list[tuple[Any, Any]] = []
        if not hide[t]:
            arm = int(arms[t])
            for learner, memo in hypotheses:
                if int(learner.act()) != arm and t >= free:
                    continue
                learner.update(arm, feedback(t, float(known[t, arm])))
                grown.append((learner, memo))
        else:
            for learner, memo in hypotheses:
                choices = range(k) if t < free else (int(learner.act()),)
                for arm in choices:
                    lo, hi = sorted((float(first[t, arm]), float(second[t, arm])))
                    for value in ((lo,) if lo == hi else (lo, hi)):
                        mine = copy.deepcopy(learner)
                        mine.update(arm, feedback(t, value))
                        sign = 0 if lo == hi or t < free else (
                            1 if first[t, arm] == value else -1)
                        grown.append((mine, (t, sign, memo)))
        hypotheses = grown[:beam]
        if not hypotheses:
            return out, 0
    votes = np.zeros((horizon, 3), np.int64)  # per round: survivors fed -1, none, +1
    for _, memo in hypotheses:
        while memo is not None:
            t, sign, memo = memo
            votes[t, sign + 1] += 1
    n = len(hypotheses)
    out[hide & (votes[:, 2] == n)] = 1
    out[hide & (votes[:, 0] == n)] = -1
    return out, n


# --------------------------------------------------------------------------
# playing the games
# --------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AuditGame:
    """One audit game: an env, its options and a horizon, as a graded game of them.

    Attributes:
        env_id: A registered env id.
        env_kwargs: Its options (as the graded games pass them, ``feedback`` included
            when a bandit learner plays a full-information env).
        horizon: ``T``.
    """

    env_id: str
    env_kwargs: Mapping[str, Any]
    horizon: int


@dataclasses.dataclass(frozen=True)
class PlayedGame:
    """What an audit keeps of a game: the actions played, the losses, the law's mean.

    Attributes:
        arms: ``(T,)`` arm indices (a game of points: the arm of largest weight of each
            released point, the lowest index on ties).
        thetas: ``(T, P)`` the parameters played.
        mean: ``(P,)`` the adversary's mean; ``(T, P)`` in a contextual game, each
            round's mean losses ``mu_a(c_t)`` given its context.
        low, high: The parameter box.
        points: ``(T, N)`` the released points of a game of points (a ``Box`` action,
            e.g. the simplex of ``DPFullInfo-Experts-v0`` or a polytope, or a
            ``MultiBinary`` subset as a 0/1 vector; ``None``: a game of arms).
        values: The loss family's ``values(theta, xs)`` when the guesses read loss values
            (:func:`guess_moves` with ``values``): a game of points whose loss is not
            linear in a parameter of the points' dimension; ``None``: the linear form.
        bandit: Whether the learner saw bandit feedback (its points are then guessed by
            :func:`guess_explorations`, a full-information learner's by
            :func:`guess_moves`).
        contextual: A contextual game, audited as joint DP (:func:`guess_hidden`, which
            never reads a round's own arm).
        observations: A contextual game: ``(T, 1 + 2 d)`` each round's feedback as the
            learner saw it (``[loss of the arm played, context played, next context]``),
            for :func:`decode_hidden`'s replay, which reads the loss only in the rounds
            that are not canaries; ``None`` otherwise.
    """

    arms: np.ndarray
    thetas: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    points: np.ndarray | None = None
    values: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    bandit: bool = False
    contextual: bool = False
    observations: np.ndarray | None = None


#: ``make_learner(problem, action_space, seed) -> learner``: built with ``seed`` (and
#: reset with it by the audit); ``finish()`` and ``close()`` are called if it has them.
LearnerFactory = Callable[[Problem, gym.Space, int], Any]


def play_audit_game(make_learner: LearnerFactory, game: AuditGame, env_seed: int,
                    agent_seed: int) -> PlayedGame:
    """Play one game as a graded game is played, recording the losses and the arms.

    ``build_env(env_id, horizon=T, **env_kwargs)``; the learner built by
    ``make_learner(problem, space, agent_seed)`` and reset with ``agent_seed``; the env
    reset with ``env_seed``; the rounds through :func:`~dp_online_envs.loop.run_rounds`;
    then ``finish()`` (an isolated learner's end-of-game summary). The learner is closed
    on success and on error alike. The actions kept are the arms (a ``Discrete`` action
    space) or the released points (a one-dimensional ``Box``, e.g. the simplex of
    ``DPFullInfo-Experts-v0`` or a polytope, or a ``MultiBinary`` subset), copied as
    released; the guesses read points through the linear form when the loss is linear
    in a parameter of the points' dimension, else through the loss's values.

    Raises:
        ValueError: An env whose rounds the audit cannot pair (:func:`check_canary_env`)
            or whose actions are neither arms nor points (a ``Box`` or ``MultiBinary``
            vector).
        Exception: Whatever the learner raises (e.g.
            :class:`~dp_online_envs.lab.isolation.AgentFailure`) propagates.
    """
    from dp_online_envs.envs import build_env

    env = build_env(game.env_id, horizon=game.horizon, record_losses=True,
                    **{k: v for k, v in game.env_kwargs.items() if k != "horizon"})
    try:
        base = env.unwrapped
        check_canary_env(base.adversary, base.loss)
        space = base.loss.param_space
        action_space = env.action_space
        full = (isinstance(action_space, (gym.spaces.Box, gym.spaces.MultiBinary))
                and len(action_space.shape) == 1)
        if not (full or isinstance(action_space, gym.spaces.Discrete)):
            raise ValueError(f"the one-run audit guesses from arms (a Discrete action "
                             f"space) or from points (a one-dimensional Box or "
                             f"MultiBinary), got {action_space}")
        linear = (isinstance(base.loss, LinearLoss) and len(space.shape) == 1
                  and action_space.shape == space.shape)
        contextual = is_contextual_canary(base.adversary)
        problem = env.get_wrapper_attr("problem")
        learner = make_learner(problem, action_space, agent_seed)
        try:
            actions: list[Any] = []
            means: list[np.ndarray] = []  # a contextual game: each round's law
            seen: list[np.ndarray] = []  # a contextual game: each round's feedback

            def record(t: int, action: Any, feedback: Any) -> None:
                actions.append(np.array(action, np.float64) if full else int(action))
                if contextual:
                    means.append(np.array(base.adversary.last_round().means, np.float64))
                    seen.append(np.array(feedback, np.float64).reshape(-1))

            learner.reset(agent_seed)
            env.reset(seed=env_seed)
            run_rounds(env, learner, record)
            finish = getattr(learner, "finish", None)
            if callable(finish):
                finish()
        finally:
            close = getattr(learner, "close", None)
            if callable(close):
                close()
        points = np.stack(actions) if full else None
        arms = np.argmax(points, axis=1) if full else np.asarray(actions, np.int64)
        mean = (np.stack(means) if contextual
                else np.asarray(base.adversary.mean_param, np.float64))
        return PlayedGame(arms.astype(np.int64), base.played_losses().thetas.copy(), mean,
                          np.asarray(space.low, np.float64), np.asarray(space.high, np.float64),
                          points, None if (linear or not full) else base.loss.values,
                          problem.feedback == "bandit", contextual,
                          np.stack(seen) if contextual and seen else None)
    finally:
        env.close()


@dataclasses.dataclass(frozen=True)
class OneRunFinding:
    """The outcome of :func:`audit_one_run`.

    Attributes:
        claimed_epsilon, claimed_delta: The claim tested.
        eps_lb: Lower bound on the learner's epsilon, valid with probability
            ``>= confidence`` (0: no evidence).
        refuted: ``eps_lb > claimed_epsilon``.
        confidence: Confidence of ``eps_lb``.
        games: Audit games played.
        horizons: The horizons they were played at.
        canaries: Rounds paired (every round of every game; in a contextual game the
            canary rounds of :func:`hidden_rounds`).
        differing: Rounds a guess can use: whose pair differs on the arm played (a game
            of points: whose pair differs, but the last round of a game).
        guesses: Guesses made (``r``) by the rule whose bound is reported (with arms four
            rules are scored, each at ``1 - (1 - confidence) / 4``, and the largest bound
            is reported: a union bound keeps it valid at ``confidence``).
        correct: Its right guesses (``v``).
        rule: What was guessed, each rule with its counts (one line).
        twin: The same audit of the learner's noise-free twin (built with its noise cut
            :data:`TWIN_FACTOR`-fold, claiming the same), as :meth:`twin_summary`
            values; ``None``: not played (a learner that exposes no noise scale, or a
            refuted claim, which needs no power).
        rr_epsilon: The reference of known privacy on the same guessed rounds: the
            smallest ``epsilon'`` such that randomized response at ``epsilon'`` (tightly
            ``epsilon'``-DP) on each round one of the rules guessed is refuted with
            probability at least 1/2 (:func:`rr_power` at the rule's confidence, the
            smallest over the rules; ``inf``: not even a guesser always right is refuted
            with so few guesses).
    """

    claimed_epsilon: float
    claimed_delta: float
    eps_lb: float
    refuted: bool
    confidence: float
    games: int
    horizons: tuple[int, ...]
    canaries: int
    differing: int
    guesses: int
    correct: int
    rule: str
    twin: Mapping[str, Any] | None = None
    rr_epsilon: float = math.inf

    @property
    def has_power(self) -> bool:
        """Whether the audit could have refuted this learner had it lied: its guesses
        are enough for some mechanism to be refuted (``rr_epsilon`` finite), and its
        noise-free twin, when played, was refuted."""
        return math.isfinite(self.rr_epsilon) and (self.twin is None
                                                    or bool(self.twin["refuted"]))

    @property
    def verdict(self) -> str:
        """``"refuted"``, ``"not refuted"`` or ``"no audit power"``."""
        return ("refuted" if self.refuted else "not refuted" if self.has_power
                else "no audit power")

    def power_text(self) -> str:
        """The audit's power on this learner, in one line."""
        parts = []
        if self.twin is not None:
            t = self.twin
            parts.append(f"its noise-free twin (noise cut {t['factor']:g}x) "
                         f"{'refuted' if t['refuted'] else 'NOT refuted'}, eps_lb = "
                         f"{t['eps_lb']:.3g} ({t['correct']} of {t['guesses']} right)")
        else:
            parts.append("no noise-free twin played")
        parts.append(f"randomized response on its {self.guesses} guessed rounds refuted "
                     f"from eps' = {self.rr_epsilon:.3g}" if math.isfinite(self.rr_epsilon)
                     else f"{self.guesses} guesses: no mechanism, however leaky, would be "
                          "refuted")
        return "; ".join(parts)

    def with_twin(self, twin: OneRunFinding, factor: float) -> OneRunFinding:
        """This finding with the audit of its noise-free twin (``factor``-fold noise
        cut, same games and claim) attached."""
        return dataclasses.replace(self, twin=twin.twin_summary(factor))

    def twin_summary(self, factor: float) -> dict[str, Any]:
        """What a twin's finding contributes: ``correct``, ``eps_lb``, ``factor``,
        ``guesses``, ``refuted`` (in that order, as JSON read back sorts them)."""
        return {"correct": int(self.correct), "eps_lb": float(self.eps_lb),
                "factor": float(factor), "guesses": int(self.guesses),
                "refuted": bool(self.refuted)}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (``verdict`` and ``power`` added)."""
        d = dataclasses.asdict(self)
        d["horizons"] = list(self.horizons)
        d["twin"] = None if self.twin is None else dict(self.twin)
        d["verdict"] = self.verdict
        d["power"] = self.power_text()
        d["summary"] = str(self)
        return d

    def __str__(self) -> str:
        verdict = {"refuted": "REFUTED",
                   "not refuted": f"not refuted (evidence, not proof; power: "
                                  f"{self.power_text()})",
                   "no audit power": f"NO AUDIT POWER ({self.power_text()})"}[self.verdict]
        return (f"one-run audit of ({self.claimed_epsilon:g}, {self.claimed_delta:g})-DP on "
                f"{self.games} full games (T = {', '.join(map(str, self.horizons))}): "
                f"{self.correct} of {self.guesses} guesses right among {self.differing} "
                f"informative of {self.canaries} canary rounds -> eps_lb = "
                f"{self.eps_lb:.4g} at {100 * self.confidence:g}% confidence -> {verdict}")


#: The noise cut of a learner's noise-free twin: built at ``TWIN_FACTOR`` times its
#: epsilon (a Laplace or Gaussian learner's noise scale ``TWIN_FACTOR``-fold smaller).
TWIN_FACTOR = 1e4


def rr_power(guesses: int, epsilon: float, *, confidence: float = 0.95) -> float:
    """The reference of known privacy on ``guesses`` guessed rounds: the smallest
    ``epsilon'`` whose randomized response (each guess right with probability ``q' =
    e^eps' / (1 + e^eps')``, independently: tightly ``epsilon'``-DP) is refuted as
    ``epsilon``-DP with probability at least 1/2.

    With ``v*`` the fewest right guesses out of ``guesses`` whose
    :func:`one_run_eps_lower_bound` exceeds ``epsilon``, the refutation probability is
    ``P[Binomial(r, q') >= v*] = I_{q'}(v*, r - v* + 1)``, increasing in ``q'``: it is
    1/2 at the median of that beta law, computed exactly.

    Returns:
        ``epsilon'`` (``inf`` when not even ``r`` right guesses refute ``epsilon``).

    Raises:
        ValueError: Invalid counts, epsilon or confidence.
    """
    r = check_int("guesses", guesses, 0)
    eps = check_epsilon(epsilon)
    check_confidence(confidence)
    if r == 0 or one_run_eps_lower_bound(r, r, confidence=confidence) <= eps:
        return math.inf
    lo, hi = 0, r  # the bound is increasing in v: bisect for v*
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if one_run_eps_lower_bound(r, mid, confidence=confidence) > eps:
            hi = mid
        else:
            lo = mid
    q = float(stats.beta.ppf(0.5, hi, r - hi + 1))
    return math.log(q / (1.0 - q)) if q < 1.0 else math.inf


def game_seeds(seed: int, games: int) -> list[tuple[int, int, np.random.SeedSequence]]:
    """``(env_seed, agent_seed, partner seeds)`` of each audit game (63-bit seeds, as
    graded games have)."""
    out = []
    for ss in np.random.SeedSequence(seed).spawn(games):
        env_ss, agent_ss, partner_ss = ss.spawn(3)
        out.append((seed_of(env_ss), seed_of(agent_ss), partner_ss))
    return out


def audit_one_run(make_learner: LearnerFactory, games: Sequence[AuditGame],
                  claim: tuple[float, float],
                  settings: OneRunSettings = DEFAULT_ONE_RUN, *,
                  workers: int = 1, replay: bool = False) -> OneRunFinding:
    """Test a learner's claim ``(epsilon, delta)`` on ``settings.games`` full games of each
    of ``games`` (module docstring).

    Args:
        make_learner: ``make_learner(problem, action_space, seed) -> learner``, called
            once per game (a fresh session each: one build, one reset).
        games: The env x horizon settings played (each ``settings.games`` times, all of
            them interleaved in one seeded order).
        claim: The declared ``(epsilon, delta)``.
        settings: :class:`OneRunSettings`.
        workers: Games played at once (threads, each driving its own learner; the
            finding does not depend on it).
        replay: Contextual games: also decode the canaries by replay
            (:func:`decode_hidden`, the ``"replay"`` rule, scored beside ``"hidden"``,
            each at ``1 - (1 - confidence) / 2``), the replay built by ``make_learner``
            with a seed drawn apart from the game. Only for learners that
            :func:`copy.deepcopy` copies (in process, not a sandboxed session).

    Returns:
        The :class:`OneRunFinding`.

    Raises:
        ValueError: An invalid claim or setting, no games, or an env the audit cannot
            pair (:func:`check_canary_env`).
        Exception: Whatever the learner raises propagates.
    """
    epsilon, delta = check_epsilon(claim[0]), check_delta(claim[1])
    replay = check_bool("replay", replay)
    if not isinstance(settings, OneRunSettings):
        raise TypeError(f"settings must be a OneRunSettings, got {settings!r}")
    if not games:
        raise ValueError("games is empty: the audit needs at least one env and horizon")
    workers = check_int("workers", workers, 1)
    plan = [g for _ in range(settings.games) for g in games]

    def one(game: AuditGame, seeds: tuple[int, int, np.random.SeedSequence]) -> PlayedGame:
        return play_audit_game(make_learner, game, seeds[0], seeds[1])

    seeds = game_seeds(settings.seed, len(plan))
    if workers == 1:
        played = [one(g, s) for g, s in zip(plan, seeds)]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            played = list(pool.map(one, plan, seeds))
    rngs = [np.random.default_rng(s[2]) for s in seeds]
    partners = [partner_losses(p.thetas, p.mean, p.low, p.high, rng)
                for p, rng in zip(played, rngs)]
    scheduled: list[np.ndarray | None] = [None] * len(plan)
    calibrated: list[np.ndarray | None] = [None] * len(plan)
    for game in games:  # the schedule of each env and horizon, from its games' arms, and
        # the calibrated guesses, from its games' arms and unordered pairs
        mine = [i for i, g in enumerate(plan)
                if g is game and played[i].points is None and not played[i].contextual]
        for i, mask in zip(mine, scheduled_plays([played[i].arms for i in mine])):
            scheduled[i] = mask
        for i, guess in zip(mine, guess_calibrated([arm_pairs(played[i], partners[i])
                                                    for i in mine])):
            calibrated[i] = guess
    totals: dict[str, list[int]] = {}
    canaries = differing = 0
    for g, p, rng, pair, sched, cal in zip(plan, played, rngs, partners, scheduled,
                                            calibrated):
        found, informative, paired = score_game(
            p, settings, g.horizon, rng, sched, partners=pair, calibrated=cal,
            replay=_replayer(make_learner, g) if replay and p.contextual else None)
        canaries += paired
        differing += informative
        for name, (r, v) in found.items():
            total = totals.setdefault(name, [0, 0])
            total[0] += r
            total[1] += v
    # one bound per rule, each at 1 - alpha / (number of rules): the largest is valid at
    # the stated confidence (a union bound over the rules)
    level = 1.0 - (1.0 - settings.confidence) / len(totals)
    bounds = {name: one_run_eps_lower_bound(r, v, confidence=level, delta=delta,
                                            canaries=canaries)
              for name, (r, v) in totals.items()}
    best = max(totals, key=lambda name: (bounds[name], totals[name][0]))
    guesses, correct = totals[best]
    eps_lb = bounds[best]
    horizons = tuple(sorted({g.horizon for g in games}))
    rules = []
    if "drop" in totals:
        gaps = sorted({settings.gap(g.horizon) for g, p in zip(plan, played)
                       if p.points is None})
        rules.append(f"drop ({totals['drop'][1]} of {totals['drop'][0]} right): guess the "
                     f"higher loss in a round whose arm's last {settings.history} gaps "
                     f"average g >= {'/'.join(map(str, gaps))} rounds and whose arm is next "
                     f"played >= {settings.ratio:g} g rounds after (or never)")
        rules.append(f"leave ({totals['leave'][1]} of {totals['leave'][0]} right): guess "
                     f"the higher loss in a round whose arm was played the {settings.streak} "
                     "plays before and is left for the next one and the "
                     f"{settings.streak} plays after (both rules skip the plays that follow "
                     "a schedule common to the games)")
        rules.append(f"returns ({totals['returns'][1]} of {totals['returns'][0]} right): "
                     f"in a run of at most {settings.streak} plays of one arm, guess the "
                     "lower loss when the learner comes back to the arm sooner than after "
                     "three quarters of such runs, the higher when later than after three "
                     "quarters")
        rules.append(f"calibrated ({totals['calibrated'][1]} of {totals['calibrated'][0]} "
                     f"right): in a run of at most {CALIBRATED_LONGEST} plays whose pair "
                     "differs in one round, guess the lower loss there when the learner "
                     f"comes back sooner than all but {100 * CALIBRATED_TAIL:g}% of the runs "
                     "of known losses that match it with the higher (the same length and "
                     "earlier plays of the arm, in the games of its horizon), the higher when "
                     "later than all but as many that match it with the lower")
    if "moves" in totals:
        rules.append(f"points ({totals['moves'][1]} of {totals['moves'][0]} right): in "
                     f"each game's {settings.moves} rounds where the released point moved "
                     "most along the pair's difference, guess the loss of the pair it moved "
                     "away from")
    if "explorations" in totals:
        rules.append(f"bandit points ({totals['explorations'][1]} of "
                     f"{totals['explorations'][0]} right): in each game's {settings.moves} "
                     f"rounds where the centre (means of {settings.window} points either "
                     "side) moved furthest from the explored direction beyond what the "
                     "pair's mean loss explains, guess the loss higher (further) or lower "
                     "there")
    if "hidden" in totals:
        rules.append(f"joint DP ({totals['hidden'][1]} of {totals['hidden'][0]} right): "
                     f"canaries one round in {HIDDEN_STRIDE} whose arms no guess reads; infer "
                     "a canary's arm as the arm whose other plays around it leave the widest "
                     f"hole (>= {HIDDEN_MARGIN:g}x every other arm's); "
                     "guess the pair's loss higher on it when the arm returns "
                     f">= {HIDDEN_RATIO:g}x later than it had been away, the lower when "
                     f"it had been away >= {HIDDEN_RATIO:g}x longer")
    if "replay" in totals:
        rules.append(f"replay ({totals['replay'][1]} of {totals['replay'][0]} right): the "
                     "same canaries decoded by a copy of the learner built apart from the "
                     "game, fed the other rounds' losses and split on each canary's pair "
                     f"(at most {REPLAY_BEAM} hypotheses, those that do not play the arms "
                     "of the other rounds dropped); a canary is guessed when every survivor "
                     "met the same member of its pair")
    if len(totals) > 1:
        rules.append(f"the bound is the largest of the {len(totals)} rules', each at "
                     f"{100 * level:.4g}% confidence (the {best} rule's here)")
    rule = "; ".join(rules)
    rr = min(rr_power(r, epsilon, confidence=level) for r, _ in totals.values())
    return OneRunFinding(epsilon, delta, float(eps_lb), bool(eps_lb > epsilon),
                         float(settings.confidence), len(plan), horizons, canaries,
                         differing, guesses, correct, rule, rr_epsilon=rr)


def _replayer(make_learner: LearnerFactory, game: AuditGame) -> Callable[[int], Any]:
    """``replay(seed)``: a fresh learner of ``game``'s problem built by ``make_learner``
    with ``seed`` and reset with it (:func:`decode_hidden`)."""
    def replay(seed: int) -> Any:
        from dp_online_envs.envs import build_env

        env = build_env(game.env_id, horizon=game.horizon,
                        **{k: v for k, v in game.env_kwargs.items() if k != "horizon"})
        try:
            learner = make_learner(env.get_wrapper_attr("problem"), env.action_space, seed)
        finally:
            env.close()
        learner.reset(seed)
        return learner
    return replay


def arm_pairs(played: PlayedGame, partners: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(arms, lower, upper)`` of a game of arms: the smaller and larger loss of each
    round's pair on the arm played (the unordered pair; :func:`guess_calibrated`)."""
    rows = np.arange(played.arms.size)
    mine, other = played.thetas[rows, played.arms], partners[rows, played.arms]
    return played.arms, np.minimum(mine, other), np.maximum(mine, other)


def score_game(played: PlayedGame, settings: OneRunSettings, horizon: int,
               rng: np.random.Generator, scheduled: np.ndarray | None = None, *,
               partners: np.ndarray | None = None, calibrated: np.ndarray | None = None,
               replay: Callable[[int], Any] | None = None
               ) -> tuple[dict[str, tuple[int, int]], int, int]:
    """``({rule: (guesses, right guesses)}, informative rounds, canaries)`` of one played
    game (the canaries: every round, but in a contextual game).

    ``partners``: the rounds' partners when drawn already (from ``rng``, which then goes
    on to what follows the draw); ``None``: drawn here from ``rng``.

    With arms, four rules: ``"drop"`` (:func:`guess_rounds`), ``"leave"``
    (:func:`guess_leaves`), both on the plays outside ``scheduled``
    (:func:`scheduled_plays`), ``"returns"`` (:func:`guess_returns`, runs of at most
    ``settings.streak`` plays, on every play: the return after a scheduled play, such as
    an episode learner's first pull of each arm, is the learner's choice) and
    ``"calibrated"`` (``calibrated``, the game's guesses by :func:`guess_calibrated` with
    the references of every game of its env and horizon; ``None``: this game's own
    references); the informative rounds are those whose pair differs on the arm
    played. With points, ``"moves"`` (:func:`guess_moves`; informative: the
    pair differs, but the last round, which has no next point) or, for a bandit
    learner, ``"explorations"`` (:func:`guess_explorations`). A contextual game (joint
    DP): ``"hidden"`` (:func:`guess_hidden` on the canary rounds of
    :func:`hidden_rounds`, whose arms no guess reads; informative: the canaries whose
    pair differs on the arm played, a count the guesses do not use), and with ``replay``
    (``replay(seed)``: a fresh learner built and reset with ``seed``, drawn from ``rng``
    after the canaries) ``"replay"`` (:func:`decode_hidden` on the same canaries)."""
    if partners is None:
        partners = partner_losses(played.thetas, played.mean, played.low, played.high, rng)
    if played.contextual:  # joint DP: no guess reads a canary round's arm
        rows = np.arange(played.arms.size)
        hidden = hidden_rounds(played.arms.size, rng)
        guess, _ = guess_hidden(played.arms, played.thetas, partners,
                                played.thetas.shape[1], hidden)
        differ = played.thetas[rows, played.arms] != partners[rows, played.arms]
        found = {"hidden": (int(np.count_nonzero(guess)), int((guess == 1).sum()))}
        if replay is not None:
            seen = played.observations
            if seen is None:
                raise ValueError("a replay needs the game's observations (PlayedGame."
                                 "observations, recorded by play_audit_game)")

            def feedback(t: int, loss: float) -> np.ndarray:
                fed = seen[t].copy()
                fed[0] = loss  # the contextual feedback: [loss, context, next context]
                return fed

            learner = replay(int(rng.integers(2**63 - 1)))
            try:
                known = np.where(hidden[:, None], np.nan, played.thetas)  # not read
                decoded, _ = decode_hidden(learner, played.arms, known, played.thetas,
                                           partners, hidden, feedback)
            finally:
                close = getattr(learner, "close", None)
                if callable(close):
                    close()
            found["replay"] = (int(np.count_nonzero(decoded)), int((decoded == 1).sum()))
        return (found, int(np.count_nonzero(differ & hidden)), int(hidden.sum()))
    if played.points is not None and played.bandit:
        values = played.values or (lambda theta, xs: xs @ theta)
        met, other = (np.array([float(values(th[t], played.points[t:t + 1])[0])
                                for t in range(played.points.shape[0])])
                      for th in (played.thetas, partners))
        guess = guess_explorations(played.points, met, other, settings.moves,
                                   settings.window)
        return ({"explorations": (int(np.count_nonzero(guess)), int((guess == 1).sum()))},
                int(np.count_nonzero(met != other)), played.arms.size)
    if played.points is not None:
        first, second = played.thetas, partners
        if played.values is None:  # the linear form, on the pair scaled to a unit box
            width = played.high - played.low
            scale = np.divide(1.0, width, out=np.zeros_like(width), where=width > 0)
            first, second = first * scale, second * scale
        guess = guess_moves(played.points, first, second, settings.moves, played.values)
        differ = np.any(played.thetas != partners, axis=1)[:-1]
        return ({"moves": (int(np.count_nonzero(guess)), int((guess == 1).sum()))},
                int(differ.sum()), played.arms.size)
    rows = np.arange(played.arms.size)
    mine, other = played.thetas[rows, played.arms], partners[rows, played.arms]
    differ = mine != other
    free = None if scheduled is None else ~np.asarray(scheduled, bool)
    high = mine > other  # the learner met the higher loss of the pair
    out = {}
    for name, guessed in (
            ("drop", guess_rounds(played.arms, differ, settings.gap(horizon), settings.ratio,
                                  settings.history, free)),
            ("leave", guess_leaves(played.arms, differ, settings.streak, free))):
        out[name] = (int(guessed.sum()), int((guessed & high).sum()))
    if calibrated is None:
        calibrated = guess_calibrated([arm_pairs(played, partners)])[0]
    low = mine < other
    # "returns" counts every play: a schedule's own plays (an episode learner's first pull
    # of each arm, in arm order in every game) are runs whose return the learner chose
    for name, signed in (("returns", guess_returns(played.arms, differ, settings.streak, 0.25)),
                         ("calibrated", calibrated)):  # +1: the higher loss, -1: the lower
        out[name] = (int(np.count_nonzero(signed)),
                     int(((signed == 1) & high).sum() + ((signed == -1) & low).sum()))
    return out, int(differ.sum()), played.arms.size


# --------------------------------------------------------------------------
# power
# --------------------------------------------------------------------------
def one_run_power(reference: str, games: Sequence[AuditGame], claim: tuple[float, float],
                  settings: OneRunSettings = DEFAULT_ONE_RUN,
                  factors: Sequence[float] = (3.0, 10.0, 30.0, 100.0), *,
                  options: Mapping[str, Any] | None = None, resolver: Any = None) -> Any:
    """:func:`audit_one_run` on noise cuts of a reference learner, in process.

    For each ``c`` in ``factors`` the reference is built as ``cls(problem, epsilon=
    epsilon * c, delta=delta, seed=s, **options)`` for each game (a ``c``-fold smaller
    noise scale for a Laplace learner) while the claim stays ``epsilon``.

    Returns:
        An :class:`~dp_online_envs.lab.audit.power.AuditPower`, its reference named by
        its label (``private-bandit(base=exp3)``: the options are part of it).

    Raises:
        ValueError: An invalid factor or claim; an unknown reference.
    """
    from dp_online_envs.lab.audit.power import AuditPower
    from dp_online_envs.lab.experiments.game import agent_label
    from dp_online_envs.lab.experiments.resolver import resolve_agent

    epsilon, delta = check_epsilon(claim[0]), check_delta(claim[1])
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Sequence) or not factors:
        raise ValueError(f"factors={factors!r}, expected a non-empty sequence of reals >= 1")
    cuts = tuple(sorted({check_real("factor", f, 1.0) for f in factors}))
    cls = resolve_agent(reference, resolver)
    opts = dict(options or {})
    findings = []
    for c in cuts:
        def make(problem: Problem, space: gym.Space, seed: int, c: float = c) -> Any:
            return cls(problem, epsilon=epsilon * c, delta=delta, seed=seed, **opts)

        findings.append(audit_one_run(make, games, (epsilon, delta), settings))
    refuted = tuple(f.refuted for f in findings)
    return AuditPower(reference=agent_label(str(reference), opts), factors=cuts,
                      refuted=refuted,
                      smallest_refuted=next((c for c, r in zip(cuts, refuted) if r), None),
                      eps_lbs=tuple(f.eps_lb for f in findings), claimed_epsilon=epsilon)
