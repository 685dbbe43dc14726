"""Looking for repairs that are not: random walks over the action catalogue, and every session an action ends
as a repair (``success_no_hypothesis``) checked against what is left of its faults.

A walk steps a session with actions drawn at random from the catalogue (any action, any fitting targets;
two-target actions too; a potentiometer's value drawn as well), as no assistant of ours would. Where an
action ends the session as a repair, the faults the scenario injected that are still in the state graph
are set alone on the working system: if they keep it from working by themselves (a lamp dark, or the lamps
lit past a switch that no longer controls them), the system works only thanks to something else the walk did
(damage, a manipulation that stayed), and the end is counted as a *fake repair*, printed with the walk that
made it. Printed per system: walks, repairs, fake repairs,
with the load average.

    .venv/bin/python benchmarks/fake_repairs.py --walks 20 [--folder FOLDER] [--systems KEY …] [--generated]

``--folder``: systems and scenarios written by ``benchmarks/unwritten_systems.py --folder`` (systems nobody
wrote); ``--generated``: the shipped systems' generated single faults beside their shipped scenarios.
A scenario that declares a repair of its own (``dk:permanentRepair``: turning a box round that lets a
light reach a sensor) is a workaround by design; its ends are counted apart.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import tempfile
import time
from pathlib import Path

from diagkg.env.actions import Action
from diagkg.env.scenarios import ScenarioCatalog
from diagkg.env.service import Session
from diagkg.env.verification import switch_controls
from diagkg.generation.generate import GenerationConfig, generate
from diagkg.kg.loading import load_files, load_shipped
from diagkg.kg.store import KnowledgeStore


def targets_for(session: Session, spec, rng: random.Random) -> tuple[str, ...]:
    """Fitting targets for ``spec`` (components, their ports for a bridge, any part for ``any``)."""
    parts = session.parts()
    components = sorted(c for c in session.sk.components if c not in session.scenario.removed)
    pool = {"component": components, "any": components + sorted(parts)}.get(spec.target_kind, sorted(parts) or components)
    if spec.types:
        typed = [c for c in pool if c in session.sk.components and session.sk.components[c].type in spec.types]
        pool = typed or pool
    if spec.id == "short_ports":
        ports = [f"{c}.{p}" for c in components for p in session.sk.components[c].ports]
        return tuple(rng.sample(ports, 2))
    return tuple(rng.sample(pool, spec.target_count)) if len(pool) >= spec.target_count else ()


def walk(session: Session, rng: random.Random, steps: int) -> list[Action]:
    actions = sorted(session.catalogue.values(), key=lambda s: s.id)
    done: list[Action] = []
    for _ in range(steps):
        spec = rng.choice(actions)
        targets = targets_for(session, spec, rng)
        if not targets:
            continue
        action = Action(spec.id, targets, rng.random() if spec.parameter else None)
        done.append(action)
        *_, terminated, truncated, _ = session.step(action)
        if terminated or truncated:
            break
    return done


def faults_alone_work(session: Session) -> bool:
    """Whether what is left of the injected faults (the fault snapshot's facts still in the state graph),
    alone on the working system, lets it work: every lamp lit, and its switch still controlling them."""
    left = session.state_key() & frozenset(session.checkpoint().snapshot)
    session.set_state(left)
    state = session.state()
    return session.is_nominal(state) and switch_controls(session, state, session.simulate(state))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--walks", type=int, default=20, help="walks per scenario (seeds 0…N-1)")
    parser.add_argument("--steps", type=int, default=12, help="actions per walk at most")
    parser.add_argument("--folder", type=Path, help="systems and scenarios of benchmarks/unwritten_systems.py --folder")
    parser.add_argument("--systems", nargs="*", default=None, help="system keys (default: every one with scenarios)")
    parser.add_argument("--generated", action="store_true", help="the shipped systems' generated single faults too")
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    if args.folder:
        systems = sorted(args.folder.glob("*.ttl"))
        load_files(store, systems)
        load_files(store, [d for d in sorted(args.folder.iterdir()) if d.is_dir()])
    if args.generated:
        folder = Path(tempfile.mkdtemp(prefix="diagkg-fake-repairs-"))
        for key in args.systems or ["three_cubes", "ten_cubes", "asymmetric_chains", "ambient_light_sensor",
                                    "current_sensor"]:
            generate(store, GenerationConfig(key)).write(folder / key)
            load_files(store, [folder / key])        # loaded before the next is numbered
    catalog = ScenarioCatalog(store)
    scenarios = [catalog.resolve(n) for n in catalog.numbers()]
    if args.systems:
        scenarios = [s for s in scenarios if s.key in args.systems]
    totals: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    examples: list[str] = []
    t0 = time.perf_counter()
    for scenario in scenarios:
        tally = totals[scenario.key]
        for seed in range(args.walks):
            rng = random.Random(f"{scenario.id}/{seed}")
            with Session(scenario, store) as session:
                session.reset(seed=seed)
                done = walk(session, rng, args.steps)
                tally["walks"] += 1
                if session.end != "success_no_hypothesis":
                    continue
                tally["repairs"] += 1
                if not faults_alone_work(session):
                    kind = "by design" if scenario.permanent else "fake"
                    tally[kind] += 1
                    if kind == "fake" and len(examples) < 20:
                        examples.append(f"{scenario.id} seed {seed}: " + "; ".join(str(a) for a in done))
    for key, tally in sorted(totals.items()):
        print(f"{key:28s} {tally['walks']:6d} walks  {tally['repairs']:5d} ended as a repair  "
              f"{tally['fake']:4d} fake  {tally['by design']:4d} a declared workaround  "
              f"(load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"{sum(t['walks'] for t in totals.values())} walks in {time.perf_counter() - t0:.0f} s; "
          f"fake repairs: {sum(t['fake'] for t in totals.values())} (load {os.getloadavg()[0]:.2f})")
    for line in examples:
        print("  " + line)


if __name__ == "__main__":
    main()
