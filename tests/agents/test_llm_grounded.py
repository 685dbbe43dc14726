"""The llm-grounded assistant against a scripted OpenAI-compatible endpoint on 127.0.0.1, on
a desk lamp written in the tests (tests/support/desk.py): the choices it offers are exactly
what the session affords, round after round; queries, claims and hypotheses are checked and
what was caught is recorded; it ends cleanly whatever the endpoint answers, and replays."""

from __future__ import annotations

import json
import re

import jsonschema
import pyoxigraph as ox
import pytest

import diagkg
from diagkg.agents.grounding_menus import pairs_of
from diagkg.env.actions import Action
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs.runner import replay_session, run_session

from ..support.cli import run_cli
from ..support.desk import afforded, desk_memory_store
from ..support.llm_server import LLMServer, Reply

ENDS = {"success", "success_no_hypothesis", "timeout", "surrender", "llm_truncation", "budget_exhausted"}


def decide(**arguments) -> Reply:
    arguments.setdefault("message", {"text": "Do as the choice says."})
    return Reply.call("decide", **arguments)


def config(server, **extra):
    cfg = {"base_url": server.base_url, "model": "stub-model", "timeout": 5, "retries": 1, "backoff": 0.01}
    cfg.update(extra)
    return cfg


@pytest.fixture(scope="module")
def desk_quads(tmp_path_factory):
    loaded = desk_memory_store(tmp_path_factory.mktemp("desk"))
    quads = list(loaded.raw.quads_for_pattern(None, None, None, None))
    loaded.close()
    return quads


@pytest.fixture()
def store(desk_quads):
    s = KnowledgeStore.memory()
    s.add_quads(desk_quads)
    yield s
    s.close()


def offered(call) -> set[tuple[str, str]]:
    return pairs_of(call["tools"][0]["function"]["parameters"]["properties"]["step"])


def rejected(store, result) -> list[str]:
    """The codes of what was caught, as the trajectory records them, in call order."""
    graph = result.record.graph
    codes = {}
    for q in store.raw.quads_for_pattern(None, DK.choiceRejected.node, None, graph):
        position = next(store.raw.quads_for_pattern(q.subject, DK.position.node, None, graph)).object.value
        codes[int(position)] = q.object.value
    return [codes[k] for k in sorted(codes)]


def test_diagkg_run_offers_exactly_what_the_session_affords_and_ends_cleanly(tmp_path, desk_quads, store):
    db = str(tmp_path / "db")
    disk = KnowledgeStore(db)
    disk.add_quads(desk_quads)
    disk.close()
    with LLMServer() as server:
        server.script.then(
            decide(kind="action", step={"action": "observe_component", "targets": ["res"]}),    # never in sight
            decide(kind="action", step={"action": "measure_voltage", "targets": ["cell"]}),     # the base is turned over
            decide(kind="action", step="nonsense"), decide(kind="hypothesise", components="cell"),
            decide(kind="give up", message=7))
        # then the endpoint answers with JSON that is not a choice at all, until the session ends
        cfg = json.dumps(config(server, corrections=2))
        done = run_cli("--store", db, "run", "--scenario", "DESK.1", "--assistant", "llm-grounded", "--config", cfg,
                       "--format", "json")
        calls = list(server.script.calls)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["end"] == "llm_truncation"
    # each request offered the pairs a real session affords in the state that round starts from
    session = diagkg.make("DESK.1", store=store, budget=50)
    session.reset(seed=0)
    parts = sorted(set(session.sk.components) | set(session.parts()))
    truth = {1: afforded(session, parts)}
    session.step(Action("measure_voltage", ("cell",)))
    truth[2] = truth[3] = afforded(session, parts)
    assert ("observe_component", "res") not in truth[1] and ("open_switch", "switch") not in truth[2]
    rounds = [int(re.search(r"Round (\d+) of", c["messages"][1]["content"]).group(1)) for c in calls]
    assert rounds == [1, 1, 2, 2, 2, 3, 3]
    for call, n in zip(calls, rounds, strict=True):
        assert call["tools"][0]["function"]["name"] == "decide"
        assert offered(call) == truth[n], n
    assert "observe_component cannot be carried out on res now" in calls[1]["messages"][-1]["content"]


# every kind of nonsense an endpoint can send: the session must end in a recorded end value
HOSTILE = [
    decide(kind="action", step={"action": "replace_component", "targets": [["bulb"]], "value": "x"}),
    decide(kind="action", step={"action": None, "targets": None}),
    decide(kind="hypothesise", components=[{"id": "bulb"}], message={"parts": "bulb", "cites": [None],
                                                                      "relations": [["bulb", "cell"]]}),
    decide(kind="suppose", parts=["bulb"], predicts="the bulb is open"),
    decide(kind="suppose", parts=["lamp"], predicts=[{"action": "x", "target": 1}]),
    decide(kind="query", query=42),
    decide(kind="query", query="DROP ALL"),
    decide(kind="query", query="SELECT * WHERE { ?s ?p ?o } LIMIT 1000000"),
    Reply(content="[1, 2, 3]"),
    Reply(content='{"kind": "action", "message": {"text": "' + "x" * 5000 + '"}}'),
    decide(kind="action", step={"action": "measure_voltage", "targets": ["cell"]},
           message={"text": "Measure.", "cites": [{"part": "cell", "reading": "lit", "value": {"deep": [1]}}]}),
]


def test_it_ends_cleanly_whatever_the_endpoint_answers_and_replays(store):
    with LLMServer() as server:
        server.script.then(*HOSTILE)
        result = run_session("DESK.1", "llm-grounded", config=config(server, structured="json_schema"), store=store,
                             budget=4)
        first = server.script.calls[0]
    assert result.end in ENDS and result.rounds >= 1
    # as a response format, the schema offers the same pairs as the tool's parameters do
    schema = first["response_format"]["json_schema"]["schema"]
    session = diagkg.make("DESK.1", store=store, budget=50)
    session.reset(seed=0)
    assert pairs_of(schema["properties"]["step"]) == afforded(session, sorted(set(session.sk.components) | set(session.parts())))
    # one branch per kind, so that a grammar built from the schema cannot leave out what a kind needs
    validator = jsonschema.Draft202012Validator(schema)
    message = {"text": "Measure the cell."}
    step = {"action": "measure_voltage", "targets": ["cell"]}
    assert validator.is_valid({"kind": "action", "message": message, "step": step})
    assert not validator.is_valid({"kind": "action", "message": message})                # an action without its step
    assert not validator.is_valid({"kind": "hypothesise", "message": message, "step": step, "components": []})
    assert validator.is_valid({"kind": "hypothesise", "message": message, "step": step, "components": ["cell"]})
    assert validator.is_valid({"kind": "give_up", "message": message})
    assert all(isinstance(r.rejected, str) for r in result.llm.records)
    again = replay_session(store, result.trajectory, record=False)          # no endpoint now
    assert (again.end, again.rounds, again.cost) == (result.end, result.rounds, result.cost)
    assert [r["intention"] for r in again.record.rounds] == [r["intention"] for r in result.record.rounds]


def test_queries_claims_and_hypotheses_are_checked_and_recorded(store):
    with LLMServer() as server:
        server.script.then(
            decide(kind="query", query="SELECT ?p WHERE { sys:bulb dk:hasPortt ?p }"),
            decide(kind="query", query="SELECT ?p WHERE { sys:bulb dk:hasPort ?p }"),
            decide(kind="hypothesise", components=["bulb"]),                                       # not confirmed
            decide(kind="suppose", parts=["bulb"],
                   predicts=[{"action": "test_continuity", "target": "bulb", "reading": "verdict", "value": "open"}]),
            decide(kind="action", step={"action": "test_continuity", "targets": ["bulb"]},
                   message={"text": "Test the bulb: the cell reads 3 V.",
                            "cites": [{"part": "cell", "reading": "port_voltages.pos", "value": 3.0}]}),
            decide(kind="action", step={"action": "test_continuity", "targets": ["bulb"]},
                   message={"text": "Test the bulb, which sits in the base.", "parts": ["bulb"],
                            "relations": [{"relation": "contained_in", "subject": "bulb", "object": "base"}]}),
            decide(kind="replace", message={"text": "?"}),
            decide(kind="hypothesise", components=["bulb"],
                   message={"text": "Replace the bulb: it tested open.", "parts": ["bulb"],
                            "cites": [{"part": "bulb", "reading": "verdict", "value": "open", "round": 1}]}))
        result = run_session("DESK.1", "llm-grounded", config=config(server, require_confirmed=True), store=store)
        calls = list(server.script.calls)
    assert result.end == "success" and result.rounds == 2
    assert rejected(store, result) == ["query-undeclared", "not-confirmed", "unobserved-value", "false-relation",
                                       "unknown-action"]
    said = [c["messages"][-1]["content"] for c in calls]
    assert "did you mean dk:hasPort" in said[1]
    assert '"p": "sys:bulb.n"' in said[2] and '"p": "sys:bulb.p"' in said[2]         # the answer, bounded
    assert "it repairs bulb, which no confirmed supposition names" in said[3]
    assert "Supposition #1 (bulb) is noted, open so far" in said[4]
    assert "cell port_voltages.pos = 3.0: unobserved-value" in said[5]
    # sent back once: the second ungrounded message goes without its false claim
    assert result.record.rounds[0]["instruction"] == "Test the bulb, which sits in the base."
    assert "- #1 bulb: confirmed" in said[6]
    # the calls that carried them are in the trajectory, with what went back to the model
    text = "\n".join(str(q.object) for q in store.raw.quads_for_pattern(None, DK.requestMessages.node, None,
                                                                         result.record.graph))
    assert "query-undeclared" in text and "sys:bulb.n" in text
    candidates = list(store.raw.quads_for_pattern(None, DK.candidatePart.node, None, result.record.graph))
    assert {q.object.value.rsplit("/", 1)[-1] for q in candidates} == {"bulb"}       # the stated hypothesis, per round
    assert ox.NamedNode(result.trajectory + "#round-2") in {q.subject for q in store.raw.quads_for_pattern(
        None, DK.rankedCandidate.node, None, result.record.graph)}


def test_a_large_menu_is_narrowed_by_part_then_action(store):
    with LLMServer() as server:
        server.script.then(
            decide(kind="action", part="flex"),
            Reply.call("pick", step={"action": "inspect_connections", "targets": ["flex"]}),
            decide(kind="action", part="lamp"),
            decide(kind="action", part="res"),
            Reply.call("pick", step={"action": "observe_component", "targets": ["res"]}),
            decide(kind="action", part="res"),
            Reply.call("pick", step={"action": "replace_component", "targets": ["res"]}))
        result = run_session("DESK.1", "llm-grounded", config=config(server, menu_limit=10), store=store, budget=2)
        calls = list(server.script.calls)
    first = calls[0]["tools"][0]["function"]["parameters"]["properties"]
    assert "step" not in first and "flex" in first["part"]["enum"] and "res" in first["part"]["enum"]
    pick = calls[1]["tools"][0]["function"]
    assert pick["name"] == "pick" and {a for a, _ in pairs_of(pick["parameters"]["properties"]["step"])} >= \
        {"inspect_connections", "replace_component", "swap_cables"}
    assert all(p == "flex" for a, p in pairs_of(pick["parameters"]["properties"]["step"]) if a == "inspect_connections")
    assert [r["intention"] for r in result.record.rounds] == ["inspect_connections flex", "replace_component res"]
    assert rejected(store, result) == ["unknown-part", "not-afforded"]
