"""Baseline timings of the ORIGINAL research simulator, run in its own venv.

    ORIGINAL_SIM=/work/original/sim ORIGINAL_DEMO=/work/original/demo \
        nice -n 10 /work/original/venv/bin/python benchmarks/original/measure.py > original.json

Prints one JSON object on stdout (ngspice's own notes go to stderr):

  a. "fresh_solve": per system of the original, the median time of one
     `system.simulate()` on a state that differs from the previous one (the first
     bulb's resistance changes every call; on even calls one cable end, cycling
     over the cables, is detached for that call and put back afterwards).  The
     system is built once; the state change is made outside the timed region.
  b. "scenarios": for every scenario of the demo's fault table that the original
     can run, the time of build system + system-config function + fault
     functions + one `simulate()`, per scenario (median over the passes) and
     overall (median over scenarios x passes).
  c. "process": the median wall time of `python original_simulate.py` in fresh
     processes.

Nothing of the original is copied here: the simulator is imported from its
checkout (ORIGINAL_SIM / --sim) and the fault table from the demo's checkout
(ORIGINAL_DEMO / --demo, file Implementations/fault_injections.py, loaded by path
so that the demo's package __init__ -- which pulls in the LLM agents -- is not run).

Adapters (used only where the checked-out simulator lacks the name):
  * ReverseBattery and SwapCablePolarities -- the demo's table imports them from
    `diagnosable_systems_simulation.actions.fault_actions`, which at the pinned
    simulator commit has neither.  Both are written below on the simulator's
    public Action API (the swap is made of its own DisconnectCable and
    ReconnectCable actions) and added to that module in memory.
  * `diagnosable_systems_simulation.electrical_simulation.couplings` (loose
    connections) does not exist at the pinned commit either; a placeholder
    module raises `Unsupported` when a scenario tries to use it, and such
    scenarios are reported as not runnable.
  * `environment_classes` (the demo's agent/environment module, which imports the
    demo's voice client and configuration) is replaced by plain record classes:
    the fault table only uses it to build Scenario / RootCauseDescription records.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Unsupported(RuntimeError):
    """A scenario needs something the checked-out simulator does not have."""


# ---------------------------------------------------------------------------
# Setup: import paths and adapters
# ---------------------------------------------------------------------------

def git_head(path: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def install_adapters() -> list[str]:
    """Add what the demo's fault table needs and the simulator lacks; return what was added."""
    added: list[str] = []
    from diagnosable_systems_simulation.actions import fault_actions
    from diagnosable_systems_simulation.actions.base import Action, ActionCost, ActionResult

    if not hasattr(fault_actions, "ReverseBattery"):
        class ReverseBattery(Action):
            """Adapter: flip the sign of the battery's present voltage (a fault overlay)."""

            action_id = "reverse_battery"
            description = "Reverse the polarity of a battery."
            cost = ActionCost(time=30.0)
            mutates_graph = True

            def check_preconditions(self, targets, context):
                if "subject" not in targets:
                    return False, "No 'subject' target provided."
                return True, ""

            def execute(self, targets, graph, context, last_result):
                battery = targets["subject"]
                flipped = -battery.current_parameters()["voltage"]
                if flipped == battery.nominal_parameters()["voltage"]:
                    battery.clear_fault()
                else:
                    battery.apply_fault({"voltage": flipped})
                return ActionResult(message=f"{battery.display_name!r} now at {flipped:.1f} V.")

        fault_actions.ReverseBattery = ReverseBattery
        added.append("fault_actions.ReverseBattery")

    if not hasattr(fault_actions, "SwapCablePolarities"):
        DisconnectCable = fault_actions.DisconnectCable
        ReconnectCable = fault_actions.ReconnectCable

        class SwapCablePolarities(Action):
            """Adapter: cross one port of two cables -- the simulator's own
            DisconnectCable on each, then ReconnectCable of each onto the other's
            former node.  One action, so apply_action re-solves once afterwards."""

            action_id = "swap_cable_polarities"
            description = "Swap the connections of one port between two cables."
            cost = ActionCost(time=40.0)
            mutates_graph = True

            def __init__(self, port_name: str = "p"):
                self.port_name = port_name

            def check_preconditions(self, targets, context):
                for key in ("cable_a", "cable_b"):
                    if key not in targets:
                        return False, f"No {key!r} target provided."
                    ok, why = DisconnectCable().check_preconditions(
                        {"subject": targets[key]}, context)
                    if not ok:
                        return False, why
                return True, ""

            def execute(self, targets, graph, context, last_result):
                a, b, pn = targets["cable_a"], targets["cable_b"], self.port_name
                node_a, node_b = a.port(pn).node_id, b.port(pn).node_id
                steps = [
                    (DisconnectCable(port_names=[pn]), a),
                    (DisconnectCable(port_names=[pn]), b),
                    (ReconnectCable({pn: node_b}), a),
                    (ReconnectCable({pn: node_a}), b),
                ]
                for action, cable in steps:
                    res = action.execute({"subject": cable}, graph, context, last_result)
                    if not res.success:
                        return res
                return ActionResult(message=f"Swapped port {pn!r} of {a.display_name!r} and {b.display_name!r}.")

        fault_actions.SwapCablePolarities = SwapCablePolarities
        added.append("fault_actions.SwapCablePolarities")

    name = "diagnosable_systems_simulation.electrical_simulation.couplings"
    try:
        importlib.import_module(name)
    except ImportError:
        mod = types.ModuleType(name)

        class LooseConnectionCoupling:  # noqa: D401 - placeholder
            def __init__(self, *args, **kwargs):
                raise Unsupported("loose connections (couplings module) not in this simulator")

        def _add_loose_connection(*args, **kwargs):
            raise Unsupported("loose connections (couplings module) not in this simulator")

        mod.LooseConnectionCoupling = LooseConnectionCoupling
        mod._add_loose_connection = _add_loose_connection
        sys.modules[name] = mod
        added.append("couplings (placeholder: raises Unsupported)")

    if "environment_classes" not in sys.modules:
        env = types.ModuleType("environment_classes")

        class _Record:
            def __init__(self, *args, **kwargs):
                self.args = args
                self.__dict__.update(kwargs)

        class Scenario(_Record):
            pass

        class RootCauseDescription(_Record):
            pass

        class SymptomDescription(_Record):
            pass

        class SymptomDescriptions(_Record):
            pass

        env.Scenario = Scenario
        env.RootCauseDescription = RootCauseDescription
        env.SymptomDescription = SymptomDescription
        env.SymptomDescriptions = SymptomDescriptions
        env.FaultFn = object
        sys.modules["environment_classes"] = env
        added.append("environment_classes (plain records)")
    return added


def load_fault_table(demo: str):
    path = Path(demo) / "Implementations" / "fault_injections.py"
    spec = importlib.util.spec_from_file_location("demo_fault_injections", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def system_builders() -> dict:
    """The original's systems, keyed by the demo's scenario tags (absent ones: None)."""
    candidates = {
        "3_cubes": ("three_cubes", "diagnosable_systems_simulation.systems.three_cubes.factory",
                    "build_three_cubes_system"),
        "10_cubes": ("ten_cubes", "diagnosable_systems_simulation.systems.ten_cubes.factory",
                     "build_ten_cubes_system"),
        "asymmetric_chains": ("asymmetric_chains",
                              "diagnosable_systems_simulation.systems.asymmetric_chains.factory",
                              "build_asymmetric_chains_system"),
        "ambient_light_sensor": ("ambient_light_sensor",
                                 "diagnosable_systems_simulation.systems.ambient_light_sensor.factory",
                                 "build_ambient_light_system"),
        "current_sensor": ("current_sensor",
                           "diagnosable_systems_simulation.systems.current_sensor.factory",
                           "build_current_sensor_system"),
    }
    out = {}
    for tag, (key, module, fn) in candidates.items():
        try:
            out[tag] = (key, getattr(importlib.import_module(module), fn))
        except ImportError:
            out[tag] = (key, None)
    return out


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def ms(seconds: float) -> float:
    return round(seconds * 1e3, 3)


def summary(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "median_ms": ms(statistics.median(s)),
        "p10_ms": ms(s[len(s) // 10]),
        "p90_ms": ms(s[(len(s) * 9) // 10]),
        "n": len(s),
    }


def spice_size(system) -> dict:
    """Size of the netlist the backend would hand to ngspice for the current state."""
    from PySpice.Spice.Netlist import Circuit
    graph = system.graph
    backend = system._runner.backend
    circuit = Circuit("count")
    gnd = graph.ground_node().node_id
    backend_warnings: list[str] = []
    for edge in graph.get_netlist():
        backend._add_element(circuit, edge, gnd, backend_warnings)
    return {
        "components_in_netlist": len(graph.get_netlist()),
        "circuit_nodes": len(graph.get_nodes()),
        "spice_elements": len(list(circuit.element_names)),
    }


class SolveCounter:
    """Counts backend solves (ngspice .op runs) of one system, for reporting only."""

    def __init__(self, backend_cls):
        self.cls = backend_cls
        self.orig = backend_cls.solve
        self.count = 0

    def __enter__(self):
        counter = self

        def counted(backend, graph, logger=None):
            counter.count += 1
            return counter.orig(backend, graph, logger)

        self.cls.solve = counted
        return self

    def __exit__(self, *exc):
        self.cls.solve = self.orig


# ---------------------------------------------------------------------------
# a. fresh DC solves
# ---------------------------------------------------------------------------

def measure_fresh(builder, n: int, warmup: int) -> dict:
    from diagnosable_systems_simulation.world.components import Bulb, Cable

    system = builder(extra_tools={"multimeter"})
    comps = system.all_components()
    bulb = next(c for c in sorted(comps) if isinstance(comps[c], Bulb))
    cables = [c for c in sorted(comps) if isinstance(comps[c], Cable)]
    size = spice_size(system)
    nominal = system.simulate()

    samples: list[float] = []
    by_kind: dict[str, list[float]] = {"resistance_only": [], "with_detached_cable": []}
    converged = 0
    graph = system.graph
    for i in range(warmup + n):
        system.component(bulb).apply_fault({"resistance": 100.0 + i})
        detached = None
        if i % 2 == 0:
            cable = cables[(i // 2) % len(cables)]
            if graph.nodes_of(cable).get("p") is not None:
                detached = (cable, graph.disconnect_port(cable, "p"))
        t0 = time.perf_counter()
        result = system.simulate()
        dt = time.perf_counter() - t0
        if detached:
            graph.reconnect_port(detached[0], "p", detached[1])
        if i >= warmup:
            samples.append(dt)
            by_kind["with_detached_cable" if detached else "resistance_only"].append(dt)
            converged += bool(result.converged)
    system.component(bulb).clear_fault()
    return {
        **summary(samples),
        **{f"median_ms_{k}": ms(statistics.median(v)) for k, v in by_kind.items() if v},
        **size,
        "varied_bulb": bulb,
        "cables_cycled": len(cables),
        "converged": converged,
        "nominal_lit": sorted(nominal.emitting_light),
    }


# ---------------------------------------------------------------------------
# b. build + inject + simulate per scenario
# ---------------------------------------------------------------------------

def run_scenario(builder, entry) -> tuple[float, float, float, object]:
    """Build, configure, inject, simulate once; return the three phase times and the result."""
    _sid, fault_fns, config_fn, world = entry
    t0 = time.perf_counter()
    system = builder(extra_tools=world.tools_in_hand)
    t1 = time.perf_counter()
    if config_fn is not None:
        config_fn(system)
    for fn in fault_fns:
        fn(system)
    t2 = time.perf_counter()
    result = system.simulate()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, result


def measure_scenarios(table, builders: dict, passes: int) -> dict:
    from diagnosable_systems_simulation.electrical_simulation.backend.spice import PySpiceBackend

    runnable: dict[int, tuple] = {}
    skipped: dict[str, str] = {}
    facts: dict[int, dict] = {}
    # Pass 0 (untimed): find what runs, count ngspice solves, record the outcome.
    for scenario in table.SCENARIOS:
        num = scenario.number
        entry = table.FAULT_FNS_FOR_INJECTIONS[num]
        key, builder = builders.get(scenario.system_name, (scenario.system_name, None))
        if builder is None:
            skipped[str(num)] = f"{entry[0]}: system {key!r} not in the simulator at this commit"
            continue
        if entry[1] is None:
            skipped[str(num)] = f"{entry[0]}: no fault functions in the demo table"
            continue
        try:
            with SolveCounter(PySpiceBackend) as counter:
                *_, result = run_scenario(builder, entry)
        except Unsupported as exc:
            skipped[str(num)] = f"{entry[0]}: {exc}"
            continue
        runnable[num] = (key, builder, entry)
        facts[num] = {
            "id": entry[0],
            "system": key,
            "ngspice_solves": counter.count,
            "converged": bool(result.converged),
            "lit": sorted(result.emitting_light),
        }

    times: dict[int, list[tuple[float, float, float]]] = {n: [] for n in runnable}
    for _ in range(passes):
        for num, (_key, builder, entry) in runnable.items():
            b, i, s, _ = run_scenario(builder, entry)
            times[num].append((b, i, s))

    def total(t):
        return t[0] + t[1] + t[2]

    per_scenario = {}
    for num, samples in times.items():
        per_scenario[str(num)] = {
            **facts[num],
            "median_ms": ms(statistics.median(total(t) for t in samples)),
            "build_ms": ms(statistics.median(t[0] for t in samples)),
            "inject_ms": ms(statistics.median(t[1] for t in samples)),
            "simulate_ms": ms(statistics.median(t[2] for t in samples)),
        }
    all_samples = [total(t) for s in times.values() for t in s]
    per_system = {}
    for num, (key, _b, _e) in runnable.items():
        per_system.setdefault(key, []).extend(total(t) for t in times[num])
    return {
        "passes": passes,
        "runnable": sorted(runnable),
        "overall": {
            **summary(all_samples),
            "build_median_ms": ms(statistics.median(t[0] for s in times.values() for t in s)),
            "inject_median_ms": ms(statistics.median(t[1] for s in times.values() for t in s)),
            "simulate_median_ms": ms(statistics.median(t[2] for s in times.values() for t in s)),
            "median_ms_per_ngspice_solve": ms(statistics.median(
                statistics.median(total(t) for t in s) / facts[n]["ngspice_solves"]
                for n, s in times.items())),
            "median_ngspice_solves": statistics.median(f["ngspice_solves"] for f in facts.values()),
            "median_of_scenario_medians_ms": ms(statistics.median(
                statistics.median(total(t) for t in s) for s in times.values())),
        },
        "per_system": {k: summary(v) for k, v in per_system.items()},
        "per_scenario": per_scenario,
        "skipped": skipped,
    }


# ---------------------------------------------------------------------------
# c. whole process
# ---------------------------------------------------------------------------

def measure_process(sim: str, runs: int) -> dict:
    script = HERE / "original_simulate.py"
    env = dict(os.environ, ORIGINAL_SIM=sim)
    cmd = [sys.executable, str(script)]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True)  # warm the file cache
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"original_simulate.py exited with {proc.returncode}")
    cached = (Path(sim) / "diagnosable_systems_simulation" / "__pycache__").is_dir()
    return {
        "command": f"{sys.executable} {script}",
        "original_bytecode_cached": cached,
        "median_s": round(statistics.median(samples), 4),
        "min_s": round(min(samples), 4),
        "max_s": round(max(samples), 4),
        "runs": runs,
        "stdout": first.stdout.splitlines(),
    }


# ---------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", default=os.environ.get("ORIGINAL_SIM", "/work/original/sim"))
    ap.add_argument("--demo", default=os.environ.get("ORIGINAL_DEMO", "/work/original/demo"))
    ap.add_argument("--solves", type=int, default=200, help="timed fresh solves per system")
    ap.add_argument("--warmup", type=int, default=20, help="untimed solves first")
    ap.add_argument("--passes", type=int, default=5, help="passes over the runnable scenarios")
    ap.add_argument("--process-runs", type=int, default=20)
    ap.add_argument("--only", choices=["a", "b", "c"], action="append",
                    help="run only these parts (repeatable); default all")
    args = ap.parse_args()
    parts = set(args.only or ["a", "b", "c"])

    sys.path.insert(0, args.sim)
    sys.path.insert(1, args.demo)
    import PySpice

    out: dict = {
        "original_sim": {"path": args.sim, "commit": git_head(args.sim)},
        "original_demo": {"path": args.demo, "commit": git_head(args.demo)},
        "python": platform.python_version(),
        "pyspice": PySpice.__version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "nice": os.nice(0) if hasattr(os, "nice") else None},
    }
    builders = system_builders()
    out["systems_present"] = {tag: b is not None for tag, (_key, b) in builders.items()}

    if "a" in parts:
        out["fresh_solve"] = {
            key: measure_fresh(builder, args.solves, args.warmup)
            for key, builder in builders.values() if builder is not None
        }
        out["fresh_solve_params"] = {"solves": args.solves, "warmup": args.warmup}
    if "b" in parts:
        out["adapters"] = install_adapters()
        table = load_fault_table(args.demo)
        out["scenarios"] = measure_scenarios(table, builders, args.passes)
    if "c" in parts:
        out["process"] = measure_process(args.sim, args.process_runs)

    headline: dict = {}
    for key, r in out.get("fresh_solve", {}).items():
        headline[f"fresh_solve_ms.{key}"] = r["median_ms"]
    if "scenarios" in out:
        headline["scenario_ms.overall"] = out["scenarios"]["overall"]["median_ms"]
        for key, r in out["scenarios"]["per_system"].items():
            headline[f"scenario_ms.{key}"] = r["median_ms"]
        headline["scenarios_run"] = len(out["scenarios"]["runnable"])
    if "process" in out:
        headline["process_s"] = out["process"]["median_s"]
    out = {"summary": headline, **out}
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
