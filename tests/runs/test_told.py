"""What an assistant is told, and what only the evaluator knows (an outside researcher's plug-ins, written to game
the numbers): an assistant that named every part at once was told which of them were faulty (an overbroad
hypothesis's ``actually_faulty``), and named those next: success in two rounds on any scenario, "diagnosed" more
often than the privileged oracle. One that turned each battery round or replaced parts read the round's healthy
parts, which said whether the part had any fault at all, even where another fault kept the system dark. Now the
outcome an assistant is told (``Outcome.told``) carries neither; the trajectory keeps them (false removals)."""

from __future__ import annotations

from typing import Any

from diagkg.agents.registry import BaseAssistant, Briefing
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.outcomes import Outcome
from diagkg.runs.runner import run_session

from ..support.torch import torch_memory_store


class Shotgun(BaseAssistant):
    """Names every component, then turns the battery round, then replaces the lead, then names what it was told."""

    name = "shotgun"

    def setup(self, briefing: Briefing) -> None:
        super().setup(briefing)
        self.told: list[Outcome] = []
        parts = sorted(p for p, kind in briefing.parts.items() if kind not in ("enclosure", "module", "opening"))
        self.moves: list[Any] = [Hypothesis(frozenset(parts)), Action("reverse_battery", ("bat",)),
                                 Action("reverse_battery", ("bat",)), Action("replace_component", ("lead",))]

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.told.append(outcome)

    def suggest(self) -> Action | Hypothesis | None:
        if self.moves:
            return self.moves.pop(0)
        faulty = self.told[0].data.get("actually_faulty") if self.told else None
        return Hypothesis(frozenset(faulty)) if faulty else None


def test_an_assistant_is_told_neither_the_faulty_parts_of_an_overbroad_naming_nor_a_rounds_healthy_parts(tmp_path):
    store = torch_memory_store(tmp_path)            # TORCH.2: the bulb lead's end off; the battery is fine
    agent = Shotgun()
    kept: list[Any] = []
    result = run_session("TORCH.2", agent, store=store, seed=0, record=False, on_round=kept.append)
    first = agent.told[0]
    assert first.verdict is not None and first.verdict.value == "overbroad"
    assert "actually_faulty" not in first.data and first.healthy == (), first
    # turning a healthy battery round, and back, and replacing the lead (faulty): nothing told of the parts
    assert [o.intention for o in agent.told[1:4]] == ["reverse_battery bat", "reverse_battery bat", "replace_component lead"]
    assert all(o.healthy == () for o in agent.told)
    # the evaluator keeps them: the overbroad naming's healthy parts, and the battery turned round while healthy
    assert "bat" in kept[0].healthy and "lead" not in kept[0].healthy
    assert kept[1].healthy == ("bat",)
    assert result.end in ("success", "success_no_hypothesis") or len(agent.told) == 4


def test_a_box_is_turned_over_once_for_all_the_parts_named_behind_it():
    # naming several parts of one cube charged turning the cube over once per part (three times for cube_psu)
    import diagkg

    from ..support.stores import shipped_store

    with diagkg.make("3CC.S.3", store=shipped_store()) as session:
        session.reset(seed=0)
        outcome, *_ = session.step(Hypothesis(frozenset(session.sk.components)))
    access = [(a, t) for a, t, _ in outcome.executed if a != "verify_repair"]
    assert access and len(access) == len(set(access)), access
    assert outcome.cost == sum(c for *_, c in outcome.executed)


class Scribbler(BaseAssistant):
    """Measures the bulb, then writes over what it was told, then gives up."""

    name = "scribbler"
    api_version = 3

    def suggest(self) -> Action | None:
        return None if self.outcomes else Action("measure_voltage", ("bulb",))

    def record(self, outcome: Outcome) -> None:
        super().record(outcome)
        self.told = outcome
        volts = outcome.data["bulb"].port_voltages
        for port in volts:
            volts[port] = -999.0


def test_an_assistant_that_writes_over_what_it_was_told_changes_nothing_of_the_record(tmp_path):
    """An in-process plug-in that set a reading it was told to -999 V stored -999 V in the trajectory (its text still
    said the true value): it was given the record's own objects."""
    store = torch_memory_store(tmp_path)
    agent = Scribbler()
    result = run_session("TORCH.1", agent, store=store, seed=0)
    assert set(agent.told.data["bulb"].port_voltages.values()) == {-999.0}     # it did write over its copy
    kept = result.record.rounds[0]["data"]["bulb"]["port_voltages"]
    assert kept and -999.0 not in kept.values(), kept
    stored = {float(r["v"]) for r in store.select(
        "SELECT ?v WHERE { GRAPH ?g { ?o <http://qudt.org/schema/qudt/numericValue> ?v } }")}
    assert stored and -999.0 not in stored, stored
