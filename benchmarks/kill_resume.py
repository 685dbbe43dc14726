"""The issue's check of resumable campaigns, at full size: a campaign of three assistants over
every shipped scenario is killed with SIGKILL at random moments, resumed each time, and must end
with exactly the expected trajectories (none lost, none run twice), then reported.

    .venv/bin/python benchmarks/kill_resume.py [--kills 4] [--runs 1] [--store DIR] [--seed S]

Prints each kill (how many trajectories were stored when it landed), the final count against
the expected one, and the report's folder.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _load import load_average
from diagkg.errors import StoreError
from diagkg.evaluation import campaign as cp
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.turns import open_read_only

DIAGKG = [sys.executable, "-m", "diagkg.cli"]
ASSISTANTS = ("neuro-symbolic", "random-search", "oracle")


def stored(store: Path) -> int:
    """Trajectory graphs a reader sees now (each committed with its campaign entry)."""
    try:      # a snapshot may lose a file to the writer's compaction while it is read: then 0 this time
        raw = open_read_only(store)
        return sum(1 for g in raw.named_graphs() if "/graph/trajectory/" in g.value)
    except (OSError, RuntimeError, StoreError):
        return 0


def slots(store: Path, cid: str) -> list[tuple[str, int, int]]:
    s = KnowledgeStore.open_for_reading(store)
    c = cp.open_campaign(s, cid)
    return [(r["assistant"], int(r["scenario"]), int(r["seed"])) for r in s.select("campaign-trajectories", {"campaign": c.node})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    store = args.store or Path(tempfile.mkdtemp(prefix="diagkg-kill-")) / "store"
    subprocess.run([*DIAGKG, "--store", str(store), "load", "--shipped"], check=True, capture_output=True)
    expected = 3 * 135 * args.runs
    cid = None
    t0 = time.perf_counter()
    for kill in range(args.kills + 1):
        command = ([*DIAGKG, "--store", str(store), "evaluate", "--resume", cid] if cid else
                   [*DIAGKG, "--store", str(store), "evaluate", "--assistant", ",".join(ASSISTANTS), "--scenarios", "all",
                    "--runs", str(args.runs), "--name", "killed"])
        proc = subprocess.Popen([*command, "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        if cid is None:
            line = proc.stderr.readline()
            while line and "campaign killed-" not in line:
                line = proc.stderr.readline()
            cid = line.split("campaign ", 1)[1].split(":", 1)[0]
        if kill == args.kills:         # the last one runs to the end
            out, err = proc.communicate()
            assert proc.returncode == 0, err
            print(f"finished: {json.loads(out.strip().splitlines()[-1])}")
            break
        before = stored(store)
        target = before + rng.randint(5, max(6, (expected - before) // (args.kills - kill + 1)))
        while proc.poll() is None and stored(store) < target:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        now = slots(store, cid)
        print(f"kill {kill + 1}: {len(now)} trajectories stored ({len(set(now))} distinct slots)", flush=True)
        assert len(now) == len(set(now)), "a slot was run twice"
    assert cid is not None
    final = slots(store, cid)
    want = sorted((a, n, s) for a in ASSISTANTS for n in range(1, 136) for s in range(args.runs))
    print(f"{len(final)} trajectories, {len(set(final))} distinct slots, expected {expected}: "
          f"{'exactly as expected' if sorted(final) == want else 'DIFFERENT'}; stored graphs {stored(store)}; "
          f"{time.perf_counter() - t0:.0f} s in all  ({load_average()})")
    out = store.parent / "report"
    r = subprocess.run([*DIAGKG, "--store", str(store), "report", cid, "--out", str(out)], capture_output=True, text=True)
    print(f"report: {'written to ' + str(out) if r.returncode == 0 else r.stderr}")


if __name__ == "__main__":
    main()
