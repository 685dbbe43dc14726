"""Updates through a real ``diagkg serve`` (issues 25 and 26): the one write path.

On a store holding the torch written in tests/support/torch.py with one of its scenarios, and the
shipped three-cubes system with a scenario written here:

* a server that served a session on three_cubes, then took an update of the system through its
  endpoint: the next session sees the new system (ends as a fresh process ends), and an update that
  violates the shapes is refused (422) with nothing written;
* a cross-product update is stopped at ``--query-timeout`` (503) with the store unchanged, while a
  ``diagkg run --wait 5`` started meanwhile stores its trajectory (the update holds no lock while
  it is worked out);
* ``LOAD`` of a file that is not RDF answers 400 saying so; a Turtle file loads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore

from ..support.cli import run_cli
from ..support.paths import THREE_CUBES
from ..support.serving import TOKEN, free_port, start_server, stop_server
from ..support.torch import FLAT, ON_SHIPPED, TORCH, scenario_text

AUTH = {"authorization": f"Bearer {TOKEN}"}
THREE = graphs.system("three_cubes").value
TORCH_SYSTEM = graphs.system("torch").value


def set_resistance(graph: str, part: str, value: str) -> str:
    return ("PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
            f"DELETE {{ GRAPH <{graph}> {{ <{part}> dk:resistance ?r }} }}\n"
            f"INSERT {{ GRAPH <{graph}> {{ <{part}> dk:resistance {value} }} }}\n"
            f"WHERE {{ GRAPH <{graph}> {{ <{part}> dk:resistance ?r }} }}")


CROSS = ("INSERT { GRAPH <urn:x:slow> { ?a <urn:x:p> ?z } } "
         "WHERE { GRAPH ?g1 { ?a ?b ?c } GRAPH ?g2 { ?d ?e ?f } GRAPH ?g3 { ?g ?h ?i } GRAPH ?g4 { ?j ?k ?z } }")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve-updates")
    files = [folder / "torch.ttl", folder / "t1.ttl", THREE_CUBES, folder / "mine.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[3].write_text(scenario_text(**ON_SHIPPED))
    path = folder / "store"
    store = KnowledgeStore(path)
    load_files(store, files)
    store.close()
    return path


def _version(path: Path, graph: str) -> str:
    return KnowledgeStore.open_for_reading(path).version_of(ox.NamedNode(graph))


def _session_end(base: str, scenario: str) -> str:
    r = httpx.post(f"{base}/api/sessions", json={"scenario": scenario, "assistant": "oracle"}, headers=AUTH,
                   timeout=60)
    assert r.status_code == 200, r.text
    sid = r.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = httpx.get(f"{base}/api/sessions/{sid}", timeout=30).json()
        if s["status"] in ("done", "failed"):
            assert s["status"] == "done", s
            return str(s["result"]["end"])
        time.sleep(0.1)
    raise AssertionError(f"session {sid} did not end")


def test_the_next_session_sees_a_system_changed_through_the_endpoint(store_path):
    bulb = "https://w3id.org/diagkg/system/three_cubes/main_bulb"
    proc, base = start_server(store_path)
    try:
        assert _session_end(base, ON_SHIPPED["id"]) == "success"
        old = _version(store_path, THREE)
        r = httpx.post(f"{base}/sparql", data={"update": set_resistance(THREE, bulb, "1e9")}, headers=AUTH, timeout=120)
        assert r.status_code == 204, r.text
        assert _version(store_path, THREE) != old
        after = _session_end(base, ON_SHIPPED["id"])
        fresh = run_cli("--store", str(store_path), "run", "--scenario", ON_SHIPPED["id"], "--assistant", "oracle",
                        "--format", "json")
        assert fresh.returncode == 0, fresh.stderr
        assert after != "success" and after == json.loads(fresh.stdout)["end"]

        # an update that violates the shapes is refused whole
        torch_version = _version(store_path, TORCH_SYSTEM)
        r = httpx.post(f"{base}/sparql", content=set_resistance(TORCH_SYSTEM, "https://example.org/torch/bulb", "-5"),
                       headers={**AUTH, "content-type": "application/sparql-update"}, timeout=120)
        assert r.status_code == 422 and "resistance" in r.text, r.text
        assert _version(store_path, TORCH_SYSTEM) == torch_version
        r = httpx.post(f"{base}/sparql", data={"update": f"DROP GRAPH <{graphs.inferred('torch').value}>"},
                       headers=AUTH, timeout=120)
        assert r.status_code == 400 and "inferences follow" in r.text, r.text
    finally:
        stop_server(proc)


def test_a_slow_update_is_stopped_with_nothing_written_while_a_run_stores_its_trajectory(store_path, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("checked the bulb, all fine {\n")
    (files / "notes.ttl").write_text("<urn:x:bulb> <urn:x:note> \"checked\" .\n")
    port = free_port()
    web = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=files,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc, base = start_server(store_path, "--query-timeout", "20", "--allow-remote", f"127.0.0.1:{port}")
    try:
        versions = {g: _version(store_path, g) for g in (TORCH_SYSTEM, THREE)}
        answer: list[httpx.Response] = []
        update = threading.Thread(target=lambda: answer.append(
            httpx.post(f"{base}/sparql", data={"update": CROSS}, headers=AUTH, timeout=120)))
        update.start()
        time.sleep(1)
        run = run_cli("--store", str(store_path), "--wait", "5", "run", "--scenario", FLAT["id"], "--assistant",
                      "oracle", "--format", "json")
        assert run.returncode == 0, run.stderr
        assert update.is_alive()              # the run was stored while the update was being worked out
        update.join(120)
        assert answer[0].status_code == 503 and "time limit" in answer[0].text, answer[0].text
        store = KnowledgeStore.open_for_reading(store_path)
        trajectory = json.loads(run.stdout)["trajectory"]
        assert any(r["trajectory"] == trajectory for r in store.select("trajectory-list"))
        assert not store.raw.contains_named_graph(ox.NamedNode("urn:x:slow"))
        assert {g: store.version_of(ox.NamedNode(g)) for g in versions} == versions

        # LOAD: a file that is not RDF is the client's error, a Turtle file loads
        r = httpx.post(f"{base}/sparql", data={"update": f"LOAD <http://127.0.0.1:{port}/notes.txt> INTO GRAPH <urn:x:l>"},
                       headers=AUTH, timeout=60)
        assert r.status_code == 400 and "not RDF" in r.text, r.text
        r = httpx.post(f"{base}/sparql", data={"update": f"LOAD <http://127.0.0.1:{port}/notes.ttl> INTO GRAPH <urn:x:l>"},
                       headers=AUTH, timeout=60)
        assert r.status_code == 204, r.text
        assert KnowledgeStore.open_for_reading(store_path).raw.contains_named_graph(ox.NamedNode("urn:x:l"))
    finally:
        stop_server(proc)
        web.terminate()
        web.wait(10)
