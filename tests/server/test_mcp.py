"""``diagkg mcp``: the official MCP SDK's own client drives whole diagnostic sessions.

Each test starts a real ``diagkg mcp`` process (standard input/output, or streamable HTTP with the
token) on an on-disk store and talks to it with ``mcp.Client``: a shipped scenario (number 1) and a
scenario on the torch, a system written in the tests (its scenario file given to ``--scenario`` and
loaded by the command), driven to success, to the end of the budget, and left half-way (the client
goes away). The trajectories are read back from the store: the assistant is the client's declared
name and version, never privileged, and a client that left is a surrender with its fault.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import httpx
import pyoxigraph as ox
import pytest
import rdflib
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs.driven import applicable_parts
from diagkg.runs.trajectory import validate
from diagkg.server.mcp import assistant_name

from ..support.cli import DIAGKG
from ..support.paths import ROOT, THREE_CUBES
from ..support.torch import FLAT, TORCH, scenario_text

SHIPPED = "3CC.S.1"
TOKEN = "mcp-s3cret"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """An on-disk store with the shipped three_cubes and its scenario 1, and the torch (no scenario yet:
    its scenario file is given to ``diagkg mcp --scenario FILE``)."""
    folder = tmp_path_factory.mktemp("mcp")
    (folder / "torch.ttl").write_text(TORCH)
    (folder / "flat.ttl").write_text(scenario_text(**FLAT))
    (scenario,) = (ROOT / "scenarios" / "catalog").glob(f"*-{SHIPPED}.ttl")
    store = KnowledgeStore(folder / "store")
    load_files(store, [THREE_CUBES, scenario, folder / "torch.ttl"])
    store.close()
    return {"folder": folder, "store": folder / "store", "flat": folder / "flat.ttl", "shipped": scenario}


def stdio(world: dict[str, Path], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=DIAGKG[0], args=[*DIAGKG[1:], "--store", str(world["store"]),
                                                               "mcp", *args], env=dict(os.environ))


def data(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def trajectories(world: dict[str, Path]) -> dict[str, dict]:
    """The store's trajectories by IRI (read after the server process ended)."""
    store = KnowledgeStore(world["store"], read_only=True)
    try:
        rows = store.select("trajectory-list")
        out = {r["trajectory"]: dict(r) for r in rows}
        for iri, row in out.items():
            session = ox.NamedNode(iri + "#session")
            row["privileged"] = [q.object.value for q in store.raw.quads_for_pattern(session, DK.privileged.node, None, None)]
            row["fault"] = [q.object.value for q in store.raw.quads_for_pattern(session, DK.protocolFault.node, None, None)]
        return out
    finally:
        store.close()


def faulty_of(path: Path) -> list[str]:
    g = rdflib.Graph().parse(path, format="turtle")
    return sorted(str(o).rsplit("/", 1)[-1] for o in g.objects(None, rdflib.URIRef(str(DK.faultyComponent))))


def test_the_tool_names_a_client_and_the_parts_an_action_applies_to():
    assert assistant_name(Implementation(name="my agent", version="2.1")) == "mcp:my agent/2.1"
    assert assistant_name(Implementation(name="x\nstep", version="")) == "mcp:x step"
    assert assistant_name(None) == "mcp:unnamed-client"
    parts = {"bat": "VoltageSource", "sw": "Switch", "case": "enclosure", "lid": "opening"}
    assert applicable_parts("component", frozenset({"Switch"}), parts) == ["sw"]
    assert applicable_parts("component", frozenset(), parts) == ["bat", "sw"]
    assert applicable_parts("enclosure", frozenset(), parts) == ["case"]
    assert applicable_parts("any", frozenset(), parts) == ["bat", "case", "lid", "sw"]


def test_an_sdk_client_diagnoses_shipped_scenario_1(world):
    faulty = faulty_of(world["shipped"])

    async def session() -> dict:
        info = Implementation(name="sdk-script", version="1.4")
        async with Client(stdio(world, "--scenario", "1"), client_info=info) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"briefing", "affordable_actions", "perform_action", "state_hypothesis", "observations"} <= names
            brief = data(await client.call_tool("briefing", {}))
            assert brief["assistant"] == "mcp:sdk-script/1.4" and brief["rounds_left"] == brief["budget"]
            assert set(faulty) <= set(brief["parts"]) and "faulty" not in str(brief).lower()
            actions = {a["id"]: a for a in data(await client.call_tool("affordable_actions", {}))["actions"]}
            target = actions["observe_component"]["applies_to"][0]
            bad = await client.call_tool("perform_action", {"action": "observe_component", "targets": ["no_such_part"]})
            assert bad.is_error and "unknown_part" in bad.content[0].text
            step = data(await client.call_tool("perform_action", {"action": "observe_component", "targets": [target]}))
            assert step["round"] == 1 and step["outcome"]["cost"] == actions["observe_component"]["cost"]
            seen = data(await client.call_tool("observations", {}))
            assert [r["intention"] for r in seen["rounds"]] == [f"observe_component {target}"]
            return data(await client.call_tool("state_hypothesis", {"parts": faulty, "explanation": "from the script"}))

    last = anyio.run(session)
    assert last["end"] == "success" and last["outcome"]["verdict"] == "correct" and last["trajectory"]
    row = trajectories(world)[last["trajectory"]]
    assert (row["assistant"], row["end"], int(row["rounds"]), row["id"]) == ("mcp:sdk-script/1.4", "success", 2, SHIPPED)
    assert row["privileged"] == ["false"] and row["fault"] == []


def test_a_hidden_system_to_timeout_then_to_success_over_the_handshake(world):
    async def sessions() -> tuple[dict, dict]:
        info = Implementation(name="legacy-client", version="0.9")
        params = stdio(world, "--scenario", str(world["flat"]), "--budget", "2")
        async with Client(params, client_info=info, mode="legacy") as client:
            brief = data(await client.call_tool("briefing", {}))
            assert brief["system"] == "torch" and brief["budget"] == 2
            data(await client.call_tool("perform_action", {"action": "measure_voltage", "targets": ["bat"]}))
            wrong = data(await client.call_tool("state_hypothesis", {"parts": ["lead"]}))
            late = await client.call_tool("perform_action", {"action": "measure_voltage", "targets": ["bat"]})
            assert late.is_error and "over" in late.content[0].text
            assert data(await client.call_tool("affordable_actions", {}))["actions"] == []
            for seed in (-1, "2", 1.5, True):       # a seed is a whole number, 0 or more (as `diagkg run --seed`)
                refused = await client.call_tool("new_session", {"seed": seed})
                assert refused.is_error and "seed" in refused.content[0].text
            fresh = data(await client.call_tool("new_session", {}))
            assert fresh["seed"] == 1 and fresh["round"] == 0
            right = data(await client.call_tool("state_hypothesis", {"parts": ["bat"]}))
            return wrong, right

    wrong, right = anyio.run(sessions)
    assert wrong["end"] == "timeout" and wrong["outcome"]["verdict"] == "wrong" and wrong["rounds_left"] == 0
    assert right["end"] == "success"
    rows = trajectories(world)
    assert (rows[wrong["trajectory"]]["end"], rows[wrong["trajectory"]]["id"]) == ("timeout", "TORCH.1")
    assert (rows[right["trajectory"]]["assistant"], int(rows[right["trajectory"]]["seed"])) == ("mcp:legacy-client/0.9", 1)


def test_a_client_that_leaves_is_stored_as_a_surrender(world):
    # the SDK's client closes its server's input, sends SIGTERM 2 s later and SIGKILL 2 s after that: the
    # server stores the session within that time, so the test's shape check of every trajectory (a SHACL run
    # that takes seconds on a loaded machine) is done here, after the server has gone
    params = stdio(world, "--scenario", str(world["flat"]))
    params.env = dict(params.env or {}, DIAGKG_CHECK_TRAJECTORIES="never")

    async def leave() -> None:
        async with Client(params, client_info=Implementation(name="leaver", version="1")) as c:
            data(await c.call_tool("perform_action", {"action": "observe_component", "targets": ["bulb"]}))

    before = set(trajectories(world))
    anyio.run(leave)
    ((iri, new),) = [(iri, r) for iri, r in trajectories(world).items() if iri not in before]
    assert (new["assistant"], new["end"], int(new["rounds"])) == ("mcp:leaver/1", "surrender", 2)
    assert new["fault"] == [str(DK.FaultExited)]
    store = KnowledgeStore(world["store"], read_only=True)
    try:
        quads = list(store.raw.quads_for_pattern(None, None, None, graphs.named("trajectory", iri.rsplit("/", 1)[-1])))
        assert quads
        validate(quads, iri)
    finally:
        store.close()


def test_streamable_http_behind_the_guard_and_the_token(world):
    env = dict(os.environ, DIAGKG_TOKEN=TOKEN)
    # the scenario file, not its id: the store holds TORCH.1 only once a test has loaded it (order-independent)
    proc = subprocess.Popen([*DIAGKG, "--store", str(world["store"]), "mcp", "--scenario",
                             str(world["flat"]), "--http", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line + (proc.stderr.read() if proc.stderr else "")
        url = line.split()[-1]
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        assert httpx.post(url, json=body).status_code == 401
        assert httpx.post(url, json=body, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.post(url, json=body, headers={"Host": "evil.example", "Authorization": f"Bearer {TOKEN}"}).status_code == 421

        async def session() -> dict:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, client_info=Implementation(name="http-agent", version="3")) as client:
                    data(await client.call_tool("perform_action", {"action": "measure_voltage", "targets": ["bat"]}))
                    return data(await client.call_tool("state_hypothesis", {"parts": ["bat"]}))

        last = anyio.run(session)
        assert last["end"] == "success"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)          # waits, and closes its pipes
    row = trajectories(world)[last["trajectory"]]
    assert (row["assistant"], row["end"]) == ("mcp:http-agent/3", "success")


def test_standard_output_carries_only_mcp_messages(world):
    """A client speaking raw JSON-RPC over the pipes (the 2025 handshake): every line the server writes to its
    standard output is a JSON-RPC message; its notes go to standard error."""
    import json

    proc = subprocess.Popen([*DIAGKG, "--store", str(world["store"]), "mcp", "--scenario",
                             str(world["flat"])], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "raw-pipes", "version": "0"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "perform_action", "arguments": {"action": "measure_voltage", "targets": ["bat"]}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "state_hypothesis", "arguments": {"parts": ["bat"]}}}]
    assert proc.stdin is not None and proc.stdout is not None
    replies = []
    for m in messages:                       # one call at a time, as a client awaits each (a second is refused)
        proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()
        if "id" in m:
            replies.append(json.loads(proc.stdout.readline()))
    out, err = proc.communicate(timeout=120)         # closes its input: the server ends
    assert proc.returncode == 0, err
    assert out == ""                                 # nothing more on standard output
    assert [r.get("id") for r in replies] == [1, 2, 3] and all(r["jsonrpc"] == "2.0" for r in replies)
    assert replies[0]["result"]["serverInfo"]["name"] == "diagkg"
    assert replies[2]["result"]["structuredContent"]["end"] == "success", replies
    assert "note: diagkg mcp: scenario 9101" in err and "session mcp:raw-pipes/0: success" in err


def test_a_move_larger_than_an_exec_reply_is_refused_and_plays_no_round(world):
    """Over standard input/output nothing bounded a move: a hypothesis with a 20 MB explanation played its round
    and went into the trajectory whole (an exec: program's reply line stops at 1 MiB, an HTTP request at 64 kB;
    outsider fx2). Such a move is an `oversized` tool error, no round is played, and the session goes on."""
    async def session() -> tuple[str, dict, dict]:
        params = stdio(world, "--scenario", str(world["flat"]), "--replace")
        async with Client(params, client_info=Implementation(name="verbose", version="1")) as client:
            big = await client.call_tool("state_hypothesis", {"parts": ["bat"], "explanation": "why " * 300_000})
            assert big.is_error
            after = data(await client.call_tool("observations", {}))
            right = data(await client.call_tool("state_hypothesis", {"parts": ["bat"], "explanation": "flat"}))
            return str(big.content[0].text), after, right

    said, after, right = anyio.run(session)
    assert "oversized" in said and "no round was played" in said
    assert after["rounds"] == [] and right["round"] == 1 and right["end"] == "success"
    assert trajectories(world)[right["trajectory"]]["end"] == "success"


def test_an_argument_a_tool_does_not_take_is_refused_and_plays_no_round(world):
    """The SDK dropped an argument a tool does not declare without a word: a misspelt `candidate` lost the
    ledger's candidates, an `explanaton` the explanation, and `privileged` passed unremarked, where an exec:
    reply with an unknown field is a schema_violation (outsider fx7). Now it is a tool error naming it."""
    async def session() -> tuple[str, str, dict, dict]:
        params = stdio(world, "--scenario", str(world["flat"]), "--replace")
        async with Client(params, client_info=Implementation(name="typo", version="1")) as client:
            typo = await client.call_tool("state_hypothesis", {"parts": ["bat"], "candidate": [["bat"]]})
            sneaky = await client.call_tool("perform_action", {"action": "observe_component", "targets": ["bat"],
                                                               "privileged": True})
            assert typo.is_error and sneaky.is_error
            after = data(await client.call_tool("observations", {}))
            right = data(await client.call_tool("state_hypothesis", {"parts": ["bat"], "candidates": [["bat"]]}))
            return str(typo.content[0].text), str(sneaky.content[0].text), after, right

    typo, sneaky, after, right = anyio.run(session)
    assert "schema_violation" in typo and "takes no argument 'candidate'" in typo and "no round was played" in typo
    assert "takes no argument 'privileged'" in sneaky
    assert after["rounds"] == [] and right["round"] == 1 and right["end"] == "success"
