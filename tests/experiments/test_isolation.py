"""Agents in their own process: same results as in-process play, failures recorded, and
nothing of the env reachable from the agent's process."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

import agents
import dp_online_envs  # noqa: F401  (registers the ids)
from dp_online_envs.lab.experiments.game import GameSpec, play_game, stable_view
from dp_online_envs.lab.experiments.runner import run_games
from dp_online_envs.lab.isolation import AgentFailure, IsolatedLearner, IsolationLimits
from dp_online_envs.loop import run_rounds

MOD = "experiments.isolated_agents"
FAST = IsolationLimits(timeout=20.0)


@pytest.mark.parametrize("env_id, agent, epsilon, delta, kwargs", [
    ("DPBandit-MAB-v0", "private-exp2", 1.0, None, {}),          # Discrete actions
    ("DPFullInfo-Experts-v0", "private-ftrl", 2.0, 1e-5, {"counter": "factorization"}),
    ("DPBandit-Matroid-v1", "garber-kretzu", None, None, {}),    # Box actions
    ("DPBandit-Submodular-v1", "bandit-submod-pftal", 1.0, None, {}),  # MultiBinary
])
def test_isolated_game_is_bit_identical_to_in_process_play(env_id, agent, epsilon, delta, kwargs):
    spec = GameSpec(env_id, agent, epsilon, delta, 60, 0, agent_kwargs=kwargs)
    here = stable_view(play_game(spec))
    there = stable_view(play_game(dataclasses.replace(spec, isolation=FAST)))
    assert there == here
    assert here["clipped_feedback"] == there["clipped_feedback"]
    assert (here["privacy_mechanism"] != "") == (epsilon is not None)


def test_proxy_plays_the_same_rounds_through_the_one_loop():
    env = gym.make("DPBandit-MAB-v0", horizon=50)
    problem = env.get_wrapper_attr("problem")
    seen: list[tuple[int, float]] = []
    factory = functools.partial(agents.make, "exp3", seed=4)
    with IsolatedLearner(factory, problem, env.action_space, FAST) as proxy:
        proxy.reset(4)
        env.reset(seed=9)
        run_rounds(env, proxy, lambda t, a, obs: seen.append((a, float(obs[0]))))
        proxy.finish()
    local = agents.make("exp3", problem, seed=4)
    local.reset(4)
    env.reset(seed=9)
    mine: list[tuple[int, float]] = []
    run_rounds(env, local, lambda t, a, obs: mine.append((a, float(obs[0]))))
    assert seen == mine and len(seen) == 50


@pytest.mark.parametrize("cls, limits, reason", [
    ("RaisesInAct", FAST, "agent raised during act: ZeroDivisionError"),
    ("Hangs", IsolationLimits(timeout=1.0), "agent timed out: no answer to act within 1 s"),
    # The memory and CPU limits end these games, not the wall timeout: it is far above
    # what they take even on a loaded machine (BurnsCpu needs 1 s of CPU, however long
    # the machine takes to give it that).
    ("EatsMemory", IsolationLimits(timeout=600.0, memory_bytes=2**31), "MemoryError"),
    ("BurnsCpu", IsolationLimits(timeout=600.0, cpu_seconds=1), "SIGXCPU (CPU limit exceeded)"),
    # a reply cut short by the process's death is that death, not a malformed frame
    ("DiesMidFrame", FAST, "died during act: SIGXCPU (CPU limit exceeded)"),
    ("FloatArm", FAST, "expected integers"),
    ("Exits", FAST, "exit code 7"),
    # a frame begun and never finished: the call's timeout bounds the whole frame
    ("StallsMidFrame", IsolationLimits(timeout=1.0), "no answer to act within 1 s"),
])
def test_a_misbehaving_agent_fails_its_game_with_the_reason(cls, limits, reason):
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:{cls}", None, None, 20, 0, isolation=limits)
    with pytest.raises(AgentFailure) as caught:
        play_game(spec)
    assert reason in caught.value.reason


def test_the_cpu_budget_counts_the_agents_work_not_the_imports_before_it():
    """The agent's module burns 1.2 s of CPU when imported, more than the whole one-second
    budget: the budget starts after it. Half a second of the agent's own work fits; three
    seconds do not (past the soft limit and its hard second)."""
    limits = IsolationLimits(timeout=600.0, startup_timeout=600.0, cpu_seconds=1)
    slow = "experiments.slow_import_agents"
    record = play_game(GameSpec("DPBandit-MAB-v0", f"{slow}:BurnsHalfASecond", None, None,
                                5, 0, isolation=limits))
    assert record["horizon"] == 5 and record["regret"] == record["regret"]
    with pytest.raises(AgentFailure) as caught:
        play_game(GameSpec("DPBandit-MAB-v0", f"{slow}:BurnsThreeSeconds", None, None, 5, 0,
                           isolation=limits))
    assert "CPU limit exceeded" in caught.value.reason


def test_a_failing_isolated_agent_does_not_stop_the_sweep():
    good = [GameSpec("DPBandit-MAB-v0", "exp3", None, None, 30, 1)]
    bad = GameSpec("DPBandit-MAB-v0", f"{MOD}:RaisesInAct", None, None, 30, 0)
    report = run_games([bad] + good, backend="serial", isolate=FAST)
    assert report.played == 1 and len(report.records) == 1
    [(spec, error)] = report.failures
    assert spec.agent.endswith("RaisesInAct") and "ZeroDivisionError" in error
    assert [stable_view(r) for r in report.records] == \
        [stable_view(play_game(s)) for s in good]


def _snoop(tmp_path, seed_secret):
    report = tmp_path / "found.json"
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:Snoop", None, None, 40, 3,
                    agent_kwargs={"report": str(report)}, isolation=FAST,
                    seed_secret=seed_secret)
    play_game(spec)
    return json.loads(report.read_text())


def test_the_isolated_agent_finds_no_env_and_cannot_rebuild_a_secret_seeded_one(tmp_path):
    found = _snoop(tmp_path, seed_secret="0f6a1c2e9d7b4a53")
    assert found == {"gc": [], "frames": [], "twins": []}


def test_without_a_secret_the_public_seed_scheme_lets_an_agent_rebuild_the_env(tmp_path):
    """Why untrusted agents need ``seed_secret``: the attack works on public seeds."""
    found = _snoop(tmp_path, seed_secret=None)
    assert found["gc"] == [] and found["frames"] == []
    assert found["twins"] == ["3"]


def test_secret_seeds_differ_from_public_ones_and_are_reproducible():
    spec = GameSpec("DPBandit-MAB-v0", "exp3", None, None, 30, 0)
    secret = dataclasses.replace(spec, seed_secret="s3cret")
    assert secret.env_seed != spec.env_seed and secret.agent_seed != spec.agent_seed
    assert secret.game_id != spec.game_id
    assert "s3cret" not in json.dumps(secret.identity())
    again = dataclasses.replace(spec, seed_secret="s3cret")
    assert (again.env_seed, again.agent_seed) == (secret.env_seed, secret.agent_seed)


def test_in_process_play_hands_the_agent_a_seed_other_than_the_envs():
    from dp_online_envs.loop import game_seeds

    env_seed, agent_seed = game_seeds(0)
    assert env_seed == 0 and agent_seed != 0 and game_seeds(0) == (env_seed, agent_seed)
    assert len({game_seeds(s)[1] for s in range(100)} | set(range(100))) == 200
    assert game_seeds(None) == (None, None)


def test_limits_are_validated():
    with pytest.raises(ValueError, match=r"^timeout=0 rejected: expected a finite real "
                                         r"number > 0$"):
        IsolationLimits(timeout=0)
    with pytest.raises(ValueError, match=r"^startup_timeout=True rejected: .*, got a bool$"):
        IsolationLimits(startup_timeout=True)
    with pytest.raises(ValueError, match=r"^memory_bytes=1\.5 rejected: expected an integer "
                                         r"in \[1, 4611686018427387904\], got a float$"):
        IsolationLimits(memory_bytes=1.5)
    assert IsolationLimits(memory_bytes=None, cpu_seconds=np.int64(2)).cpu_seconds == 2
    with pytest.raises(TypeError, match="supports Discrete, MultiBinary and Box"):
        IsolatedLearner(agents.make, None, gym.spaces.Dict({}))


def test_actions_cross_the_boundary_exactly():
    from dp_online_envs.lab.isolation import _encode_action

    x = np.array([0.1, 1 / 3, -2.0**-60, 5e300])
    back = np.frombuffer(_encode_action(x, 4, "box"), dtype=np.float64, offset=1)
    assert back.tobytes() == x.tobytes()
    with pytest.raises(ValueError, match=r"shape \(4,\), expected 3"):
        _encode_action(x, 3, "box")


def test_an_integer_action_is_framed_as_the_general_path_frames_it():
    """The plain-int shortcut of an action frame gives the bytes numpy's path gives, and
    leaves every other action (numpy integers, bools, ints beyond float64's exact
    range, floats) to that path."""
    from dp_online_envs.lab.isolation import _encode_action

    def general(action):
        return b"a" + np.ascontiguousarray(np.asarray(action), np.float64).reshape(-1).tobytes()

    for action in (0, 3, -7, 2**53, -(2**53), 2**53 + 1, 2**62, np.int64(5), np.uint8(9),
                   True, np.bool_(False)):
        assert _encode_action(action, 1, "discrete") == general(action), action
    for bad, why in ((2.0, "float64: expected integers"), (2**70, "expected integers"),
                     ([1, 2], r"shape \(2,\), expected 1")):
        with pytest.raises(ValueError, match=why):
            _encode_action(bad, 1, "discrete")


def test_the_parent_waits_for_frames_without_a_selector_per_frame(monkeypatch):
    """``Connection.poll`` builds a selector on each call (microseconds a frame, twice a
    round); the parent polls its channel's descriptor with one poll object instead."""
    from multiprocessing.connection import Connection

    def refused(self, timeout=0.0):
        raise AssertionError("Connection.poll called")

    monkeypatch.setattr(Connection, "poll", refused)
    env = gym.make("DPBandit-MAB-v0", horizon=50)
    factory = functools.partial(agents.make, "exp3", seed=0)
    with IsolatedLearner(factory, env.get_wrapper_attr("problem"), env.action_space,
                         FAST) as proxy:
        proxy.reset(0)
        env.reset(seed=0)
        run_rounds(env, proxy)
        assert proxy.finish()["clipped_feedback"] == 0


def test_a_round_is_one_write_and_one_read_of_the_parent(monkeypatch):
    """On a busy machine (no polling before blocking), the parent sends each round's
    frame with one write and reads the answer with one read, whose wait is the socket's
    own receive timeout: no poll, no second read for the frame's body."""
    import socket

    from dp_online_envs.lab import isolation

    calls = {"sendall": 0, "recv_into": 0, "setsockopt": 0}

    def counted(name):
        method = getattr(socket.socket, name)

        def wrapper(self, *args):
            calls[name] += 1
            return method(self, *args)
        return wrapper

    for name in calls:
        monkeypatch.setattr(socket.socket, name, counted(name))
    monkeypatch.setattr(isolation, "_spin_allowed", lambda: False)
    monkeypatch.setattr(isolation._Poller, "poll", lambda self, timeout: pytest.fail("polled"))
    horizon = 300
    env = gym.make("DPBandit-MAB-v0", horizon=horizon)
    factory = functools.partial(agents.make, "exp3", seed=0)
    with IsolatedLearner(factory, env.get_wrapper_attr("problem"), env.action_space,
                         FAST) as proxy:
        proxy.reset(0)
        env.reset(seed=0)
        run_rounds(env, proxy)
        assert proxy.finish()["clipped_feedback"] == 0
        # the setup, the reset, the rounds and the summary: one write and one read each
        # (no read for the setup); the receive timeout set once (startup's) and once more
        assert calls == {"sendall": horizon + 3, "recv_into": horizon + 3, "setsockopt": 2}


def test_loading_a_submission_in_its_process_imports_neither_the_grader_nor_scipy(tmp_path):
    """A graded game's process unpickles a submission loader: that imports the module
    that loads the file, not the grader, the audit or SciPy's statistics (about a
    second of CPU per game, 21 games a submission at the course's assignment)."""
    import pickle

    from dp_online_envs.lab.grading.submission import SubmissionInfo, SubmissionLoader

    loader = SubmissionLoader(SubmissionInfo(str(tmp_path / "s.py"), "L", "l", "bandit",
                                             True, "", ""))
    frame = pickle.dumps(functools.partial(loader, epsilon=1.0, seed=0))
    heavy = ["scipy.stats", "dp_online_envs.lab.grading.grader",
             "dp_online_envs.lab.grading.assignment", "dp_online_envs.lab.audit",
             "dp_online_envs.lab.experiments.runner"]
    code = (f"import pickle, sys; pickle.loads({frame!r}); "
            f"print([m for m in {heavy!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_an_agent_that_cannot_be_built_fails_at_start_and_leaves_no_process(monkeypatch):
    from dp_online_envs.lab import isolation

    started = []
    monkeypatch.setattr(isolation.IsolatedProcess, "__init__", _recording(started))
    spec = GameSpec("DPBandit-MAB-v0", "exp3", None, None, 20, 0,
                    agent_kwargs={"bogus": 1}, isolation=FAST)
    with pytest.raises(AgentFailure, match="agent raised during starting the agent: TypeError"):
        play_game(spec)
    assert len(started) == 1 and not started[0].alive()


def _recording(started):
    from dp_online_envs.lab import isolation

    init = isolation.IsolatedProcess.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        started.append(self)

    return record


# ------------------------------------------------- nothing the agent sends is unpickled
def test_a_pickle_sent_by_the_agent_is_refused_and_never_loaded(tmp_path):
    marker = tmp_path / "the-payload-ran"
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:SendsPickle", None, None, 20, 0,
                    agent_kwargs={"marker": str(marker)}, isolation=FAST)
    with pytest.raises(AgentFailure) as caught:
        play_game(spec)
    assert caught.value.reason.startswith("malformed reply b'\\x80\\x04")
    assert "to finish: expected a summary frame starting with b's'" in caught.value.reason
    assert not marker.exists()
    # the same bytes, loaded as the protocol once did, run the payload: the test has teeth
    import pickle

    from experiments.isolated_agents import Payload

    pickle.loads(pickle.dumps(Payload(str(marker))))
    assert marker.is_dir()


def test_a_malformed_summary_is_refused_with_the_reason():
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:SendsBadSummary", None, None, 20, 0,
                    isolation=FAST)
    with pytest.raises(AgentFailure, match=r"^malformed summary from the agent's process: "
                                           r"clipped_feedback='lots', expected an integer "
                                           r">= 0$"):
        play_game(spec)


def test_an_action_frame_of_the_wrong_size_is_refused():
    spec = GameSpec("DPBandit-MAB-v0", f"{MOD}:SendsShortAction", None, None, 20, 0,
                    isolation=FAST)
    with pytest.raises(AgentFailure, match=r"^malformed reply b'a\\x00\\x01' to act: "
                                           r"expected 9 bytes starting with b'a', got 3$"):
        play_game(spec)


@pytest.mark.parametrize("data, why", [
    (b"\x80\x04K\x01.", "not JSON"),
    (b"[1, 2]", "expected an object with keys ['clipped_feedback', 'privacy'], got list"),
    (b'{"clipped_feedback": 0}', "got ['clipped_feedback']"),
    (b'{"clipped_feedback": true, "privacy": null}', "clipped_feedback=True, expected"),
    (b'{"clipped_feedback": -1, "privacy": null}', "clipped_feedback=-1, expected"),
    (b'{"clipped_feedback": 0, "privacy": [1, 0]}', "expected null or [epsilon, delta, text]"),
    (b'{"clipped_feedback": 0, "privacy": [NaN, 0, "x"]}', "epsilon=nan, expected"),
    (b'{"clipped_feedback": 0, "privacy": ["1", 0, "x"]}', "epsilon='1', expected"),
    (b'{"clipped_feedback": 0, "privacy": [1' + b"0" * 400 + b', 0, "x"]}', "epsilon=1000"),
    (b'{"clipped_feedback": 0, "privacy": [1, 2, "x"]}', "delta=2, expected a number in"),
    (b'{"clipped_feedback": 0, "privacy": [1, 0, 7]}', "mechanism text of type int"),
    (b'{"clipped_feedback": 0, "privacy": [1, 0, "' + b"x" * 1001 + b'"]}',
     "of type str and 1001 characters, expected a string of at most 1000"),
    (b" " * 4097, "4097 bytes, expected at most 4096"),
    (b"[" * 4096, "JSON nested too deep to decode"),  # RecursionError in the decoder
])
def test_parse_summary_names_what_is_wrong(data, why):
    from dp_online_envs.lab.isolation import parse_summary

    with pytest.raises(AgentFailure, match="^malformed summary from the agent's process: ") as e:
        parse_summary(data)
    assert why in e.value.reason


def test_parse_summary_accepts_the_two_shapes_a_learner_sends():
    from dp_online_envs.lab.isolation import parse_summary

    assert parse_summary(b'{"clipped_feedback": 3, "privacy": null}') == {
        "clipped_feedback": 3, "privacy": None}
    assert parse_summary(b'{"privacy": [1, 0.5, "Laplace"], "clipped_feedback": 0}') == {
        "clipped_feedback": 0, "privacy": (1.0, 0.5, "Laplace")}


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_a_spinning_agent_is_stopped_at_its_call_timeout_not_later():
    """Measured in CPU time, not wall-clock: an agent that spins in ``act`` burns CPU
    until it is killed, so its process's CPU time (minus a well-behaved agent's, which
    pays the same start-up) bounds how long the parent waited past the limit. A wait of
    several times the limit would show as several seconds of CPU."""
    limit = 1.0
    env = gym.make("DPBandit-MAB-v0", horizon=20)
    problem = env.get_wrapper_attr("problem")

    def run(cls: str) -> tuple[float, str]:
        factory = functools.partial(getattr(importlib.import_module(MOD), cls), seed=0)
        before = _children_cpu()
        reason = ""
        with IsolatedLearner(factory, problem, env.action_space,
                             IsolationLimits(timeout=limit)) as proxy:
            proxy.reset(0)
            try:
                for _ in range(3):
                    proxy.update(proxy.act(), np.zeros(1))
            except AgentFailure as exc:
                reason = exc.reason
        return _children_cpu() - before, reason

    calm, calm_reason = run("_UniformArm")
    spun, reason = run("BurnsCpu")
    assert calm_reason == "" and reason == f"agent timed out: no answer to act within {limit:g} s"
    assert spun - calm < 3 * limit, (spun, calm)


def _proxy(cls: str, limits: IsolationLimits = FAST) -> IsolatedLearner:
    env = gym.make("DPBandit-MAB-v0", horizon=20)
    factory = functools.partial(getattr(importlib.import_module(MOD), cls), seed=0)
    return IsolatedLearner(factory, env.get_wrapper_attr("problem"), env.action_space, limits)


def test_feedback_left_over_from_a_game_never_reaches_the_next_one():
    """A game abandoned after an ``update`` (no ``finish``: an audit stopping early, an
    error) must not hand its last feedback to the learner of the next game."""
    with _proxy("CountsUpdates") as proxy:
        proxy.reset(0)
        for _ in range(3):
            proxy.update(proxy.act(), np.zeros(1))
        assert proxy.act() == 3  # three feedbacks reached it
        proxy.update(3, np.ones(1))  # pending, never delivered
        proxy.reset(1)
        assert proxy.act() == 0  # a fresh game: no feedback yet


def test_the_limits_are_the_address_space_and_cpu_time_of_the_agent_process():
    limits = IsolationLimits(timeout=20.0, memory_bytes=3 * 2**30, cpu_seconds=50)
    with _proxy("ShowsLimits", limits) as proxy:
        proxy.reset(0)
        with pytest.raises(AgentFailure) as caught:
            proxy.act()
    assert f"RLIMIT_AS={(3 * 2**30, 3 * 2**30)} RLIMIT_CPU=" in caught.value.reason
    # the CPU limit: 50 s on top of the whole seconds used when it was set (its imports)
    soft, hard = map(int, re.search(r"RLIMIT_CPU=\((\d+), (\d+)\)", caught.value.reason).groups())
    used = float(re.search(r"USED=([\d.]+)", caught.value.reason).group(1))
    assert hard == soft + 1 and 50 <= soft <= 50 + math.ceil(used)


def test_a_side_polls_before_blocking_only_while_the_machine_has_a_cpu_free(monkeypatch):
    """Polling on a busy machine takes the CPU the other side needs: a side then blocks
    at once (the load is looked up every SPIN_CHECK frames)."""
    from dp_online_envs.lab import isolation

    class Quiet:  # a connection on which no frame ever arrives
        def poll(self, timeout):
            return False

    yields = []
    monkeypatch.setattr(isolation.os, "sched_yield", lambda: yields.append(1))
    monkeypatch.setattr(isolation.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(isolation, "_SPIN", isolation._SpinState())
    for load, polls in ((10.0, False), (0.2, True), (1.6, False), (1.4, True)):
        monkeypatch.setattr(isolation.os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        isolation._SPIN.frames = 0  # look at the load now
        yields.clear()
        assert isolation._wait(Quiet(), 0) is False
        assert bool(yields) is polls, load
        yields.clear()
        for _ in range(isolation.SPIN_CHECK - 1):  # the verdict holds until the next look
            isolation._wait(Quiet(), 0)
        assert (len(yields) > 0) is polls, load


ORPHAN_PARENT = """\
import functools, importlib, sys
import gymnasium as gym
import numpy as np
import dp_online_envs
from dp_online_envs.lab.isolation import IsolatedLearner, IsolationLimits
env = gym.make("DPBandit-MAB-v0", horizon=20)
factory = functools.partial(importlib.import_module("experiments.isolated_agents").BurnsCpu,
                            seed=0)
proxy = IsolatedLearner(factory, env.get_wrapper_attr("problem"), env.action_space,
                        IsolationLimits(timeout=600.0))
proxy.reset(0)
proxy.update(proxy.act(), np.array([0.5]))
print(proxy._process.pid, flush=True)
proxy.act()  # the agent spins from here on
"""


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_an_isolated_agent_dies_with_its_parent_even_when_busy():
    """kill -9 of the process that plays an isolated agent (a sweep, a grader) leaves no
    agent process running: the agent, busy in a loop, ends within a few seconds."""
    tests = pathlib.Path(__file__).resolve().parents[1]
    path = os.pathsep.join([str(tests.parent), str(tests)])  # the package first, then tests
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN_PARENT], stdout=subprocess.PIPE,
                              text=True, cwd=tests.parent, env=dict(os.environ, PYTHONPATH=path))
    child = None
    try:
        child = int(parent.stdout.readline())
        time.sleep(1.0)
        assert _alive(child)  # busy in act
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child)
    finally:
        parent.kill()
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)
