"""Shorts screened on one circuit (:meth:`Simulator.screen_shorts`): the model-based assistant screens
every pair of nodes with a short when no single fault explains what was seen. Each short used to be a
circuit of its own for ngspice to parse; now every node is tied to a hub through an open resistor and
a short is two values changed. The lights, what flickers and what is damaged must come out as with the
short's own circuit, on the torch written in tests/support/torch.py and on random systems of the
property tests' generator (tests/support/circuits.py): circuits nobody designed the screen for.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from diagkg.sim.circuit import NOMINAL, CircuitState
from diagkg.sim.simulator import Simulator

from ..support.circuits import GeneratedSystem, load, systems
from ..support.torch import torch_memory_store


def every_short(sim: Simulator, ohms: float = 0.01) -> list[tuple[tuple[str, str], tuple[str, str], float]]:
    """A short between one port of each of every two nodes."""
    first: dict[int, tuple[str, str]] = {}
    for port, net in sorted(sim.skeleton.net_of_port.items()):
        first.setdefault(net, port)
    return [(first[x], first[y], ohms) for x, y in itertools.combinations(sorted(first), 2)]


def seen(result) -> tuple | None:
    return None if result is None else (result.lit, result.flickering,
                                        sorted((d.component, d.state) for d in result.damage))


def differences(sim: Simulator, state: CircuitState) -> tuple[list[str], int]:
    """Where the screen and each short's own circuit disagree, and how many shorts were compared."""
    shorts = every_short(sim)
    parses = sim.engine.parses
    screened = sim.screen_shorts(state, shorts)
    parsed = sim.engine.parses - parses
    out = []
    for short, result in zip(shorts, screened, strict=True):
        own = sim.simulate(state.evolve(shorts=state.shorts + (short,)))
        if seen(result) != seen(own):
            out.append(f"{short}: screened {seen(result)}, own circuit {seen(own)}")
    # one circuit for the screen (and one per damaged variant of the state), not one per short
    assert parsed <= 1 + sum(1 for r in screened if r is not None and r.damage), parsed
    return out, len(shorts)


def test_the_screen_shows_what_each_short_shows_on_the_torch(tmp_path):
    store = torch_memory_store(tmp_path)
    sim = Simulator.from_store(store, "torch")
    states = [NOMINAL, NOMINAL.evolve(detached={("lead", "n")}), NOMINAL.evolve(overrides={("bulb", "resistance", 1e6)})]
    for state in states:
        wrong, compared = differences(sim, state)
        assert compared >= 6 and not wrong, wrong
    # a short across the bulb darkens it (the screen is not blind)
    net = sim.skeleton.net_of_port
    across = next(s for s in every_short(sim) if {net[s[0]], net[s[1]]} == {net["bulb", "p"], net["bulb", "n"]})
    (result,) = sim.screen_shorts(NOMINAL, [across])
    assert result is not None and "bulb" not in result.lit and "bulb" in sim.simulate(NOMINAL).lit


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("short-screen")


@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(system=systems(max_loops=2))
def test_the_screen_shows_what_each_short_shows_on_random_systems(system: GeneratedSystem, folder, validator):
    store = load(system, folder, validator)
    try:
        sim = Simulator.from_store(store, system.key)
        for state in (NOMINAL, system.flipped()):
            wrong, compared = differences(sim, state)
            assert compared and not wrong, "\n".join(wrong) + "\n" + system.turtle
    finally:
        store.close()
