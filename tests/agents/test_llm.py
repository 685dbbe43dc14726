"""The LLM symptom classifier of the neuro-symbolic assistant, against a real
OpenAI-compatible HTTP endpoint (a local server started by the test)."""

from __future__ import annotations

import json

import pytest

from diagkg.agents.llm import CACHE_GRAPH, parse_classification
from diagkg.errors import InputError
from diagkg.llm.records import FailureCause, recorded_calls
from diagkg.runs.runner import run_session

from ..support.llm_server import LLMServer
from ..support.stores import catalog_copy


@pytest.fixture()
def server():
    with LLMServer() as s:
        yield s


@pytest.fixture()
def store():
    s = catalog_copy()
    yield s
    s.close()


def config(server):
    return {"classifier": "llm", "base_url": server.base_url, "model": "stub-model", "api_key": "test",
            "timeout": 0.5, "retries": 1, "backoff": 0.01}


def test_llm_classification_drives_the_assistant_and_is_cached(server, store):
    server.script.content = json.dumps({"anomalous": ["main_bulb", "no_such_part"], "nominal": ["psu_green_led", "ctrl_red_led"]})
    result = run_session(5, "neuro-symbolic", config=config(server), store=store)
    assert result.end == "success"
    assert len(server.script.calls) == 1
    call = server.script.calls[0]
    assert call["model"] == "stub-model" and call["tools"][0]["function"]["name"] == "classify"
    prompt = call["messages"][0]["content"]
    assert "main_bulb" in prompt and "does not light the lamp" in prompt
    # the answer is in the graph: a second session asks nothing, and records where its answer came from
    again = run_session(5, "neuro-symbolic", config=config(server), store=store)
    assert len(server.script.calls) == 1 and again.end == result.end
    assert store.raw.contains_named_graph(CACHE_GRAPH)
    rows = store.select("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        SELECT ?r WHERE { ?e a dk:LLMCachedResponse ; dk:responseBody ?r }""")
    assert len(rows) == 1 and "main_bulb" in rows[0]["r"]
    assert [c.source for c in recorded_calls(store, result.trajectory)] == ["endpoint"]
    assert [c.source for c in recorded_calls(store, again.trajectory)] == ["cache"]


@pytest.mark.parametrize("content,finish,cause", [("The lamp is broken, I think.", "stop", FailureCause.UNPARSEABLE),
                                                  ('{"anomalous": ["main_bulb"', "length", FailureCause.CUT_OFF),
                                                  ('{"anomalous": ["main_bulb"]}', "stop", FailureCause.UNPARSEABLE)])
def test_unusable_replies_end_with_llm_truncation(server, store, content, finish, cause):
    server.script.content, server.script.finish_reason = content, finish
    result = run_session(1, "neuro-symbolic", config=config(server), store=store)
    assert result.end == "llm_truncation" and result.llm_cause is cause
    assert len(server.script.calls) == 2                                  # one retry
    assert store.select("trajectory-list")[0]["end"] == "llm_truncation"   # still recorded, and valid


def test_unreachable_endpoint_ends_with_llm_truncation(store):
    cfg = {"classifier": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m", "timeout": 0.5, "retries": 1,
           "backoff": 0.01}
    result = run_session(1, "neuro-symbolic", config=cfg, store=store)
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.SERVER_ERROR
    assert "cannot reach http://127.0.0.1:9/v1" in recorded_calls(store, result.trajectory)[0].error


def test_missing_settings(monkeypatch, store):
    for var in ("DIAGKG_LLM_BASE_URL", "DIAGKG_LLM_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(InputError, match="needs an endpoint and a model"):
        run_session(1, "neuro-symbolic", config={"classifier": "llm"}, store=store)


def test_parse_classification_keeps_known_ids():
    assert parse_classification({"anomalous": ["a", "x"], "nominal": ["a", "b"]}, {"a", "b"}) == ({"a"}, {"b"})
