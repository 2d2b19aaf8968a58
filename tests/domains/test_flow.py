"""The s-t path polytope of a DAG."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dp_online_envs.domains import FlowPolytope

from .cases import DAG_EDGES
from .checks import lp_minimum, lp_tolerance, max_pairwise


def random_dag(rng, n_nodes=7, p=0.45):
    """Random DAG on 0..n-1 (edges go up in index), with a guaranteed 0 -> n-1 path and
    possibly parallel edges."""
    edges = [(i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes) if rng.random() < p]
    edges += [(0, int(rng.integers(1, n_nodes)))]
    hop = sorted(rng.choice(np.arange(1, n_nodes - 1), size=2, replace=False).tolist())
    edges += [(0, hop[0]), (hop[0], hop[1]), (hop[1], n_nodes - 1)]
    return FlowPolytope(n_nodes, edges, 0, n_nodes - 1)


def test_oracle_matches_brute_force_and_linprog():
    rng = np.random.default_rng(0)
    for _ in range(15):
        domain = random_dag(rng)
        verts = domain.vertices()
        for c in rng.normal(size=(6, domain.dim)):
            v = domain.linear_minimizer(c)
            assert c @ v == pytest.approx((verts @ c).min(), abs=1e-12)
            ref = lp_minimum(c, verts, A_eq=domain.incidence, b_eq=domain._rhs, bounds=(0, None))
            assert c @ v == pytest.approx(ref, abs=lp_tolerance(c))
            assert domain.contains(v)


def test_grid():
    for rows, cols in [(2, 2), (3, 4), (1, 5), (4, 1)]:
        domain = FlowPolytope.grid(rows, cols)
        verts = domain.vertices()
        assert len(verts) == math.comb(rows + cols - 2, rows - 1)
        assert np.all(verts.sum(axis=1) == rows + cols - 2)
        assert domain.norm_bound(1) == rows + cols - 2
        assert domain.diameter == pytest.approx(max_pairwise(verts))
        assert domain.affine_hull.rank == (rows - 1) * (cols - 1)
    with pytest.raises(ValueError):
        FlowPolytope.grid(1, 1)
    with pytest.raises(ValueError):
        FlowPolytope.grid(0, 3)


def test_diameter_and_norms_are_exact_on_random_dags():
    rng = np.random.default_rng(1)
    for _ in range(15):
        domain = random_dag(rng, n_nodes=int(rng.integers(4, 8)))
        verts = domain.vertices()
        assert domain.diameter == pytest.approx(max_pairwise(verts))
        assert domain.norm_bound(1) == verts.sum(axis=1).max()
        assert domain.norm_bound(2) == pytest.approx(math.sqrt(verts.sum(axis=1).max()))
        assert domain.norm_bound(np.inf) == 1.0
        rank = np.linalg.matrix_rank(verts - verts[0]) if len(verts) > 1 else 0
        assert domain.affine_hull.rank == rank


def test_contains_violations():
    domain = FlowPolytope(8, DAG_EDGES, 0, 5)
    path = domain.linear_minimizer(np.ones(domain.dim))  # the 2-edge path 0 -> 1 -> 5
    assert domain.contains(path)
    bumped = path.copy()
    bumped[DAG_EDGES.index((1, 3))] += 1e-3  # breaks conservation at 3
    assert not domain.contains(bumped)
    other = domain.linear_minimizer(-np.ones(domain.dim))  # a longest path
    affine = 1.001 * path - 0.001 * other  # conserves flow, but has negative entries
    np.testing.assert_allclose(domain.incidence @ affine, domain._rhs, atol=1e-12)
    assert not domain.contains(affine)
    assert domain.contains(affine, atol=1e-2)
    useless = path.copy()
    useless[DAG_EDGES.index((3, 6))] = 1e-3
    assert not domain.contains(useless)
    assert not domain.contains(2.0 * path)


def test_useless_edges_and_interior_point():
    domain = FlowPolytope(8, DAG_EDGES, 0, 5)
    np.testing.assert_array_equal(~domain.useful, [e in [(3, 6), (7, 2)] for e in DAG_EDGES])
    point = domain.affine_hull.point
    assert np.all(point[domain.useful] > 0) and np.all(point[~domain.useful] == 0)
    center, radius = domain.inner_ball()
    assert radius > 0 and np.all(center[domain.useful] > 0)
    # The radius is tight at the center: some facet x_e >= 0 is at distance exactly r.
    norms = np.linalg.norm(domain.affine_hull.basis[domain.useful], axis=1)
    ratios = center[domain.useful][norms > 1e-12] / norms[norms > 1e-12]
    assert ratios.min() == pytest.approx(radius)


def test_inner_ball_is_no_worse_than_a_direct_chebyshev_lp():
    """The Chebyshev center of {x >= 0, A x = b, x_useless = 0} in the hull coordinates,
    solved independently with equality constraints."""
    domain = FlowPolytope.grid(3, 4)
    basis, useful = domain.affine_hull.basis, domain.useful
    k = basis.shape[1]
    norms = np.linalg.norm(basis[useful], axis=1)
    # variables (x, u, r): x = p + B u, x_e >= r ||B^T e_e||.
    n = domain.dim
    a_eq = np.hstack([np.eye(n), -basis, np.zeros((n, 1))])
    a_ub = np.hstack([-np.eye(n)[useful], np.zeros((useful.sum(), k)), norms[:, None]])
    cost = np.zeros(n + k + 1)
    cost[-1] = -1
    best = lp_minimum(cost, A_ub=a_ub, b_ub=np.zeros(useful.sum()), A_eq=a_eq,
                      b_eq=domain.affine_hull.point,
                      bounds=[(None, None)] * (n + k) + [(0, None)])  # status checked
    assert domain.inner_ball()[1] == pytest.approx(-best, abs=lp_tolerance(cost))


def test_single_path_and_parallel_edges():
    line = FlowPolytope(3, [(0, 1), (1, 2)], 0, 2)
    assert line.affine_hull.rank == 0 and line.inner_ball()[1] == 0.0 and line.diameter == 0.0
    np.testing.assert_array_equal(line.project(np.array([5.0, -2.0])), [1.0, 1.0])
    parallel = FlowPolytope(2, [(0, 1), (0, 1)], 0, 1)
    assert parallel.diameter == pytest.approx(math.sqrt(2))
    assert parallel.inner_ball()[1] == pytest.approx(math.sqrt(2) / 2)


@pytest.mark.parametrize("args,match", [
    ((3, [(0, 1), (1, 2), (2, 0)], 0, 2), "cycle"),
    ((3, [(0, 1), (1, 1), (1, 2)], 0, 2), "cycle"),
    ((3, [(0, 1), (2, 1)], 0, 2), "no path"),
    ((3, [(0, 3)], 0, 2), r"^edges\[0\] endpoint=3 rejected: expected an integer in \[0, 2\]$"),
    ((3, [(0, -1)], 0, 2), r"^edges\[0\] endpoint=-1 rejected: expected an integer in \[0, 2\]"),
    ((3, [(0, 1), (1, 2)], 0, 0), "distinct"),
    ((3, [(0, 1), (1, 2)], 0, 3), r"^sink=3 rejected: expected an integer in \[0, 2\]$"),
    ((3, [], 0, 2), "edges"),
    ((1, [(0, 0)], 0, 0), r"^n_nodes=1 rejected: expected an integer >= 2$"),
    ((3, [(0, 1.0)], 0, 1), r"^edges\[0\] endpoint=1\.0 rejected: .*, got a float$"),
    ((3, [(0, 1, 2)], 0, 1), "pair"),
])
def test_constructor_rejects(args, match):
    with pytest.raises(ValueError, match=match):
        FlowPolytope(*args)


def test_name_and_vertex_cap():
    assert FlowPolytope.grid(2, 2).name == "flow"
    big = FlowPolytope.grid(12, 12)  # C(22, 11) = 705432 paths
    assert big.vertices() is None
    v = big.linear_minimizer(np.random.default_rng(2).normal(size=big.dim))
    assert big.contains(v) and v.sum() == 22
