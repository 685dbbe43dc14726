"""Where the test suite's CPU goes: the suite run under py-spy (every process it starts sampled:
pytest's workers, the ``diagkg`` commands the tests run, servers), then the samples summed by
project function, by ``diagkg`` subcommand and by what is imported, with each share of the whole.

    .venv/bin/python benchmarks/suite_profile.py [--rate 30] [--out /tmp/suite.folded] [-- PYTEST ARGS]
    .venv/bin/python benchmarks/suite_profile.py --read /tmp/suite.folded      # summarise a recorded run

py-spy is not one of the project's dependencies: give its path with ``--py-spy`` or have it on PATH
(``pip install --target /tmp/pyspy py-spy`` puts it in ``/tmp/pyspy/bin``). Java (the reasoner,
HermiT) is not sampled: on 2026-12-03 the suite started it 55 times, about 1.7 s of CPU each.
Sampling costs the suite a few per cent; compare figures of one kind of run only.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>.*?)(?::(?P<line>\d+))?\)$")
COMMAND = re.compile(r"^cmd_(\w+) \(diagkg/cli/")


def _where(file: str) -> str:
    for marker in ("site-packages/", "/platform/"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def summarise(folded: Path, rate: float, top: int) -> None:
    total = 0
    inclusive: collections.Counter[str] = collections.Counter()
    exclusive: collections.Counter[str] = collections.Counter()
    commands: collections.Counter[str] = collections.Counter()
    imported: collections.Counter[str] = collections.Counter()
    in_cli = in_imports = 0
    with folded.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            try:
                n = int(count)
            except ValueError:        # a process's command line holding a newline
                continue
            total += n
            names = []
            for frame in stack.split(";"):
                m = FRAME.match(frame)
                names.append(f"{m['func']} ({_where(m['file'])})" if m else frame)
            for name in set(names):
                if "diagkg/" in name or name.startswith("test_"):
                    inclusive[name] += n
            exclusive[names[-1]] += n
            command = next((m.group(1) for name in names if (m := COMMAND.match(name))), None)
            if any(name.startswith("<module> (diagkg/cli/__main__.py") for name in names):
                in_cli += n
                commands[command or "(start-up)"] += n
            first_import = next((i for i, name in enumerate(names) if name.startswith("_find_and_load ")), None)
            if first_import is not None:
                in_imports += n
                module = next((name for name in names[first_import:] if name.startswith("<module> ")), "?")
                imported[module] += n

    def seconds(n: int) -> str:
        return f"{n / rate:7.1f} s {100 * n / max(total, 1):5.1f} %"

    print(f"samples {total} at {rate:g} a second: {total / rate:.0f} s of CPU in Python "
          f"(load average now {os.getloadavg()[0]:.2f})")
    print(f"in diagkg commands started by the tests: {seconds(in_cli)}; importing modules: {seconds(in_imports)}")
    for title, counts in (("by diagkg subcommand", commands),
                          ("modules whose import costs most (first module imported below the importer)", imported),
                          ("project functions and tests, inclusive", inclusive),
                          ("any function, exclusive (its own time)", exclusive)):
        print(f"\n{title}:")
        for name, n in counts.most_common(top):
            print(f"  {seconds(n)}  {name}")

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=30, help="samples a second (default 30; py-spy takes a whole number)")
    parser.add_argument("--out", default="/tmp/diagkg-suite.folded", help="where the samples go")
    parser.add_argument("--read", help="summarise these recorded samples instead of running the suite")
    parser.add_argument("--py-spy", default=shutil.which("py-spy") or "/tmp/pyspy/bin/py-spy")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest (default -n 2 --dist worksteal)")
    args = parser.parse_args()
    if args.read:
        summarise(Path(args.read), args.rate, args.top)
        return
    if not Path(args.py_spy).exists():
        sys.exit(f"py-spy not found at {args.py_spy}: pip install --target /tmp/pyspy py-spy, or pass --py-spy")
    pytest_args = args.pytest_args or ["-n", "2", "--dist", "worksteal", "-q"]
    started = time.perf_counter()
    subprocess.run([args.py_spy, "record", "-r", str(args.rate), "--subprocesses", "--nonblocking", "-f", "raw",
                    "-o", args.out, "--", sys.executable, "-m", "pytest", *pytest_args], check=False)
    print(f"\nthe suite under py-spy: {time.perf_counter() - started:.0f} s wall\n")
    summarise(Path(args.out), args.rate, args.top)


if __name__ == "__main__":
    main()
