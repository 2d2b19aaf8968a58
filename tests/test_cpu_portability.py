"""Seeded games, and every verdict on floats, are the same on every x86-64 CPU.

NumPy picks SIMD kernels at run time (AVX-512, AVX2, ... down to its baseline) and so
does OpenBLAS (its core type); numba compiles for the host CPU. Summation order and
fused multiply-adds differ between them, so floats differ in their last bits from one
CPU to another. Here tests run again in a child process at two lower levels, so that a
result that holds only on the machine that recorded it fails on this one:

* **x86-64-v2** (:func:`lowest_simd_env`): every NumPy dispatch target above the
  baseline disabled and OpenBLAS pinned to its Nehalem (SSE4.2) kernels: the seeded-game
  fingerprints and the vector-equals-scalar games (:data:`BASELINE_TESTS`).
* **AVX2** (:func:`avx2_env`, x86-64-v3: the most common CPU without AVX-512): NumPy's
  AVX-512 targets disabled and OpenBLAS on its Haswell kernels: every
  numerics-sensitive test (:data:`NUMERICS_TESTS`): the fingerprints, the vector games,
  the compiled path against the Python path, and every test that decides a verdict on
  an interval (the studies, Fieller's interval, the report, the rates). On a CPU
  without AVX2 this level is the host's own.

numba is not pinned to an older CPU: its kernels are compiled without fast-math, so
LLVM neither reassociates nor contracts their float operations, and the vector width
of the target changes no bit (the math functions are the C library's, which picks its
variant at run time whatever numba's target). Measured: every test of
:data:`NUMERICS_TESTS` passed with numba compiling for Haswell as for an AVX-512 host
(AMD EPYC, Zen 4), the same fingerprints, and numba's code for ``a * b + c`` is a
multiply and an add (no FMA) unless fast-math allows contraction; the Haswell build cost
every fresh checkout a second compile of the kernels (about 15 s of CPU) and saw nothing
the host build does not.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: What runs at the lowest SIMD level.
BASELINE_TESTS = ["tests/agents/test_fingerprints.py", "tests/vector/test_vector_games.py"]
#: What runs at the AVX2 level: every test whose result depends on the last bits of a
#: float (a fingerprint, a bit-for-bit comparison, a verdict decided on an interval).
NUMERICS_TESTS = [
    *BASELINE_TESTS,
    "tests/agents/test_compiled.py::test_same_game_bit_for_bit",
    "tests/agents/test_compiled.py::test_same_game_bit_for_bit_on_the_other_polytopes",
    "tests/agents/test_compiled.py::test_seeded_and_threaded_runs_repeat",
    "tests/test_studies.py",
    "tests/experiments/test_ratio_ci.py",
    "tests/experiments/test_report_truth.py",
    "tests/experiments/test_rates_fit.py",
]
X86 = platform.machine().lower() in ("x86_64", "amd64")


def lowest_simd_env() -> dict[str, str]:
    """The environment that limits NumPy to its baseline and OpenBLAS to Nehalem."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(__cpu_dispatch__))
    if X86:
        env["OPENBLAS_CORETYPE"] = "Nehalem"
    return env


def has_avx2() -> bool:
    """Whether this CPU has AVX2 (NumPy's x86-64-v3 level, or its older ``AVX2`` flag)."""
    from numpy._core._multiarray_umath import __cpu_features__

    return X86 and bool(__cpu_features__.get("X86_V3") or __cpu_features__.get("AVX2"))


def above_avx2() -> list[str]:
    """NumPy's dispatch targets above AVX2: x86-64-v4 and every AVX-512 group."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return [f for f in __cpu_dispatch__ if f == "X86_V4" or f.startswith("AVX512")]


def avx2_env() -> dict[str, str]:
    """The environment of an AVX2 machine without AVX-512: NumPy's AVX-512 targets off,
    OpenBLAS on Haswell kernels (the host's own settings on a CPU without AVX2, where
    Haswell code would not run)."""
    env = dict(os.environ)
    if has_avx2():
        env.update(NPY_DISABLE_CPU_FEATURES=" ".join(above_avx2()),
                   OPENBLAS_CORETYPE="Haswell")
    return env


LEVELS = {"x86-64-v2": (lowest_simd_env, BASELINE_TESTS), "avx2": (avx2_env, NUMERICS_TESTS)}

PROBE = """\
import json, numpy, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
blas = [i.get('architecture') for i in threadpoolctl.threadpool_info()
        if i['internal_api'] == 'openblas']
print(json.dumps({'on': [f for f in __cpu_dispatch__ if __cpu_features__[f]],
                  'blas': blas}))
"""


def probe(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(out)


def test_the_child_runs_at_the_lowest_simd_level():
    seen = probe(lowest_simd_env())
    assert seen["on"] == []
    if X86:
        assert seen["blas"] and set(seen["blas"]) == {"Nehalem"}


def test_the_child_runs_at_the_avx2_level():
    seen = probe(avx2_env())
    assert not set(seen["on"]) & set(above_avx2())
    if has_avx2():
        assert "X86_V3" in seen["on"] or "AVX2" in seen["on"]
        assert seen["blas"] and set(seen["blas"]) == {"Haswell"}


@pytest.mark.parametrize("level", LEVELS)
def test_seeded_games_and_verdicts_hold_at_a_lower_simd_level(level):
    env_of, tests = LEVELS[level]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
         *tests],
        cwd=ROOT, env=env_of(), capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-2000:]


def test_no_compiled_kernel_uses_fast_math():
    """The AVX2 level leaves numba on the host CPU (module docstring) because no kernel
    allows LLVM to reassociate or contract floats: a kernel with ``fastmath`` would
    make its bits depend on the target's vector width and FMA, and fails here."""
    import importlib

    from numba.core.registry import CPUDispatcher

    kernels = [v for name in ("agents.compiled.kernels", "agents.compiled.long_horizon",
                              "agents.privacy.discrete_compiled")
               for v in vars(importlib.import_module(name)).values()
               if isinstance(v, CPUDispatcher)]
    assert len(kernels) >= 21
    for kernel in kernels:
        assert not kernel.targetoptions.get("fastmath"), kernel.py_func.__qualname__
