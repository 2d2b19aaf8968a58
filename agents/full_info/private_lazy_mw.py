r"""Asi, Koren, Liu, Talwar, "Private Online Learning via Lazy Algorithms" (NeurIPS 2024,
arXiv 2406.03620): the L2P transformation (their Algorithm 1) applied to multiplicative
weights, for DP prediction from experts (DP-OPE) against OBLIVIOUS adversaries.

``private-lazy-mw`` -- :class:`PrivateLazyMW`. The ``T`` rounds are cut into
``n = ceil(T / B)`` batches of ``B`` rounds (the last may be shorter); one expert
``x_s`` is played for every round of batch ``s``. With the MW measures
``nu_s(i) ∝ exp(-eta * L_{<s}(i))`` (``L_{<s}`` the losses of batches ``1..s-1``):

* ``x_1, y_1 ~ nu_1`` (uniform), independently;
* for ``s = 2..n``: ``S_s ~ Ber(exp(-eta (L_{s-1}(x_{s-1}) - L_{s-1}(y_{s-1})) - 2 B eta))``
  and ``S'_s ~ Ber(1 - p)``; ``x_s = x_{s-1}`` if both are 1, else ``x_s ~ nu_s``;
  ``A_s ~ Ber(1 - p)``; ``y_s = y_{s-1}`` if ``A_s = 1``, else ``y_s ~ nu_s``.

``L_{s-1}`` is the last batch's loss; for MW the ratio
``nu_s(x) nu_{s-1}(y) / (nu_{s-1}(x) nu_s(y))`` of Algorithm 1 is
``exp(-eta (L_{s-1}(x) - L_{s-1}(y)))`` (the normalizers cancel), and as
``|L_{s-1}(x) - L_{s-1}(y)| <= B`` the exponent is ``<= -B eta``: Algorithm 1's
``min{1, .}`` never binds. ``y`` is a hidden reference sample (never played).

Paper vs this code. The algorithm is the paper's Algorithm 1 as transcribed above. The
paper's theorem for DP-OPE (its choice of ``eta, B, p`` as functions of ``T, d,
epsilon, delta`` and its privacy proof) was NOT available to us in text (only the
abstract: regret ``O(sqrt(T log d) + T^{1/3} log d / epsilon^{2/3})``), so the privacy
analysis and the parameters are OURS (``docs/algorithms/l2p.md``):

* Privacy (our Proposition 1 there): for loss sequences differing in one round, in
  batch ``s*``, everything up to ``x_{s*}`` has the same law; the switch decision of
  batch ``s* + 1`` is ``eps_sw``-DP with
  ``eps_sw = ln[(1 - (1-p) e^{-(B+2) eta}) / (1 - (1-p) e^{-B eta})]`` (and
  ``>= 2 eta``); every draw from some ``nu_s``, ``s > s*``, is ``2 eta``-DP (an
  exponential mechanism); every other coin has the same law on both sides. The number
  ``N`` of such draws is at most ``X + Y``, ``X ~ Bin(n-1, 1 - (1-p) e^{-3 B eta})``,
  ``Y ~ Bin(n-1, p)`` (stochastic domination); with ``K`` the sum of their
  ``(1 - delta/4)``-quantiles, the optimal composition of one ``eps_sw``-DP and ``K``
  ``2 eta``-DP mechanisms (Kairouz-Oh-Viswanath; dp-accounting's PLD of
  ``from_privacy_parameters``) at ``delta / 2`` is the declared epsilon:
  ``(epsilon, delta)``-DP overall.
* Parameters (ours): the ``(eta, B, p)`` on a grid that minimizes the batched-MW bound
  ``w (ln d / eta + eta T B / 8)`` subject to that epsilon ``<= epsilon``, with
  ``eta <= sqrt(8 ln d / (T B))`` (the bound's minimizer; ``B = 1`` gives ``hedge``'s
  rate). Grids: ``B`` in ``1..8`` then factors of 1.25; ``p in {0} u {4^-k: k <= 12}``
  (``p = 0`` wins at the sizes of the benchmark). Clamps: ``B <= T``; if no ``B`` with
  two or more batches is feasible (or beats ``T``), ``B = T`` (one batch: a uniformly
  random expert throughout, 0-DP).
* Rate of our calibration: the constraints ``eta^2 T (p/B + eta) <~ epsilon^2`` and
  ``eta / (p + B eta) <~ epsilon`` give ``O(sqrt(T log d) + T^{2/5} polylog /
  epsilon^{3/5})`` -- within ``(T epsilon)^{1/15}`` of the paper's claimed
  ``T^{1/3} log d / epsilon^{2/3}`` (``O(sqrt(T log d / epsilon))`` at ``p = 0``).
  Utility is for oblivious adversaries only.

Exactness. The privacy of L2P IS its sampling (no noise is added), so every draw is
exact, in integer arithmetic: losses are clipped to the family's box, shifted and scaled
to ``[0, 1]`` (one width ``w`` for all experts) and rounded to the grid ``2^-16`` (the
rounded losses stay in ``[0, 1]``: the sensitivity is unchanged); ``eta`` is a multiple
of ``2^-20``; ``p`` a multiple of ``2^-24``. ``Ber(exp(-eta * integer))`` is the exact
Canonne-Kamath-Steinke sampler (:func:`agents.privacy.discrete.bernoulli_exp_big`),
``x ~ nu_s`` is rejection sampling (a uniform expert kept with probability
``exp(-eta (L(i) - min L))``), ``Ber(1 - p)`` a uniform integer. A float sampler
(``rng.choice`` on a softmax) would give an expert of ideal probability below
``2^-53`` probability 0 on one side and not on the other: an unbounded privacy loss.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from agents.base import Agent, register
from agents.common import env_action, require_linear
from agents.privacy.calibration import PrivacyGuarantee
from agents.privacy.discrete import OsRandom, bernoulli_exp_big
from dp_online_envs.domains import Simplex
from dp_online_envs.validation import check_delta, check_epsilon, check_int

__all__ = ["ETA_BITS", "LOSS_BITS", "P_BITS", "L2PParameters", "PrivateLazyMW",
           "check_l2p_delta", "composed_delta", "draw_quantile", "l2p_parameters", "switch_epsilon"]

#: ``eta`` is a multiple of ``2^-ETA_BITS``.
ETA_BITS = 20
#: Each round's normalized loss is rounded to a multiple of ``2^-LOSS_BITS``.
LOSS_BITS = 16
#: ``p`` is a multiple of ``2^-P_BITS``.
P_BITS = 24
#: ``eta * (integer loss units)`` has denominator ``2^(ETA_BITS + LOSS_BITS)``.
_DEN = 2 ** (ETA_BITS + LOSS_BITS)
_INT64_SAFE = 2**62


@dataclass(frozen=True)
class L2PParameters:
    """The calibrated parameters of ``private-lazy-mw`` and their privacy accounting.

    Attributes:
        eta_units: ``eta = eta_units / 2^ETA_BITS`` (per round, normalized losses).
        batch: ``B``. batches: ``n = ceil(T / B)``.
        p_units: ``p = p_units / 2^P_BITS``, the fake switching probability.
        draws: ``K``, the high-probability bound on the draws after the changed batch.
        eps_switch: ``eps_sw`` of the switch decision after the changed batch.
        epsilon: the epsilon of the composition at ``delta / 2`` (dp-accounting's PLD);
            ``0`` for one batch.
        delta: the total delta (``delta / 2`` composition + ``delta / 2`` count).
    """

    eta_units: int
    batch: int
    batches: int
    p_units: int
    draws: int
    eps_switch: float
    epsilon: float
    delta: float

    @property
    def eta(self) -> float:
        """``eta`` as a float (exact: a dyadic rational)."""
        return self.eta_units / 2**ETA_BITS

    @property
    def p(self) -> float:
        """``p`` as a float (exact)."""
        return self.p_units / 2**P_BITS


def check_l2p_delta(delta: object) -> float:
    """``delta`` in ``(0, 1)``: L2P has no pure-DP guarantee (``delta / 2`` bounds the
    chance of more resamples than the accounting covers).

    Raises:
        ValueError: Naming the value and what is expected.
    """
    d = check_delta(delta)
    if d == 0.0:
        raise ValueError("delta=0 rejected: private-lazy-mw is (epsilon, delta)-DP with "
                         "delta in (0, 1) (delta/2 bounds the chance of more resamples "
                         "than accounted); pass delta=1e-6 in Python, --delta 1e-6 on the "
                         "command line")
    return d


def switch_epsilon(eta: float, batch: int, p: float) -> float:
    """``eps_sw = ln[(1 - (1-p) e^{-(B+2) eta}) / (1 - (1-p) e^{-B eta})]``, at least
    ``2 eta``: the pure-DP epsilon of the switch decision of the batch after the one
    holding the changed round (``docs/algorithms/l2p.md``, Lemma 2)."""
    if p >= 1.0:
        return 2.0 * eta
    q = math.log1p(-p)
    num = -math.expm1(q - (batch + 2) * eta)
    den = -math.expm1(q - batch * eta)
    return max(2.0 * eta, math.log(num / den))


def _quantile(m: int, prob: float, tail: float) -> int:
    """The least ``k`` with ``P(Bin(m, prob) > k) <= tail`` (``scipy.special.bdtrc``,
    the binomial survival function; ``bdtrik`` gives the starting point)."""
    from scipy import special  # here: scipy.special takes 0.25 s to import

    if m == 0 or prob <= 0.0:
        return 0
    if prob >= 1.0:
        return m
    k0 = special.bdtrik(1.0 - tail, m, prob)
    k = min(max(int(k0) if math.isfinite(k0) else m, 0), m)
    while k < m and special.bdtrc(k, m, prob) > tail:
        k += 1
    while k > 0 and special.bdtrc(k - 1, m, prob) <= tail:
        k -= 1
    return k


def draw_quantile(batches: int, eta: float, batch: int, p: float, tail: float) -> int:
    """``K``: ``P(X > K_x) <= tail / 2`` and ``P(Y > K_y) <= tail / 2`` for
    ``X ~ Bin(n-1, 1 - (1-p) e^{-3 B eta})`` (x draws) and ``Y ~ Bin(n-1, p)`` (y draws);
    ``K = K_x + K_y`` bounds the draws after the changed batch with probability
    ``>= 1 - tail`` (Lemma 3)."""
    m = batches - 1
    # x-draw probability bound, rounded up (a tiny excess only loosens the bound)
    px = min(1.0, -math.expm1(math.log1p(-min(p, 1.0)) - 3 * batch * eta) * (1 + 1e-12)
             if p < 1.0 else 1.0)
    return _quantile(m, px, tail / 2) + _quantile(m, p, tail / 2)


def composed_delta(epsilon: float, eps_switch: float, eps_draw: float, draws: int) -> float:
    """``delta(epsilon)`` of the optimal composition of one ``eps_switch``-DP and
    ``draws`` ``eps_draw``-DP mechanisms: the hockey-stick divergence of the composed
    randomized-response pairs (Kairouz-Oh-Viswanath 2015; Dong-Roth-Su 2019 Thm. 3.2
    for adaptive composition), in closed form. The search's fast path; the declared
    epsilon is dp-accounting's (:func:`_accountant_epsilon`)."""
    from scipy import special

    k = np.arange(draws + 1)
    q = 1.0 / (1.0 + math.exp(-eps_draw))  # P(+eps_draw) on the first side
    pmf = np.exp(special.gammaln(draws + 1) - special.gammaln(k + 1)
                 - special.gammaln(draws - k + 1) + k * math.log(q)
                 + (draws - k) * math.log1p(-q))
    base = eps_draw * (2 * k - draws)
    total = 0.0
    for sign, weight in ((1.0, 1.0 / (1.0 + math.exp(-eps_switch))),
                         (-1.0, 1.0 / (1.0 + math.exp(eps_switch)))):
        loss = sign * eps_switch + base
        total += weight * float(np.sum(pmf * -np.expm1(np.minimum(epsilon - loss, 0.0))))
    return total


def _accountant_epsilon(eps_switch: float, eps_draw: float, draws: int,
                        delta: float) -> float:
    """dp-accounting's epsilon at ``delta`` of one ``eps_switch``-DP and ``draws``
    ``eps_draw``-DP mechanisms (pessimistic PLDs of ``from_privacy_parameters`` on the
    grid ``eps_draw / 4``, on which ``eps_draw`` is exact)."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters
    grid = eps_draw / 4.0
    first = pld.from_privacy_parameters(DifferentialPrivacyParameters(eps_switch, 0.0),
                                        value_discretization_interval=grid)
    if draws:
        rest = pld.from_privacy_parameters(DifferentialPrivacyParameters(eps_draw, 0.0),
                                           value_discretization_interval=grid)
        first = first.compose(rest.self_compose(draws))
    return float(first.get_epsilon_for_delta(delta))


def _batch_grid(horizon: int) -> list[int]:
    out = set(range(1, min(horizon, 8) + 1))
    b = 8.0
    while b < horizon:
        b *= 1.25
        out.add(min(horizon, round(b)))
    return sorted(out)


def _proxy(eta: float, batch: int, horizon: int, n_experts: int) -> float:
    """The batched-MW bound ``ln d / eta + eta T B / 8`` (normalized losses), capped at
    ``T`` (what a single uniformly random expert can lose)."""
    return min(float(horizon), math.log(n_experts) / eta + eta * horizon * batch / 8.0)


@functools.lru_cache(maxsize=128)
def l2p_parameters(horizon: int, n_experts: int, epsilon: float,
                   delta: float) -> L2PParameters:
    """Our calibration of ``(eta, B, p)`` (module docstring; ``docs/algorithms/l2p.md``).

    Args:
        horizon: ``T >= 1``.
        n_experts: ``d >= 2``.
        epsilon: ``epsilon > 0``.
        delta: ``0 < delta < 1``.

    Returns:
        The :class:`L2PParameters` minimizing the batched-MW bound among those whose
        accounted epsilon at ``delta`` is ``<= epsilon``.
    """
    T = check_int("horizon", horizon, 1)
    d = check_int("n_experts", n_experts, 2)
    eps = check_epsilon(epsilon)
    dlt = check_l2p_delta(delta)
    half = dlt / 2.0
    p_grid = [0] + [2 ** (P_BITS - 2 * k) for k in range(P_BITS // 2 + 1)]  # 0, 4^-k
    best = None  # (proxy, batch, p_units, eta_units, draws, eps_sw)

    def account(a: int, batch: int, pu: int):
        eta, p = a / 2**ETA_BITS, pu / 2**P_BITS
        n = -(-T // batch)
        k = draw_quantile(n, eta, batch, p, half)
        esw = switch_epsilon(eta, batch, p)
        # the search rounds eps_sw up by the PLD grid eps_draw / 4: never below the PLD
        return composed_delta(eps, esw + eta / 2.0, 2.0 * eta, k) <= half, k, esw

    def search(batch: int, pu: int, a_top: int, bar: float):
        """A feasible ``a <= a_top`` as large as the probes find, or None.

        The accounted epsilon is not monotone in eta at ``p = 0`` (``eps_sw`` falls
        as ``B eta`` grows), so ``a`` is probed downwards from ``a_top`` on a geometric
        grid of 12 points to ``a_need`` (the least ``a`` whose proxy beats ``bar``; the
        proxy falls as ``a`` grows up to ``a_top``), then refined by bisection between
        the first feasible probe and the infeasible one above it."""
        a_need = 1
        if bar < T:
            lo_a, hi_a = 0, a_top
            while hi_a - lo_a > 1:
                mid = (lo_a + hi_a) // 2
                lo_a, hi_a = (lo_a, mid) if _proxy(mid / 2**ETA_BITS, batch, T, d) < bar \
                    else (mid, hi_a)
            a_need = hi_a
        ratio = (a_need / a_top) ** (1.0 / 12)
        above = None
        for i in range(13):
            a = a_top if i == 0 else max(a_need, min(above - 1, int(a_top * ratio**i)))
            ok, k, esw = account(a, batch, pu)
            if ok:
                break
            above = a
            if a <= a_need:
                return None
        else:
            return None
        lo, found = a, (a, k, esw)
        hi = above if above is not None else a + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            ok, k, esw = account(mid, batch, pu)
            if ok:
                lo, found = mid, (mid, k, esw)
            else:
                hi = mid
        return found

    batches = [b for b in _batch_grid(T) if -(-T // b) > 1]
    for pu in p_grid:  # p = 0 first: it sets the bar the other p must beat
        for batch in batches:
            a_top = max(1, int(math.sqrt(8.0 * math.log(d) / (T * batch)) * 2**ETA_BITS))
            bar = float(T) if best is None else best[0]
            if _proxy(a_top / 2**ETA_BITS, batch, T, d) >= bar:
                continue  # not even the unconstrained eta beats the best so far
            hit = search(batch, pu, a_top, bar)
            if hit is None:
                continue
            a, k, esw = hit
            cand = (_proxy(a / 2**ETA_BITS, batch, T, d), batch, pu, a, k, esw)
            if best is None or cand < best:
                best = cand
    if best is None or best[0] >= T:
        return L2PParameters(eta_units=max(1, int(math.sqrt(8.0 * math.log(d) / T)
                                                  * 2**ETA_BITS)),
                             batch=T, batches=1, p_units=0, draws=0, eps_switch=0.0,
                             epsilon=0.0, delta=dlt)
    _, batch, pu, a, k, esw = best
    eta = a / 2**ETA_BITS
    achieved = _accountant_epsilon(esw, 2.0 * eta, k, half)
    if not achieved <= eps * (1 + 1e-9):
        raise RuntimeError(f"private-lazy-mw calibration: dp-accounting gives epsilon="
                           f"{achieved!r} > {eps!r} for eta={eta}, B={batch}, K={k}")
    return L2PParameters(eta_units=a, batch=batch, batches=-(-T // batch), p_units=pu,
                         draws=k, eps_switch=esw, epsilon=achieved, delta=dlt)


def _ints(values) -> np.ndarray:
    """Non-negative Python ints as an int64 array, or an object array if too large."""
    vals = [int(v) for v in values]
    if max(vals) < _INT64_SAFE:
        return np.asarray(vals, dtype=np.int64)
    return np.asarray(vals, dtype=object)


@register
class PrivateLazyMW(Agent):
    r"""``private-lazy-mw``: an L2P-style learner -- Algorithm 1 of Asi-Koren-Liu-Talwar
    (NeurIPS 2024) on MW, with this project's privacy proof, parameters and rate.

    Not the paper's calibrated learner: its parameters minimize this project's bound,
    whose privacy term grows as ``T^{2/5} polylog / epsilon^{3/5}``, not the paper's
    ``T^{1/3} log d / epsilon^{2/3}`` (``docs/algorithms/l2p.md``).

    Plays one expert (a simplex vertex) per batch; see the module docstring for the
    algorithm, what follows the paper and what is ours.

    Args:
        batch: Override of the calibrated batch length ``B``.
        eta: Override of the calibrated ``eta`` (rounded down to a multiple of ``2^-20``).
        p: Override of the calibrated ``p`` (rounded down to a multiple of ``2^-24``).

    With an override the privacy claim is recomputed for the values used (and may exceed
    ``epsilon``: the setup refuses that).

    Attributes:
        params: The :class:`L2PParameters` in use. ``batch``, ``eta``, ``p``: their values.
        loss_lo, loss_width: The normalization ``u = (theta - lo) / w`` onto ``[0, 1]``.
        x_draws, y_draws: The draws from ``nu_s`` made so far in this game.
    """

    name = "private-lazy-mw"
    description = ("L2P-style lazy MW (Alg. 1 of Asi-Koren-Liu-Talwar) with our own "
                   "parameters: one expert per batch; (eps, delta)-DP, privacy term "
                   "T^{2/5}/eps^{3/5} (not the paper's T^{1/3}); oblivious adversaries")
    paper = ("Asi, Koren, Liu, Talwar, Private Online Learning via Lazy Algorithms "
             "(NeurIPS 2024), Alg. 1 (L2P) with MW; privacy proof and parameters ours "
             "(docs/algorithms/l2p.md)")
    feedback = "full"
    private = True
    needs_delta = True

    def setup(self, batch: int | None = None, eta: float | None = None,
              p: float | None = None) -> None:
        prob = self.problem
        if not isinstance(prob.domain, Simplex):  # a wrong game, not a wrong type
            raise ValueError(  # noqa: TRY004
                f"private-lazy-mw plays experts on the simplex, got {prob.domain!r}")
        loss = require_linear(self.name, prob.loss)
        d = prob.domain.dim
        if d < 2:
            raise ValueError(f"private-lazy-mw needs at least 2 experts, got {d}")
        check_l2p_delta(self.delta)
        low = np.asarray(loss.param_space.low, dtype=np.float64)
        high = np.asarray(loss.param_space.high, dtype=np.float64)
        self.loss_lo = float(np.min(low))
        self.loss_width = float(np.max(high)) - self.loss_lo
        T = prob.horizon
        base = l2p_parameters(T, d, self.epsilon, self.delta)
        if batch is None and eta is None and p is None:
            self.params = base
        else:
            b = base.batch if batch is None else check_int("batch", batch, 1, T)
            a = base.eta_units if eta is None else self._units("eta", eta, ETA_BITS)
            pu = (base.p_units if p is None
                  else self._units("p", p, P_BITS, top=1.0, zero=True))
            self.params = self._account(T, b, a, pu)
            if not self.params.epsilon <= self.epsilon * (1 + 1e-9):
                raise ValueError(
                    f"batch={b}, eta={a / 2**ETA_BITS!r}, p={pu / 2**P_BITS!r} give "
                    f"epsilon={self.params.epsilon:.6g} at delta={self.delta:g}, above the "
                    f"requested epsilon={self.epsilon:g}")
        self.batch, self.eta, self.p = self.params.batch, self.params.eta, self.params.p
        self.privacy = PrivacyGuarantee(
            self.epsilon, self.delta,
            mechanism=(f"L2P on MW: {self.params.batches} batches of B={self.batch}, "
                       f"eta={self.eta:.6g}, p={self.p:.6g}; switch eps_sw="
                       f"{self.params.eps_switch:.4g} + <= {self.params.draws} exact draws "
                       f"of 2 eta each (prob. >= 1 - delta/2), composed by dp-accounting "
                       f"(epsilon {self.params.epsilon:.6g} at delta/2)"))

    @staticmethod
    def _units(name: str, value, bits: int, top: float = math.inf,
               zero: bool = False) -> int:
        """``value`` rounded down to a multiple of ``2^-bits``, in those units."""
        low = "[0" if zero else "(0"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and (value >= 0 if zero else value > 0)
                and value <= top):
            raise ValueError(f"{name}={value!r} rejected: expected a real number in "
                             f"{low}, {top:g}]")
        units = math.floor(value * 2**bits)
        if units < 1 and not zero:
            raise ValueError(f"{name}={value!r} rejected: below the grid 2^-{bits}")
        return units

    def _account(self, T: int, batch: int, a: int, pu: int) -> L2PParameters:
        n = -(-T // batch)
        eta, p = a / 2**ETA_BITS, pu / 2**P_BITS
        if n == 1:
            return L2PParameters(a, batch, 1, pu, 0, 0.0, 0.0, self.delta)
        k = draw_quantile(n, eta, batch, p, self.delta / 2)
        esw = switch_epsilon(eta, batch, p)
        return L2PParameters(a, batch, n, pu, k, esw,
                             _accountant_epsilon(esw, 2.0 * eta, k, self.delta / 2),
                             self.delta)

    @property
    def regret_bound(self) -> float:
        """``w (ln d / eta + eta T B / 8)``: the batched-MW bound the calibration
        minimizes (the paper's regret analysis of the lazy switching is not checked
        here)."""
        prob = self.problem
        return self.loss_width * _proxy(self.eta, self.batch, prob.horizon, prob.domain.dim)

    # --------------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._prng = OsRandom() if self.secure else self.rng
        d = self.problem.domain.dim
        self._cum = np.zeros(d, dtype=np.int64)     # losses of finished batches, 2^-16 units
        self._cur = np.zeros(d, dtype=np.int64)     # the current batch's losses
        self._in_batch = 0
        self._x = int(self._prng.integers(0, d))    # nu_1 is uniform
        self._y = int(self._prng.integers(0, d))
        self._started = False
        self.x_draws = 0
        self.y_draws = 0

    def _bern_exp(self, nums) -> np.ndarray:
        """Exact ``Ber(exp(-num / 2^36))`` draws."""
        return bernoulli_exp_big(self._prng, _ints(nums), _DEN)

    def _keep(self, pu: int) -> bool:
        """Exact ``Ber(1 - p)``."""
        return int(self._prng.integers(0, 2**P_BITS)) >= pu

    def _sample_nu(self) -> int:
        """Exact ``i ~ nu_s ∝ exp(-eta L_{<s}(i))``: a uniform proposal kept with
        probability ``exp(-eta (L(i) - min L))`` (rejection sampling)."""
        d = self.problem.domain.dim
        a = self.params.eta_units
        gaps = [a * int(v) for v in (self._cum - self._cum.min())]
        while True:
            idx = np.asarray(self._prng.integers(0, d, size=d)).reshape(-1)
            ok = self._bern_exp([gaps[i] for i in idx])
            hit = np.flatnonzero(ok)
            if hit.size:
                return int(idx[hit[0]])

    def _next_batch(self) -> None:
        """Algorithm 1's step ``s >= 2``, with ``_cur`` the losses of batch ``s - 1``."""
        a, B, pu = self.params.eta_units, self.params.batch, self.params.p_units
        lx, ly = int(self._cur[self._x]), int(self._cur[self._y])
        # exponent eta (L(x) - L(y)) + 2 B eta >= B eta > 0, in units of 2^-36
        stay = bool(self._bern_exp([a * (lx - ly + 2 * B * 2**LOSS_BITS)])[0])
        stay = self._keep(pu) and stay
        self._cum += self._cur
        self._cur[:] = 0
        if not stay:
            self._x = self._sample_nu()
            self.x_draws += 1
        if not self._keep(pu):
            self._y = self._sample_nu()
            self.y_draws += 1

    def act(self):
        if self._in_batch == 0:
            if self._started:
                self._next_batch()
            self._started = True
            e = np.zeros(self.problem.domain.dim)
            e[self._x] = 1.0
            self._point = self.release(e)
        return env_action(self.problem.domain, self._point, self.rng)

    def update(self, action, feedback) -> None:
        theta = self.clip_feedback(feedback)
        u = np.clip((theta - self.loss_lo) / self.loss_width, 0.0, 1.0)
        # round half-even onto the grid 2^-16: integers in [0, 2^16]
        self._cur += np.rint(u * 2**LOSS_BITS).astype(np.int64)
        self._in_batch += 1
        self.t += 1
        if self._in_batch == self.params.batch:
            self._in_batch = 0

    @property
    def played(self) -> int:
        """The expert played in the current batch."""
        return self._x

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.problem.domain!r}, epsilon={self.epsilon}, "
                f"delta={self.delta}, batch={self.batch}, eta={self.eta:.4g}, p={self.p:.4g})")
