"""A plug-in hosted in a process of its own is told the typed outcome an in-process one is told.

A plug-in module written here plays the same actions on the torch in diagkg's process and hosted
(``python -m diagkg.runs.exec_host MODULE:ATTR``, as diagkg hosts an untrusted plug-in) and writes down
what ``record`` received: the same typed records both ways (a ``Voltages`` with its ``port_voltages``,
one ``Terminal`` per port, a ``Sighting``…), not plain dictionaries hosted. Before, the hosted one got
the JSON's dictionaries, and a plug-in that looked for a ``Voltages`` never found one.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

import diagkg
from diagkg.env import contract
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.outcomes import Continuity, Current, DiodeTest, PathTest, Sighting, SwitchTest, Terminal, Voltages
from diagkg.env.service import make
from diagkg.runs.exec_boundary import action_json
from diagkg.runs.exec_host import catalogue_of
from diagkg.runs.rounds import outcome_from_json, typed_outcome
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store

PLUGIN = '''
import os

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action, Hypothesis

SCRIPT = [("measure_voltage", ("bat",)), ("inspect_connections", ("lead",)), ("observe_component", ("bulb",)),
          ("test_continuity", ("bulb",)), ("measure_current", ("bulb",)), ("test_path_continuity", ("bat", "bulb")),
          ("test_diode", ("led",)), ("test_switch", ("sw",)), ("hypothesis", ("bulb",)), ("observe_component", ("lead",))]


class Probe(BaseAssistant):
    name = "typed-probe"
    api_version = 3

    def suggest(self):
        done = len(self.outcomes)
        if done == len(SCRIPT):
            return None
        name, targets = SCRIPT[done]
        return Hypothesis(targets) if name == "hypothesis" else Action(name, targets)

    def record(self, outcome):
        super().record(outcome)
        with open(os.environ["TYPED_PROBE_LOG"], "a", encoding="utf-8") as log:
            log.write(repr(sorted(outcome.data.items())) + "\\n")
'''

SCRIPT_LENGTH = 10


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("typed-torch"))


@pytest.fixture
def plugin(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "typed_probe.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(folder))
    # the hosted process imports the plug-in and this diagkg (not another checkout's)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), str(Path(diagkg.__file__).parents[1])]))
    return folder


def told(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines()


def test_a_hosted_plugin_is_told_the_typed_records_it_is_told_in_process(plugin, tmp_path, torch, monkeypatch):
    monkeypatch.setenv("TYPED_PROBE_LOG", str(tmp_path / "in-process"))
    probe = importlib.import_module("typed_probe").Probe()
    in_process = run_session("TORCH.1", probe, store=torch, seed=0, record=False)
    monkeypatch.setenv("TYPED_PROBE_LOG", str(tmp_path / "hosted"))
    hosted = run_session("TORCH.1", f"exec:{sys.executable} -m diagkg.runs.exec_host typed_probe:Probe",
                         store=torch, seed=0, record=False)
    assert in_process.rounds == hosted.rounds == SCRIPT_LENGTH
    here, there = told(tmp_path / "in-process"), told(tmp_path / "hosted")
    assert len(here) == SCRIPT_LENGTH
    assert "Voltages(port_voltages=" in here[0] and "Terminal(port=" in here[1] and "Sighting(text=" in here[2]
    assert "('actually_faulty', [])" in here[8] and "visible_ends={" in here[9]     # a hypothesis's data stays plain
    assert there == here          # the same records, field for field


def test_every_kind_of_observation_comes_back_as_its_record(torch):
    """What :func:`typed_outcome` rebuilds from the JSON equals what the session told (every record type)."""
    session = make("TORCH.1", store=torch)
    session.reset(seed=0)
    catalogue = catalogue_of([action_json(spec) for spec in session.catalogue.values()])   # as the host has it
    moves = [Action("measure_voltage", ("bat",)), Action("inspect_connections", ("lead",)),
             Action("observe_component", ("bulb",)), Action("test_continuity", ("bulb",)),
             Action("measure_current", ("bulb",)), Action("test_path_continuity", ("bat", "bulb")),
             Action("test_diode", ("led",)), Action("test_switch", ("sw",)), Hypothesis(("bulb",)),
             Action("observe_component", ("lead",))]
    kinds = set()
    for move in moves:
        outcome = session.step(move)[0].told()
        again = typed_outcome(outcome_from_json(contract.outcome_json(outcome)), catalogue)
        assert again.data == outcome.data, move
        kinds |= {type(v) for v in again.data.values()} | {type(t) for v in again.data.values() if isinstance(v, dict)
                                                           for t in v.values()}
    assert {Voltages, Terminal, Sighting, Continuity, Current, PathTest, DiodeTest, SwitchTest} <= kinds
    # a record's field that is None is left out of its JSON and came back missing: a battery's or an LED's
    # continuity (no resistance) crashed the host of every hosted plug-in that tested one
    session.reset(seed=0)
    for part in ("bat", "led"):
        outcome = session.step(Action("test_continuity", (part,)))[0].told()
        assert outcome.data[part].resistance is None
        assert typed_outcome(outcome_from_json(contract.outcome_json(outcome)), catalogue).data == outcome.data, part
