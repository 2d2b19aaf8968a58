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
(the separation study, ``benchmarks/studies/separation``, measures it against each
family's learners).

Versions: any change to what an id plays bumps its ``-vN``; the former version stays
registered and builds the former game (its rows are :data:`FORMER_CONFIGS`, listed in
:data:`FORMER_IDS`, outside the benchmark list :data:`ENV_IDS`). Each id's version history
is :data:`dp_online_envs.envs.history.VERSION_HISTORY` (data; the ``Version History``
section of :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv` and the env pages
are written from it); ``CHANGELOG.md`` lists the changes by release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import gymnasium as gym

from dp_online_envs import datasets
from dp_online_envs import domains as dom
from dp_online_envs import losses as ls
from dp_online_envs.adversaries import Adversary, make_adversary
from dp_online_envs.envs import real_data
from dp_online_envs.envs.contextual import (
    build_contextual_env,
    class_arms,
    class_data,
)
from dp_online_envs.envs.online_env import OnlineLearningEnv
from dp_online_envs.losses.contextual import ContextualLinearLoss
from dp_online_envs.validation import check_int, did_you_mean
from dp_online_envs.wrappers import FeedbackGuard, RegretRecorder

#: The options of one ``build_env`` call: every option of the id, defaults filled in.
Options = dict[str, Any]


def _complete_graph(n: int) -> tuple[int, list[tuple[int, int]]]:
    """The complete graph on ``n`` nodes as ``(n_nodes, edges)``."""
    return n, [(i, j) for i in range(n) for j in range(i + 1, n)]


def graph_cut_loss(n: int, graph: tuple[int, list[tuple[int, int]]] | None = None,
                   **kwargs: Any) -> ls.GraphCutLoss:
    """The graph-cut family on the ground set ``[n]``, in the shape of :data:`LOSSES`.

    Args:
        n: The ground set's size.
        graph: ``(n_nodes, edges)``; default the complete graph on the ``n`` elements.
        **kwargs: The remaining options of :class:`~dp_online_envs.losses.GraphCutLoss`
            (``scale``, ``unary``).
    """
    n_nodes, edges = _complete_graph(n) if graph is None else graph
    return ls.GraphCutLoss(n_nodes, edges, **kwargs)


#: Loss family constructors by name: ``LOSSES[name](dim, **loss_kwargs)``.
LOSSES: dict[str, Callable[..., ls.LossFamily]] = {
    "linear": ls.LinearLoss,
    "distance": ls.DistanceLoss,
    "absolute": ls.AbsoluteLinearLoss,
    "hinge": ls.HingeLoss,
    "logistic": ls.LogisticLoss,
    "quadratic": ls.QuadraticLoss,
    "graph-cut": graph_cut_loss,
    "concave-modular": ls.ConcaveModularLoss,
    "facility-location": ls.FacilityLocationLoss,
    "log-wealth": ls.LogWealthLoss,
    "contextual-linear": ContextualLinearLoss,
}
LINEAR_LOSSES = ("linear",)
CONVEX_LOSSES = ("distance", "absolute", "hinge", "logistic", "quadratic", "linear")
SUBMODULAR_LOSSES = ("concave-modular", "graph-cut", "facility-location")

COMMON_OPTIONS: Options = {
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


@dataclass(frozen=True, kw_only=True)
class EnvConfig:
    """One registered id: what it models and how it is built.

    Every id is built the same way (:meth:`build_parts`): ``domain(opts)`` makes the
    decision set, then ``LOSSES[opts["loss"]](domain.dim, **loss_kwargs)`` the loss
    family, where ``loss_kwargs`` is ``loss_defaults`` updated by the caller's
    ``loss_kwargs`` option.

    Attributes:
        id: The Gymnasium id.
        decision_set: What the learner plays, for the README table.
        losses: The loss functions, for the README table.
        feedback: ``"full"`` or ``"bandit"``.
        paper: The paper(s) whose setting the id models.
        domain: Builds the decision set from the options.
        loss_names: The names of :data:`LOSSES` the id offers.
        loss_defaults: Keyword arguments of the loss family that the caller's
            ``loss_kwargs`` may override (e.g. the set the linear parameters lie in).
        defaults: The id's own options and its overrides of :data:`COMMON_OPTIONS`.
        data: For ids built on real data (:mod:`dp_online_envs.datasets`): builds the
            adversary that replays the data, chosen by ``adversary="data"``.
        benchmark: ``False`` for a game whose default does not separate learning from
            trivial play: it is not in :data:`ENV_IDS` (the benchmark list the README
            table, the separation table and the registry tests cover) and, unless it is
            a former version (:data:`FORMER_CONFIGS`, registered so that ``gym.make``
            of an old id plays the old game) or a contextual id
            (:data:`CONTEXTUAL_CONFIGS`), not registered with Gymnasium;
            :func:`build_env` and sweep files still build it by its id (see
            :data:`UNLISTED_IDS`).
        build: Builds the wrapped env itself from ``(config, options)`` instead of
            :func:`build_env`'s ``FeedbackGuard(RegretRecorder(OnlineLearningEnv))``
            (the contextual ids: their env, ledger and adversaries differ).
    """

    id: str
    decision_set: str
    losses: str
    feedback: str
    paper: str
    domain: Callable[[Options], dom.Domain]
    loss_names: tuple[str, ...]
    loss_defaults: dict[str, Any] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    data: Callable[[Options], Adversary] | None = None
    benchmark: bool = True
    build: Callable[[EnvConfig, Options], gym.Env] | None = None

    @property
    def name(self) -> str:
        """The id without its version (``DPBandit-Matroid`` of ``DPBandit-Matroid-v1``)."""
        return gym.envs.registration.parse_env_id(self.id)[1]

    @property
    def version(self) -> int:
        """The id's version N (``-vN``): bumped whenever what the id plays changes."""
        return int(gym.envs.registration.parse_env_id(self.id)[2])

    def options(self) -> Options:
        """Every accepted option with its default."""
        return {**COMMON_OPTIONS, **self.defaults}

    def build_parts(self, opts: Options) -> tuple[dom.Domain, ls.LossFamily]:
        """The decision set and the loss family of one game.

        Args:
            opts: Every option of the id (:meth:`options` updated by the caller's).

        Raises:
            ValueError: On a loss the id does not offer (the message lists those it
                does) or an option the domain or the loss family rejects.
        """
        domain = self.domain(opts)
        name = opts["loss"]
        if name not in self.loss_names:
            raise ValueError(f"loss={name!r} is not offered here; valid: {list(self.loss_names)}")
        kwargs = {**self.loss_defaults, **(opts["loss_kwargs"] or {})}
        return domain, LOSSES[name](domain.dim, **kwargs)

    def adversary(self, opts: Options) -> Adversary:
        """The adversary of one game: the data replay for ``adversary="data"`` on an id
        built on real data, else :func:`~dp_online_envs.adversaries.make_adversary`.

        Raises:
            ValueError: On ``adversary="data"`` with ``adversary_kwargs`` (the data
                replay takes none).
        """
        if self.data is not None and opts["adversary"] == "data":
            if opts["adversary_kwargs"]:
                raise ValueError(f"adversary='data' takes no adversary_kwargs, got "
                                 f"{opts['adversary_kwargs']!r}")
            return self.data(opts)
        return make_adversary(opts["adversary"], **(opts["adversary_kwargs"] or {}))


def _unpacked(opts: Options, key: str, shape: str) -> tuple[Any, ...]:
    """Option ``key``, a tuple of ``len(shape.split(','))`` items (``shape`` names them
    in the message of a value that is not one)."""
    value = opts[key]
    size = len(shape.split(","))
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) \
            or len(value) != size:
        raise ValueError(f"{key}={value!r} rejected: expected a sequence ({shape})")
    return tuple(value)


def _matroid(opts: Options) -> dom.MatroidPolytope:
    kind = opts["matroid"]
    if kind == "uniform":
        n, rank = check_int("n", opts["n"], 1), check_int("rank", opts["rank"], 1)
        if rank > n:
            raise ValueError(f"rank={rank} rejected: expected an integer in [1, n={n}]")
        return dom.UniformMatroid(n, rank)
    if kind == "partition":
        n, parts = opts["n"], opts["blocks"]
        blocks = [list(range(i, n, parts)) for i in range(parts)]
        return dom.PartitionMatroid(blocks, [max(1, opts["rank"] // parts)] * parts)
    if kind == "graphic":
        n_nodes, edges = (_unpacked(opts, "graph", "n_nodes, edges")
                          if opts["graph"] is not None else _complete_graph(5))
        return dom.GraphicMatroid(n_nodes, edges)
    raise ValueError(f"matroid={kind!r}, expected one of ['uniform', 'partition', 'graphic']")


def _flow(opts: Options) -> dom.FlowPolytope:
    if opts["graph"] is not None:
        n_nodes, edges, source, sink = _unpacked(opts, "graph", "n_nodes, edges, source, sink")
        return dom.FlowPolytope(n_nodes, edges, source, sink)
    rows, cols = _unpacked(opts, "grid", "rows, cols")
    return dom.FlowPolytope.grid(rows, cols)


def _ball_or_cube(opts: Options) -> dom.Domain:
    if opts["domain"] == "ball":
        return dom.Ball(opts["dim"])
    if opts["domain"] == "cube":
        return dom.Cube(opts["dim"])
    raise ValueError(f"domain={opts['domain']!r}, expected 'ball' or 'cube'")


def _simplex(opts: Options) -> dom.Domain:
    return dom.Simplex(opts["n_arms"])


def _arms(opts: Options) -> dom.Domain:
    return dom.Arms(opts["n_arms"])


def _ball(opts: Options) -> dom.Domain:
    return dom.Ball(opts["dim"])


def _cube(opts: Options) -> dom.Domain:
    return dom.Cube(opts["dim"])


def _base_polytope(opts: Options) -> dom.Domain:
    return dom.SubmodularBasePolytope.concave_cardinality(opts["n"])


def _birkhoff(opts: Options) -> dom.Domain:
    return dom.Birkhoff(opts["n"])


def _ground_set(opts: Options) -> dom.Domain:
    return dom.GroundSet(opts["n"])


_MATROID = {"matroid": "uniform", "n": 10, "rank": 4, "blocks": 2, "graph": None}
_STOCHASTIC_LINEAR = {"adversary": "stochastic", "loss": "linear"}
#: The polytope ids' losses: linear, their mean planting a vertex as the unique best
#: point with a margin (:class:`~dp_online_envs.adversaries.PlantedVertexAdversary`).
_PLANTED_VERTEX_LINEAR = {"adversary": "planted-vertex", "loss": "linear"}

#: The README's words for the linear losses whose parameters lie in a theta set.
_THETA_SET_LOSSES = {"unit": "linear, [0,1]^K", "l2": "linear, ||theta||_2 <= 1",
                     "l1": "linear, ||theta||_1 <= 1", "linf": "linear, ||theta||_inf <= 1"}


def _linear_id(*, theta_set: str, own_defaults: dict[str, Any],
               adversary: str = "stochastic", **row: Any) -> EnvConfig:
    """An id of Agarwal-Singh 2017's setting: linear losses with parameters in
    ``theta_set``, a stochastic adversary by default.

    Args:
        theta_set: The :class:`~dp_online_envs.losses.LinearLoss` parameter set.
        own_defaults: The id's own options (its size) with their defaults.
        adversary: The default adversary.
        **row: The remaining :class:`EnvConfig` fields (``paper`` defaults to
            Agarwal-Singh 2017).
    """
    row.setdefault("paper", "Agarwal-Singh 2017")
    return EnvConfig(losses=_THETA_SET_LOSSES[theta_set], loss_names=LINEAR_LOSSES,
                     loss_defaults={"theta_set": theta_set},
                     defaults={**own_defaults, **_STOCHASTIC_LINEAR, "adversary": adversary},
                     **row)


# The fields that the ids of one paper's setting share; each row adds its own.
_smith_thakurta_ball = partial(EnvConfig, decision_set="l2 ball", paper="Smith-Thakurta 2013",
                               domain=_ball, loss_names=CONVEX_LOSSES)
_ene_nguyen_vladu = partial(EnvConfig, losses="Lipschitz convex", feedback="bandit",
                            paper="Ene-Nguyen-Vladu 2021", loss_names=CONVEX_LOSSES)
_cardoso_cummings = partial(EnvConfig, decision_set="subsets 2^[n]",
                            losses="submodular, [-M, M]", paper="Cardoso-Cummings 2019",
                            domain=_ground_set, loss_names=SUBMODULAR_LOSSES,
                            defaults={"n": 8, "adversary": "planted-vertex",
                                      "loss": "concave-modular"})

CONFIGS: list[EnvConfig] = [
    _linear_id(id="DPFullInfo-Experts-v0", decision_set="simplex (K experts)", feedback="full",
               paper="Agarwal-Singh 2017; Smith-Thakurta 2013", domain=_simplex,
               theta_set="unit", own_defaults={"n_arms": 10}),
    _linear_id(id="DPBandit-MAB-v0", decision_set="K arms", feedback="bandit", domain=_arms,
               theta_set="unit", own_defaults={"n_arms": 10}),
    _linear_id(id="DPFullInfo-Sphere-v1", decision_set="l2 ball", feedback="full",
               domain=_ball, theta_set="l2", own_defaults={"dim": 10}),
    _linear_id(id="DPFullInfo-Cube-v2", decision_set="cube [-1,1]^N", feedback="full",
               domain=_cube, theta_set="linf", own_defaults={"dim": 10},
               adversary="planted-vertex"),
    _linear_id(id="DPBandit-Linear-v1", decision_set="l2 ball (or cube)", feedback="bandit",
               paper="Agarwal-Singh 2017 (SCRiBLe)", domain=_ball_or_cube,
               theta_set="l2", own_defaults={"dim": 5, "domain": "ball"}),
    _smith_thakurta_ball(id="DPFullInfo-Convex-v1", losses="Lipschitz convex",
                         feedback="full",
                         defaults={"dim": 5, "adversary": "planted", "loss": "absolute"}),
    _smith_thakurta_ball(id="DPFullInfo-StronglyConvex-v1",
                         losses="H-strongly convex quadratic", feedback="full",
                         defaults={"dim": 5, "adversary": "planted", "loss": "quadratic"}),
    _smith_thakurta_ball(id="DPBandit-Convex-v1", losses="Lipschitz convex", feedback="bandit",
                         defaults={"dim": 2, "adversary": "planted", "loss": "absolute"}),
    _smith_thakurta_ball(id="DPBandit-StronglyConvex-v1",
                         losses="H-strongly convex quadratic", feedback="bandit",
                         defaults={"dim": 2, "adversary": "planted", "loss": "quadratic"}),
    _ene_nguyen_vladu(id="DPBandit-Matroid-v2", decision_set="matroid polytope",
                      domain=_matroid, defaults={**_MATROID, **_PLANTED_VERTEX_LINEAR}),
    _ene_nguyen_vladu(id="DPBandit-Flow-v2", decision_set="s-t path polytope (DAG)",
                      domain=_flow, defaults={"grid": (3, 4), "graph": None,
                                              **_PLANTED_VERTEX_LINEAR}),
    _ene_nguyen_vladu(id="DPBandit-SubmodularBase-v2", decision_set="submodular base polytope",
                      domain=_base_polytope, defaults={"n": 7, **_PLANTED_VERTEX_LINEAR}),
    _ene_nguyen_vladu(id="DPBandit-Birkhoff-v2", decision_set="Birkhoff polytope",
                      domain=_birkhoff, defaults={"n": 4, **_PLANTED_VERTEX_LINEAR}),
    EnvConfig(id="DPFullInfo-Matroid-v2", decision_set="matroid polytope",
              losses="linear / convex", feedback="full",
              paper="online Frank-Wolfe baseline (Hazan-Kale 2012)",
              domain=_matroid, loss_names=CONVEX_LOSSES,
              defaults={**_MATROID, **_PLANTED_VERTEX_LINEAR}),
    _cardoso_cummings(id="DPFullInfo-Submodular-v2", feedback="full"),
    _cardoso_cummings(id="DPBandit-Submodular-v2", feedback="bandit"),
    # Built on real data (the ``realdata`` extra ships it; see envs/real_data.py).
    EnvConfig(id="DPFullInfo-Classification-v0", decision_set="l2 ball (30 features)",
              losses="logistic / hinge on breast-cancer examples", feedback="full",
              paper="Smith-Thakurta 2013 (real data)", domain=real_data.classification_ball,
              loss_names=("logistic", "hinge"), data=real_data.classification_data,
              defaults={"adversary": "data", "loss": "logistic", "horizon": 2048}),
    EnvConfig(id="DPBandit-Classes-v0", decision_set="K arms (one per class)",
              losses="misclassification 1[arm != label]", feedback="bandit",
              paper="Agarwal-Singh 2017 (real data)", domain=real_data.class_arms,
              loss_names=LINEAR_LOSSES, loss_defaults={"theta_set": "unit"},
              data=real_data.class_data,
              defaults={"dataset": "breast-cancer", "adversary": "data", "loss": "linear",
                        "horizon": 4096}),
    EnvConfig(id="DPFullInfo-Portfolio-v1", decision_set="simplex (stocks GE, MSFT)",
              losses="-log <r_t, x>, r_t daily price relatives in [0.8, 1.2]",
              feedback="full", paper="Cover 1991; Hazan-Agarwal-Kale 2007 (real data)",
              domain=real_data.portfolio_simplex, loss_names=("log-wealth",),
              loss_defaults=dict(zip(("r_min", "r_max"), real_data.PORTFOLIO_RANGE)),
              data=real_data.portfolio_data,
              defaults={"tickers": real_data.PORTFOLIO_TICKERS, "adversary": "data",
                        "loss": "log-wealth", "horizon": 8312}),
]

_CURRENT = {c.id: c for c in CONFIGS}


def _former(env_id: str, version: int, defaults: dict[str, Any], **fields: Any) -> EnvConfig:
    """Version ``version`` of the game of ``env_id``: its row with the former defaults.

    Args:
        env_id: The current id of the game.
        version: The former version N (the id ``<name>-vN``).
        defaults: The options whose defaults were different then (the others are the
            current row's).
        **fields: Other :class:`EnvConfig` fields that were different then (the README
            words, ``loss_defaults``).
    """
    current = _CURRENT[env_id]
    return replace(current, id=f"{current.name}-v{version}", benchmark=False,
                   defaults={**current.defaults, **defaults}, **fields)


_OBLIVIOUS = {"adversary": "oblivious"}
_STOCHASTIC = {"adversary": "stochastic"}
#: The cube's losses before ``-v2``: parameters in the l1 ball.
_L1_LOSSES = {"losses": _THETA_SET_LOSSES["l1"], "loss_defaults": {"theta_set": "l1"}}
#: The former versions of the ids whose defaults changed: ``gym.make`` and
#: :func:`build_env` build the former game from its id (the version history of each id
#: is in :class:`~dp_online_envs.envs.online_env.OnlineLearningEnv`'s docstring).
FORMER_CONFIGS: list[EnvConfig] = [
    *(_former(f"{name}-v1", 0, _OBLIVIOUS) for name in (
        "DPFullInfo-Sphere", "DPBandit-Linear", "DPFullInfo-Convex",
        "DPFullInfo-StronglyConvex")),
    _former("DPFullInfo-Cube-v2", 1, _STOCHASTIC, **_L1_LOSSES),
    _former("DPFullInfo-Cube-v2", 0, _OBLIVIOUS, **_L1_LOSSES),
    *(_former(f"{name}-v2", version, adversary) for name in (
        "DPFullInfo-Submodular", "DPBandit-Submodular")
      for version, adversary in ((1, _STOCHASTIC), (0, _OBLIVIOUS))),
    _former("DPBandit-Convex-v1", 0, {"dim": 5, **_OBLIVIOUS}),
    _former("DPBandit-StronglyConvex-v1", 0, {"dim": 5, **_OBLIVIOUS}),
    _former("DPBandit-Matroid-v2", 1, {"n": 3, "rank": 2, "adversary": "planted"}),
    _former("DPBandit-Matroid-v2", 0, {"n": 8, "rank": 3, "loss": "distance", **_OBLIVIOUS}),
    _former("DPBandit-Flow-v2", 1, {"grid": (2, 3), "adversary": "planted"}),
    _former("DPBandit-Flow-v2", 0, {"grid": (3, 4), "loss": "distance", **_OBLIVIOUS}),
    _former("DPBandit-SubmodularBase-v2", 1, {"n": 2, "adversary": "planted"}),
    _former("DPBandit-SubmodularBase-v2", 0, {"n": 6, "loss": "distance", **_OBLIVIOUS}),
    _former("DPBandit-Birkhoff-v2", 1, {"n": 2, "loss": "absolute", "adversary": "planted"}),
    _former("DPBandit-Birkhoff-v2", 0, {"n": 4, "loss": "distance", **_OBLIVIOUS}),
    _former("DPFullInfo-Matroid-v2", 1, {"n": 8, "rank": 3, "adversary": "stochastic"}),
    _former("DPFullInfo-Matroid-v2", 0, {"n": 8, "rank": 3, **_OBLIVIOUS}),
    _former("DPFullInfo-Portfolio-v1", 0,
            {"tickers": datasets.SP500_TICKERS, "horizon": 2048},
            decision_set="simplex (20 stocks)",
            losses="-log <r_t, x>, r_t daily price relatives clipped to [0.5, 2]",
            loss_defaults={"r_min": 0.5, "r_max": 2.0}),
]

#: The contextual bandit ids (:mod:`dp_online_envs.envs.contextual`): the learner sees
#: the round's context before it plays. Registered with Gymnasium, but not (yet) in the
#: benchmark list :data:`ENV_IDS`, whose studies, leaderboard and grading do not cover
#: contextual learners.
CONTEXTUAL_CONFIGS: list[EnvConfig] = [
    EnvConfig(id="DPBandit-ContextualLinear-v0", decision_set="K arms, contexts in R^d",
              losses="Bernoulli, mean <theta_a, c_t> in [0,1]", feedback="bandit",
              paper="Li-Chu-Langford-Schapire 2010; Shariff-Sheffet 2018", domain=_arms,
              loss_names=("contextual-linear",), loss_defaults={"context_dim": 5},
              defaults={"n_arms": 5, "adversary": "stochastic-linear",
                        "loss": "contextual-linear", "horizon": 2000},
              benchmark=False, build=build_contextual_env),
    # Built on real data (the ``realdata`` extra ships it): full-feedback data replayed
    # as bandit feedback.
    EnvConfig(id="DPBandit-ContextualClasses-v0",
              decision_set="K arms (one per class), contexts = the example's features",
              losses="misclassification 1[arm != label]", feedback="bandit",
              paper="supervised-to-bandit conversion (real data)", domain=class_arms,
              loss_names=("contextual-linear",), data=class_data,
              defaults={"dataset": "wine", "adversary": "data",
                        "loss": "contextual-linear", "horizon": 2000},
              benchmark=False, build=build_contextual_env),
]
#: The contextual ids (:data:`CONTEXTUAL_CONFIGS`).
CONTEXTUAL_IDS: tuple[str, ...] = tuple(c.id for c in CONTEXTUAL_CONFIGS)

#: Every id :func:`build_env` builds, current and former.
ENV_CONFIGS: dict[str, EnvConfig] = {
    c.id: c for c in [*CONFIGS, *FORMER_CONFIGS, *CONTEXTUAL_CONFIGS]}
#: The registered benchmark ids, each the newest version of its game: every one
#: separates learning from trivial play.
ENV_IDS: tuple[str, ...] = tuple(c.id for c in CONFIGS if c.benchmark)
#: The former versions (:data:`FORMER_CONFIGS`): registered, so that ``gym.make`` of a
#: former id plays the former game (Gymnasium warns that it is out of date), but no
#: benchmark.
FORMER_IDS: tuple[str, ...] = tuple(c.id for c in FORMER_CONFIGS)
#: Games :func:`build_env` builds that are not registered benchmarks
#: (``EnvConfig.benchmark`` is ``False``).
UNLISTED_IDS: tuple[str, ...] = tuple(c.id for c in CONFIGS if not c.benchmark)


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


def resolved_options(env_id: str, **kwargs: Any) -> Options:
    """Every option of one game: the id's defaults updated by ``kwargs``.

    ``loss_kwargs`` is resolved too: the id's ``loss_defaults`` updated by the caller's.
    What :func:`build_env` builds is a function of the id and this mapping alone, so it
    is what a game's identity hashes (with the id's version;
    :meth:`dp_online_envs.lab.experiments.GameSpec.identity`).

    Raises:
        ValueError: On an unknown id (see :func:`env_config`) or a count option that is
            not an integer >= 1.
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
    opts["loss_kwargs"] = {**config.loss_defaults, **(opts["loss_kwargs"] or {})}
    return opts


def build_env(env_id: str, **kwargs: Any) -> gym.Env:
    """Build the wrapped env of a registered id: ``FeedbackGuard(RegretRecorder(env))``.

    Raises:
        ValueError: On an unknown id (see :func:`env_config`).
        TypeError: On an option the id does not accept (the message lists the valid ones).
    """
    config = env_config(env_id)
    opts = resolved_options(env_id, **kwargs)
    if config.build is not None:
        return config.build(config, opts)
    domain, loss = config.build_parts(opts)
    adversary = config.adversary(opts)
    env = OnlineLearningEnv(
        domain, loss, adversary,
        feedback=config.feedback, horizon=opts["horizon"], invalid_action=opts["invalid_action"],
        render_mode=opts["render_mode"], record_losses=opts["record_losses"],
    )
    return FeedbackGuard(RegretRecorder(env, checkpoints=opts["checkpoints"]), opts["feedback"])


#: The entry point of every id, as a string so that ``gym.spec(id).to_json()`` works.
ENTRY_POINT = "dp_online_envs.envs.registry:build_env"
#: The vector entry point of every id (``gym.make_vec``'s default mode): the
#: :class:`~dp_online_envs.envs.sync_vector.GuardedSyncVectorEnv` of B scalar games.
SYNC_ENTRY_POINT = "dp_online_envs.envs.sync_vector:make_sync_vector_env"


def register_all() -> None:
    """Register every benchmark id (:data:`ENV_IDS`) and every former version
    (:data:`FORMER_IDS`) with Gymnasium (idempotent).

    Each spec has the entry point :data:`ENTRY_POINT` and ``kwargs={"env_id": id}``, so
    specs serialize (``gym.spec(id).to_json()``) and ``gym.make(id, **options)`` calls
    ``build_env(env_id=id, **options)``. Every spec has the vector entry point
    :data:`SYNC_ENTRY_POINT`, which Gymnasium 1.4 makes
    ``gym.make_vec``'s default mode: ``gym.make_vec(id, num_envs=B)`` is, for every id,
    the :class:`~dp_online_envs.envs.sync_vector.GuardedSyncVectorEnv` of B scalar games
    (Gymnasium's ``SyncVectorEnv`` whose spec, ``env_fns`` and ``get_attr`` do not hand
    the adversary's options to a learner). The vector games are the opt-in
    :class:`~dp_online_envs.envs.vector_env.LinearVectorEnv`, whose own spec carries
    :data:`~dp_online_envs.envs.vector_env.VECTOR_ENTRY_POINT` (so
    ``gym.make_vec(venv.spec)`` remakes it).

    No spec has ``additional_wrappers``. A game ends at its ``horizon`` (``terminated``, the
    regret summary in ``info``); ``gym.make(id, max_episode_steps=k)`` puts a
    ``TimeLimit`` outside the env, which truncates at round k with ``info`` empty --
    ``agents.play`` still returns the k rounds' regret (through
    :func:`~dp_online_envs.wrappers.regret.regret_summary`), and
    ``TruncationSummary(gym.make(id, max_episode_steps=k))`` puts it in ``info``.
    """
    for env_id in (*ENV_IDS, *FORMER_IDS, *CONTEXTUAL_IDS):
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"env_id": env_id},
                         vector_entry_point=SYNC_ENTRY_POINT)
