"""How long do validating and loading take, beside rdflib merely parsing the same files?

Each round, in fresh processes, interleaved (the load average beside each figure):

* ``rdflib parse``: rdflib parses the 140 shipped files (5 systems, 135 scenarios), the
  time of the parse alone (imports excluded): the yardstick of issue 31;
* ``diagkg validate scenarios/``: the whole command (``--memory``: no store, no cache);
* ``validate, in process``: the same validation timed inside the process (imports excluded);
* ``load --shipped``: into an empty on-disk store, inferences from a warm cache;
  with ``--cold``, also with an empty inference cache (HermiT over the five systems).

With ``--before REV`` (a git revision, e.g. ``HEAD~3``) every diagkg figure is also
measured for that revision (its ``platform/`` extracted with ``git archive``, put first on
``PYTHONPATH``; the declarative folders are this checkout's), side by side.

    .venv/bin/python benchmarks/validate_load.py [--rounds 3] [--before REV] [--cold]
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

from revisions import checkout

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

PARSE = """
import sys, time
from pathlib import Path
import rdflib
files = sorted(Path(sys.argv[1]).rglob('*.ttl'))
t = time.perf_counter()
for f in files:
    rdflib.Graph().parse(f, format='turtle')
print(time.perf_counter() - t)
"""
VALIDATE = """
import sys, time
from diagkg.kg.validation import Validator
t = time.perf_counter()
reports = Validator().validate_paths([sys.argv[1]])
assert len(reports) == 140 and all(r.conforms for r in reports), 'the shipped files should conform'
print(time.perf_counter() - t)
"""


def load() -> float:
    return os.getloadavg()[0]


def python(code: str, env: dict[str, str], *args: str) -> float:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def whole(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "diagkg.cli", *args], check=True, capture_output=True, env=env)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REV", help="also measure this git revision's diagkg")
    parser.add_argument("--cold", action="store_true", help="also load with an empty inference cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cache = base / "cache"
        envs = {"now": dict(os.environ, XDG_CACHE_HOME=str(cache))}
        if args.before:
            envs["before"] = dict(envs["now"], PYTHONPATH=str(checkout(args.before, base / "before")))
        samples: dict[str, list[tuple[float, float]]] = {}

        def note(name: str, seconds: float) -> None:
            samples.setdefault(name, []).append((seconds, load()))
            print(f"  {name:<42} {seconds:7.2f} s   (load {samples[name][-1][1]:.1f})", flush=True)

        whole(["--store", str(base / "warm-up"), "load", "--shipped"], envs["now"])     # fills the cache
        for r in range(args.rounds):
            print(f"round {r + 1}")
            note("rdflib parse (140 files)", python(PARSE, envs["now"], str(SCENARIOS)))
            for label, env in envs.items():
                note(f"diagkg validate scenarios/ [{label}]", whole(["--memory", "validate", str(SCENARIOS)], env))
                note(f"validate, in process [{label}]", python(VALIDATE, env, str(SCENARIOS)))
                note(f"load --shipped, warm cache [{label}]",
                     whole(["--store", str(base / f"s-{label}-{r}"), "load", "--shipped"], env))
                if args.cold:
                    cold = dict(env, XDG_CACHE_HOME=str(base / f"cold-{label}-{r}"))
                    note(f"load --shipped, empty cache [{label}]",
                         whole(["--store", str(base / f"c-{label}-{r}"), "load", "--shipped"], cold))
        print("\nmedians")
        med = {name: statistics.median(s for s, _ in values) for name, values in samples.items()}
        for name, value in med.items():
            loads = [f"{x:.1f}" for _, x in samples[name]]
            print(f"  {name:<42} {value:7.2f} s   (load {', '.join(loads)})")
        parse = med["rdflib parse (140 files)"]
        for label in envs:
            command, inner = med[f"diagkg validate scenarios/ [{label}]"], med[f"validate, in process [{label}]"]
            print(f"  [{label}] validate / rdflib parse: whole command {command / parse:.1f}x, "
                  f"in process {inner / parse:.1f}x")
        if "before" in envs:
            for what in ("diagkg validate scenarios/", "validate, in process", "load --shipped, warm cache",
                         *(["load --shipped, empty cache"] if args.cold else [])):
                print(f"  {what}: before / now {med[f'{what} [before]'] / med[f'{what} [now]']:.1f}x")


if __name__ == "__main__":
    main()
