"""An assistant registered at run time (``registry.register``: a script's or a notebook's own) runs in a
campaign's worker processes as it does in the campaign's own process; one that no worker could have is
refused, saying what to do. Before, each of its sessions in a worker was recorded ``crashed`` (the worker
did not know the name), without a word. On the torch, a system written in the tests."""

from __future__ import annotations

import pytest

from diagkg.agents import registry
from diagkg.agents.registry import BaseAssistant
from diagkg.env.actions import Hypothesis
from diagkg.errors import InputError
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution
from diagkg.evaluation.campaign import CampaignConfig

from ..support.torch import torch_memory_store


class Namer(BaseAssistant):
    """Names the battery once, then gives up: right on the flat battery (TORCH.1), wrong on the lead (TORCH.2)."""

    name = "namer"
    api_version = 3

    def suggest(self):
        return None if self.outcomes else Hypothesis("bat")


@pytest.fixture()
def registered():
    added: list[str] = []

    def add(name, factory):
        registry.register(name, factory)
        added.append(name)

    yield add
    for name in added:
        registry._REGISTERED.pop(name, None)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_assistant_registered_at_run_time_runs_in_the_worker_processes_too(tmp_path, registered, workers):
    registered("namer", Namer)
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("namer",), scenarios=(9101, 9102), runs=2, name="mine"))
    # (a time limit puts even one worker's sessions in a process of its own)
    execution.run(store, campaign, workers=workers, session_seconds=30 if workers == 1 else None)
    ends = {key[1:]: r.end for key, r in cp.recorded(store, campaign).items()}
    assert ends == {(9101, 0): "success", (9101, 1): "success", (9102, 0): "surrender", (9102, 1): "surrender"}


def test_a_registration_no_worker_could_have_is_refused_saying_what_to_do(tmp_path, registered):
    store = torch_memory_store(tmp_path)
    registered("inline-namer", lambda **config: Namer(**config))      # a lambda cannot be sent to a process
    lam = cp.create(store, CampaignConfig(assistants=("inline-namer",), scenarios=(9101,), runs=1, name="lambda"))
    with pytest.raises(InputError, match="cannot be sent to the worker processes.*workers=1.*entry point"):
        execution.run(store, lam, workers=2)
    assert execution.run(store, lam, workers=1).progress.stored == 1          # in this process it runs
    registered("namer", Namer)
    dask = cp.create(store, CampaignConfig(assistants=("namer",), scenarios=(9101,), runs=1, name="dask"))
    with pytest.raises(InputError, match="the cluster's workers do not have it"):
        execution.run(store, dask, workers=2, executor="dask")


def test_an_assistant_defined_in_an_interactive_session_is_refused_with_workers(tmp_path):
    # a class of a console, `python -c` or a notebook lives in a __main__ no worker process can import
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    code = textwrap.dedent(f'''
        import sys, pathlib
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from diagkg.agents import registry
        from diagkg.agents.registry import BaseAssistant
        from diagkg.errors import InputError
        from diagkg.evaluation import campaign as cp, execution
        from tests.support.torch import torch_memory_store

        class Mine(BaseAssistant):
            name = "mine"
            def suggest(self):
                return None

        registry.register("mine", Mine)
        store = torch_memory_store(pathlib.Path({str(tmp_path)!r}))
        campaign = cp.create(store, cp.CampaignConfig(assistants=("mine",), scenarios=(9101,), runs=1, name="c"))
        try:
            execution.run(store, campaign, workers=2)
        except InputError as exc:
            print("refused:", exc)
    ''')
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "refused:" in r.stdout and "interactive session" in r.stdout, (r.stdout, r.stderr[-2000:])


def test_a_report_of_an_unfinished_campaign_says_so(tmp_path, registered):
    """A campaign killed before it finished was reported as if complete: one assistant's mean over the scenarios
    it had reached beside another's over all of them, without a word. The report now says which campaign is
    unfinished, whose slots are missing and how to finish it, on stderr and in report.html."""
    from diagkg.evaluation import report

    class Stop(Exception):
        pass

    def stop_after(n):
        def on_progress(prog):
            if prog.ran >= n:
                raise Stop
        return on_progress

    registered("namer", Namer)
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("oracle", "namer"), scenarios=(9101, 9102), runs=1,
                                               name="cut"))
    with pytest.raises(Stop):
        execution.run(store, campaign, on_progress=stop_after(3))      # killed with the namer's last session left
    notes: list[str] = []
    report.write_report(store, [campaign.id], tmp_path / "report", notes=notes)
    (said,) = [n for n in notes if "unfinished" in n]
    assert said == (f"campaign {campaign.id} is unfinished: 1 of 4 assistant × scenario slots have not run all their "
                    "sessions (namer), so its assistants may be compared on different scenarios; resume it with "
                    f"`diagkg evaluate --resume {campaign.id}` to finish it.")
    assert "is unfinished" in (tmp_path / "report" / "report.html").read_text()
    execution.run(store, campaign)
    notes.clear()
    report.write_report(store, [campaign.id], tmp_path / "again", notes=notes)
    assert not [n for n in notes if "unfinished" in n]


class Crasher(BaseAssistant):
    """Measures the battery twice, then raises."""

    name = "crasher"
    api_version = 3

    def suggest(self):
        from diagkg.env.actions import Action

        if len(self.outcomes) >= 2:
            raise RuntimeError("boom")
        return Action("measure_voltage", ("bat",))


def test_a_session_whose_assistant_raised_keeps_the_rounds_it_played_at_their_cost(tmp_path, registered):
    """An in-process assistant that raised after two measurements was stored with one round and 0 minutes: the
    cheapest assistant of the report. Its crashed trajectory now keeps the rounds it played, at their cost."""
    registered("crasher", Crasher)
    store = torch_memory_store(tmp_path)
    campaign = cp.create(store, CampaignConfig(assistants=("crasher",), scenarios=(9101,), runs=1, name="crash"))
    execution.run(store, campaign)
    ((_, rec),) = cp.recorded(store, campaign).items()
    assert rec.end == "crashed"
    import pyoxigraph as ox

    from diagkg.kg.vocab import DK

    (link,) = store.raw.quads_for_pattern(ox.NamedNode(rec.trajectory), DK.recordOf.node, None, None)
    session = link.object

    def one(prop):
        (quad,) = store.raw.quads_for_pattern(session, prop.node, None, link.graph_name)
        return float(quad.object.value)

    measured = store.select("action-catalogue")
    cost = next(float(r["cost"]) for r in measured if r["id"] == "measure_voltage")
    assert cost > 0
    assert (one(DK.costMinutes), one(DK.roundCount)) == (2 * cost, 3)
