"""The speed harness's benchmarks (pytest-benchmark): one per case of :data:`CASES`.

pytest-benchmark times the product path with the case's clock (``Case.clock``: CPU
time of this process, or wall time where the work runs partly in another process);
before each of its rounds, in the untimed ``setup`` of ``benchmark.pedantic``, the
reference is run and timed with the same clock, so that the two sides alternate round
by round and see the same load of the shared machine. One warm-up round of each side is not counted. Each benchmark's
``extra_info`` holds its case, both sides' times and their ratio
(:func:`~benchmarks.speed.cases.time_ratio`), which ``python -m benchmarks.speed``
compares with the stored baseline.

Run it through ``python -m benchmarks.speed`` (``docs/guides/performance.md``), or
directly::

    python -m pytest benchmarks/speed/bench_speed.py -o addopts="" -p no:xdist \\
        [--speed-rounds 7] [--speed-size full] [--benchmark-json run.json] [-k counter]

It is not part of the test suite: pyproject's ``testpaths`` is ``tests/`` and this
file's name does not match ``test_*.py``.
"""

from __future__ import annotations

import pytest

from benchmarks.speed.cases import CASES, CLOCKS, CaseUnavailable, Round, time_ratio


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.benchmark(timer=CLOCKS[case.clock]))
    for name, case in CASES.items()])
def test_speed(benchmark, name: str, speed_rounds: int, speed_size: str) -> None:
    case = CASES[name]
    try:
        pair = case.pair(speed_size)
    except CaseUnavailable as exc:  # reported "not run" by the comparison
        pytest.skip(str(exc))
    clock = CLOCKS[case.clock]  # pytest-benchmark's timer for this case (its marker)
    reference_s: list[float] = []

    def setup() -> tuple[tuple[Round], dict]:
        reference = pair.reference()
        try:
            start = clock()
            reference.run()
            reference_s.append(clock() - start)
        finally:
            reference.close()
        return (pair.product(),), {}

    benchmark.extra_info.update(case=name, size=speed_size, clock=case.clock,
                                product=case.product, reference=case.reference,
                                unit=case.unit, units=pair.units)
    benchmark.pedantic(lambda r: r.run(), setup=setup, teardown=lambda r: r.close(),
                       rounds=speed_rounds, warmup_rounds=1)
    if benchmark.disabled:  # --benchmark-disable: each side ran once, untimed
        return
    product_s = list(benchmark.stats.stats.data)
    reference_s = reference_s[1:]  # the warm-up round's is not counted
    benchmark.extra_info.update(product_s=product_s, reference_s=reference_s,
                                ratio=time_ratio(product_s, reference_s))
