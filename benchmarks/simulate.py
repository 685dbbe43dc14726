"""How long does a simulation cost?  For each shipped system, in this process:
the median time of a *fresh* state (one the simulator has not solved before),
of a *repeated* state (answered from the simulator's cache), and whether the
fresh-solve time drifts as solves accumulate (the first and the last few
hundred of a long run).

    .venv/bin/python benchmarks/simulate.py [--states 200] [--drift 3000] [--json]

Fresh states differ from each other in one value (the main lamp's
resistance) and, every other state, in a detached cable end, which is what
most diagnostic actions change. The baseline to compare with is the original
prototype's simulator itself, run in its own processes
(``benchmarks/original/``); ``benchmarks/compare.py`` prints both side by side.
No stand-in for the original is measured here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _load import load_average, load_averages
from diagkg.kg import systems
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.sim.circuit import CircuitState
from diagkg.sim.simulator import Simulator
from diagkg.sim.spice import NgspiceEngine

KEYS = ["three_cubes", "ten_cubes", "asymmetric_chains", "ambient_light_sensor", "current_sensor"]


def fresh_states(sim: Simulator, n: int, offset: int = 0) -> list[CircuitState]:
    sk = sim.skeleton
    bulb = next(c for c in sorted(sk.components) if sk.components[c].type == "Bulb")
    cables = [c for c in sorted(sk.components) if sk.components[c].type == "Cable"]
    states = []
    for i in range(offset, offset + n):
        value = 100.0 + i * 1e-3
        if i % 2:
            states.append(CircuitState.make(overrides=[(bulb, "resistance", value)]))
        else:
            cable = cables[(i // 2) % len(cables)]
            states.append(CircuitState.make(detached=[(cable, "p")], overrides=[(bulb, "resistance", value)]))
    return states


def timed(sim: Simulator, states: list[CircuitState]) -> list[float]:
    out = []
    for s in states:
        t0 = time.perf_counter()
        sim.simulate(s)
        out.append(time.perf_counter() - t0)
    return out


def ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1e3, 4)


def measure(states: int, drift: int) -> dict[str, dict[str, float]]:
    store = KnowledgeStore.memory()
    load_files(store, [Path(str(systems.shipped_system_file(k))) for k in KEYS])
    out: dict[str, dict[str, float]] = {}
    for key in KEYS:
        sim = Simulator.from_store(store, key)
        sim.simulate()                                   # the nominal topology, parsed once
        for s in fresh_states(sim, 8, offset=10**6):     # and the detached-end topologies
            sim.simulate(s)
        fresh_set = fresh_states(sim, states)
        fresh = timed(sim, fresh_set)
        repeat = timed(sim, fresh_set)
        long_run = timed(sim, fresh_states(sim, drift, offset=states)) if drift else []
        window = max(1, min(300, drift // 10))
        out[key] = {
            "elements": len(sim._plan(CircuitState()).elements),
            "fresh_ms": ms(fresh), "repeat_us": round(ms(repeat) * 1e3, 2),
            "first_ms": ms(long_run[:window]) if long_run else 0.0,
            "last_ms": ms(long_run[-window:]) if long_run else 0.0,
        }
    out["engine"] = {"solves": NgspiceEngine.shared().solves, "parses": NgspiceEngine.shared().parses}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=200, help="fresh states per system (default 200)")
    parser.add_argument("--drift", type=int, default=3000, help="solves of the long run per system (default 3000)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    result = measure(args.states, args.drift)
    averages = load_averages()
    if args.json:
        print(json.dumps({**result, "load": averages}))
        return
    print(f"{'system':22s} {'elements':>8s} {'fresh ms':>9s} {'repeat µs':>10s} "
          f"{'first ms':>9s} {'last ms':>9s}  (first/last: medians of the first and last "
          f"solves of {args.drift})")
    for key in KEYS:
        r = result[key]
        print(f"{key:22s} {int(r['elements']):8d} {r['fresh_ms']:9.3f} {r['repeat_us']:10.2f} "
              f"{r['first_ms']:9.3f} {r['last_ms']:9.3f}")
    print(f"({load_average(averages)} as the figures above were measured)")


if __name__ == "__main__":
    main()
