"""diagkg against the original prototype, each in its own processes, on the
paths the performance issue names: a fresh DC solve, build + inject faults +
simulate per scenario, and a whole ``simulate three_cubes`` process.

    .venv/bin/python benchmarks/compare.py [--rounds 3]

The original is its newest simulator commit, unmodified, in a venv of its own
(set up by ``benchmarks/original/setup.sh``; ``ORIGINAL_VENV``,
``ORIGINAL_SIM`` and ``ORIGINAL_DEMO`` say where). Each round runs both
sides' measurements in fresh processes, one after the other; the table shows
the median over rounds. Without the original, the table shows the figures the
issue measured (``ANCHORS``) instead, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _load import load_average

HERE = Path(__file__).resolve().parent
# measured by the author against the original's newest commit (same kind of machine)
ANCHORS = {"fresh_solve_ms.three_cubes": 1.84, "fresh_solve_ms.ten_cubes": 5.48,
           "fresh_solve_ms.ambient_light_sensor": 2.32, "scenario_ms.overall": 6.78, "process_s": 0.19}


def run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    result: dict = json.loads(out)
    return result


def startup_median(cmd: list[str], env: dict[str, str], runs: int) -> float:
    import time

    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--process-runs", type=int, default=10)
    args = parser.parse_args()
    venv = Path(os.environ.get("ORIGINAL_VENV", "/work/original/venv")) / "bin" / "python"
    sim = os.environ.get("ORIGINAL_SIM", "/work/original/sim")
    demo = os.environ.get("ORIGINAL_DEMO", "/work/original/demo")
    have_original = venv.exists() and Path(sim).is_dir() and Path(demo).is_dir()
    env = dict(os.environ, ORIGINAL_SIM=sim, ORIGINAL_DEMO=demo)
    import tempfile

    store = tempfile.mkdtemp(prefix="diagkg-compare-")
    denv = dict(os.environ, DIAGKG_STORE=store)
    subprocess.run([sys.executable, "-m", "diagkg.cli", "load", "--shipped"], env=denv, check=True,
                   stdout=subprocess.DEVNULL)
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    loads: list[str] = []
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}…", file=sys.stderr)
        sim_result = run_json([sys.executable, str(HERE / "simulate.py"), "--json", "--drift", "0"])
        scen = run_json([sys.executable, str(HERE / "per_scenario.py"), "--json"])
        for key in ("three_cubes", "ten_cubes", "ambient_light_sensor"):
            ours.setdefault(f"fresh_solve_ms.{key}", []).append(sim_result[key]["fresh_ms"])
        ours.setdefault("scenario_ms.overall", []).append(scen["median_ms"])
        ours.setdefault("process_s", []).append(startup_median(
            [sys.executable, "-m", "diagkg.cli", "simulate", "three_cubes"], denv, args.process_runs))
        if have_original:
            orig = run_json([str(venv), str(HERE / "original" / "measure.py"), "--process-runs",
                             str(args.process_runs)], env)["summary"]
            for key in ANCHORS:
                theirs.setdefault(key, []).append(orig[key])
        loads.append(f"round {r + 1}: {load_average()}")
    print(f"{'path':38s} {'original':>10s} {'diagkg':>10s} {'original/diagkg':>16s}")
    for key, anchor in ANCHORS.items():
        base = statistics.median(theirs[key]) if have_original else anchor
        mine = statistics.median(ours[key])
        print(f"{key:38s} {base:10.3f} {mine:10.3f} {base / mine:15.2f}x")
    print(f"({'; '.join(loads)}, as each round ended)")
    print("original: " + ("measured now, in its own processes" if have_original else
                          "the issue's figures (set up benchmarks/original/ to measure it here)"))


if __name__ == "__main__":
    main()
