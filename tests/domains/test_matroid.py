"""Matroid polytopes: uniform, partition, graphic and the generic oracle-only path."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dp_online_envs.domains import (
    GraphicMatroid,
    MatroidPolytope,
    PartitionMatroid,
    UniformMatroid,
)
from dp_online_envs.domains.base import subset_masks, subset_sums

from .checks import lp_minimum, lp_tolerance, max_pairwise


class OracleOnly(MatroidPolytope):
    """A matroid known only through another one's independence oracle."""

    def __init__(self, inner: MatroidPolytope) -> None:
        super().__init__(inner.n)
        self.inner = inner

    def is_independent(self, subset) -> bool:
        return self.inner.is_independent(subset)


def random_graph(rng, max_nodes=6, max_edges=10):
    n_nodes = int(rng.integers(2, max_nodes + 1))
    m = int(rng.integers(1, max_edges + 1))
    return n_nodes, [tuple(int(a) for a in rng.integers(0, n_nodes, 2)) for _ in range(m)]


def brute_rank_table(verts: np.ndarray) -> np.ndarray:
    """r(S) = max over independent I of |I cap S|, for every bitmask S."""
    masks = subset_masks(verts.shape[1]).astype(float)
    return (masks @ verts.T).max(axis=1)


def brute_contains(x, rank_table, atol=1e-9):
    return bool(x.min() >= -atol and np.all(subset_sums(x) <= rank_table + atol))


def near_boundary_points(domain, rng, count):
    """Points on a face of maximal independent sets, scaled by 0.97..1.03 and jittered:
    about half inside."""
    out = []
    for _ in range(count):
        c = -rng.random(domain.n)
        face = [domain.linear_minimizer(c + 0.3 * rng.normal(size=domain.n)) for _ in range(3)]
        x = rng.dirichlet(np.ones(3)) @ np.array(face)
        y = np.clip(x * rng.uniform(0.97, 1.03) + rng.normal(scale=0.01, size=x.size), 0, 1)
        y[domain.loops] = 0.0
        out.append(y)
    return out


# ------------------------------------------------------------------ oracles
def test_uniform_and_partition_oracles_match_linprog():
    rng = np.random.default_rng(0)
    blocks, caps = [[0, 4, 5], [1, 2], [3, 6, 7, 8]], [2, 1, 2]
    cases = [(UniformMatroid(7, 3), np.ones((1, 7)), [3.0]),
             (PartitionMatroid(blocks, caps),
              np.array([[float(i in b) for i in range(9)] for b in blocks]), caps)]
    for domain, a_ub, b_ub in cases:
        for c in rng.normal(size=(15, domain.n)):
            ref = lp_minimum(c, domain.vertices(), A_ub=a_ub, b_ub=b_ub, bounds=(0, 1))
            assert c @ domain.linear_minimizer(c) == pytest.approx(ref, abs=lp_tolerance(c))


def test_graphic_oracle_matches_brute_force_on_random_graphs():
    rng = np.random.default_rng(1)
    for _ in range(25):
        domain = GraphicMatroid(*random_graph(rng))
        verts = domain.vertices()
        for c in rng.normal(size=(8, domain.n)):
            v = domain.linear_minimizer(c)
            assert c @ v == pytest.approx((verts @ c).min(), abs=1e-12)
            assert domain.is_independent(v.astype(bool))


def test_oracle_skips_loops_and_nonnegative_costs():
    domain = GraphicMatroid(3, [(0, 1), (1, 1), (1, 2), (0, 2)])
    np.testing.assert_array_equal(domain.linear_minimizer([-1.0, -5.0, -1.0, -1.0]),
                                  [1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(domain.linear_minimizer([1.0, -5.0, 0.0, 2.0]), np.zeros(4))
    np.testing.assert_array_equal(domain.loops, [False, True, False, False])


# -------------------------------------------------------------------- ranks
def test_rank_and_independence_match_brute_force():
    rng = np.random.default_rng(2)
    domains = [UniformMatroid(6, 2), PartitionMatroid([[0, 3], [1, 2, 4], [5]], [1, 2, 0])]
    domains += [GraphicMatroid(*random_graph(rng)) for _ in range(10)]
    for domain in domains:
        table = brute_rank_table(domain.vertices())
        masks = subset_masks(domain.n)
        for m in rng.choice(len(masks), size=min(20, len(masks)), replace=False):
            mask = masks[m]
            assert domain.rank(mask) == table[m]
            assert domain.rank(np.flatnonzero(mask).tolist()) == table[m]
            assert domain.is_independent(mask) == (table[m] == mask.sum())
        assert domain.full_rank == table[-1]
        assert domain.rank([]) == 0


def test_is_basis_and_subset_errors():
    domain = GraphicMatroid(3, [(0, 1), (1, 2), (0, 2)])
    assert domain.is_basis([0, 1]) and not domain.is_basis([0]) and domain.rank([0, 1, 2]) == 2
    with pytest.raises(ValueError):
        domain.rank([0, 3])
    with pytest.raises(ValueError):
        domain.rank(np.ones(4, dtype=bool))
    with pytest.raises(ValueError):
        domain.rank([0.5])


# --------------------------------------------------------------- membership
@pytest.mark.parametrize("method", ["node-sets", "min-cut"])
def test_graphic_contains_matches_brute_force(method):
    rng = np.random.default_rng(3)
    verdicts = []
    for _ in range(30):
        domain = GraphicMatroid(*random_graph(rng, max_nodes=7, max_edges=11))
        if method == "min-cut":
            domain.node_enum_limit = 0
        table = brute_rank_table(domain.vertices())
        for x in near_boundary_points(domain, rng, 8):
            verdicts.append(brute_contains(x, table))
            assert domain.contains(x) == verdicts[-1]
    assert 0.2 < np.mean(verdicts) < 0.8  # both answers are exercised


def test_uniform_and_partition_contains_match_brute_force():
    rng = np.random.default_rng(4)
    for domain in [UniformMatroid(6, 2), UniformMatroid(5, 4),
                   PartitionMatroid([[0, 3], [1, 2, 4], [5]], [1, 2, 0])]:
        table = brute_rank_table(domain.vertices())
        verdicts = []
        for x in near_boundary_points(domain, rng, 40):
            verdicts.append(brute_contains(x, table))
            assert domain.contains(x) == verdicts[-1]
        assert 0 < np.mean(verdicts) < 1


def test_contains_rejects_simple_violations():
    domain = UniformMatroid(4, 2)
    assert domain.contains([1.0, 1.0, 0.0, 0.0])
    assert not domain.contains([1.0, 1.0, 1e-3, 0.0])  # sum > k
    assert not domain.contains([1.001, 0.0, 0.0, 0.0])  # x_i > 1
    assert not domain.contains([0.5, -1e-3, 0.0, 0.0])  # x_i < 0
    loopy = GraphicMatroid(2, [(0, 1), (1, 1)])
    assert not loopy.contains([0.5, 1e-3])  # mass on a loop


# --------------------------------------------------- generic (oracle-only) path
def test_generic_path_agrees_with_graphic():
    rng = np.random.default_rng(5)
    for _ in range(5):
        graphic = GraphicMatroid(*random_graph(rng, max_nodes=5, max_edges=8))
        generic = OracleOnly(graphic)
        np.testing.assert_array_equal(generic.loops, graphic.loops)
        np.testing.assert_array_equal(generic._rank_table, graphic._rank_table)
        assert generic.full_rank == graphic.full_rank
        assert generic.diameter == pytest.approx(graphic.diameter)
        np.testing.assert_array_equal(generic.vertices(), graphic.vertices())
        for c in rng.normal(size=(5, graphic.n)):
            np.testing.assert_array_equal(generic.linear_minimizer(c), graphic.linear_minimizer(c))
        for x in near_boundary_points(graphic, rng, 10):
            assert generic.contains(x) == graphic.contains(x)


def test_from_oracle():
    domain = MatroidPolytope.from_oracle(5, lambda mask: mask.sum() <= 2)
    exact = UniformMatroid(5, 2)
    assert sorted(map(tuple, domain.vertices())) == sorted(map(tuple, exact.vertices()))
    assert domain.full_rank == 2 and domain.diameter == pytest.approx(exact.diameter)
    assert domain.rank([0, 1, 4]) == 2 and domain.is_independent([3])
    with pytest.raises(ValueError, match="empty set"):
        MatroidPolytope.from_oracle(3, lambda mask: False)
    with pytest.raises(ValueError, match="n="):
        MatroidPolytope.from_oracle(0, lambda mask: True)
    with pytest.raises(TypeError):
        MatroidPolytope(3)  # abstract: needs is_independent


def test_generic_path_beyond_the_table_uses_frank_wolfe():
    rng = np.random.default_rng(6)
    exact = UniformMatroid(14, 3)
    generic = MatroidPolytope.from_oracle(14, exact.is_independent)
    assert generic.n > generic.table_limit and generic.vertices() is None
    assert generic.diameter == pytest.approx(math.sqrt(6))  # the bound min(2r, n) is exact here
    points = [exact.project(rng.random(14) * 0.6) for _ in range(5)]  # on or near the boundary
    points += [p * 1.01 for p in points] + [np.full(14, 3 / 14), np.full(14, 3 / 14 + 1e-6)]
    for x in points:
        assert generic.contains(x) == exact.contains(x)


# ------------------------------------------------------------------ geometry
def test_graphic_diameter_is_exact_for_small_graphs():
    rng = np.random.default_rng(7)
    for _ in range(15):
        domain = GraphicMatroid(*random_graph(rng, max_nodes=6, max_edges=9))
        assert domain.diameter == pytest.approx(max_pairwise(domain.vertices()))


def test_graphic_diameter_exact_where_the_simple_bound_is_loose():
    # Three parallel edges and a path: r = 4, 6 edges, but any two disjoint forests
    # use at most 2 of the parallel edges: max |I xor J| = 5 < min(2 r, m) = 6.
    domain = GraphicMatroid(5, [(0, 1), (0, 1), (0, 1), (1, 2), (2, 3), (3, 4)])
    assert domain.diameter == pytest.approx(math.sqrt(5))
    assert max_pairwise(domain.vertices()) == pytest.approx(math.sqrt(5))


def test_graphic_diameter_bound_for_large_graphs():
    k7 = [(i, j) for i in range(7) for j in range(i + 1, 7)]  # 21 edges > 16
    domain = GraphicMatroid(7, k7)
    assert domain.vertices() is None
    assert domain.diameter == pytest.approx(math.sqrt(12))  # min(2 r, m) = 12, attained
    assert domain.norm_bound(1) == 6 and domain.norm_bound(2) == pytest.approx(math.sqrt(6))


def test_graphic_contains_on_a_large_graph_uses_min_cut():
    rng = np.random.default_rng(8)
    edges = [(i, j) for i in range(14) for j in range(i + 1, 14) if rng.random() < 0.3]
    domain = GraphicMatroid(14, edges)
    assert domain._node_set_constraints is None
    for _ in range(3):
        y = domain.project(rng.random(domain.n))  # on the boundary
        assert domain.contains(y)
        assert not domain.contains(y + 1e-4 * (y > 0))
        assert domain.contains(0.99 * y)


@pytest.mark.parametrize("n,k", [(3, 1), (5, 2), (6, 5), (4, 4)])
def test_uniform_inner_ball_is_the_largest(n, k):
    domain = UniformMatroid(n, k)
    center, radius = domain.inner_ball()
    assert radius == pytest.approx(min(0.5, k / (n + math.sqrt(n))))
    # Both facet families through which the ball is tight: x_0 >= 0, and sum x <= k
    # (if radius < 1/2) or x_0 <= 1 (if radius = 1/2).
    unit = np.eye(n)[0]
    other = np.ones(n) / math.sqrt(n) if radius < 0.5 else unit
    for u in (-unit, other):
        assert domain.contains(center + radius * u)
        assert not domain.contains(center + 1.001 * radius * u)


# -------------------------------------------------------------- constructors
@pytest.mark.parametrize("n,k", [(0, 1), (3, 0), (3, 4), (2.5, 1), (3, True)])
def test_uniform_rejects(n, k):
    with pytest.raises(ValueError):
        UniformMatroid(n, k)


@pytest.mark.parametrize("blocks,caps", [
    ([[0, 1], [1, 2]], [1, 1]),   # overlap
    ([[0, 2]], [1]),              # 1 missing
    ([[0], []], [1, 1]),          # empty block
    ([], []),
    ([[0, 1]], [-1]),
    ([[0, 1]], [1, 1]),           # length mismatch
    ([[0, 1]], [1.5]),
    ([[0, 1.0]], [1]),
])
def test_partition_rejects(blocks, caps):
    with pytest.raises(ValueError):
        PartitionMatroid(blocks, caps)


@pytest.mark.parametrize("n_nodes,edges", [
    (3, [(0, 3)]), (3, [(-1, 0)]), (3, []), (0, [(0, 0)]), (3, [(0, 1, 2)]), (3, [(0, 0.5)]),
])
def test_graphic_rejects(n_nodes, edges):
    with pytest.raises(ValueError):
        GraphicMatroid(n_nodes, edges)


def test_partition_broadcast_capacity_and_names():
    domain = PartitionMatroid([[0, 1], [2, 3, 4]], 1)
    assert domain.full_rank == 2 and domain.name == "matroid-partition"
    assert UniformMatroid(3, 1).name == "matroid-uniform"
    assert GraphicMatroid(2, [(0, 1)]).name == "matroid-graphic"
    assert len(list(itertools.islice(domain.vertices(), 100))) == 3 * 4
