"""The one-run audit of a contextual game, as joint DP: its canary pairs have the env's
law given each round's context, no guess reads its own round's arm, the noise-free twin
of ``jdp-linucb`` is refuted and the learner at its own noise is not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

import agents
import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.adversaries.contextual import (
    PhasedContexts,
    ReplayedExamples,
    StochasticLinearContexts,
)
from dp_online_envs.lab.audit.one_run import (
    HIDDEN_STRIDE,
    AuditGame,
    OneRunSettings,
    audit_one_run,
    check_canary_env,
    decode_hidden,
    guess_hidden,
    hidden_rounds,
    one_run_eps_lower_bound,
    partner_losses,
    play_audit_game,
    score_game,
)
from dp_online_envs.losses.contextual import ContextualLinearLoss

ENV = "DPBandit-ContextualLinear-v0"


def uniform(problem, space, seed):
    return agents.make("uniform", problem, seed=seed)


@pytest.mark.parametrize("adversary", ["stochastic-linear", "adversarial-context"])
def test_the_pairs_have_the_envs_law_given_each_context(adversary):
    """The played losses are Bernoulli(mu_a(c_t)) given the contexts, and so are the
    partners (chi-square over bins of the round's mean, every arm pooled); the pair
    differs as often as an antithetic coupling does, (1, 0) as often as (0, 1)."""
    played = play_audit_game(uniform, AuditGame(ENV, {"adversary": adversary}, 3000), 5, 6)
    assert played.contextual and played.mean.shape == played.thetas.shape == (3000, 5)
    partners = partner_losses(played.thetas, played.mean, played.low, played.high,
                              np.random.default_rng(7))
    p = played.mean.ravel()
    edges = np.quantile(p, np.linspace(0, 1, 11))
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, 9)
    for draws in (played.thetas.ravel(), partners.ravel()):
        ones = np.bincount(bins, weights=draws, minlength=10)
        expected = np.bincount(bins, weights=p, minlength=10)
        var = np.bincount(bins, weights=p * (1 - p), minlength=10)
        chi2 = float(np.sum((ones - expected) ** 2 / var))
        assert stats.chi2.sf(chi2, 10) > 1e-3, chi2
    differ = partners.ravel() != played.thetas.ravel()
    both = 2 * np.minimum(p, 1 - p)
    assert abs(differ.sum() - both.sum()) < 4 * np.sqrt(np.sum(both * (1 - both)))
    up = ((played.thetas.ravel() == 1) & differ).sum()
    assert abs(up - (differ.sum() - up)) < 4 * np.sqrt(differ.sum())


def test_per_round_partners_keep_each_rounds_marginal_exactly():
    """With a law per round (p = 0, 1/4, 1/2, 1), the partner is 1 with probability p:
    a round of mean 0 or 1 is never changed, the others within 4 standard errors."""
    rng = np.random.default_rng(1)
    mean = np.tile([0.0, 0.25, 0.5, 1.0], (100_000, 1))
    mean[::2] = mean[::2, ::-1]  # the law changes from round to round
    thetas = (rng.random(mean.shape) < mean).astype(float)
    partners = partner_losses(thetas, mean, np.zeros(4), np.ones(4), rng)
    exact = (mean == 0) | (mean == 1)
    assert np.array_equal(partners[exact], thetas[exact])
    for q in (0.25, 0.5):
        at = mean == q
        assert abs(partners[at].mean() - q) < 4 * np.sqrt(q * (1 - q) / at.sum())
    with pytest.raises(ValueError, match=r"mean of shape \(3,\) rejected"):
        partner_losses(thetas, np.zeros(3), np.zeros(4), np.ones(4), rng)


def test_no_guess_reads_a_canary_rounds_arm():
    """Brute force: no guess (and no canary's inferred arm) changes whatever arm was
    played in a canary round; without a canary set, round t's guess never reads round
    t's own arm."""
    rng = np.random.default_rng(2)
    for k in (2, 3, 5):
        horizon = 60
        arms = rng.integers(0, k, horizon)
        first = rng.integers(0, 2, (horizon, k)).astype(float)
        second = 1.0 - first
        hidden = hidden_rounds(horizon, rng, stride=3)
        guess, inferred = guess_hidden(arms, first, second, k, hidden, margin=1.0, ratio=1.0)
        assert np.count_nonzero(guess) > horizon // 9 and not np.any(guess[~hidden])
        alone, alone_inferred = guess_hidden(arms, first, second, k, margin=1.0, ratio=1.0)
        assert np.count_nonzero(alone) > horizon // 3
        for t in range(horizon):
            for b in range(k):
                other = arms.copy()
                other[t] = b
                g, i = guess_hidden(other, first, second, k, margin=1.0, ratio=1.0)
                assert g[t] == alone[t] and i[t] == alone_inferred[t], (k, t, b)
                if hidden[t]:
                    g, i = guess_hidden(other, first, second, k, hidden, margin=1.0,
                                        ratio=1.0)
                    assert np.array_equal(g, guess)
                    assert np.array_equal(i[hidden], inferred[hidden])
        # the pair is read unordered: swapping it negates every guess
        swapped, _ = guess_hidden(arms, second, first, k, hidden, margin=1.0, ratio=1.0)
        assert np.array_equal(swapped, -guess)


def test_the_canary_rounds_are_one_in_a_stride_at_a_random_offset():
    offsets = set()
    for seed in range(40):
        hidden = hidden_rounds(600, np.random.default_rng(seed))
        t = np.flatnonzero(hidden)
        assert t.size == 600 // HIDDEN_STRIDE and np.all(np.diff(t) == HIDDEN_STRIDE)
        offsets.add(int(t[0]))
    assert offsets == set(range(HIDDEN_STRIDE))


def test_hidden_guesses_match_a_loop():
    rng = np.random.default_rng(3)
    k, horizon = 4, 200
    arms = rng.integers(0, k, horizon)
    arms[50:80] = 1  # a long run: holes of every size
    first = rng.integers(0, 2, (horizon, k)).astype(float)
    second = rng.integers(0, 2, (horizon, k)).astype(float)
    hidden = hidden_rounds(horizon, rng, stride=2)
    guess, inferred = guess_hidden(arms, first, second, k, hidden)
    seen = [s for s in range(horizon) if not hidden[s]]
    for t in range(horizon):
        span = []
        for a in range(k):
            before = [s for s in seen if s < t and arms[s] == a]
            after = [s for s in seen if s > t and arms[s] == a]
            span.append(((before[-1] if before else -1), (after[0] if after else horizon)))
        widths = [n - last for last, n in span]
        a = int(np.argmax(widths))
        assert inferred[t] == a
        rest = max(w for b, w in enumerate(widths) if b != a)
        want = 0
        if hidden[t] and widths[a] >= 1.5 * rest and first[t, a] != second[t, a]:
            back, away = span[a][1] - t, t - span[a][0]
            higher = 1 if first[t, a] > second[t, a] else -1
            want = higher if back >= 2 * away else -higher if away >= 2 * back else 0
        assert guess[t] == want, t
    assert np.count_nonzero(guess) > 10


class Xor:
    """Blatant about its own rounds: in each pair of rounds (2j, 2j + 1) it plays a
    fresh uniform arm a, then a + (the loss it met) mod K. Where round 2j's loss vector
    is the same on every arm the second arm alone is uniform whatever the loss, so the
    other rounds' actions carry nothing of round 2j (exactly 0-jointly-DP there; not
    exactly elsewhere, a -> a + l_a need not be one to one); with round 2j's own arm the
    loss is read off exactly."""

    def __init__(self, problem, seed):
        self.k = problem.domain.dim
        self.reset(seed)

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self.t, self.arm = 0, 0

    def act(self):
        if self.t % 2 == 0:
            self.arm = int(self.rng.integers(self.k))
            return self.arm
        return (self.arm + self.loss) % self.k

    def update(self, action, feedback):
        self.loss = int(round(float(np.asarray(feedback).ravel()[0])))
        self.t += 1


def test_a_learner_that_leaks_only_its_own_rounds_action_is_not_refuted():
    """The cheat a rule reading arms[t] would 'catch': its other rounds' actions leak
    little of round t (nothing where the loss vector is the same on every arm), and the
    audit does not refute even epsilon = 0.05; reading round t's own arm would be right
    on every round it guesses."""
    games = [AuditGame(ENV, {}, 400)]
    settings = OneRunSettings(games=8, seed=0)
    finding = audit_one_run(lambda p, s, seed: Xor(p, seed), games, (0.05, 1e-5), settings)
    assert not finding.refuted and finding.guesses > 50, str(finding)
    played = play_audit_game(lambda p, s, seed: Xor(p, seed), games[0], 1, 2)
    t = np.arange(0, 400, 2)
    met = played.thetas[t, played.arms[t]]
    assert np.array_equal((played.arms[t + 1] - played.arms[t]) % 5, met)  # the leak


def test_contextual_envs_are_paired_and_others_still_refused():
    """The two contextual laws whose losses are Bernoulli given the context are paired;
    replayed examples (one-hot losses, not independent across arms) and a subclass
    (which could change the law) are refused."""
    loss = ContextualLinearLoss(3, context_dim=3)
    for adversary in (StochasticLinearContexts(), PhasedContexts()):
        check_canary_env(adversary, loss)

    class Tweaked(StochasticLinearContexts):
        pass

    data = ReplayedExamples(np.eye(2) * 0.5, np.array([0, 1]))
    for adversary, name in ((data, "ReplayedExamples"), (Tweaked(), "Tweaked")):
        with pytest.raises(ValueError, match=f"got {name} on ContextualLinearLoss"):
            check_canary_env(adversary, loss)


def jdp(**options):
    def make(problem, space, seed):
        return agents.make("jdp-linucb", problem, epsilon=0.01, delta=1e-5, seed=seed,
                           **options)
    return make


def test_the_noise_free_twin_is_refuted_and_jdp_linucb_is_not():
    """At (0.01, 1e-5), T = 1000, 12 games: the twin (add_noise=False) was refuted on
    audit seeds 0-5 (eps_lb 0.079 to 0.18; 224 to 254 guesses, 58% to 60% right), so
    seed 0 is not a lucky one. The learner at its own noise is not."""
    games, settings = [AuditGame(ENV, {}, 1000)], OneRunSettings(games=12, seed=0)
    twin = audit_one_run(jdp(add_noise=False), games, (0.01, 1e-5), settings)
    assert twin.refuted and twin.eps_lb > 0.01 and "joint DP" in twin.rule, str(twin)
    assert 1990 <= twin.canaries <= 2010
    honest = audit_one_run(jdp(), games, (0.01, 1e-5), settings)
    assert not honest.refuted and honest.guesses > 150, str(honest)


# --------------------------------------------------------------------------
# decoding by replay
# --------------------------------------------------------------------------
class Leader:
    """A learner whose choices are a function of its inputs: the arm of least loss sum,
    weighted by a fixed tilt per round (ties: the lowest arm)."""

    def __init__(self, k, tilt):
        self.k, self.tilt = k, tilt
        self.sums, self.t = np.zeros(k), 0

    def act(self):
        return int(np.argmin(self.sums + self.tilt[self.t]))

    def update(self, action, feedback):
        self.sums[int(action)] += float(np.asarray(feedback).ravel()[0])
        self.t += 1


def leader_game(seed, horizon=24, k=3, stride=4):
    """A game of :class:`Leader` on random 0/1 loss vectors with antithetic partners:
    ``(tilt, arms, played, partners, hidden)``."""
    rng = np.random.default_rng(seed)
    tilt = rng.random((horizon, k)) * 1.5
    played = rng.integers(0, 2, (horizon, k)).astype(float)
    partners = np.where(rng.random((horizon, k)) < 0.7, 1.0 - played, played)
    learner, arms = Leader(k, tilt), np.zeros(horizon, np.int64)
    for t in range(horizon):
        arms[t] = learner.act()
        learner.update(arms[t], [played[t, arms[t]]])
    hidden = np.arange(horizon) % stride == seed % stride
    return tilt, arms, played, partners, hidden


def loss_only(t, loss):
    return np.array([loss])


def decode(tilt, arms, known, first, second, hidden, beam=64):
    k = first.shape[1]
    return decode_hidden(Leader(k, tilt), arms, known, first, second, hidden, loss_only,
                         beam=beam, free=0)


def brute_force_decode(tilt, arms, played, partners, hidden):
    """Every assignment of the pair's members to the canaries, the learner replayed on
    each: round t is guessed when every assignment that plays the visible arms fed, in
    round t, the same member on an arm where the pair differs."""
    import itertools

    horizon, k = played.shape
    canaries = np.flatnonzero(hidden)
    agree = None
    for choice in itertools.product((0, 1), repeat=canaries.size):
        learner, met, ok = Leader(k, tilt), {}, True
        for t in range(horizon):
            a = learner.act()
            if hidden[t]:
                which = choice[list(canaries).index(t)]
                loss = (played, partners)[which][t, a]
                met[t] = (which if played[t, a] != partners[t, a] else None)
            elif a != arms[t]:
                ok = False
                break
            else:
                loss = played[t, a]
            learner.update(a, [loss])
        if not ok:
            continue
        agree = met if agree is None else {t: (m if m == agree[t] else None)
                                           for t, m in met.items()}
    out = np.zeros(horizon, np.int8)
    for t, m in (agree or {}).items():
        if m is not None:
            out[t] = 1 if m == 0 else -1
    return out


def test_the_replay_decoder_matches_a_brute_force_and_is_right_on_a_deterministic_learner():
    """With a beam that never binds the decoder guesses exactly the canaries on which
    every assignment consistent with the visible arms agrees; each guess is right (the
    learner is a function of its inputs). Its guesses are many: the test has teeth."""
    right = guessed = 0
    for seed in range(12):
        tilt, arms, played, partners, hidden = leader_game(seed)
        known = np.where(hidden[:, None], np.nan, played)
        guess, survivors = decode(tilt, arms, known, played, partners, hidden, beam=10**6)
        assert survivors >= 1
        assert np.array_equal(guess, brute_force_decode(tilt, arms, played, partners,
                                                        hidden)), seed
        right += int((guess == 1).sum())
        guessed += int(np.count_nonzero(guess))
    assert guessed == right and guessed >= 20, (right, guessed)


def test_the_replay_decoder_reads_no_canary_arm_nor_which_member_was_played():
    """Brute force, with a beam small enough to bind: whatever a canary's arm and its
    'played' loss vector, no guess changes; swapping a canary's pair negates that round's
    guess and changes nothing else (the split and the cut of the beam go by the smaller
    loss first, never by which member is the played one)."""
    cut = 0
    for seed in range(6):
        tilt, arms, played, partners, hidden = leader_game(seed, horizon=20, stride=3)
        known = np.where(hidden[:, None], np.nan, played)
        for beam in (2, 64):
            guess, survivors = decode(tilt, arms, known, played, partners, hidden, beam)
            cut += int(beam == 2 and not np.array_equal(
                guess, decode(tilt, arms, known, played, partners, hidden, 64)[0]))
            for t in np.flatnonzero(hidden):
                for b in range(3):
                    other = arms.copy()
                    other[t] = b
                    junk = known.copy()
                    junk[t] = b % 2
                    assert np.array_equal(decode(tilt, other, junk, played, partners,
                                                 hidden, beam)[0], guess), (seed, t, b)
                first, second = played.copy(), partners.copy()
                first[t], second[t] = partners[t], played[t]
                swapped, _ = decode(tilt, arms, known, first, second, hidden, beam)
                want = guess.copy()
                want[t] = -guess[t]
                assert np.array_equal(swapped, want), (seed, t, beam)
    assert cut > 0  # the beam of 2 binds somewhere, so its order is exercised


class KeyedLeak:
    """Blatant about its own rounds (as ``Xor``), with two arms: a fresh uniform key in
    even rounds, key + (the loss just met) mod 2 in odd rounds. On loss vectors equal on
    both arms the loss met does not depend on the key, so the odd rounds' arms are
    uniform whatever the loss: exactly 0-jointly-DP there. (On other vectors it is not:
    ``(0, 1)`` gives key + loss = 0 for either key.)"""

    def __init__(self, seed):
        self.rng, self.t, self.key, self.loss = np.random.default_rng(seed), 0, 0, 0

    def act(self):
        if self.t % 2 == 0:
            self.key = int(self.rng.integers(2))
            return self.key
        return (self.key + self.loss) % 2

    def update(self, action, feedback):
        self.loss = int(round(float(np.asarray(feedback).ravel()[0])))
        self.t += 1


def test_a_keyed_leak_of_the_canary_rounds_own_action_is_not_decoded():
    """The canaries are the key rounds, on loss vectors equal on both arms: the visible
    odd rounds show key + loss. The replay draws its own keys, so exactly one branch of
    each canary survives and the decoder guesses every canary, right half the time (0-DP:
    e^0 / (1 + e^0)); reading the canary's own arm (the key) would make every guess
    right."""
    horizon = 2000
    rng = np.random.default_rng(4)
    played = np.repeat(rng.integers(0, 2, (horizon, 1)), 2, axis=1).astype(float)
    partners = 1.0 - played
    learner, arms = KeyedLeak(5), np.zeros(horizon, np.int64)
    for t in range(horizon):
        arms[t] = learner.act()
        learner.update(arms[t], [played[t, arms[t]]])
    hidden = np.arange(horizon) % 2 == 0
    known = np.where(hidden[:, None], np.nan, played)
    guess, survivors = decode_hidden(KeyedLeak(6), arms, known, played, partners, hidden,
                                     loss_only, free=0)
    assert survivors == 1 and np.count_nonzero(guess) == horizon // 2
    right = int((guess == 1).sum())
    assert stats.binomtest(right, horizon // 2).pvalue > 1e-3, right
    assert one_run_eps_lower_bound(horizon // 2, right, delta=1e-5,
                                   canaries=horizon // 2) < 0.05


class Noisy01:
    """Exactly epsilon-jointly-DP: in round t + 1 it plays the loss it met in round t
    through randomized response at epsilon (two arms); its other rounds carry nothing."""

    def __init__(self, seed, epsilon):
        self.rng, self.keep, self.loss = np.random.default_rng(seed), \
            np.exp(epsilon) / (1 + np.exp(epsilon)), 0

    def act(self):
        return self.loss if self.rng.random() < self.keep else 1 - self.loss

    def update(self, action, feedback):
        self.loss = int(round(float(np.asarray(feedback).ravel()[0])))


def test_the_replay_decoder_refutes_an_exactly_private_learner_rarely():
    """100 audits of a learner exactly 1-jointly-DP on the rounds after its canaries
    (randomized response of the loss just met, one canary in two): the replay's own
    coins make one branch of each canary survive, the loss met with probability ``s =
    q^2 + (1-q)^2`` (``q = e / (1 + e)``: the two coins agree), on the canary's arm with
    probability ``s`` too (its own randomized response of the loss before), so a guess
    is right with probability ``s^2 + (1 - s) / 2`` (0.56); the true claim epsilon = 1
    is refuted at most 5% of the time (here never)."""
    q = np.e / (1 + np.e)
    same = q**2 + (1 - q) ** 2
    horizon, refuted, rights = 400, 0, []
    for seed in range(100):
        rng = np.random.default_rng(1000 + seed)
        played = rng.integers(0, 2, (horizon, 2)).astype(float)
        partners = 1.0 - played
        learner, arms = Noisy01(seed, 1.0), np.zeros(horizon, np.int64)
        for t in range(horizon):
            arms[t] = learner.act()
            learner.update(arms[t], [played[t, arms[t]]])
        hidden = np.arange(horizon) % 2 == seed % 2
        known = np.where(hidden[:, None], np.nan, played)
        guess, _ = decode_hidden(Noisy01(10_000 + seed, 1.0), arms, known, played, partners,
                                 hidden, loss_only, free=1)
        r, v = int(np.count_nonzero(guess)), int((guess == 1).sum())
        rights.append(v / r)
        bound = one_run_eps_lower_bound(r, v, confidence=0.975, delta=1e-5,
                                        canaries=int(hidden.sum()))
        refuted += bound > 1.0
    assert refuted <= 5, refuted
    assert abs(np.mean(rights) - (same**2 + (1 - same) / 2)) < 0.01, np.mean(rights)


def test_the_replay_refutes_both_twins_at_epsilon_1_and_not_the_learners():
    """T = 1000, 3 games, claim (1, 1e-5): the twins' replay guesses are all right and
    refute; the learners at their own noise leave no hypothesis alive (no guesses). The
    two contextual rules share alpha (each at 97.5%)."""
    games, settings = [AuditGame(ENV, {}, 1000)], OneRunSettings(games=3, seed=0)
    for name in ("jdp-linucb", "ldp-linucb"):
        for noise in (False, True):
            def make(problem, space, seed, name=name, noise=noise):
                return agents.make(name, problem, epsilon=1.0, delta=1e-5, seed=seed,
                                   add_noise=noise)
            finding = audit_one_run(make, games, (1.0, 1e-5), settings, replay=True)
            assert "of the 2 rules', each at 97.5%" in finding.rule, finding.rule
            replay = finding.rule.split("replay (")[1].split(" right")[0]
            right, guesses = map(int, replay.split(" of "))
            if noise:
                assert not finding.refuted and guesses == 0, (name, str(finding))
            else:
                assert finding.refuted and right == guesses > 150, (name, str(finding))
    without = audit_one_run(jdp(add_noise=False), games, (1.0, 1e-5), settings)
    assert not without.refuted and "replay" not in without.rule


def test_the_replay_refuses_what_it_cannot_read():
    """Mismatched shapes, a bad beam, and a game recorded without its observations are
    refused with what was expected."""
    tilt, arms, played, partners, hidden = leader_game(0)
    with pytest.raises(ValueError, match=r"must be \(T,\), \(T, K\)"):
        decode(tilt, arms[:-1], played, played, partners, hidden)
    with pytest.raises(ValueError, match="beam"):
        decode(tilt, arms, played, played, partners, hidden, beam=0)
    game = play_audit_game(jdp(add_noise=False), AuditGame(ENV, {}, 60), 1, 2)
    assert game.observations.shape == (60, 11)
    stripped = dataclasses.replace(game, observations=None)
    with pytest.raises(ValueError, match="observations"):
        score_game(stripped, OneRunSettings(), 60, np.random.default_rng(0),
                   replay=lambda seed: None)
