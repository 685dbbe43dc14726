"""How long do the store-first paths take, as a user runs them (whole processes)?

Prints, on fresh on-disk stores in a temporary folder:

* ``diagkg load --shipped`` into an empty store (5 systems, 135 scenarios,
  inferences for the five systems), with an empty and with a warm inference cache;
* ``diagkg load scenarios/systems scenarios/catalog`` (the same files, validated);
* ``diagkg run --scenario 3CC.S.3 --assistant neuro-symbolic`` (median of N);
* two such runs started together on one store (wall time for both).

    .venv/bin/python benchmarks/store.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average

ROOT = Path(__file__).resolve().parents[1]
DIAGKG = [sys.executable, "-m", "diagkg.cli"]


def timed(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([*DIAGKG, *args], check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = dict(os.environ, XDG_CACHE_HOME=str(base / "cache"))
        cold = timed(["--store", str(base / "cold"), "load", "--shipped"], env)
        warm = timed(["--store", str(base / "warm"), "load", "--shipped"], env)
        print(f"load --shipped into an empty store: {cold:.2f} s (reasoning over 5 systems), "
              f"{warm:.2f} s (inferences from the cache)  ({load_average()})")
        validated = timed(["--store", str(base / "validated"), "load", str(ROOT / "scenarios" / "systems"),
                           str(ROOT / "scenarios" / "catalog")], env)
        print(f"load scenarios/systems scenarios/catalog (validated): {validated:.2f} s  ({load_average()})")
        store = str(base / "warm")
        run = ["--store", store, "run", "--scenario", "3CC.S.3", "--assistant", "neuro-symbolic", "--format", "json"]
        samples = [timed(run, env) for _ in range(args.runs)]
        print(f"run 3CC.S.3 neuro-symbolic, whole process: median {statistics.median(samples):.2f} s "
              f"(of {args.runs})  ({load_average()})")
        t0 = time.perf_counter()
        procs = [subprocess.Popen([*DIAGKG, *run], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
                 for _ in range(2)]
        codes = [p.wait() for p in procs]
        print(f"two runs started together on one store: {time.perf_counter() - t0:.2f} s, exit codes {codes}  "
              f"({load_average()})")


if __name__ == "__main__":
    main()
