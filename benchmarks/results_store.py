"""Results directories of many records, for timing the results store.

:func:`template_records` plays the README's price-of-privacy sweep
(``examples/sweeps/price_of_privacy.yaml``: hedge, private-ftrl with four counters,
private-exp2, exp3 and exp2, six epsilons) at a short horizon and one seed: 33 real
records of every learner and option type the sweep mixes. :func:`synthetic_results`
writes ``n`` records to a results directory, copies of those with seed indices 0, 1, 2,
..., each with the game id and the seeds its settings hash to (so that every reader's
record check accepts them, as it would the sweep's own games): the directory of a
sweep of ``n`` games, written in seconds instead of played.

``python benchmarks/results_store.py N [N ...]`` prints, for each N, the CPU seconds of
``load_results`` (the first read, which builds the store's index, and the next reads)
and of ``pandas.read_parquet`` of the same table, and their ratio.
"""

from __future__ import annotations

import copy
import functools
import json
import pathlib
import shutil
import sys
import tempfile
import time
import warnings
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: The README's sweep.
SWEEP = ROOT / "examples" / "sweeps" / "price_of_privacy.yaml"


@functools.lru_cache(maxsize=1)
def template_records(horizon: int = 16) -> tuple[dict[str, Any], ...]:
    """The 33 records of the README's sweep at ``horizon`` (one epsilon grid, one seed),
    played once per process."""
    import yaml

    from dp_online_envs.lab.experiments import load_records, run_sweep

    sweep = yaml.safe_load(SWEEP.read_text())
    sweep.update(horizons=[horizon], seeds=1)
    with tempfile.TemporaryDirectory() as tmp:
        assert run_sweep(sweep, results=pathlib.Path(tmp) / "r", backend="serial",
                         quiet=True).ok
        return tuple(load_records(pathlib.Path(tmp) / "r"))


def reseeded(record: dict[str, Any], seed_index: int) -> dict[str, Any]:
    """``record`` as the record of seed index ``seed_index``: the same settings and
    outcome, the game id and seeds of that index (``game.record_id_mismatch`` passes)."""
    from dp_online_envs.lab.experiments.game import IDENTITY_FIELDS, _seed_from, stable_hash

    out = copy.deepcopy(record)
    out["seed_index"] = seed_index
    identity = {k: out[k] for k in IDENTITY_FIELDS}
    out["game_id"] = stable_hash(identity)[:24]
    env_part = {k: identity[k] for k in ("seed_scheme", "env_id", "env_version",
                                         "env_options", "horizon", "seed_index")}
    out["env_seed"] = _seed_from(stable_hash(env_part))
    out["agent_seed"] = _seed_from(stable_hash(identity))
    return out


def synthetic_results(root: pathlib.Path, n: int) -> pathlib.Path:
    """A results directory ``root`` holding ``n`` records (:func:`reseeded` copies of
    :func:`template_records`, seed index after seed index), written as a sweep writes
    them; returns ``root``."""
    from dp_online_envs.lab.experiments.game import jsonable

    templates = template_records()
    games = pathlib.Path(root) / "games"
    games.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        record = reseeded(templates[i % len(templates)], i // len(templates))
        (games / f"{record['game_id']}.json").write_text(
            json.dumps(record, indent=1, default=jsonable))
    return pathlib.Path(root)


def parquet_of(results: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    """The games table of ``results`` in one Parquet file (``dp-online export``'s)."""
    from dp_online_envs.lab.experiments import export_results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        games, _ = export_results(results, out)
    return games


def _cpu(fn, *args) -> float:
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def measure(n: int, reads: int = 5) -> dict[str, float]:
    """CPU seconds of ``load_results`` on a directory of ``n`` records (the first read,
    which builds the index, and the median of ``reads`` reads after it, interleaved with
    ``pandas.read_parquet`` of one Parquet file of the same table)."""
    import pandas as pd

    from dp_online_envs.lab.experiments import load_results

    tmp = pathlib.Path(tempfile.mkdtemp())
    try:
        results = synthetic_results(tmp / "results", n)
        first = _cpu(load_results, results)
        table = parquet_of(results, tmp / "games.parquet")
        pairs = [(_cpu(load_results, results), _cpu(pd.read_parquet, table))
                 for _ in range(reads)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ours = sorted(p[0] for p in pairs)[reads // 2]
    theirs = sorted(p[1] for p in pairs)[reads // 2]
    return {"records": n, "first": first, "load_results": ours, "read_parquet": theirs,
            "ratio": ours / theirs}


def main(sizes: list[int]) -> None:
    import os

    for n in sizes:
        load = os.getloadavg()[0]
        m = measure(n)
        print(f"{n:>7} records (load {load:.1f}): first load_results {m['first']:.3f} s, "
              f"then {m['load_results'] * 1e3:.1f} ms ({m['load_results'] / n * 1e6:.2f} us "
              f"a record); read_parquet {m['read_parquet'] * 1e3:.1f} ms; ratio "
              f"{m['ratio']:.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [3000])
