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


# --------------------------------------------------------------------------------------
# Sparse structure: the CSR membership test, the level-by-level oracle and
# the projection against independent references.
# --------------------------------------------------------------------------------------


def relabelled_dag(rng, n_nodes):
    """A random DAG whose node indices are NOT a topological order, with a parallel
    edge and possibly useless edges; source and sink relabelled too."""
    edges = [(i, j) for i in range(n_nodes) for j in range(i + 1, n_nodes) if rng.random() < 0.4]
    edges += [(0, 1), (1, n_nodes - 1), (0, 1)]
    perm = rng.permutation(n_nodes)
    edges = [(int(perm[u]), int(perm[v])) for u, v in edges]
    return FlowPolytope(n_nodes, edges, int(perm[0]), int(perm[n_nodes - 1]))


def dense_contains(domain, x, atol):
    """The former membership test: a dense ``V x E`` mat-vec."""
    x = np.asarray(x, dtype=np.float64)
    return bool(x.min() >= -atol and np.all(x[~domain.useful] <= atol)
                and np.all(np.abs(domain.incidence @ x - domain._rhs) <= atol))


def node_by_node_dp(domain, c):
    """The former oracle: per node in topological order, ``argmin`` over its useful
    incoming edges in increasing index (first minimum wins)."""
    dist = np.full(domain.n_nodes, math.inf)
    dist[domain.source] = 0.0
    pred = np.full(domain.n_nodes, -1)
    for v in domain.order:
        ins = np.array([e for e in range(domain.dim)
                        if domain.useful[e] and domain.edges[e, 1] == v], dtype=np.intp)
        if ins.size == 0:
            continue
        vals = dist[domain.edges[ins, 0]] + c[ins]
        k = int(np.argmin(vals))
        if vals[k] < math.inf:
            dist[v], pred[v] = vals[k], ins[k]
    x = np.zeros(domain.dim)
    node = domain.sink
    while node != domain.source:
        x[pred[node]] = 1.0
        node = int(domain.edges[pred[node], 0])
    return x


def all_paths(domain):
    """Every s-t path's indicator, by depth-first search over ALL edges (useless ones
    included, which lead nowhere), independent of the domain's own enumeration."""
    out = {}
    for e, (u, v) in enumerate(domain.edges.tolist()):
        out.setdefault(u, []).append((e, v))
    paths = []

    def walk(node, used):
        if node == domain.sink:
            x = np.zeros(domain.dim)
            x[used] = 1.0
            paths.append(x)
            return
        for e, v in out.get(node, []):
            walk(v, used + [e])

    walk(domain.source, [])
    return np.array(paths)


FLOW_SHAPES = [(2, 2), (1, 5), (3, 4), (4, 3), (6, 8), (12, 16), (24, 32)]


def test_sparse_incidence_is_the_incidence():
    rng = np.random.default_rng(3)
    for domain in [FlowPolytope.grid(*g) for g in FLOW_SHAPES[:5]] + [
            relabelled_dag(rng, 9) for _ in range(5)] + [FlowPolytope(8, DAG_EDGES, 0, 5)]:
        np.testing.assert_array_equal(domain.incidence_sparse.toarray(), domain.incidence)
        assert domain.incidence_sparse.nnz == 2 * domain.dim


@pytest.mark.parametrize("shape", FLOW_SHAPES)
def test_sparse_membership_equals_the_dense_reference(shape):
    """Inside (mixtures of paths), on faces (some x_e = 0: a single path, a mixture of
    two), just inside / just outside by half / twice ``atol`` in every violation kind
    (negativity, conservation, outflow at s, useless edges), and far outside."""
    rng = np.random.default_rng(sum(shape))
    domain = FlowPolytope.grid(*shape)
    atol = 1e-9
    points = []
    for _ in range(12):
        paths = np.array([domain.linear_minimizer(rng.normal(size=domain.dim))
                          for _ in range(3)])
        w = rng.dirichlet(np.ones(3))
        inside, face = w @ paths, paths[0]
        points += [inside, face, 0.5 * (paths[0] + paths[1])]
        zero = np.flatnonzero(face == 0)
        for scale in (0.5 * atol, 2.0 * atol):
            if zero.size:  # (a single path, as on a 1 x n grid, has no zero entry)
                neg = face.copy()
                neg[rng.choice(zero)] = -scale  # below a facet x_e >= 0
                points.append(neg)
            bump = inside.copy()
            bump[rng.integers(domain.dim)] += scale  # breaks conservation at two nodes
            points.append(bump)
            points.append((1.0 + scale) * inside)  # outflow 1 + scale at s
            points.append(inside + scale * rng.normal(size=domain.dim))
        points.append(2.0 * inside)
    answers = []
    degree = np.abs(domain.incidence).sum(axis=1)
    for x in points:
        for tol in (atol, 1e-6):
            got = domain.contains(x, tol)
            assert got == dense_contains(domain, x, tol), (x, tol)
            answers.append(got)
        # With atol = 0 the two may differ: their sums round differently. The stated
        # bound on that difference, node by node:
        sparse = domain.incidence_sparse @ x
        dense = domain.incidence @ x
        bound = degree * np.finfo(float).eps * np.abs(x).max()
        assert np.all(np.abs(sparse - dense) <= bound)
    assert any(answers) and not all(answers)  # both outcomes were exercised


def test_sparse_membership_on_dags_with_useless_edges():
    rng = np.random.default_rng(4)
    checked = 0
    for _ in range(20):
        domain = relabelled_dag(rng, int(rng.integers(4, 10)))
        for _ in range(10):
            x = domain.linear_minimizer(rng.normal(size=domain.dim))
            for y in (x, x + 1e-8 * rng.normal(size=domain.dim),
                      x + 1e-10 * rng.normal(size=domain.dim)):
                assert domain.contains(y) == dense_contains(domain, y, 1e-9)
                checked += 1
            if (~domain.useful).any():
                z = x.copy()
                z[np.flatnonzero(~domain.useful)[0]] = 2e-9
                assert not domain.contains(z) and not dense_contains(domain, z, 1e-9)
    assert checked == 600
    assert not FlowPolytope.grid(2, 2).contains(np.array([1.0, np.nan, 1.0, 0.0]))
    assert not FlowPolytope.grid(2, 2).contains(np.ones(3))


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 3), (3, 4), (1, 4), (4, 4)])
def test_oracle_equals_brute_force_over_all_paths(shape):
    rng = np.random.default_rng(shape[0] * 10 + shape[1])
    domain = FlowPolytope.grid(*shape)
    paths = all_paths(domain)
    assert len(paths) == math.comb(shape[0] + shape[1] - 2, shape[0] - 1)
    for trial in range(60):
        c = rng.normal(size=domain.dim)
        if trial % 3 == 0:
            c = rng.integers(-1, 2, size=domain.dim).astype(float)  # many ties
        v = domain.linear_minimizer(c)
        assert any(np.array_equal(v, p) for p in paths)  # a vertex
        assert c @ v == pytest.approx((paths @ c).min(), abs=1e-12)
        np.testing.assert_array_equal(v, node_by_node_dp(domain, c))  # same tie-break


def test_oracle_is_the_node_by_node_dp_bit_for_bit():
    """On DAGs whose labels are not a topological order (parallel and useless edges,
    costs with ties) and on larger grids, the level-by-level oracle returns exactly the
    vertex of the former node-by-node DP."""
    rng = np.random.default_rng(5)
    domains = [relabelled_dag(rng, int(rng.integers(3, 12))) for _ in range(25)]
    domains += [FlowPolytope(8, DAG_EDGES, 0, 5), FlowPolytope.grid(6, 8),
                FlowPolytope.grid(12, 16)]
    for domain in domains:
        paths = all_paths(domain) if domain.dim < 60 else None
        for trial in range(20):
            c = rng.normal(size=domain.dim) * 10.0 ** rng.integers(-3, 4)
            if trial % 2:
                c = np.round(c)
            v = domain.linear_minimizer(c)
            np.testing.assert_array_equal(v, node_by_node_dp(domain, c))
            assert domain.contains(v)
            if paths is not None:
                assert c @ v == pytest.approx((paths @ c).min(), abs=1e-9 * np.abs(c).sum())


@pytest.mark.parametrize("shape", [(3, 4), (4, 4), (6, 8)])
def test_projection_is_feasible_and_obtuse(shape):
    """``y = project(x)`` lies in F and ``<x - y, v - y> <= projection_tol`` for every
    path v (checked against all of them), i.e. the variational inequality of the
    Euclidean projection holds to the stated Frank-Wolfe gap."""
    rng = np.random.default_rng(7 + shape[1])
    domain = FlowPolytope.grid(*shape)
    paths = all_paths(domain)
    tol = domain.projection_tol
    for scale in (0.1, 1.0, 10.0):
        for _ in range(4):
            x = domain.center + scale * rng.normal(size=domain.dim)
            y = domain.project(x)
            assert domain.contains(y, 1e-9)
            worst = float(((paths - y) @ (x - y)).max())
            assert worst <= tol * (1.0 + 1e-6) + 1e-12
            # and the oracle finds that worst vertex (the gap the solver stopped at)
            v = domain.linear_minimizer(y - x)
            assert float((v - y) @ (x - y)) == pytest.approx(worst, abs=1e-12)
    inside = paths[:5].mean(axis=0)
    np.testing.assert_allclose(domain.project(inside), inside, atol=math.sqrt(2 * tol))


# --------------------------------------------------------------------------------------
# Sparse geometry: the hull basis from fundamental cycles and the
# Chebyshev center by a sparse LP, against the former dense constructions.
# --------------------------------------------------------------------------------------


def dense_chebyshev_radius(domain):
    """The former construction: ``scipy.linalg.null_space`` of the dense incidence on
    the useful edges and the LP ``max r s.t. p + B u >= r ||B^T e_e||`` in the hull
    coordinates (any relative-interior point p)."""
    import scipy.linalg
    from scipy.optimize import linprog

    useful = np.flatnonzero(domain.useful)
    null = scipy.linalg.null_space(domain.incidence[:, useful])
    k = null.shape[1]
    if k == 0:
        return 0.0
    p = np.mean([domain.linear_minimizer(-np.eye(domain.dim)[e]) for e in useful], 0)[useful]
    norms = np.linalg.norm(null, axis=1)
    free = norms > 1e-9
    res = linprog(np.r_[np.zeros(k), -1.0], A_ub=np.c_[-null[free], norms[free]],
                  b_ub=p[free], bounds=[(None, None)] * k + [(0, None)], method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("seed", range(12))
def test_sparse_hull_and_center_match_the_dense_constructions(seed):
    """Random DAGs (relabelled, parallel and useless edges): the basis is orthonormal,
    spans exactly the null space of A on the useful edges (rank from the vertices), the
    center satisfies ``A x = b`` to rounding, and the radius equals the dense LP's and
    is attained with the facet weights ``||P e_e||`` read off the basis."""
    rng = np.random.default_rng(seed)
    domain = relabelled_dag(rng, int(rng.integers(5, 10))) if seed % 2 else random_dag(
        rng, int(rng.integers(4, 9)))
    hull = domain.affine_hull
    basis, useful = hull.basis, domain.useful
    k = hull.rank
    np.testing.assert_allclose(basis.T @ basis, np.eye(k), atol=1e-12)
    assert np.all(basis[~useful] == 0)
    np.testing.assert_allclose(domain.incidence @ basis, 0.0, atol=1e-12)
    verts = domain.vertices()
    assert k == (np.linalg.matrix_rank(verts - verts[0]) if len(verts) > 1 else 0)
    center, radius = domain.inner_ball()
    np.testing.assert_allclose(domain.incidence @ center, domain._rhs, atol=1e-12)
    assert domain.contains(center, atol=1e-12)
    np.testing.assert_array_equal(hull.point, center)
    assert radius == pytest.approx(dense_chebyshev_radius(domain), abs=1e-7)
    norms = np.linalg.norm(basis[useful], axis=1)
    free = norms > 1e-9
    if free.any():
        assert radius == pytest.approx(float((center[useful][free] / norms[free]).min()),
                                       rel=1e-9, abs=1e-12)
        # the ball of that radius around the center stays in the polytope
        u = rng.normal(size=(20, k))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        for point in center + radius * (1 - 1e-9) * (u @ basis.T):
            assert domain.contains(point, atol=1e-12)
    else:
        assert radius == 0.0


def test_large_grid_geometry_is_consistent():
    """24 x 32 (the benchmark's largest): rank (rows-1)(cols-1), orthonormal basis in
    the null space, the center in the polytope with a positive radius."""
    domain = FlowPolytope.grid(24, 32)
    hull = domain.affine_hull
    assert hull.rank == 23 * 31
    gram = hull.basis.T @ hull.basis
    assert np.abs(gram - np.eye(hull.rank)).max() <= 1e-12
    assert np.abs(domain.incidence_sparse @ hull.basis).max() <= 1e-12
    center, radius = domain.inner_ball()
    assert domain.contains(center, atol=1e-12) and radius > 0.0
    norms = np.linalg.norm(hull.basis, axis=1)
    assert radius == pytest.approx(float((center / norms).min()), rel=1e-9)


def test_center_is_moved_onto_the_flow_constraints(monkeypatch):
    """HiGHS meets ``A x = b`` only to its feasibility tolerance (1e-7): the center is
    corrected onto it (to rounding). Simulated with an LP answer perturbed by 1e-7."""
    import dp_online_envs.domains.flow as flow_module

    real = flow_module.linprog
    rng = np.random.default_rng(9)

    def sloppy(*args, **kwargs):
        res = real(*args, **kwargs)
        res.x = res.x + 1e-7 * rng.uniform(-1, 1, size=res.x.size)
        return res

    monkeypatch.setattr(flow_module, "linprog", sloppy)
    domain = FlowPolytope.grid(5, 6)
    center, radius = domain.inner_ball()
    np.testing.assert_allclose(domain.incidence @ center, domain._rhs, atol=1e-13)
    assert radius == pytest.approx(dense_chebyshev_radius(domain), abs=1e-6)
