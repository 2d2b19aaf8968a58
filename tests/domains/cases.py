"""Small instances of every domain, with the facts the tests check them against."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dp_online_envs import domains as dom

#: A small DAG with useless edges: (3, 6) is a dead end and (7, 2) is unreachable.
DAG_EDGES = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 5), (1, 5),
             (3, 6), (7, 2)]
K4_PLUS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (2, 2), (0, 1)]  # loop, parallel


def facility_location(n: int, m: int, seed: int) -> Callable[[np.ndarray], float]:
    """``f(S) = sum_j max_{i in S} w_ij`` (monotone submodular, 0 on the empty set)."""
    w = np.random.default_rng(seed).uniform(0.1, 1.0, size=(n, m))

    def f(mask: np.ndarray) -> float:
        return float(w[mask].max(axis=0).sum()) if mask.any() else 0.0

    return f


def separable(mask: np.ndarray) -> float:
    """Components {0, 1, 2} and {3, 4}."""
    return float(np.sqrt(mask[:3].sum()) + min(mask[3:].sum(), 1))


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable[[], dom.Domain]
    rank: int


CASES = [
    Case("simplex-6", lambda: dom.Simplex(6), 5),
    Case("simplex-1", lambda: dom.Simplex(1), 0),
    Case("arms-5", lambda: dom.Arms(5), 4),
    Case("l1ball-4", lambda: dom.L1Ball(4, 2.0), 4),
    Case("box-degenerate", lambda: dom.Box([0.0, -1.0, 2.0], [1.0, 1.0, 2.0]), 2),
    Case("cube-3", lambda: dom.Cube(3), 3),
    Case("ground-set-4", lambda: dom.GroundSet(4), 4),
    Case("uniform-6-2", lambda: dom.UniformMatroid(6, 2), 6),
    Case("uniform-4-4", lambda: dom.UniformMatroid(4, 4), 4),
    Case("partition", lambda: dom.PartitionMatroid([[0, 3], [1, 2, 4], [5]], [1, 2, 0]), 5),
    Case("graphic-k4-plus", lambda: dom.GraphicMatroid(4, K4_PLUS), 7),
    Case("graphic-cycle", lambda: dom.GraphicMatroid(5, [(i, (i + 1) % 5) for i in range(5)]), 5),
    Case("flow-grid-3x3", lambda: dom.FlowPolytope.grid(3, 3), 4),
    Case("flow-dag", lambda: dom.FlowPolytope(8, DAG_EDGES, 0, 5), 4),
    Case("flow-parallel", lambda: dom.FlowPolytope(3, [(0, 1), (0, 1), (1, 2)], 0, 2), 1),
    Case("flow-one-path", lambda: dom.FlowPolytope(3, [(0, 1), (1, 2)], 0, 2), 0),
    Case("base-sqrt-5", lambda: dom.SubmodularBasePolytope.concave_cardinality(5), 4),
    Case("permutahedron-4", lambda: dom.SubmodularBasePolytope.permutahedron(4), 3),
    Case("base-facility-5",
         lambda: dom.SubmodularBasePolytope(facility_location(5, 3, seed=7), 5), 4),
    Case("base-separable-5", lambda: dom.SubmodularBasePolytope(separable, 5), 3),
    Case("base-modular-3",
         lambda: dom.SubmodularBasePolytope(lambda m: float(m @ [1.0, -2.0, 0.5]), 3), 0),
    Case("birkhoff-1", lambda: dom.Birkhoff(1), 0),
    Case("birkhoff-3", lambda: dom.Birkhoff(3), 4),
    Case("birkhoff-4", lambda: dom.Birkhoff(4), 9),
]
