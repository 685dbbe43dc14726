"""A water-pump controller written for the tests (tests/support/pump.py, not shipped). Two scenarios leave
the float switch at 0 V: a flat battery with the motor lead off, and a blown fuse. A meter shows both as 0 V; the typed
reading said ``-0.0`` for the first (the solver's -1e-39 V rounded) and ``0.0`` for the blown fuse (its 1e-6 V),
so the reports differed by the sign of a rounding, and the optimal policy told the two faults apart with one reading
no meter gives (the pump's optimum read 107.5 minutes, where an honest policy needs 110)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from diagkg.agents.optimal import outcome_key
from diagkg.env.actions import Action
from diagkg.env.service import Session
from diagkg.evaluation import optimum
from tests.support.pump import case, pump_store


def test_a_reading_rounded_to_zero_is_zero_whichever_fault_left_it(tmp_path: Path):
    store = pump_store(tmp_path, [
        case("FEED.1", 9601, [("DepletedBattery", "bat"), ("DetachedEnd", "lead.n")],
             [("ReplaceComponent", "bat"), ("ReconnectCable", "lead")]),
        case("FEED.2", 9602, [("BlownFuse", "fuse")], [("ReplaceComponent", "fuse")])])
    reports = []
    for scenario in optimum.scenarios_of(store, "feed"):
        session = Session(scenario, store, budget=4)
        session.reset(seed=0)
        out, *_ = session.step(Action("measure_voltage", ("float_sw",)))
        values = out["data"]["float_sw"]["port_voltages"]
        assert values == {"p": 0.0, "n": 0.0}
        assert all(math.copysign(1.0, v) == 1.0 for v in values.values())     # no -0.0
        assert "-0.0" not in json.dumps(out["data"], default=str)
        reports.append(outcome_key(out))
    assert reports[0] == reports[1]          # the same report: nothing a meter shows tells them apart
