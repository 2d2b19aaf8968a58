"""The speed harness: ratios against a reference measured in the same run, compared
with a stored baseline.

* :mod:`benchmarks.speed.cases`: the cases, each a product path and its reference.
* ``bench_speed.py``: their pytest-benchmark functions (not part of the test suite).
* :mod:`benchmarks.speed.compare`: the comparison with ``baseline.json`` and its
  per-case thresholds.
* ``python -m benchmarks.speed``: runs the benchmarks and prints the comparison
  (``docs/guides/performance.md``); exit status 1 on a regression.

Needs the ``bench`` extra (``pip install -e ".[bench]"``) to run the benchmarks; the
cases and the comparison need only the package and the ``experiments`` extra.
"""
