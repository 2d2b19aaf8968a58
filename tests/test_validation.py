"""One validation of the numeric arguments (counts, reals, epsilon, delta), wherever
they are given: the module, then every public entry point."""

from __future__ import annotations

import contextlib
import io
import math
import re
from collections.abc import Callable
from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest

import agents
from agents.privacy import make_counter
from dp_online_envs import OnlineLearningEnv, Problem, domains, losses
from dp_online_envs.lab.experiments import ExperimentError
from dp_online_envs.lab.experiments.sweep import make_games, parse_sweep
from dp_online_envs.validation import (
    DELTA_RANGE,
    EPSILON_RANGE,
    check_bool,
    check_delta,
    check_epsilon,
    check_gaussian_delta,
    check_int,
    check_real,
)

#: Values that are not a number of the right kind, for every argument.
NOT_NUMBERS = [True, False, np.bool_(True), "3", 1j, None, [1]]
#: Values refused for an integer argument (floats, even integral ones).
NOT_INTS = [*NOT_NUMBERS, 1.5, 3.0, np.float64(2.0), math.nan, Fraction(3, 1)]
BAD_EPSILONS = [*NOT_NUMBERS, 0, 0.0, -1.0, math.inf, math.nan]
BAD_DELTAS = [*NOT_NUMBERS, 1, 1.0, 1.5, -1e-9, math.nan, math.inf]


# ----------------------------------------------------------------- the module
def test_check_bool_takes_only_true_and_false():
    assert check_bool("flag", True) is True and check_bool("flag", np.bool_(False)) is False
    for bad, kind in ((0, "an int"), (1.0, "a float"), ("yes", "a str"), (None, "a NoneType")):
        with pytest.raises(ValueError, match=rf"^flag={bad!r} rejected: expected True or "
                                             rf"False, got {kind}$"):
            check_bool("flag", bad)


@pytest.mark.parametrize("bad", NOT_INTS)
def test_check_int_refuses_non_integers_naming_argument_and_value(bad):
    with pytest.raises(ValueError) as err:
        check_int("horizon", bad, 1)
    assert str(err.value).startswith(f"horizon={bad!r} rejected: expected an integer >= 1")


def test_check_int_message_names_the_type_when_the_type_is_wrong():
    with pytest.raises(ValueError) as err:
        check_int("horizon", 1.5, 1)
    assert str(err.value) == "horizon=1.5 rejected: expected an integer >= 1, got a float"
    with pytest.raises(ValueError) as err:
        check_int("horizon", 0, 1)
    assert str(err.value) == "horizon=0 rejected: expected an integer >= 1"


@pytest.mark.parametrize("good", [1, 7, np.int64(7), np.uint8(7)])
def test_check_int_accepts_python_and_numpy_integers(good):
    out = check_int("horizon", good, 1)
    assert out == int(good) and type(out) is int


@pytest.mark.parametrize("good, expected", [(1, 1.0), (0.5, 0.5), (np.float32(0.25), 0.25),
                                            (np.int64(2), 2.0), (Fraction(1, 2), 0.5)])
def test_check_real_accepts_real_numbers_as_python_floats(good, expected):
    out = check_real("x", good)
    assert out == expected and type(out) is float


@pytest.mark.parametrize("low_inclusive, high_inclusive, refused, text", [
    (True, True, [-0.1, 1.1], "[0, 1]"),
    (False, False, [0.0, 1.0], "(0, 1)"),
    (True, False, [1.0], "[0, 1)"),
])
def test_check_real_interval_ends(low_inclusive, high_inclusive, refused, text):
    for v in refused:
        with pytest.raises(ValueError, match=rf"x={v!r} rejected: .*{re.escape(text)}"):
            check_real("x", v, 0.0, 1.0, low_inclusive=low_inclusive,
                       high_inclusive=high_inclusive)
    assert check_real("x", 0.5, 0.0, 1.0, low_inclusive=low_inclusive,
                      high_inclusive=high_inclusive) == 0.5


def test_check_int_maximum():
    assert check_int("k", 3, 0, 3) == 3
    with pytest.raises(ValueError) as err:
        check_int("k", 4, 0, 3)
    assert str(err.value) == "k=4 rejected: expected an integer in [0, 3]"
    with pytest.raises(ValueError) as err:
        check_int("k", 4, maximum=3)
    assert str(err.value) == "k=4 rejected: expected an integer <= 3"
    with pytest.raises(ValueError, match=r"^k=2\.0 rejected: expected an integer in \[0, 3\], "
                                         r"got a float$"):
        check_int("k", 2.0, 0, 3)


def test_gaussian_delta_is_an_allowed_delta_but_zero():
    assert check_gaussian_delta(1e-6) == 1e-6
    with pytest.raises(ValueError) as err:
        check_gaussian_delta(0, hint="pass delta=1e-6")
    assert str(err.value) == ("delta=0 rejected: expected a real number in (0, 1) for Gaussian "
                              "noise (it gives no pure epsilon-DP); pass delta=1e-6")
    for bad in BAD_DELTAS:  # everything check_delta refuses, with its message
        with pytest.raises(ValueError, match=r"^delta=.* rejected: expected a real number in "
                                             r"\[0, 1\)"):
            check_gaussian_delta(bad)


def test_one_definition_of_epsilon_and_delta():
    assert EPSILON_RANGE == (0.0, math.inf, False, False)
    assert DELTA_RANGE == (0.0, 1.0, True, False)
    assert check_epsilon(np.float64(0.5)) == 0.5 and check_delta(0) == 0.0


@pytest.mark.parametrize("bad", BAD_EPSILONS)
def test_check_epsilon_refuses(bad):
    with pytest.raises(ValueError,
                       match=r"^epsilon=.* rejected: expected a finite real number > 0"):
        check_epsilon(bad)


@pytest.mark.parametrize("bad", BAD_DELTAS)
def test_check_delta_refuses(bad):
    with pytest.raises(ValueError,
                       match=r"^delta=.* rejected: expected a real number in \[0, 1\)"):
        check_delta(bad)


# ---------------------------------------------------------- where it is used
#: The wrong types: bool, float-for-int (for epsilon, a float out of range), string, complex.
BAD = {"horizon": [True, 1.5, "3", 1j], "epsilon": [True, -1.5, "3", 1j],
       "delta": [True, 1.5, "3", 1j]}


@pytest.mark.parametrize("bad", BAD["horizon"])
def test_env_refuses_a_bad_horizon(bad):
    with pytest.raises(ValueError, match=rf"^horizon={bad!r} rejected"):
        gym.make("DPBandit-MAB-v0", horizon=bad)
    with pytest.raises(ValueError, match=rf"^horizon={bad!r} rejected"):
        OnlineLearningEnv(domains.Arms(3), losses.LinearLoss(3), horizon=bad)
    with pytest.raises(ValueError, match=rf"^horizon={bad!r} rejected"):
        Problem.build(domains.Arms(3), losses.LinearLoss(3), "bandit", bad)


def test_env_horizon_is_no_longer_rounded():
    with pytest.raises(ValueError, match="horizon=1.5 rejected"):
        gym.make("DPBandit-MAB-v0", horizon=1.5)
    with pytest.raises(ValueError, match="horizon=3.0 rejected"):
        gym.make("DPBandit-MAB-v0", horizon=3.0)
    env = gym.make("DPBandit-MAB-v0", horizon=np.int64(3))
    assert env.get_wrapper_attr("problem").horizon == 3


@pytest.fixture(scope="module")
def experts_problem():
    env = gym.make("DPFullInfo-Experts-v0", horizon=20, n_arms=3)
    return env.get_wrapper_attr("problem")


@pytest.mark.parametrize("bad", BAD["epsilon"])
def test_agents_refuse_a_bad_epsilon(experts_problem, bad):
    with pytest.raises(ValueError, match=rf"^epsilon={bad!r} rejected"):
        agents.make("private-ftrl", experts_problem, epsilon=bad)


@pytest.mark.parametrize("bad", BAD["delta"])
def test_agents_refuse_a_bad_delta(experts_problem, bad):
    with pytest.raises(ValueError, match=rf"^delta={bad!r} rejected"):
        agents.make("private-ftrl", experts_problem, epsilon=1.0, delta=bad)
    with pytest.raises(ValueError, match=rf"^delta={bad!r} rejected"):
        agents.make("hedge", experts_problem, delta=bad)  # ignored, but still checked


def test_epsilon_true_is_no_longer_one(experts_problem):
    with pytest.raises(ValueError, match="epsilon=True rejected"):
        agents.make("private-ftrl", experts_problem, epsilon=True)


PAIRS = [(k, b) for k, values in BAD.items() for b in values]


@pytest.mark.parametrize("key, bad", PAIRS)
def test_counters_refuse_bad_horizon_epsilon_delta(key, bad):
    kwargs = {"horizon": 8, "noise": "gaussian", "epsilon": 1.0, "delta": 1e-6,
              "sensitivity": 1.0, key: bad}
    with pytest.raises(ValueError, match=rf"^{key}={bad!r} rejected"):
        make_counter("tree", dim=2, **kwargs)


@pytest.mark.parametrize("key, bad", PAIRS)
def test_make_games_refuses_bad_values_naming_the_argument(key, bad):
    kwargs = {"epsilon": 1.0, "delta": 0.0, "horizon": 10, key: bad}
    with pytest.raises(ExperimentError, match=rf"{key}={bad!r} rejected"):
        make_games("DPFullInfo-Experts-v0", "private-ftrl", seeds=1, **kwargs)


@pytest.mark.parametrize("key, name, bad", [
    ("horizons", "horizon", True), ("horizons", "horizon", 1.5), ("horizons", "horizon", "3"),
    ("epsilons", "epsilon", True), ("epsilons", "epsilon", "one"),
    ("delta", "delta", True), ("delta", "delta", "1e-3j"),
])
def test_sweeps_refuse_bad_values_naming_the_argument(key, name, bad):
    data = {"envs": ["DPFullInfo-Experts-v0"], "agents": ["private-ftrl"], "horizons": [10],
            "epsilons": [1.0], key: [bad]}
    with pytest.raises(ExperimentError, match=rf"{name}={bad!r} rejected"):
        parse_sweep(data)


def test_sweeps_still_read_yaml_1_1_exponents():
    data = {"envs": ["DPFullInfo-Experts-v0"], "agents": ["private-ftrl"], "horizons": [10],
            "epsilons": ["1e-1"], "delta": "1e-5"}
    game = parse_sweep(data).games[0]
    assert (game.epsilon, game.delta) == (0.1, 1e-5)


def test_a_hand_made_game_spec_does_not_round_its_horizon():
    from dp_online_envs.lab.experiments.game import GameSpec, play_game

    spec = GameSpec("DPFullInfo-Experts-v0", "hedge", None, None, 2.5, 0)
    with pytest.raises(ValueError, match="horizon=2.5 rejected"):
        play_game(spec)


# ------------------------------------------------ every public entry point, one table
def _cli(option: str) -> Callable[[object], object]:
    """Parse ``dp-online run ENV AGENT <option> <value>``; argparse's error as a ValueError."""
    from dp_online_envs.lab.cli import build_parser

    def parse(value: object) -> object:
        argv = ["run", "DPFullInfo-Experts-v0", "private-ftrl", "--epsilon", "1",
                option, str(value)]
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                build_parser().parse_args(argv)
        except SystemExit:
            raise ValueError(err.getvalue().strip().splitlines()[-1]) from None
        return None

    return parse


def _problem() -> Problem:
    return gym.make("DPFullInfo-Experts-v0", horizon=20, n_arms=3).get_wrapper_attr("problem")


def _counter(key: str) -> Callable[[object], object]:
    base = {"horizon": 8, "noise": "gaussian", "epsilon": 1.0, "delta": 1e-6,
            "sensitivity": 1.0}
    return lambda v: make_counter("tree", dim=2, **{**base, key: v})


def _audit(key: str) -> Callable[[object], object]:
    from dp_online_envs.lab.audit import audit

    return lambda v: audit(lambda seed: None, _problem(), **{"tau": 1, "runs": 10, key: v})


def _sweep(key: str) -> Callable[[object], object]:
    base = {"epsilon": 1.0, "delta": 0.0, "horizon": 10, "seeds": 1}
    return lambda v: make_games("DPFullInfo-Experts-v0", "private-ftrl", **{**base, key: v})


def _agent(name: str, key: str, **kwargs: object) -> Callable[[object], object]:
    return lambda v: agents.make(name, _problem(), **{**kwargs, key: v})


#: (entry point, the call with the value, the argument's name in the message, "int" or
#: "real", a value of the right type out of range). Each is fed every value of BAD_FOR.
ENTRY_POINTS = [
    # env constructor options
    ("gym.make horizon", lambda v: gym.make("DPBandit-MAB-v0", horizon=v), "horizon", "int", 0),
    ("gym.make n_arms", lambda v: gym.make("DPBandit-MAB-v0", n_arms=v), "n_arms", "int", 0),
    ("gym.make dim", lambda v: gym.make("DPFullInfo-Sphere-v1", dim=v), "dim", "int", 0),
    ("gym.make rank", lambda v: gym.make("DPBandit-Matroid-v1", rank=v), "rank", "int", -1),
    ("OnlineLearningEnv horizon",
     lambda v: OnlineLearningEnv(domains.Arms(3), losses.LinearLoss(3), horizon=v),
     "horizon", "int", 0),
    # domain sizes
    ("Simplex", lambda v: domains.Simplex(v), "k", "int", 0),
    ("Ball dim", lambda v: domains.Ball(v), "dim", "int", 0),
    ("Ball radius", lambda v: domains.Ball(2, radius=v), "radius", "real", 0.0),
    ("Birkhoff", lambda v: domains.Birkhoff(v), "n", "int", 0),
    ("GroundSet", lambda v: domains.GroundSet(v), "n", "int", 0),
    ("UniformMatroid k", lambda v: domains.UniformMatroid(4, v), "k", "int", 0),
    ("FlowPolytope sink", lambda v: domains.FlowPolytope(3, [(0, 1), (1, 2)], 0, v),
     "sink", "int", 3),
    # loss parameters
    ("LinearLoss dim", lambda v: losses.LinearLoss(v), "dim", "int", 0),
    ("DistanceLoss center_radius", lambda v: losses.DistanceLoss(2, center_radius=v),
     "center_radius", "real", -0.5),
    ("QuadraticLoss strong_convexity", lambda v: losses.QuadraticLoss(2, strong_convexity=v),
     "strong_convexity", "real", 0.0),
    ("GraphCutLoss n_nodes", lambda v: losses.GraphCutLoss(v), "n_nodes", "int", 1),
    ("ConcaveModularLoss scale", lambda v: losses.ConcaveModularLoss(3, scale=v),
     "scale", "real", 0.0),
    # agents: epsilon, delta and options
    ("agents.make epsilon", _agent("private-ftrl", "epsilon"), "epsilon", "real", 0.0),
    ("agents.make delta", _agent("private-ftrl", "delta", epsilon=1.0), "delta", "real", 1.0),
    ("private-ftpl delta (Gaussian)", _agent("private-ftpl", "delta", epsilon=1.0), "delta",
     "real", 0.0),
    ("hedge eta", _agent("hedge", "eta"), "eta", "real", -1.0),
    # counters
    ("make_counter horizon", _counter("horizon"), "horizon", "int", 0),
    ("make_counter epsilon", _counter("epsilon"), "epsilon", "real", -1.0),
    ("make_counter delta", _counter("delta"), "delta", "real", 0.0),
    ("make_counter sensitivity", _counter("sensitivity"), "sensitivity", "real", 0.0),
    # the auditor
    ("audit runs", _audit("runs"), "runs", "int", 9),
    ("audit confidence", _audit("confidence"), "confidence", "real", 1.0),
    ("audit tau", _audit("tau"), "tau", "int", 21),
    # sweeps
    ("make_games horizon", _sweep("horizon"), "horizon", "int", 0),
    ("make_games seeds", _sweep("seeds"), "seeds", "int", 0),
    ("make_games epsilon", _sweep("epsilon"), "epsilon", "real", -1.0),
    ("make_games delta", _sweep("delta"), "delta", "real", 1.0),
    # the command line
    ("dp-online --horizon", _cli("--horizon"), "horizon", "int", 0),
    ("dp-online --seeds", _cli("--seeds"), "seeds", "int", 0),
    ("dp-online --workers", _cli("--workers"), "workers", "int", 0),
    ("dp-online --timeout", _cli("--timeout"), "timeout", "real", 0.0),
]
#: The values every entry point refuses, by kind (the out-of-range one is added).
BAD_FOR = {"int": [True, 1.5, "3", 1j, math.nan], "real": [True, "3", 1j, math.nan]}


def _shown(label: str, bad: object) -> object:
    """The value the message shows: the command line reads its text as a number first."""
    if not label.startswith("dp-online"):
        return bad
    from dp_online_envs.lab.cli import _read_number

    return _read_number(str(bad))


ENTRY_CASES = [
    pytest.param(call, name, "three" if (bad == "3" and label.startswith("dp-online")) else bad,
                 label, id=f"{label}={bad!r}")
    for label, call, name, kind, out_of_range in ENTRY_POINTS
    for bad in [*BAD_FOR[kind], out_of_range]
]


@pytest.mark.parametrize("call, name, bad, label", ENTRY_CASES)
def test_every_entry_point_refuses_naming_the_argument(call, name, bad, label):
    """bool, 1.5 for an integer, a string, a complex number, NaN and an out-of-range
    value: refused with the module's message, naming the argument and the value."""
    with pytest.raises(ValueError) as err:
        call(bad)
    assert f"{name}={_shown(label, bad)!r} rejected: expected " in str(err.value)
