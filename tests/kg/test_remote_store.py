"""The remote store: a real ``oxigraph serve`` on 127.0.0.1, used through the store interface.

A user's system and scenarios (the torch of tests/support/torch.py, written in the test) are loaded
into the server, sessions run on it (in Python and with ``diagkg --store URL run``), the
trajectory is queried, and then every shipped query and update runs against the server and
against an embedded store holding the same data, with the same answers.
"""

from __future__ import annotations

import http.server
import json
import pickle
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pyoxigraph as ox
import pytest

from diagkg.errors import QueryError, StoreError
from diagkg.kg import graphs
from diagkg.kg.loading import load_files
from diagkg.kg.queries import bind_values, library
from diagkg.kg.remote import RemoteStore, connect
from diagkg.kg.store import KnowledgeStore
from diagkg.kg.vocab import DK
from diagkg.runs.runner import run_session

from ..support.cli import run_cli
from ..support.torch import FLAT, LOOSE_LEAD, TORCH, scenario_text

OXIGRAPH = shutil.which("oxigraph", path=str(Path(sys.executable).parent)) or shutil.which("oxigraph")
pytestmark = pytest.mark.skipif(OXIGRAPH is None, reason="the oxigraph server is not installed (pip install oxigraph)")

T = "https://example.org/torch/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(location: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    assert OXIGRAPH is not None
    log = location.parent / f"oxigraph-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([OXIGRAPH, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"oxigraph serve exited: {log.read_text(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("oxigraph serve did not start in 20 s")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    proc, url = start_server(tmp_path_factory.mktemp("oxigraph") / "db")
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def loaded(server, tmp_path_factory) -> str:
    """The server holding the torch, its two scenarios and three trajectories."""
    folder = tmp_path_factory.mktemp("torch")
    files = [folder / "torch.ttl", folder / "t1.ttl", folder / "t2.ttl"]
    files[0].write_text(TORCH)
    files[1].write_text(scenario_text(**FLAT))
    files[2].write_text(scenario_text(**LOOSE_LEAD))
    with connect(server) as store:
        assert isinstance(store, RemoteStore)
        load_files(store, files[:1])
    # the scenarios with the command line, validated against the system the server holds
    r = run_cli("--store", server, "load", *map(str, files[1:]))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"store: {server}" in r.stderr
    with connect(server) as store:
        assert run_session("TORCH.1", "oracle", store=store).end in ("success", "success_no_hypothesis")
        assert run_session("TORCH.2", "neuro-symbolic", store=store).end == "success"
    r = run_cli("--store", server, "run", "--scenario", "TORCH.2", "--assistant", "oracle", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["end"] in ("success", "success_no_hypothesis")
    return server


def copy_of(remote: KnowledgeStore) -> KnowledgeStore:
    """An embedded store holding exactly what the server holds."""
    local = KnowledgeStore.memory()
    local.add_quads(ox.parse(remote.dump(), format=ox.RdfFormat.N_QUADS))
    return local


def test_a_user_journey_on_the_server(loaded):
    with connect(loaded) as store:
        found = sorted((r["id"], r["assistant"]) for r in store.select("trajectory-list"))
        assert found == [("TORCH.1", "oracle"), ("TORCH.2", "neuro-symbolic"), ("TORCH.2", "oracle")]
        ns = next(r["trajectory"] for r in store.select("trajectory-list") if r["assistant"] == "neuro-symbolic")
        rounds = store.select("trajectory-rounds", {"trajectory": ox.NamedNode(ns)})   # a bound value, over HTTP
        assert rounds and all(r["trajectory"] == ns for r in rounds)
        assert [r["position"] for r in rounds] == sorted(r["position"] for r in rounds)
        names = dict(store.graphs())
        assert graphs.system("torch").value in names and names[graphs.system("torch").value] > 50
        local = copy_of(store)
        assert set(store.raw.named_graphs()) == set(local.raw.named_graphs())
        # a worker process gets the store as its URL and reads the same server
        again = pickle.loads(pickle.dumps(store))
        assert isinstance(again, RemoteStore) and again.url == store.url and len(again.select("trajectory-list")) == 3
        again.close()
        assert store.version_of(graphs.system("torch")) == local.version_of(graphs.system("torch"))
        assert len(store) == len(local) > 1000
        assert sorted(store.dump().splitlines()) == sorted(local.dump().splitlines())   # no blank nodes in these graphs
        one = [graphs.system("torch")]
        assert sorted(store.dump(one).splitlines()) == sorted(local.dump(one).splitlines())
    # the command line reads the same
    r = run_cli("--store", loaded, "query", "trajectory-list", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["results"]["bindings"]) == 3


# -- every shipped query, remote against embedded ------------------------------------------------

def _values(name: str, kind: str, trajectory: str, query: str = "") -> Any:
    iri = {
        "system": T + "torch", "scenario": "https://example.org/torch-scenarios/TORCH.1", "trajectory": trajectory,
        "node": "https://example.org/torch-scenarios/TORCH.1", "class": str(DK.Scenario),
        "part": T + "bulb", "target": T + "bulb", "other": T + "led", "short": T + "short1",
        "state": "https://example.org/test/state", "stateGraph": "https://example.org/test/state",
        "systemGraph": graphs.system("torch").value, "affordance": str(DK.Measurable),
        "graph": "https://example.org/test/scratch", "entry": "https://example.org/test/entry",
        "subject": T + "bulb", "predicate": "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
        "campaign": "https://w3id.org/diagkg/evaluation/none-such", "ontology": "https://w3id.org/diagkg/ontology",
        "property": str(DK.ratedCurrent), "term": T + "bulb", "object": T + "led",
        "lease": "https://w3id.org/diagkg/evaluation/none-such#lease",
    }
    literal = {"value": 4.7, "covered": True, "closed": False, "probability": 0.5, "hash": "abc", "key": "torch",
               "number": 9101, "id": "TORCH.1", "name": "torch-lite", "assistant": "oracle", "model": "m", "label": "Spare bulb",
               "raw": 'say "hi"\nback\\slash', "response": '{"a": "é \\"q\\""}', "a": "oracle", "b": "random-search",
               "k": 2, "limit": 0.5, "token": "t1", "expected": "t0", "holder": "pid 1 on h", "machine": "h b", "pid": 1,
               "until": ox.Literal("2026-12-07T10:00:00+00:00", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")),
               "format": ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#positiveInteger"))}
    if kind == "list of iri":
        return {"types": [str(DK.Bulb), str(DK.VoltageSource)], "add": [str(DK.Inverted)], "remove": [str(DK.Rotated)],
                "anomalous": [T + "bulb"], "nominal": [T + "led"], "drop": ["https://example.org/test/gone"],
                "create": ["https://example.org/test/created"], "clear": ["https://example.org/test/state"]}[name]
    if kind == "flag":
        return True
    if name == "object" and kind == "term":
        return None                     # an open position of a pattern
    if kind == "list of graph" and query == "store-add-quads":      # the default graph too
        default = [ox.Triple(ox.NamedNode(T + "x"), ox.NamedNode(T + "p"), ox.Literal("default"))]
        return [*_values(name, kind, trajectory), {"name": None, "triples": default}]
    if kind == "list of graph" and name == "remove":         # DELETE DATA takes no blank node
        g = ox.NamedNode("https://example.org/test/loaded")
        return [{"name": g, "triples": [ox.Triple(ox.NamedNode(T + "bulb"), ox.NamedNode(str(DK.voltage)), ox.Literal(6))]}]
    if kind == "list of graph":
        g = ox.NamedNode("https://example.org/test/loaded")
        return [{"name": g, "triples": [ox.Triple(ox.NamedNode(T + "bulb"), ox.NamedNode(str(DK.voltage)), ox.Literal(6)),
                                        ox.Triple(ox.BlankNode(), ox.NamedNode(str(DK.voltage)), ox.Literal("é \"q\""))]}]
    if name in iri:
        return ox.NamedNode(iri[name])
    return literal[name]


def _rows(result: Any) -> Any:
    if isinstance(result, ox.QueryBoolean):
        return bool(result)
    if isinstance(result, ox.QueryTriples):
        return sorted(str(t) for t in result)
    names = [v.value for v in result.variables]
    out = []
    for row in result:
        # the store's clock (NOW(): campaign-lease) differs from call to call: its type is compared
        out.append(tuple("_:b" if isinstance(row[n], ox.BlankNode) else
                         (row[n].datatype.value if n == "now" and row[n] is not None else
                          str(row[n]) if row[n] is not None else None) for n in names))
    return names, sorted(out, key=repr)


def _dataset(store: KnowledgeStore) -> list[str]:
    """The whole dataset, blank nodes renamed, for comparing two stores."""
    def text(t: Any) -> str:
        return "_:b" if isinstance(t, ox.BlankNode) else str(t)

    return sorted(" ".join(map(text, (q.subject, q.predicate, q.object, q.graph_name)))
                  for q in store.raw.quads_for_pattern(None, None, None, None))


def test_every_shipped_query_answers_the_same(loaded):
    lib = library()
    with connect(loaded) as remote:
        local = copy_of(remote)
        trajectory = remote.select("trajectory-list")[0]["trajectory"]
        queries = [q for q in lib.files() if not q.is_update]
        assert len(queries) > 30
        checked = []
        for q in queries:
            values = {p.name: _values(p.name, p.kind, trajectory) for p in q.inputs}
            runs = [({}, values)] if q.is_template else [(values, {})]
            if not q.is_template and any(p.optional for p in q.inputs):
                runs.append(({}, {}))                                  # optional inputs left unbound
            for bindings, template in runs:
                theirs = _rows(remote.query(q, bindings or None, **template))
                ours = _rows(local.query(q, bindings or None, **template))
                assert theirs == ours, q.name
                checked.append(q.name)
        assert set(checked) == {q.name for q in queries}
        # the answers are not all empty: the data is really there
        assert len(remote.select("system-components", {"system": ox.NamedNode(T + "torch")})) >= 6


def test_every_shipped_update_changes_both_stores_alike(loaded, tmp_path):
    # on a server of its own: updates write
    proc, url = start_server(tmp_path / "db")
    try:
        with connect(loaded) as source, connect(url) as remote:
            remote.add_quads(ox.parse(source.dump(), format=ox.RdfFormat.N_QUADS))
            local = copy_of(remote)
            assert _dataset(remote) == _dataset(local)
            trajectory = source.select("trajectory-list")[0]["trajectory"]
            updates = [q for q in library().files() if q.is_update]
            assert len(updates) > 15
            changed = 0
            for q in updates:
                values = {p.name: _values(p.name, p.kind, trajectory, q.name) for p in q.inputs}
                before = _dataset(local)
                remote.update(q, **values)
                local.update(q, **values)
                after = _dataset(local)
                assert _dataset(remote) == after, q.name
                changed += after != before
            assert changed >= len(updates) // 2
    finally:
        proc.terminate()
        proc.wait(10)


# -- the store interface's writes are atomic and the same ----------------------------------------

def test_write_graphs_is_one_transaction(server):
    with connect(server) as store:
        g1, g2 = ox.NamedNode("https://example.org/test/a"), ox.NamedNode("https://example.org/test/b")
        s, p = ox.NamedNode(T + "x"), ox.NamedNode(T + "p")
        store.write_graphs({g1: [ox.Triple(s, p, ox.Literal(1))], g2: [ox.Triple(s, p, ox.Literal(2))]})
        assert store.raw.contains_named_graph(g1) and store.raw.contains_named_graph(g2)
        # one request whose last operation fails on the server (a LOAD from nowhere) leaves
        # everything as it was: the drop and the insert before it are undone
        before = _dataset(store)
        with pytest.raises((QueryError, StoreError)):
            store.raw.update(f"DROP SILENT GRAPH {g1} ; INSERT DATA {{ GRAPH {g1} {{ {s} {p} 'z' }} }} ; "
                             f"LOAD <http://127.0.0.1:{free_port()}/nothing.ttl>")
        assert _dataset(store) == before and len(store.quads(g1)) == 1
        store.replace_graph(g1, [ox.Triple(s, p, ox.Literal(3))])
        assert [q.object.value for q in store.quads(g1)] == ["3"]
        store.remove_graphs([g1, g2])
        assert not store.raw.contains_named_graph(g1)


def test_bound_values_are_escaped_terms():
    q = "PREFIX dk: <https://w3id.org/diagkg/ontology#>\nSELECT ?x WHERE { # a { in a comment\n ?x dk:label \"}\" . }"
    text = bind_values(q, {ox.Variable("x"): ox.Literal('a "b" }\n')})
    assert 'VALUES (?x) { ("a \\"b\\" }\\n") }' in text
    assert text.index("VALUES") > text.index("WHERE {")
    # the result still parses and means the same to the embedded store
    s = ox.Store()
    s.query(text)


# -- errors ------------------------------------------------------------------------------------------

def test_an_unreachable_server_is_a_store_error_and_exit_3():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StoreError, match="cannot reach the store at"):
        connect(url)
    r = run_cli("--store", url, "graphs")
    assert r.returncode == 3
    assert "cannot reach the store" in r.stderr and "Traceback" not in r.stderr


def test_a_query_the_server_refuses_is_a_query_error(server):
    with connect(server) as store:
        with pytest.raises(QueryError, match="refused"):
            store.raw.query("SELECT ?x WHERE { ?x ?y }")
    r = run_cli("--store", server, "query", "SELECT ?x WHERE { ?x ?y }")
    assert r.returncode == 2 and "error:" in r.stderr


def test_a_url_is_not_a_folder():
    with pytest.raises(StoreError, match="is a server"):
        KnowledgeStore("http://127.0.0.1:1")


def test_quad_patterns_answer_as_the_embedded_store(loaded):
    def text(quads: Any) -> list[str]:
        return sorted(" ".join("_:b" if isinstance(t, ox.BlankNode) else str(t)
                               for t in (q.subject, q.predicate, q.object, q.graph_name)) for q in quads)

    with connect(loaded) as remote:
        local = copy_of(remote)
        local.add_quads([ox.Quad(ox.NamedNode(T + "x"), ox.NamedNode(T + "p"), ox.Literal("in the default graph"))])
        remote.add_quads([ox.Quad(ox.NamedNode(T + "x"), ox.NamedNode(T + "p"), ox.Literal("in the default graph"))])
        system = graphs.system("torch")
        bulb, rdf_type = ox.NamedNode(T + "bulb"), ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
        patterns: list[tuple[Any, Any, Any, Any]] = [
            (bulb, None, None, None), (None, rdf_type, ox.NamedNode(str(DK.Bulb)), None), (bulb, None, None, system),
            (None, None, None, ox.DefaultGraph()), (None, None, ox.Literal("Torch bulb"), None), (None, None, None, system),
            (None, None, None, ox.NamedNode("https://example.org/test/none")),
        ]
        for pattern in patterns:
            theirs = text(remote.raw.quads_for_pattern(*pattern))
            assert theirs == text(local.raw.quads_for_pattern(*pattern)), pattern
            assert theirs or pattern[3] == ox.NamedNode("https://example.org/test/none"), pattern
        remote.raw.remove_graph(ox.DefaultGraph())
        assert not list(remote.raw.quads_for_pattern(None, None, None, ox.DefaultGraph()))


class _Failing(http.server.BaseHTTPRequestHandler):
    """A SPARQL endpoint that is down: 500 to every request."""

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *_: Any) -> None:
        pass


def test_a_query_the_server_stops_midway_is_a_query_error(server):
    """Oxigraph streams a result: a SERVICE call that fails after the head went out gets its error message
    written where the bindings should be (HTTP 200). That is the query's failure, said as the server said it,
    for SELECT and CONSTRUCT alike (it was a traceback from whoever iterated the rows, exit 1)."""
    down = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    threading.Thread(target=down.serve_forever, daemon=True).start()
    try:
        remote = f"<http://127.0.0.1:{down.server_address[1]}/sparql>"
        queries = [f"SELECT * WHERE {{ SERVICE {remote} {{ ?s ?p ?o }} }}",
                   f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE {remote} {{ ?s ?p ?o }} }}"]
        with connect(server) as store:
            for text in queries:
                with pytest.raises(QueryError, match="stopped the query while answering it: .*500"):
                    store.query(text)
        for text in queries:
            r = run_cli("--store", server, "query", text)
            assert r.returncode == 2, r.stderr
            assert "stopped the query while answering it" in r.stderr and "Traceback" not in r.stderr
    finally:
        down.shutdown()
        down.server_close()


def test_diagkg_store_may_name_a_server(server, tmp_path):
    """$DIAGKG_STORE is the default of --store PATH|URL, but a URL there was read as a folder: `diagkg load` made
    ./http:/127.0.0.1:PORT in the working folder, loaded into it and said "store: http:/127.0.0.1:PORT", the server
    never written; `diagkg serve` served a new store there, under either spelling (outsider fx2)."""
    import os

    from ..support.cli import DIAGKG

    (tmp_path / "torch.ttl").write_text(TORCH)
    env = {**os.environ, "DIAGKG_STORE": server, "COLUMNS": "200"}

    def diagkg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*DIAGKG, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    r = diagkg("load", "--replace", str(tmp_path / "torch.ttl"))
    assert r.returncode == 0 and f"store: {server}" in r.stderr, r.stderr
    assert graphs.system("torch").value in diagkg("graphs").stdout
    for args in (("serve", "--port", "0"), ("--store", server, "serve", "--port", "0")):
        r = diagkg(*args)
        assert r.returncode == 2 and "is a SPARQL server" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["torch.ttl"]       # no folder named "http:"



def test_a_campaign_on_the_server_stores_what_its_sessions_wrote(tmp_path):
    """A campaign's writer hands a batch of trajectories on as the N-Quads its sessions wrote (the embedded store
    bulk-loads them); a server takes them in one update with the tallies: each graph whole, nothing outside."""
    from diagkg.evaluation import campaign as cp
    from diagkg.evaluation import execution
    from diagkg.evaluation.budget import Spending
    from diagkg.evaluation.sessions import run_task
    from diagkg.evaluation.tally import from_rows
    from diagkg.evaluation.writer import CampaignWriter

    proc, url = start_server(tmp_path / "db")
    try:
        files = [tmp_path / "torch.ttl", tmp_path / "t1.ttl"]
        files[0].write_text(TORCH)
        files[1].write_text(scenario_text(**FLAT))
        with connect(url) as store:
            load_files(store, files)
            campaign = cp.create(store, cp.CampaignConfig(assistants=("oracle",), scenarios=(9101,), runs=3, name="s"))
            tallies, done = from_rows(campaign, []), {}
            writer, spending = CampaignWriter(store, tallies, bulk_from=1), Spending.read(store, campaign, None)
            outcomes = [run_task(store, cp.Task(campaign.iri, "oracle", {}, 9101, seed, 0)) for seed in range(3)]
            for o in outcomes:
                execution.store_outcome(writer, o, done, tallies, spending)
            assert writer.commit() == 3
            for o in outcomes:
                wrote = ox.Store()
                wrote.extend(ox.parse(o.nquads, format=ox.RdfFormat.N_QUADS))
                assert set(store.raw.quads_for_pattern(None, None, None, ox.NamedNode(o.graph))) == set(wrote)
            assert not list(store.raw.quads_for_pattern(None, None, None, ox.DefaultGraph()))
            assert len(store.select("trajectory-list")) == 3
    finally:
        proc.terminate()
        proc.wait(10)
