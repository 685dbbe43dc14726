"""Failures of the machines a campaign runs on, as an outside operator met them: a Dask cluster whose scheduler
died cancelled the campaign's sessions and the campaign ended in a raw ``CancelledError`` traceback, exit 1 (the code
for shape violations); and while another process held the store for a minute, the campaign's process waited a
second for it after every session (a session a second instead of twenty). On the torch (written in the tests)."""

from __future__ import annotations

import concurrent.futures as cf
import subprocess
import sys
import time
from typing import Any

import pyoxigraph as ox
import pytest

from diagkg.errors import ClusterLost
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.evaluation.campaign import CampaignConfig
from diagkg.evaluation.tally import from_rows
from diagkg.evaluation.writer import CampaignWriter
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.torch import FLAT, TORCH, scenario_text, torch_memory_store


class Cancelling(cf.Executor):
    """What a Dask client's executor hands back once its scheduler is gone: futures cancelled."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        future.cancel()
        future.set_running_or_notify_cancel()      # (as an executor tells its waiters)
        return future


def test_a_cluster_that_cancels_the_sessions_stops_the_campaign_saying_so(tmp_path, monkeypatch):
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=2, name="lost"))
    monkeypatch.setattr(execution, "_executor", lambda *a, **k: (Cancelling(), None, 2))
    with pytest.raises(ClusterLost, match=f"--resume {campaign.id}"):
        execution.run(store, campaign, workers=2, executor="dask")


HOLD = """
import sys, time
import pyoxigraph
held = pyoxigraph.Store(sys.argv[1])      # as `oxigraph serve --location` holds it: no diagkg turns
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_commit_that_met_another_writer_is_not_tried_again_after_every_session(tmp_path):
    files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    store = KnowledgeStore(tmp_path / "store")
    load_files(store, files)
    campaign = cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=1, name="held"))
    writer = CampaignWriter(store, from_rows(campaign, []))
    writer.records([ox.Quad(ox.NamedNode("urn:note"), ox.NamedNode("urn:says"), ox.Literal("waits"), campaign.graph)])
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "store"), "8"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        writer.latency = 0.0                    # due at once
        t0 = time.perf_counter()
        assert writer.commit_if_due() == 0      # waits up to a second for the lock, then lets the sessions go on
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(20):                     # twenty sessions later: not tried again yet
            assert writer.commit_if_due() == 0
        assert first >= 0.5 and time.perf_counter() - t0 < 0.5, first
        assert writer.time_left() == pytest.approx(4, abs=1.5)     # the loop waits for sessions meanwhile, not spins
    finally:
        holder.kill()
        holder.wait()
    assert holder.stdout is not None
    holder.stdout.close()
    writer.commit()                             # the other writer gone: it goes through
    store.refresh()
    assert bool(store.query("ASK { <urn:note> <urn:says> 'waits' }"))
