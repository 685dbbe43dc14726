"""The session in typed parts: observation handlers registered by the catalogue's
``dk:observes`` values, typed outcomes that no decision reads the wording of,
component behaviour under test from the graph, and the Gymnasium contract."""

from __future__ import annotations

import functools

import pytest

import diagkg
from diagkg.env.observations import OBSERVERS
from diagkg.env.outcomes import Refusal, Terminal, TerminalState
from diagkg.env.scenarios import Fault, Scenario
from diagkg.errors import SessionError
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session

from ..support.paths import DATA
from ..support.stores import catalog_store, shipped_store

# the observation registry covers the catalogue
# ---------------------------------------------------------------------------


def test_every_kind_of_observation_in_the_catalogue_has_a_handler():
    kinds = {r["observes"] for r in shipped_store().select("action-catalogue")}
    assert kinds, "the catalogue declares no dk:observes"
    assert kinds - set(OBSERVERS) == set()
    assert set(OBSERVERS) - kinds == set(), "a handler for a kind the catalogue never uses"


def test_an_action_whose_kind_has_no_handler_is_an_error(monkeypatch):
    from diagkg.errors import ActionError

    session = diagkg.make(1, store=shipped_store())
    session.reset(seed=0)
    monkeypatch.delitem(OBSERVERS, "voltages")
    with pytest.raises(ActionError, match="no handler"):
        session.step(diagkg.Action("measure_voltage", ("battery",)))


# ---------------------------------------------------------------------------
# typed outcomes
# ---------------------------------------------------------------------------

def test_refusals_and_terminals_are_typed():
    session = diagkg.make("3CC.S.3", store=shipped_store())
    session.reset(seed=0)
    obs, *_ = session.step(diagkg.Action("inspect_connections", ("nope",)))
    assert obs["refusal"] == Refusal.UNKNOWN_PART and obs["success"] is False
    obs, *_ = session.step(diagkg.Action("inspect_connections", ("ctrl_cable_out_neg",)))
    ends = obs["data"]["ctrl_cable_out_neg"]
    assert set(ends) == {"p", "n"}
    assert all(e["state"] in {s.value for s in TerminalState} for e in ends.values())
    assert all(isinstance(e["attached_to"], list) for e in ends.values())


def test_a_removed_part_is_refused_with_its_own_code():
    store = shipped_store()
    sc = _scenario_with_removed(store)
    removed = sorted(sc.removed)[0]
    session = diagkg.make(sc, store=store)
    session.reset(seed=0)
    obs, *_ = session.step(diagkg.Action("observe_component", (removed,)))
    assert obs["refusal"] == Refusal.REMOVED_PART


def _scenario_with_removed(store):
    from diagkg.env.scenarios import ScenarioCatalog

    catalog = ScenarioCatalog(store)
    return next(catalog.resolve(n) for n in catalog.numbers() if catalog.resolve(n).removed)


def test_terminal_text_is_for_people_only():
    t = Terminal("n", TerminalState.LOOSE, ("a.p", "b.n"))
    assert t.to_dict() == {"state": "loose", "attached_to": ["a.p", "b.n"]}
    assert "a.p, b.n" in t.text() and "loose" in t.text()
    assert "off its terminal" in Terminal("p", TerminalState.OFF).text()


REWORDED_SCENARIOS = [1, 3, 5, 8, 13, 14, 27, 30, 50, 55, 60, 67, 75, 96, 99, 100, 119, 129, 130, 135]


def _decisions(store, number: int) -> list[str]:
    rounds: list[str] = []
    run_session(number, "neuro-symbolic", store=store, record=False,
                on_round=lambda e: rounds.append(e["intention"]))
    return rounds


@functools.lru_cache(maxsize=None)
def _on_shipped(number: int) -> tuple[tuple, tuple[str, ...]]:
    """Neuro-symbolic on a shipped scenario in the shared in-memory catalogue, as messages are worded: its
    (end, cost, rounds) and its decisions. Both slow tests below read it (a session is deterministic, so whichever
    runs first computes it; never called while a test rewords the messages)."""
    rounds: list[str] = []
    r = run_session(number, "neuro-symbolic", store=shipped_store(), record=False,
                    on_round=lambda e: rounds.append(e["intention"]))
    return (r.end, r.cost, r.rounds), tuple(rounds)


@pytest.mark.slow
def test_rewording_every_message_changes_no_decision(monkeypatch):
    store = shipped_store()             # read only: sessions work in their own working memories
    before = {n: list(_on_shipped(n)[1]) for n in REWORDED_SCENARIOS}
    plain_step = diagkg.Session.step

    def reworded(self, act):
        # at the source: the typed outcome an assistant is given, its JSON and the stored round
        outcome, *rest = plain_step(self, act)
        outcome.message = "Zzz " + outcome.message[::-1].upper() + " (reworded)"
        return (outcome, *rest)

    monkeypatch.setattr(diagkg.Session, "step", reworded)
    seen = []
    run_session(3, "neuro-symbolic", store=store, record=False, on_round=lambda e: seen.append(e["message"]))
    assert seen and all(m.startswith("Zzz ") for m in seen)      # the assistant really got reworded messages
    after = {n: _decisions(store, n) for n in REWORDED_SCENARIOS}
    assert after == before


# ---------------------------------------------------------------------------
# component behaviour under test comes from the graph
# ---------------------------------------------------------------------------

WORKBENCH = "https://w3id.org/diagkg/system/workbench/"


@pytest.fixture(scope="module")
def workbench():
    store = KnowledgeStore.memory()
    load_files(store, [DATA / "workbench.ttl"])
    return store


def _workbench_session(store, faults: list[Fault]) -> diagkg.Session:
    sc = Scenario(iri="urn:test:fuse", number=990, id="FUSE", label="fuse", system_iri=WORKBENCH + "workbench",
                  key="workbench", budget=10, observations="the lamp is dark", diagnosis=None, description=None,
                  categories=(), faulty=frozenset({"fuse"}), removed=frozenset(), permanent=frozenset(),
                  notes=(), faults=tuple(faults), repair=())
    session = diagkg.Session(sc, store)
    session.reset(seed=0)
    return session


def test_a_blown_fuse_reads_as_open(workbench):
    healthy = _workbench_session(workbench, [])
    obs, *_ = healthy.step(diagkg.Action("test_continuity", ("fuse",)))
    assert obs["data"]["fuse"]["verdict"] == "nominal"
    blown = _workbench_session(workbench, [Fault("BlownFuse", "blown fuse", "fault-blown-fuse", WORKBENCH + "fuse")])
    assert "lamp" not in blown.initial_result.lit
    obs, *_ = blown.step(diagkg.Action("test_continuity", ("fuse",)))
    assert obs["data"]["fuse"]["verdict"] == "open" and obs["data"]["fuse"]["resistance"] > 1e6
    obs, *_ = blown.step(diagkg.Hypothesis({"fuse"}))
    assert obs["verdict"] == "correct"


# ---------------------------------------------------------------------------
# the Gymnasium contract
# ---------------------------------------------------------------------------

def test_step_before_reset_raises_and_reset_is_keyword_only():
    session = diagkg.make(1, store=shipped_store())
    with pytest.raises(SessionError, match="before reset"):
        session.step(diagkg.Action("observe_component", ("battery",)))
    with pytest.raises(TypeError):
        session.reset(0)          # type: ignore[misc]
    with pytest.raises(SessionError, match="no options"):
        session.reset(seed=0, options={"x": 1})
    obs, info = session.reset(seed=0, options=None)
    assert obs["scenario"] == 1 and info["round"] == 0
    # what is not an action, a hypothesis or None is refused before the round is counted (an AttributeError, and
    # the round spent: nine such steps left a budget of one)
    for bad in ("garbage", {"action": "observe_component"}):
        with pytest.raises(SessionError, match="takes an Action, a Hypothesis or None"):
            session.step(bad)      # type: ignore[arg-type]
    assert session.round == 0
    session.step(diagkg.Hypothesis({"battery"}))
    with pytest.raises(SessionError, match="has ended"):
        session.step(diagkg.Hypothesis({"battery"}))


def test_one_part_named_as_a_string_is_one_part_and_a_seed_and_a_budget_must_be_whole_numbers(tmp_path):
    from ..support.torch import torch_memory_store

    store = torch_memory_store(tmp_path)
    for budget in (0, -3, 2.5):
        with pytest.raises(SessionError, match="at least 1"):
            diagkg.make("TORCH.1", store=store, budget=budget)
    session = diagkg.make("TORCH.1", store=store)       # a system written in the tests
    for bad in ("1", 1.5, True, -5):       # (-5 draws as 5 does)
        with pytest.raises(SessionError, match="whole number"):
            session.reset(seed=bad)       # type: ignore[arg-type]
    session.reset(seed=3)
    # a string is one part, as an action's target may be (it used to name its letters)
    assert diagkg.Hypothesis("bat").components == frozenset({"bat"}) == diagkg.Hypothesis(["bat"]).components
    # an action's value is a number, its text too (a string value broke the round's record: "Unknown format code")
    from diagkg.errors import ActionError

    assert diagkg.Action("adjust_potentiometer", "pot", "0.5").value == 0.5 == diagkg.Action("a", "p", 0.5).value
    assert str(diagkg.Action("adjust_potentiometer", "pot", 1)) == "adjust_potentiometer pot 1"
    for bad in ("half", True, [0.5]):
        with pytest.raises(ActionError, match="value is a number"):
            diagkg.Action("adjust_potentiometer", "pot", bad)      # type: ignore[arg-type]
    # a part is named by a string (a number or None broke the round's record)
    with pytest.raises(ActionError, match="targets are part names"):
        diagkg.Action("observe_component", (5,))                   # type: ignore[arg-type]
    with pytest.raises(ActionError, match="parts are part names"):
        diagkg.Hypothesis([None])                                  # type: ignore[list-item]
    assert diagkg.Action("observe_component", None).targets == ()  # type: ignore[arg-type]
    obs, *_ = session.step(diagkg.Action("measure_voltage", "bat", "2"))       # (a value the action does not take)
    assert obs["success"] is True
    obs, _, terminated, _, info = session.step(diagkg.Hypothesis("bat"))
    assert obs["verdict"] == "correct" and terminated and info["end"] == "success"


# ---------------------------------------------------------------------------
# ties never depend on the store
# ---------------------------------------------------------------------------

@pytest.mark.slow
def test_same_results_on_the_disk_and_the_memory_store(tmp_path):
    from diagkg.kg.loading import load_shipped

    disk = KnowledgeStore(tmp_path / "store")
    load_shipped(disk)
    numbers = list(range(1, 136))
    a = [_on_shipped(n)[0] for n in numbers]           # on the memory store
    b = [(r.end, r.cost, r.rounds) for r in (run_session(n, "neuro-symbolic", store=disk, record=False)
                                             for n in numbers)]
    assert a == b


# ---------------------------------------------------------------------------
# trajectories store structured results, with a format version
# ---------------------------------------------------------------------------

STRUCTURED = """
PREFIX sosa: <http://www.w3.org/ns/sosa/>
PREFIX dk: <https://w3id.org/diagkg/ontology#>
SELECT ?feature ?property ?state ?verdict ?text WHERE {
  ?o a sosa:Observation ; sosa:hasFeatureOfInterest ?feature ; sosa:observedProperty ?property .
  OPTIONAL { ?o sosa:hasResult ?r . OPTIONAL { ?r dk:terminalState ?state } }
  OPTIONAL { ?o sosa:hasResult ?verdict . ?verdict a dk:Verdict }
  OPTIONAL { ?o sosa:hasSimpleResult ?text }
}"""


def test_trajectories_store_inspections_and_verdicts_as_data():
    from diagkg.kg.vocab import DK
    from diagkg.runs import trajectory

    store = catalog_store()
    steps = [diagkg.Action("inspect_connections", ("ctrl_cable_out_pos",)),
             diagkg.Action("test_continuity", ("main_bulb",)), None]

    from diagkg.agents.registry import BaseAssistant

    class Script(BaseAssistant):
        name = "script"

        def suggest(self):
            return steps.pop(0)

    result = run_session("3CC.S.4", Script(), store=store)
    rows = store.select(STRUCTURED)
    terminals = [r for r in rows if r["property"] == str(DK.TerminalConnection)]
    assert {r["feature"].rsplit("/", 1)[-1] for r in terminals} == {"ctrl_cable_out_pos.p", "ctrl_cable_out_pos.n"}
    assert {r["state"] for r in terminals} == {str(DK.Attached), str(DK.Off)}     # 3CC.S.4: its p end is off
    verdicts = [r["verdict"] for r in rows if r["property"] == str(DK.TestVerdict)]
    assert verdicts == [str(DK.VerdictNominal)]
    assert not [r for r in rows if r["property"] == str(DK.InspectionResult)]       # nothing left as text
    version = store.select("PREFIX dk: <https://w3id.org/diagkg/ontology#> SELECT ?v WHERE { ?t dk:formatVersion ?v }")
    assert [r["v"] for r in version] == [trajectory.FORMAT_VERSION] == [4]
    assert result.rounds == 2


def test_continuity_of_every_component_type_comes_from_its_declaration(workbench):
    from diagkg.env.observations import continuity

    session = _workbench_session(workbench, [])
    state, result = session.state(), session.simulate()
    verdicts = {cid: continuity(session, cid, state, result)[0] for cid in session.sk.components}
    assert verdicts["bat"] == "not applicable (a source)"          # stamped as a V element
    assert verdicts["diode"] == verdicts["led"] == "nominal"       # D elements: conduct one way
    for cid in ("fuse", "sw", "cs", "lamp", "r_led", "pot", "ldr", "ground_lead", "aux_lamp"):
        assert verdicts[cid] == "nominal", cid
    # normally open and not energised: open, as a sound one is at rest (it read "open", as a broken one does)
    assert verdicts["relay"] == "nominal"
    blown = _workbench_session(workbench, [Fault("BlownFuse", "blown fuse", "fault-blown-fuse", WORKBENCH + "fuse")])
    assert continuity(blown, "fuse", blown.state(), blown.simulate())[0] == "open"
