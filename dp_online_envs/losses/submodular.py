"""Submodular losses on the ground set ``2^[n]`` through their Lovász extensions.

A set ``S`` of ``[n] = {0, ..., n-1}`` is the indicator vector ``1_S`` in ``{0,1}^n``.
For a set function ``f`` with ``f(empty) = 0`` (true for every family here), the Lovász
extension at ``x in R^n`` is, with ``pi`` sorting ``x`` decreasingly and
``S_k = {pi(1), ..., pi(k)}``,

    f_L(x) = sum_k x_{pi(k)} (f(S_k) - f(S_{k-1})),

so ``f_L(1_S) = f(S)``; ``f_L`` is convex iff ``f`` is submodular, and the greedy vector
``g_{pi(k)} = f(S_k) - f(S_{k-1})`` is a subgradient of ``f_L`` at ``x`` (a vertex of the
base polytope maximizing ``<., x>``), valid on all of R^n. On ``[0,1]^n``, ``f_L(x)`` is
a convex combination of the values ``f(S_0), ..., f(S_n)``, so ``|f_L| <= max_S |f(S)|``.

Every family is scaled so that ``|f(S)| <= M`` (``scale``) for every admissible
``theta`` and ``S``; hence ``B = M`` is a valid bound on any domain inside ``[0,1]^n``
(:meth:`SubmodularLoss.check_domain` checks that). ``L`` is a bound on the l2 norm of
every greedy vector (``f_L`` is piecewise linear with those gradients), hence a valid
Lipschitz constant on all of R^n; each family documents how it is derived.

Normalization: the online-submodular-minimization papers (e.g. Cardoso & Cummings) only
require ``f_t : 2^[n] -> [-M, M]``; here additionally ``f_t(empty) = 0``.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence

import gymnasium as gym
import numpy as np

from dp_online_envs.domains.base import Domain
from dp_online_envs.losses._utils import as_param
from dp_online_envs.losses.base import LossFamily
from dp_online_envs.losses.submodular_min import minimize_submodular
from dp_online_envs.validation import check_int, check_real


def _chain_masks(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sets of the decreasing order of each row of ``xs`` (shape ``(m, n)``).

    Returns:
        ``(order, masks)``: ``order`` of shape ``(m, n)`` (stable decreasing argsort) and
        boolean ``masks`` of shape ``(m, n + 1, n)`` with ``masks[j, k]`` the first ``k``
        elements of ``order[j]``.
    """
    m, n = xs.shape
    order = np.argsort(-xs, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n)[None, :], axis=1)
    masks = rank[:, None, :] < np.arange(n + 1)[None, :, None]
    return order, masks


class SubmodularLoss(LossFamily):
    """Base class: a family of submodular ``f(theta, .) : 2^[n] -> [-M, M]``.

    Subclasses implement :meth:`_set_values` (vectorized over masks, no validation),
    :attr:`param_space`, :meth:`sample_param`, :meth:`clip_param` and
    :meth:`_lipschitz_bound`. ``value`` / ``values`` / ``subgradient`` are the Lovász
    extension and its greedy subgradient.

    Attributes:
        n: Ground-set size (also ``dim``).
        scale: ``M``, the bound on ``|f|``.
    """

    param_is_box = True

    convex = True
    strong_convexity = 0.0

    def __init__(self, n: int, scale: float) -> None:
        self.n = check_int("n", n, 1)
        self.dim = self.n
        self.scale = check_real("scale", scale, 0.0, low_inclusive=False)

    # ---------------------------------------------------------------- set values
    @abstractmethod
    def _set_values(self, theta: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``f(theta, S)`` for each row of the boolean ``(k, n)`` array ``masks``."""

    def _check_masks(self, masks: object, ndim: int) -> np.ndarray:
        m = np.asarray(masks)
        if m.ndim != ndim or m.shape[-1] != self.n:
            expected = f"({self.n},)" if ndim == 1 else f"(k, {self.n})"
            raise ValueError(f"mask has shape {m.shape}, expected {expected}")
        if m.dtype != bool:
            if not np.all((m == 0) | (m == 1)):
                raise ValueError(f"mask entries must be 0/1 or boolean, got {m!r}")
            m = m.astype(bool)
        return m

    def set_value(self, theta: np.ndarray, mask: np.ndarray) -> float:
        """``f(theta, S)`` for the set given by a boolean (or 0/1) mask of shape ``(n,)``.

        Raises:
            ValueError: On a wrong shape or non-0/1 entries.
        """
        m = self._check_masks(mask, 1)
        return float(self._set_values(np.asarray(theta, dtype=np.float64), m[None, :])[0])

    def set_values(self, theta: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``f(theta, S)`` for each row of a boolean (or 0/1) ``(k, n)`` array.

        Raises:
            ValueError: On a wrong shape or non-0/1 entries.
        """
        m = self._check_masks(masks, 2)
        return self._set_values(np.asarray(theta, dtype=np.float64), m)

    # ---------------------------------------------------------- Lovász extension
    def value(self, theta: np.ndarray, x: np.ndarray) -> float:
        """The Lovász extension ``f_L(theta, x)`` (equal to ``f(S)`` at ``x = 1_S``)."""
        return float(self.values(theta, np.asarray(x, dtype=np.float64)[None, :])[0])

    def values(self, theta: np.ndarray, xs: np.ndarray) -> np.ndarray:
        """Lovász extension at every row of ``xs`` (shape ``(m, n)``), one batched call."""
        xs = np.asarray(xs, dtype=np.float64)
        m, n = xs.shape
        order, masks = _chain_masks(xs)
        fv = self._set_values(np.asarray(theta, dtype=np.float64), masks.reshape(-1, n))
        fv = fv.reshape(m, n + 1)
        xs_sorted = np.take_along_axis(xs, order, axis=1)
        return fv[:, 0] + np.einsum("ij,ij->i", xs_sorted, np.diff(fv, axis=1))

    def subgradient(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The greedy vector ``g_{pi(k)} = f(S_k) - f(S_{k-1})``, a subgradient of ``f_L``."""
        x = np.asarray(x, dtype=np.float64)
        order, masks = _chain_masks(x[None, :])
        fv = self._set_values(np.asarray(theta, dtype=np.float64), masks[0])
        g = np.empty(self.n)
        g[order[0]] = np.diff(fv)
        return g

    def total(self, thetas: np.ndarray, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``sum_t f_L(theta_t, x)`` and the summed greedy vector.

        All terms share the greedy chain of ``x``, so the sum is the Lovász extension of
        ``sum_t f(theta_t, .)`` and the summed greedy vector is its subgradient. Families
        linear in ``theta`` evaluate ``f(sum_t theta_t, .)`` once.
        """
        t = np.asarray(thetas, dtype=np.float64)
        x = np.asarray(x, dtype=np.float64)
        order, masks = _chain_masks(x[None, :])
        if self.linear_in_theta:
            fv = self._set_values(t.sum(axis=0), masks[0])
        else:
            fv = np.zeros(self.n + 1)
            for theta in t:
                fv += self._set_values(theta, masks[0])
        marg = np.diff(fv)
        g = np.empty(self.n)
        g[order[0]] = marg
        return float(fv[0] + x[order[0]] @ marg), g

    # ---------------------------------------------------------------- minimizing
    def minimize(self, theta: np.ndarray, **kwargs) -> tuple[float, np.ndarray]:
        """Exact ``min_S f(theta, S)`` and a minimizer (see :func:`minimize_submodular`).

        Only meaningful when ``f(theta, .)`` is submodular (admissible ``theta``, or any
        sum of admissible ``theta`` for the families that are linear in ``theta``).
        """
        t = np.asarray(theta, dtype=np.float64)
        return minimize_submodular(
            lambda masks: self._set_values(t, masks), self.n, vectorized=True, **kwargs
        )

    # -------------------------------------------------------------------- bounds
    @abstractmethod
    def _lipschitz_bound(self) -> float:
        """A bound on ``||g||_2`` over greedy vectors and admissible ``theta``."""

    def check_domain(self, domain: Domain, atol: float = 1e-9) -> None:
        """Require ``domain.dim == n`` and ``domain`` inside ``[0, 1]^n``.

        The box check uses 2n calls of the domain's linear minimization oracle
        (``min x_i`` and ``max x_i``).

        Raises:
            ValueError: If the dimension differs or the domain leaves ``[0, 1]^n``.
        """
        super().check_domain(domain)
        eye = np.eye(self.n)
        for i in range(self.n):
            lo = float(np.asarray(domain.linear_minimizer(eye[i]))[i])
            hi = float(np.asarray(domain.linear_minimizer(-eye[i]))[i])
            if lo < -atol or hi > 1.0 + atol:
                raise ValueError(
                    f"{self.name} loss needs a domain inside [0, 1]^{self.n}, but "
                    f"{domain!r} has x_{i} ranging over [{lo}, {hi}]"
                )

    def lipschitz(self, domain: Domain) -> float:
        """Bound on the greedy vectors' l2 norms (family-specific, see its docstring)."""
        self.check_domain(domain)
        return self._lipschitz_bound()

    def bound(self, domain: Domain) -> float:
        """``M`` (``|f_L| <= max_S |f(S)| <= M`` on ``[0, 1]^n``)."""
        self.check_domain(domain)
        return self.scale

    def _box_clip(self, theta: np.ndarray) -> np.ndarray:
        t = as_param(theta, self.param_dim, self.name)
        return np.clip(t, self._space.low, self._space.high)

    @property
    def param_space(self) -> gym.spaces.Box:
        """The parameter box (exactly the admissible set for these families)."""
        return self._space

    def clip_param(self, theta: np.ndarray) -> np.ndarray:
        """Coordinate-wise clipping into the parameter box (the Euclidean projection).

        Raises:
            ValueError: If ``theta`` has the wrong shape or non-finite entries.
        """
        return self._box_clip(theta)

    def sample_param(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform sample from the parameter box."""
        return rng.uniform(self._space.low, self._space.high)


class GraphCutLoss(SubmodularLoss):
    """Cut functions of a weighted graph, optionally plus unary (modular) terms.

    With edges ``E`` (``|E| = m``), weights ``w = theta[:m] in [0, 1]^m`` and, if
    ``unary``, unary potentials ``u = theta[m:] in [-1, 1]^n``:

        f(theta, S) = (M / Z) (sum_{e in delta(S)} w_e + sum_{i in S} u_i),

    ``delta(S)`` the edges with exactly one endpoint in ``S``, and ``Z = m`` (no unary)
    or ``Z = m + n``. A nonnegatively weighted cut is submodular and the unary part is
    modular, so ``f`` is submodular; it is linear in ``theta`` (feature map: the cut
    indicators and ``1_S``, see :meth:`features`). ``f(empty) = 0``.

    Without unary terms ``f in [0, M]`` and ``min_S f = f(empty) = 0`` (the loss then
    only rewards picking nothing, or everything); with them ``f in [-M, M]`` and the
    minimization is a min s-t cut problem ("graph-cut energy").

    Bounds:

    * ``B = M``: an upper bound; exactly ``M * maxcut / m`` without unary terms
      (``= M`` iff the graph is bipartite).
    * ``L = (M / Z) sqrt(sum_i (deg_i + [unary])^2)``: the greedy coordinate of node
      ``i`` is ``(M/Z)`` times a signed sum of its incident weights plus ``u_i``, so
      ``|g_i| <= (M/Z)(deg_i + [unary])``; attained by a star without unary terms.

    Args:
        n_nodes: ``n``, number of nodes (the ground set).
        edges: Pairs ``(i, j)``, ``i != j``, of nodes; ``None`` gives the cycle on
            ``n`` nodes (the single edge ``(0, 1)`` for ``n = 2``). Parallel edges allowed.
        scale: ``M > 0``.
        unary: Whether ``theta`` also holds unary terms.

    Raises:
        ValueError: On ``n < 2``, an empty edge list, a self-loop or an out-of-range node.
    """

    linear_in_theta = True
    name = "graph-cut"

    def __init__(
        self,
        n_nodes: int,
        edges: Sequence[tuple[int, int]] | None = None,
        scale: float = 1.0,
        unary: bool = False,
    ) -> None:
        super().__init__(check_int("n_nodes", n_nodes, 2), scale)
        n = self.n
        if edges is None:
            edges = [(0, 1)] if n == 2 else [(i, (i + 1) % n) for i in range(n)]
        e = np.asarray(list(edges), dtype=np.int64)
        if e.ndim != 2 or e.shape[1] != 2 or e.shape[0] == 0:
            raise ValueError(f"edges={edges!r}, expected a nonempty list of (i, j) pairs")
        if np.any(e < 0) or np.any(e >= n):
            raise ValueError(f"edges={edges!r}, node indices must lie in [0, {n})")
        if np.any(e[:, 0] == e[:, 1]):
            raise ValueError(f"edges={edges!r} contain a self-loop, which is never cut")
        self.edges = e
        self.n_edges = int(e.shape[0])
        self.unary = bool(unary)
        self.param_dim = self.n_edges + (n if self.unary else 0)
        self._z = float(self.n_edges + (n if self.unary else 0))
        low = np.zeros(self.param_dim)
        if self.unary:
            low[self.n_edges :] = -1.0
        self._space = gym.spaces.Box(
            low=low, high=np.ones(self.param_dim), dtype=np.float64
        )
        deg = np.bincount(e.ravel(), minlength=n).astype(np.float64)
        self.degrees = deg
        self._lip = self.scale / self._z * math.sqrt(float(np.sum((deg + self.unary) ** 2)))

    def features(self, masks: np.ndarray) -> np.ndarray:
        """Feature map ``phi(S)``, ``f(theta, S) = <theta, phi(S)>``; shape ``(k, param_dim)``."""
        m = self._check_masks(masks, 2)
        return self._features(m)

    def _features(self, masks: np.ndarray) -> np.ndarray:
        cut = masks[:, self.edges[:, 0]] != masks[:, self.edges[:, 1]]
        parts = [cut] + ([masks] if self.unary else [])
        return np.concatenate(parts, axis=1).astype(np.float64) * (self.scale / self._z)

    def _set_values(self, theta: np.ndarray, masks: np.ndarray) -> np.ndarray:
        c = self.scale / self._z
        cut = masks[:, self.edges[:, 0]] != masks[:, self.edges[:, 1]]
        out = cut @ (c * theta[: self.n_edges])
        if self.unary:
            out = out + masks @ (c * theta[self.n_edges :])
        return out

    def _lipschitz_bound(self) -> float:
        return self._lip

    def __repr__(self) -> str:
        return (
            f"GraphCutLoss(n_nodes={self.n}, n_edges={self.n_edges}, "
            f"scale={self.scale}, unary={self.unary})"
        )


def _sqrt_increments_norm(size: int) -> float:
    """``sqrt(sum_{k<size} (sqrt(k+1) - sqrt(k))^2)``: l2 norm of ``sqrt(|.|)``'s marginals."""
    k = np.arange(size, dtype=np.float64)
    return float(np.sqrt(np.sum((np.sqrt(k + 1) - np.sqrt(k)) ** 2)))


class ConcaveModularLoss(SubmodularLoss):
    """Concave-of-modular minus modular functions.

    With groups ``G_1, ..., G_J`` of ``[n]``, ``theta = (alpha, beta)``,
    ``alpha in [0, 1]^J`` and ``beta in [0, 1]^n``:

        f(theta, S) = (M / Z) (sum_j alpha_j sqrt(|S ∩ G_j|) - sum_{i in S} beta_i),

    ``Z = max(sum_j sqrt(|G_j|), n)``, so ``f in [-M, M]`` and ``f(empty) = 0``. Each
    ``sqrt(|S ∩ G_j|)`` is a concave function of a modular function (submodular), the
    weights are nonnegative and the second part is modular, so ``f`` is submodular; it is
    linear in ``theta`` (see :meth:`features`).

    Bounds:

    * ``B = M``: an upper bound (attained when ``Z = n``, by ``S = [n]``, ``beta = 1``,
      ``alpha = 0``).
    * ``L = (M / Z) min(sqrt(sum_i max(c_i, 1)^2), sqrt((sum_j h(|G_j|))^2 + n))`` with
      ``c_i`` the number of groups containing ``i`` and
      ``h(s) = ||(sqrt(k+1) - sqrt(k))_{k<s}||_2``: a greedy vector is ``p - beta`` with
      ``p >= 0`` the concave part's marginals, so ``g_i^2 <= p_i^2 + beta_i^2``;
      ``p_i <= c_i`` gives the first bound, and ``||p||_2 <= sum_j alpha_j h(|G_j|)``
      (group ``j`` contributes the marginals of ``sqrt`` along the chain) the second.

    Args:
        n: Ground-set size.
        groups: Sequences of distinct indices of ``[n]``; ``None`` gives contiguous
            blocks of size ``ceil(sqrt(n))`` plus the whole ground set.
        scale: ``M > 0``.

    Raises:
        ValueError: On an empty group list, an empty group, a repeated or
            out-of-range index.
    """

    linear_in_theta = True
    name = "concave-modular"

    def __init__(
        self, n: int, groups: Sequence[Sequence[int]] | None = None, scale: float = 1.0
    ) -> None:
        super().__init__(n, scale)
        n = self.n
        if groups is None:
            b = math.isqrt(n - 1) + 1 if n > 1 else 1
            groups = [list(range(s, min(n, s + b))) for s in range(0, n, b)]
            groups.append(list(range(n)))
        groups = [list(g) for g in groups]
        if not groups:
            raise ValueError("groups=[], expected at least one group")
        inc = np.zeros((n, len(groups)))
        for j, g in enumerate(groups):
            gi = np.asarray(g, dtype=np.int64)
            if gi.ndim != 1 or gi.size == 0:
                raise ValueError(f"group {j} = {g!r}, expected a nonempty list of indices")
            if np.any(gi < 0) or np.any(gi >= n) or np.unique(gi).size != gi.size:
                raise ValueError(
                    f"group {j} = {g!r}, expected distinct indices in [0, {n})"
                )
            inc[gi, j] = 1.0
        self.groups = [tuple(int(i) for i in g) for g in groups]
        self.n_groups = len(groups)
        self._inc = inc
        sizes = inc.sum(axis=0)
        self._z = max(float(np.sqrt(sizes).sum()), float(n))
        self.param_dim = self.n_groups + n
        self._space = gym.spaces.Box(
            low=0.0, high=1.0, shape=(self.param_dim,), dtype=np.float64
        )
        counts = inc.sum(axis=1)
        l1 = math.sqrt(float(np.sum(np.maximum(counts, 1.0) ** 2)))
        h = sum(_sqrt_increments_norm(int(s)) for s in sizes)
        l2 = math.sqrt(h**2 + n)
        self._lip = self.scale / self._z * min(l1, l2)

    def features(self, masks: np.ndarray) -> np.ndarray:
        """Feature map ``phi(S)``, ``f(theta, S) = <theta, phi(S)>``; shape ``(k, param_dim)``."""
        m = self._check_masks(masks, 2).astype(np.float64)
        return np.concatenate([np.sqrt(m @ self._inc), -m], axis=1) * (self.scale / self._z)

    def _set_values(self, theta: np.ndarray, masks: np.ndarray) -> np.ndarray:
        c = self.scale / self._z
        conc = np.sqrt(masks @ self._inc) @ (c * theta[: self.n_groups])
        return conc - masks @ (c * theta[self.n_groups :])

    def planted_mean(self, planted: np.ndarray, gap: float) -> tuple[np.ndarray, float]:
        """A mean parameter whose set function has ``planted`` as its unique minimizer,
        and the margin by which every other set is worse.

        ``alpha_j = a`` for every group and ``beta_i = (1 + gap)/2`` on the planted set
        ``S*``, ``(1 - gap)/2`` off it, with ``a = 1 / (c_max + m_min)``: ``c_i`` is the
        number of groups containing ``i`` (``c_max`` the largest) and
        ``m_i = sum_{j : i in G_j} (sqrt(|G_j|) - sqrt(|G_j| - 1))`` the least marginal of
        ``i``'s concave terms (at the largest set; ``m_min`` the smallest). A set ``S``
        adds ``A`` to ``S*`` and removes ``R`` from it; by submodularity the concave part
        gains at least ``a m_i`` per added element and loses at most ``a c_i`` per
        removed one, so ``f(S) - f(S*) >= (M / Z) (sum_{i in A} (a m_i - (1 - gap)/2)
        + sum_{i in R} ((1 + gap)/2 - a c_i))``. The choice of ``a`` makes the two
        per-element margins equal, so every set other than ``S*`` is worse by at least

            margin = (M / Z) (m_min / (c_max + m_min) - (1 - gap) / 2),

        a lower bound that is tight (at ``n = 8`` with the default groups, ``M = 1`` and
        ``gap = 0.9`` it is 0.01877, and the least margin over all 256 planted sets is
        exactly that; over the 70 planted sets of size 4 it is 0.0214).

        Args:
            planted: ``S*`` as a 0/1 vector of shape ``(n,)``.
            gap: In (0, 1]: the modular part's pull towards ``S*``.

        Returns:
            ``(mu, margin)``: the mean in the parameter box ``[0, 1]^(J + n)``, and the
            margin above (positive).

        Raises:
            ValueError: On a ``planted`` that is not a 0/1 vector of shape ``(n,)``, or a
                ``gap`` too small for a positive margin (the message names the least
                ``gap`` that gives one).
        """
        mask = self._check_masks(planted, 1)
        sizes = self._inc.sum(axis=0)
        counts = self._inc.sum(axis=1)
        least = self._inc @ (np.sqrt(sizes) - np.sqrt(sizes - 1.0))
        c_max, m_min = float(counts.max()), float(least.min())
        a = 1.0 / (c_max + m_min)
        margin = self.scale / self._z * (m_min * a - 0.5 * (1.0 - gap))
        if not margin > 0.0:
            raise ValueError(f"gap={gap!r} plants no unique best set for {self!r}: expected "
                             f"gap > {(c_max - m_min) / (c_max + m_min):.4g}")
        beta = np.where(mask, 0.5 * (1.0 + gap), 0.5 * (1.0 - gap))
        return np.concatenate([np.full(self.n_groups, a), beta]), float(margin)

    def _lipschitz_bound(self) -> float:
        return self._lip

    def __repr__(self) -> str:
        return f"ConcaveModularLoss(n={self.n}, n_groups={self.n_groups}, scale={self.scale})"


class FacilityLocationLoss(SubmodularLoss):
    """Facility-location functions, optionally minus opening rewards.

    With ``C`` customers, weights ``w in [0, 1]^(C x n)`` (``theta[:C*n]``, row-major)
    and, if ``modular``, ``u in [0, 1]^n`` (``theta[C*n:]``):

        f(theta, S) = (M / Z) (sum_c max(0, max_{i in S} w_{c,i}) - sum_{i in S} u_i),

    ``Z = max(C, n)`` (``Z = C`` without the modular part) so ``f in [-M, M]``, and
    ``f(empty) = 0``. A max of weights over ``S`` (with a phantom 0-weight facility, which
    changes nothing for ``w >= 0``) is submodular, so is the sum over customers, and the
    second part is modular. Without ``u`` the function is monotone and its minimum is
    trivially ``f(empty) = 0``; the rewards ``u`` make the minimization nontrivial.

    **Not linear in theta**: ``max_{i in S} w_{c,i}`` is piecewise linear in ``w``, so
    ``sum_t f(theta_t, S) != f(sum_t theta_t, S)`` in general; ``linear_in_theta`` is
    False and a hindsight comparator must keep the sum of the set functions themselves.

    Bounds:

    * ``B = M``: an upper bound.
    * ``L = (M / Z) sqrt(C^2 + n)`` (``(M/Z) C`` without ``u``): a greedy vector is
      ``p - u`` with ``p >= 0`` the coverage marginals, ``sum_i p_i <= C``, so
      ``||g||^2 <= ||p||_2^2 + ||u||^2 <= C^2 + n``.

    Args:
        n: Number of facilities (the ground set).
        n_customers: ``C >= 1``.
        scale: ``M > 0``.
        modular: Whether ``theta`` also holds the opening rewards ``u``.
    """

    linear_in_theta = False
    name = "facility-location"

    def __init__(
        self, n: int, n_customers: int = 3, scale: float = 1.0, modular: bool = True
    ) -> None:
        super().__init__(n, scale)
        self.n_customers = check_int("n_customers", n_customers, 1)
        self.modular = bool(modular)
        c, n = self.n_customers, self.n
        self._nw = c * n
        self.param_dim = self._nw + (n if self.modular else 0)
        self._z = float(max(c, n) if self.modular else c)
        self._space = gym.spaces.Box(
            low=0.0, high=1.0, shape=(self.param_dim,), dtype=np.float64
        )
        rad = c**2 + (n if self.modular else 0)
        self._lip = self.scale / self._z * math.sqrt(rad)

    def _set_values(self, theta: np.ndarray, masks: np.ndarray) -> np.ndarray:
        c = self.scale / self._z
        w = theta[: self._nw].reshape(self.n_customers, self.n)
        out = np.empty(masks.shape[0])
        step = max(1, (1 << 18) // max(1, self._nw))
        for s in range(0, masks.shape[0], step):
            mk = masks[s : s + step]
            cover = np.where(mk[:, None, :], w[None, :, :], 0.0).max(axis=2)
            out[s : s + step] = np.maximum(cover, 0.0).sum(axis=1)
        out *= c
        if self.modular:
            out -= masks @ (c * theta[self._nw :])
        return out

    def _lipschitz_bound(self) -> float:
        return self._lip

    def __repr__(self) -> str:
        return (
            f"FacilityLocationLoss(n={self.n}, n_customers={self.n_customers}, "
            f"scale={self.scale}, modular={self.modular})"
        )
