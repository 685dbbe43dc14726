"""A campaign killed with kill -9 takes its worker processes with it (they die with their parent), but the `exec:`
programs they were talking to lived on, adopted by init: a program that does not read its input (an endless loop, a
long think) ran for ever. Each program now dies with the process that started it. Run with a real `diagkg evaluate
--workers 2`, and on a Dask LocalCluster (whose workers start programs from threads of their own), on the tests'
pump controller (tests/support/pump.py), killed by SIGKILL while the programs think."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diagkg.evaluation import pool
from tests.support.cli import DIAGKG
from tests.support.pump import PUMP, case

PROGRAM = """\
import os, sys, time
open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
while True:          # thinks for ever, reading nothing
    time.sleep(0.1)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")     # a zombie no one reaps is dead
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("executor", [["--workers", "2"], ["--executor", "dask", "--workers", "2"]])
def test_the_programs_of_a_killed_campaign_die_with_it(tmp_path: Path, executor: list[str]):
    folder = tmp_path / "pids"
    folder.mkdir()
    program = tmp_path / "thinker.py"
    program.write_text(PROGRAM)
    files = [tmp_path / "pump.ttl", tmp_path / "a.ttl", tmp_path / "b.ttl"]
    files[0].write_text(PUMP)
    files[1].write_text(case("PUMP.A", 9621, [("BlownFuse", "fuse")], [("ReplaceComponent", "fuse")]))
    files[2].write_text(case("PUMP.B", 9622, [("OpenComponent", "motor")], [("ReplaceComponent", "motor")]))
    store = ["--store", str(tmp_path / "store")]
    load = subprocess.run([*DIAGKG, *store, "load", *map(str, files)], capture_output=True, text=True, timeout=120)
    assert load.returncode == 0, load.stderr
    temp = tmp_path / "tmp"
    temp.mkdir()
    campaign = subprocess.Popen([*DIAGKG, *store, "evaluate", "--assistant", f"exec:{sys.executable} {program} {folder}",
                                 "--scenarios", "PUMP.A", "PUMP.B", *executor],
                                env={**os.environ, "TMPDIR": str(temp)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 45
        while len(pids) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            pids = [int(p.name) for p in folder.iterdir()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        campaign.send_signal(signal.SIGKILL)
        campaign.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, "the programs outlived the campaign"
    if executor[0] == "--workers":       # its folder (knowledge, rounds) stays, and the next campaign sweeps it
        kept = list(temp.glob(f"{pool.FOLDER}{pool.owner(campaign.pid)}-*"))
        assert len(kept) == 1 and (kept[0] / "knowledge.nq").is_file()
        assert pool.sweep_stale(str(temp)) == [str(kept[0])]
