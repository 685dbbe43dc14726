"""A cable has the resistance it states (an outsider's car harness, written here): a cable's stamp raised any
dk:resistance below 0.01 ohm to 0.01 ohm, where a resistor, lamp or fuse goes down to 1 mOhm, so a 1 mOhm battery
lead was solved as ten times that and a short through it drew 206 A where 12.6 V over 0.0522 ohm drives 241 A."""

from __future__ import annotations

import random

import pytest

from diagkg.sim.circuit import NOMINAL

from ..support.stores import simulator_of
from .test_contact_power import SYSTEM


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    # two cables of dk:resistance 0.001, each end on a 0.1 mOhm contact
    return simulator_of(tmp_path_factory.mktemp("harness") / "harness.ttl", SYSTEM, "harness")


def test_a_one_milliohm_lead_is_one_milliohm(sim):
    assert " 0.001 ; lead" in sim.netlist(NOMINAL)


def test_a_short_through_the_lead_draws_what_ohms_law_says(sim):
    state = NOMINAL.evolve(shorts=((("bat", "pos"), ("lead", "n"), 0.001),))
    lead = sim.simulate(state, random.Random(0)).components["lead"]
    # the battery's 0.05 ohm, the short's 0.001, the lead's 0.001 and its two 0.1 mOhm ends (the lamp's 28.8 ohm
    # beside the short takes 0.01 %)
    assert abs(abs(lead.current) - 12.6 / (0.05 + 0.001 + 0.001 + 2e-4)) < 0.5
