"""Readers opening an on-disk store while another process writes it: a writer process commits batches
of quads (each commit opens the store, writes and lets go of the lock, as a campaign's writer does) and
compacts every ten commits, while reader processes open it read-only again and again and count its
quads. pyoxigraph documents a read-only open beside another process's writer as undefined behaviour;
diagkg's readers open between writers' commits (diagkg.kg.turns). Two ways of opening, interleaved round
by round: ``raw`` (pyoxigraph's read-only open at any moment, as before the turns) and ``turns``
(diagkg's open_read_only).

    .venv/bin/python benchmarks/store_readers.py [--rounds 4] [--commits 60] [--readers 2] [--quads 2000]
                                                 [--modes raw,turns]

Prints per round: the mode, the seconds it took, whether the writer finished (its exit code, its
error), each reader's opens, errors, counts that were not whole commits, the mean and worst open, the
last error, and its peak resident and address-space memory, with the load average. Processes are
spawned, not forked (a child forked from a process that used RocksDB can hang).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from _load import load_average
from diagkg.kg.compaction import optimize
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.turns import open_read_only


def _memory() -> str:
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return f"peak {status['VmHWM'].strip()} resident, {status['VmPeak'].strip()} address space"


def writer(path: str, commits: int, quads: int, out: Any) -> None:
    store = KnowledgeStore(path)
    try:
        for c in range(commits):
            batch = [ox.Quad(ox.NamedNode(f"http://example.org/s{c}/{i}"), ox.NamedNode("http://example.org/p"),
                             ox.Literal("x" * 200), ox.NamedNode(f"http://example.org/g/{c}")) for i in range(quads)]
            with store.writing() as raw:
                raw.extend(batch)
            del raw                  # the writer's handle holds the lock while anything refers to it
            if c % 10 == 9:
                optimize(store)
        out.put(("writer", "finished", _memory()))
    except Exception as exc:         # what the writer met is the figure
        out.put(("writer", f"{type(exc).__name__}: {exc}"[:200], _memory()))


def reader(path: str, mode: str, quads: int, stop: Any, out: Any) -> None:
    opened = errors = torn = 0
    waits: list[float] = []
    last = ""
    while not stop.is_set():
        try:
            t0 = time.perf_counter()
            raw = ox.Store.read_only(path) if mode == "raw" else open_read_only(Path(path))
            waits.append(time.perf_counter() - t0)
            torn += len(raw) % quads != 0          # a count that is not a number of whole commits
            opened += 1
            del raw
        except Exception as exc:     # counted: a read that lost a file to the writer's compaction, or worse
            errors += 1
            last = f"{type(exc).__name__}: {exc}"[:160]
    mean = 1000 * sum(waits) / max(len(waits), 1)
    out.put(("reader", f"{opened} opens, {errors} errors, {torn} torn, open mean {mean:.1f} ms worst "
             f"{1000 * max(waits, default=0):.0f} ms", last, _memory()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--quads", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a round's writer may take")
    parser.add_argument("--modes", default="raw,turns", help="ways of opening, interleaved: raw, turns")
    args = parser.parse_args()
    mp.set_start_method("spawn")
    folder = Path(tempfile.mkdtemp(prefix="store-readers-"))
    try:
        modes = args.modes.split(",")
        for n in range(args.rounds):
            mode = modes[n % len(modes)]
            path = str(folder / f"store{n}")
            KnowledgeStore(path)
            out: Any = mp.Queue()
            stop = mp.Event()
            w = mp.Process(target=writer, args=(path, args.commits, args.quads, out))
            rs = [mp.Process(target=reader, args=(path, mode, args.quads, stop, out))
                  for _ in range(args.readers)]
            t0 = time.perf_counter()
            w.start()
            for r in rs:
                r.start()
            w.join(args.timeout)
            stop.set()
            for r in rs:
                r.join(30)
            seconds = time.perf_counter() - t0
            reports = []
            for _ in range(1 + len(rs)):
                try:
                    reports.append(out.get(timeout=5))
                except queue.Empty:
                    reports.append(("missing",))
            for p in (w, *rs):
                if p.is_alive():
                    p.kill()
            print(f"round {n + 1} ({mode}): {seconds:.1f} s, writer exit {w.exitcode}, readers exit "
                  f"{[r.exitcode for r in rs]} ({load_average()})")
            for report in reports:
                print("  ", *report)
            shutil.rmtree(path, ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
