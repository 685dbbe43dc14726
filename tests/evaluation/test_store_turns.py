"""Writers take turns on one on-disk store (issue 25, item 6), on the torch written in
tests/support/torch.py: while a real ``diagkg evaluate`` runs, a ``diagkg run`` and a
``diagkg load --wait 5`` both store their work (the campaign holds the lock per commit only);
killed with SIGKILL, ``evaluate --workers 2`` leaves no process behind; the campaign's group
commits keep a trajectory, its campaign entry and its tally together.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from diagkg.errors import StoreError
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.evaluation.campaign import CampaignConfig
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.turns import open_read_only

from ..support.cli import DIAGKG, run_cli
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text, torch_memory_store

ASSISTANTS = "oracle,random-search"


def _torch_store(tmp_path: Path) -> Path:
    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl", tmp_path / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[2].write_text(scenario_text(**LOOSE_LEAD))
    store = tmp_path / "store"
    with KnowledgeStore(store) as held:        # loaded in this process: the commands under test come next
        load_files(held, files)
    return store


def _trajectory_graphs(store: Path) -> set[str]:
    for _ in range(20):      # a snapshot may lose a file to the campaign's compaction while it is read
        try:
            raw = open_read_only(store)
            return {g.value for g in raw.named_graphs() if "/graph/trajectory/" in g.value}
        except (OSError, RuntimeError, StoreError):
            time.sleep(0.05)
    return set()


def _start_campaign(store: Path, runs: int, workers: int) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, DIAGKG_CHECK_TRAJECTORIES="first")    # sessions at full speed
    proc = subprocess.Popen([*DIAGKG, "--store", str(store), "evaluate", "--assistant", ASSISTANTS,
                             "--scenarios", "TORCH.1,TORCH.2", "--runs", str(runs), "--workers", str(workers),
                             "--name", "turns", "--format", "json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    while line and "campaign turns-" not in line:
        line = proc.stderr.readline()
    assert line, "evaluate did not start its campaign"
    return proc, line.split("campaign ", 1)[1].split(":", 1)[0]


def _wait_for_trajectories(store: Path, proc: subprocess.Popen[str], count: int, before: int = 0) -> None:
    deadline = time.monotonic() + 40
    while len(_trajectory_graphs(store)) < before + count:
        assert proc.poll() is None, "the campaign ended before the test could act"
        assert time.monotonic() < deadline, "the campaign stored nothing"
        time.sleep(0.05)


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate()


@pytest.mark.slow
def test_run_and_load_store_their_work_while_evaluate_runs(tmp_path):
    store = _torch_store(tmp_path)
    before = len(_trajectory_graphs(store))
    proc, cid = _start_campaign(store, runs=150, workers=1)       # 600 sessions: far longer than what follows
    try:
        _wait_for_trajectories(store, proc, 3, before)
        r = run_cli("--store", str(store), "run", "--scenario", "TORCH.1", "--assistant", "oracle",
                    "--seed", "77", "--format", "json")
        assert r.returncode == 0, r.stderr
        trajectory = json.loads(r.stdout)["trajectory"]
        extra = tmp_path / "t3.ttl"
        extra.write_text(scenario_text(**{**LOOSE_LEAD, "id": "TORCH.3", "number": 9103}))
        loaded = run_cli("--store", str(store), "--wait", "5", "load", str(extra))
        assert loaded.returncode == 0, loaded.stderr
        assert proc.poll() is None, "the campaign must still be running: the other writers took their turn in it"
    finally:
        _kill(proc)
    held = _trajectory_graphs(store)
    assert graphs.named("trajectory", trajectory.rsplit("/", 1)[1]).value in held
    reader = KnowledgeStore.open_for_reading(store)
    assert reader.raw.contains_named_graph(graphs.named("scenario", "TORCH.3"))
    # whole batches only: every stored campaign trajectory has its entry, none is there twice
    campaign = cp.open_campaign(reader, cid)
    slots = [(r["assistant"], int(r["scenario"]), int(r["seed"]))
             for r in reader.select("campaign-trajectories", {"campaign": campaign.node})]
    assert slots and len(slots) == len(set(slots)) == len(held) - before - 1


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out.setdefault(ppid, []).append(int(entry.name))
    return out


def _descendants(pid: int) -> list[int]:
    children, found, todo = _children(), [], [pid]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"          # a zombie has ended (whoever adopted it has not reaped it yet)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table in /proc")
def test_kill_9_of_evaluate_with_workers_leaves_no_process(tmp_path):
    store = _torch_store(tmp_path)
    proc, _ = _start_campaign(store, runs=200, workers=2)
    try:
        _wait_for_trajectories(store, proc, 4)
        kids = _descendants(proc.pid)
        assert len(kids) >= 2, "the worker processes should be running"
    finally:
        _kill(proc)
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [k for k in kids if _alive(k)]
    for k in left:                     # leave nothing behind for the other tests either
        os.kill(k, signal.SIGKILL)
    assert not left, f"processes left 10 s after the campaign was killed: {left}"


def test_the_campaign_commits_trajectories_in_batches(tmp_path):
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101, 9102), runs=6, name="batch"))
    summary = execution.run(store, campaign)
    assert summary.progress.stored == 12
    assert 1 <= summary.commits < 12                 # several trajectories (and batch records) per transaction
    assert len(store.select("campaign-trajectories", {"campaign": campaign.node})) == 12
    assert {h[-1]["state"] for h in cp.batches(store, campaign).values()} == {"complete"}


@pytest.mark.slow
def test_a_second_run_of_a_running_campaign_is_refused_saying_who_runs_it(tmp_path):
    """Two runs of one campaign would play the same slots, and the second would take the first's money journal
    for a killed run's (diagkg.evaluation.money_journal): while ``diagkg evaluate`` runs it, a resume here is
    refused, naming the process; once that one is killed, the campaign's lock is free (the kernel let go of it)."""
    from diagkg.errors import CampaignRunning

    store = _torch_store(tmp_path)
    proc, cid = _start_campaign(store, runs=100, workers=1)
    try:
        _wait_for_trajectories(store, proc, 2)
        with KnowledgeStore(store) as held:
            campaign = cp.open_campaign(held, cid)
            with pytest.raises(CampaignRunning) as refused:
                execution.run(held, campaign)
            assert refused.value.campaign == cid and refused.value.holder == f"pid {proc.pid}"
            r = run_cli("--store", str(store), "evaluate", "--resume", cid)
            assert r.returncode == 3 and f"pid {proc.pid}" in r.stderr and f"--resume {cid}" in r.stderr
    finally:
        _kill(proc)
    from diagkg.evaluation import money_journal

    with KnowledgeStore(store) as held, money_journal.running(held, cp.open_campaign(held, cid)):
        pass
