"""One run of a campaign at a time on its store, from any machine (diagkg.evaluation.run_lease): the run's lease in
the store. The lock file of money_journal.running holds one run per machine and user only; two machines (or two users)
sharing a store both played the campaign's slots. On the torch written in tests/support/torch.py: a lease another
machine holds refuses a run here (in Python and `diagkg evaluate --resume`, exit 3, naming it) until it runs out; a
lease of a process of this machine that is gone is taken at once, saying so; a run renews its lease while it runs and
gives it back; taking is a compare-and-swap; and on a real `oxigraph serve`, a second `diagkg evaluate` with a state
folder of its own (another machine, as far as the lock file can tell) is refused while the first runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pyoxigraph as ox
import pytest

from diagkg.errors import CampaignRunning
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, run_lease
from diagkg.evaluation.campaign import CampaignConfig
from diagkg.kg.loading import load_files
from diagkg.kg.remote import connect
from diagkg.kg.store import KnowledgeStore

from ..support.cli import DIAGKG, run_cli
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

ELSEWHERE = run_lease.Holder(pid=4242, machine="lab-2 0f3c", host="lab-2")


def _files(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl", tmp_path / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[2].write_text(scenario_text(**LOOSE_LEAD))
    return files


def _campaign(store: KnowledgeStore, runs: int = 2) -> cp.Campaign:
    return cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101, 9102), runs=runs, name="lease"))


def _stored(store: KnowledgeStore, campaign: cp.Campaign) -> int:
    return len(store.select("campaign-trajectories", {"campaign": campaign.node}))


def test_a_lease_held_elsewhere_refuses_a_run_here_until_it_runs_out(tmp_path):
    path = tmp_path / "store"
    with KnowledgeStore(path) as store:
        load_files(store, _files(tmp_path))
        campaign = _campaign(store)
        token, _ = run_lease.take(store, campaign, ELSEWHERE)
        with pytest.raises(CampaignRunning) as refused:
            execution.run(store, campaign)
        assert "pid 4242 on lab-2" in refused.value.holder
        assert _stored(store, campaign) == 0
    r = run_cli("--store", str(path), "evaluate", "--resume", campaign.id)
    assert r.returncode == 3, r.stderr
    assert "pid 4242 on lab-2" in r.stderr and f"--resume {campaign.id}" in r.stderr
    with KnowledgeStore(path) as store:
        assert _stored(store, campaign) == 0
        _, lease = run_lease.read(store, campaign)
        assert lease is not None and lease.token == token and not lease.expired
        # the other machine's run stopped renewing: its lease ran out (its end put two minutes back)
        run_lease.renew(store, campaign, token, timedelta(seconds=-120 - run_lease.LEASE_SECONDS))
        assert run_lease.read(store, campaign)[1].expired
    r = run_cli("--store", str(path), "evaluate", "--resume", campaign.id, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert "took over the lease a run left behind (pid 4242 on lab-2: its lease had run out)" in r.stderr
    with KnowledgeStore(path) as store:
        assert _stored(store, campaign) == 4
        assert run_lease.read(store, campaign)[1] is None          # given back as the run ended


def test_the_lease_of_a_process_of_this_machine_that_is_gone_is_taken_at_once(tmp_path):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with KnowledgeStore(tmp_path / "store") as store:
            load_files(store, _files(tmp_path))
            campaign = _campaign(store)
            here = run_lease.Holder.this_process()
            run_lease.take(store, campaign, run_lease.Holder(other.pid, here.machine, here.host))
            with pytest.raises(CampaignRunning) as refused:
                execution.run(store, campaign)         # it still runs
            assert f"pid {other.pid} on {here.host}" in refused.value.holder
            other.send_signal(signal.SIGKILL)
            time.sleep(0.2)          # not reaped yet: a zombie is gone too
            said: list[str] = []
            summary = execution.run(store, campaign, notify=said.append)
            assert summary.progress.stored == 4
            assert any(f"pid {other.pid} on {here.host}: its process is gone" in line for line in said), said
            assert run_lease.read(store, campaign)[1] is None
    finally:
        other.kill()
        other.wait()


def test_a_run_renews_its_lease_while_it_runs_and_gives_it_back(tmp_path, monkeypatch):
    monkeypatch.setattr(run_lease, "RENEW_SECONDS", 0.02)
    with KnowledgeStore(tmp_path / "store") as store:
        load_files(store, _files(tmp_path))
        campaign = _campaign(store, runs=15)
        seen: list[run_lease.Lease] = []

        def look(_progress: object) -> None:
            lease = run_lease.read(store, campaign)[1]
            assert lease is not None, "a running campaign holds no lease"
            seen.append(lease)
            time.sleep(0.03)      # a renewal's turn

        execution.run(store, campaign, on_progress=look)
        assert len(seen) >= 3
        assert {lease.token for lease in seen} == {seen[0].token}
        assert {lease.holder for lease in seen} == {run_lease.Holder.this_process().label}
        assert seen[-1].until > seen[0].until, "the lease was never renewed"
        assert run_lease.read(store, campaign)[1] is None
        assert _stored(store, campaign) == 30


def test_taking_is_a_compare_and_swap(tmp_path):
    """Two runs that found no lease (or the same old one) and take it at once: the first holds it, the second's
    update changes nothing and it is refused."""
    with KnowledgeStore(tmp_path / "store") as store:
        load_files(store, _files(tmp_path)[:1])
        campaign = _campaign_on_torch_only(store)
        values = {"graph": run_lease.graph_of(campaign), "campaign": campaign.node,
                  "lease": ox.NamedNode(campaign.iri + "#lease"), "holder": "pid 1 on a", "machine": "a",
                  "pid": 1, "until": ox.Literal("2999-01-01T00:00:00+00:00",
                                                datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#dateTime"))}
        store.update("campaign-lease-take", **values, token="first", fresh=True)
        store.update("campaign-lease-take", **values, token="second", fresh=True)          # found none: too late
        assert run_lease.read(store, campaign)[1].token == "first"
        store.update("campaign-lease-take", **values, token="third", fresh=False, expected="stale")  # not the one held
        assert run_lease.read(store, campaign)[1].token == "first"
        store.update("campaign-lease-take", **values, token="fourth", fresh=False, expected="first")
        lease = run_lease.read(store, campaign)[1]
        assert lease.token == "fourth" and lease.pid == 1 and lease.holder == "pid 1 on a"
        assert len(list(store.raw.quads_for_pattern(None, None, None, run_lease.graph_of(campaign)))) == 7
        run_lease.give_back(store, campaign, "first")          # not its lease any more: left alone
        assert run_lease.read(store, campaign)[1].token == "fourth"
        run_lease.give_back(store, campaign, "fourth")
        assert not list(store.raw.quads_for_pattern(None, None, None, run_lease.graph_of(campaign)))


def _campaign_on_torch_only(store: KnowledgeStore) -> cp.Campaign:
    return cp.Campaign("lease-cas", CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=1, name="lease-cas"))


@pytest.mark.slow
def test_two_machines_sharing_a_server_do_not_run_one_campaign_together(tmp_path):
    from ..kg.test_remote_store import OXIGRAPH, start_server

    if OXIGRAPH is None:
        pytest.skip("the oxigraph server is not installed")
    server, url = start_server(tmp_path / "db")
    first = None
    try:
        with connect(url) as store:
            load_files(store, _files(tmp_path))
            campaign = _campaign(store, runs=500)     # 1,000 sessions: ~9 s here alone
        # two state folders: two machines, as far as the lock file of money_journal.running can tell
        env_a = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "a"), DIAGKG_CHECK_TRAJECTORIES="first")
        env_b = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "b"), DIAGKG_CHECK_TRAJECTORIES="first")
        first = subprocess.Popen([*DIAGKG, "--store", url, "evaluate", "--resume", campaign.id, "--format", "json"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env_a)
        deadline = time.monotonic() + 40
        with connect(url) as store:
            while run_lease.read(store, campaign)[1] is None or _stored(store, campaign) < 2:
                assert first.poll() is None, first.communicate()[1]
                assert time.monotonic() < deadline, "the first run took no lease"
                time.sleep(0.1)
        second = subprocess.run([*DIAGKG, "--store", url, "evaluate", "--resume", campaign.id], capture_output=True,
                                text=True, env=env_b, timeout=60)
        assert second.returncode == 3, second.stderr
        assert f"pid {first.pid} on " in second.stderr and "lease" in second.stderr
        first.send_signal(signal.SIGKILL)
        first.communicate()
        with connect(url) as store:
            before = _stored(store, campaign)
            assert 0 < before < 1000
        # the first machine's run was killed: its process is gone, so a run here takes its lease at once
        third = subprocess.run([*DIAGKG, "--store", url, "evaluate", "--resume", campaign.id, "--format", "json"],
                               capture_output=True, text=True, env=env_b, timeout=120)
        assert third.returncode == 0, third.stderr
        assert "its process is gone" in third.stderr
        with connect(url) as store:
            assert _stored(store, campaign) == 1000
            assert run_lease.read(store, campaign)[1] is None
    finally:
        if first is not None and first.poll() is None:
            first.kill()
            first.communicate()
        server.terminate()
        server.wait(10)
