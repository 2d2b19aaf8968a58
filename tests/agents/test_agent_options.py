"""Every agent's options are visible: in its signature, in its docstring, and to ``make``.

An agent declares its options once, as the keyword parameters of ``setup``; the class's
signature is built from that declaration (``inspect.signature``, ``help``), its class
docstring has a one-line ``Args:`` entry per option, and ``agents.make`` accepts exactly
those options (anything else is refused with the valid ones listed).
"""

from __future__ import annotations

import inspect
import re

import pytest

import agents
from agents import Agent, agent_class, agent_options, list_agents, make
from dp_online_envs.envs.registry import build_env
from dp_online_envs.problem import Problem

NAMES = [info.name for info in list_agents()]
COMMON = ["problem", "epsilon", "delta", "seed", "secure"]


def args_entries(doc: str) -> list[str]:
    """The names of the ``Args:`` section of a (dedented) Google-style docstring (none if
    it has no such section)."""
    lines = doc.splitlines()
    starts = [i for i, line in enumerate(lines) if line == "Args:"]
    assert len(starts) <= 1, f"expected one 'Args:' section, found {len(starts)}"
    if not starts:
        return []
    names = []
    for line in lines[starts[0] + 1:]:
        if line and not line.startswith(" "):
            break
        m = re.match(r"^    (\*{0,2}\w+):", line)
        if m:
            names.append(m.group(1))
    return names


def test_the_registry_holds_agents_with_options():
    assert len(NAMES) >= 36
    assert sum(len(agent_options(n)) for n in NAMES) >= 80


@pytest.mark.parametrize("name", NAMES)
def test_the_signature_lists_every_option_with_its_default(name):
    cls = agent_class(name)
    setup = list(inspect.signature(cls.setup).parameters.values())[1:]
    params = inspect.signature(cls).parameters
    assert list(params) == COMMON + [p.name for p in setup]
    for p in setup:
        assert params[p.name].kind is inspect.Parameter.KEYWORD_ONLY
        assert params[p.name].default == p.default == agent_options(name)[p.name]
    assert all(params[c].kind is inspect.Parameter.KEYWORD_ONLY for c in COMMON[1:])


@pytest.mark.parametrize("name", NAMES)
def test_the_docstring_has_one_args_entry_per_option(name):
    cls = agent_class(name)
    assert args_entries(inspect.getdoc(cls)) == list(agent_options(name))


def test_args_entries_reads_the_section_and_stops_at_the_next():
    doc = "One line.\n\nArgs:\n    eta: Step.\n        continued.\n    gamma: Mix.\n\nRaises:\n    x: y"
    assert args_entries(doc) == ["eta", "gamma"]
    assert args_entries("One line.\n\nOptions:\n    eta: Step.") == []
    with pytest.raises(AssertionError, match="one 'Args:' section"):
        args_entries("Args:\n    eta: Step.\n\nArgs:\n    gamma: Mix.")


def _problem() -> Problem:
    return build_env("DPBandit-MAB-v0", horizon=10).get_wrapper_attr("problem")


def test_make_refuses_an_unknown_option_naming_it_and_the_valid_ones():
    with pytest.raises(TypeError, match=r"^exp3 got unknown option\(s\) \['etta'\]; valid: "
                                        r"\['eta', 'gamma', 'loss_range'\]$"):
        make("exp3", _problem(), etta=0.1)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['a', 'b'\]; valid: "):
        agent_class("exp3")(_problem(), a=1, b=2)
    assert make("exp3", _problem(), eta=0.25).eta == 0.25


def test_a_subclass_s_signature_follows_its_own_setup():
    class Slow(agent_class("exp3")):
        def setup(self, eta: float | None = None, slowness: int = 3) -> None:
            super().setup(eta=eta)
            self.slowness = slowness

    assert list(inspect.signature(Slow).parameters)[-2:] == ["eta", "slowness"]
    assert Slow.options == {"eta": None, "slowness": 3}
    assert Slow(_problem(), slowness=5).slowness == 5
    with pytest.raises(TypeError, match="unknown option"):
        Slow(_problem(), gamma=0.1)  # the parent's option, which this setup dropped


def test_an_option_without_a_default_is_refused_when_the_class_is_defined():
    with pytest.raises(TypeError, match=r"Bad.setup: option 'eta' must be a keyword parameter "
                                        "with a default"):
        class Bad(Agent):
            def setup(self, eta: float) -> None:
                pass


def test_the_package_exports_agent_options():
    assert agents.agent_options is agent_options
    with pytest.raises(ValueError, match="unknown agent"):
        agent_options("exp4")
