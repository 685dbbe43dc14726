"""A live session over HTTP on a system written here (a bicycle dynamo lighting set, its front lamp in a
lamp box), against the Python API: the menus a person playing the assistant is offered hold only moves
the service agent takes, and a session's start takes its numbers as ``reset`` does."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

import diagkg
from diagkg.env.actions import Action
from diagkg.env.outcomes import Refusal
from diagkg.kg.store import KnowledgeStore

from ..support.serving import TOKEN, start_server, stop_server, wait_session
from ..support.stores import loaded_quads

AUTH = {"authorization": f"Bearer {TOKEN}"}

BIKE = """\
@prefix :        <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:bike a dk:System ; dk:systemKey "bike" ; dcterms:identifier "bike" ; rdfs:label "Bicycle dynamo lights" ;
    dk:groundReference :dyn.neg ;
    dcterms:description "A hub dynamo feeds a front lamp (in a lamp box) and a rear LED through a fuse and a switch." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :bike .
:box a dk:Enclosure ; dcterms:identifier "box" ; rdfs:label "Lamp box" ; dk:partOf :bike ;
    dk:affords dk:Observable, dk:Movable .
:dyn a dk:VoltageSource ; dcterms:identifier "dyn" ; rdfs:label "Hub dynamo" ; dk:partOf :frame ;
    dk:voltage 6 ; dk:internalResistance 2 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :dyn.pos, :dyn.neg .
:dyn.pos a dk:Port ; dk:portName "pos" . :dyn.neg a dk:Port ; dk:portName "neg" .
:fuse a dk:Fuse ; dcterms:identifier "fuse" ; rdfs:label "1 A fuse" ; dk:partOf :frame ; dk:ratedCurrent 1.0 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :fuse.p, :fuse.n .
:fuse.p a dk:Port ; dk:portName "p" . :fuse.n a dk:Port ; dk:portName "n" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Light switch" ; dk:partOf :frame ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" . :sw.n a dk:Port ; dk:portName "n" .
:cable a dk:Cable ; dcterms:identifier "cable" ; rdfs:label "Front lamp cable" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cable.p, :cable.n .
:cable.p a dk:Port ; dk:portName "p" . :cable.n a dk:Port ; dk:portName "n" .
:lamp a dk:Bulb ; dcterms:identifier "lamp" ; rdfs:label "Front lamp" ; dk:partOf :frame ; dk:containedIn :box ;
    dk:resistance 12 ; dk:powerThreshold 0.5 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :lamp.p, :lamp.n .
:lamp.p a dk:Port ; dk:portName "p" . :lamp.n a dk:Port ; dk:portName "n" .
:rear_r a dk:Resistor ; dcterms:identifier "rear_r" ; rdfs:label "Rear LED resistor" ; dk:partOf :frame ;
    dk:resistance 150 ; dk:affords dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rear_r.p, :rear_r.n .
:rear_r.p a dk:Port ; dk:portName "p" . :rear_r.n a dk:Port ; dk:portName "n" .
:rear a dk:LED ; dcterms:identifier "rear" ; rdfs:label "Rear red LED" ; dk:partOf :frame ;
    dk:forwardVoltage 1.8 ; dk:color "red" ; dk:isIndicator false ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :rear.anode, :rear.cathode .
:rear.anode a dk:Port ; dk:portName "anode" . :rear.cathode a dk:Port ; dk:portName "cathode" .
:dyn.pos dk:connectedTo :fuse.p .
:fuse.n dk:connectedTo :sw.p .
:sw.n dk:connectedTo :cable.p, :rear_r.p .
:cable.n dk:connectedTo :lamp.p .
:rear_r.n dk:connectedTo :rear.anode .
:lamp.n dk:connectedTo :dyn.neg .
:rear.cathode dk:connectedTo :dyn.neg .
"""

BURNT = """\
@prefix :        <https://example.org/bike-scenarios/> .
@prefix sys:     <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:BIKE.1 a dk:Scenario ; dk:scenarioNumber 9801 ; dcterms:identifier "BIKE.1" ; rdfs:label "Front lamp burnt out" ;
    dk:onSystem sys:bike ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The front lamp stays dark; the rear light is lit." ;
    dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 8 .
"""


@pytest.fixture(scope="module")
def bike_quads(tmp_path_factory) -> list:
    """The bicycle and its scenario, loaded (validated, reasoned) once for the module."""
    folder = tmp_path_factory.mktemp("bike")
    return loaded_quads({folder / "bike.ttl": BIKE, folder / "b1.ttl": BURNT})


def bike_store(path: Path, quads: list) -> Path:
    """An on-disk store of its own holding ``quads``."""
    store = KnowledgeStore(path)
    store.add_quads(quads)
    store.close()
    return path


@pytest.fixture(scope="module")
def bike(tmp_path_factory, bike_quads) -> Path:
    return bike_store(tmp_path_factory.mktemp("bike-served") / "store", bike_quads)


@pytest.fixture(scope="module")
def server(bike):
    with pytest.MonkeyPatch.context() as env:     # no language model configured
        for name in ("DIAGKG_LLM_BASE_URL", "OPENAI_BASE_URL", "DIAGKG_LLM_MODEL"):
            env.delenv(name, raising=False)
        proc, url = start_server(bike)
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client
    finally:
        stop_server(proc)



def test_the_menus_offer_only_moves_the_service_agent_takes(server, bike):
    sid = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "human"}, headers=AUTH).json()["id"]
    menus = wait_session(server, sid)["pending"]["menus"]
    offered = {a["id"]: a["targets"] for a in menus["actions"]}
    # what the Python API refuses as a move that is not one (a kind or type the action does not take)
    store = KnowledgeStore(bike)
    with diagkg.make("BIKE.1", store=store) as session:
        session.reset(seed=0)
        for aid, targets in sorted(offered.items()):
            for target in targets if aid != "test_control_subchain" else ():   # (control modules' cubes only)
                count = session.catalogue[aid].target_count
                outcome = session.step(Action(aid, (target,) * count, 0.5))[0]
                assert outcome.refusal not in (Refusal.TARGET_KIND, Refusal.COMPONENT_TYPE), (aid, target, outcome.message)
                session.reset(seed=0)
    store.close()
    assert "adjust_potentiometer" not in offered           # no potentiometer here: it offered every part
    assert offered["invert_enclosure"] == ["box"] and "box" not in offered["measure_voltage"]
    assert "box" in offered["observe_component"]
    # a move outside the menus is refused before a round is played
    r = server.post(f"/api/sessions/{sid}/step", json={"action": "measure_voltage", "targets": ["box"]}, headers=AUTH)
    assert r.status_code == 400, r.text
    r = server.post(f"/api/sessions/{sid}/step", json={"action": "adjust_potentiometer", "targets": ["lamp"],
                                                        "value": 0.5}, headers=AUTH)
    assert r.status_code == 400, r.text
    assert server.post(f"/api/sessions/{sid}/step", json={"give_up": True}, headers=AUTH).status_code == 200
    assert wait_session(server, sid)["rounds"] == 0


@pytest.mark.parametrize("body", [{"seed": True}, {"seed": "3"}, {"seed": 3.0}, {"budget": True}, {"budget": "4"},
                                  {"seed": -1}, {"budget": 0}])
def test_a_start_takes_whole_numbers_as_reset_does(server, body):
    # reset(seed=True) and reset(seed="3") are refused; the server ran them as seeds 1 and 3
    r = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "human", **body}, headers=AUTH)
    assert r.status_code == 422, r.text


def test_a_start_takes_the_scenario_by_number(server):
    r = server.post("/api/sessions", json={"scenario": 9801, "assistant": "oracle", "seed": 2}, headers=AUTH)
    assert r.status_code == 200, r.text
    s = wait_session(server, r.json()["id"])
    assert s["scenario"] == "BIKE.1" and s["seed"] == 2


def test_an_answer_sent_twice_plays_one_round(server):
    # a double click (or a request sent again) answered the next question too: the same move played twice
    sid = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "human"}, headers=AUTH).json()["id"]
    question = wait_session(server, sid)["pending"]["question"]
    move = {"action": "measure_voltage", "targets": ["lamp"], "question": question}
    assert server.post(f"/api/sessions/{sid}/step", json=move, headers=AUTH).status_code == 200
    s = wait_session(server, sid)
    assert s["rounds"] == 1 and s["pending"]["question"] != question
    again = server.post(f"/api/sessions/{sid}/step", json=move, headers=AUTH)
    assert again.status_code == 409, again.text
    # what is not a choice is said so, and plays nothing
    for wrong in ({"hypothesis": []}, {"execute": True}):
        r = server.post(f"/api/sessions/{sid}/step", json=wrong, headers=AUTH)
        assert r.status_code == 400 and "None" not in r.text, r.text
    assert server.post(f"/api/sessions/{sid}/step", json={"give_up": True}, headers=AUTH).status_code == 200
    s = wait_session(server, sid)
    assert s["status"] == "done" and s["result"]["rounds"] == 1 and s["result"]["cost"] == 20.0


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "text/turtle"])
def test_a_body_that_is_not_json_is_said_so(server, content_type):
    # curl -d sends a form: the JSON in it read as one string, 422 "Input should be a valid dictionary"
    body = '{"scenario": "BIKE.1", "assistant": "oracle"}'
    r = server.post("/api/sessions", content=body, headers={**AUTH, "content-type": content_type})
    assert r.status_code == 415 and "application/json" in r.text, r.text
    assert server.post("/api/sessions", content="{}", headers={"content-type": content_type}).status_code == 403
    r = server.post("/api/sessions", content=body, headers={**AUTH, "content-type": "application/json; charset=utf-8"})
    assert r.status_code == 200, r.text


def test_an_assistant_refused_before_its_first_round_leaves_no_trajectory(server):
    # `diagkg run --assistant llm` without an endpoint says why and stores nothing; the server stored a session
    # ended "crashed" after 0 rounds, listed among the trajectories beside those that ran
    # (counted by assistant: the server is the module's, and another test's session may be stored meanwhile)
    def llm_trajectories() -> list[str]:
        return [t["trajectory"] for t in server.get("/api/trajectories").json() if t["assistant"] == "llm"]

    before = llm_trajectories()
    r = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "llm"}, headers=AUTH)
    assert r.status_code == 200, r.text
    s = wait_session(server, r.json()["id"])
    assert s["status"] == "failed" and s["result"]["trajectory"] is None and "endpoint" in s["result"]["refused"]
    assert [e["type"] for e in s["events"]][-1] == "error"
    assert llm_trajectories() == before


def test_an_ended_sessions_schematic_stays_as_it_ended(server):
    # an ended session's working memory went back to the pool: its schematic read what the next session left
    # there (here every lamp lit, as a replaced lamp in another session)
    from diagkg.sim.schematic import DARK, LIT

    first = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "human"}, headers=AUTH).json()["id"]
    wait_session(server, first)
    assert server.post(f"/api/sessions/{first}/step", json={"give_up": True}, headers=AUTH).status_code == 200
    assert wait_session(server, first)["status"] == "done"
    ended = server.get(f"/api/sessions/{first}/schematic.svg").text
    assert (ended.count(LIT), ended.count(DARK)) == (1, 1)          # the rear LED lit, the front lamp dark
    other = server.post("/api/sessions", json={"scenario": "BIKE.1", "assistant": "human"}, headers=AUTH).json()["id"]
    wait_session(server, other)
    move = {"action": "replace_component", "targets": ["lamp"]}
    assert server.post(f"/api/sessions/{other}/step", json=move, headers=AUTH).status_code == 200
    assert wait_session(server, other)["status"] == "done"
    assert server.get(f"/api/sessions/{other}/schematic.svg").text.count(LIT) == 2
    later = server.get(f"/api/sessions/{first}/schematic.svg").text
    assert (later.count(LIT), later.count(DARK)) == (1, 1)


def test_live_sessions_are_capped_and_one_nobody_answers_stops_keeping_what_it_played(tmp_path, bike_quads):
    # each live session holds a thread, and one waiting for a person waited for ever: a token holder could leave any
    # number of them waiting. Past --max-sessions a start gets 429; past --session-idle a session stops, stored
    proc, url = start_server(bike_store(tmp_path / "store", bike_quads), "--max-sessions", "2", "--session-idle", "2")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            start = {"scenario": "BIKE.1", "assistant": "human"}
            first = client.post("/api/sessions", json=start, headers=AUTH).json()["id"]
            question = wait_session(client, first)["pending"]["question"]
            move = {"action": "measure_voltage", "targets": ["lamp"], "question": question}
            assert client.post(f"/api/sessions/{first}/step", json=move, headers=AUTH).status_code == 200
            second = client.post("/api/sessions", json=start, headers=AUTH).json()["id"]
            wait_session(client, second)
            refused = client.post("/api/sessions", json=start, headers=AUTH)
            assert refused.status_code == 429 and refused.headers["retry-after"], refused.text
            for _ in range(200):                  # nobody answers either: each stops after 2 s, what it played stored
                sessions = [client.get(f"/api/sessions/{sid}").json() for sid in (first, second)]
                if all(s["status"] == "done" for s in sessions):
                    break
                time.sleep(0.1)
            assert [s["result"]["rounds"] for s in sessions] == [1, 0], sessions
            assert all(s["result"]["trajectory"] and s["events"][-2]["type"] == "idle" for s in sessions), sessions
            assert client.post("/api/sessions", json=start, headers=AUTH).status_code == 200
    finally:
        stop_server(proc)
