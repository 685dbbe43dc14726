"""How long do validating and loading a system take?  Median of several runs
for the 3-cubes description (validation includes parsing; loading includes
validation, as `diagkg load` does), and for the whole shipped set.

    .venv/bin/python benchmarks/validate_load.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from diagkg.kg import resources
from diagkg.kg.loading import load_files
from diagkg.kg.resources import catalog_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.validation import Validator


def median_time(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    validator = Validator()
    three = next(Path(str(f)) for f in resources.system_files() if f.name == "three_cubes.ttl")
    everything = [Path(str(f)) for f in (*resources.system_files(), *catalog_files())]
    validator.validate_file(three)   # warm the shapes and ontology caches
    v = median_time(lambda: validator.validate_file(three), args.runs)
    loaded = median_time(lambda: load_files(KnowledgeStore.memory(), [three], validator=validator), args.runs)
    print(f"3-cubes system: validate {v * 1000:.0f} ms, load (validate + store) {loaded * 1000:.0f} ms "
          f"(median of {args.runs})")
    a = median_time(lambda: validator.validate_paths(everything), max(3, args.runs // 2))
    print(f"all {len(everything)} shipped files (5 systems, {len(everything) - 5} scenarios): validate {a:.2f} s")


if __name__ == "__main__":
    main()
