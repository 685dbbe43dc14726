"""A system replaced through ``POST /api/scenarios?replace=true`` while ``diagkg serve`` runs (a bicycle lamp
written here, its fuse rated 1 A, then 0.3 A: below what the lamps draw): the answer carries the warnings
``diagkg load`` prints (it said nothing of them), a session already under way goes on with the system it
started on, and the next session is judged against the new one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from diagkg.kg.store import KnowledgeStore

from ..support.bike_lamp import bike_lamp
from ..support.serving import TOKEN, start_server, stop_server, wait_session
from ..support.stores import loaded_quads
from .conftest import CHROMIUM

AUTH = {"authorization": f"Bearer {TOKEN}"}


BURNT = """\
@prefix sys:     <https://example.org/cyclamp/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

<https://example.org/cyclamp-scenarios/CYC.1> a dk:Scenario ; dk:scenarioNumber 9731 ; dcterms:identifier "CYC.1" ;
    rdfs:label "Front lamp burnt" ; dk:onSystem sys:cyclamp ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:OpenComponent ; dk:faultTarget sys:lamp ] ;
    dk:initialObservations "The lamp stays dark." ; dk:faultyComponent sys:lamp ;
    dk:idealRepair [ a dk:RepairPlan ; dk:step [ a dk:DiagnosticAction ; dk:position 1 ;
        dk:actionType dk:ReplaceComponent ; dk:target sys:lamp ] ] ;
    dk:actionBudget 6 .
"""


@pytest.fixture(scope="module")
def cyclamp_quads(tmp_path_factory) -> list:
    """The bicycle lamp (fuse 1 A) and its scenario, loaded (validated, reasoned) once for the module."""
    folder = tmp_path_factory.mktemp("cyclamp")
    return loaded_quads({folder / "cyclamp.ttl": bike_lamp("cyclamp", 1.0), folder / "c1.ttl": BURNT})


@pytest.fixture()
def server(tmp_path: Path, cyclamp_quads):
    """A server of its own on an on-disk store of its own (each test writes: a replaced system, a load)."""
    store = KnowledgeStore(tmp_path / "store")
    store.add_quads(cyclamp_quads)
    store.close()
    proc, url = start_server(tmp_path / "store")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client
    finally:
        stop_server(proc)



def _start(client: httpx.Client) -> str:
    sid: str = client.post("/api/sessions", json={"scenario": "CYC.1", "assistant": "human"}, headers=AUTH).json()["id"]
    wait_session(client, sid)
    return sid


def _replace_lamp(client: httpx.Client, sid: str) -> dict[str, Any]:
    r = client.post(f"/api/sessions/{sid}/step", json={"action": "replace_component", "targets": ["lamp"]}, headers=AUTH)
    assert r.status_code == 200, r.text
    s = wait_session(client, sid, done=True)
    return next(e["round"] for e in s["events"] if e["type"] == "round")


def test_a_system_replaced_while_serving(server):
    before = _start(server)
    upload = bike_lamp("cyclamp", 0.3)
    r = server.post("/api/scenarios", params={"name": "cyclamp.ttl"}, content=upload,
                    headers={**AUTH, "content-type": "text/turtle"})
    assert r.status_code == 409, r.text                 # the store holds it: replacing it is asked for
    r = server.post("/api/scenarios", params={"name": "cyclamp.ttl", "replace": "true"}, content=upload,
                    headers={**AUTH, "content-type": "text/turtle"})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["replaced"] and answer["inferred"] == {"cyclamp": answer["inferred"]["cyclamp"]}
    assert answer["revalidated"], answer
    # as `diagkg load` warns: the fuse blows as set up, and then no lamp lights (the answer had no warning)
    assert {(w["scenario"], w["check"]) for w in answer["warnings"]} >= {("cyclamp", "ratings"), ("cyclamp", "lamps")}
    assert all(w["warning"] for w in answer["warnings"])
    # the session under way goes on with the system it started on: the new lamp lights, the session ends
    first = _replace_lamp(server, before)
    assert first["message"].endswith("The system works again.") and "lit" in first["message"], first
    # a new session works on the replaced system: the new lamp's current blows the 0.3 A fuse
    after = _start(server)
    for move in ({"action": "replace_component", "targets": ["lamp"]}, {"action": "observe_component", "targets": ["fuse"]}):
        assert server.post(f"/api/sessions/{after}/step", json=move, headers=AUTH).status_code == 200
        s = wait_session(server, after)
    rounds = [e["round"] for e in s["events"] if e["type"] == "round"]
    assert [r["data"] for r in rounds] == [{"lamp": {"text": "lamp (bulb): it is dark.", "type": "Bulb", "lit": False}},
                                           {"fuse": {"text": "fuse (fuse): it is blown.", "type": "Fuse",
                                                     "damage": ["blown"]}}], rounds


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (scripts/setup.sh --dev)")
def test_the_page_shows_what_a_load_warns_of(server, chromium):
    text = bike_lamp("cyclamp2", 0.3)
    context = chromium.new_context()          # the shared Chromium (tests/server/conftest.py), a context of its own
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(str(server.base_url) + "/")
        page.fill("#token", TOKEN)
        page.wait_for_selector("#schematic svg")
        page.fill("#editor", text)
        page.fill("#filename", "cyclamp2.ttl")
        page.click("#load")
        page.wait_for_function("document.querySelector('#verdict').textContent.startsWith('Loaded')")
        shown = page.inner_text("#annotated")
    finally:
        context.close()
    assert "warning: cyclamp2: ratings: fuse is blown in the nominal state" in shown, shown
    assert not errors, errors
