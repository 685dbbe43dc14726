"""``diagkg serve``'s JSON API: systems, scenarios (validate, load), live sessions, trajectories.

On a user's system written in a test (the torch of tests/support/torch.py), in an
on-disk store of its own.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from diagkg.server.app import ServerConfig, create_app

from ..support.cli import DIAGKG
from ..support.serving import LOCAL, TOKEN, broken_scenario, torch_store, wait_session
from ..support.torch import LOOSE_LEAD, scenario_text

AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    return torch_store(tmp_path_factory.mktemp("serve-api"))


@pytest.fixture(scope="module")
def client(store_path):
    with TestClient(create_app(ServerConfig(store_path, token=TOKEN, workers=1)), base_url=LOCAL) as c:
        yield c


def test_openapi_lists_the_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/sparql", "/rdf-graphs", "/api/systems", "/api/scenarios", "/api/scenarios/validate",
              "/api/sessions", "/api/sessions/{sid}/events", "/api/sessions/{sid}/step", "/api/trajectories"):
        assert p in paths


def test_systems_and_scenarios(client):
    systems = client.get("/api/systems").json()
    assert [s["key"] for s in systems] == ["torch"] and systems[0]["components"] == 7
    scenarios = client.get("/api/scenarios", params={"system": "torch"}).json()
    assert [s["id"] for s in scenarios] == ["TORCH.1"]
    one = client.get("/api/scenarios/TORCH.1").json()
    assert one["number"] == 9101 and "DepletedBattery" in one["turtle"]
    assert client.get("/api/scenarios/NOPE.1").status_code == 404


def test_upload_gives_the_same_located_report_as_the_cli_and_loads_nothing(client, store_path, tmp_path):
    path = tmp_path / "torch-2.ttl"
    path.write_text(broken_scenario())
    cli = subprocess.run([*DIAGKG, "--store", str(store_path), "validate", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 1
    report = client.post("/api/scenarios/validate", params={"name": str(path)}, content=path.read_text()).json()
    assert not report["conforms"]
    assert [v["text"] for v in report["violations"]] == cli.stdout.strip().splitlines()
    assert any(v["line"] == 18 and "actionBudgett" in v["text"] for v in report["violations"])
    # a syntax error: located too
    bad = client.post("/api/scenarios/validate", params={"name": "x.ttl"}, content="@prefix : <urn:x#> .\n:a :b .\n").json()
    assert bad["error"]["line"] == 2 and bad["error"]["message"].startswith("x.ttl:2")
    # a file a load refuses as a whole: not said to conform (it was, and the upload then answered 409)
    two = scenario_text(**LOOSE_LEAD) + scenario_text(**LOOSE_LEAD).replace("TORCH.2", "TORCH.9").replace("9102", "9109")
    bad = client.post("/api/scenarios/validate", params={"name": "two.ttl"}, content=two).json()
    assert not bad["conforms"] and bad["error"]["message"] == "two.ttl: holds several scenarios; use one file per scenario"
    # loading needs the token; with violations it is refused and changes nothing
    assert client.post("/api/scenarios", params={"name": "t2.ttl"}, content=broken_scenario()).status_code == 403
    r = client.post("/api/scenarios", params={"name": "t2.ttl"}, content=broken_scenario(), headers=AUTH)
    assert r.status_code == 422 and r.json()["violations"]
    assert [s["id"] for s in client.get("/api/scenarios").json()] == ["TORCH.1"]
    r = client.post("/api/scenarios", params={"name": "t2.ttl"}, content=scenario_text(**LOOSE_LEAD), headers=AUTH)
    assert r.status_code == 200, r.text
    assert r.json()["loaded"][0]["graph"].endswith("/scenario/TORCH.2")
    assert [s["id"] for s in client.get("/api/scenarios").json()] == ["TORCH.1", "TORCH.2"]


def read_events(client, sid: str) -> list[dict]:
    events = []
    with client.stream("GET", f"/api/sessions/{sid}/events") as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    return events


def test_a_session_with_the_oracle_streams_its_rounds_and_stores_its_trajectory(client):
    assert client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle"}).status_code == 403
    r = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle"}, headers=AUTH)
    assert r.status_code == 200, r.text
    events = read_events(client, r.json()["id"])
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and kinds.count("round") == events[-1]["result"]["rounds"] >= 1
    assert [e["seq"] for e in events] == list(range(len(events)))
    end = events[-1]["result"]
    assert end["end"].startswith("success") and end["scenario_id"] == "TORCH.1"
    listed = [t["trajectory"] for t in client.get("/api/trajectories").json()]
    assert end["trajectory"] in listed
    data = client.get(f"/api/trajectories/{end['trajectory']}").json()
    assert len(data["rounds"]) == end["rounds"]
    html = client.get(f"/api/trajectories/{end['trajectory']}/transcript.html")
    assert html.status_code == 200 and "<html" in html.text.lower()
    assert client.post("/api/sessions", json={"scenario": "NOPE", "assistant": "oracle"}, headers=AUTH).status_code == 404
    # a negative seed would repeat another (Python's random draws the same from -1 as from 1) under its own name
    bad = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle", "seed": -1}, headers=AUTH)
    assert bad.status_code == 422 and "seed" in bad.text
    bad = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle", "budget": 0}, headers=AUTH)
    assert bad.status_code == 422 and "budget" in bad.text
    # a client that reconnects gets the events after the last one it saw
    with client.stream("GET", f"/api/sessions/{r.json()['id']}/events", headers={"last-event-id": "1"}) as again:
        seqs = [json.loads(line[6:])["seq"] for line in again.iter_lines() if line.startswith("data: ")]
    assert seqs == list(range(2, len(events)))



def test_a_person_plays_the_service_agent(client):
    sid = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle", "service": "human"},
                      headers=AUTH).json()["id"]
    carried = []
    while True:
        s = wait_session(client, sid)
        if s["status"] == "done":
            break
        assert s["pending"]["kind"] == "execute"
        rounds_before = s["rounds"]
        assert client.post(f"/api/sessions/{sid}/step", json={"give_up": True}, headers=AUTH).status_code == 400
        assert client.post(f"/api/sessions/{sid}/step", json={"execute": True}, headers=AUTH).status_code == 200
        carried.append(s["pending"]["suggestion"]["text"])
        assert s["rounds"] == rounds_before
    events = client.get(f"/api/sessions/{sid}").json()["events"]
    # the oracle names the flat battery: a diagnosis, at what replacing it would cost (the cheaper way it knows)
    assert carried == ["hypothesis {bat}"]
    assert [e["type"] for e in events if e["type"] in ("suggestion", "round")] == ["suggestion", "round"] * len(carried)
    assert s["result"]["end"].startswith("success")
    # the system as it is now: the new battery lights both lamps
    from diagkg.sim.schematic import LIT

    now = client.get(f"/api/sessions/{sid}/schematic.svg")
    assert now.status_code == 200 and now.text.count(LIT) == 2


def test_a_person_plays_the_assistant_from_menus(client):
    sid = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "human"}, headers=AUTH).json()["id"]
    s = wait_session(client, sid)
    menus = s["pending"]["menus"]
    assert "bat" in [p["id"] for p in menus["parts"]]
    measure = next(a for a in menus["actions"] if a["target_count"] == 1 and "bat" in a["targets"])
    bad = client.post(f"/api/sessions/{sid}/step", json={"action": "no_such_action"}, headers=AUTH)
    assert bad.status_code == 400 and "catalogue" in bad.text
    assert client.post(f"/api/sessions/{sid}/step", json={"hypothesis": ["nothing"]}, headers=AUTH).status_code == 400
    body = {"action": measure["id"], "targets": ["bat"], "value": 0.5 if measure["parameter"] else None}
    assert client.post(f"/api/sessions/{sid}/step", json=body, headers=AUTH).status_code == 200
    s = wait_session(client, sid)
    assert s["rounds"] == 1 and s["pending"]["kind"] == "choose"
    assert client.post(f"/api/sessions/{sid}/step", json={"hypothesis": ["bat"]}, headers=AUTH).status_code == 200
    s = wait_session(client, sid)
    assert s["status"] == "done" and s["result"]["end"] == "success" and s["result"]["assistant"] == "human"


def test_schematic_routes(client):
    from diagkg.sim.schematic import DARK, LIT

    r = client.get("/api/systems/torch/schematic.svg")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert r.text.count(LIT) == 2            # the bulb and the LED
    flat = client.get("/api/systems/torch/schematic.svg", params={"scenario": "TORCH.1"})
    assert flat.text.count(LIT) == 0 and flat.text.count(DARK) == 2      # the flat battery: both dark
    png = client.get("/api/systems/torch/schematic.png")
    assert png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert client.get("/api/systems/torch/schematic.gif").status_code == 404
    assert client.get("/api/systems/torch/schematic.svg", params={"scenario": "TORCH.1", "seed": -1}).status_code == 422
    assert client.get("/api/systems/nope/schematic.svg").status_code == 404


def test_a_campaigns_tables_and_report(client, store_path):
    from ..support.cli import run_cli

    r = run_cli("--store", str(store_path), "evaluate", "--assistant", "oracle,random-search", "--scenarios", "TORCH.1",
                "--runs", "2", "--name", "served", "--format", "json")
    assert r.returncode == 0, r.stderr
    campaign = json.loads(r.stdout.strip().splitlines()[-1])["campaign"]
    listed = {c["id"] for c in client.get("/api/campaigns").json()}
    assert campaign in listed
    tables = {t["name"]: t for t in client.get(f"/api/campaigns/{campaign}/tables").json()}
    overall = tables["overall"]
    assert {"oracle", "random-search"} <= {v for row in overall["rows"] for v in row if isinstance(v, str)}
    assert {"side-by-side-system", "by-scenario", "difficulty", "paired"} <= set(tables)
    page = client.get(f"/api/campaigns/{campaign}/report.html")
    assert page.status_code == 200 and "<img" in page.text and "oracle" in page.text
    missing = client.get("/api/campaigns/no-such-campaign/tables")
    assert missing.status_code == 404 and "no campaign 'no-such-campaign'" in missing.text


def test_a_person_at_the_page_is_told_a_naming_as_an_assistant_is(client):
    # a person playing the assistant on the page was sent each round whole: naming every part at once, the page
    # said which of them were faulty (an overbroad naming's actually_faulty) and which were healthy
    sid = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": "human"}, headers=AUTH).json()["id"]
    s = wait_session(client, sid)
    parts = [p["id"] for p in s["pending"]["menus"]["parts"] if p["id"] in ("bat", "bulb", "lead", "led", "sw")]
    assert client.post(f"/api/sessions/{sid}/step", json={"hypothesis": parts}, headers=AUTH).status_code == 200
    s = wait_session(client, sid)
    rounds = [e["round"] for e in s["events"] if e["type"] == "round"]
    assert rounds and rounds[0]["verdict"] == "overbroad", rounds
    assert "actually_faulty" not in rounds[0]["data"] and rounds[0]["healthy"] == [], rounds[0]
