"""The registered environment configurations.

Each id is a (decision set, loss family, feedback) triple with defaults that play in
seconds. ``gym.make(id, **overrides)`` accepts the common options below and the id's
own; an unknown option raises ``TypeError`` listing the valid ones.

Common options: ``horizon``, ``adversary`` (a name from
:data:`dp_online_envs.adversaries.ADVERSARIES` or an ``Adversary``),
``adversary_kwargs``, ``loss`` (a name from :data:`LOSSES`), ``loss_kwargs``,
``feedback`` (``"bandit"`` downgrades a full-information env; upgrades are refused),
``invalid_action`` (``"project"`` or ``"raise"``), ``render_mode``, ``record_losses``,
``checkpoints`` (rounds at which the regret curve is recorded).

Every default instance is one where not learning is costly: the ``center`` reference
agent (the domain's center; a uniformly random arm or subset) has regret linear in T
(``benchmarks/separation.py`` measures it against each family's learners).

Version history (v0):

* 2026-11 (issue 10), defaults changed to separating instances; the former ones stay
  available through the options shown:

  - ``DPFullInfo-Sphere-v0``, ``DPFullInfo-Cube-v0``, ``DPBandit-Linear-v0``,
    ``DPFullInfo-Matroid-v0``, ``DPFullInfo-Submodular-v0``,
    ``DPBandit-Submodular-v0``: ``adversary='oblivious'`` -> ``'stochastic'``;
  - ``DPFullInfo-Convex-v0``, ``DPFullInfo-StronglyConvex-v0``,
    ``DPBandit-Matroid-v0``, ``DPBandit-Flow-v0``, ``DPBandit-SubmodularBase-v0``,
    ``DPBandit-Birkhoff-v0``: ``adversary='oblivious'`` -> ``'planted'``;
  - ``DPBandit-Convex-v0``, ``DPBandit-StronglyConvex-v0``: ``dim=5,
    adversary='oblivious'`` -> ``dim=2, adversary='planted'`` (in dimension 2 the
    smoothing radii of ``fkm`` and ``bandit-pftal`` stay below the clamp of
    :mod:`agents.bandit.smoothing` from T = 2^12 on);
  - ``DPFullInfo-Experts-v0``, ``DPBandit-MAB-v0``: unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

from dp_online_envs import domains as dom
from dp_online_envs import losses as ls
from dp_online_envs.adversaries import make_adversary
from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.validation import check_int, did_you_mean
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder, TruncationSummary

#: Loss family constructors by name: ``LOSSES[name](dim, **loss_kwargs)``.
LOSSES: dict[str, Callable[..., ls.LossFamily]] = {
    "linear": ls.LinearLoss,
    "distance": ls.DistanceLoss,
    "absolute": ls.AbsoluteLinearLoss,
    "hinge": ls.HingeLoss,
    "logistic": ls.LogisticLoss,
    "quadratic": ls.QuadraticLoss,
    "graph-cut": None,  # needs a graph: built by _submodular_loss
    "concave-modular": ls.ConcaveModularLoss,
    "facility-location": ls.FacilityLocationLoss,
}
CONVEX_LOSSES = ("distance", "absolute", "hinge", "logistic", "quadratic", "linear")
SUBMODULAR_LOSSES = ("concave-modular", "graph-cut", "facility-location")

COMMON_OPTIONS: dict[str, Any] = {
    "horizon": 1000,
    "adversary": "oblivious",
    "adversary_kwargs": None,
    "loss": None,
    "loss_kwargs": None,
    "feedback": None,
    "invalid_action": "project",
    "render_mode": None,
    "record_losses": False,
    "checkpoints": None,
}

#: Options that are counts (a Simplex's ``k`` is ``n_arms`` here): checked under the
#: option's own name before the parts are built.
_COUNT_OPTIONS = frozenset({"n_arms", "dim", "n", "rank", "blocks"})


@dataclass(frozen=True)
class EnvConfig:
    """One registered id: what it models and how it is built."""

    id: str
    decision_set: str
    losses: str
    feedback: str
    paper: str
    build_parts: Callable[[dict[str, Any]], tuple[dom.Domain, ls.LossFamily]]
    defaults: dict[str, Any] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """Every accepted option with its default."""
        return {**COMMON_OPTIONS, **self.defaults}


def _loss(name: str, dim: int, allowed: tuple[str, ...], kwargs: dict | None):
    if name not in allowed:
        raise ValueError(f"loss={name!r} is not offered here; valid: {list(allowed)}")
    return LOSSES[name](dim, **(kwargs or {}))


def _matroid(opts: dict[str, Any]) -> dom.MatroidPolytope:
    kind = opts["matroid"]
    if kind == "uniform":
        return dom.UniformMatroid(opts["n"], opts["rank"])
    if kind == "partition":
        n, parts = opts["n"], opts["blocks"]
        blocks = [list(range(i, n, parts)) for i in range(parts)]
        return dom.PartitionMatroid(blocks, [max(1, opts["rank"] // parts)] * parts)
    if kind == "graphic":
        n_nodes, edges = opts["graph"] if opts["graph"] is not None else _complete_graph(5)
        return dom.GraphicMatroid(n_nodes, edges)
    raise ValueError(f"matroid={kind!r}, expected one of ['uniform', 'partition', 'graphic']")


def _complete_graph(n: int) -> tuple[int, list[tuple[int, int]]]:
    return n, [(i, j) for i in range(n) for j in range(i + 1, n)]


def _flow(opts: dict[str, Any]) -> dom.FlowPolytope:
    if opts["graph"] is not None:
        n_nodes, edges, source, sink = opts["graph"]
        return dom.FlowPolytope(n_nodes, edges, source, sink)
    rows, cols = opts["grid"]
    return dom.FlowPolytope.grid(rows, cols)


def _submodular_loss(opts: dict[str, Any], n: int) -> ls.LossFamily:
    name = opts["loss"]
    if name not in SUBMODULAR_LOSSES:
        raise ValueError(f"loss={name!r} is not offered here; valid: {list(SUBMODULAR_LOSSES)}")
    kwargs = dict(opts["loss_kwargs"] or {})
    if name == "graph-cut":
        n_nodes, edges = kwargs.pop("graph", None) or _complete_graph(n)
        return ls.GraphCutLoss(n_nodes, edges, **kwargs)
    return LOSSES[name](n, **kwargs)


def _parts_convex(domain_fn):
    def build(opts):
        domain = domain_fn(opts)
        return domain, _loss(opts["loss"], domain.dim, CONVEX_LOSSES, opts["loss_kwargs"])

    return build


def _linear_parts(domain_fn, theta_set: str):
    def build(opts):
        domain = domain_fn(opts)
        kwargs = {"theta_set": theta_set, **(opts["loss_kwargs"] or {})}
        return domain, _loss(opts["loss"], domain.dim, ("linear",), kwargs)

    return build


def _ball_or_cube(opts):
    if opts["domain"] == "ball":
        return dom.Ball(opts["dim"])
    if opts["domain"] == "cube":
        return dom.Cube(opts["dim"])
    raise ValueError(f"domain={opts['domain']!r}, expected 'ball' or 'cube'")


_MATROID = {"matroid": "uniform", "n": 8, "rank": 3, "blocks": 2, "graph": None}

CONFIGS: list[EnvConfig] = [
    EnvConfig("DPFullInfo-Experts-v0", "simplex (K experts)", "linear, [0,1]^K", "full",
              "Agarwal-Singh 2017; Smith-Thakurta 2013",
              _linear_parts(lambda opts: dom.Simplex(opts["n_arms"]), "unit"),
              {"n_arms": 10, "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPBandit-MAB-v0", "K arms", "linear, [0,1]^K", "bandit", "Agarwal-Singh 2017",
              _linear_parts(lambda opts: dom.Arms(opts["n_arms"]), "unit"),
              {"n_arms": 10, "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPFullInfo-Sphere-v0", "l2 ball", "linear, ||theta||_2 <= 1", "full",
              "Agarwal-Singh 2017", _linear_parts(lambda opts: dom.Ball(opts["dim"]), "l2"),
              {"dim": 10, "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPFullInfo-Cube-v0", "cube [-1,1]^N", "linear, ||theta||_1 <= 1", "full",
              "Agarwal-Singh 2017", _linear_parts(lambda opts: dom.Cube(opts["dim"]), "l1"),
              {"dim": 10, "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPBandit-Linear-v0", "l2 ball (or cube)", "linear, ||theta||_2 <= 1", "bandit",
              "Agarwal-Singh 2017 (SCRiBLe)", _linear_parts(_ball_or_cube, "l2"),
              {"dim": 5, "domain": "ball", "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPFullInfo-Convex-v0", "l2 ball", "Lipschitz convex", "full",
              "Smith-Thakurta 2013", _parts_convex(lambda opts: dom.Ball(opts["dim"])),
              {"dim": 5, "adversary": "planted", "loss": "absolute"}),
    EnvConfig("DPFullInfo-StronglyConvex-v0", "l2 ball", "H-strongly convex quadratic", "full",
              "Smith-Thakurta 2013", _parts_convex(lambda opts: dom.Ball(opts["dim"])),
              {"dim": 5, "adversary": "planted", "loss": "quadratic"}),
    EnvConfig("DPBandit-Convex-v0", "l2 ball", "Lipschitz convex", "bandit",
              "Smith-Thakurta 2013", _parts_convex(lambda opts: dom.Ball(opts["dim"])),
              {"dim": 2, "adversary": "planted", "loss": "absolute"}),
    EnvConfig("DPBandit-StronglyConvex-v0", "l2 ball", "H-strongly convex quadratic", "bandit",
              "Smith-Thakurta 2013", _parts_convex(lambda opts: dom.Ball(opts["dim"])),
              {"dim": 2, "adversary": "planted", "loss": "quadratic"}),
    EnvConfig("DPBandit-Matroid-v0", "matroid polytope", "Lipschitz convex", "bandit",
              "Ene-Nguyen-Vladu 2021", _parts_convex(_matroid),
              {**_MATROID, "adversary": "planted", "loss": "distance"}),
    EnvConfig("DPBandit-Flow-v0", "s-t path polytope (DAG)", "Lipschitz convex", "bandit",
              "Ene-Nguyen-Vladu 2021", _parts_convex(_flow),
              {"grid": (3, 4), "graph": None, "adversary": "planted", "loss": "distance"}),
    EnvConfig("DPBandit-SubmodularBase-v0", "submodular base polytope", "Lipschitz convex",
              "bandit", "Ene-Nguyen-Vladu 2021",
              _parts_convex(lambda opts: dom.SubmodularBasePolytope.concave_cardinality(opts["n"])),
              {"n": 6, "adversary": "planted", "loss": "distance"}),
    EnvConfig("DPBandit-Birkhoff-v0", "Birkhoff polytope", "Lipschitz convex", "bandit",
              "Ene-Nguyen-Vladu 2021", _parts_convex(lambda opts: dom.Birkhoff(opts["n"])),
              {"n": 4, "adversary": "planted", "loss": "distance"}),
    EnvConfig("DPFullInfo-Matroid-v0", "matroid polytope", "linear / convex", "full",
              "online Frank-Wolfe baseline (Hazan-Kale 2012)", _parts_convex(_matroid),
              {**_MATROID, "adversary": "stochastic", "loss": "linear"}),
    EnvConfig("DPFullInfo-Submodular-v0", "subsets 2^[n]", "submodular, [-M, M]", "full",
              "Cardoso-Cummings 2019",
              lambda opts: (dom.GroundSet(opts["n"]), _submodular_loss(opts, opts["n"])),
              {"n": 8, "adversary": "stochastic", "loss": "concave-modular"}),
    EnvConfig("DPBandit-Submodular-v0", "subsets 2^[n]", "submodular, [-M, M]", "bandit",
              "Cardoso-Cummings 2019",
              lambda opts: (dom.GroundSet(opts["n"]), _submodular_loss(opts, opts["n"])),
              {"n": 8, "adversary": "stochastic", "loss": "concave-modular"}),
]

ENV_CONFIGS: dict[str, EnvConfig] = {c.id: c for c in CONFIGS}
ENV_IDS: tuple[str, ...] = tuple(ENV_CONFIGS)


def env_config(env_id: str) -> EnvConfig:
    """The configuration of a registered id.

    Raises:
        ValueError: On an unknown id; the message suggests the closest registered id and
            lists them all.
    """
    if env_id not in ENV_CONFIGS:
        raise ValueError(f"unknown env id {env_id!r};{did_you_mean(env_id, ENV_IDS)} "
                         f"valid: {list(ENV_IDS)}")
    return ENV_CONFIGS[env_id]


def build_env(env_id: str, **kwargs: Any) -> gym.Env:
    """Build the wrapped env of a registered id: ``FeedbackGuard(RegretRecorder(env))``.

    Raises:
        ValueError: On an unknown id (see :func:`env_config`).
        TypeError: On an option the id does not accept (the message lists the valid ones).
    """
    config = env_config(env_id)
    valid = config.options()
    unknown = sorted(set(kwargs) - set(valid))
    if unknown:
        raise TypeError(f"{env_id} got unknown option(s) {unknown}; valid: {sorted(valid)}")
    opts = {**valid, **kwargs}
    for name in _COUNT_OPTIONS.intersection(kwargs):  # under the name the caller gave
        check_int(name, opts[name], 1)
    domain, loss = config.build_parts(opts)
    adversary = make_adversary(opts["adversary"], **(opts["adversary_kwargs"] or {}))
    env = OnlineLearningEnv(
        domain, loss, adversary,
        feedback=config.feedback, horizon=opts["horizon"], invalid_action=opts["invalid_action"],
        render_mode=opts["render_mode"], record_losses=opts["record_losses"],
    )
    return FeedbackGuard(RegretRecorder(env, checkpoints=opts["checkpoints"]), opts["feedback"])


#: The entry point of every id, as a string so that ``gym.spec(id).to_json()`` works.
ENTRY_POINT = "dp_online_envs.envs.registry:build_env"


def register_all() -> None:
    """Register every id with Gymnasium (idempotent).

    Each spec has the entry point :data:`ENTRY_POINT` and ``kwargs={"env_id": id}``, so
    specs serialize (``gym.spec(id).to_json()``) and ``gym.make(id, **options)`` calls
    ``build_env(env_id=id, **options)``. Its one additional wrapper,
    :class:`~dp_online_envs.wrappers.TruncationSummary`, goes outside any ``TimeLimit``
    so that a truncated game still reports its regret in ``info``.
    """
    truncation = WrapperSpec(TruncationSummary.class_name(),
                             f"{TruncationSummary.__module__}:{TruncationSummary.__name__}", {})
    for env_id in ENV_IDS:
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"env_id": env_id},
                         additional_wrappers=(truncation,))
