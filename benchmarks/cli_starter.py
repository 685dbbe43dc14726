"""The tests' commands started afresh (``python -c`` running ``diagkg.cli``) against forked by the tests'
starter (tests/support/cli_zygote.py, the imports done once per pytest worker), interleaved, the same
commands each way, wall time per command (median of N) with the load average beside each figure.

    .venv/bin/python benchmarks/cli_starter.py [--runs 10]

The commands: ``--version``; ``load`` of the three cubes' description into a fresh store; ``validate`` of a
shipped scenario; ``query scenario-index`` and ``run --assistant oracle`` on a store holding the shipped
catalogue (loaded once, first).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import cli  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {"XDG_CACHE_HOME": str(folder / "cache"), "XDG_STATE_HOME": str(folder / "state")}
        shipped = str(folder / "shipped")
        done = cli.run_cli("--store", shipped, "load", "--shipped", env=env)
        assert done.returncode == 0, done.stderr
        scenario = str(sorted((ROOT / "scenarios" / "catalog").glob("*.ttl"))[0])
        commands = {
            "--version": lambda i: ("--version",),
            "load a system": lambda i: ("--store", str(folder / f"fresh-{i}"), "load", str(ROOT / "scenarios" / "systems"
                                                                                          / "three_cubes.ttl")),
            "validate a scenario": lambda i: ("--store", shipped, "validate", scenario),
            "query scenario-index": lambda i: ("--store", shipped, "query", "scenario-index", "--format", "json"),
            "run oracle": lambda i: ("--store", shipped, "run", "--scenario", "3CC.S.1", "--assistant", "oracle"),
        }
        times: dict[tuple[str, bool], list[float]] = {}
        for i in range(args.runs):
            for name, make in commands.items():
                for cold in (i % 2 == 0, i % 2 == 1):        # which goes first alternates
                    cli.COLD = cold
                    started = time.perf_counter()
                    done = cli.run_cli(*make(f"{i}-{cold}"), env=env)
                    times.setdefault((name, cold), []).append(time.perf_counter() - started)
                    assert done.returncode == 0, (name, done.stderr)
        cli.COLD = False
    print(f"{'command':24} {'afresh ms':>10} {'forked ms':>10} {'ratio':>6}")
    for name in commands:
        cold_ms = statistics.median(times[name, True]) * 1000
        warm_ms = statistics.median(times[name, False]) * 1000
        print(f"{name:24} {cold_ms:10.0f} {warm_ms:10.0f} {cold_ms / warm_ms:6.2f}   {load_average()}")


if __name__ == "__main__":
    main()
