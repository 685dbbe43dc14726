"""A session whose worker process died keeps the rounds it played: an assistant that named a healthy bulb (a wrong
guess, 120 minutes, a false removal) and then killed its worker, or hung until the campaign's time limit stopped it,
was recorded ``crashed`` with no round, 0 minutes and no false removal — cheaper and cleaner than the same assistant
giving up. Each worker writes its session's rounds as they are played; the campaign reads them when the worker dies.

The assistants are a plug-in distribution written here (trusted, to run in the worker's process), on the torch."""

from __future__ import annotations

import sys
import textwrap

import pytest

from diagkg.agents import registry
from diagkg.evaluation import campaign as cp
from diagkg.evaluation import execution, regret
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from tests.support.torch_optimum import CASES, write_files

PLUGIN = textwrap.dedent('''
    import os
    import signal
    import time

    from diagkg.agents.registry import BaseAssistant
    from diagkg.env.actions import Hypothesis


    class Guesser(BaseAssistant):
        """Names the bulb; when that is wrong, gives up."""

        name = "guess-stop"

        def suggest(self):
            return None if self.outcomes else Hypothesis(frozenset({"bulb"}), "a guess")


    class Killer(Guesser):
        """Names the bulb; when that is wrong, kills the process running it."""

        name = "guess-kill"

        def suggest(self):
            if self.outcomes:
                os.kill(os.getpid(), signal.SIGKILL)
            return super().suggest()


    class Hanger(Guesser):
        """Names the bulb; when that is wrong, never answers again."""

        name = "guess-hang"

        def suggest(self):
            while self.outcomes:
                time.sleep(0.2)
            return super().suggest()
''')
NAMES = ("guess-stop", "guess-kill", "guess-hang")


@pytest.fixture()
def guessers(tmp_path, monkeypatch):
    site = tmp_path / "site"
    info = site / "diagkg_guessers-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: diagkg-guessers\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[diagkg.assistants]\nguess-stop = diagkg_guessers:Guesser\n"
                                           "guess-kill = diagkg_guessers:Killer\nguess-hang = diagkg_guessers:Hanger\n")
    (site / "diagkg_guessers.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", ",".join(NAMES))
    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "never")
    registry.rescan()
    yield
    sys.modules.pop("diagkg_guessers", None)
    monkeypatch.undo()
    registry.rescan()


def test_a_session_that_killed_its_worker_keeps_its_rounds_cost_and_false_removals(tmp_path, guessers):
    with KnowledgeStore(tmp_path / "store") as store:
        load_files(store, write_files(tmp_path, [CASES[0]]))        # the battery is flat: the bulb is healthy
        campaign = cp.create(store, cp.CampaignConfig(assistants=NAMES, scenarios=(CASES[0]["n"],), name="died"))
        execution.run(store, campaign, workers=1, session_seconds=2)
        ends = {a: rec.end for (a, _, _), rec in cp.recorded(store, campaign).items()}
        assert ends == {"guess-stop": "surrender", "guess-kill": "crashed", "guess-hang": "crashed"}
        for rescore in (False, True):
            tables = {t.name: t for t in regret.tables(store, [campaign.id], rescore=rescore)}
            costs = {r[1]: dict(zip(tables["regret"].columns, r, strict=True)) for r in tables["regret"].rows}
            removals = {r[1]: dict(zip(tables["isolation"].columns, r, strict=True)) for r in tables["isolation"].rows}
            for name in NAMES:
                assert costs[name]["mean cost"] == pytest.approx(120.0), (name, rescore)
                assert removals[name]["false removals"] == 1.0, (name, rescore)
