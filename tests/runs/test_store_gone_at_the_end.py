"""A session played to its end is never lost when its store goes away before it is stored (outsider fx2).

A real ``oxigraph serve`` holds a user's system (bike lights, written here) and a scenario; the server is
stopped between a session's last move and its storing. The session's hypothesis ledger reads the store,
so this raised "cannot reach the store" and the session was gone: an MCP client's (the SDK's own client,
over stdio) got a tool error and nothing was kept; ``diagkg run`` exited 3 with nothing kept. Each is now
kept in a file (without its ledger, which said so), and ``diagkg load`` stores it once the server is back.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from ..kg.test_remote_store import OXIGRAPH, start_server
from ..support.cli import DIAGKG, run_cli

pytestmark = pytest.mark.skipif(OXIGRAPH is None, reason="the oxigraph server is not installed (pip install oxigraph)")

BIKE = """\
@prefix :        <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:bike a dk:System ; dk:systemKey "bike" ; dcterms:identifier "bike" ; rdfs:label "Bike lights" ;
    dk:groundReference :cell.neg ;
    dcterms:description "A 9 V cell feeds, through a switch, a front bulb by a front lead; a ground lead returns it." .
:frame a dk:Module ; dcterms:identifier "frame" ; rdfs:label "Frame" ; dk:partOf :bike .
:cell a dk:VoltageSource ; dcterms:identifier "cell" ; rdfs:label "9 V cell" ; dk:partOf :frame ; dk:voltage 9 ;
    dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :cell.pos, :cell.neg .
:cell.pos a dk:Port ; dk:portName "pos" .
:cell.neg a dk:Port ; dk:portName "neg" .
:sw a dk:Switch ; dcterms:identifier "sw" ; rdfs:label "Handlebar switch" ; dk:partOf :frame ; dk:normallyClosed true ;
    dk:affords dk:Togglable, dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ; dk:hasPort :sw.p, :sw.n .
:sw.p a dk:Port ; dk:portName "p" .
:sw.n a dk:Port ; dk:portName "n" .
:flead a dk:Cable ; dcterms:identifier "flead" ; rdfs:label "Front lead" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :flead.p, :flead.n .
:flead.p a dk:Port ; dk:portName "p" .
:flead.n a dk:Port ; dk:portName "n" .
:front a dk:Bulb ; dcterms:identifier "front" ; rdfs:label "Front bulb" ; dk:partOf :frame ; dk:resistance 45 ;
    dk:powerThreshold 0.2 ; dk:affords dk:Observable, dk:Reachable, dk:Measurable, dk:Replaceable ;
    dk:hasPort :front.p, :front.n .
:front.p a dk:Port ; dk:portName "p" .
:front.n a dk:Port ; dk:portName "n" .
:gnd a dk:Cable ; dcterms:identifier "gnd" ; rdfs:label "Ground lead" ; dk:partOf :frame ;
    dk:affords dk:Observable, dk:Reachable, dk:Detachable, dk:Measurable, dk:Replaceable ; dk:hasPort :gnd.p, :gnd.n .
:gnd.p a dk:Port ; dk:portName "p" .
:gnd.n a dk:Port ; dk:portName "n" .
:cell.pos dk:connectedTo :sw.p .
:sw.n dk:connectedTo :flead.p .
:flead.n dk:connectedTo :front.p .
:front.n dk:connectedTo :gnd.p .
:gnd.n dk:connectedTo :cell.neg .
"""

LEAD_OFF = """\
@prefix :        <https://example.org/bike-scenarios/> .
@prefix sys:     <https://example.org/bike/> .
@prefix dk:      <https://w3id.org/diagkg/ontology#> .
@prefix rdfs:    <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dcterms: <http://purl.org/dc/terms/> .

:BIKE.1 a dk:Scenario ; dk:scenarioNumber 9701 ; dcterms:identifier "BIKE.1" ; rdfs:label "Front lead off" ;
    dk:onSystem sys:bike ; dk:hasCategory dk:Simple ;
    dk:injects [ a dk:Fault ; dk:faultMode dk:DetachedEnd ; dk:faultTarget sys:flead.n ] ;
    dk:initialObservations "The front bulb stays dark when switched on." ;
    dk:faultyComponent sys:flead ;
    dk:idealRepair [ a dk:RepairPlan ;
        dk:step [ a dk:DiagnosticAction ; dk:position 1 ; dk:actionType dk:ReconnectCable ; dk:target sys:flead ] ] ;
    dk:actionBudget 10 .
"""

# an assistant program that stops the store's server once it has looked, then names the lead
STOPPER = textwrap.dedent('''
    import json, os, signal, socket, sys, time
    pid, port = int(sys.argv[1]), int(sys.argv[2])
    def receive():
        return json.loads(sys.stdin.readline())
    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()
    receive()
    send({"kind": "act", "action": "observe_component", "targets": ["front"]})
    receive()
    os.kill(pid, signal.SIGTERM)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            time.sleep(0.05)
        except OSError:
            break
    send({"kind": "hypothesis", "parts": ["flead"]})
    receive()
''')

KEPT = re.compile(r"kept in (\S+\.nq)")


def _ended(store: str) -> list[tuple[str, str, str]]:
    r = run_cli("--store", store, "query", "trajectory-list", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["results"]["bindings"]
    return sorted((row["assistant"]["value"].split(" ")[0].removesuffix(DIAGKG[0]), row["end"]["value"],
                   row["cost"]["value"]) for row in rows)


def test_a_session_whose_store_goes_away_at_its_end_is_kept_not_lost(tmp_path: Path) -> None:
    (tmp_path / "bike.ttl").write_text(BIKE)
    (tmp_path / "lead.ttl").write_text(LEAD_OFF)
    (tmp_path / "stopper.py").write_text(STOPPER)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc, url = start_server(tmp_path / "db")
    try:
        r = run_cli("--store", url, "load", str(tmp_path / "bike.ttl"), str(tmp_path / "lead.ttl"))
        assert r.returncode == 0, r.stderr

        async def over_mcp() -> str:
            params = StdioServerParameters(command=DIAGKG[0], args=[*DIAGKG[1:], "--store", url, "mcp", "--scenario",
                                                                      "BIKE.1"], env=env)
            async with Client(params, client_info=Implementation(name="rider", version="1")) as client:
                looked = await client.call_tool("perform_action", {"action": "observe_component", "targets": ["front"]})
                assert not looked.is_error, looked.content
                proc.terminate()
                proc.wait(10)
                done = await client.call_tool("state_hypothesis", {"parts": ["flead"]})
                assert done.is_error
                return str(done.content[0].text)           # type: ignore[union-attr]

        said = anyio.run(over_mcp)
        assert "could not be stored" in said, said
        kept = [Path(KEPT.search(said).group(1))]          # type: ignore[union-attr]

        proc, url = start_server(tmp_path / "db")
        port = url.rsplit(":", 1)[1]
        r = run_cli("--store", url, "run", "--scenario", "BIKE.1", "--assistant",
                    f"exec:{DIAGKG[0]} {tmp_path / 'stopper.py'} {proc.pid} {port}", env={"XDG_CACHE_HOME": env["XDG_CACHE_HOME"]})
        assert r.returncode == 3, r.stdout + r.stderr
        assert "ledger could not be worked out" in r.stderr and "Traceback" not in r.stderr
        kept.append(Path(KEPT.search(r.stderr).group(1)))  # type: ignore[union-attr]
        assert all(f.is_file() for f in kept)
        proc.wait(10)

        proc, url = start_server(tmp_path / "db")
        assert _ended(url) == []
        r = run_cli("--store", url, "load", *map(str, kept))
        assert r.returncode == 0, r.stderr
        assert _ended(url) == [("exec:", "success", "20"), ("mcp:rider/1", "success", "20")]
    finally:
        proc.terminate()
        proc.wait(10)
