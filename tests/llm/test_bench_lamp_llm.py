"""An outsider's bench lamp (tests/support/bench_lamp.py, written in the tests) against the LLM
assistants, with an OpenAI-compatible server the test starts on 127.0.0.1 answering as a hostile or
unlucky endpoint would. Each test states what went wrong before."""

from __future__ import annotations

import pytest

from diagkg.errors import InputError
from diagkg.runs.runner import run_session

from ..support.bench_lamp import bench_store
from ..support.llm_server import LLMServer, Reply

LEFT = "BENCH.1"        # the left lamp is open


@pytest.fixture(scope="module")
def bench_quads(tmp_path_factory):
    loaded = bench_store(tmp_path_factory.mktemp("bench"))
    quads = list(loaded.raw.quads_for_pattern(None, None, None, None))
    loaded.close()
    return quads


@pytest.fixture()
def bench(bench_quads):
    from diagkg.kg.store import KnowledgeStore

    store = KnowledgeStore.memory()
    store.raw.extend(bench_quads)
    yield store
    store.close()


def config(server: LLMServer, **extra) -> dict:
    return {"base_url": server.base_url, "model": "stub-model", "timeout": 5, "retries": 1, "backoff": 0.01, **extra}


@pytest.mark.parametrize("extra", [
    {"cost_limit": "nan", "pricing": {"stub-model": [1, 2]}},     # was: no limit at all (nan > x is false)
    {"cost_limit": -1, "pricing": {"stub-model": [1, 2]}},
    {"pricing": {"stub-model": [-1e6, -1e6]}},                     # was: negative money, the limit never reached
    {"pricing": {"stub-model": ["cheap", 1]}},                     # was: a raw ValueError
    {"backoff": -1},                                               # was: ValueError from time.sleep at the first retry
    {"timeout": "inf"},                                            # was: OverflowError from the HTTP client
    {"vision": "false"},                                           # was: read as true
])
def test_a_setting_out_of_range_is_refused_before_the_session_starts(bench, extra):
    with LLMServer() as server:
        server.script.then(Reply(status=500), Reply(status=500))
        with pytest.raises(InputError):
            run_session(LEFT, "llm", config=config(server, **extra), store=bench)
        assert server.script.calls == []
