"""The quickstart example plays a whole game and reports a consistent regret."""

import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_quickstart_prints_the_regret_of_its_game(capsys):
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "examples" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(horizon=300, seed=1)
    out = capsys.readouterr().out
    lo, hi = map(float, re.search(r"regret in \[([-\d.]+), ([-\d.]+)\] after 300 rounds", out).groups())
    assert lo <= hi
    curve = [float(v) for v in re.findall(r"R\(\s*\d+\) <=\s+([-\d.]+)", out)]
    assert abs(curve[-1] - hi) <= 0.006  # the last checkpoint is T (printed to 3 vs 2 places)
