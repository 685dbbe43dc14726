"""The what-if service (diagkg.env.worlds): the fault catalogue it reads matches what it
understands, a shadow answers as a real session would, and a real session keeps nothing only
shadows need."""

from __future__ import annotations

import pytest

from diagkg.env import worlds
from diagkg.env.actions import Action, Hypothesis
from diagkg.env.service import Session
from diagkg.env.workspace import resolve_scenario
from diagkg.kg.queries import library
from diagkg.kg.store import KnowledgeStore
from diagkg.runs import ledger

from ..support.stores import shipped_store
from ..support.torch import torch_memory_store


@pytest.fixture(scope="module")
def torch_store(tmp_path_factory) -> KnowledgeStore:
    return torch_memory_store(tmp_path_factory.mktemp("worlds"))


# the registry covers the catalogue (as the observers' does, tests/env/test_typed_session.py)
def test_every_fault_mode_of_the_catalogue_is_one_the_service_understands():
    modes = worlds.fault_modes(shipped_store())
    assert len(modes) >= 8
    kinds = {m.kind for m in modes.values()}
    parameters = set().union(*(m.parameters for m in modes.values()))
    assert kinds - worlds.TARGET_KINDS == set(), "a fault mode targets something no world can inject"
    assert worlds.TARGET_KINDS - kinds == set(), "the service handles a kind of target the catalogue never uses"
    assert parameters - worlds.PARAMETERS == set()
    assert worlds.PARAMETERS - parameters == set()
    names = library().names()
    for m in modes.values():
        assert m.template in names, f"{m.name}: no update template {m.template}"
        assert library().get(m.template).is_update
        assert m.types and m.prior > 0
    # read once per version of the ontology
    assert worlds.fault_modes(shipped_store()) is modes


def test_a_fault_mode_turns_a_target_into_the_fault_the_catalogue_describes():
    modes = worlds.fault_modes(shipped_store())
    depleted = next(m for m in modes.values() if m.name == "DepletedBattery")
    fault = depleted.fault("https://example.org/x/", "bat")
    assert (fault.mode, fault.target, fault.value, fault.probability) == (
        "DepletedBattery", "https://example.org/x/bat", depleted.default, None)
    loose = next(m for m in modes.values() if m.chance)
    assert loose.fault("urn:x:", "lead.n").probability == loose.default
    assert not any(m.enumerable for m in modes.values() if m.to_any_node)


def _single_faults(session: Session) -> list[tuple]:
    return [faults for part in sorted(session.sk.components) for faults in ledger.part_faults(session, part)]


def test_a_shadow_answers_every_step_as_a_real_session_on_the_same_faults(torch_store):
    """On the torch (written in the tests): every single fault of the catalogue on every part,
    every one-target test and repair, tried on one shadow rolled back between tries, reports
    exactly what a fresh real session with those faults reports."""
    real = resolve_scenario(torch_store, "TORCH.1")
    with Session(real, torch_store) as probe:
        probe.reset(seed=0)
        fault_sets = _single_faults(probe)
        steps: list[Action | Hypothesis] = [
            Action(spec.id, (cid,)) for cid in sorted(probe.sk.components)
            for spec in sorted(probe.catalogue.values(), key=lambda s: s.id)
            if spec.target_count == 1 and not spec.parameter and spec.target_kind in ("component", "any")]
        steps.append(Hypothesis({"bat"}))
    assert len(fault_sets) > 8 and len(steps) > 10
    compared = 0
    first = worlds.hypothetical(fault_sets[0], iri="urn:test:0", base=real)
    with worlds.Shadow(first, torch_store) as shadow:
        assert shadow.recall is not None and shadow.budget == worlds.UNBOUNDED
        for n, faults in enumerate(fault_sets[:8]):
            scenario = worlds.hypothetical(faults, iri=f"urn:test:{n}", base=real)
            assert scenario.faulty == frozenset() and scenario.repair == () and scenario.removed == real.removed
            shadow.start(scenario, 0)
            point = shadow.checkpoint()
            for step in steps[::3]:
                got = shadow.trial(point, step)
                with Session(scenario, torch_store, budget=10) as fresh:
                    fresh.reset(seed=0)
                    try:
                        want, *_ = fresh.step(step)
                    except Exception:        # noqa: BLE001 - a step the real session refuses
                        want = None
                assert (got.to_dict() if got else None) == (want.to_dict() if want else None), (faults, step)
                assert shadow.end == fresh.end
                compared += 1
    assert compared > 30


def test_a_real_session_keeps_nothing_only_shadows_need(torch_store):
    with Session(resolve_scenario(torch_store, "TORCH.1"), torch_store) as session:
        session.reset(seed=0)
        session.step(Action("replace_component", ("bat",)))
        assert session.recall is None
        for name in ("trial_cache", "reset_cache", "effect_cache", "access_steps_cache", "reset_reads"):
            assert not hasattr(session, name), name


def test_the_model_based_shadow_is_released_when_its_session_ends(torch_store):
    from diagkg.agents.modelbased import ModelBasedAssistant
    from diagkg.runs.runner import run_session

    assistant = ModelBasedAssistant()
    held: list[worlds.Shadow] = []
    run_session("TORCH.1", assistant, store=torch_store, seed=0, record=False,
                on_round=lambda _r: held.append(assistant.worlds.shadow))
    assert held and all(s is held[0] for s in held) and not isinstance(held[0], type(None))
    assert held[0].closed and assistant.worlds.shadow is None     # its working memory went back


def test_the_model_based_assistant_reads_the_lights_not_their_wording(torch_store, monkeypatch):
    """The lights at the start reach assistants lamp by lamp (obs["lights"], Briefing.lights); the
    words are for people: rewording them changes no decision of the model-based assistant."""
    from diagkg.env import service
    from diagkg.runs.runner import run_session

    def decisions() -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        for scenario in ("TORCH.1", "TORCH.2"):
            result = run_session(scenario, "model-based", store=torch_store, seed=0, record=False,
                                 on_round=lambda r: out.append((r.intention, r.cost)))
            out.append((str(result.end), result.cost))
        return out

    before = decisions()
    with Session(resolve_scenario(torch_store, "TORCH.2"), torch_store) as session:
        obs, _ = session.reset(seed=0)
    assert obs["lights"] and set(obs["lights"].values()) <= {"on", "off", "flickering"}
    monkeypatch.setattr(service, "describe_lights", lambda lights: "Zzz " + ", ".join(sorted(lights))[::-1])
    assert decisions() == before


def test_a_shadow_started_from_an_earlier_start_answers_as_one_injected_afresh(torch_store):
    """A start is worked out once per name of the state graph (Shadow.start): a second shadow of
    the same name, on another working memory, writes back the same state graph (its blank nodes
    included), the same draws of a loose connection, and answers every step as the first; a shadow
    not given a name shares nothing."""
    real = resolve_scenario(torch_store, "TORCH.1")
    modes = worlds.fault_modes(torch_store)
    loose = next(m for m in modes.values() if m.chance).fault("https://example.org/torch/", "lead.n")
    with Session(real, torch_store) as probe:
        probe.reset(seed=0)
        fault_sets = _single_faults(probe)[:6] + [(loose,)]
        steps = [Action(spec.id, (cid,)) for cid in ("bat", "lead", "bulb")
                 for spec in sorted(probe.catalogue.values(), key=lambda s: s.id)
                 if spec.target_count == 1 and not spec.parameter and spec.target_kind in ("component", "any")]
    for n, faults in enumerate(fault_sets):
        scenario = worlds.hypothetical(faults, iri=f"urn:test:opening:{n}", base=real)
        name = f"opening-test-{n}"
        with worlds.Shadow(scenario, torch_store, session_id=name) as first, \
                worlds.Shadow(scenario, torch_store, session_id=name) as second:
            misses = worlds.OPENINGS.misses
            seen = first.start(scenario, 3)
            hits = worlds.OPENINGS.hits
            again = second.start(scenario, 3)
            assert worlds.OPENINGS.hits == hits + 1 and worlds.OPENINGS.misses == misses + 1
            assert again == seen
            assert second.state_key() == first.state_key() and second._snapshot == first._snapshot
            assert second.rng.getstate() == first.rng.getstate()
            assert (second.nominal_state, second.injected_state, second.main_bulbs, second.nominal_bulbs) == \
                (first.nominal_state, first.injected_state, first.main_bulbs, first.nominal_bulbs)
            a, b = first.checkpoint(), second.checkpoint()
            for step in steps:
                got, want = second.trial(b, step), first.trial(a, step)
                assert (got.to_dict() if got else None) == (want.to_dict() if want else None), (faults, step)
                assert second.end == first.end
        with worlds.Shadow(scenario, torch_store) as other:       # a state graph of its own: nothing shared
            before = (worlds.OPENINGS.hits, worlds.OPENINGS.misses, len(worlds.OPENINGS))
            assert other.start(scenario, 3) == seen
            assert (worlds.OPENINGS.hits, worlds.OPENINGS.misses, len(worlds.OPENINGS)) == before
