"""A battery with its inside (``dk:internalResistance``): its terminal voltage falls with the current it
gives, and a spanner across it draws its voltage over that resistance and puts every lamp out. A
battery was always ideal: a short across the car's 12 V battery drew 1,200 A through 0.01 ohm and
every lamp stayed lit (the outsider drew the inside as a resistor of their own). Written here, not
shipped: the car rear lights of tests/support/rear.py with a 0.05 ohm battery. Kirchhoff's current
law at the battery and the power balance hold, and PySpice's engine gives the same."""

from __future__ import annotations

from pathlib import Path

import pytest

import diagkg
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import NOMINAL
from diagkg.sim.pyspice_engine import PySpiceEngine
from diagkg.sim.simulator import Simulator

from ..support.rear import rear_text

INSIDE = 0.05
SPANNER = 0.01
BATTERY_SHORTED = """\
@prefix :        <https://example.org/rear-scenarios/> .
@prefix sys:     <https://example.org/rear/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:REAR.9 a dk:Scenario ; dk:scenarioNumber 9309 ; dcterms:identifier "REAR.9" ; rdfs:label "A spanner across the battery" ;
    dk:onSystem sys:rear ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:ShortBetweenNodes ; dk:faultTarget sys:bat.pos ; dk:otherTarget sys:bat.neg ;
        dk:faultValue {spanner} ] ;
    dk:initialObservations "Every rear light is dark." ;
    dk:statedSymptom [ dk:about sys:tail_l ; dk:appearance dk:Dark ] ;
    dk:faultyComponent sys:bat ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReplaceComponent ; dk:target sys:bat ] ] ;
    dk:actionBudget 10 .
""".replace("{spanner}", str(SPANNER))


def with_inside(inside: str) -> str:
    return rear_text().replace("dk:voltage 12 ;", f"dk:voltage 12 ; dk:internalResistance {inside} ;")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> KnowledgeStore:
    folder = tmp_path_factory.mktemp("inside")
    (folder / "rear.ttl").write_text(with_inside(str(INSIDE)))
    (folder / "short.ttl").write_text(BATTERY_SHORTED)
    s = KnowledgeStore.memory()
    load_files(s, [folder / "rear.ttl", folder / "short.ttl"])
    return s


def balance(result) -> tuple[float, float]:
    """What the battery gives at its terminals, and what every other part and the shorts take."""
    taken = sum(c.power for cid, c in result.components.items() if cid != "bat") + sum(s.power for s in result.shorts)
    return result.components["bat"].power, taken


def test_the_terminal_voltage_falls_with_the_current_and_the_power_balances(store):
    sim = Simulator.from_store(store, "rear")
    nominal = sim.simulate(NOMINAL)
    bat = nominal.components["bat"]
    drawn = abs(bat.current)
    assert 0.7 < drawn < 0.9 and set(nominal.lit) == {"tail_l", "tail_r", "green", "plate"}
    assert bat.port_v["pos"] - bat.port_v["neg"] == pytest.approx(12 - INSIDE * drawn, abs=1e-6)
    # the current law at the battery: what leaves its positive port comes back at its negative one
    assert bat.port_i["pos"] == pytest.approx(-bat.port_i["neg"], abs=1e-9)
    gives, taken = balance(nominal)
    assert gives == pytest.approx(taken, rel=1e-4)
    with PySpiceEngine() as engine:
        reference = Simulator(sim.skeleton, engine=engine).simulate(NOMINAL)
    assert reference.components["bat"].port_v["pos"] == pytest.approx(bat.port_v["pos"], abs=1e-6)


def test_a_spanner_across_the_battery_draws_its_voltage_over_the_inside_and_puts_the_lamps_out(store):
    s = diagkg.make("REAR.9", store)
    s.reset(seed=0)
    result = s.initial_result
    (short,) = result.shorts
    assert abs(short.current) == pytest.approx(12 / (INSIDE + SPANNER), rel=0.01)      # 200 A, not 1,200
    bat = result.components["bat"]
    assert bat.port_v["pos"] - bat.port_v["neg"] == pytest.approx(12 * SPANNER / (INSIDE + SPANNER), rel=0.01)
    assert not set(result.lit) & {"tail_l", "tail_r", "green", "plate"}
    gives, taken = balance(result)
    assert gives == pytest.approx(taken, rel=1e-4)
    s.close()


@pytest.mark.parametrize("inside", ["0", "-0.1"])
def test_an_inside_that_is_not_a_positive_resistance_is_refused_at_its_line(validator, tmp_path: Path, inside: str):
    path = tmp_path / "rear.ttl"
    path.write_text(with_inside(inside))
    report = validator.validate_file(path)
    said = [v for v in report.violations if v.path.endswith("internalResistance")]
    line = next(n for n, text in enumerate(with_inside(inside).splitlines(), 1) if "internalResistance" in text)
    assert said and said[0].line == line, report.violations


def test_two_batteries_across_each_other_share_the_current_their_insides_set(tmp_path: Path):
    """Two batteries wired straight across each other cannot be solved ideal (tests/sim/test_unsolvable.py); each
    behind its inside, the fresher one charges the other through both: (12.6 - 12.4) / (0.1 + 0.1) = 1 A, and
    the current law holds at their shared node."""
    from .test_unsolvable import TWIN

    path = tmp_path / "twin.ttl"
    path.write_text(TWIN.replace("dk:voltage 12.6 ;", "dk:voltage 12.6 ; dk:internalResistance 0.1 ;")
                    .replace("dk:voltage 12.4 ;", "dk:voltage 12.4 ; dk:internalResistance 0.1 ;"))
    store = KnowledgeStore.memory()
    load_files(store, [path])
    result = Simulator.from_store(store, "twin").simulate(NOMINAL)
    assert result.error is None and result.converged and "lamp" in result.lit
    a, b, f1 = (result.components[c] for c in ("a", "b", "f1"))
    lamp = f1.current                                   # through the fuses to the lamp
    assert a.port_i["pos"] + b.port_i["pos"] + f1.port_i["p"] == pytest.approx(0, abs=1e-9)    # the shared node
    assert abs(b.port_i["pos"]) == pytest.approx((0.2 - 0.1 * lamp) / 0.2, rel=1e-3)          # the older one charged
