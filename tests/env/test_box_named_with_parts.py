"""A hypothesis that names a whole box is wrong whatever else it names, and is charged and counted as any naming is:
120 minutes a box, the repairs of the parts named beside it with their access, and those that were healthy as false
removals. Adding a box to a hypothesis naming every part made it cost 120 minutes in all and count no false removal
(on the torch, written in the tests; the battery is flat)."""

from __future__ import annotations

import pytest

import diagkg
from diagkg.env.actions import Hypothesis
from diagkg.runs import scoring

from ..support.torch import torch_memory_store


@pytest.fixture(scope="module")
def torch(tmp_path_factory):
    return torch_memory_store(tmp_path_factory.mktemp("torch"))


def test_parts_named_beside_a_box_are_charged_and_their_healthy_ones_counted(torch):
    with diagkg.make("TORCH.1", torch) as session:
        session.reset(seed=0)
        everything = {"bulb", "sw", "led", "r_led", "lead", "ret", "case"}      # every part but the battery, and the case
        outcome, cost, terminated, _, _ = session.step(Hypothesis(frozenset(everything)))
        assert outcome["verdict"] == "wrong" and not terminated
        # four components replaced (480), two cables put back (2 × 10), the case as a replacement (120)
        assert cost == 620.0
        assert outcome["healthy"] == ["bulb", "lead", "led", "r_led", "ret", "sw"]
        figures = scoring.score({"bat"}, [{"kind": "hypothesis", "verdict": "wrong", "suspects": sorted(everything),
                                           "cost": cost, "round": 1, "healthy": outcome["healthy"]}])
        assert figures.false_removals == 6
        # the battery named with the case: wrong (nothing repaired), charged both, no false removal
        outcome, cost, terminated, _, _ = session.step(Hypothesis(frozenset({"bat", "case"})))
        assert (outcome["verdict"], cost, outcome["healthy"], terminated) == ("wrong", 240.0, [], False)
        assert not session.repaired


def test_naming_the_whole_system_is_wrong_like_a_box(torch, monkeypatch):
    """"The battery, and the whole torch": the system's own name was ignored as an unknown name, so the hypothesis
    was correct. It is the widest box of all now: wrong, 120 minutes, and the stored trajectory conforms."""
    from diagkg.agents.registry import BaseAssistant
    from diagkg.runs.runner import run_session

    class Hedger(BaseAssistant):
        name = "adv-hedger"

        def suggest(self):
            return None if self.outcomes else Hypothesis(frozenset({"bat", "torch"}), "the battery, or the whole torch")

    monkeypatch.setenv("DIAGKG_CHECK_TRAJECTORIES", "always")
    result = run_session("TORCH.1", Hedger(), store=torch, seed=0, keep_ledger=False)
    (first,) = result.record.rounds
    assert (result.end, first["verdict"], result.cost) == ("surrender", "wrong", 240.0)
    assert result.diagnosis is not None and not result.diagnosis.diagnosed
    # a name of nothing in the system is still ignored beside a part
    with diagkg.make("TORCH.1", torch) as session:
        session.reset(seed=0)
        assert session.step(Hypothesis(frozenset({"bat", "no_such_part"})))[0]["verdict"] == "correct"
