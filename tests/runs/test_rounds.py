"""The typed session contract (issue 27 item 2), on the torch of tests/support/torch.py.

The runner's rounds are :class:`~diagkg.runs.rounds.Round` records that give, as ``to_dict`` and as a
mapping, exactly the entry the runner made before; the trajectory written from them is the one written
from those entries. Plug-in API 3 tells ``record`` the typed Outcome, a plug-in written for version 2 gets
the JSON through its shim; the trajectory records the plug-in API version and the configuration as
applied (defaults included), and a replay of it plays the same session.
"""

from __future__ import annotations

import json
from typing import Any

import pyoxigraph as ox
import pytest

from diagkg.agents import registry
from diagkg.agents.modelbased import ModelBasedAssistant, ModelBasedConfig
from diagkg.agents.registry import Api1Shim, Api2Shim, BaseAssistant
from diagkg.env import contract
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.outcomes import OUTCOME_KEYS, Kind, Outcome, Verdict
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs import trajectory
from diagkg.runs.rounds import LaterOutcome, Round, outcome_from_json
from diagkg.runs.runner import replay_session, run_session


@pytest.fixture()
def torch(torch_copy):
    return torch_copy


class Measurer(BaseAssistant):
    """Measures the battery, then names it; keeps what ``record`` was given. ``depth`` has a default
    it applies when not given (its applied configuration says so)."""

    name = "rounds-v3"
    api_version = 3
    config_keys = frozenset({"depth", "api_key"})
    told: list[Any] = []

    def applied_config(self) -> dict[str, Any]:
        return {"depth": 2, **super().applied_config()}

    def record(self, outcome: Any) -> None:
        super().record(outcome)
        type(self).told.append(outcome)

    def suggest(self) -> Action | Hypothesis | None:
        if not self.outcomes:
            return Action("measure_voltage", ("bat",))
        return Hypothesis({"bat"}, "it reads low") if len(self.outcomes) == 1 else None


class MeasurerV2(Measurer):
    name = "rounds-v2"
    api_version = 2
    told: list[Any] = []


class MeasurerV1(Measurer):
    name = "rounds-v1"
    api_version = 1
    told: list[Any] = []


PLUGINS = (Measurer, MeasurerV2, MeasurerV1)


@pytest.fixture(autouse=True)
def _registered():
    for cls in PLUGINS:
        registry.register(cls.name, cls)
        cls.told.clear()
    yield
    for cls in PLUGINS:
        registry._REGISTERED.pop(cls.name, None)


def test_a_version_3_plugin_is_told_the_typed_outcome_a_version_2_one_json(torch):
    assert isinstance(registry.create("rounds-v2"), Api2Shim) and isinstance(registry.create("rounds-v1"), Api1Shim)
    assert not isinstance(registry.create("rounds-v3"), Api2Shim)
    for name in ("rounds-v3", "rounds-v2"):
        assert run_session("TORCH.1", name, store=torch, record=False).end == "success"
    assert [type(o) for o in Measurer.told] == [Outcome, Outcome]
    assert Measurer.told[1].verdict is Verdict.CORRECT and Measurer.told[1]["verdict"] == "correct"
    assert [type(o) for o in MeasurerV2.told] == [dict, dict]
    assert set(MeasurerV2.told[0]) == set(OUTCOME_KEYS) and MeasurerV2.told[1]["verdict"] == "correct"
    assert MeasurerV2.told[0] == contract.outcome_json(Measurer.told[0]) | {"message": MeasurerV2.told[0]["message"]}


def test_a_round_is_the_runners_entry_as_dict_and_as_mapping(torch):
    seen: list[Round] = []
    result = run_session("TORCH.1", "rounds-v3", store=torch, record=False, on_round=seen.append)
    assert result.record is not None and list(result.record.rounds) == seen
    act, hyp = seen
    assert act.kind is Kind.ACTION and act.action == Action("measure_voltage", ("bat",)) and act.suspects is None
    assert hyp.kind is Kind.HYPOTHESIS and hyp.suspects == ("bat",) and hyp.verdict is Verdict.CORRECT
    for r in seen:
        entry = r.to_dict()
        assert list(entry)[:len(OUTCOME_KEYS)] == list(OUTCOME_KEYS)
        assert dict(r) == entry and list(r) == list(entry) and len(r) == len(entry)
        assert json.loads(json.dumps(entry)) == entry
        assert entry["decision_seconds"] == r.decision_seconds and r.decision_seconds is not None
        assert Round.from_dict(entry).to_dict() == entry
        assert outcome_from_json(contract.outcome_json(r.outcome)).to_dict() == contract.outcome_json(r.outcome)
    assert act.to_dict()["action"] == {"action": "measure_voltage", "targets": ["bat"], "value": None}
    assert "suspects" not in act and hyp["suspects"] == ["bat"] and hyp["explanation"] == "it reads low"
    with pytest.raises(KeyError):
        act["suspects"]
    # the trajectory written from the rounds is the one written from their plain entries
    record = result.record
    plain = trajectory.SessionRecord(**{**vars(record), "rounds": [r.to_dict() for r in seen], "extra": []})
    typed = trajectory.SessionRecord(**{**vars(record), "extra": []})
    assert set(trajectory.to_quads(plain, {"measure_voltage": "x:m"})) == set(
        trajectory.to_quads(typed, {"measure_voltage": "x:m"}))


def test_a_failed_round_is_the_seven_keys_it_always_was():
    bare = Round.failed(1, "(failed)", "The assistant failed: no")
    assert bare.to_dict() == {"round": 1, "kind": "none", "intention": "(failed)", "message": "The assistant failed: no",
                              "cost": 0.0, "success": False, "executed": []}
    assert dict(bare) == bare.to_dict()


def test_keys_of_a_later_outcome_cross_as_json():
    later = LaterOutcome(2, Kind.ACTION, "x", True, "m", 1.0, later={"x_new": [1]})
    assert later["x_new"] == [1] and "x_new" in set(later)
    assert contract.outcome_json(later)["x_new"] == [1]
    again = outcome_from_json(contract.outcome_json(later))
    assert isinstance(again, LaterOutcome) and again.to_dict() == later.to_dict()


def _session_terms(store: KnowledgeStore, iri: str, predicate: Any) -> list[str]:
    return [q.object.value for q in store.raw.quads_for_pattern(ox.NamedNode(iri + "#assistant"), predicate.node,
                                                                None, None)]


def test_the_trajectory_records_the_api_version_and_the_applied_configuration(torch):
    result = run_session("TORCH.1", "rounds-v2", store=torch, config={"api_key": "secret"})
    iri = result.trajectory
    assert _session_terms(torch, iri, DK.pluginApiVersion) == ["2"]
    config = json.loads(_session_terms(torch, iri, DK.assistantConfiguration)[0])
    assert config == {"depth": 2}                   # the default it applied; never the secret
    # replaying from the applied configuration plays the same session, and records the same
    again = replay_session(torch, iri, record=False)
    assert again.record is not None and result.record is not None
    assert [r.to_dict()["intention"] for r in again.record.rounds] == [
        r.to_dict()["intention"] for r in result.record.rounds]
    assert again.record.config == result.record.config and again.record.api_version == 2


def test_the_model_based_assistant_applies_every_key():
    applied = ModelBasedAssistant(sample=5).applied_config()
    assert applied["sample"] == 5 and applied["max_pairs"] == ModelBasedConfig().max_pairs
    assert set(applied) == ModelBasedConfig.keys()
    assert ModelBasedConfig.from_mapping(json.loads(json.dumps(applied))) == ModelBasedConfig(sample=5)
