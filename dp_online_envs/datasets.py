"""Real data shipped inside pip packages, loaded without network access.

Two sources, each behind the ``realdata`` extra (``pip install 'dp-online-envs[realdata]'``):

* scikit-learn's bundled labelled datasets (``sklearn.datasets.load_*``, which read
  CSV files from the installed wheel through ``importlib.resources``): the Wisconsin
  diagnostic breast-cancer data (569 x 30, 2 classes), the wine data (178 x 13, 3
  classes) and the optical handwritten digits (1797 x 64, 10 classes), all from the
  UCI Machine Learning Repository (CC BY 4.0), shipped by scikit-learn (BSD-3-Clause);
* skfolio's S&P 500 dataset: daily adjusted closing prices of 20 large S&P 500 stocks,
  1990-01-02 to 2022-12-28 (8313 trading days), shipped by skfolio (BSD-3-Clause) as
  ``skfolio/datasets/data/sp500_dataset.csv.gz``. The file is located through
  ``importlib.metadata`` and parsed with the standard library: skfolio itself is never
  imported (its import pulls in cvxpy and plotly). skfolio calls the file stale and for
  testing and example use only; its prices are rounded to 3 decimals, so the earliest
  low-priced rows (e.g. 0.144 for BBY in 1990) carry day-to-day rounding errors of up
  to about 0.35% in their price relatives.

Why skfolio for prices: its wheel ships daily data for 20 stocks over 33 years and
resolves with pandas 3; ``universal-portfolios`` (Cover's NYSE files) pins pandas < 3
and pulls yfinance, statsmodels and cvxopt, and ``vega_datasets`` has only 5 stocks,
monthly.

Every loader is cached (one parse per process) and returns read-only arrays.
"""

from __future__ import annotations

import csv
import gzip
import importlib
import io
from dataclasses import dataclass
from functools import cache

import numpy as np

#: The optional extra that installs the packages shipping the data.
EXTRA = "realdata"

#: The labelled datasets: name -> scikit-learn loader.
LABELLED = {"breast-cancer": "load_breast_cancer", "wine": "load_wine", "digits": "load_digits"}

#: skfolio's file of daily prices, inside its installed distribution.
SP500_FILE = "skfolio/datasets/data/sp500_dataset.csv.gz"
#: Its columns (checked when the file is read), known without the extra installed.
SP500_TICKERS = ("AAPL", "AMD", "BAC", "BBY", "CVX", "GE", "HD", "JNJ", "JPM", "KO", "LLY",
                 "MRK", "MSFT", "PEP", "PFE", "PG", "RRC", "UNH", "WMT", "XOM")


def _missing(package: str) -> ImportError:
    return ImportError(f"this environment's data ships in the {package!r} package; install "
                       f"it with: pip install 'dp-online-envs[{EXTRA}]'")


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class LabelledData:
    """A labelled dataset as shipped.

    Attributes:
        name: Key of :data:`LABELLED`.
        features: ``(n, d)`` float64 features, as in the file.
        labels: ``(n,)`` integer class labels in ``0..n_classes-1``.
        n_classes: Number of classes.
    """

    name: str
    features: np.ndarray
    labels: np.ndarray
    n_classes: int


@cache
def load_labelled(name: str) -> LabelledData:
    """One of scikit-learn's bundled labelled datasets (no network).

    Args:
        name: ``"breast-cancer"``, ``"wine"`` or ``"digits"``.

    Raises:
        ValueError: On another name (the message lists the valid ones).
        ImportError: If scikit-learn is not installed (the message names the extra).
    """
    if name not in LABELLED:
        raise ValueError(f"dataset={name!r}, expected one of {sorted(LABELLED)}")
    try:
        sk_datasets = importlib.import_module("sklearn.datasets")
    except ImportError as exc:
        raise _missing("scikit-learn") from exc
    bunch = getattr(sk_datasets, LABELLED[name])()
    features = _readonly(np.array(bunch.data, dtype=np.float64))
    labels = _readonly(np.array(bunch.target, dtype=np.int64))
    return LabelledData(name, features, labels, int(labels.max()) + 1)


def unit_rows(features: np.ndarray) -> np.ndarray:
    """Standardize each column (mean 0, standard deviation 1; constant columns become 0),
    then scale each row to unit l2 norm (a zero row stays 0), so every row lies in the
    unit ball that the hinge and logistic families' parameters ``a`` live in."""
    x = np.asarray(features, dtype=np.float64)
    std = x.std(axis=0)
    z = (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    return _readonly(z / np.where(norms > 0, norms, 1.0))


@dataclass(frozen=True)
class PriceData:
    """Daily closing prices, rows in date order.

    Attributes:
        dates: ``(n,)`` ISO dates (strings), strictly increasing.
        tickers: The column names.
        prices: ``(n, k)`` float64 prices, positive.
    """

    dates: tuple[str, ...]
    tickers: tuple[str, ...]
    prices: np.ndarray

    def relatives(self) -> np.ndarray:
        """``(n - 1, k)`` price relatives ``r_t = p_t / p_{t-1}`` (day t's gross return)."""
        return _readonly(self.prices[1:] / self.prices[:-1])


@cache
def load_sp500() -> PriceData:
    """skfolio's S&P 500 daily prices (20 stocks, 1990-2022), read from its wheel's file
    through ``importlib.metadata`` without importing skfolio.

    Raises:
        ImportError: If skfolio is not installed (the message names the extra).
        ValueError: If the file is not what this loader expects (other columns than
            :data:`SP500_TICKERS`, dates out of order, missing or non-positive prices).
    """
    import importlib.metadata  # here: an import of the package does not pay for it

    try:
        dist = importlib.metadata.distribution("skfolio")
    except importlib.metadata.PackageNotFoundError as exc:
        raise _missing("skfolio") from exc
    path = dist.locate_file(SP500_FILE)
    with gzip.open(io.BytesIO(path.read_bytes()), "rt", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    dates = tuple(r[0] for r in body)
    prices = np.array([[float(v) for v in r[1:]] for r in body], dtype=np.float64)
    if list(dates) != sorted(set(dates)):
        raise ValueError(f"{SP500_FILE}: dates are not strictly increasing")
    if tuple(header[1:]) != SP500_TICKERS:
        raise ValueError(f"{SP500_FILE}: columns {header[1:]}, expected {list(SP500_TICKERS)}")
    if prices.shape != (len(dates), len(header) - 1) or not np.all(prices > 0):
        raise ValueError(f"{SP500_FILE}: expected positive prices in every cell")
    return PriceData(dates, tuple(header[1:]), _readonly(prices))
