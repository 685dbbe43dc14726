"""Labels are text wherever the server shows them: a user's torch (written here) whose system,
module and part labels hold markup and script: the schematic (which the page inserts as SVG)
carries them escaped; the JSON API gives them as they are (the page sets them as text)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.server.app import ServerConfig, create_app

from ..support.serving import LOCAL, TOKEN
from ..support.torch import FLAT, TORCH, scenario_text

HOSTILE = {"Torch bulb": 'bulb <script>alert("x")</script>', "Body": "<img src=x onerror=alert(1)>",
           "Torch": "Torch & <b>co</b>"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    folder: Path = tmp_path_factory.mktemp("serve-escaping")
    text = TORCH
    for plain, hostile in HOSTILE.items():
        text = text.replace(f'rdfs:label "{plain}"', "rdfs:label " + '"' + hostile.replace('"', '\\"') + '"')
    assert all(h.replace('"', '\\"') in text for h in HOSTILE.values())
    (folder / "torch.ttl").write_text(text)
    (folder / "t1.ttl").write_text(scenario_text(**FLAT))
    store = KnowledgeStore(folder / "store")
    load_files(store, [folder / "torch.ttl", folder / "t1.ttl"])
    store.close()
    with TestClient(create_app(ServerConfig(folder / "store", token=TOKEN, workers=1)), base_url=LOCAL) as c:
        yield c


def test_the_schematic_carries_labels_as_text(client):
    for params in ({}, {"scenario": "TORCH.1"}):
        r = client.get("/api/systems/torch/schematic.svg", params=params)
        assert r.status_code == 200
        svg = r.text
        assert "<script" not in svg and "<img" not in svg and "<b>" not in svg
        assert "&lt;script&gt;" in svg
        root = ET.fromstring(svg.encode("utf-8"))        # well-formed: nothing broke out of its text node
        texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
        assert 'bulb <script>alert("x")</script>' in texts


def test_the_system_list_gives_labels_as_they_are(client):
    systems = client.get("/api/systems").json()
    assert systems[0]["label"] == HOSTILE["Torch"]         # JSON: the text as it is; the page sets textContent
