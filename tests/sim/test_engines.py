"""PySpice's engine against the fast one (issue 24, item 2).

The reference engine (diagkg.sim.pyspice_engine) builds each circuit through PySpice's own
API and solves it in a child process; the fast engine feeds ngspice's library diagkg's own
netlist. Both must give the same lights, port voltages within 1 mV and currents within 0.5 %
(or 10 nA: see tests/support/engines.py) on every shipped system, on the state right after
every shipped scenario's faults are injected, on a system written here, and through
``diagkg simulate --engine pyspice``. The random circuits of test_random_circuits.py are
compared there.
"""

from __future__ import annotations

import json
import random
import sys

import pytest

from diagkg.env.service import make
from diagkg.errors import SimulationError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import CircuitState
from diagkg.sim.pyspice_engine import PySpiceEngine
from diagkg.sim.simulator import Simulator

from ..support.cli import run_cli
from ..support.engines import differences
from ..support.paths import ROOT
from ..support.stores import shipped_store
from ..support.torch import FLAT, scenario_text

# a 12 V battery feeds two tail bulbs, a green indicator and a white 3.0 V plate LED through a
# fuse, a switch, a protection diode and a harness
REAR = """\
@prefix :        <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:rear a dk:System ; dk:systemKey "rear" ; dcterms:identifier "rear" ; rdfs:label "Car rear lights" ;
    dk:groundReference :bat.neg ;
    dcterms:description "A 12 V battery feeds two tail bulbs, a green indicator and a white plate LED." .
:body a dk:Module ; dcterms:identifier "body" ; rdfs:label "Body" ; dk:partOf :rear .
:boot a dk:Module ; dcterms:identifier "boot" ; rdfs:label "Boot lid" ; dk:partOf :rear .
"""
PARTS = [  # id, type, module, properties, port names
    ("bat", "VoltageSource", "body", "dk:voltage 12", ("pos", "neg")),
    ("fuse", "Fuse", "body", "dk:ratedCurrent 5", ("p", "n")),
    ("sw", "Switch", "body", "dk:normallyClosed true", ("p", "n")),
    ("dio", "Diode", "body", "dk:forwardVoltage 0.7", ("anode", "cathode")),
    ("harness", "Cable", "body", "dk:resistance 0.2", ("p", "n")),
    ("tail_l", "Bulb", "boot", "dk:resistance 29 ; dk:powerThreshold 1", ("p", "n")),
    ("tail_r", "Bulb", "boot", "dk:resistance 29 ; dk:powerThreshold 1", ("p", "n")),
    ("r_green", "Resistor", "body", "dk:resistance 1000", ("p", "n")),
    ("green", "LED", "body", 'dk:forwardVoltage 2.0 ; dk:color "green"', ("anode", "cathode")),
    ("r_plate", "Resistor", "boot", "dk:resistance 470", ("p", "n")),
    ("plate", "LED", "boot", 'dk:forwardVoltage 3.0 ; dk:color "white"', ("anode", "cathode")),
]
WIRING = """
:bat.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :dio.anode .
:dio.cathode dk:connectedTo :harness.p .
:harness.n dk:connectedTo :tail_l.p, :tail_r.p, :r_green.p, :r_plate.p .
:r_green.n dk:connectedTo :green.anode .
:r_plate.n dk:connectedTo :plate.anode .
:bat.neg dk:connectedTo :tail_l.n, :tail_r.n, :green.cathode, :plate.cathode .
"""


def rear_turtle() -> str:
    lines = [REAR]
    for cid, type_, module, props, ports in PARTS:
        lines.append(f':{cid} a dk:{type_} ; dcterms:identifier "{cid}" ; rdfs:label "{cid}" ; dk:partOf :{module} ; '
                     f"{props} ;\n    dk:affords dk:Observable, dk:Measurable, dk:Replaceable, dk:Detachable ; "
                     f"dk:hasPort {', '.join(f':{cid}.{p}' for p in ports)} .")
        lines.append(" ".join(f':{cid}.{p} a dk:Port ; dk:portName "{p}" .' for p in ports))
    return "\n".join(lines) + WIRING


@pytest.fixture(scope="module")
def pyspice():
    with PySpiceEngine() as engine:
        yield engine


@pytest.fixture(scope="module")
def catalogue() -> KnowledgeStore:
    """The shipped systems and scenarios (loaded once for the whole test session)."""
    return shipped_store()


@pytest.fixture(scope="module")
def rear(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rear")
    (folder / "rear.ttl").write_text(rear_turtle(), encoding="utf-8")
    store = KnowledgeStore.memory()
    load_files(store, [folder / "rear.ttl"])
    yield store, folder
    store.close()


def test_shipped_systems_agree(catalogue, pyspice):
    store = catalogue
    keys = sorted(r["key"] for r in store.select("system-summary"))
    assert len(keys) >= 5
    for key in keys:
        fast = Simulator.from_store(store, key)
        result = fast.simulate()
        assert result.converged and result.lit, key
        assert differences(result, Simulator(fast.skeleton, engine=pyspice).simulate()) == [], key


def test_every_shipped_scenarios_fault_state_agrees(catalogue, pyspice):
    """The state right after each scenario's faults are injected (seed 0), as a session has it."""
    store = catalogue
    rows = store.select("scenario-index")
    assert len(rows) > 100
    references: dict[str, Simulator] = {}
    disagree = {}
    for row in rows:
        with make(int(row["number"]), store) as session:      # closed: its working memory goes back for the next
            session.reset(seed=0)
            reference = references.setdefault(session.sk.key, Simulator(session.sk, engine=pyspice))
            found = differences(session.initial_result, reference.simulate(session.state(), random.Random(0)))
        if found:
            disagree[row["id"]] = found
    assert disagree == {}


def test_a_system_written_here_agrees_in_many_states(rear, pyspice):
    store, _ = rear
    fast = Simulator.from_store(store, "rear")
    reference = Simulator(fast.skeleton, engine=pyspice)
    states = [CircuitState(),
              CircuitState.make(positions=[("sw", False)]),
              CircuitState.make(overrides=[("bat", "voltage", -12.0)]),
              CircuitState.make(overrides=[("bat", "voltage", 5.0)]),
              CircuitState.make(overrides=[("dio", "resistance", 0.5)], detached=[("harness", "n")]),
              CircuitState.make(overrides=[("plate", "forwardVoltage", 3.6)]),
              CircuitState.make(probe=(("r_plate", "p"), ("r_plate", "n")), removed=["bat"])]
    for state in states:
        result = fast.simulate(state)
        assert differences(result, reference.simulate(state)) == [], state
    nominal = reference.simulate()
    assert {"tail_l", "tail_r", "green", "plate"} <= set(nominal.lit), "PySpice's engine lights the 3.0 V white LED"
    assert pyspice.solves >= len(states)


def _json(stdout: str) -> dict:
    return json.loads(stdout[stdout.index("{"):])


def test_cli_engine_option(rear, tmp_path):
    _, folder = rear
    db = str(tmp_path / "store")
    flat = {**FLAT, "system": "rear", "ns": "<https://example.org/rear/>"}   # the same battery fault, on the rear lights
    (folder / "flat.ttl").write_text(scenario_text(**flat), encoding="utf-8")
    loaded = run_cli("--store", db, "load", str(folder / "rear.ttl"), str(folder / "flat.ttl"))
    assert loaded.returncode == 0, loaded.stderr
    outputs = {}
    for engine in ("ngspice", "pyspice"):
        done = run_cli("--store", db, "simulate", "rear", "--engine", engine, "--format", "json")
        assert done.returncode == 0, done.stderr
        outputs[engine] = _json(done.stdout)
    fast, reference = outputs["ngspice"], outputs["pyspice"]
    assert fast["lit"] == reference["lit"] and "plate" in fast["lit"]
    for cid, comp in fast["components"].items():
        other = reference["components"][cid]
        assert abs(comp["current"] - other["current"]) <= max(1e-8, 5e-3 * abs(comp["current"])), cid
        for port, volts in comp["port_v"].items():
            assert abs(volts - other["port_v"][port]) <= 1e-3, (cid, port)
    scenario = run_cli("--store", db, "simulate", "--scenario", FLAT["id"], "--engine", "pyspice", "--format", "json")
    assert scenario.returncode == 0, scenario.stderr
    data = _json(scenario.stdout)
    assert data["lit"] == [] and data["nominal_lit"] == fast["lit"] and data["nominal"] is False
    assert run_cli("simulate", "rear", "--engine", "spice").returncode == 2


def test_a_missing_pyspice_is_said_clearly(monkeypatch):
    """The child runs without site-packages (``python -S``): no PySpice there."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "platform"))
    engine = PySpiceEngine(command=[sys.executable, "-S", "-m", "diagkg.sim.pyspice_engine"])
    with pytest.raises(SimulationError, match="PySpice is not installed"):
        engine.start()
    engine.close()
