"""What the simulator shows on the shipped systems, compared between two
checkouts: the nominal state of each shipped system and the state right after
each shipped scenario's faults are injected (seed 0) — converged or not, the
lamps and LEDs lit and flickering, every port voltage, and (for information)
every component's current.

    .venv/bin/python benchmarks/sim_regression.py --base /tmp/sim-base [--against .] [--tolerance 1e-3]
    .venv/bin/python benchmarks/sim_regression.py --base /tmp/sim-base --speed 3
    .venv/bin/python benchmarks/sim_regression.py --record ROOT > figures.json

Each side runs in a process of its own with ``diagkg`` and its declarative
folders (ontology/, queries/, scenarios/…) taken from that checkout (make a
baseline with ``git worktree add /tmp/sim-base HEAD``). Differences in lights
or convergence, and voltages further apart than the tolerance (volts), are
printed one per line; currents that differ by more than 1 % and 1 mA are
counted and the largest ones shown. The exit status is 1 when lights or
voltages differ.

``--speed N`` compares speed instead: N rounds, each running
``benchmarks/simulate.py --drift 0`` (fresh solves) and
``benchmarks/per_scenario.py`` (build + inject + simulate per scenario) —
this checkout's scripts — on the base and on the new checkout in turn, in
fresh processes; it prints the medians over rounds with the load average
seen beside each measurement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def use_checkout(root: Path) -> None:
    """Import ``diagkg`` and its resource packages (diagkg.data.ontology…) from the checkout ``root``."""
    import importlib.abc
    import importlib.machinery
    import importlib.util

    class Checkout(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
            if fullname == "diagkg":
                where = root / "platform" / "diagkg"
            elif fullname.startswith("diagkg.data.") and fullname.count(".") == 2:
                where = root / fullname.rsplit(".", 1)[1]
            else:
                return None
            init = where / "__init__.py"
            if init.exists():
                return importlib.util.spec_from_file_location(fullname, init,
                                                              submodule_search_locations=[str(where)])
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(where)]
            return spec

    sys.meta_path.insert(0, Checkout())


def _result(result: Any) -> dict[str, Any]:
    return {
        "converged": result.converged,
        "lit": sorted(result.lit),
        "flickering": sorted(result.flickering),
        "volts": {f"{cid}.{p}": v for cid, c in sorted(result.components.items())
                  for p, v in sorted(c.port_v.items()) if v is not None},
        "amps": {cid: c.current for cid, c in sorted(result.components.items())},
        "error": result.error,
    }


def record() -> dict[str, Any]:
    """Figures of the checkout ``diagkg`` was imported from."""
    import diagkg
    from diagkg.env.scenarios import ScenarioCatalog
    from diagkg.env.service import simulator_for
    from diagkg.kg.loading import load_shipped
    from diagkg.kg.store import KnowledgeStore

    store = KnowledgeStore.memory()
    load_shipped(store)
    from diagkg.kg import resources

    out: dict[str, Any] = {"diagkg": str(Path(diagkg.__file__).parent),
                           "ontology": str(resources.folder("ontology"))}
    for key in _keys(store):
        out[f"system {key}"] = _result(simulator_for(store, key).simulate())
    catalog = ScenarioCatalog(store)
    for n in catalog.numbers():
        session = diagkg.make(n, store)
        session.reset(seed=0)
        out[f"scenario {n:03d} {session.scenario.id}"] = _result(session.initial_result)
    return out


def _keys(store: Any) -> list[str]:
    from diagkg.env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)
    return sorted({catalog.resolve(n).key for n in catalog.numbers()})


def figures(root: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--record", str(root.resolve())],
                          capture_output=True, text=True, cwd=HERE)
    if done.returncode != 0:
        raise SystemExit(f"recording {root} failed:\n{done.stderr[-3000:]}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def compare(base: dict[str, Any], new: dict[str, Any], tolerance: float) -> tuple[list[str], list[str]]:
    """(differences in lights, convergence and voltages; differences in currents)."""
    diffs: list[str] = []
    amps: list[tuple[float, str]] = []
    for name in sorted(set(base) | set(new)):
        if name in ("diagkg", "ontology"):
            continue
        a, b = base.get(name), new.get(name)
        if a is None or b is None:
            diffs.append(f"{name}: only in {'the new checkout' if a is None else 'the base'}")
            continue
        for field in ("converged", "lit", "flickering", "error"):
            if a[field] != b[field]:
                diffs.append(f"{name}: {field} {a[field]} -> {b[field]}")
        for port in sorted(set(a["volts"]) | set(b["volts"])):
            va, vb = a["volts"].get(port), b["volts"].get(port)
            if va is None or vb is None or abs(va - vb) > tolerance:
                diffs.append(f"{name}: {port} {va} V -> {vb} V")
        for cid in sorted(set(a["amps"]) | set(b["amps"])):
            ia, ib = a["amps"].get(cid, 0.0), b["amps"].get(cid, 0.0)
            gap = abs(ia - ib)
            if gap > 1e-3 and gap > 0.01 * max(abs(ia), abs(ib)):
                amps.append((gap, f"{name}: {cid} {ia:.6g} A -> {ib:.6g} A"))
    amps.sort(reverse=True)
    return diffs, [text for _, text in amps]


SPEED_KEYS = ("three_cubes", "ten_cubes", "asymmetric_chains", "ambient_light_sensor", "current_sensor")


def run_script(root: Path, script: str, *args: str) -> dict[str, Any]:
    """Run one of this folder's benchmark scripts with ``diagkg`` from checkout ``root``; its JSON."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run", str(root.resolve()),
                           str(HERE / script), *args], capture_output=True, text=True, cwd=HERE, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{script} on {root} failed:\n{done.stderr[-3000:]}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def speed(base: Path, new: Path, rounds: int) -> None:
    import os
    import statistics

    figures: dict[str, dict[str, list[float]]] = {"base": {}, "new": {}}
    loads: dict[str, list[float]] = {"base": [], "new": []}
    for r in range(rounds):
        print(f"round {r + 1}/{rounds}…", file=sys.stderr)
        for side, root in (("base", base), ("new", new)) if r % 2 == 0 else (("new", new), ("base", base)):
            sim = run_script(root, "simulate.py", "--json", "--drift", "0")
            loads[side].append(os.getloadavg()[0])
            scen = run_script(root, "per_scenario.py", "--json")
            loads[side].append(os.getloadavg()[0])
            for key in SPEED_KEYS:
                figures[side].setdefault(f"fresh_solve_ms.{key}", []).append(sim[key]["fresh_ms"])
            figures[side].setdefault("scenario_ms.overall", []).append(scen["median_ms"])
            for key, value in scen["by_system_ms"].items():
                figures[side].setdefault(f"scenario_ms.{key}", []).append(value)
    print(f"base: {base}  new: {new}  ({rounds} rounds, medians; load averages "
          f"base {min(loads['base']):.2f}–{max(loads['base']):.2f}, new {min(loads['new']):.2f}–{max(loads['new']):.2f})")
    # this machine's speed drifts between rounds by more than 10 %: beside the ratio of the medians,
    # the median of each round's own ratio (base and new measured back to back) and the ratio of the
    # best rounds (the least disturbed), which move less with the machine
    print(f"{'path':38s} {'base':>9s} {'new':>9s} {'new/base':>9s} {'paired':>8s} {'best':>7s}")
    for key in figures["base"]:
        xs, ys = figures["base"][key], figures["new"].get(key, [float("nan")] * len(figures["base"][key]))
        a, b = statistics.median(xs), statistics.median(ys)
        paired = statistics.median(y / x for x, y in zip(xs, ys, strict=True))
        print(f"{key:38s} {a:9.3f} {b:9.3f} {b / a:8.2f}x {paired:7.2f}x {min(ys) / min(xs):6.2f}x")


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--run":            # internal: a script on a checkout
        use_checkout(Path(sys.argv[2]))
        import runpy

        sys.argv = sys.argv[3:]
        runpy.run_path(sys.argv[0], run_name="__main__")
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="the baseline checkout (e.g. a git worktree of HEAD)")
    parser.add_argument("--against", type=Path, default=HERE.parent, help="the checkout to compare (this one)")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="volts (default 1 mV)")
    parser.add_argument("--record", type=Path, help="print this checkout's figures as JSON (used internally)")
    parser.add_argument("--show", type=int, default=15, help="current differences to show (default 15)")
    parser.add_argument("--speed", type=int, metavar="ROUNDS", help="compare speed instead, over ROUNDS rounds")
    args = parser.parse_args()
    if args.record is not None:
        use_checkout(args.record.resolve())
        print(json.dumps(record()))
        return
    if args.base is None:
        parser.error("--base is required")
    if args.speed:
        speed(args.base, args.against, args.speed)
        return
    base, new = figures(args.base), figures(args.against)
    states = len([k for k in base if k not in ("diagkg", "ontology")])
    diffs, amps = compare(base, new, args.tolerance)
    print(f"base:    {base['diagkg']} ({base['ontology']})")
    print(f"against: {new['diagkg']} ({new['ontology']})")
    print(f"{states} states (systems' nominal states and scenarios' fault states, seed 0)")
    print(f"lights, convergence and voltages (±{args.tolerance * 1e3:g} mV): "
          + ("identical" if not diffs else f"{len(diffs)} difference(s)"))
    for line in diffs:
        print("  " + line)
    print(f"currents differing by more than 1 % and 1 mA: {len(amps)}")
    for line in amps[:args.show]:
        print("  " + line)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
