"""A long run of the random-circuit properties (tests/sim/test_random_circuits.py runs a few).

    .venv/bin/python benchmarks/random_circuits.py [--examples 200] [--seed 0] [--max-loops 3] [--out DIR]

hypothesis writes random systems (tests/support/circuits.py), each is validated, loaded into an
in-memory store and simulated nominally and with every switch flipped, by the fast engine and by
PySpice's (one child process for the whole run). Every solve is checked: current law, power
balance, lights as their emission rules say, nothing in an open branch carrying current, both
engines agreeing (tests/support/engines.py). Printed: how many systems and solves, what they
held, the time each stage took (load = validation + reasoning + writing; the two engines' solves
side by side, in the same examples), the largest disagreement between the engines, and the
invariants that failed. A failing case is shrunk, and its Turtle written to DIR (default: a
temporary folder) and printed.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # the generator and the checks are the tests' own

from hypothesis import given, note, seed, settings  # noqa: E402
from tests.support.circuits import KEY, GeneratedSystem, invariant_failures, load, systems  # noqa: E402
from tests.support.engines import differences  # noqa: E402

from _load import load_average  # noqa: E402
from diagkg.kg.validation import Validator  # noqa: E402
from diagkg.sim.circuit import NOMINAL  # noqa: E402
from diagkg.sim.pyspice_engine import PySpiceEngine  # noqa: E402
from diagkg.sim.simulator import Simulator  # noqa: E402


def median_ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:8.1f} ms" if xs else "       - ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-loops", type=int, default=3, help="sources (independent loops) per system, at most")
    parser.add_argument("--out", metavar="DIR", help="where a failing case's Turtle is written")
    args = parser.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="random-circuits-"))
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XDG_CACHE_HOME", str(out / "cache"))   # inferences kept apart from the user's
    work = Path(tempfile.mkdtemp(prefix="random-circuits-load-"))
    validator = Validator()
    times: dict[str, list[float]] = collections.defaultdict(list)
    kinds: collections.Counter[str] = collections.Counter()
    sizes: list[int] = []
    worst = {"current": 0.0, "volts": 0.0}
    failing: dict[str, list[str]] = {}
    last: list[str] = []          # the last failing system: hypothesis tries the shrunk one last

    with PySpiceEngine() as pyspice:
        @settings(max_examples=args.examples, deadline=None, database=None)
        @seed(args.seed)
        @given(system=systems(args.max_loops))
        def run(system: GeneratedSystem) -> None:
            t0 = time.perf_counter()
            store = load(system, work, validator)
            t1 = time.perf_counter()
            times["load"].append(t1 - t0)
            try:
                fast = Simulator.from_store(store, system.key)
                reference = Simulator(fast.skeleton, engine=pyspice)
                found = []
                for name, state, blocked in (("nominal", NOMINAL, system.blocked),
                                             ("switches flipped", system.flipped(), system.blocked_flipped)):
                    t2 = time.perf_counter()
                    a = fast.simulate(state)
                    t3 = time.perf_counter()
                    b = reference.simulate(state)
                    t4 = time.perf_counter()
                    times["fast solve"].append(t3 - t2)
                    times["PySpice solve"].append(t4 - t3)
                    found += [f"{name}: {f}" for f in invariant_failures(a, fast, blocked)]
                    found += [f"{name}, fast / PySpice engine: {d}" for d in differences(a, b)]
                    if a.error is None and b.error is None and set(a.components) == set(b.components):
                        for cid, c in a.components.items():
                            d = b.components[cid]
                            worst["current"] = max(worst["current"], abs(c.current - d.current))
                            for port, v in c.port_v.items():
                                w = d.port_v.get(port)
                                if v is not None and w is not None:
                                    worst["volts"] = max(worst["volts"], abs(v - w))
            finally:
                store.close()
            sizes.append(len(system.types))
            kinds.update(system.types.values())
            if found:
                failing[system.turtle] = found
                last[:] = [system.turtle]
                note("\n".join(found))
                note(system.turtle)
            assert not found, "\n".join(found)

        started = time.perf_counter()
        failure = None
        try:
            run()
        except AssertionError as exc:
            failure = exc
        elapsed = time.perf_counter() - started
        solves = pyspice.solves

    print(f"random circuits: {len(sizes)} systems tried (seed {args.seed}), {solves} PySpice solves, "
          f"{elapsed:.0f} s   [{load_average()}]")
    if sizes:
        print(f"  components per system: median {statistics.median(sizes):g}, max {max(sizes)}; "
              + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    for stage in ("load", "fast solve", "PySpice solve"):
        print(f"  {stage:14s} median {median_ms(times[stage])}  ({len(times[stage])})   [{load_average()}]")
    print(f"  largest difference between the engines: {worst['current']:.3g} A, {worst['volts']:.3g} V")
    if failure is None:
        print("  every invariant held")
        return 0
    print(f"  invariants failed on {len(failing)} system(s); the shrunk case:")
    print("    " + str(failure).replace("\n", "\n    "))
    shrunk = last[0]
    path = out / "failing.ttl"
    path.write_text(shrunk, encoding="utf-8")
    print(f"  its Turtle ({path}); reproduce with: diagkg load {path} && diagkg simulate {KEY}")
    print(shrunk)
    return 1


if __name__ == "__main__":
    sys.exit(main())
