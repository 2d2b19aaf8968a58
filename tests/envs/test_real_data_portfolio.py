"""Online portfolio selection on skfolio's S&P 500 daily prices)."""

import hashlib
import importlib.metadata
import math

import numpy as np
import pytest

try:
    importlib.metadata.distribution("skfolio")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("the 'realdata' extra (skfolio, which ships the prices) is not installed",
                allow_module_level=True)

import dp_online_envs
from agents import make, play
from dp_online_envs import datasets
from dp_online_envs.adversaries.data import DateWindowAdversary
from dp_online_envs.domains import Simplex
from dp_online_envs.hindsight import Comparator
from dp_online_envs.losses import LogWealthLoss
from dp_online_envs.losses.portfolio import best_rebalanced_portfolio

PF = "DPFullInfo-Portfolio-v1"


def test_loaded_prices_match_known_facts():
    d = datasets.load_sp500()
    assert d.prices.shape == (8313, 20) and len(d.dates) == 8313
    assert (d.dates[0], d.dates[-1]) == ("1990-01-02", "2022-12-28")
    assert d.tickers[:3] == ("AAPL", "AMD", "BAC") and d.tickers[-1] == "XOM"
    assert d.prices[0, :3].tolist() == [0.264, 4.125, 4.599]
    digest = hashlib.sha256(d.prices[:5].tobytes()).hexdigest()
    assert digest == "c3fc7f59db69039ff6538356963d8652d3a8abf3bef9e68774b09005c2d352d2"
    r = d.relatives()
    assert r.shape == (8312, 20) and r[0, 0] == 0.266 / 0.264
    # the data's extremes: two relatives below r_min = 0.5, none above r_max = 2
    assert int((r < 0.5).sum()) == 2 and r.max() < 2.0


def test_missing_extra_is_named(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    datasets.load_sp500.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"skfolio.*\[realdata\]"):
            datasets.load_sp500()
    finally:
        monkeypatch.undo()
        datasets.load_sp500.cache_clear()


def test_loss_values_gradient_and_bounds():
    loss = LogWealthLoss(3, r_min=0.5, r_max=2.0)
    dom = Simplex(3)
    r, x = np.array([1.1, 0.9, 1.3]), np.array([0.2, 0.5, 0.3])
    assert loss.value(r, x) == -math.log(0.22 + 0.45 + 0.39)
    h = 1e-6
    num = [(loss.value(r, x + h * e) - loss.value(r, x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(loss.subgradient(r, x), num, rtol=1e-7)
    thetas = np.array([r, [0.5, 2.0, 1.0]])
    val, grad = loss.total(thetas, x)
    assert val == pytest.approx(loss.value(r, x) + loss.value(thetas[1], x), rel=1e-15)
    np.testing.assert_allclose(grad, loss.subgradient(r, x) + loss.subgradient(thetas[1], x))
    # L is attained as the gradient's norm: one asset at r_min, the rest at r_max
    lip = loss.lipschitz(dom)
    assert lip == pytest.approx(math.sqrt(0.25 + 2 * 4.0) / 0.5)
    worst = np.array([0.5, 2.0, 2.0])
    assert np.linalg.norm(loss.subgradient(worst, np.eye(3)[0])) == pytest.approx(lip)
    rng = np.random.default_rng(0)
    for _ in range(200):
        th = loss.sample_param(rng)
        a, b = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
        assert abs(loss.value(th, a) - loss.value(th, b)) <= lip * np.linalg.norm(a - b) + 1e-12
        assert -math.log(2.0) <= loss.value(th, a) <= math.log(2.0) == loss.bound(dom)
    with pytest.raises(ValueError, match="r_min"):
        LogWealthLoss(3, r_min=0.0)
    with pytest.raises(ValueError, match="r_max"):
        LogWealthLoss(3, r_max=0.9)


def test_window_is_in_date_order_clipped_and_seeded():
    rows = datasets.load_sp500().relatives()
    env = dp_online_envs.build_env(PF, horizon=300, record_losses=True,
                                   tickers=datasets.SP500_TICKERS,
                                   loss_kwargs={"r_min": 0.5, "r_max": 2.0})
    env.reset(seed=4)
    adv = env.unwrapped.adversary
    start, replayed = adv.start, adv.sequence.thetas
    np.testing.assert_array_equal(replayed, np.clip(rows[start:start + 300], 0.5, 2.0))
    env.reset(seed=5)
    assert env.unwrapped.adversary.start != start
    with pytest.raises(ValueError, match=r"^horizon=9000 rejected: the price series has 8312 "
                                         r"days; expected a horizon <= 8312$"):
        dp_online_envs.build_env(PF, horizon=9000)  # refused when built, not at reset


def test_default_game_is_ge_and_msft_over_the_whole_range_unclipped():
    """The default: GE and MSFT (in that order), every trading day, and a declared range
    [0.8, 1.2] that contains all their relatives, so the replay is the data itself."""
    d = datasets.load_sp500()
    cols = [d.tickers.index("GE"), d.tickers.index("MSFT")]
    rows = d.relatives()[:, cols]
    assert 0.8 < rows.min() and rows.max() < 1.2
    env = dp_online_envs.build_env(PF)
    problem = env.get_wrapper_attr("problem")
    assert problem.horizon == 8312 and problem.dim == 2
    assert (problem.loss.r_min, problem.loss.r_max) == (0.8, 1.2)
    env.reset(seed=3)
    adv = env.unwrapped.adversary
    assert adv.start == 0
    np.testing.assert_array_equal(adv.sequence.thetas, rows)  # nothing clipped
    # another order of the tickers permutes the columns
    env = dp_online_envs.build_env(PF, horizon=10, tickers=("MSFT", "GE"))
    env.reset(seed=3)
    start = env.unwrapped.adversary.start
    np.testing.assert_array_equal(env.unwrapped.adversary.sequence.thetas,
                                  rows[start:start + 10, ::-1])


@pytest.mark.parametrize("tickers", [("GE", "XX"), (), ("GE", "GE"), ["msft"]])
def test_bad_tickers_are_named(tickers):
    with pytest.raises(ValueError, match=r"tickers=.*expected distinct tickers.*'AAPL'"):
        dp_online_envs.build_env(PF, tickers=tickers)


def test_replayed_relatives_are_clipped_into_the_parameter_set():
    """The guard: a crash day (0.33) is replayed as r_min = 0.5, a spike as r_max."""
    adv = DateWindowAdversary(np.array([[0.1, 1.0], [5.0, 1.2]]))
    adv.reset(np.random.default_rng(0), Simplex(2), LogWealthLoss(2), 2)
    np.testing.assert_array_equal(adv.sequence.thetas, [[0.5, 1.0], [2.0, 1.2]])


def test_best_rebalanced_portfolio_against_brute_force_on_two_stocks():
    rows = datasets.load_sp500().relatives()[:1000, :2]  # AAPL, AMD
    lo, hi, x = best_rebalanced_portfolio(rows)
    grid = np.linspace(0.0, 1.0, 20001)
    vals = -np.log(np.outer(rows[:, 0], grid) + np.outer(rows[:, 1], 1.0 - grid)).sum(axis=0)
    assert lo <= vals.min() + 1e-9 and hi <= vals.min() + 1e-9
    assert hi - lo <= 1e-6 and abs(x.sum() - 1.0) < 1e-12 and np.all(x >= 0)


def test_best_rebalanced_portfolio_against_brute_force_on_three_stocks():
    """The comparator of the default's kind of game on three stocks (GE, MSFT, UNH):
    the certified interval holds the minimum over a grid of the simplex, SLSQP's point
    is no worse than the best grid point, and the grid comes within its resolution."""
    d = datasets.load_sp500()
    rows = d.relatives()[:1000, [d.tickers.index(t) for t in ("GE", "MSFT", "UNH")]]
    lo, hi, x = best_rebalanced_portfolio(rows)
    n = 100
    grid = np.array([(i, j, n - i - j) for i in range(n + 1) for j in range(n + 1 - i)]) / n
    vals = -np.log(rows @ grid.T).sum(axis=0)
    assert lo <= vals.min() + 1e-9 and hi <= vals.min() + 1e-9
    assert hi - lo <= 1e-6 and vals.min() - hi < 1e-3
    assert abs(x.sum() - 1.0) < 1e-12 and np.all(x >= 0)


def test_failed_solve_falls_back_to_the_start(monkeypatch):
    from types import SimpleNamespace

    from dp_online_envs.losses import portfolio

    rows = datasets.load_sp500().relatives()[:50, :3]
    monkeypatch.setattr(portfolio, "minimize",
                        lambda *a, **k: SimpleNamespace(x=np.full(3, np.nan)))
    lo, hi, x = best_rebalanced_portfolio(rows, x0=np.array([2.0, 1.0, 1.0]))
    np.testing.assert_array_equal(x, [0.5, 0.25, 0.25])
    assert hi == -np.log(rows @ x).sum() and lo <= hi


def test_comparator_certified_on_twenty_stocks():
    rows = np.clip(datasets.load_sp500().relatives()[2000:2512], 0.5, 2.0)
    comp = Comparator(Simplex(20), LogWealthLoss(20))
    for r in rows:
        comp.add(r)
    lo, hi = comp.best()
    assert hi - lo <= 1e-6
    # no feasible point beats the lower bound: vertices, uniform, Cover's iteration
    x = np.full(20, 0.05)
    for _ in range(3000):
        x = x * (rows / (rows @ x)[:, None]).mean(axis=0)
    for p in [*np.eye(20), np.full(20, 0.05), x / x.sum()]:
        assert -np.log(rows @ p).sum() >= lo - 1e-9


def test_same_seed_same_game():
    def game(seed):
        env = dp_online_envs.build_env(PF, horizon=200, record_losses=True)
        s = play(env, make("ftal", env.get_wrapper_attr("problem"), seed=seed), seed=seed, agent_seed=seed)
        return s.regret, env.unwrapped.played_losses().thetas

    a, b, c = game(1), game(1), game(2)
    assert a[0] == b[0] and np.array_equal(a[1], b[1]) and not np.array_equal(a[1], c[1])


def test_default_separates_learning_from_trivial_play():
    """The separation criterion on the default (the whole range, one window: no seed moves
    it): the uniform portfolio trails the best constant-rebalanced one by 1.97
    log-wealth, Online Newton Step by less than half of that; on windows of a quarter of
    the range, the uniform portfolio's regret is about a quarter (linear growth)."""
    def regret(agent, seed=0, **kw):
        env = dp_online_envs.build_env(PF, **kw)
        return play(env, make(agent, env.get_wrapper_attr("problem"), seed=seed),
                    seed=seed, agent_seed=seed).regret

    trivial, ons = regret("center"), regret("ons")
    assert 1.9 < trivial < 2.0 and 0.8 < ons < 0.5 * trivial
    quarter = np.mean([regret("center", seed=s, horizon=2078) for s in range(16)])
    assert math.log(trivial / quarter) / math.log(4) >= 0.9
    assert dp_online_envs.ENV_CONFIGS[PF].options()["loss"] == "log-wealth"
