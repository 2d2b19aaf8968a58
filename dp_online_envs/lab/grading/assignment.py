"""Assignment files: what a course asks of a submission and how it is graded.

An assignment is a mapping (a YAML, TOML or JSON file) validated into frozen
dataclasses with the same rules and messages as sweep files (location, bad value,
what was expected; a "did you mean" for misspelt keys and names)::

    name: dp-bandit
    title: Write an epsilon-DP learner for a 10-armed bandit
    envs: [DPBandit-MAB-v0]            # ids or {id, kwargs}, as in a sweep
    horizons: [2000]                   # one value may be given as is: 2000
    seeds: 5                           # hidden seeds per env and horizon
    secret: {env: DP_ONLINE_GRADE_SECRET}   # or {salt: "..."}: keys the hidden seeds
    privacy: {epsilon: 1, delta: 0}    # the budget a submission must declare
    references: [private-exp2, exp3]   # names or {name, kwargs, epsilon, delta}
    isolate_references: false          # play the references in their own processes too
    limits: {timeout: 10, startup_timeout: 120, memory_mb: 2048, cpu_seconds: 600,
             processes: 4, game_seconds: 200, submission_seconds: 1800}
    audit: {env: DPBandit-MAB-v0, reference: private-exp2, games: 16, confidence: 0.95}
    grading:
      regret: {points: 50, reference: private-exp2, factor: 1.5, zero_at: 3}
      declared: 20                     # points for declaring (at least) the budget
      audit: 30                        # points for an audit that does not refute it

Rules (beyond a sweep's): a private reference plays at the assignment's budget unless
it names its own ``epsilon``/``delta``; ``grading.regret.reference`` and
``audit.reference`` name one of ``references``; ``zero_at >= factor >= 1``; points are
``>= 0`` and not all zero; ``audit.env`` defaults to the first env (and must be one of
``envs``). Limits: ``memory_mb`` is the memory of a submission's sandbox as a whole,
shared by its at most ``processes`` processes and threads (default 4); ``game_seconds``
is the wall-clock budget of one game (default :func:`default_game_seconds` of the
longest horizon) and ``submission_seconds`` that of everything a submission runs, its
graded and audit games (default :func:`default_submission_seconds`): a game over either
fails with the reason, and the class goes on. The secret is either a ``salt`` in the file or the name of an environment
variable (``env``) holding it; its value is never stored in the dataclasses' ``repr``.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import agent_label
from dp_online_envs.lab.experiments.resolver import AgentResolver, resolve_agent
from dp_online_envs.lab.experiments.sweep import (
    _checked,
    _dir_name,
    _env_entry,
    _horizons,
    _list,
    _mapping,
    _text,
    make_games,
    read_data_file,
)
from dp_online_envs.lab.grading.audit_step import OneRunSettings
from dp_online_envs.lab.isolation import MAX_LIMIT, IsolationLimits
from dp_online_envs.validation import (
    check_delta,
    check_epsilon,
    check_int,
    check_real,
    did_you_mean,
)

#: Keys an assignment accepts at the top level (``envs``, ``horizons``, ``privacy`` and
#: ``references`` are required).
ASSIGNMENT_KEYS = ("name", "title", "description", "envs", "horizons", "seeds", "secret",
                   "privacy", "references", "isolate_references", "limits", "audit",
                   "grading")
SECRET_KEYS = ("env", "salt")
PRIVACY_KEYS = ("epsilon", "delta")
REFERENCE_KEYS = ("name", "kwargs", "epsilon", "delta")
LIMIT_KEYS = ("timeout", "startup_timeout", "memory_mb", "cpu_seconds", "processes",
              "game_seconds", "submission_seconds")
#: Default wall-clock budgets: this many seconds, plus :data:`SECONDS_PER_ROUND` per
#: round (of the game, or of every game a submission plays) and, for a submission,
#: :data:`SECONDS_PER_GAME` per game (a sandboxed process's start: about 1 s on an idle
#: machine, several on a loaded one). A sandboxed round trip takes 0.3 ms on an idle
#: machine and 1-2 ms on a loaded one.
BUDGET_BASE_SECONDS = 60.0
#: See :data:`BUDGET_BASE_SECONDS`.
SECONDS_PER_ROUND = 0.004
#: See :data:`BUDGET_BASE_SECONDS`.
SECONDS_PER_GAME = 15.0
#: Processes and threads of a submission's sandbox when the assignment names none.
DEFAULT_PROCESSES = 4
#: Keys of ``audit``: the env of the power measurement, the reference whose power is
#: reported, the noise cuts tried for that power, and every setting of the one-run
#: audit but its seed (which the secret gives).
AUDIT_KEYS = ("env", "reference", "power_factors",
              *(f.name for f in dataclasses.fields(OneRunSettings) if f.name != "seed"))
GRADING_KEYS = ("regret", "declared", "audit")
REGRET_KEYS = ("points", "reference", "factor", "zero_at")
#: The environment variable of the secret when the file names none.
DEFAULT_SECRET_ENV = "DP_ONLINE_GRADE_SECRET"


@dataclasses.dataclass(frozen=True)
class EnvEntry:
    """An env the submissions play: a registered id and its options."""

    id: str
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def label(self) -> str:
        """``id`` or ``id(key=value, ...)``."""
        return agent_label(self.id, dict(self.kwargs))


@dataclasses.dataclass(frozen=True)
class Reference:
    """A reference learner played on the same hidden seeds as the submissions.

    Attributes:
        name: Registered agent name (or ``"module:Class"``).
        kwargs: Agent options.
        epsilon: Its epsilon (``None`` for a non-private agent).
        delta: Its delta (``None`` for a non-private agent).
        agent_cls: The resolved class (not part of the comparison).
    """

    name: str
    kwargs: Mapping[str, Any]
    epsilon: float | None
    delta: float | None
    agent_cls: type | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """How the reference is named in tables and in ``grading.regret.reference``."""
        return agent_label(self.name, dict(self.kwargs))


@dataclasses.dataclass(frozen=True)
class Secret:
    """Where the instructor's secret is: an environment variable, or a salt in the file.

    The salt is not shown by ``repr``. A submission runs with the variable removed from
    its environment; a salt is only as hidden as the assignment file itself.
    """

    env: str | None = DEFAULT_SECRET_ENV
    salt: str | None = dataclasses.field(default=None, repr=False)

    def value(self, environ: Mapping[str, str] | None = None) -> str:
        """The secret.

        Raises:
            ExperimentError: The variable is not set or is empty.
        """
        if self.salt is not None:
            return self.salt
        environ = os.environ if environ is None else environ
        found = environ.get(str(self.env), "")
        if not found:
            raise ExperimentError(f"secret: environment variable {self.env} is not set or "
                                  "empty (set it to the instructor's secret, which keys the "
                                  "hidden seeds)")
        return found


@dataclasses.dataclass(frozen=True)
class RegretRule:
    """Points for regret: full when the mean final regret is within ``factor`` of the
    reference's on the same games, falling linearly to zero at ``zero_at`` times it.

    Attributes:
        points: Points of the regret part (shared equally by the env x horizon settings).
        reference: Label of the reference compared with.
        factor: Full points up to ``factor`` x the reference's mean regret (>= 1).
        zero_at: Zero points from ``zero_at`` x that regret (>= factor; equal: a step).
    """

    points: float
    reference: str
    factor: float
    zero_at: float

    def fraction(self, regret: float, reference: float) -> float:
        """Share of the points earned by mean regret ``regret`` against ``reference``.

        With a non-positive reference regret the thresholds are the reference's regret
        itself (no slack to scale): full points at or below it, none above.
        """
        if reference <= 0:
            return 1.0 if regret <= reference else 0.0
        full, zero = self.factor * reference, self.zero_at * reference
        if regret <= full:
            return 1.0
        if regret >= zero:
            return 0.0
        return (zero - regret) / (zero - full)


@dataclasses.dataclass(frozen=True)
class GradingRule:
    """The points of each part: regret, declaring the budget, surviving the audit."""

    regret: RegretRule
    declared: float
    audit: float

    @property
    def total(self) -> float:
        """The maximum score."""
        return self.regret.points + self.declared + self.audit


@dataclasses.dataclass(frozen=True)
class AuditSpec:
    """The privacy audit of every submission that declares a budget.

    The audit plays ``settings.games`` full games of every env and horizon of the
    assignment, each drawn as a graded game is (:mod:`dp_online_envs.lab.audit.one_run`).

    Attributes:
        env: The env whose games measure the audit's power (one of the assignment's
            envs).
        reference: Label of the reference whose audit power is reported.
        settings: The one-run audit's settings; its ``seed`` is replaced by one derived
            from the secret when grading.
        power_factors: The noise cuts of the reference tried for the power (``None``:
            the auditor's default).
    """

    env: EnvEntry
    reference: str
    settings: OneRunSettings
    power_factors: tuple[float, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Assignment:
    """A validated assignment (see the module docstring for the file)."""

    name: str
    title: str
    description: str
    envs: tuple[EnvEntry, ...]
    horizons: tuple[int, ...]
    seeds: int
    secret: Secret
    epsilon: float
    delta: float
    references: tuple[Reference, ...]
    isolate_references: bool
    limits: IsolationLimits
    audit: AuditSpec
    grading: GradingRule
    source: str = ""
    processes: int = DEFAULT_PROCESSES
    submission_seconds: float | None = None

    def reference(self, label: str) -> Reference:
        """The reference with this label."""
        return next(r for r in self.references if r.label == label)


# ---------------------------------------------------------------------- reading
def load_assignment(path: str | os.PathLike[str], *,
                    resolver: AgentResolver | None = None) -> Assignment:
    """Read and validate an assignment file (``.yaml``, ``.yml``, ``.toml``, ``.json``).

    Raises:
        ExperimentError: Missing file, unknown format, a parse error, or an invalid
            assignment (the message names the key, the bad value and what was expected).
    """
    path = pathlib.Path(path)
    data = read_data_file(path, "assignment file")
    return parse_assignment(data, name=path.stem, source=str(path), resolver=resolver)


def parse_assignment(data: Any, *, name: str | None = None, source: str = "assignment",
                     resolver: AgentResolver | None = None) -> Assignment:
    """Validate an assignment given as plain data.

    Args:
        data: The mapping (see the module docstring).
        name: Default name when ``data`` has none.
        source: Where the data came from (prefix of every error message).
        resolver: Resolves the reference names (``None``: the ``agents`` registry).

    Raises:
        ExperimentError: On any invalid value.
    """
    if not isinstance(data, dict):
        raise ExperimentError(f"{source}: an assignment must be a mapping of keys "
                              f"{list(ASSIGNMENT_KEYS)}, got {type(data).__name__}")
    _keys(data, ASSIGNMENT_KEYS, source)
    for key in ("envs", "horizons", "privacy", "references"):
        if key not in data:
            raise ExperimentError(f"{source}: missing key {key!r} (an assignment needs envs, "
                                  "horizons, privacy and references)")
    title = _text(data.get("title", ""), f"{source}: title")
    envs = tuple(EnvEntry(*_env_entry(e, f"{source}: envs[{i}]"))
                 for i, e in enumerate(_list(data["envs"], f"{source}: envs")))
    env_labels = [e.label for e in envs]
    if len(set(env_labels)) != len(env_labels):
        raise ExperimentError(f"{source}: envs: {env_labels} names an env twice (each env is "
                              "played once per horizon and seed)")
    horizons = tuple(_horizons(data["horizons"], f"{source}: horizons"))
    seeds = _checked(lambda v: check_int("seeds", v, 1), data.get("seeds", 5),
                     f"{source}: seeds")
    epsilon, delta = _privacy(data["privacy"], f"{source}: privacy")
    references = tuple(_reference(r, f"{source}: references[{i}]", epsilon, delta, resolver)
                       for i, r in enumerate(_list(data["references"],
                                                   f"{source}: references")))
    labels = [r.label for r in references]
    if len(set(labels)) != len(labels):
        raise ExperimentError(f"{source}: references: {labels} names a reference twice")
    for i, ref in enumerate(references):
        for env in envs:  # built once, as a sweep checks its pairs
            try:
                make_games(env.id, ref.name, epsilon=ref.epsilon, delta=ref.delta,
                           horizon=min(horizons), seeds=1, env_kwargs=dict(env.kwargs),
                           agent_kwargs=dict(ref.kwargs), resolver=resolver)
            except ExperimentError as exc:
                text = str(exc).removeprefix("run: ")
                raise ExperimentError(f"{source}: references[{i}]: {text}") from None
    isolate = data.get("isolate_references", False)
    if not isinstance(isolate, bool):
        raise ExperimentError(f"{source}: isolate_references={isolate!r} rejected: expected "
                              "true or false")
    audit = _audit(data.get("audit"), f"{source}: audit", envs, references)
    limits, processes, submission_seconds = _limits(
        data.get("limits"), f"{source}: limits", horizons,
        default_submission_seconds(len(envs), horizons, seeds, audit.settings.games))
    return Assignment(
        name=_dir_name(data.get("name", name or "assignment"), f"{source}: name"),
        title=title, description=_text(data.get("description", ""), f"{source}: description"),
        envs=envs, horizons=horizons, seeds=seeds,
        secret=_secret(data.get("secret"), f"{source}: secret"),
        epsilon=epsilon, delta=delta, references=references, isolate_references=isolate,
        limits=limits, audit=audit,
        grading=_grading(data.get("grading"), f"{source}: grading", references),
        source=source, processes=processes, submission_seconds=submission_seconds)


def default_game_seconds(horizon: int) -> float:
    """The default wall-clock budget of a game of ``horizon`` rounds:
    :data:`BUDGET_BASE_SECONDS` + :data:`SECONDS_PER_ROUND` per round."""
    return BUDGET_BASE_SECONDS + SECONDS_PER_ROUND * horizon


def default_submission_seconds(envs: int, horizons: tuple[int, ...], seeds: int,
                               audit_games: int) -> float:
    """The default wall-clock budget of a submission: :data:`BUDGET_BASE_SECONDS` +
    :data:`SECONDS_PER_GAME` per game and :data:`SECONDS_PER_ROUND` per round of every
    game it plays (``seeds`` graded and ``audit_games`` audit games per env and
    horizon)."""
    games = envs * (seeds + audit_games) * len(horizons)
    rounds = envs * (seeds + audit_games) * sum(horizons)
    return BUDGET_BASE_SECONDS + SECONDS_PER_GAME * games + SECONDS_PER_ROUND * rounds


# ------------------------------------------------------------------- sections
def _keys(data: dict[str, Any], valid: tuple[str, ...], where: str) -> None:
    """Refuse unknown keys, suggesting the closest valid one."""
    for key in data:
        if key not in valid:
            raise ExperimentError(f"{where}: unknown key {key!r};{did_you_mean(key, valid)} "
                                  f"valid: {list(valid)}")


def _section(value: Any, valid: tuple[str, ...], where: str) -> dict[str, Any]:
    """A mapping section (``None``: empty) with only ``valid`` keys."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ExperimentError(f"{where}: expected a mapping of keys {list(valid)}, "
                              f"got {value!r}")
    _keys(value, valid, where)
    return value


def _privacy(value: Any, where: str) -> tuple[float, float]:
    section = _section(value, PRIVACY_KEYS, where)
    if "epsilon" not in section:
        raise ExperimentError(f"{where}: missing key 'epsilon' (the budget a submission must "
                              "declare, a number > 0)")
    return (_checked(check_epsilon, section["epsilon"], f"{where}: epsilon", yaml_number=True),
            _checked(check_delta, section.get("delta", 0.0), f"{where}: delta",
                     yaml_number=True))


def _reference(entry: Any, where: str, epsilon: float, delta: float,
               resolver: AgentResolver | None) -> Reference:
    section = entry if isinstance(entry, dict) else {"name": entry}
    _keys(section, REFERENCE_KEYS, where)
    name = section.get("name")
    if not isinstance(name, str):
        raise ExperimentError(f"{where}: expected an agent name, got {name!r}")
    try:
        cls = resolve_agent(name, resolver)
    except ExperimentError as exc:
        raise ExperimentError(f"{where}: {exc}") from None
    kwargs = _mapping(section.get("kwargs"), f"{where}: kwargs")
    if not cls.private:
        for key in ("epsilon", "delta"):
            if key in section:
                raise ExperimentError(f"{where}: agent {name!r} is not private; it takes no "
                                      f"{key}")
        return Reference(name, kwargs, None, None, cls)
    eps = _checked(check_epsilon, section.get("epsilon", epsilon), f"{where}: epsilon",
                   yaml_number=True)
    dlt = _checked(check_delta, section.get("delta", delta), f"{where}: delta",
                   yaml_number=True)
    return Reference(name, kwargs, eps, dlt, cls)


def _secret(value: Any, where: str) -> Secret:
    section = _section(value, SECRET_KEYS, where)
    if "env" in section and "salt" in section:
        raise ExperimentError(f"{where}: give either env (the name of an environment variable "
                              "holding the secret) or salt, not both")
    if "salt" in section:
        salt = section["salt"]
        if not isinstance(salt, str) or len(salt) < 8:
            raise ExperimentError(f"{where}: salt rejected: expected a string of at least 8 "
                                  "characters")
        return Secret(env=None, salt=salt)
    var = section.get("env", DEFAULT_SECRET_ENV)
    if not isinstance(var, str) or not var or "=" in var or "\0" in var:
        raise ExperimentError(f"{where}: env={var!r} rejected: expected the name of an "
                              "environment variable")
    return Secret(env=var)


def _limits(value: Any, where: str, horizons: tuple[int, ...],
            submission_default: float) -> tuple[IsolationLimits, int, float]:
    """``(limits, processes, submission_seconds)`` of the ``limits`` section."""
    section = _section(value, LIMIT_KEYS, where)
    real = {k: _checked(lambda v, k=k: check_real(k, v, 0.0, low_inclusive=False),
                        section[k], f"{where}: {k}", yaml_number=True)
            for k in ("timeout", "startup_timeout", "game_seconds", "submission_seconds")
            if k in section}
    real.setdefault("game_seconds", default_game_seconds(max(horizons)))
    submission = real.pop("submission_seconds", submission_default)
    mb = section.get("memory_mb")
    cpu = section.get("cpu_seconds")
    processes = _checked(lambda v: check_int("processes", v, 1, 2**16),
                         section.get("processes", DEFAULT_PROCESSES), f"{where}: processes")
    memory = None if mb is None else _checked(
        lambda v: check_int("memory_mb", v, 64, MAX_LIMIT >> 20), mb,
        f"{where}: memory_mb") * 2**20
    if memory is not None and memory // processes < 64 * 2**20:
        raise ExperimentError(f"{where}: memory_mb={mb} shared by processes={processes} leaves "
                              f"{memory // processes // 2**20} MB per process, expected at "
                              "least 64 (the interpreter alone needs more)")
    return IsolationLimits(
        **real,
        memory_bytes=memory,
        cpu_seconds=None if cpu is None else _checked(
            lambda v: check_int("cpu_seconds", v, 1, MAX_LIMIT), cpu, f"{where}: cpu_seconds"),
    ), processes, submission


def _label(value: Any, where: str, references: tuple[Reference, ...], default: str) -> str:
    labels = [r.label for r in references]
    label = default if value is None else value
    if label not in labels:
        raise ExperimentError(f"{where}: {label!r} is not one of the references;"
                              f"{did_you_mean(label, labels)} valid: {labels}")
    return label


def _audit(value: Any, where: str, envs: tuple[EnvEntry, ...],
           references: tuple[Reference, ...]) -> AuditSpec:
    section = _section(value, AUDIT_KEYS, where)
    env = envs[0]
    if "env" in section:
        wanted = EnvEntry(*_env_entry(section["env"], f"{where}: env"))
        if wanted not in envs:
            raise ExperimentError(f"{where}: env {wanted.label!r} is not one of the "
                                  f"assignment's envs {[e.label for e in envs]}")
        env = wanted
    private = [r.label for r in references if r.epsilon is not None]
    reference = _label(section.get("reference"), f"{where}: reference", references,
                       private[0] if private else references[0].label)
    if reference not in private:
        raise ExperimentError(f"{where}: reference: {reference!r} is not private: the audit's "
                              f"power is measured on a private reference's noise cuts; "
                              f"private references: {private}")
    given = {k: v for k, v in section.items() if k not in ("env", "reference", "power_factors")}
    for k in ("games", "min_gap", "history", "moves"):
        if k in given and not (k == "min_gap" and given[k] is None):
            given[k] = _checked(lambda v, k=k: check_int(k, v, 1), given[k], f"{where}: {k}")
    if "confidence" in given:
        given["confidence"] = _checked(
            lambda v: check_real("confidence", v, 0.0, 1.0, low_inclusive=False,
                                 high_inclusive=False),
            given["confidence"], f"{where}: confidence", yaml_number=True)
    if "ratio" in given:
        given["ratio"] = _checked(
            lambda v: check_real("ratio", v, 1.0, low_inclusive=False),
            given["ratio"], f"{where}: ratio", yaml_number=True)
    try:  # the auditor checks its own settings
        settings = OneRunSettings(**given)
    except (TypeError, ValueError) as exc:
        raise ExperimentError(f"{where}: {exc}") from None
    factors = None
    if "power_factors" in section:
        factors = tuple(_checked(lambda v: check_real("power factor", v, 1.0), v,
                                 f"{where}: power_factors", yaml_number=True)
                        for v in _list(section["power_factors"], f"{where}: power_factors"))
    return AuditSpec(env, reference, settings, factors)


def _points(value: Any, where: str) -> float:
    return _checked(lambda v: check_real("points", v, 0.0), value, where, yaml_number=True)


def _grading(value: Any, where: str, references: tuple[Reference, ...]) -> GradingRule:
    section = _section(value, GRADING_KEYS, where)
    regret = _section(section.get("regret"), REGRET_KEYS, f"{where}: regret")
    factor = _checked(lambda v: check_real("factor", v, 1.0), regret.get("factor", 1.5),
                      f"{where}: regret: factor", yaml_number=True)
    zero_at = _checked(lambda v: check_real("zero_at", v, factor), regret.get("zero_at", factor),
                       f"{where}: regret: zero_at", yaml_number=True)
    rule = GradingRule(
        regret=RegretRule(
            points=_points(regret.get("points", 50), f"{where}: regret: points"),
            reference=_label(regret.get("reference"), f"{where}: regret: reference",
                             references, references[0].label),
            factor=factor, zero_at=zero_at),
        declared=_points(section.get("declared", 20), f"{where}: declared"),
        audit=_points(section.get("audit", 30), f"{where}: audit"))
    if rule.total <= 0:
        raise ExperimentError(f"{where}: every part has 0 points; give at least one part "
                              "points > 0")
    return rule


__all__ = ["ASSIGNMENT_KEYS", "BUDGET_BASE_SECONDS", "DEFAULT_PROCESSES", "DEFAULT_SECRET_ENV",
           "SECONDS_PER_GAME", "SECONDS_PER_ROUND", "Assignment", "AuditSpec", "EnvEntry", "GradingRule",
           "Reference", "RegretRule", "Secret", "default_game_seconds",
           "default_submission_seconds", "load_assignment", "parse_assignment"]
