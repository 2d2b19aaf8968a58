"""Sweeps as data: the product envs x agents x epsilons x horizons x seeds, with tags.

A sweep is a mapping (a Python dict, or a YAML / TOML / JSON file) in the spirit of
bsuite's ``sweep.py`` settings::

    name: price-of-privacy
    description: regret of private learners against their non-private baselines
    tags: {study: price-of-privacy}
    epsilons: [0.5, 1, 2, 4]
    delta: 0.0                  # or a list; used by private agents only
    horizons: [1000, 4000]      # a list key also takes one value: 1000 is [1000]
    seeds: 5                    # seed indices 0..4, an explicit list [5000, 5001],
                                # or {first: 5000, count: 20} (indices 5000..5019)
    results: results/price_of_privacy
    experiments:                # optional: a union of blocks that override the keys above
      - name: bandit
        envs: [DPBandit-MAB-v0]
        agents: [private-exp2, exp3]
      - name: full-information
        envs: [{id: DPFullInfo-Experts-v0, kwargs: {n_arms: 10}}]
        agents:
          - hedge
          - {name: private-ftrl, grid: {counter: [tree, agarwal-singh]}}

Rules:
    * ``envs`` entries are registered ids or ``{id, kwargs}``; ``agents`` entries are
      registered names (or ``"module:Class"``) or ``{name, kwargs, grid}`` where
      ``grid`` maps an option to a list of values (one variant per combination).
    * A non-private agent plays once per (env, horizon, seed) with ``epsilon=None``
      (recorded as "non-private"), whatever the epsilons.
    * A bandit agent on a full-information env gets bandit feedback (downgrade); a
      full-information agent on a bandit env is an error, as is any pair the agent
      refuses (it is built once to check), unless ``skip_incompatible: true``.
    * Unknown keys, env ids, agents and env options, ``epsilon <= 0``, ``delta``
      outside ``[0, 1)``, horizons outside ``[1, 2**53]``: :class:`ExperimentError`
      naming the bad value and the valid choices. Epsilon, delta and horizons are
      checked by :mod:`dp_online_envs.validation` (bools and float horizons are refused)
      and :func:`~dp_online_envs.problem.check_horizon` (the longest game the regret
      ledger holds).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import pathlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dp_online_envs.envs.registry import ENV_CONFIGS, build_env, env_config
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import (
    GameSpec,
    agent_label,
    canonical_json,
    env_options,
    feedback_option,
    jsonable,
    plain,
)
from dp_online_envs.lab.experiments.resolver import AgentResolver, resolve_agent
from dp_online_envs.problem import check_horizon
from dp_online_envs.validation import check_delta, check_epsilon, check_int

#: Keys a sweep accepts at the top level.
SWEEP_KEYS = ("name", "description", "tags", "envs", "agents", "epsilons", "delta",
              "horizons", "seeds", "results", "experiments", "skip_incompatible",
              "vectorize")
#: Keys an entry of ``experiments`` accepts (it overrides the top-level ones).
BLOCK_KEYS = ("name", "tags", "envs", "agents", "epsilons", "delta", "horizons", "seeds",
              "skip_incompatible")
#: Env options a sweep may not set (the runner sets them).
RESERVED_ENV_OPTIONS = {
    "horizon": "set it with 'horizons'",
    "feedback": "the runner downgrades to bandit feedback for bandit agents",
    "render_mode": "games are not rendered",
}
FORMATS = (".yaml", ".yml", ".toml", ".json")


@dataclasses.dataclass(frozen=True)
class SweepPart:
    """The games of one env x agent variant in one block: a product, not materialised.

    Attributes:
        env_id, env_kwargs, agent, agent_kwargs: The env and the configured agent.
        horizons: The horizons.
        privacy: ``(epsilon, delta)`` pairs (``(None, None)`` for a non-private agent).
        seeds: The seed indices: ``range(n)`` for ``seeds: n``, ``range(first, first +
            count)`` for ``seeds: {first, count}``, else a tuple.
        tags: Labels of the block.
        sweep: The sweep's name (``None`` for the games of :func:`make_games`).
        agent_cls: The agent class (copied to every game; not part of the settings).
    """

    env_id: str
    env_kwargs: dict[str, Any]
    agent: str
    agent_kwargs: dict[str, Any]
    horizons: tuple[int, ...]
    privacy: tuple[tuple[float | None, float | None], ...]
    seeds: range | tuple[int, ...]
    tags: dict[str, Any]
    sweep: str | None
    agent_cls: type | None = dataclasses.field(default=None, compare=False, repr=False)

    @functools.cached_property
    def key(self) -> tuple[str, str, str, str]:
        """The env and agent settings as comparable text (the env's options resolved,
        :func:`~.game.env_options`: two entries that write the same game differently
        are one)."""
        return (self.env_id, canonical_json(env_options(self.env_id, self.env_kwargs)),
                self.agent, canonical_json(plain(self.agent_kwargs)))

    def specs(self) -> Iterator[GameSpec]:
        """The games, horizon-major, then privacy, then seed."""
        for horizon, (eps, dlt), seed in itertools.product(self.horizons, self.privacy,
                                                           self.seeds):
            yield GameSpec(self.env_id, self.agent, eps, dlt, horizon, seed,
                           dict(self.env_kwargs), dict(self.agent_kwargs), dict(self.tags),
                           self.sweep, self.agent_cls)


@dataclasses.dataclass
class Sweep:
    """A validated sweep: its games and where their results go.

    The games are kept as products (:class:`SweepPart`) and listed only when
    :attr:`games` is read, so ``len(sweep)`` and :meth:`includes` cost nothing even
    for ``seeds: 100000000``.

    Attributes:
        name: The sweep's name (recorded in every record).
        parts: The products of settings the games come from, in order.
        description: Free text.
        results: The results directory the sweep asks for (``None``: caller decides).
        settings: The sweep as given (plain data), kept in the results directory.
        skipped: Env/agent pairs left out by ``skip_incompatible``, with the reason.
        vectorize: ``vectorize: true`` in the sweep: play the games that have a
            vector path together (:mod:`.vector`), the others one by one.
    """

    name: str
    parts: list[SweepPart]
    description: str = ""
    results: str | None = None
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    skipped: list[str] = dataclasses.field(default_factory=list)
    vectorize: bool = False

    @functools.cached_property
    def games(self) -> list[GameSpec]:
        """One :class:`GameSpec` per game, deduplicated, in a stable order."""
        games: dict[str, GameSpec] = {}
        for part in self.parts:
            for spec in part.specs():
                games.setdefault(spec.game_id, spec)
        return list(games.values())

    def __len__(self) -> int:
        """The number of distinct games, counted without listing them."""
        seeds_at: dict[tuple[Any, ...], list[range | tuple[int, ...]]] = {}
        for part in self.parts:
            for horizon in part.horizons:
                for privacy in part.privacy:
                    seeds_at.setdefault((part.key, horizon, privacy), []).append(part.seeds)
        return sum(_union_size(sets) for sets in seeds_at.values())

    def includes(self, record: dict[str, Any]) -> bool:
        """Whether a record (or any mapping with its settings: ``env_options``, or the
        ``env_kwargs`` they resolve from) is a game of this sweep."""
        try:
            options = (record["env_options"] if "env_options" in record
                       else env_options(record["env_id"], record["env_kwargs"]))
            key = (record["env_id"], canonical_json(plain(options)),
                   record["agent"], canonical_json(plain(record["agent_kwargs"])))
            privacy = (record["epsilon"], record["delta"])
            horizon, seed = record["horizon"], record["seed_index"]
        except (KeyError, TypeError, ValueError):
            return False
        return any(part.key == key and horizon in part.horizons and privacy in part.privacy
                   and seed in part.seeds for part in self.parts)


def _union_size(seed_sets: list[range | tuple[int, ...]]) -> int:
    """Size of a union of seed ranges (``range(n)``, ``range(first, first + count)``)
    and explicit seed tuples, counted without listing the ranges."""
    spans = sorted((s.start, s.stop) for s in seed_sets if isinstance(s, range) and len(s))
    merged: list[list[int]] = []
    for start, stop in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], stop)
        else:
            merged.append([start, stop])
    loose = {x for s in seed_sets if not isinstance(s, range) for x in s
             if not any(a <= x < b for a, b in merged)}
    return sum(b - a for a, b in merged) + len(loose)


def read_data_file(path: pathlib.Path, what: str) -> Any:
    """The plain data in a ``.yaml``/``.yml``, ``.toml`` or ``.json`` file (sweep files,
    assignment files).

    Args:
        path: The file.
        what: How errors name it (``"sweep file"``, ``"assignment file"``).

    Raises:
        ExperimentError: Missing file, unknown format, or a parse error (with the
            parser's location).
    """
    if not path.is_file():
        raise ExperimentError(f"{what} {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ExperimentError(f"{what} {str(path)!r}: unknown format {suffix!r}; "
                              f"valid: {list(FORMATS)}")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ExperimentError(f"{what} {str(path)!r} cannot be read: {exc.strerror or exc} "
                              "(expected a file this user can read)") from None
    except UnicodeDecodeError as exc:
        raise ExperimentError(f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start}): "
                              "expected YAML, TOML or JSON") from None
    try:
        # The parsers are imported when used: YAML and (Python 3.10) TOML are optional
        # extras.
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
        if suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            return tomllib.loads(text)
        return json.loads(text)
    except Exception as exc:  # noqa: BLE001 - every parser has its own error type
        msg = " ".join(str(exc).split())
        raise ExperimentError(f"{what} {str(path)!r} is malformed: {msg}") from None


def load_sweep(path: str | pathlib.Path, *, resolver: AgentResolver | None = None) -> Sweep:
    """Read and validate a sweep file (``.yaml``, ``.yml``, ``.toml`` or ``.json``).

    Args:
        path: The sweep file.
        resolver: Resolves the agent names (``None``: the ``agents`` registry, see
            :mod:`.resolver`).

    Raises:
        ExperimentError: Missing file, unknown format, a parse error (with the parser's
            location), or an invalid sweep.
    """
    path = pathlib.Path(path)
    data = read_data_file(path, "sweep file")
    return parse_sweep(data, name=path.stem, source=str(path), resolver=resolver)


def parse_sweep(data: Any, *, name: str | None = None, source: str = "sweep",
                resolver: AgentResolver | None = None) -> Sweep:
    """Validate a sweep given as plain data and expand it into games.

    Args:
        data: The sweep mapping (see the module docstring).
        name: Default name when ``data`` has none.
        source: Where the data came from (prefix of error messages).
        resolver: Resolves the agent names (``None``: the ``agents`` registry, see
            :mod:`.resolver`); the games carry the resolved classes.

    Raises:
        ExperimentError: On any invalid value (the message names it and the choices).
    """
    if not isinstance(data, dict):
        raise ExperimentError(f"{source}: a sweep must be a mapping of keys {list(SWEEP_KEYS)}, "
                              f"got {type(data).__name__}")
    _check_keys(data, SWEEP_KEYS, source)
    sweep_name = _dir_name(data.get("name", name or "sweep"), f"{source}: name")
    description = _text(data.get("description", ""), f"{source}: description")
    results = data.get("results")
    if results is not None:
        results = _text(results, f"{source}: results")
    vectorize = data.get("vectorize", False)
    if not isinstance(vectorize, bool):
        raise ExperimentError(f"{source}: vectorize must be true or false, got {vectorize!r}")
    defaults = {k: data[k] for k in BLOCK_KEYS if k in data and k != "name"}
    blocks = data.get("experiments")
    if blocks is None:
        blocks = [{}]
    elif not isinstance(blocks, list) or not blocks:
        raise ExperimentError(f"{source}: experiments must be a non-empty list of mappings, "
                              f"got {blocks!r}")
    parts: list[SweepPart] = []
    skipped: list[str] = []
    for i, block in enumerate(blocks):
        where = f"{source}: experiments[{i}]" if "experiments" in data else source
        if not isinstance(block, dict):
            raise ExperimentError(f"{where}: expected a mapping of keys {list(BLOCK_KEYS)}, "
                                  f"got {block!r}")
        _check_keys(block, BLOCK_KEYS, where)
        merged = {**defaults, **{k: v for k, v in block.items() if k != "tags"}}
        tags = {**_tags(defaults.get("tags"), source), **_tags(block.get("tags"), where)}
        if "name" in block:
            tags["experiment"] = _text(block["name"], f"{where}: name")
        parts.extend(_expand(merged, tags, sweep_name, where, skipped, resolver))
    if not parts:
        raise ExperimentError(f"{source}: the sweep has no game to play"
                              + (f" (skipped: {skipped})" if skipped else ""))
    return Sweep(name=sweep_name, parts=parts, description=description,
                 results=results, settings=json.loads(json.dumps(data, default=jsonable)),
                 skipped=skipped, vectorize=vectorize)


def make_games(
    env_id: str,
    agent: Any,
    *,
    epsilon: float | None,
    delta: float | None,
    horizon: int,
    seeds: int | Iterable[int],
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    tags: dict[str, Any] | None = None,
    sweep: str | None = None,
    resolver: AgentResolver | None = None,
) -> list[GameSpec]:
    """The games of one (env, agent, epsilon, delta, horizon) setting, validated.

    The settings are checked as :func:`parse_sweep` checks a block with one env, one
    agent, one horizon and (for a private agent) one epsilon and delta, and expanded
    the same way (the env and the agent are built once to check they play).

    Args:
        env_id: A registered env id.
        agent: A registered name, ``"module:Class"`` or an agent class.
        epsilon: Privacy parameter (required for a private agent; a non-private agent
            gets ``epsilon=None`` and ``delta=None`` whatever is passed).
        delta: Privacy parameter (``None``: 0).
        horizon: Rounds per game.
        seeds: Number of games (seed indices ``0..seeds-1``) or the seed indices.
        env_kwargs: Env options.
        agent_kwargs: Agent options.
        tags: Labels copied to every game.
        sweep: Sweep name recorded in every game.
        resolver: Resolves an agent name (``None``: the ``agents`` registry).

    Returns:
        One game per seed, in seed order, carrying the agent class.

    Raises:
        ExperimentError: As :func:`parse_sweep`.
    """
    where = "run"
    env = _env_entry(env_id, where)
    cls = resolve_agent(agent, resolver)
    name = agent if isinstance(agent, str) else cls.name
    kwargs = _mapping(agent_kwargs, f"{where}: agent_kwargs")
    if env_kwargs:
        env = (env[0], _env_kwargs(env[0], env_kwargs, where))
    horizons = _horizons(horizon, where)[:1]
    seed_list = _seeds(seeds, where)
    epsilons: list[float] | None = None
    deltas: list[float] = []
    if cls.private:
        if epsilon is None:
            raise ExperimentError(f"agent {name!r} is private: pass epsilon > 0")
        epsilons = _epsilons(epsilon, where, yaml_number=False)[:1]
        deltas = _deltas(0.0 if delta is None else delta, where, yaml_number=False)[:1]
    parts = _products([env], [(name, cls, kwargs)], horizons, seed_list, epsilons, deltas,
                      dict(tags or {}), sweep, where, resolver)
    return [spec for part in parts for spec in part.specs()]


# --------------------------------------------------------------------- expansion
def _expand(block: dict[str, Any], tags: dict[str, Any], sweep_name: str, where: str,
            skipped: list[str], resolver: AgentResolver | None) -> list[SweepPart]:
    """The parts of one block of a sweep (its keys checked and merged with the defaults)."""
    for key in ("envs", "agents", "horizons"):
        if key not in block:
            raise ExperimentError(f"{where}: missing key {key!r} (a sweep needs envs, agents "
                                  "and horizons)")
    envs = [_env_entry(e, f"{where}: envs[{i}]") for i, e in enumerate(_list(block["envs"],
                                                                               f"{where}: envs"))]
    variants = [v for i, a in enumerate(_list(block["agents"], f"{where}: agents"))
                for v in _agent_entry(a, f"{where}: agents[{i}]", resolver)]
    horizons = _horizons(block["horizons"], f"{where}: horizons")
    seeds = _seeds(block.get("seeds", 1), f"{where}: seeds")
    deltas = _deltas(block.get("delta", 0.0), f"{where}: delta")
    epsilons = (_epsilons(block["epsilons"], f"{where}: epsilons") if "epsilons" in block
                else None)
    skip = block.get("skip_incompatible", False)
    if not isinstance(skip, bool):
        raise ExperimentError(f"{where}: skip_incompatible={skip!r} rejected: expected true or "
                              "false")
    skipped_here = skipped if skip else None
    return _products(envs, variants, horizons, seeds, epsilons, deltas, tags, sweep_name,
                     where, resolver, skipped_here)


def _products(envs: list[tuple[str, dict[str, Any]]],
              variants: list[tuple[str, type, dict[str, Any]]], horizons: list[int],
              seeds: range | tuple[int, ...], epsilons: list[float] | None,
              deltas: list[float], tags: dict[str, Any], sweep_name: str | None, where: str,
              resolver: AgentResolver | None,
              skipped: list[str] | None = None) -> list[SweepPart]:
    """One :class:`SweepPart` per env x agent variant, each built once to check it plays.

    Args:
        envs: ``(env id, env options)`` pairs, validated.
        variants: ``(agent name, agent class, agent options)`` triples, validated.
        horizons, seeds: Validated.
        epsilons: Validated; ``None`` when none were given (an error for a private agent).
        deltas: Validated (used by private agents only).
        tags, sweep_name: Copied to every game.
        where: Location prefix of error messages.
        resolver: Passed to :func:`~.game.feedback_option` (for its error message).
        skipped: ``None``: an incompatible pair is an error; else the list its reason is
            appended to (``skip_incompatible``).

    Raises:
        ExperimentError: A private agent without epsilons, or an incompatible pair.
    """
    out: list[SweepPart] = []
    for (env_id, env_kwargs), (name, cls, kwargs) in itertools.product(envs, variants):
        label = agent_label(name, kwargs)
        if cls.private and epsilons is None:
            raise ExperimentError(f"{where}: agent {label!r} is private and needs 'epsilons' "
                                  "(a list of numbers > 0)")
        privacy = ([(e, d) for e in epsilons for d in deltas] if cls.private
                   else [(None, None)])
        try:
            for d in (deltas if cls.private else [None]):
                _dry_build((env_id, env_kwargs), cls, kwargs, min(horizons),
                           epsilons[0] if cls.private else None, d, where, label, resolver)
        except ExperimentError as exc:
            if skipped is None:
                raise
            skipped.append(f"{env_id} x {label}: {exc}")
            continue
        out.append(SweepPart(env_id, dict(env_kwargs), name, dict(kwargs), tuple(horizons),
                             tuple(privacy), seeds, dict(tags), sweep_name, cls))
    return out


def _dry_build(env: tuple[str, dict[str, Any]], cls: type, kwargs: dict[str, Any],
               horizon: int, epsilon: float | None, delta: float | None, where: str,
               label: str, resolver: AgentResolver | None) -> None:
    """Build the env, reset it once (the adversary checks its options against the game
    there: a mean of the wrong length, say) and build the agent, turning any refusal
    into an ExperimentError."""
    env_id, env_kwargs = env
    try:
        feedback = feedback_option(env_id, cls, resolver)
    except ExperimentError as exc:
        raise ExperimentError(f"{where}: {exc}") from None
    try:
        built = build_env(env_id, horizon=horizon,
                          **({"feedback": feedback} if feedback else {}), **env_kwargs)
    except (TypeError, ValueError) as exc:
        raise ExperimentError(f"{where}: {env_id} with options {env_kwargs}: {exc}") from None
    try:
        built.reset(seed=0)
    except (TypeError, ValueError) as exc:
        built.close()
        raise ExperimentError(f"{where}: {env_id} with options {env_kwargs}: {exc}") from None
    try:
        cls(built.get_wrapper_attr("problem"), epsilon=epsilon, delta=delta or 0.0, seed=0,
            **kwargs)
    except (TypeError, ValueError) as exc:
        raise ExperimentError(f"{where}: agent {label!r} cannot play {env_id}: {exc}") from None
    finally:
        built.close()


# -------------------------------------------------------------------- validators
def _check_keys(data: dict[str, Any], valid: tuple[str, ...], where: str) -> None:
    unknown = [k for k in data if k not in valid]
    if unknown:
        raise ExperimentError(f"{where}: unknown key(s) {unknown}; valid: {list(valid)}")


def _list(value: Any, where: str) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ExperimentError(f"{where}: empty list")
    return items


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ExperimentError(f"{where}: expected a string, got {value!r}")
    return value


def _dir_name(value: Any, where: str) -> str:
    """A name that also names a directory (``results/<name>``, ``grades/<name>``): a
    non-empty string without a path separator or NUL, not ``.`` or ``..``."""
    name = _text(value, where)
    if not name.strip() or name in (".", "..") or any(c in name for c in "/\\\0"):
        raise ExperimentError(f"{where}: name={name!r} rejected: expected a name without "
                              "'/', '\\' or NUL, not empty, '.' or '..' (it names a directory)")
    return name


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ExperimentError(f"{where}: expected a mapping of option names to values, "
                              f"got {value!r}")
    return dict(value)


def _tags(value: Any, where: str) -> dict[str, Any]:
    tags = _mapping(value, f"{where}: tags")
    for k, v in tags.items():
        if not isinstance(v, (str, int, float, bool)) and v is not None:
            raise ExperimentError(f"{where}: tags.{k}={v!r}; tag values must be strings, "
                                  "numbers or booleans")
    return tags


def _env_entry(entry: Any, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(entry, dict):
        _check_keys(entry, ("id", "kwargs"), where)
        if "id" not in entry:
            raise ExperimentError(f"{where}: missing key 'id' (an env entry is an id or "
                                  f"{{id, kwargs}}), got {entry!r}")
        env_id, kwargs = entry.get("id"), entry.get("kwargs")
    else:
        env_id, kwargs = entry, None
    try:
        env_config(env_id)
    except ValueError as exc:
        raise ExperimentError(f"{where}: {exc}") from None
    return env_id, _env_kwargs(env_id, kwargs, where)


def _env_kwargs(env_id: str, kwargs: Any, where: str) -> dict[str, Any]:
    kwargs = _mapping(kwargs, f"{where}: kwargs of {env_id}")
    valid = sorted(set(ENV_CONFIGS[env_id].options()) - set(RESERVED_ENV_OPTIONS))
    for k in kwargs:
        if k in RESERVED_ENV_OPTIONS:
            raise ExperimentError(f"{where}: {env_id} option {k!r} cannot be set in a sweep "
                                  f"({RESERVED_ENV_OPTIONS[k]})")
        if k not in valid:
            raise ExperimentError(f"{where}: unknown option {k!r} for {env_id}; valid: {valid}")
    return kwargs


def _agent_entry(entry: Any, where: str,
                 resolver: AgentResolver | None) -> list[tuple[str, type, dict[str, Any]]]:
    if isinstance(entry, dict):
        _check_keys(entry, ("name", "kwargs", "grid"), where)
        name = entry.get("name")
        kwargs = _mapping(entry.get("kwargs"), f"{where}: kwargs")
        grid = _mapping(entry.get("grid"), f"{where}: grid")
    else:
        name, kwargs, grid = entry, {}, {}
    if not isinstance(name, str):
        raise ExperimentError(f"{where}: expected an agent name, got {name!r}")
    try:
        cls = resolve_agent(name, resolver)
    except ExperimentError as exc:
        raise ExperimentError(f"{where}: {exc}") from None
    for k, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ExperimentError(f"{where}: grid.{k} must be a non-empty list, got {values!r}")
        if k in kwargs:
            raise ExperimentError(f"{where}: option {k!r} is in both kwargs and grid")
    keys = sorted(grid)
    return [(name, cls, {**kwargs, **dict(zip(keys, combo))})
            for combo in itertools.product(*(grid[k] for k in keys))]


def _checked(check: Callable[[Any], Any], value: Any, where: str, *,
             yaml_number: bool = False) -> Any:
    """``check(value)`` (a :mod:`dp_online_envs.validation` check) with its ValueError
    turned into an ExperimentError located at ``where``. With ``yaml_number``, a string
    that reads as a float is read first (YAML 1.1 reads ``1e-5`` as a string)."""
    if yaml_number and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    try:
        return check(value)
    except ValueError as exc:
        raise ExperimentError(f"{where}: {exc}") from None


def _epsilons(value: Any, where: str, yaml_number: bool = True) -> list[float]:
    out = [_checked(check_epsilon, v, where, yaml_number=yaml_number)
           for v in _list(value, where)]
    return list(dict.fromkeys(out))


def _deltas(value: Any, where: str, yaml_number: bool = True) -> list[float]:
    out = [_checked(check_delta, v, where, yaml_number=yaml_number)
           for v in _list(value, where)]
    return list(dict.fromkeys(out))


def _horizons(value: Any, where: str) -> list[int]:
    out = [_checked(check_horizon, v, where) for v in _list(value, where)]
    return list(dict.fromkeys(out))


#: Keys of the compact seed form ``seeds: {first: 5000, count: 20}``.
SEED_RANGE_KEYS = ("first", "count")


def _seeds(value: Any, where: str) -> range | tuple[int, ...]:
    """``range(n)`` for a number of seeds and ``range(first, first + count)`` for
    ``{first, count}`` (never a list: it may be huge), else a tuple."""
    if isinstance(value, dict):
        if sorted(value) != sorted(SEED_RANGE_KEYS):
            raise ExperimentError(f"{where}: seeds={value!r} rejected: the compact form is a "
                                  f"mapping of exactly the keys {list(SEED_RANGE_KEYS)} "
                                  "(first: the first seed index >= 0, count: how many >= 1)")
        first = _checked(lambda v: check_int("seeds.first", v, 0), value["first"], where)
        count = _checked(lambda v: check_int("seeds.count", v, 1), value["count"], where)
        return range(first, first + count)
    if isinstance(value, (list, tuple, range)) and value:
        out = [_checked(lambda v: check_int("seed index", v, 0), v, where) for v in value]
        return tuple(dict.fromkeys(out))
    if isinstance(value, (list, tuple, range)):
        raise ExperimentError(f"{where}: seeds={value!r} rejected: expected a number of seeds "
                              ">= 1 or a non-empty list of seed indices >= 0")
    return range(_checked(lambda v: check_int("seeds", v, 1), value, where))
