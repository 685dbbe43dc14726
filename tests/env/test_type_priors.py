"""The fault catalogue's priors on types (``dk:TypePrior``, ontology/faults.ttl): a mode's weight on one
type of part where it differs from the mode's own (a cable broken inside is rarer than a bulb burned
out), read once with the catalogue and used alike by every consumer: the model-based assistant's
candidates, generation's placements (and the draws and weighted resolution built on them) and the
neuro-symbolic assistant's problems (tests/agents/test_neurosymbolic_chain.py), on the beacon, a
system written in the tests."""

from __future__ import annotations

import pytest

from diagkg.agents.modelbased import ModelBasedAssistant
from diagkg.env.worlds import fault_modes
from diagkg.generation.catalogue import single_placements
from diagkg.kg.vocab import DK
from diagkg.runs.runner import run_session
from diagkg.sim.circuit import load_skeleton

from ..support.chains import beacon_store


@pytest.fixture(scope="module")
def beacon(tmp_path_factory):
    return beacon_store(tmp_path_factory.mktemp("beacon"))


def test_the_catalogue_gives_a_mode_its_weight_on_a_type(beacon):
    modes = fault_modes(beacon)
    opened, drifted = modes[DK.OpenComponent], modes[DK.DegradedResistance]
    assert (opened.prior, opened.prior_on("Cable"), opened.prior_on("LED")) == (1.0, 0.05, 1.0)
    assert (drifted.prior, drifted.prior_on("Cable"), drifted.prior_on("Resistor")) == (0.5, 0.025, 0.5)
    assert modes[DK.DetachedEnd].type_priors == () and modes[DK.DetachedEnd].prior_on("Cable") == 1.0
    assert opened.prior_on(None) == opened.prior


def test_model_based_candidates_and_generated_placements_weigh_alike(beacon):
    assistant = ModelBasedAssistant()
    run_session("BEACON.1", assistant, store=beacon, seed=0, budget=1, record=False)
    singles = {(c.faults[0].mode, c.faults[0].target.rsplit("/", 1)[-1]): c.prior for c in assistant.space.singles}
    placements, _ = single_placements(beacon, load_skeleton(beacon, "beacon"))
    placed = {(p.faults[0].mode, p.faults[0].target.rsplit("/", 1)[-1]): p.prior for p in placements}
    for weights in (singles, placed):
        assert weights[("OpenComponent", "link2")] == 0.05 and weights[("OpenComponent", "led2")] == 1.0
        # a drifted resistance has no size of its own (no default value): neither enumerates it
        assert not any(mode == "DegradedResistance" for mode, _ in weights)
        assert weights[("DetachedEnd", "link2.n")] == 1.0
