"""The project's benchmarks: the studies whose numbers ``docs/results.md`` publishes
(``make_results.py``, ``studies/``, the scripts here) and the speed harness
(:mod:`benchmarks.speed`). Importable from a checkout (``python -m benchmarks.speed``);
not part of the installed package."""
