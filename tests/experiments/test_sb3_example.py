"""The stable-baselines3 example says how to install what it needs."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "sb3_ppo.py"


@pytest.fixture
def example():
    spec = importlib.util.spec_from_file_location("sb3_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_install_lines_are_in_the_docstring_and_in_the_error(example, monkeypatch):
    assert "--index-url https://download.pytorch.org/whl/cpu" in example.INSTALL[0]
    assert "sb3" in example.INSTALL[1]
    for line in example.INSTALL:
        assert f"    {line}\n" in example.__doc__
    monkeypatch.setitem(sys.modules, "torch", None)  # as if PyTorch were not installed
    with pytest.raises(SystemExit) as info:
        example.main(timesteps=1)
    message = str(info.value)
    assert message.startswith("this example needs stable-baselines3 and PyTorch")
    assert all(line in message for line in example.INSTALL)
