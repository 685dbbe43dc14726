"""Whole-process times: how long a command takes from the shell's point of
view (interpreter start, imports, store, work, exit), median of N fresh
processes each.

    .venv/bin/python benchmarks/startup.py [--runs 20] [--store DIR]

Commands: ``diagkg --help``, ``diagkg simulate three_cubes`` and ``diagkg run
--scenario 1 --assistant oracle`` on an on-disk store that already holds the
shipped catalogue (made first in a temporary folder unless ``--store`` names
one). When the original prototype is set up (``benchmarks/original/``:
``ORIGINAL_VENV`` or /work/original/venv, ``ORIGINAL_SIM`` or
/work/original/sim), its equivalent of ``simulate three_cubes``
(``original_simulate.py``) is timed too, interleaved with diagkg's.
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

HERE = Path(__file__).resolve().parent
DIAGKG = [sys.executable, "-m", "diagkg.cli"]


def wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--store", help="an on-disk store holding the shipped catalogue")
    args = parser.parse_args()
    env = dict(os.environ)
    store = args.store or tempfile.mkdtemp(prefix="diagkg-startup-")
    env["DIAGKG_STORE"] = store
    env["DIAGKG_CHECK_TRAJECTORIES"] = "first"
    if not args.store:
        subprocess.run([*DIAGKG, "load", "--shipped"], env=env, check=True, stdout=subprocess.DEVNULL)
    commands = {
        "diagkg --help": [*DIAGKG, "--help"],
        "diagkg simulate three_cubes": [*DIAGKG, "simulate", "three_cubes"],
        "diagkg run --scenario 1 --assistant oracle": [*DIAGKG, "run", "--scenario", "1", "--assistant", "oracle"],
    }
    venv = Path(os.environ.get("ORIGINAL_VENV", "/work/original/venv"))
    sim = os.environ.get("ORIGINAL_SIM", "/work/original/sim")
    if (venv / "bin" / "python").exists() and Path(sim).is_dir():
        commands["original: simulate three cubes"] = [str(venv / "bin" / "python"), str(HERE / "original" /
                                                                                         "original_simulate.py")]
        env["ORIGINAL_SIM"] = sim
    for cmd in commands.values():        # warm the file cache once
        wall(cmd, env)
    samples: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.runs):           # interleaved: a burst of load hits every command alike
        for name, cmd in commands.items():
            samples[name].append(wall(cmd, env))
    for name, values in samples.items():
        print(f"{name:45s} median {statistics.median(values):.3f} s   "
              f"(min {min(values):.3f}, max {max(values):.3f}, {len(values)} runs)  ({load_average()})")
    if "original: simulate three cubes" in samples:
        ratio = statistics.median(samples["diagkg simulate three_cubes"]) / statistics.median(
            samples["original: simulate three cubes"])
        print(f"diagkg simulate / original: {ratio:.2f}")


if __name__ == "__main__":
    main()
