"""Seeded games of the paths :mod:`test_fingerprints` does not reach, fingerprinted.

The registered cases of ``test_all_agents.CASES`` play EXP2 on arms (K = 10) with the
default counters only. These extra games pin, bit for bit, the code paths a refactoring
of EXP2 and of the continual counters could change without the main fingerprints
noticing: EXP2 on a non-arm finite set (the vertices of the cube, directly and inside
the private reduction), the NumPy sampling path of the arms engine (K = 100 > 64), and
the tree, Honaker and factorization counters under Laplace and Gaussian noise.
Fingerprints are :func:`test_fingerprints.fingerprint` of the game (40 rounds, seed 7).
"""

from __future__ import annotations

import pytest

from test_fingerprints import case_id, fingerprint

PRIV = {"epsilon": 1.0}
GAUSS = {"epsilon": 1.0, "delta": 1e-5}
CUBE = {"domain": "cube", "dim": 3}   # 8 vertices: EXP2's general finite-set path

#: (agent, env id, env options, agent options, SHA-256) recorded before the refactoring.
RECORDED = [
    ("exp2", "DPBandit-Linear-v0", CUBE, {},
     "5bc88e5cab605a1107558e0c5413a81084cbcf9f190de2cc848afe80e4b499ba"),
    ("private-exp2", "DPBandit-Linear-v0", CUBE, PRIV,
     "9aa2aa8d06e2ec083b37c64d11e3265c0ecc70be9bcb3dfc0f63d87c6d915eaa"),
    ("private-bandit", "DPBandit-Linear-v0", CUBE, {**PRIV, "base": "exp2"},
     "9aa2aa8d06e2ec083b37c64d11e3265c0ecc70be9bcb3dfc0f63d87c6d915eaa"),
    ("exp2", "DPBandit-MAB-v0", {"n_arms": 100}, {},
     "51ed379d1fb258986c2928996a69ca8979870ad0c3482550f0af204ce895e10a"),
    ("exp3", "DPBandit-MAB-v0", {"n_arms": 100}, {},
     "e57512074e3e2add286bacdedbb9a4ffd372d121c55622fc45f12301266385c6"),
    ("private-exp2", "DPBandit-MAB-v0", {"n_arms": 100}, PRIV,
     "ae2b1c95d13bdb5ea4d05f5d2197dfc7556b65ae1db9b96b82b44e9538955543"),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "tree"},
     "a4d232e141a427ab87fc0c18b6bdf95ee727ff2ef67c359788290ed627d7916a"),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**PRIV, "counter": "honaker"},
     "ad591b0ce8e16b193c54b07c9a9568dc41e2831884aa457b33fb4dac8ee3b165"),
    ("private-ftrl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"},
     "516a6193380c8b2d89497d8d33f7463c4f547c1de3b17d3cb1399d26c792b6d7"),
    ("private-ftrl", "DPFullInfo-Sphere-v0", {}, {**GAUSS, "counter": "factorization"},
     "c35ae2d1cd55c8fb33906b00c2ed4ce1bbf1d20f4ac93bf78211e8b7678a1521"),
    ("private-ftrl", "DPFullInfo-Sphere-v0", {}, {**GAUSS, "counter": "tree"},
     "4812f12e972c722d107e7145d4e4db980b4f5d99d2c8f152393a8d574befe634"),
    ("private-ftpl", "DPFullInfo-Experts-v0", {}, {**GAUSS, "counter": "honaker"},
     "c045c61323e522d031d2fef9c7be8adb245e6fd527bec348f4d24c6c86ec0822"),
]
CASES = [row[:4] for row in RECORDED]
DIGESTS = [row[4] for row in RECORDED]


@pytest.mark.parametrize("case, digest", list(zip(CASES, DIGESTS)),
                         ids=[case_id(c) for c in CASES])
def test_seeded_play_is_unchanged(case, digest):
    assert fingerprint(*case) == digest
