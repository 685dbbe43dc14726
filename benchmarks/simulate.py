"""How long does a simulation cost?  Prints, for each shipped system, the median
time of a fresh state, of a repeated state, and of the original prototype's
approach (rebuild the netlist as PySpice objects and run .op) on the same
circuit in the same run.

    .venv/bin/python benchmarks/simulate.py [--states N]

Fresh states differ in one value (the main lamp's resistance) or in a
detached cable end, which is what most diagnostic actions change.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path

from diagkg.kg import systems
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import CircuitState
from diagkg.sim.simulator import Simulator

KEYS = ["three_cubes", "ten_cubes", "asymmetric_chains", "ambient_light_sensor", "current_sensor"]


def fresh_states(sim: Simulator, n: int) -> list[CircuitState]:
    sk = sim.skeleton
    bulb = next(c for c in sorted(sk.components) if sk.components[c].type == "Bulb")
    cables = [c for c in sorted(sk.components) if sk.components[c].type == "Cable"]
    states = []
    for i in range(n):
        if i % 2:
            states.append(CircuitState.make(overrides=[(bulb, "resistance", 100.0 + i)]))
        else:
            cable = cables[(i // 2) % len(cables)]
            states.append(CircuitState.make(detached=[(cable, "p")],
                                            overrides=[(bulb, "resistance", 100.0 + i)]))
    return states


def original_approach(sim: Simulator, state: CircuitState) -> float:
    """Rebuild the circuit as PySpice objects and solve .op, as the prototype did."""
    from PySpice.Spice.Netlist import Circuit

    plan = sim._plan(state)
    live = sim._contact_state(state, plan)
    t0 = time.perf_counter()
    circuit = Circuit("bench")
    for ep in plan.elements:
        el = ep.element
        value = ep.value(live)
        nodes = [circuit.gnd if n == "0" else n for n in (el.node_a, el.node_b)]
        if el.kind == "R":
            circuit.R(el.name[1:], *nodes, value)
        elif el.kind == "V":
            circuit.V(el.name[1:], *nodes, value)
        else:
            circuit.model(f"m_{el.name}", "D", IS=el.model[0], N=el.model[1])
            circuit.D(el.name[1:], *nodes, model=f"m_{el.name}")
    analysis = circuit.simulator(temperature=25, nominal_temperature=25).operating_point()
    _ = {str(node): float(node[0]) for node in analysis.nodes.values()}
    return time.perf_counter() - t0


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=200, help="fresh states per system (default 200)")
    args = parser.parse_args()
    logging.getLogger("PySpice").setLevel(logging.CRITICAL)

    store = KnowledgeStore.memory()
    load_files(store, [Path(str(systems.shipped_system_file(k))) for k in KEYS])
    print(f"{'system':22s} {'elements':>8s} {'fresh ms':>9s} {'repeat µs':>10s} {'original ms':>12s} {'original/fresh':>15s}")
    for key in KEYS:
        sim = Simulator.from_store(store, key)
        sim.simulate()                               # warm up: parse the nominal topology once
        states = fresh_states(sim, args.states)
        for s in states[:4]:                         # and the detached-end topologies' plans
            sim._plan(s)
        sim.clear_cache()
        sim.simulate()
        fresh = []
        for s in states:
            t0 = time.perf_counter()
            sim.simulate(s)
            fresh.append(time.perf_counter() - t0)
        repeat = []
        for s in states:
            t0 = time.perf_counter()
            sim.simulate(s)
            repeat.append(time.perf_counter() - t0)
        original = [original_approach(sim, s) for s in states[: max(20, args.states // 4)]]
        n_el = len(sim._plan(CircuitState()).elements)
        print(f"{key:22s} {n_el:8d} {median_ms(fresh):9.3f} {median_ms(repeat) * 1e3:10.2f} "
              f"{median_ms(original):12.3f} {median_ms(original) / median_ms(fresh):14.1f}x")


if __name__ == "__main__":
    main()
