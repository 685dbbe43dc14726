"""A voltage the meter could not read (an end nothing holds: "n floating") was left out of the trajectory, so a
query could not tell it from an end never measured. It is stored as an observation without a result, marked
``dk:floating true``. On the torch, written in the tests: its bulb lead's end off (TORCH.2)."""

from __future__ import annotations

from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Action
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store

FLOATING = """
PREFIX dk: <https://w3id.org/diagkg/ontology#>
PREFIX sosa: <http://www.w3.org/ns/sosa/>
SELECT ?feature ?floating ?value WHERE {
  GRAPH ?g {
    ?o a sosa:Observation ; sosa:observedProperty dk:ElectricPotential ; sosa:hasFeatureOfInterest ?feature .
    OPTIONAL { ?o dk:floating ?floating }
    OPTIONAL { ?o sosa:hasResult/<http://qudt.org/schema/qudt/numericValue> ?value }
  }
}"""


class LeadMeter(BaseAssistant):
    name = "lead-meter"
    api_version = 3

    def suggest(self):
        return None if self.outcomes else Action("measure_voltage", ("lead",))


def test_a_floating_end_is_an_observation_of_its_own(tmp_path):
    store = torch_memory_store(tmp_path)
    result = run_session("TORCH.2", LeadMeter(), store=store, seed=0)
    told = result.record.rounds[0]["data"]["lead"]["port_voltages"]
    assert None in told.values(), told                  # the end that is off reads nothing
    rows = {str(r["feature"]).rsplit("/", 1)[-1]: (r["floating"], r["value"]) for r in store.select(FLOATING)}
    for port, volts in told.items():
        floating, value = rows[f"lead.{port}"]
        assert (floating is True and value is None) if volts is None else (floating is None and value == volts), rows
