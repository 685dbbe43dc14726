"""No live session is lost (issue 25, item 6), on a real ``diagkg serve`` over the torch of
tests/support/torch.py: a session whose assistant raises is stored with end ``crashed`` (its
rounds, then what went wrong), and a session that ends while another process holds the store's
write lock tries again until it is stored.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from diagkg.kg.store import KnowledgeStore

from ..support.plugins import CRASHER, install_assistant
from ..support.serving import TOKEN, start_server, stop_server, torch_store

AUTH = {"authorization": f"Bearer {TOKEN}"}


def _until(base: str, sid: str, done, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = httpx.get(f"{base}/api/sessions/{sid}", timeout=30).json()
        if done(s):
            return s
        time.sleep(0.1)
    raise AssertionError(f"the session did not get there: {s}")


def _stored(store: Path, trajectory: str) -> dict | None:
    rows = KnowledgeStore.open_for_reading(store).select("trajectory-list")
    return next((r for r in rows if r["trajectory"] == trajectory), None)


@pytest.mark.slow
def test_a_live_session_whose_assistant_crashes_is_stored_as_crashed(tmp_path, monkeypatch):
    store = torch_store(tmp_path)
    site = install_assistant(tmp_path / "site", "crasher", "diagkg_crasher", CRASHER, "Crasher")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("DIAGKG_TRUSTED_ASSISTANTS", "crasher")       # runs in the server's process
    proc, base = start_server(store)
    try:
        r = httpx.post(f"{base}/api/sessions", json={"scenario": "TORCH.1", "assistant": "crasher"},
                       headers=AUTH, timeout=60)
        assert r.status_code == 200, r.text
        s = _until(base, r.json()["id"], lambda s: s["status"] in ("done", "failed"))
        assert s["status"] == "failed"
        result = s["result"]
        assert result["end"] == "crashed" and result["rounds"] == 2 and "kept_in" not in result
        error = [e for e in s["events"] if e["type"] == "error"]
        assert error and "RuntimeError: the crasher fell over" in error[0]["message"]
        row = _stored(store, result["trajectory"])
        assert row is not None and row["end"] == "crashed" and int(row["rounds"]) == 2
    finally:
        stop_server(proc)


@pytest.mark.slow
def test_a_live_session_that_must_wait_for_the_store_is_stored_once_it_is_free(tmp_path):
    store = torch_store(tmp_path)
    proc, base = start_server(store)
    try:
        r = httpx.post(f"{base}/api/sessions", json={"scenario": "TORCH.1", "assistant": "oracle",
                                                      "service": "human"}, headers=AUTH, timeout=60)
        sid = r.json()["id"]
        _until(base, sid, lambda s: s["pending"] is not None)
        holder = ox.Store(str(store))          # another writer holds the lock when the session ends
        try:
            assert httpx.post(f"{base}/api/sessions/{sid}/step", json={"stop": True}, headers=AUTH,
                              timeout=30).status_code == 200
            s = _until(base, sid, lambda s: any(e["type"] == "storing" for e in s["events"]))
            time.sleep(2.5)                    # more than two of its tries
            s = httpx.get(f"{base}/api/sessions/{sid}", timeout=30).json()
            assert s["status"] == "running"    # still trying, nothing lost
        finally:
            del holder
        s = _until(base, sid, lambda s: s["status"] in ("done", "failed"))
        assert s["status"] == "done" and "kept_in" not in s["result"]
        row = _stored(store, s["result"]["trajectory"])
        assert row is not None and row["end"] == "surrender"
    finally:
        stop_server(proc)
