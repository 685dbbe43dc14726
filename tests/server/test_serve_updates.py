"""Updates through a real ``diagkg serve`` (issues 25 and 26): the one write path.

On a store holding the torch written in tests/support/torch.py with one of its scenarios, and
the shipped three-cubes system with a scenario written here: a server that served a session on
three_cubes, then took an update of the system through its endpoint, ends its next session as a
fresh process does (it sees the new system); an update that violates the shapes is refused (422)
with nothing written.

(A cross-product update stopped at ``--query-timeout`` while a ``run --wait 5`` stores its
trajectory, and ``LOAD`` of something that is not RDF: tests/server/test_serve_security.py.)
"""

from __future__ import annotations

import json
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
from ..support.serving import TOKEN, start_server, stop_server
from ..support.torch import FLAT, ON_SHIPPED, TORCH, scenario_text

AUTH = {"authorization": f"Bearer {TOKEN}"}
THREE = graphs.system("three_cubes").value
TORCH_SYSTEM = graphs.system("torch").value


def set_resistance(graph: str, part: str, value: str) -> str:
    return ("PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
            f"DELETE {{ GRAPH <{graph}> {{ <{part}> dk:resistance ?r }} }}\n"
            f"INSERT {{ GRAPH <{graph}> {{ <{part}> dk:resistance {value} }} }}\n"
            f"WHERE {{ GRAPH <{graph}> {{ <{part}> dk:resistance ?r }} }}")


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


def _session_end(base: str, scenario: str) -> tuple[str, float]:
    r = httpx.post(f"{base}/api/sessions", json={"scenario": scenario, "assistant": "oracle"}, headers=AUTH,
                   timeout=60)
    assert r.status_code == 200, r.text
    sid = r.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        s = httpx.get(f"{base}/api/sessions/{sid}", timeout=30).json()
        if s["status"] in ("done", "failed"):
            assert s["status"] == "done", s
            return str(s["result"]["end"]), float(s["result"]["cost"])
        time.sleep(0.1)
    raise AssertionError(f"session {sid} did not end")


def test_the_next_session_sees_a_system_changed_through_the_endpoint(store_path):
    bulb = "https://w3id.org/diagkg/system/three_cubes/main_bulb"
    proc, base = start_server(store_path)
    try:
        before = _session_end(base, ON_SHIPPED["id"])
        assert before == ("success", 120.0)
        old = _version(store_path, THREE)
        # the lamp can no longer be reached as it stands: replacing it now means turning its cube over first
        unreachable = (f"PREFIX dk: <https://w3id.org/diagkg/ontology#>\n"
                       f"DELETE DATA {{ GRAPH <{THREE}> {{ <{bulb}> dk:affords dk:Reachable }} }}")
        r = httpx.post(f"{base}/sparql", data={"update": unreachable}, headers=AUTH, timeout=120)
        assert r.status_code == 204, r.text
        assert _version(store_path, THREE) != old
        after = _session_end(base, ON_SHIPPED["id"])
        fresh = run_cli("--store", str(store_path), "run", "--scenario", ON_SHIPPED["id"], "--assistant", "oracle",
                        "--format", "json")
        assert fresh.returncode == 0, fresh.stderr
        assert after != before and after == (json.loads(fresh.stdout)["end"], json.loads(fresh.stdout)["cost"])

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
