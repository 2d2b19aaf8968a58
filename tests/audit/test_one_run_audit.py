"""The one-run audit: its bound (exact binomial sums), its canary pairs, its guesses
(brute force), and its games (played as graded games are)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.envs import build_env
from dp_online_envs.lab.audit.one_run import (
    AuditGame,
    OneRunSettings,
    audit_one_run,
    guess_calibrated,
    guess_explorations,
    guess_leaves,
    guess_moves,
    guess_returns,
    guess_rounds,
    one_run_eps_lower_bound,
    one_run_p_value,
    one_run_power,
    partner_losses,
    play_audit_game,
    rr_power,
    scheduled_plays,
)
from dp_online_envs.loop import run_rounds


def paper_p_value(m, r, v, eps, delta):
    """Steinke, Nasr and Jagielski (2023)'s p-value, as their appendix writes it (a loop)."""
    q = 1 / (1 + math.exp(-eps))
    beta = stats.binom.sf(v - 1, r, q)
    alpha = total = 0.0
    for i in range(1, v + 1):
        total += stats.binom.pmf(v - i, r, q)
        alpha = max(alpha, total / i)
    return min(beta + alpha * delta * 2 * m, 1.0)


@pytest.mark.parametrize("r, v, eps, delta, m", [
    (50, 45, 1.0, 0.0, 100), (50, 45, 1.0, 1e-4, 100), (200, 150, 0.5, 1e-5, 5000),
    (10, 10, 2.0, 1e-3, 10), (30, 0, 1.0, 1e-3, 30)])
def test_p_value_is_the_papers(r, v, eps, delta, m):
    assert one_run_p_value(r, v, eps, delta=delta, canaries=m) == pytest.approx(
        paper_p_value(m, r, v, eps, delta), rel=1e-12, abs=1e-300)


def test_the_bound_is_where_the_tail_reaches_alpha():
    for r, v in ((20, 20), (115, 105), (60, 50)):
        eps = one_run_eps_lower_bound(r, v, confidence=0.95)
        assert one_run_p_value(r, v, eps) == pytest.approx(0.05, rel=1e-6)
    # all right: P[Binomial(r, q) >= r] = q^r = alpha
    q = 0.05 ** (1 / 25)
    assert one_run_eps_lower_bound(25, 25) == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
    # with delta the root of the paper's p-value
    eps = one_run_eps_lower_bound(100, 95, delta=1e-5, canaries=1000)
    assert one_run_p_value(100, 95, eps, delta=1e-5, canaries=1000) == pytest.approx(0.05,
                                                                                    rel=1e-6)
    assert eps < one_run_eps_lower_bound(100, 95)
    assert one_run_eps_lower_bound(0, 0) == 0.0 and one_run_eps_lower_bound(10, 5) == 0.0


@pytest.mark.parametrize("r", [10, 40, 150])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_randomized_response_at_eps_is_refuted_at_most_alpha_of_the_time(r, eps):
    """An eps-DP guesser at its best makes Binomial(r, e^eps / (1 + e^eps)) right guesses:
    the exact probability that the bound exceeds eps is at most 1 - confidence."""
    q = 1 / (1 + math.exp(-eps))
    false = sum(stats.binom.pmf(v, r, q) for v in range(r + 1)
                if one_run_eps_lower_bound(r, v, confidence=0.95) > eps)
    assert false <= 0.05 + 1e-12
    if r >= 40:  # with 10 guesses, all right refutes no more than eps = 1.05
        assert false > 0.005  # and the bound is not vacuous


def test_partners_have_the_law_of_the_round_and_differ_as_often_as_possible():
    rng = np.random.default_rng(3)
    mean = np.array([0.2, 0.5, 0.7, 0.0])
    low, high = np.zeros(4), np.ones(4)
    thetas = (rng.random((200_000, 4)) < mean).astype(float)
    partners = partner_losses(thetas, mean, low, high, np.random.default_rng(4))
    assert set(np.unique(partners)) <= {0.0, 1.0}
    n = len(thetas)
    se = 4 / math.sqrt(n)
    assert np.all(np.abs(partners.mean(axis=0) - mean) < se)  # the same marginal
    differ = (partners != thetas).mean(axis=0)
    assert np.all(np.abs(differ - 2 * np.minimum(mean, 1 - mean)) < se)  # the most possible
    # exchangeable: (high, low) as often as (low, high)
    hl = ((thetas == 1) & (partners == 0)).mean(axis=0)
    lh = ((thetas == 0) & (partners == 1)).mean(axis=0)
    assert np.all(np.abs(hl - lh) < se)


def brute_guesses(arms, differ, min_gap, ratio, history, free=None):
    out = np.zeros(len(arms), bool)
    free = np.ones(len(arms), bool) if free is None else free
    for t, a in enumerate(arms):
        before = [s for s in range(t) if arms[s] == a and free[s]]
        after = [s for s in range(t + 1, len(arms)) if arms[s] == a and free[s]]
        if not free[t] or not differ[t] or len(before) < history:
            continue
        g = (t - before[-history]) / history
        nxt = after[0] - t if after else len(arms) - t
        out[t] = g >= min_gap and nxt >= ratio * g
    return out


@pytest.mark.parametrize("history", [1, 3])
def test_guesses_match_brute_force(history):
    rng = np.random.default_rng(5)
    arms = rng.choice(4, size=600, p=[0.85, 0.1, 0.04, 0.01])
    differ = rng.random(600) < 0.7
    fast = guess_rounds(arms, differ, 5, 3.0, history)
    assert fast.any()
    assert np.array_equal(fast, brute_guesses(arms, differ, 5, 3.0, history))
    free = rng.random(600) < 0.8  # scheduled plays neither guessed nor counted
    fast = guess_rounds(arms, differ, 5, 3.0, history, free)
    assert fast.any() and not fast[~free].any()
    assert np.array_equal(fast, brute_guesses(arms, differ, 5, 3.0, history, free))


def brute_leaves(arms, differ, streak, free):
    out = np.zeros(len(arms), bool)
    counted = [t for t in range(len(arms)) if free[t]]
    for i, t in enumerate(counted):
        before, after = counted[max(i - streak, 0):i], counted[i + 1:i + 1 + streak]
        out[t] = (differ[t] and len(before) == streak and len(after) == streak
                  and all(arms[s] == arms[t] for s in before) and after[0] == t + 1
                  and all(arms[s] != arms[t] for s in after))
    return out


@pytest.mark.parametrize("streak", [1, 2, 3])
def test_leave_guesses_match_brute_force(streak):
    rng = np.random.default_rng(streak)
    arms = np.repeat(rng.integers(0, 4, 300), rng.integers(1, 5, 300))[:800]
    differ = rng.random(arms.size) < 0.7
    for free in (np.ones(arms.size, bool), rng.random(arms.size) < 0.85):
        fast = guess_leaves(arms, differ, streak, free)
        assert fast.any() and not fast[~free].any()
        assert np.array_equal(fast, brute_leaves(arms, differ, streak, free))
    every = guess_leaves(arms, differ, streak)  # no mask: every play counted
    assert np.array_equal(every, guess_leaves(arms, differ, streak, np.ones(arms.size, bool)))


def test_a_schedule_common_to_the_games_is_found_from_their_arms():
    """Brute force: a round is scheduled when one arm is played there in at least
    max(3, 0.9 G) of the G games, and a game's play is scheduled when it is that arm;
    a forced round-robin shows in every game, a learner's own plays do not."""
    rng = np.random.default_rng(0)
    games = [rng.integers(0, 10, 640) for _ in range(16)]
    for g in games:
        g[63::64] = np.arange(10)  # every 64th round: arm 0, 1, ..., 9
    games[3][127] = 5  # one game off the schedule there
    masks = scheduled_plays(games)
    for t in range(640):
        column = [g[t] for g in games]
        top = max(set(column), key=column.count)
        common = column.count(top) >= max(3, 0.9 * 16)
        for g, m in zip(games, masks):
            assert m[t] == (common and g[t] == top)
    assert all(m[63::64].sum() >= 9 for m in masks) and not masks[3][127]
    assert sum(m.sum() for m in masks) == 16 * 10 - 1
    assert not scheduled_plays(games[:2])[0].any()  # two games: never (at least 3)


class Recorder(agents.Agent):
    """Uniform arms; records how it is built, reset and fed."""

    name = "test-recorder"
    feedback = "bandit"
    log: list = []

    def setup(self):
        Recorder.log.append(("built", self.seed, repr(self.problem)))

    def reset(self, seed=None):
        super().reset(seed)
        Recorder.log.append(("reset", seed))

    def act(self):
        return int(self.rng.integers(self.problem.domain.dim))

    def update(self, action, feedback):
        Recorder.log.append(("feedback", float(feedback[0])))
        self.t += 1


def test_an_audit_game_is_a_graded_game_of_the_env():
    """Built once with its seed, reset once with it (after the build's own reset), the
    graded problem, and the feedback the env itself draws with the game's env seed."""
    game = AuditGame("DPBandit-MAB-v0", {}, 50)
    Recorder.log = []
    played = play_audit_game(lambda p, s, seed: Recorder(p, seed=seed), game, 123, 456)
    log = Recorder.log
    graded = build_env("DPBandit-MAB-v0", horizon=50)
    assert log[0] == ("built", 456, repr(graded.get_wrapper_attr("problem")))
    assert log[1:3] == [("reset", 456), ("reset", 456)]
    Recorder.log = []
    learner = Recorder(graded.get_wrapper_attr("problem"), seed=456)
    learner.reset(456)
    graded.reset(seed=123)
    run_rounds(graded, learner)
    assert [e for e in log if e[0] == "feedback"] == [
        e for e in Recorder.log if e[0] == "feedback"]
    assert played.thetas.shape == (50, 10) and played.arms.shape == (50,)


def noise_free_and_private(noise_free, private, env_id, horizon, games):
    """``(games, settings, noise_free maker, private maker)`` of an audit at ``(1, 0)``:
    one game of ``env_id`` at ``horizon`` played ``games`` times from seed 1, the learner
    ``noise_free`` without privacy and ``private`` at epsilon 1."""

    def plain(problem, space, seed):
        return agents.make(noise_free, problem, seed=seed)

    def at_one(problem, space, seed):
        return agents.make(private, problem, epsilon=1.0, seed=seed)

    return ([AuditGame(env_id, {}, horizon)], OneRunSettings(games=games, seed=1), plain,
            at_one)


def test_noise_free_exp3_is_refuted_and_private_exp2_is_not():
    games, settings, exp3, private = noise_free_and_private(
        "exp3", "private-exp2", "DPBandit-MAB-v0", 4096, games=16)
    cheat = audit_one_run(exp3, games, (1.0, 0.0), settings)
    assert cheat.refuted and cheat.eps_lb > 1.0 and cheat.games == 16
    assert cheat.canaries == 16 * 4096 and 0 < cheat.correct <= cheat.guesses
    honest = audit_one_run(private, games, (1.0, 0.0), settings)
    assert not honest.refuted
    again = audit_one_run(exp3, games, (1.0, 0.0), settings, workers=2)
    assert again == cheat  # threads do not change the finding
    assert "REFUTED" in str(cheat) and cheat.to_dict()["horizons"] == [4096]


def test_envs_the_audit_cannot_pair_and_bad_settings_are_refused():
    with pytest.raises(ValueError, match="needs i.i.d. two-point losses"):
        play_audit_game(lambda p, s, seed: None, AuditGame("DPFullInfo-Sphere-v1", {}, 10),
                        1, 2)
    # subsets are points (0/1 vectors) whose loss is not linear: read through its values
    played = play_audit_game(lambda p, s, seed: agents.make("bandit-submod-pftal", p,
                                                            epsilon=1.0, seed=seed),
                             AuditGame("DPBandit-Submodular-v2", {"adversary": "stochastic"},
                                       12), 1, 2)
    assert played.points.shape == (12, 8) and played.thetas.shape == (12, 12)
    assert played.values is not None and played.bandit
    for kwargs, match in (({"games": 0}, "games=0"), ({"ratio": 1.0}, "ratio=1.0"),
                          ({"min_gap": 0}, "min_gap=0"), ({"history": 0}, "history=0"),
                          ({"moves": 0}, "moves=0"), ({"window": 0}, "window=0"), ({"confidence": 1.0}, "confidence")):
        with pytest.raises(ValueError, match=match):
            OneRunSettings(**kwargs)
    assert OneRunSettings().gap(16384) == 128 and OneRunSettings(min_gap=7).gap(16384) == 7
    with pytest.raises(ValueError, match="games is empty"):
        audit_one_run(lambda p, s, seed: None, [], (1.0, 0.0))


# ---------------------------------------------------------------- games of points
def brute_moves(points, first, second, moves):
    """The move guesses by a loop: each round's move along the pair's difference, then the
    largest ``moves`` of them (earlier rounds first on ties)."""
    horizon = len(points)
    s = [float(np.dot(points[t + 1] - points[t], first[t] - second[t])) if t + 1 < horizon
         else 0.0 for t in range(horizon)]
    ranked = sorted((t for t in range(horizon) if s[t] != 0), key=lambda t: (-abs(s[t]), t))
    out = np.zeros(horizon, np.int8)
    for t in ranked[:moves]:
        out[t] = 1 if s[t] < 0 else -1
    return out


def test_move_guesses_match_brute_force_and_read_the_pair_unordered():
    rng = np.random.default_rng(8)
    points = rng.dirichlet(np.ones(4), size=300)
    points[100:140] = points[100]  # rounds without a move are never guessed
    first = (rng.random((300, 4)) < 0.5).astype(float)
    second = np.where(rng.random((300, 4)) < 0.4, 1 - first, first)
    for moves in (1, 25, 1000):
        fast = guess_moves(points, first, second, moves)
        assert np.array_equal(fast, brute_moves(points, first, second, moves))
        # the pair is unordered: swapping its sides guesses the same loss
        assert np.array_equal(guess_moves(points, second, first, moves), -fast)
    assert np.count_nonzero(guess_moves(points, first, second, 25)) == 25
    still = guess_moves(points, first, second, 1000)
    assert not still[100:139].any() and still[99] != 0 and still[139] != 0
    assert guess_moves(points, first, second, 1000)[-1] == 0  # no next point
    with pytest.raises(ValueError, match="same"):
        guess_moves(points, first[:-1], second, 5)


def test_hedges_moves_are_guessed_right_on_every_differing_round():
    """Noise-free Hedge moves weight away from every coordinate whose loss was high (it
    moves at all when the round's loss is not constant): whatever the pair, the guess is
    the loss it met."""
    rng = np.random.default_rng(9)
    eta, k, horizon = 0.3, 5, 200
    thetas = (rng.random((horizon, k)) < 0.5).astype(float)
    partners = (rng.random((horizon, k)) < 0.5).astype(float)
    cum = np.vstack([np.zeros(k), np.cumsum(thetas, axis=0)])[:-1]
    points = np.exp(-eta * cum) / np.exp(-eta * cum).sum(axis=1, keepdims=True)
    moved = np.any(thetas != partners, axis=1) & (np.ptp(thetas, axis=1) > 0)
    moved[-1] = False
    assert 100 < moved.sum() < horizon - 1
    # as many guesses as such rounds: they are those rounds (a constant loss moves the
    # point by rounding only), and every one is right
    guess = guess_moves(points, thetas, partners, int(moved.sum()))
    assert np.array_equal(guess != 0, moved) and np.all(guess[moved] == 1)


def test_an_audit_game_of_points_keeps_the_released_points():
    """On DPFullInfo-Experts-v0 the audit keeps the simplex points as released (copies,
    even when the learner reuses its array) and their arms of largest weight."""

    class Reuser(Recorder):
        name = "test-reuser"
        feedback = "full"

        def setup(self):
            self.x = np.full(self.problem.dim, 1.0 / self.problem.dim)

        def act(self):
            self.x[:] = self.rng.dirichlet(np.ones(self.problem.dim))
            return self.x  # the same array every round

        def update(self, action, feedback):
            self.t += 1

    seen = []

    def make(problem, space, seed):
        learner = Reuser(problem, seed=seed)
        original = learner.act
        learner.act = lambda: (seen.append(original().copy()), learner.x)[1]
        return learner

    played = play_audit_game(make, AuditGame("DPFullInfo-Experts-v0", {}, 30), 5, 6)
    assert played.points.shape == (30, 10) and np.array_equal(played.points, np.stack(seen))
    assert np.array_equal(played.arms, np.argmax(np.stack(seen), axis=1))


def test_noise_free_ftrl_is_refuted_on_experts_and_private_ftrl_is_not():
    """Hedge is private-ftrl with its noise off (bit for bit): claiming epsilon = 1 it is
    refuted; private-ftrl at its calibration is not; its noise cuts measure the power."""
    games, settings, hedge, private = noise_free_and_private(
        "hedge", "private-ftrl", "DPFullInfo-Experts-v0", 1024, games=2)
    liar = audit_one_run(hedge, games, (1.0, 0.0), settings)
    assert liar.refuted and liar.guesses == liar.correct == 2 * 64
    assert liar.canaries == 2 * 1024 and "moved most" in liar.rule
    honest = audit_one_run(private, games, (1.0, 0.0), settings)
    assert not honest.refuted and honest.guesses == 2 * 64
    assert "moved most" in honest.rule and "arm's last" not in honest.rule
    power = one_run_power("private-ftrl", games, (1.0, 0.0), settings, factors=(10.0, 1000.0))
    assert power.refuted == (False, True) and power.smallest_refuted == 1000.0


def test_exploration_guesses_read_a_one_point_learner_and_ignore_the_order():
    """A centre moved by -c f_t(x_t) u_t (an FKM step, no noise) is guessed right far
    more often than by chance; swapping the pair negates every guess."""
    rng = np.random.default_rng(4)
    horizon, dim = 400, 3
    u = rng.choice([-1.0, 1.0], size=(horizon, dim))
    a = rng.choice([0.0, 1.0], size=horizon)  # the loss met at x_t
    b = rng.choice([0.0, 1.0], size=horizon)  # the pair's other loss
    centre = np.zeros(dim)
    points = np.empty((horizon, dim))
    for t in range(horizon):
        points[t] = centre + u[t]
        centre = centre - 0.5 * a[t] * u[t]
    guess = guess_explorations(points, a, b, moves=50, window=8)
    assert np.count_nonzero(guess) == 50 and np.mean(guess[guess != 0] == 1) >= 0.7  # 0.76; chance 0.5
    assert np.array_equal(guess_explorations(points, b, a, 50, 8), -guess)
    assert not guess_explorations(points, a, a, 50, 8).any()  # equal pairs: no guess
    with pytest.raises(ValueError, match="same number of rounds"):
        guess_explorations(points, a[:-1], b, 5, 1)


@pytest.mark.parametrize("r, eps", [(5, 1.0), (20, 1.0), (64, 0.1), (200, 1.0), (30, 10.0)])
def test_the_randomized_response_power_is_its_median_refutation(r, eps):
    """Brute force: ``v*``, the fewest right guesses refuting ``eps``, by scanning every
    ``v``; randomized response at ``rr_power`` is refuted (``v >= v*``) with
    probability exactly 1/2 by the exact binomial sum, less just below it. With too
    few guesses for even all right to refute, the power is infinite."""
    refuting = [v for v in range(r + 1) if one_run_eps_lower_bound(r, v) > eps]
    found = rr_power(r, eps)
    if not refuting:
        assert found == math.inf
        return
    v_star = refuting[0]
    assert refuting == list(range(v_star, r + 1))

    def refuted(e):
        q = 1 / (1 + math.exp(-e))
        return sum(stats.binom.pmf(v, r, q) for v in range(v_star, r + 1))

    assert math.isfinite(found) and found > eps
    assert refuted(found) == pytest.approx(0.5, abs=1e-9)
    assert refuted(found - 0.01) < 0.5
    assert rr_power(0, eps) == math.inf


def test_every_verdict_carries_the_power_and_an_unseen_learner_has_none():
    """A learner the audit makes no guess on is "no audit power" (it would not have
    seen a lie); a not refuted claim whose noise-free twin is not refuted is too; one
    whose twin is refuted is "not refuted" with the twin and the randomized response
    in its text; a refuted claim needs no power."""
    settings = OneRunSettings(games=2, seed=3)
    games = [AuditGame("DPBandit-MAB-v0", {}, 1024)]
    uniform = audit_one_run(lambda p, s, seed: OneArm(), games, (1.0, 0.0), settings)
    assert uniform.guesses == 0 and uniform.rr_epsilon == math.inf
    assert uniform.verdict == "no audit power" and "NO AUDIT POWER" in str(uniform)
    hedge = agents.agent_class("hedge")
    liar = audit_one_run(lambda p, s, seed: hedge(p, seed=seed),
                         [AuditGame("DPFullInfo-Experts-v0", {}, 1024)], (1.0, 0.0), settings)
    assert liar.refuted and liar.verdict == "refuted"
    blind = uniform.with_twin(uniform, 1e4)  # a twin the audit cannot see either
    assert blind.twin["refuted"] is False and blind.verdict == "no audit power"
    d = dataclasses.replace(uniform, guesses=40, correct=20, rr_epsilon=rr_power(40, 1.0))
    assert d.verdict == "not refuted"  # no twin played: the reference alone
    seen = d.with_twin(liar, 1e4)
    assert seen.verdict == "not refuted" and seen.has_power
    text = str(seen)
    assert "not refuted" in text and "noise-free twin (noise cut 10000x) refuted" in text
    assert "randomized response on its 40 guessed rounds refuted from eps'" in text
    out = seen.to_dict()
    assert out["verdict"] == "not refuted" and out["twin"]["refuted"] is True
    assert "power" in out and out["power"] == seen.power_text()


class OneArm:
    """Plays arm 0 whatever it sees: private, and never guessed."""

    def reset(self, seed):
        pass

    def act(self):
        return 0

    def update(self, action, feedback):
        pass


def brute_returns(arms, differ, longest, tail, free):
    counted = [t for t in range(len(arms)) if free[t]]
    runs = []  # (rounds, arm)
    for t in counted:
        if runs and arms[runs[-1][0][-1]] == arms[t]:
            runs[-1][0].append(t)
        else:
            runs.append(([t], arms[t]))
    back = []
    for i, (rounds, a) in enumerate(runs):
        later = [r[0][0] for r in runs[i + 1:] if r[1] == a]
        back.append((later[0] if later else len(arms)) - rounds[-1])
    out = np.zeros(len(arms), np.int8)
    for m in range(1, longest + 1):
        chosen = [i for i, (rounds, _) in enumerate(runs) if len(rounds) == m]
        if len(chosen) < 4:
            continue
        lo, hi = np.quantile([back[i] for i in chosen], [tail, 1 - tail])
        for i in chosen:
            sign = -1 if back[i] < lo else 1 if back[i] > hi else 0
            for t in runs[i][0]:
                out[t] = sign if differ[t] else 0
    return out


@pytest.mark.parametrize("longest, tail", [(1, 0.25), (2, 0.25), (3, 0.5)])
def test_return_guesses_match_brute_force(longest, tail):
    rng = np.random.default_rng(longest)
    arms = np.repeat(rng.integers(0, 5, 400), rng.integers(1, 4, 400))[:900]
    differ = rng.random(arms.size) < 0.7
    for free in (np.ones(arms.size, bool), rng.random(arms.size) < 0.85):
        fast = guess_returns(arms, differ, longest, tail, free)
        assert (fast == 1).any() and (fast == -1).any() and not fast[~free].any()
        assert np.array_equal(fast, brute_returns(arms, differ, longest, tail, free))
    with pytest.raises(ValueError, match="tail"):
        guess_returns(arms, differ, 1, 0.7)


def test_the_twin_is_played_on_the_same_games_only_when_the_claim_stands():
    """``audit_with_twin``: a refuted claim plays no twin; a claim not refuted plays the
    learner at 10^4 times its epsilon on the same games and seeds, its finding attached."""
    from dp_online_envs.lab.grading.audit_step import TWIN_FACTOR, audit_with_twin

    built = []

    def at(cls):
        def make_at(eps):
            def make(problem, space, seed):
                built.append((eps, seed))
                return cls(problem, seed=seed)
            return make
        return make_at

    settings = OneRunSettings(games=2, seed=3)
    games = [AuditGame("DPFullInfo-Experts-v0", {}, 256)]
    liar = audit_with_twin(at(agents.agent_class("hedge")), 1.0, games, (1.0, 0.0), settings)
    assert liar.refuted and liar.twin is None and {e for e, _ in built} == {1.0}
    built.clear()
    blind = audit_with_twin(at(lambda problem, seed: OneArmPoint(problem)), 1.0, games,
                            (1.0, 0.0), settings)
    assert [e for e, _ in built] == [1.0, 1.0, TWIN_FACTOR, TWIN_FACTOR]
    assert [s for e, s in built if e == 1.0] == [s for e, s in built if e == TWIN_FACTOR]
    assert blind.twin == {"correct": 0, "eps_lb": 0.0, "factor": TWIN_FACTOR, "guesses": 0,
                          "refuted": False}
    assert blind.verdict == "no audit power"


class OneArmPoint:
    """Releases the first vertex of the simplex whatever it sees."""

    def __init__(self, problem):
        self.x = np.eye(problem.domain.dim)[0]

    def reset(self, seed):
        pass

    def act(self):
        return self.x

    def update(self, action, feedback):
        pass


def brute_calibrated(games, longest, tail, least):
    """``guess_calibrated`` written from its docstring, one run at a time."""
    runs, refs = [], {}
    for g, (arms, lower, upper) in enumerate(games):
        horizon, t, played = len(arms), 0, {}
        while t < horizon:
            e = t
            while e < horizon and arms[e] == arms[t]:
                e += 1
            later = [s for s in range(e, horizon) if arms[s] == arms[t]]
            back = (later[0] if later else horizon) - (e - 1)
            prior = played.get(arms[t], 0)
            played[arms[t]] = prior + e - t
            differing = [s for s in range(t, e) if lower[s] != upper[s]]
            known = sum(lower[s] for s in range(t, e) if lower[s] == upper[s])
            if e - t <= longest and not differing:
                refs.setdefault((e - t, prior, known), []).append(back)
            if e - t <= longest and len(differing) == 1:
                s = differing[0]
                runs.append((g, s, e - t, prior, back, known + lower[s], known + upper[s]))
            t = e
    out = [np.zeros(len(arms), np.int8) for arms, _, _ in games]
    for g, s, m, prior, back, low_sum, high_sum in runs:
        high = refs.get((m, prior, high_sum), [])
        low = refs.get((m, prior, low_sum), [])
        sooner = len(high) >= least and sum(b <= back for b in high) <= tail * len(high)
        later = len(low) >= least and sum(b >= back for b in low) <= tail * len(low)
        if sooner and not later:
            out[g][s] = -1
        elif later and not sooner:
            out[g][s] = 1
    return out


def calibrated_games(seed, n_games=12, horizon=300, k=5):
    """Games of short runs whose arm comes back later the higher the run's losses were
    (an episode learner's signature, with noise), two-point pairs that agree in about
    half the rounds."""
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(n_games):
        agree = rng.random(horizon) < 0.5
        value = rng.integers(0, 2, horizon).astype(float)
        lower, upper = np.where(agree, value, 0.0), np.where(agree, value, 1.0)
        met = np.where(rng.random(horizon) < 0.5, lower, upper)
        arms, free, t = np.zeros(horizon, np.int64), np.zeros(k), 0
        while t < horizon:
            a = int(np.argmin(free + rng.random(k) * 1e-3))
            m = min(int(rng.integers(1, 4)), horizon - t)
            arms[t:t + m] = a
            t += m
            free[a] = t + 30 * met[t - m:t].mean() + rng.exponential(3)
        games.append((arms, lower, upper))
    return games


@pytest.mark.parametrize("longest, tail, least", [(2, 0.05, 4), (1, 0.25, 2), (3, 0.5, 1)])
def test_calibrated_guesses_match_brute_force(longest, tail, least):
    games = calibrated_games(longest)
    fast = guess_calibrated(games, longest, tail, least)
    assert fast and all(np.array_equal(f, b) for f, b in
                        zip(fast, brute_calibrated(games, longest, tail, least)))
    guessed = np.concatenate(fast)
    assert (guessed == 1).any() and (guessed == -1).any()
    # only rounds whose pair differs are guessed
    assert not np.concatenate([f[lo == up] for f, (_, lo, up) in zip(fast, games)]).any()
    # nothing to guess: one long run, or no game at all
    one_run = (np.zeros(50, np.int64), np.zeros(50), np.ones(50))
    assert [g.tolist() for g in guess_calibrated([one_run, one_run])] == [[0] * 50] * 2
    assert guess_calibrated([]) == []
    with pytest.raises(ValueError, match="rounds"):
        guess_calibrated([games[0], (games[1][0][:-1], games[1][1][:-1], games[1][2][:-1])])
    with pytest.raises(ValueError, match="tail"):
        guess_calibrated(games, tail=0.7)


def test_adap_ucbs_noise_cut_is_refuted_by_the_calibrated_rule_at_alpha_over_four():
    """At the leaderboard's audit settings (T = 1024 and 4096, 16 games each, claim 1;
    audit seed 0, the seed the rule was tuned on), AdaP-UCB with a third of its noise is
    refuted by the calibrated rule, its bound taken at 1 - 0.05 / 4 (four rules); at its
    own epsilon it is not."""
    cls = agents.agent_class("adap-ucb")
    games = [AuditGame("DPBandit-MAB-v0", {}, h) for h in (1024, 4096)]
    settings = OneRunSettings(games=16, seed=0)

    def at(eps):
        return lambda problem, space, seed: cls(problem, epsilon=eps, seed=seed)

    cut = audit_one_run(at(3.0), games, (1.0, 0.0), settings)
    assert cut.refuted and "(the calibrated rule's here)" in cut.rule
    assert "at 98.75% confidence" in cut.rule
    assert cut.eps_lb == one_run_eps_lower_bound(cut.guesses, cut.correct,
                                                 confidence=1 - 0.05 / 4)
    assert f"calibrated ({cut.correct} of {cut.guesses} right)" in cut.rule
    honest = audit_one_run(at(1.0), games, (1.0, 0.0), settings)
    assert not honest.refuted


def episode_rr_audit(rng, eps, n_games=16, horizon=60, k=4):
    """One audit's ``(guesses, right)`` of the calibrated rule on an exactly ``eps``-DP
    episode learner at the rule's best: runs of one round, the arm back 1 round after a
    low loss and 9 after a high one, the loss read exactly where the round's pair agrees
    (the coin ``S_t`` does not act there) and through randomized response at ``eps``
    where it differs (the learner is ``eps``-DP in ``S``: each coin moves one response)."""
    q = 1 / (1 + math.exp(-eps))
    games, high = [], []
    for _ in range(n_games):
        agree = rng.random((horizon, k)) < 0.5
        value = rng.integers(0, 2, (horizon, k)).astype(float)
        lower, upper = np.where(agree, value, 0.0), np.where(agree, value, 1.0)
        met = np.where(rng.random((horizon, k)) < 0.5, lower, upper)
        keep = rng.random(horizon) < q
        arms, free = np.zeros(horizon, np.int64), np.zeros(k)
        for t in range(horizon):
            a = int(np.argmin(free + rng.random(k) * 1e-3))
            arms[t] = a
            seen = met[t, a] if agree[t, a] or keep[t] else 1.0 - met[t, a]
            free[a] = t + 1 + 8 * seen
        rows = np.arange(horizon)
        games.append((arms, lower[rows, arms], upper[rows, arms]))
        high.append(met[rows, arms] > lower[rows, arms])
    out = guess_calibrated(games)
    return (sum(int(np.count_nonzero(g)) for g in out),
            sum(int(((g == 1) & h).sum() + ((g == -1) & ~h).sum()) for g, h in zip(out, high)))


def test_an_exactly_private_episode_learner_is_refuted_at_most_alpha_of_the_time():
    """100 audits of an exactly 1-DP episode learner that the calibrated rule reads at
    its best: the rule is right about as often as epsilon = 1 allows and no more, the
    claim epsilon = 1 is refuted in at most 5% of the audits (up to Monte Carlo error),
    and the false claim epsilon = 0.5 in many."""
    rng = np.random.default_rng(0)
    audits = [episode_rr_audit(rng, 1.0) for _ in range(100)]
    r, v = map(sum, zip(*audits))
    q = 1 / (1 + math.exp(-1.0))
    assert q - 0.05 < v / r <= q + 3 * math.sqrt(q * (1 - q) / r)
    assert sum(one_run_eps_lower_bound(g, c) > 1.0 for g, c in audits) <= 5 + 3 * 2.2
    assert sum(one_run_eps_lower_bound(g, c) > 0.5 for g, c in audits) >= 20
