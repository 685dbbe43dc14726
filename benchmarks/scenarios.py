"""How long do all 135 ideal repairs take, end to end?  For every shipped
scenario: reset (saboteur), execute the ideal repair action by action through
the service agent (automatic access, effects, simulation, reset to the fault
snapshot, end check), then verify the correct hypothesis on a fresh session.

    .venv/bin/python benchmarks/scenarios.py
"""

from __future__ import annotations

import time

import diagkg
from _load import load_average
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore


def main() -> None:
    t0 = time.perf_counter()
    store = KnowledgeStore.memory()
    load_shipped(store)
    catalog = ScenarioCatalog(store)
    t1 = time.perf_counter()
    loaded = load_average()
    restored = correct = steps = 0
    per_system: dict[str, float] = {}
    for number in catalog.numbers():
        scenario = catalog.resolve(number)
        start = time.perf_counter()
        session = diagkg.make(scenario, store)
        session.reset(seed=0)
        for step in scenario.repair:
            steps += 1
            *_, terminated, _, _ = session.step(diagkg.Action(step.action, step.targets, step.value))
            if terminated:
                break
        restored += session.end == "success_no_hypothesis"
        session.reset(seed=0)
        obs, *_ = session.step(diagkg.Hypothesis(scenario.faulty))
        correct += obs["verdict"] == "correct"
        per_system[scenario.key] = per_system.get(scenario.key, 0.0) + time.perf_counter() - start
    t2 = time.perf_counter()
    print(f"loaded {len(catalog)} scenarios in {t1 - t0:.2f} s  ({loaded})")
    print(f"ideal repairs restored {restored}/{len(catalog)}, correct hypotheses {correct}/{len(catalog)}, "
          f"{steps} repair actions, in {t2 - t1:.2f} s ({(t2 - t1) / len(catalog) * 1000:.1f} ms per scenario)  "
          f"({load_average()})")
    for key, seconds in per_system.items():
        print(f"  {key:22s} {seconds:.2f} s")


if __name__ == "__main__":
    main()
