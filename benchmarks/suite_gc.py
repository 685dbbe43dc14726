"""What Python's cyclic garbage collector costs the test suite's workers: with their heap settled before each test
(``tests/conftest.py`` calls ``diagkg.runs.heap.settle``, as a campaign's worker does between sessions) and as Python
leaves it (``DIAGKG_SETTLE=0``), run after run, interleaved; for each run the wall time, the collector's time summed
over the workers, the full collections and the objects a worker tracked at its end (frozen ones included), with the
load average beside it.

    .venv/bin/python benchmarks/suite_gc.py [--rounds 1] [-- PYTEST ARGS]
        # PYTEST ARGS default: tests/agents tests/env tests/sim -n 2 -q

Loaded by pytest as a plug-in (``-p suite_gc``, this folder on ``PYTHONPATH``), this module times each collection
(``gc.callbacks``) in every process of the run and writes what it counted, one JSON file per process, where
``SUITE_GC_OUT`` says.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average

HERE = Path(__file__).resolve().parent
DEFAULT_ARGS = ["tests/agents", "tests/env", "tests/sim", "-n", "2", "-q"]


class _Count:
    started = 0.0
    seconds = 0.0
    full_seconds = 0.0
    collections = 0
    full = 0


def _on_collection(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _Count.started = time.perf_counter()
        return
    took = time.perf_counter() - _Count.started
    _Count.seconds += took
    _Count.collections += 1
    if info["generation"] == 2:
        _Count.full += 1
        _Count.full_seconds += took


def _write() -> None:
    out = os.environ.get("SUITE_GC_OUT")
    if out:
        Path(f"{out}.{os.getpid()}.json").write_text(json.dumps({
            "worker": "PYTEST_XDIST_WORKER" in os.environ, "seconds": _Count.seconds, "full": _Count.full,
            "full_seconds": _Count.full_seconds, "collections": _Count.collections,
            "tracked": len(gc.get_objects()) + gc.get_freeze_count()}))


if os.environ.get("SUITE_GC_OUT") and __name__ != "__main__":      # loaded by pytest as a plug-in
    gc.callbacks.append(_on_collection)
    atexit.register(_write)


def one(mode: str, pytest_args: list[str], folder: Path) -> None:
    out = folder / mode.replace(" ", "-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}     # as scripts/test.sh runs it
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH", "")])), SUITE_GC_OUT=str(out))
    if mode != "settled":
        env["DIAGKG_SETTLE"] = "0"
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_gc", "-p", "no:cacheprovider", *pytest_args],
                       env=env, cwd=HERE.parent, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    counts = [json.loads(p.read_text()) for p in folder.glob(f"{out.name}.*.json")]
    workers = [c for c in counts if c["worker"]] or counts
    last = (r.stdout.strip().splitlines() or ["?"])[-1]
    print(f"{mode:22s} wall {wall:6.1f} s  collector {sum(c['seconds'] for c in workers):5.1f} s over "
          f"{len(workers)} worker(s), of which full {sum(c['full_seconds'] for c in workers):5.1f} s in "
          f"{sum(c['full'] for c in workers)} full collections; at the end a worker "
          f"tracked {max(c['tracked'] for c in workers):,} objects  [{last}]  ({load_average()})", flush=True)
    for p in folder.glob(f"{out.name}.*.json"):
        p.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="diagkg-suite-gc-") as folder:
        for _ in range(args.rounds):
            for mode in ("settled", "as Python sets it"):
                one(mode, args.pytest_args or DEFAULT_ARGS, Path(folder))


if __name__ == "__main__":
    main()
