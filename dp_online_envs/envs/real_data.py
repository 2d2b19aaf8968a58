"""The parts of the ids built on real data (:mod:`dp_online_envs.datasets`).

Each id's decision set follows from its data (the feature dimension, the number of
classes or of stocks), and its default adversary, ``"data"``, replays the data's rows
as loss parameters:

* classification (full information, l2 ball): example ``(a_i, y_i)`` with ``a_i`` the
  standardized features scaled to unit l2 norm (:func:`~dp_online_envs.datasets.unit_rows`)
  and ``y_i = +1`` for class 1 (benign), ``-1`` for class 0 (malignant), in a seeded
  random order (:class:`~dp_online_envs.adversaries.data.ShuffledRowsAdversary`);
* classes (bandit, K arms = the K classes): the loss of arm k is the misclassification
  ``1[k != y_i]``, i.e. ``theta_i = 1 - e_{y_i}`` in ``[0, 1]^K``, in a seeded random
  order;
* portfolio (full information, simplex of the stocks ``tickers``, default
  :data:`PORTFOLIO_TICKERS`): ``theta_t`` the day's price relatives, a window of
  consecutive days in date order
  (:class:`~dp_online_envs.adversaries.data.DateWindowAdversary`).

Horizons longer than the data: the two labelled ids cycle through it on purpose, one
fresh seeded permutation of all the rows per pass (``ceil(T / n)`` passes; their default
horizons already take several passes over the 569 examples), so any horizon plays. The
reset clips each row once and copies the game's ``T`` rows, so its time and memory grow
linearly with ``T``: about 3 seconds and 250 MB for a million rounds of the
classification id (31 numbers a row), 0.2 seconds for the classes id. The portfolio id replays real
consecutive days and cannot repeat them: a horizon
longer than the series is refused when the env is built, naming both numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dp_online_envs import datasets
from dp_online_envs import domains as dom
from dp_online_envs.adversaries.data import DateWindowAdversary, ShuffledRowsAdversary

Options = dict[str, Any]

#: The labelled dataset of the classification id (binary classes).
CLASSIFICATION_DATASET = "breast-cancer"


def classification_rows() -> np.ndarray:
    """``(569, 31)`` rows ``(a_i, y_i)`` of the breast-cancer data."""
    data = datasets.load_labelled(CLASSIFICATION_DATASET)
    y = 2.0 * data.labels - 1.0
    return np.column_stack([datasets.unit_rows(data.features), y])


def classification_ball(opts: Options) -> dom.Domain:
    """The unit l2 ball in the feature dimension (30)."""
    return dom.Ball(datasets.load_labelled(CLASSIFICATION_DATASET).features.shape[1])


def classification_data(opts: Options) -> ShuffledRowsAdversary:
    """The examples in a seeded random order."""
    return ShuffledRowsAdversary(classification_rows())


def class_rows(name: str) -> np.ndarray:
    """``(n, K)`` misclassification losses ``1 - e_{y_i}`` of a labelled dataset."""
    data = datasets.load_labelled(name)
    return 1.0 - np.eye(data.n_classes)[data.labels]


def class_arms(opts: Options) -> dom.Domain:
    """One arm per class of ``opts["dataset"]``."""
    return dom.Arms(datasets.load_labelled(opts["dataset"]).n_classes)


def class_data(opts: Options) -> ShuffledRowsAdversary:
    """The examples' misclassification losses in a seeded random order."""
    return ShuffledRowsAdversary(class_rows(opts["dataset"]))


#: The stocks of the portfolio id's default game, chosen in hindsight: of the data's 190
#: pairs, those whose uniform portfolio trails the best constant-rebalanced one by more
#: than 1.5 log-wealth over the whole range are GE-MSFT, GE-UNH, GE-HD and BAC-UNH;
#: GE-MSFT is the one where Online Newton Step (``ons``) gains the most on it (MSFT's
#: log growth over 1990-2022 is 6.41, GE's 1.49), so not learning costs regret linear in
#: T and learning pays. The ``real-data`` study (``benchmarks/studies/real-data/``)
#: reports the measurement.
PORTFOLIO_TICKERS = ("GE", "MSFT")
#: The declared price-relative range of the default game: it contains every daily
#: relative of GE and MSFT in the data (0.844 to 1.197), so nothing of theirs is clipped.
PORTFOLIO_RANGE = (0.8, 1.2)


def portfolio_columns(tickers: Any) -> list[int]:
    """The data's columns of ``tickers``, in the order given.

    Raises:
        ValueError: Unless ``tickers`` is a non-empty sequence of distinct tickers of
            skfolio's S&P 500 data (the message lists them).
    """
    valid = datasets.SP500_TICKERS
    names = [tickers] if isinstance(tickers, str) else list(tickers)
    bad = [t for t in names if t not in valid]
    if not names or bad or len(set(names)) != len(names):
        raise ValueError(f"tickers={tickers!r}, expected distinct tickers of the data, "
                         f"one or more of {list(valid)}")
    return [valid.index(t) for t in names]


def portfolio_simplex(opts: Options) -> dom.Domain:
    """The simplex over the stocks ``opts["tickers"]`` (built without the data, so the
    synthetic adversaries play it without the extra installed)."""
    return dom.Simplex(len(portfolio_columns(opts["tickers"])))


def portfolio_data(opts: Options) -> DateWindowAdversary:
    """The daily price relatives of ``opts["tickers"]``, a window of consecutive days in
    date order."""
    cols = portfolio_columns(opts["tickers"])
    relatives = datasets.load_sp500().relatives()[:, cols]
    horizon = opts.get("horizon")
    if isinstance(horizon, int) and horizon > len(relatives):
        raise ValueError(f"horizon={horizon} rejected: the price series has {len(relatives)} "
                         f"days; expected a horizon <= {len(relatives)}")
    return DateWindowAdversary(relatives)
