"""``diagkg serve`` never runs a command a request names: an ``exec:`` assistant is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from diagkg.server.app import ServerConfig, create_app

from ..support.serving import LOCAL, TOKEN, torch_store

AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    path: Path = torch_store(tmp_path_factory.mktemp("serve-exec"))
    with TestClient(create_app(ServerConfig(path, token=TOKEN, workers=1)), base_url=LOCAL) as c:
        yield c


def test_a_live_session_with_an_exec_assistant_is_refused(client, tmp_path):
    witness = tmp_path / "ran"
    r = client.post("/api/sessions", json={"scenario": "TORCH.1", "assistant": f"exec:touch {witness}"}, headers=AUTH)
    assert r.status_code == 400 and "not started over HTTP" in r.text
    assert not witness.exists()
