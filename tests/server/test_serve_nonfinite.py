"""A JSON body with numbers JSON cannot write back (``NaN``, ``Infinity``, ``1e999``: Python's json reads
them as floats) in a field that takes a whole number is refused with 422, on a real ``diagkg serve`` of a
user's bicycle lamp (tests/support/bike_lamp.py). FastAPI's answer echoes the input, which could not be written as
JSON: the client got 500 and the log a traceback."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.bike_lamp import bike_lamp, cable_off
from ..support.serving import TOKEN, start_server, stop_server, wait_session

AUTH = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder: Path = tmp_path_factory.mktemp("dynlamp")
    (folder / "dynlamp.ttl").write_text(bike_lamp("dynlamp"))
    (folder / "dyn1.ttl").write_text(cable_off("dynlamp", "DYN.1", 9711))
    store = KnowledgeStore(folder / "store")
    load_files(store, [folder / "dynlamp.ttl", folder / "dyn1.ttl"])
    store.close()
    proc, url = start_server(folder / "store")
    try:
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client
    finally:
        stop_server(proc)


@pytest.mark.parametrize("body", [
    '{"scenario": "DYN.1", "assistant": "human", "seed": NaN}',
    '{"scenario": "DYN.1", "assistant": "human", "seed": 1e999}',
    '{"scenario": "DYN.1", "assistant": "human", "budget": -Infinity}',
    '{"scenario": NaN, "assistant": "human"}',
])
def test_a_start_with_a_number_json_cannot_hold_is_refused(server, body):
    r = server.post("/api/sessions", content=body, headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][0] == "body"


def test_an_answer_with_a_number_json_cannot_hold_is_refused_and_plays_nothing(server):
    sid = server.post("/api/sessions", json={"scenario": "DYN.1", "assistant": "human"}, headers=AUTH).json()["id"]
    wait_session(server, sid)
    for question in ("NaN", "1e999", "-Infinity"):
        r = server.post(f"/api/sessions/{sid}/step", headers=AUTH,
                        content='{"action": "observe_component", "targets": ["cable"], "question": %s}' % question)
        assert r.status_code == 422, r.text
    r = server.post(f"/api/sessions/{sid}/step", json={"action": "reconnect_cable", "targets": ["cable"]}, headers=AUTH)
    assert r.status_code == 200, r.text
    s = wait_session(server, sid, done=True)
    assert s["result"]["rounds"] == 1 and s["result"]["end"] == "success_no_hypothesis", s


def test_an_action_value_is_a_finite_number_for_an_action_that_takes_one(server):
    # measure_voltage with "value": NaN (or 1e999, or 0.5) was played, the value recorded in the trajectory as the
    # action's parameter ("nan", "inf"); the page sends none for an action without a parameter
    sid = server.post("/api/sessions", json={"scenario": "DYN.1", "assistant": "human"}, headers=AUTH).json()["id"]
    wait_session(server, sid)
    for value in ("NaN", "1e999", "-Infinity"):
        r = server.post(f"/api/sessions/{sid}/step", headers=AUTH,
                        content='{"action": "measure_voltage", "targets": ["lamp"], "value": %s}' % value)
        assert r.status_code == 422, r.text
    r = server.post(f"/api/sessions/{sid}/step", json={"action": "measure_voltage", "targets": ["lamp"], "value": 0.5},
                    headers=AUTH)
    assert r.status_code == 400 and "takes no value" in r.text, r.text
    assert server.get(f"/api/sessions/{sid}").json()["rounds"] == 0
    assert server.post(f"/api/sessions/{sid}/step", json={"give_up": True}, headers=AUTH).status_code == 200


def test_a_person_playing_the_assistant_takes_no_configuration(server):
    # `diagkg run --assistant human --config '{"zzz": 1}'` is refused; the server took the configuration and
    # dropped it (the oracle's was refused)
    before = len(server.get("/api/sessions").json())
    r = server.post("/api/sessions", json={"scenario": "DYN.1", "assistant": "human", "config": {"zzz": 1}}, headers=AUTH)
    assert r.status_code == 400 and "human takes no configuration key 'zzz'" in r.text, r.text
    assert len(server.get("/api/sessions").json()) == before
    r = server.post("/api/sessions", json={"scenario": "DYN.1", "assistant": "human", "config": {}}, headers=AUTH)
    assert r.status_code == 200, r.text
    sid = r.json()["id"]
    wait_session(server, sid)
    assert server.post(f"/api/sessions/{sid}/step", json={"give_up": True}, headers=AUTH).status_code == 200
