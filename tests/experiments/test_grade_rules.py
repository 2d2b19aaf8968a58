"""Assignment files (validated like sweep files) and the scoring rules, without playing."""

from __future__ import annotations

import copy
import dataclasses
import math

import pytest

import dp_online_envs  # noqa: F401  (registers the env ids)
from dp_online_envs.lab.experiments.errors import ExperimentError
from dp_online_envs.lab.experiments.game import GameSpec
from dp_online_envs.lab.grading import find_submissions, load_assignment, parse_assignment
from dp_online_envs.lab.grading.assignment import RegretRule, Secret
from dp_online_envs.lab.grading.grader import (
    _settings,
    audit_seed,
    declared_budget,
    failure_reason,
    score,
    seed_secret,
)

BASE = {
    "name": "t",
    "envs": ["DPBandit-MAB-v0"],
    "horizons": [40],
    "seeds": 2,
    "secret": {"env": "SOME_VAR"},
    "privacy": {"epsilon": 1},
    "references": ["private-exp2", "exp3"],
}


def with_(path: str, value) -> dict:
    """BASE with one key set (``a.b`` for a nested key)."""
    data = copy.deepcopy(BASE)
    *head, last = path.split(".")
    node = data
    for key in head:
        node = node.setdefault(key, {})
    node[last] = value
    return data


@pytest.mark.parametrize("data, message", [
    (with_("referencess", ["exp3"]),
     "assignment: unknown key 'referencess'; did you mean 'references'? valid: ["),
    ({k: v for k, v in BASE.items() if k != "privacy"},
     "assignment: missing key 'privacy'"),
    (with_("envs", ["DPBandit-MAB-v9"]), "assignment: envs[0]: "),
    (with_("envs", [{"id": "DPBandit-MAB-v0", "kwargs": {"n_armz": 5}}]),
     "unknown option 'n_armz' for DPBandit-MAB-v0"),
    (with_("horizons", [1.5]), ("assignment: horizons: horizon=1.5 rejected: expected an "
                               "integer >= 1, got a float")),
    (with_("seeds", 0), "assignment: seeds: seeds=0 rejected: expected an integer >= 1"),
    (with_("privacy.epsilon", 0), ("assignment: privacy: epsilon: epsilon=0 rejected: "
                                  "expected a finite real number > 0")),
    (with_("privacy.delta", 1.0), "assignment: privacy: delta: delta=1.0 rejected"),
    (with_("privacy.epsilom", 1.0), "did you mean 'epsilon'?"),
    (with_("references", ["private-exp3"]),
     "assignment: references[0]: unknown agent 'private-exp3'; did you mean 'private-exp2'?"),
    (with_("references", [{"name": "exp3", "epsilon": 1}]),
     "assignment: references[0]: agent 'exp3' is not private; it takes no epsilon"),
    (with_("references", ["hedge"]),
     "assignment: references[0]: agent 'hedge' needs full-information feedback"),
    (with_("references", ["exp3", "exp3"]), "names a reference twice"),
    (with_("secret", {"env": "X", "salt": "abcdefgh"}), "give either env"),
    (with_("secret", {"salt": "short"}), "salt rejected: expected a string of at least 8"),
    (with_("secret", {"env": ""}), "assignment: secret: env='' rejected"),
    (with_("limits.timeout", -1), "assignment: limits: timeout: timeout=-1 rejected"),
    (with_("limits.memory_mb", 1.5), "memory_mb=1.5 rejected: expected an integer in [64, 4398046511104]"),
    (with_("limits.wall", 3), "assignment: limits: unknown key 'wall'"),
    (with_("audit.env", "DPFullInfo-Experts-v0"), "is not one of the assignment's envs"),
    (with_("audit.reference", "exp33"),
     ("assignment: audit: reference: 'exp33' is not one of the references; did you mean "
     "'exp3'?")),
    (with_("audit.games", 0), "assignment: audit: games: games=0 rejected"),
    (with_("audit.gamse", 10), "assignment: audit: unknown key 'gamse'; did you mean 'games'?"),
    (with_("audit.ratio", 1), "assignment: audit: ratio: ratio=1 rejected"),
    (with_("audit.runs", 40), "assignment: audit: unknown key 'runs'"),
    (with_("audit.reference", "exp3"), "reference: 'exp3' is not private"),
    (with_("audit.power_factors", [10, 0.5]),
     ("assignment: audit: power_factors: power factor=0.5 rejected: expected a finite real "
     "number >= 1")),
    (with_("audit.confidence", 1), "confidence=1 rejected: expected a real number in (0, 1)"),
    (with_("grading.regret.factor", 0.5), ("factor=0.5 rejected: expected a finite real "
                                          "number >= 1")),
    (with_("grading.regret.zero_at", 1.2), ("zero_at=1.2 rejected: expected a finite real "
                                           "number >= 1.5")),
    (with_("grading.regret.reference", "uniform"), "'uniform' is not one of the references"),
    (with_("grading.declared", -1), "assignment: grading: declared: points=-1 rejected"),
    (with_("grading", {"regret": {"points": 0}, "declared": 0, "audit": 0}),
     "every part has 0 points"),
    (with_("isolate_references", "yes"), ("isolate_references='yes' rejected: expected true "
                                         "or false")),
    ([1, 2], "an assignment must be a mapping"),
])
def test_a_bad_assignment_is_refused_with_the_location_and_the_bad_value(data, message):
    with pytest.raises(ExperimentError) as caught:
        parse_assignment(data)
    assert message in str(caught.value)


def test_an_assignment_file_reads_like_a_sweep_file(tmp_path):
    path = tmp_path / "hw.yaml"
    path.write_text("envs: [DPBandit-MAB-v0]\nhorizons: [50]\nprivacy: {epsilon: 2e-1, "
                    "delta: 1e-6}\nreferences: [private-exp2]\nsecret: {salt: abcdefghij}\n")
    a = load_assignment(path)
    assert a.name == "hw" and a.epsilon == 0.2 and a.delta == 1e-6  # YAML 1.1 numbers read
    assert a.references[0].epsilon == 0.2 and a.references[0].delta == 1e-6
    assert a.seeds == 5 and a.grading.total == 100.0
    assert a.audit.reference == "private-exp2" and a.audit.env.id == "DPBandit-MAB-v0"
    assert "abcdefghij" not in repr(a)  # the salt is not shown
    assert a.secret.value() == "abcdefghij"
    path.write_text("envs: [DPBandit-MAB-v0\n")
    with pytest.raises(ExperimentError, match="hw.yaml' is malformed"):
        load_assignment(path)
    with pytest.raises(ExperimentError, match="does not exist"):
        load_assignment(tmp_path / "none.yaml")
    with pytest.raises(ExperimentError, match="unknown format '.txt'"):
        (tmp_path / "a.txt").write_text("{}")
        load_assignment(tmp_path / "a.txt")


def test_the_secret_comes_from_the_named_variable():
    assert Secret(env="V").value({"V": "s3cret"}) == "s3cret"
    with pytest.raises(ExperimentError, match="environment variable V is not set or empty"):
        Secret(env="V").value({"V": ""})


def test_finding_submissions(tmp_path):
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "empty").mkdir()
    assert [p.name for p in find_submissions([tmp_path])] == ["a.py", "b.py"]
    for bad, message in [([tmp_path / "notes.txt"], "is not a .py file"),
                         ([tmp_path / "empty"], "holds no .py file"),
                         ([tmp_path / "zzz.py"], "does not exist"),
                         ([tmp_path, tmp_path / "a.py"], "given twice")]:
        with pytest.raises(ExperimentError, match=message):
            find_submissions(bad)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.py").write_text("")
    with pytest.raises(ExperimentError, match=r"several files named \['a'\]"):
        find_submissions([tmp_path / "a.py", tmp_path / "other" / "a.py"])


def test_the_regret_rule_is_full_up_to_the_factor_then_linear_to_zero():
    rule = RegretRule(points=50, reference="r", factor=1.5, zero_at=3.0)
    assert rule.fraction(100.0, 100.0) == 1.0
    assert rule.fraction(150.0, 100.0) == 1.0
    assert rule.fraction(225.0, 100.0) == pytest.approx(0.5)
    assert rule.fraction(300.0, 100.0) == 0.0
    assert rule.fraction(1e9, 100.0) == 0.0
    step = dataclasses.replace(rule, zero_at=1.5)
    assert step.fraction(150.0, 100.0) == 1.0 and step.fraction(150.01, 100.0) == 0.0
    # a non-positive reference regret leaves no slack to scale
    assert rule.fraction(-1.0, 0.0) == 1.0 and rule.fraction(0.5, 0.0) == 0.0


def _record(regret: float, seed: int, projected: int = 0, agent: str = "sub") -> dict:
    return {"env_id": "DPBandit-MAB-v0", "env_kwargs": {}, "horizon": 40, "regret": regret,
            "seed_index": seed, "projected_actions": projected, "agent_label": agent}


def test_scoring_each_part_and_its_reason():
    a = parse_assignment(with_("grading.regret", {"factor": 1.5, "zero_at": 3}))
    refs = [_record(10.0, 0, agent="private-exp2"), _record(30.0, 1, agent="private-exp2"),
            _record(5.0, 0, agent="exp3"), _record(5.0, 1, agent="exp3")]
    [ok] = _settings(a, [_record(40.0, 0), _record(50.0, 1)], [], refs)
    assert ok.regret == 45.0 and ok.references == {"private-exp2": 20.0, "exp3": 5.0}
    assert ok.earned == pytest.approx(25.0)  # full up to 1.5 x 20, none from 3 x 20
    # an infeasible (projected) action zeroes the setting, as does a failed game
    [bad] = _settings(a, [_record(20.0, 0, projected=1), _record(25.0, 1)], [], refs)
    assert bad.earned == 0.0 and bad.projected == 1
    lost = GameSpec("DPBandit-MAB-v0", "sub", 1.0, 0.0, 40, 1)
    [failed] = _settings(a, [_record(20.0, 0)], [(lost, "agent timed out")], refs)
    assert failed.earned == 0.0 and failed.regret is None and failed.games == 2

    from dp_online_envs.lab.audit.one_run import OneRunFinding

    def finding(refuted, eps_lb=3.0, twin_refuted=None, rr_epsilon=1.5):
        twin = None if twin_refuted is None else {
            "correct": 9, "eps_lb": 2.0 if twin_refuted else 0.5, "factor": 1e4,
            "guesses": 10, "refuted": twin_refuted}
        return OneRunFinding(1.0, 0.0, eps_lb, refuted, 0.95, 16, (40,), 640, 300, 100, 60,
                             "arms", twin, rr_epsilon)

    parts = score(a, [ok], (1.0, 0.0, "m"), "", finding(refuted=True), "")
    assert [p.name for p in parts] == ["regret", "declared", "audit"]
    # a refuted claim earns nothing for being declared, and nothing in the audit
    assert parts[1].earned == 0.0 and parts[2].earned == 0.0
    assert "the audit refutes that claim" in parts[1].reason
    assert "refuted: eps_lb = 3 > declared epsilon 1 at 95% confidence" in parts[2].reason
    parts = score(a, [ok], (1.0, 0.0, "m"), "", finding(False, 0.2, twin_refuted=True), "")
    assert parts[1].earned == 20 and parts[2].earned == 30
    assert "evidence, not proof" in parts[2].reason and "noise-free twin" in parts[2].reason
    # not refuted, but neither is its noise-free twin (or no mechanism could be refuted
    # on its guesses): the declaration keeps its points, the audit earns none
    for unseen in (finding(False, 0.2, twin_refuted=False),
                   finding(False, 0.2, twin_refuted=True, rr_epsilon=math.inf)):
        parts = score(a, [ok], (1.0, 0.0, "m"), "", unseen, "")
        assert parts[1].earned == 20 and parts[2].earned == 0.0
        assert parts[2].reason.startswith("no audit power: not refuted (eps_lb = 0.2)")
    parts = score(a, [failed], (2.0, 0.0, "m"), "", None, "the learner failed under audit")
    assert parts[0].earned == 0.0 and "1 of 2 games failed (agent timed out)" in parts[0].reason
    assert parts[1].earned == 0.0 and "weaker than the required (1, 0)" in parts[1].reason
    assert parts[2].earned == 0.0 and parts[2].reason == "the learner failed under audit"
    parts = score(a, [bad], (1.0, 1e-9, "m"), "", None, "x")
    assert "1 infeasible action(s)" in parts[0].reason and parts[1].earned == 0.0


def test_the_declared_budget_is_the_weakest_declared():
    def rec(eps, delta):
        return {"privacy_epsilon": eps, "privacy_delta": delta, "privacy_mechanism": f"m{eps}"}

    assert declared_budget([rec(1.0, 0.0), rec(1.0, 0.0)]) == ((1.0, 0.0, "m1.0"), "")
    weakest, note = declared_budget([rec(1.0, 0.0), rec(2.0, 0.0)])
    assert weakest == (2.0, 0.0, "m2.0") and "2 different budgets" in note
    assert declared_budget([rec(1.0, 0.0), rec(None, None)])[0] is None
    assert declared_budget([])[1].startswith("no game finished")


def test_the_reason_of_a_failed_game_is_one_line():
    isolated = ("Traceback (most recent call last):\n  File \"x\", line 1\n"
                "dp_online_envs.lab.isolation.AgentFailure: agent timed out: no answer to act "
                "within 5 s\n")
    assert failure_reason(isolated) == "agent timed out: no answer to act within 5 s"
    env = "Traceback (most recent call last):\n  ...\nValueError: arm index 99 out of range\n"
    assert failure_reason(env) == "ValueError: arm index 99 out of range"
    assert failure_reason("") == "unknown error"
    assert math.isfinite(len(failure_reason("x" * 1000))) and len(failure_reason("x" * 1000)) == 300


def test_the_audit_power_is_measured_once_per_assignment_and_cached(tmp_path, monkeypatch):
    from dp_online_envs.lab.grading import audit_step, grade

    calls = []
    real = audit_step.one_run_power

    def counted(*args, **kwargs):
        calls.append(args)
        assert kwargs["factors"] == (3.0, 10.0) and kwargs["options"] == {}
        return real(*args, **kwargs)

    monkeypatch.setattr(audit_step, "one_run_power", counted)
    a = parse_assignment(with_("audit", {"games": 1, "power_factors": [3, 10]}))
    first = grade(a, [], secret="s-1", out_dir=tmp_path)
    assert len(calls) == 1 and calls[0][0] == "private-exp2"
    assert calls[0][3].seed == audit_seed(a, "s-1")  # the audit's seed comes from the secret
    again = grade(a, [], secret="s-1", out_dir=tmp_path)
    assert len(calls) == 1 and again.power == first.power  # read back
    grade(a, [], secret="s-2", out_dir=tmp_path)  # another secret: other audit seeds
    assert len(calls) == 2
    (tmp_path / "audit_power.json").write_text("{damaged")
    grade(a, [], secret="s-2", out_dir=tmp_path)
    assert len(calls) == 3


def test_the_audit_seed_is_keyed_by_the_secret_and_the_assignment():
    a = parse_assignment(copy.deepcopy(BASE))
    b = parse_assignment(with_("name", "other"))
    assert audit_seed(a, "s") == audit_seed(a, "s")
    assert len({audit_seed(a, "s"), audit_seed(a, "t"), audit_seed(b, "s")}) == 3
    assert len({seed_secret(a, "s"), seed_secret(a, "t"), seed_secret(b, "s")}) == 3


def test_the_regret_rule_falls_from_full_at_the_factor_to_zero_at_zero_at():
    """Off the midpoint, so that interpolating the wrong way shows: full at 150, zero at
    300; 180 is a fifth of the way down, so 0.8 of the points; 270 earns 0.2."""
    rule = RegretRule(points=50, reference="r", factor=1.5, zero_at=3.0)
    assert rule.fraction(180.0, 100.0) == pytest.approx(0.8)
    assert rule.fraction(270.0, 100.0) == pytest.approx(0.2)
    assert rule.fraction(151.0, 100.0) > rule.fraction(299.0, 100.0)


def test_the_declared_budget_takes_the_largest_epsilon_and_the_largest_delta():
    def rec(eps, delta):
        return {"privacy_epsilon": eps, "privacy_delta": delta, "privacy_mechanism": f"m{eps}"}

    (eps, delta, text), note = declared_budget([rec(1.0, 1e-5), rec(1.0, 1e-7)])
    assert (eps, delta) == (1.0, 1e-5) and "2 different budgets" in note
    (eps, delta, text), _ = declared_budget([rec(2.0, 1e-9), rec(0.5, 1e-6), rec(1.0, 0.0)])
    assert (eps, delta, text) == (2.0, 1e-6, "m2.0")  # each at its weakest


def test_the_regret_points_are_shared_by_every_env_and_horizon():
    """One env x three horizons: each setting is worth a third of the points, and a
    submission matching the reference everywhere earns the points once, not more."""
    a = parse_assignment({**copy.deepcopy(BASE), "horizons": [40, 80, 120],
                          "grading": {"regret": {"points": 60, "factor": 1.5}}})

    def rec(env, horizon, regret, seed, agent="sub"):
        return {**_record(regret, seed, agent=agent), "env_id": env, "horizon": horizon}

    settings = [(e.id, h) for e in a.envs for h in a.horizons]
    mine = [rec(e, h, 10.0, s) for e, h in settings for s in (0, 1)]
    refs = [rec(e, h, 10.0, s, agent=n) for e, h in settings for s in (0, 1)
            for n in ("private-exp2", "exp3")]
    results = _settings(a, mine, [], refs)
    assert [(r.horizon, r.points) for r in results] == [(40, 20.0), (80, 20.0), (120, 20.0)]
    assert sum(r.earned for r in results) == 60.0
    # one setting past the zero line: that third is lost, the rest kept
    mine[0]["regret"] = mine[1]["regret"] = 1e9
    assert sum(r.earned for r in _settings(a, mine, [], refs)) == 40.0


def test_the_cached_audit_power_is_keyed_by_the_claimed_budget(tmp_path, monkeypatch):
    """The power of the audit depends on the budget it tries to refute: an assignment
    re-graded with another epsilon (or delta) in the same output directory must measure
    it again, not read back the other budget's."""
    from dp_online_envs.lab.grading import audit_step, grade

    claims = []

    @dataclasses.dataclass
    class Power:  # the audit's power, not measured here
        reference: str = ""

        def to_dict(self):
            return {"claim": list(claims[-1])}

        def __str__(self):
            return f"power at {claims[-1]}"

    def fake(reference, games, claim, settings, **kwargs):
        claims.append(tuple(claim))
        return Power()

    monkeypatch.setattr(audit_step, "one_run_power", fake)
    first = grade(parse_assignment(with_("privacy.epsilon", 1.0)), [], secret="s",
                  out_dir=tmp_path)
    second = grade(parse_assignment(with_("privacy.epsilon", 2.0)), [], secret="s",
                   out_dir=tmp_path)
    third = grade(parse_assignment({**with_("privacy.epsilon", 2.0),
                                    "privacy": {"epsilon": 2.0, "delta": 1e-6}}), [],
                  secret="s", out_dir=tmp_path)
    assert claims == [(1.0, 0.0), (2.0, 0.0), (2.0, 1e-6)]
    assert (first.power, second.power, third.power) == (
        {"claim": [1.0, 0.0]}, {"claim": [2.0, 0.0]}, {"claim": [2.0, 1e-6]})


def test_the_audit_shows_its_games_as_progress_and_plays_the_twin_when_not_refuted(
        monkeypatch):
    """The audit phase (minutes per submission) is not silent: each audit, the learner's
    and its noise-free twin's, is a progress bar fed with every game it starts (its
    horizon as the rounds) and closed at the end, even when the learner fails. The
    twin is built at TWIN_FACTOR times the epsilon. Played in process (the sandboxed
    learner replaced by the class it would load)."""
    import agents
    from dp_online_envs.lab.grading import audit_step, grader

    bars, built = [], []

    class Bar:
        def __init__(self, total, *, quiet, desc, rounds):
            self.args, self.updates, self.closed = (total, quiet, desc, rounds), [], False
            bars.append(self)

        def update(self, n=1, rounds=0):
            self.updates.append((n, rounds))

        def close(self):
            self.closed = True

    def in_process(factory, problem, action_space, limits):
        built.append(factory.keywords["epsilon"])
        return agents.make("private-exp2", problem, epsilon=factory.keywords["epsilon"],
                           seed=factory.keywords["seed"])

    monkeypatch.setattr(grader, "progress_bar", Bar)
    monkeypatch.setattr(grader, "IsolatedLearner", in_process)
    assignment = parse_assignment(with_("audit", {"games": 2}))
    settings = dataclasses.replace(assignment.audit.settings, seed=5)
    loader = agents.agent_class("private-exp2")  # what the sandboxed learner would load
    finding, reason = grader._audit(assignment, loader, (1.0, 0.0, ""), "", settings, None,
                                    shown="someone")
    assert reason == "" and not finding.refuted and finding.twin is not None
    assert built == [1.0, 1.0, audit_step.TWIN_FACTOR, audit_step.TWIN_FACTOR]
    assert [b.args for b in bars] == [
        (2, False, "someone: audit", 80),
        (2, False, "someone: audit of its noise-free twin", 80)]
    assert all(b.updates == [(1, 40), (1, 40)] and b.closed for b in bars)
    bars.clear()
    monkeypatch.setattr(grader, "IsolatedLearner", lambda *a: 1 / 0)  # fails at once
    finding, reason = grader._audit(assignment, loader, (1.0, 0.0, ""), "", settings, None)
    assert finding is None and "ZeroDivisionError" in reason
    assert [b.args[1] for b in bars] == [True] and bars[0].closed  # quiet without a name
