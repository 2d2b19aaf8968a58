"""Seeded games are the same games on every x86-64 CPU.

NumPy picks SIMD kernels at run time (AVX-512, AVX2, ... down to its baseline) and so
does OpenBLAS (its core type); summation order and fused multiply-adds differ between
them, so floats differ in their last bits from one CPU to another. Here the seeded-game
fingerprints and the batched-equals-scalar tests run again in a child process with every
NumPy dispatch target above the baseline disabled and OpenBLAS pinned to its Nehalem
(SSE4.2) kernels, the level every x86-64-v2 CPU has: a result that holds only on the
machine that recorded it fails here.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ["tests/agents/test_fingerprints.py", "tests/vector/test_vector_games.py"]


def lowest_simd_env() -> dict[str, str]:
    """The environment that limits NumPy to its baseline and OpenBLAS to Nehalem."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(__cpu_dispatch__))
    if platform.machine().lower() in ("x86_64", "amd64"):
        env["OPENBLAS_CORETYPE"] = "Nehalem"
    return env


def test_the_child_runs_at_the_lowest_simd_level():
    probe = ("import json, numpy, threadpoolctl\n"
             "from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__\n"
             "blas = [i.get('architecture') for i in threadpoolctl.threadpool_info()"
             " if i['internal_api'] == 'openblas']\n"
             "print(json.dumps({'on': [f for f in __cpu_dispatch__ if __cpu_features__[f]],"
             " 'blas': blas}))\n")
    out = subprocess.run([sys.executable, "-c", probe], env=lowest_simd_env(), check=True,
                         capture_output=True, text=True, timeout=120).stdout
    seen = json.loads(out)
    assert seen["on"] == []
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert seen["blas"] and set(seen["blas"]) == {"Nehalem"}


def test_seeded_games_hold_at_the_lowest_simd_level():
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
         *TESTS],
        cwd=ROOT, env=lowest_simd_env(), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "skipped" not in run.stdout
