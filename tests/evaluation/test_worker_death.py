"""A session that kills the worker process running it (as a native crash in a simulator library would)
is recorded ``crashed``, saying how the process ended, and the campaign goes on with a fresh pool: the
other sessions in flight when it died are run again and stored, the tallies stay exact, and a campaign
whose sessions keep killing their workers stops with a clear error and resumes. A session that never
ends is stopped at the campaign's time limit and recorded the same way.

The assistant that kills its process is a plug-in written here, a distribution of its own (trusted, so
that it runs in the worker's process rather than in one of its own), on the torch, a system written in
the tests."""

from __future__ import annotations

import sys
import textwrap
import time

import pyoxigraph as ox
import pytest

from diagkg.agents import registry
from diagkg.errors import InputError, WorkerDied
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, pool
from diagkg.evaluation.campaign import CampaignConfig

from ..support.cli import run_cli
from ..support.torch import torch_memory_store
from .test_evaluation import assert_tallies_exact

KILLER = textwrap.dedent('''
    """An assistant that kills the process running it on the seeds listed in DIAGKG_TEST_KILL_SEEDS, and
    never ends on those in DIAGKG_TEST_HANG_SEEDS."""
    import os
    import signal
    import time

    from diagkg.agents.registry import BaseAssistant


    class Killer(BaseAssistant):
        name = "killer"

        def setup(self, briefing):
            super().setup(briefing)
            if str(briefing.seed) in os.environ.get("DIAGKG_TEST_KILL_SEEDS", "").split(","):
                os.kill(os.getpid(), signal.SIGSEGV)      # what a native crash does to the process
            while str(briefing.seed) in os.environ.get("DIAGKG_TEST_HANG_SEEDS", "").split(","):
                time.sleep(1)                               # what an endless loop does to a campaign

        def suggest(self):
            return None
''')


@pytest.fixture()
def killer(tmp_path, monkeypatch):
    """The killer installed as a distribution in a folder on this process's path (and its workers')."""
    site = tmp_path / "site"
    info = site / "diagkg_killer-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: diagkg-killer\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[diagkg.assistants]\nkiller = diagkg_killer:Killer\n")
    (site / "diagkg_killer.py").write_text(KILLER)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", "killer")
    registry.rescan()
    yield
    sys.modules.pop("diagkg_killer", None)
    monkeypatch.undo()
    registry.rescan()


def crash_messages(store, campaign) -> dict[tuple[int, int], str]:
    """What the last round of each crashed trajectory of ``campaign`` says, by (scenario, seed)."""
    return {(n, seed): store.select("trajectory-rounds", {"trajectory": ox.NamedNode(rec.trajectory)})[-1]["outcome"]
            for (_, n, seed), rec in cp.recorded(store, campaign).items() if rec.end == "crashed"}


def test_a_session_that_kills_its_worker_is_recorded_crashed_and_the_campaign_goes_on(tmp_path, killer, monkeypatch):
    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "1")
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("killer",), scenarios=(9101, 9102), runs=3, name="dying"))
    said: list[str] = []
    summary = execution.run(store, campaign, workers=2, notify=said.append)
    slots = cp.recorded(store, campaign)
    assert sorted(slots) == sorted(("killer", n, s) for n in (9101, 9102) for s in (0, 1, 2))
    assert {k[1:]: r.end for k, r in slots.items() if r.end == "crashed"} == {(9101, 1): "crashed", (9102, 1): "crashed"}
    assert summary.progress.stored == 6 and summary.states == {"complete": 2}
    assert_tallies_exact(store, campaign.id)
    messages = crash_messages(store, campaign)
    assert sorted(messages) == [(9101, 1), (9102, 1)]
    for (n, seed), message in messages.items():
        assert "WorkerDied" in message and "SIGSEGV" in message, (n, seed, message)
    assert any("seed 1" in line and "crashed" in line for line in said), said
    # run again with the killer tamed: the crashed sessions, and only they, are replaced
    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "")
    # (one worker: which sessions run again does not depend on how many processes run them; one less to start)
    again = execution.run(store, campaign, workers=1, retry_failed=True)
    assert again.progress.ran == 2
    assert "crashed" not in {r.end for r in cp.recorded(store, campaign).values()}
    assert_tallies_exact(store, campaign.id)


def test_sessions_that_keep_killing_their_workers_stop_the_campaign_which_resumes(tmp_path, killer, monkeypatch):
    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "0,1,2,3")
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("killer",), scenarios=(9101, 9102), runs=4, name="doomed"))
    with pytest.raises(WorkerDied, match=f"{pool.IN_A_ROW} sessions in a row.*--resume {campaign.id}"):
        execution.run(store, campaign, workers=2)
    kept = cp.recorded(store, campaign)
    assert len(kept) == pool.IN_A_ROW and {r.end for r in kept.values()} == {"crashed"}
    assert_tallies_exact(store, campaign.id)
    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "")
    resumed = execution.run(store, campaign, workers=1)       # (the resume's own pool: one process is enough)
    assert resumed.progress.ran == 8 - pool.IN_A_ROW and resumed.progress.stored == 8
    assert_tallies_exact(store, campaign.id)


@pytest.mark.parametrize("code, words", [(-11, "killed by signal SIGSEGV"), (-9, "killed by signal SIGKILL"),
                                         (3, "it exited with status 3"), (None, "it ended in a way not known")])
def test_how_a_worker_ended_is_said_in_words(code, words):
    assert pool.ended(code) == words


@pytest.mark.slow
def test_on_a_dask_cluster_the_session_that_kills_its_workers_is_recorded_crashed(tmp_path, killer, monkeypatch):
    import dask
    import distributed  # noqa: F401 - its defaults in dask's configuration before a setting is added to them

    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "1")
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("killer",), scenarios=(9101,), runs=3, name="dask-dying"))
    # the scheduler tries a session whose worker died on another worker this many times more (3 by default)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        summary = execution.run(store, campaign, workers=2, executor="dask")
    ends = {seed: r.end for (_, _, seed), r in cp.recorded(store, campaign).items()}
    assert ends[1] == "crashed" and ends[0] != "crashed" and ends[2] != "crashed"
    assert summary.progress.stored == 3
    assert_tallies_exact(store, campaign.id)
    assert "WorkerDied" in crash_messages(store, campaign)[9101, 1]


@pytest.mark.slow
def test_on_a_dask_cluster_the_sessions_after_one_that_killed_every_worker_still_run(tmp_path, killer, monkeypatch):
    # one worker, which the session of seed 1 kills: the cluster restarts it, and the sessions after run on it. The
    # knowledge used to be scattered to the workers, and went with the last of them: the campaign then waited
    # forever for the sessions left
    import concurrent.futures as cf

    import dask
    import distributed  # noqa: F401 - its defaults in dask's configuration before a setting is added to them

    monkeypatch.setenv("DIAGKG_TEST_KILL_SEEDS", "1")
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("killer",), scenarios=(9101,), runs=4, name="dask-alone"))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), cf.ThreadPoolExecutor(1) as one:
        summary = one.submit(execution.run, store, campaign, workers=1, executor="dask").result(timeout=90)
    ends = {seed: r.end for (_, _, seed), r in cp.recorded(store, campaign).items()}
    assert ends[1] == "crashed" and {ends[s] for s in (0, 2, 3)} == {"surrender"}, ends
    assert summary.progress.stored == 4
    assert_tallies_exact(store, campaign.id)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_session_past_the_time_limit_is_stopped_and_recorded_crashed(tmp_path, killer, monkeypatch, workers):
    monkeypatch.setenv("DIAGKG_TEST_HANG_SEEDS", "1")
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("killer",), scenarios=(9101,), runs=3, name="hanging"))
    said: list[str] = []
    t0 = time.monotonic()
    # (a limit with room for a worker's start under load: the pool counts a session as running from when it is
    # on its way to a worker, and a session stopped with others runs again alone on a started pool)
    summary = execution.run(store, campaign, workers=workers, session_seconds=3, notify=said.append)
    assert time.monotonic() - t0 < 30
    ends = {seed: r.end for (_, _, seed), r in cp.recorded(store, campaign).items()}
    assert ends[1] == "crashed" and ends[0] != "crashed" and ends[2] != "crashed"
    assert summary.progress.stored == 3
    assert_tallies_exact(store, campaign.id)
    message = crash_messages(store, campaign)[9101, 1]
    assert "WorkerDied" in message and "longer than the limit of 3 s" in message, message
    assert any("longer than 3 s" in line for line in said), said


def test_the_time_limit_is_checked(tmp_path):
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=1, name="limits"))
    with pytest.raises(InputError, match="more than 0"):
        execution.run(store, campaign, workers=2, session_seconds=0)
    with pytest.raises(InputError, match="local worker processes only"):
        execution.run(store, campaign, workers=2, executor="dask", session_seconds=5)


def test_the_command_line_refuses_a_time_limit_it_cannot_keep_before_writing_anything(tmp_path):
    store = tmp_path / "store"
    for bad, says in ((["--session-seconds", "0"], "more than 0"),
                      (["--session-seconds", "5", "--executor", "dask"], "local worker processes only")):
        r = run_cli("--store", str(store), "evaluate", "--assistant", "oracle", "--scenarios", "1", *bad)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert not store.exists()           # nothing was created, not even the store


UNGUARDED = textwrap.dedent('''
    import pathlib
    import sys
    import tempfile

    sys.path.insert(0, {root!r})
    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from tests.support.torch import torch_memory_store

    store = torch_memory_store(pathlib.Path(tempfile.mkdtemp()))
    campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=2, name="script"))
    execution.run(store, campaign, workers=2)
    print("stored", len(cp.recorded(store, campaign)))
''')


@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_that_runs_a_campaign_without_a_main_guard_is_told_so_instead_of_waiting_forever(tmp_path, guarded):
    # a spawned worker imports the script as its main module: unguarded, the script starts a campaign again,
    # Python refuses, and the worker dies while starting (the campaign used to wait forever writing it the
    # knowledge)
    import subprocess
    from pathlib import Path

    body = UNGUARDED.format(root=str(Path(__file__).resolve().parents[2]))
    if guarded:
        body = "if __name__ == '__main__':\n" + textwrap.indent(body, "    ")
    script = tmp_path / "my_campaign.py"
    script.write_text(body)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    if guarded:
        assert r.returncode == 0 and "stored 2" in r.stdout, r.stderr[-2000:]
    else:
        assert r.returncode != 0
        assert "WorkerDied" in r.stderr and "cannot be started (" in r.stderr and '__name__ == "__main__"' in r.stderr, \
            r.stderr[-2000:]


def test_a_campaign_that_ran_nothing_is_not_left_behind(tmp_path, monkeypatch):
    """A campaign whose workers could not start was left in the store with no trajectory, and a later `report NAME`
    found several campaigns of that name. One created by the command and failing before any session is removed."""
    from diagkg.cli.main import main
    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from diagkg.kg.store import KnowledgeStore

    from ..support.torch import FLAT, TORCH, scenario_text

    (tmp_path / "torch.ttl").write_text(TORCH)
    (tmp_path / "flat.ttl").write_text(scenario_text(**FLAT))
    db = str(tmp_path / "store")
    assert main(["--store", db, "load", str(tmp_path / "torch.ttl"), str(tmp_path / "flat.ttl")]) == 0

    def cannot_start(*args, **kwargs):
        raise RuntimeError("the workers could not start")

    monkeypatch.setattr(execution, "run", cannot_start)
    with pytest.raises(RuntimeError):
        main(["--store", db, "evaluate", "--assistant", "oracle", "--scenarios", "TORCH.1", "--name", "night"])
    with KnowledgeStore(db, read_only=True) as store:
        assert cp.campaigns(store) == []
