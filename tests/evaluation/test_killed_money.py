"""A campaign killed with ``kill -9`` while its LLM sessions are in flight: the money those sessions spent is counted
when the campaign resumes (:mod:`diagkg.evaluation.money_journal`), so that the cost limit holds over the killed run
and the resumed one together. Before, the store counted stored trajectories only, and the resume gave away again
what the killed sessions had spent. On the torch written in tests/support/torch.py, against the scripted
OpenAI-compatible server on 127.0.0.1 (each call 0.1, held at 0.2 before it is sent)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from diagkg.evaluation import budget, execution, money_journal
from diagkg.evaluation import campaign as cp
from diagkg.kg.store import KnowledgeStore

from ..support.cli import DIAGKG
from ..support.llm_campaign import HYPOTHESISE, PRICING, llm_config, sessions_of
from ..support.llm_server import LLMServer, Reply

# a measurement each round: a session goes on for its ten rounds, one paid call a round
MEASURE = json.dumps({"kind": "action", "action": "measure_voltage", "targets": ["bat"],
                      "instruction": "Measure the battery."})
PER_CALL = 0.1
# a model name of this test's own: the calls counted are its campaign's, not those of a process another test left
# behind that still calls the port this test's server now has
MODEL = "killed-money-model"


def _config(server: LLMServer) -> dict:
    return {**llm_config(server), "model": MODEL, "pricing": {MODEL: PRICING["stub-model"]}}


def _ours(server: LLMServer) -> int:
    return sum(1 for call in list(server.script.calls) if call.get("model") == MODEL)


def _disk_store(tmp_path: Path, torch_quads) -> Path:
    path = tmp_path / "store"
    with KnowledgeStore(path) as store:
        store.add_quads(torch_quads)
    return path


def _start(store: Path, server: LLMServer, workers: int, executor: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*DIAGKG, "--store", str(store), "evaluate", "--assistant", "llm", "--config",
                             json.dumps(_config(server)), "--scenarios", "TORCH.1", "--runs", "4",
                             "--workers", str(workers), "--executor", executor, "--cost-limit", "50", "--name", "killed",
                             "--format", "json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "executor"), [(1, "local"), (2, "local"), (2, "dask")])
def test_the_money_of_sessions_killed_in_flight_is_counted_on_resume(tmp_path, torch_quads, workers, executor) -> None:
    """A local Dask cluster's sessions share their totals on its scheduler, which dies with the campaign's process:
    the process copies them into its journal every money_journal.MIRROR_SECONDS (before, nothing was kept), so
    the calls of at most that long before the kill may be missing (a call every 0.1 s per worker)."""
    path = _disk_store(tmp_path, torch_quads)
    lag = 0 if executor == "local" else workers * (math.ceil(money_journal.MIRROR_SECONDS / 0.1) + 1)
    with LLMServer() as server:
        server.script.then(*[Reply(content=MEASURE, delay=0.1)] * 200)
        proc = _start(path, server, workers, executor)
        try:
            deadline = time.monotonic() + 60
            while _ours(server) < 5 + lag:        # the sessions in flight have paid for several rounds
                assert proc.poll() is None, proc.communicate()[1]
                assert time.monotonic() < deadline, "the campaign's sessions sent no calls"
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)        # the campaign and its workers, at once
            told = proc.communicate()[1]
        sent_before = _ours(server)
        with KnowledgeStore(path) as store:
            [row] = cp.campaigns(store)
            campaign = cp.open_campaign(store, row["campaign"])
            assert not sessions_of(store, campaign), "no session should have been stored before the kill"
            journal = money_journal.journal_path(store, campaign)
            assert journal is not None and journal.is_file(), "the killed run left no money journal"
            left = journal.read_text()
            # the resume: the calls answered before the kill (at most one per worker sent and unanswered, or
            # answered and not yet settled: held at 0.2) are counted before any session is given its limit
            server.script.replies.clear()
            server.script.content = HYPOTHESISE
            summary = execution.run(store, campaign, cost_limit=50)
            resumed = _ours(server) - sent_before
            assert summary.progress.ran == 4 and resumed == 4
            spending = budget.Spending.read(store, campaign, 50)
            assert spending.unstored >= PER_CALL * (sent_before - workers - lag) - 1e-9, (left, told)
            assert spending.unstored > 0, "nothing of the killed run's spending was kept"
            assert spending.unstored <= PER_CALL * sent_before + 0.2 * workers + 1e-9
            assert spending.spent == pytest.approx(spending.unstored + PER_CALL * resumed)
            assert summary.money == pytest.approx(spending.spent)
            # what the first session of the resume was given: the limit less what the killed run spent
            first = max(v["limit"] for v in sessions_of(store, campaign).values())
            assert first == pytest.approx(50 - spending.unstored)
            assert not journal.exists(), "the resumed run's journal should be gone once it ended"
            records = store.select("campaign-unstored-money", {"campaign": campaign.node})
            assert len(records) == 1 and float(records[0]["money"]) == pytest.approx(spending.unstored)
            # a second resume finds nothing more to count
            execution.run(store, campaign, cost_limit=50)
            assert budget.Spending.read(store, campaign, 50).spent == pytest.approx(spending.spent)


@pytest.mark.slow
def test_the_money_of_sessions_whose_worker_died_is_counted_when_the_run_ends(tmp_path, torch_quads) -> None:
    """A worker killed in a session's call breaks the local pool: the sessions in flight are run again, and what
    their first tries spent is in no trajectory. The run counts it as it ends (before, the journal was dropped)."""
    import multiprocessing
    import threading

    with KnowledgeStore(_disk_store(tmp_path, torch_quads)) as store, LLMServer() as server:
        server.script.then(*[Reply(content=MEASURE, delay=0.1)] * 400)
        campaign = cp.create(store, cp.CampaignConfig(assistants=("llm",), scenarios=(9101,), runs=2,
                                                      config=_config(server), name="died"))
        killed: list[int] = []
        others = {p.pid for p in multiprocessing.active_children()}     # this process's own, started before

        def kill_a_worker() -> None:
            deadline = time.monotonic() + 60
            while _ours(server) < 5 and time.monotonic() < deadline:
                time.sleep(0.02)
            workers = [p for p in multiprocessing.active_children() if p.pid is not None and p.pid not in others]
            if workers:
                killed.append(_ours(server))
                os.kill(workers[0].pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_a_worker)
        killer.start()
        summary = execution.run(store, campaign, workers=2, cost_limit=50)
        killer.join()
        assert killed, "no worker was killed"
        calls = _ours(server)
        seen = sessions_of(store, campaign)
        assert len(seen) == 2 and summary.progress.ran == 2
        stored = sum(v["money"] for v in seen.values())
        assert stored < PER_CALL * calls - 1e-9, "the first tries' calls should be in no trajectory"
        spending = budget.Spending.read(store, campaign, 50)
        # every call answered is counted once: those of the stored sessions, and the first tries' (a call in flight
        # at the kill, held at 0.2 and never settled, counted whole)
        assert spending.spent >= PER_CALL * (calls - 2) - 1e-9
        assert spending.spent <= PER_CALL * calls + 0.2 * 2 + 1e-9
        assert spending.unstored == pytest.approx(spending.spent - stored)
        assert summary.money == pytest.approx(spending.spent)
        journal = money_journal.journal_path(store, campaign)
        assert journal is not None and not journal.exists()
