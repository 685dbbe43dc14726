"""An action's value is a finite number: NaN, infinity (``1e999`` as Python's JSON reads it) were taken,
played and recorded in the trajectory as the action's parameter ("nan", "inf"), from Python and from an
``exec:`` assistant, on a user's bicycle lamp (tests/support/bike_lamp.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from diagkg.env.actions import Action
from diagkg.env.contract import ProtocolError, ProtocolFault, read_reply
from diagkg.errors import ActionError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.bike_lamp import bike_lamp, cable_off

AGENT = """\
import sys
for line in sys.stdin:
    if '"end"' in line:
        break
    print('{"kind": "act", "action": "measure_voltage", "targets": ["lamp"], "value": %s}', flush=True)
"""


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "nan", "1e999"])
def test_a_value_that_is_no_finite_number_is_refused_when_made(value):
    with pytest.raises(ActionError):
        Action("adjust_potentiometer", ("pot",), value)
    assert Action("adjust_potentiometer", ("pot",), "0.25").value == 0.25


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_an_exec_assistant_sending_one_is_stopped_and_nothing_is_played(tmp_path: Path, value: str):
    with pytest.raises(ProtocolError) as caught:
        read_reply('{"kind": "act", "action": "measure_voltage", "targets": ["lamp"], "value": %s}' % value,
                   ["lamp"], ["measure_voltage"])
    assert caught.value.fault is ProtocolFault.SCHEMA
    (tmp_path / "lamp.ttl").write_text(bike_lamp("dynlamp2"))
    (tmp_path / "s.ttl").write_text(cable_off("dynlamp2", "DYN2.1", 9721))
    (tmp_path / "agent.py").write_text(AGENT % value)
    store = KnowledgeStore.memory()
    load_files(store, [tmp_path / "lamp.ttl", tmp_path / "s.ttl"])
    result = run_session("DYN2.1", f"exec:{sys.executable} {tmp_path / 'agent.py'}", store=store, seed=0)
    assert result.cost == 0.0 and result.fault is ProtocolFault.SCHEMA, result
    # nothing of the value reached the trajectory (it was stored as the action's parameter, "nan" or "inf")
    stored = list(store.raw.quads_for_pattern(None, NamedNode("https://w3id.org/diagkg/ontology#actionParameterValue"), None))
    assert stored == [] and len(list(store.raw.quads_for_pattern(NamedNode(result.trajectory + "#session"), None, None))) > 0
