"""The ``llm`` assistant and the ``llm`` service agent through the real client
against a scripted OpenAI-compatible server on 127.0.0.1, on a torch system
written in the tests (not shipped): every call recorded in the trajectory,
replays without the server, every fault case with its retries and end value."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from diagkg.errors import InputError
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.llm.records import CAUSE_IRIS, FailureCause, ReplayMismatch, recorded_calls
from diagkg.runs import trajectory
from diagkg.runs.runner import replay_session, run_session

from ..support.llm_server import LLMServer, Reply, choose

FLAT = "TORCH.1"      # the torch's battery is flat


@pytest.fixture()
def server():
    with LLMServer() as s:
        yield s


@pytest.fixture()
def store(torch_copy):
    """A fresh store holding the loaded torch (a copy per test: each writes its own trajectories)."""
    return torch_copy


def config(server, **extra):
    cfg = {"base_url": server.base_url, "model": "stub-model", "api_key": "secret-key-123", "timeout": 0.2,
           "retries": 2, "backoff": 0.01}
    cfg.update(extra)
    return cfg


def rounds_of(result):
    return [(r["round"], r["kind"], r["intention"], r["message"], r["cost"], r.get("refusal"), r.get("instruction"))
            for r in result.record.rounds]


def graph_text(store, result) -> str:
    g = result.record.graph
    return "\n".join(str(q) for q in store.raw.quads_for_pattern(None, None, None, g))


def session_cause(store, result):
    rows = list(store.raw.quads_for_pattern(ox.NamedNode(result.trajectory + "#session"), DK.failureCause.node, None,
                                            result.record.graph))
    return rows[0].object.value if rows else None


def test_a_session_records_every_call_and_replays_without_the_server(store):
    with LLMServer() as server:
        server.script.then(
            choose(kind="action", action="measure_voltage", targets=["bat"],
                   instruction="Measure the voltage at both terminals of the battery."),
            choose(kind="hypothesise", components=["bat"], instruction="Replace the battery."))
        result = run_session(FLAT, "llm", config=config(server), store=store)
        sent = list(server.script.calls)
    assert result.end == "success" and result.rounds == 2
    # what the model was offered: one compact tool, actions from the graph, parts only in the prompt
    tool = sent[0]["tools"][0]["function"]
    assert tool["name"] == "choose" and "measure_voltage" in tool["parameters"]["properties"]["action"]["enum"]
    assert "\"bat\"" not in json.dumps(tool["parameters"]) and "led" not in tool["parameters"]["properties"]["targets"]["items"]
    system_prompt = sent[0]["messages"][0]["content"]
    assert "A 6 V battery feeds a bulb" in system_prompt and "- bat: VoltageSource, \"6 V battery\"" in system_prompt
    assert "The torch stays dark when switched on" in system_prompt
    assert "round 1: measure_voltage bat" in sent[1]["messages"][1]["content"]     # the typed history
    # every call is in the trajectory (which conformed to the shapes when stored), never the key
    calls = recorded_calls(store, result.trajectory)
    assert [(c.purpose, c.role, c.source, c.cause) for c in calls] == [("suggest", "assistant", "endpoint", None)] * 2
    assert calls[0].messages == sent[0]["messages"] and calls[0].response["tool_calls"][0]["name"] == "choose"
    assert calls[0].parameters["temperature"] == 0.0 and calls[0].prompt_tokens == 10
    text = graph_text(store, result)
    assert "secret-key-123" not in text
    assert "Measure the voltage at both terminals of the battery." in text      # the plain-language instruction
    totals = store.select("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        SELECT ?p ?c WHERE { ?s a dk:DiagnosticSession ; dk:promptTokens ?p ; dk:completionTokens ?c }""")
    assert totals == [{"p": 20, "c": 20}]
    # the same session again, every call answered from the record: the server is gone
    again = replay_session(store, result.trajectory)
    assert again.end == result.end and rounds_of(again) == rounds_of(result)
    assert [c.source for c in recorded_calls(store, again.trajectory)] == ["replay", "replay"]


@pytest.mark.parametrize("reply,cause", [
    (Reply(content="{}", delay=0.6), FailureCause.TIMEOUT),
    (Reply(status=429), FailureCause.RATE_LIMIT),
    (Reply(status=500), FailureCause.SERVER_ERROR),
    (Reply(content="I would measure the battery, I think."), FailureCause.UNPARSEABLE),
    (Reply(content='{"kind": "action", "action": "measure_vol', finish_reason="length"), FailureCause.CUT_OFF),
], ids=["timeout", "429", "500", "malformed-json", "truncated"])
def test_each_fault_is_retried_then_ends_with_llm_truncation(server, store, reply, cause):
    server.script.then(*[reply] * 3)
    result = run_session(FLAT, "llm", config=config(server, structured="json_object"), store=store)
    assert result.end == "llm_truncation" and result.llm_cause is cause
    calls = recorded_calls(store, result.trajectory)
    assert [c.cause for c in calls] == [cause] * 3            # the first try and two retries, each recorded
    assert all(c.error for c in calls)
    assert len(server.script.calls) == 3 and not server.script.replies
    assert session_cause(store, result) == str(CAUSE_IRIS[cause])
    assert store.select("trajectory-list")[0]["end"] == "llm_truncation"
    # and a replay fails the same way, without the server's delays
    again = replay_session(store, result.trajectory)
    assert again.end == "llm_truncation" and again.llm_cause is cause


def test_a_request_the_endpoint_refuses_is_recorded_and_not_retried(server, store):
    """A 400 once no lower structured-output mode is left (a prompt longer than a local model's
    context, say) is no fault that clears: one call, recorded, and the session ends with
    llm_truncation (refused), never a crash or a silent surrender."""
    server.script.then(Reply(status=400))
    result = run_session(FLAT, "llm", config=config(server, structured="json_object"), store=store)
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.REFUSED
    calls = recorded_calls(store, result.trajectory)
    assert [c.cause for c in calls] == [FailureCause.REFUSED] and "400" in (calls[0].error or "")
    assert len(server.script.calls) == 1
    assert session_cause(store, result) == str(CAUSE_IRIS[FailureCause.REFUSED])
    again = replay_session(store, result.trajectory)
    assert again.end == "llm_truncation" and again.llm_cause is FailureCause.REFUSED


def test_a_fault_that_clears_is_only_a_retry(server, store):
    server.script.then(Reply(status=429), Reply(status=503),
                       choose(kind="hypothesise", components=["bat"]))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    assert result.end == "success"
    assert [c.cause for c in recorded_calls(store, result.trajectory)] == [FailureCause.RATE_LIMIT,
                                                                          FailureCause.SERVER_ERROR, None]


def test_invalid_actions_go_back_to_the_model_then_the_round_is_used(server, store):
    server.script.then(
        choose(kind="action", action="fly_to_the_moon", targets=["bat"]),
        choose(kind="action", action="measure_voltage", targets=["flux_capacitor"]),
        choose(kind="action", action="test_diode", targets=["bat"]),         # not for a battery
        choose(kind="give_up"))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    calls = recorded_calls(store, result.trajectory)
    assert [c.rejected for c in calls] == ["unknown-action", "unknown-part", "component-type", ""]
    correction = server.script.calls[1]["messages"][-1]["content"]
    assert "unknown-action" in correction and "fly_to_the_moon" in correction and "measure_voltage" in correction
    assert "flux_capacitor" in server.script.calls[2]["messages"][-1]["content"]
    first = result.record.rounds[0]
    assert first["cost"] == 0 and first["refusal"] == "no-move" and not first["executed"]   # (it said unknown-action)
    assert "No move this round" in first["message"]
    assert result.end == "surrender" and result.rounds == 1 and result.cost == 0   # giving up is no round


def test_an_instruction_longer_than_the_schema_allows_is_kept_to_its_bound(server, store):
    """The schema bounds the plain-language instruction (``INSTRUCTION_MAX``); from a server that does not enforce
    it, 400 KB went whole into the round and the trajectory's ``dk:instruction`` (``llm-grounded`` already cut its
    own; a reply past 1 MiB is not read at all: diagkg.llm.bounded)."""
    from diagkg.agents.llm_assistant import INSTRUCTION_MAX

    server.script.then(choose(kind="hypothesise", components=["bat"], instruction="Replace the battery. " * 20_000))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    assert result.end == "success"
    said = [r.get("instruction") for r in result.record.rounds]
    assert said and len(said[0]) == INSTRUCTION_MAX and said[0].startswith("Replace the battery.")
    stated = [q.object.value for q in store.raw.quads_for_pattern(None, DK.instruction.node, None, result.record.graph)]
    assert stated and all(len(x) <= INSTRUCTION_MAX for x in stated)     # (the call's own record keeps the reply)


def test_an_unknown_component_in_a_hypothesis_is_corrected(server, store):
    server.script.then(choose(kind="hypothesise", components=["flux_capacitor"]),
                       choose(kind="hypothesise", components=["bat"]))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    assert result.end == "success" and result.rounds == 1
    assert [c.rejected for c in recorded_calls(store, result.trajectory)] == ["unknown-part", ""]
    assert "flux_capacitor" in server.script.calls[1]["messages"][-1]["content"]


def test_the_cost_limit_stops_a_session_before_it_overspends(server, store):
    server.script.then(*[Reply(tool={"name": "choose", "arguments": {"kind": "action", "action": "measure_voltage",
                                                                       "targets": ["bat"], "instruction": "x"}},
                               usage=(5000, 100))] * 5)
    cfg = config(server, pricing={"stub-model": [1000.0, 1000.0]}, cost_limit=7.0)
    result = run_session(FLAT, "llm", config=cfg, store=store)
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.COST_LIMIT
    assert len(server.script.calls) == 1                      # the second call was never sent
    assert result.llm.money == pytest.approx(5.1)
    assert store.select("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        SELECT ?m WHERE { ?s a dk:DiagnosticSession ; dk:moneyCost ?m }""")[0]["m"] == pytest.approx(5.1)


def test_a_call_given_up_at_its_timeout_is_counted_as_billed(server, store):
    """The endpoint goes on with a request the client gave up on, and bills it; before, a timed-out call cost
    nothing, so a session whose every call timed out was never stopped by its cost limit (and was free)."""
    server.script.then(*[Reply(content="{}", delay=0.6)] * 5)
    cfg = config(server, pricing={"stub-model": [1000.0, 1000.0]}, cost_limit=7.0, max_tokens=400, retries=4)
    result = run_session(FLAT, "llm", config=cfg, store=store)
    calls = recorded_calls(store, result.trajectory)
    # each counted as its largest, the estimated prompt and 400 completion tokens (about 2.7 here): two fit in 7
    assert [c.cause for c in calls] == [FailureCause.TIMEOUT] * 2 + [FailureCause.COST_LIMIT]
    assert all(c.completion_tokens == 400 and c.prompt_tokens > 0 and c.money > 0.4 for c in calls[:2])
    assert result.end == "llm_truncation" and result.llm_cause is FailureCause.COST_LIMIT
    assert len(server.script.calls) == 2 and result.llm.money == pytest.approx(sum(c.money for c in calls))


def test_a_refused_structured_mode_falls_back(server, store):
    server.script.refuse = {"tools"}
    server.script.then(choose(kind="hypothesise", components=["bat"]))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    assert result.end == "success"
    assert "tools" in server.script.calls[0] and server.script.calls[1]["response_format"]["type"] == "json_schema"
    again = replay_session(store, result.trajectory)
    assert again.end == "success" and rounds_of(again) == rounds_of(result)


def test_the_llm_service_agent_maps_instructions_and_says_what_it_found(store):
    with LLMServer() as server:
        server.script.then(
            choose(kind="action", action="measure_voltage", targets=["bat"],
                   instruction="Put the meter on the battery's terminals."),
            Reply.call("perform", action="measure_voltage", targets=["battery"]),   # not an identifier: corrected
            Reply.call("perform", action="measure_voltage", targets=["bat"]),
            Reply.call("report", text="The battery gives almost nothing."),
            choose(kind="hypothesise", components=["bat"], instruction="Replace the battery."),
            Reply.call("report", text="The new battery fixed it."))
        result = run_session(FLAT, "llm", config=config(server), store=store, service="llm")
        assert not server.script.replies
        assert "Put the meter on the battery's terminals." in server.script.calls[1]["messages"][1]["content"]
    assert result.end == "success"
    first = result.record.rounds[0]
    assert first["message"] == "The battery gives almost nothing." and first["executed"][0]["action"] == "measure_voltage"
    calls = recorded_calls(store, result.trajectory)
    assert [(c.role, c.purpose, c.rejected) for c in calls] == [
        ("assistant", "suggest", ""), ("service", "service-map", "unknown-part"), ("service", "service-map", ""),
        ("service", "service-verbalise", ""), ("assistant", "suggest", ""), ("service", "service-verbalise", "")]
    mapped = store.select("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        SELECT ?pos WHERE { ?r dk:mappedBy ?c . ?c dk:position ?pos }""")
    assert mapped == [{"pos": 3}]
    again = replay_session(store, result.trajectory)
    assert rounds_of(again) == rounds_of(result)


def test_replay_says_when_the_record_does_not_fit(server, store):
    server.script.then(choose(kind="hypothesise", components=["bat"]))
    result = run_session(FLAT, "llm", config=config(server), store=store)
    store.update("""PREFIX dk: <https://w3id.org/diagkg/ontology#>
        DELETE { GRAPH ?g { ?c dk:messagesHash ?h } } INSERT { GRAPH ?g { ?c dk:messagesHash "0000" } }
        WHERE { GRAPH ?g { ?c a dk:LLMCall ; dk:messagesHash ?h } }""")
    with pytest.raises(ReplayMismatch, match="differs from the recorded one"):
        replay_session(store, result.trajectory)


def test_the_record_is_valid_for_the_shapes(server, store):
    server.script.then(choose(kind="action", action="measure_voltage", targets=["bat"]), Reply(status=500),
                       choose(kind="hypothesise", components=["bat"]))
    result = run_session(FLAT, "llm", config=config(server), store=store, record=False)
    quads = trajectory.to_quads(result.record, {})
    trajectory.validate(quads, "llm session")       # raises on a violation
    broken = [q for q in quads if not (q.predicate == DK.model.node)]
    with pytest.raises(Exception, match="SHACL"):
        trajectory.validate(broken, "llm session without models")


def test_run_and_replay_on_the_command_line(tmp_path, torch_quads, capsys):
    from diagkg.cli.main import main as cli_main

    from ..support.cli import run_cli

    db = str(tmp_path / "db")
    disk = KnowledgeStore(db)
    disk.add_quads(torch_quads)          # what `diagkg load torch.ttl t1.ttl t2.ttl` leaves (tested elsewhere)
    disk.close()
    with LLMServer() as server:
        server.script.then(choose(kind="action", action="inspect_connections", targets=["lead"],
                                  instruction="Look at both ends of the bulb lead."),
                           Reply.call("perform", action="inspect_connections", targets=["lead"]),
                           Reply.call("report", text="One end of the bulb lead is off its terminal."),
                           choose(kind="action", action="reconnect_cable", targets=["lead"]),
                           Reply.call("perform", action="reconnect_cable", targets=["lead"]),
                           Reply.call("report", text="The lead is back on; the torch lights."))
        cfg = json.dumps({"base_url": server.base_url, "model": "stub-model", "timeout": 0.5, "backoff": 0.01})
        done = run_cli("--store", db, "run", "--scenario", "TORCH.2", "--assistant", "llm", "--service", "llm",
                       "--config", cfg)
        assert done.returncode == 0, done.stderr
        assert "One end of the bulb lead is off its terminal." in done.stdout
        assert "language model: 6 call(s), 60 prompt + 60 completion tokens" in done.stdout
    first = done.stdout.splitlines()
    trajectory_iri = next(line.split(": ", 1)[1] for line in first if line.startswith("trajectory: "))
    again = run_cli("--store", db, "run", "--replay", trajectory_iri)        # the server is gone
    assert again.returncode == 0, again.stderr
    assert [line for line in again.stdout.splitlines() if not line.startswith("trajectory: ")] == \
        [line for line in first if not line.startswith("trajectory: ")]
    assert cli_main(["--store", db, "run", "--replay", trajectory_iri, "--assistant", "oracle"]) == 2
    assert "--replay takes the scenario" in capsys.readouterr().err


def test_a_schematic_is_attached_for_a_model_that_sees_images(server, store, tmp_path):
    image = tmp_path / "torch.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))       # what a renderer wrote
    server.script.then(choose(kind="hypothesise", components=["bat"]), choose(kind="hypothesise", components=["bat"]))
    seeing = run_session(FLAT, "llm", config=config(server, vision=True, schematic=str(image)), store=store)
    blind = run_session(FLAT, "llm", config=config(server, schematic=str(image)), store=store)
    sent = server.script.calls[0]["messages"][1]["content"]
    assert sent[1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert isinstance(server.script.calls[1]["messages"][1]["content"], str)      # no vision: no image
    recorded = recorded_calls(store, seeing.trajectory)[0].messages[1]["content"][1]
    assert recorded["image_url"]["url"].startswith("sha256:")                    # its hash, not its bytes
    assert replay_session(store, seeing.trajectory).end == "success" and blind.end == "success"
    with pytest.raises(InputError, match="must be PNG, JPEG or WebP"):
        run_session(FLAT, "llm", config=config(server, vision=True, schematic=str(tmp_path / "s.svg")), store=store)
