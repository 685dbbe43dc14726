"""``diagkg serve`` left running: the requests an outside reviewer sent (issue 26), against a
real server on a store of a user's system written in the tests (the torch).

Server-side requests need the token and a host named with ``--allow-remote``; bodies
have a size limit decided from ``Content-Length`` before a byte is read; only the
configured host names are served; writes from another web origin are refused; the
token is checked before a body is parsed; one client cannot hold every query worker.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from ..support.serving import TOKEN, start_server, stop_server, torch_store

AUTH = {"authorization": f"Bearer {TOKEN}"}
BYPASS = ("PREFIX ex: <urn:ex:> SELECT * WHERE { OPTIONAL { ?x ex:a\\# ?y } SERVICE <http://%s/anything> "
          "{ ?s ?p ?o } } LIMIT 1")
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"


class _Remote(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).hits.append(self.path)
        body = b"<html>the remote page</html>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def remote():
    """Another local web server (what the bypass made the server fetch); its host:port."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Remote)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return torch_store(tmp_path_factory.mktemp("serve-security"))


@pytest.fixture(scope="module")
def server(store):
    proc, base = start_server(store, "--query-timeout", "3", "--allow-remote", "127.0.0.1")
    yield base
    stop_server(proc)


def test_the_service_bypass_fetches_nothing_without_the_token(server, remote):
    _Remote.hits = []
    r = httpx.get(server + "/sparql", params={"query": BYPASS % remote}, timeout=30)
    assert r.status_code == 403 and "SERVICE <http://%s/anything>" % remote in r.text and "token" in r.text
    # a name the scanner cannot resolve, glued keywords: refused too
    glued = "PREFIX : <http://%s/> SELECT * WHERE { SERVICE:x {} }" % remote
    assert httpx.get(server + "/sparql", params={"query": glued}, timeout=30).status_code == 403
    assert _Remote.hits == []
    # with the token, a host not allowed is refused, naming the flag; an allowed one is fetched
    other = BYPASS % remote.replace("127.0.0.1", "localhost")
    r = httpx.get(server + "/sparql", params={"query": other}, headers=AUTH, timeout=30)
    assert r.status_code == 403 and "--allow-remote localhost" in r.text
    assert _Remote.hits == []
    r = httpx.get(server + "/sparql", params={"query": BYPASS % remote}, headers=AUTH, timeout=30)
    assert r.status_code == 502 and len(_Remote.hits) == 1 and _Remote.hits[0].startswith("/anything"), (r.text, _Remote.hits)


def test_load_needs_the_token_and_an_allowed_host(server, remote):
    _Remote.hits = []
    load = "LOAD <http://%s/data.ttl> INTO GRAPH <urn:x:loaded>" % remote.replace("127.0.0.1", "localhost")
    r = httpx.post(server + "/sparql", content=load, headers={"content-type": "application/sparql-update"})
    assert r.status_code == 403
    r = httpx.post(server + "/sparql", content=load, headers={"content-type": "application/sparql-update", **AUTH})
    assert r.status_code == 403 and "--allow-remote localhost" in r.text
    r = httpx.post(server + "/sparql", data={"update": "LOAD <file:///etc/hostname>"}, headers=AUTH)
    assert r.status_code == 403
    assert _Remote.hits == []


def test_a_crafted_body_is_answered_and_the_page_meanwhile(server):
    crafted = 'SELECT * WHERE { ?s ?p "' + '\\"' * 20_000 + " SERVICE"       # 40 KB; never closes
    answers: dict[str, int] = {}

    def send() -> None:
        answers["crafted"] = httpx.post(server + "/sparql", content=crafted,
                                        headers={"content-type": "application/sparql-query"}, timeout=60).status_code

    thread = threading.Thread(target=send)
    thread.start()
    answers["page"] = httpx.get(server + "/", timeout=60).status_code
    thread.join()
    assert answers == {"crafted": 400, "page": 200}


def _raw_request(base: str, head: str, body: bytes) -> str:
    """Send a request by hand; the status line of the answer (the server may not read the body)."""
    host, port = base.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(head.encode("latin-1") + body)
        return s.recv(4096).decode("latin-1").splitlines()[0]


def test_a_50_MB_body_is_refused_before_it_is_read(server):
    port = server.rsplit(":", 1)[1]
    head = (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/sparql-query\r\n"
            f"Content-Length: 50000000\r\n\r\n")
    assert _raw_request(server, head, b"SELECT * WHERE { ?s ?p ?o } #" + b"x" * 1000).split()[1] == "413"
    # no Content-Length (chunked): counted as it arrives, refused past the 1 MB limit
    chunk = b"x" * 200_000
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(6))
    head = (f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/sparql-query\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n")
    assert _raw_request(server, head, b"4\r\nASK \r\n" + chunks).split()[1] == "413"
    # the Turtle upload has its own limit (4 MB); the JSON API a small one
    r = httpx.post(server + "/api/scenarios/validate", content=b"# " + b"x" * 16_000_000, timeout=60)
    assert r.status_code == 413 and "4,000,000 bytes" in r.text
    r = httpx.post(server + "/api/sessions", content=b"{" + b" " * 100_000 + b"}", headers=AUTH)
    assert r.status_code == 413


def test_bad_encodings_are_400(server):
    r = httpx.post(server + "/sparql", content=b"SELECT * WHERE { ?s ?p \xff }",
                   headers={"content-type": "application/sparql-query"})
    assert r.status_code == 400 and "not UTF-8" in r.text
    r = httpx.post(server + "/sparql", content=b"query=%FF", headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400
    r = httpx.post(server + "/api/scenarios/validate", content=b"@prefix : <urn:x#> .\n:a :b \"\xff\" .\n")
    assert r.status_code == 400 and "not UTF-8" in r.text


def test_the_token_is_checked_before_a_body_is_parsed(server):
    r = httpx.post(server + "/api/sessions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 403
    r = httpx.post(server + "/api/sessions/nope/step", content=b"[", headers={"content-type": "application/json"})
    assert r.status_code == 403
    r = httpx.post(server + "/sparql", content=b"\xff\xfe", headers={"content-type": "application/sparql-update"})
    assert r.status_code == 403
    r = httpx.post(server + "/api/sessions", content=b"{not json", headers={"content-type": "application/json", **AUTH})
    assert r.status_code in (400, 422)


def test_only_the_configured_host_names_are_served(server, store):
    port = server.rsplit(":", 1)[1]
    for host, code in (("evil.example", 421), (f"evil.example:{port}", 421), (f"localhost:{port}", 200),
                       (f"127.0.0.1:{port}", 200), (f"[::1]:{port}", 200), ("LOCALHOST", 200)):
        r = httpx.get(server + "/api/systems", headers={"host": host})
        assert r.status_code == code, host
    assert "--allowed-host" in httpx.get(server + "/", headers={"host": "evil.example"}).text
    proc, base = start_server(store, "--allowed-host", "diag.example")
    try:
        assert httpx.get(base + "/api/systems", headers={"host": "diag.example:8443"}).status_code == 200
        assert httpx.get(base + "/api/systems", headers={"host": "evil.example"}).status_code == 421
    finally:
        stop_server(proc)


def test_writes_from_another_origin_are_refused(server):
    port = server.rsplit(":", 1)[1]
    form = {"update": "INSERT DATA { GRAPH <urn:x:origin> { <urn:a> <urn:b> <urn:c> } }"}
    r = httpx.post(server + "/sparql", data=form, headers={"origin": "https://evil.example", **AUTH})
    assert r.status_code == 403 and "evil.example" in r.text
    r = httpx.post(server + "/sparql", data=form, headers={"origin": "null", **AUTH})
    assert r.status_code == 403
    r = httpx.post(server + "/sparql", data=form, headers={"origin": f"http://127.0.0.1:{port}", **AUTH})
    assert r.status_code == 204, r.text          # the page itself
    r = httpx.post(server + "/sparql", data={"update": "DROP GRAPH <urn:x:origin>"}, headers=AUTH)
    assert r.status_code == 204                  # no Origin: not a browser


def test_one_client_cannot_hold_every_query_worker(server):
    """Two slow queries from one address take one worker in turn; another address's quick
    query and the JSON API are answered while they run."""
    done: list[tuple[str, int]] = []

    def slow() -> None:
        done.append(("slow", httpx.get(server + "/sparql", params={"query": SLOW}, timeout=60).status_code))

    threads = [threading.Thread(target=slow) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.5)          # both sent; the first one runs, the second waits for this client's turn
    other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=60)
    quick = other.get(server + "/sparql", params={"query": "ASK { ?s a <https://w3id.org/diagkg/ontology#Bulb> }"})
    done.append(("quick", quick.status_code))
    done.append(("api", httpx.get(server + "/api/systems", timeout=60).status_code))
    other.close()
    for t in threads:
        t.join()
    assert done[:2] == [("quick", 200), ("api", 200)]
    assert sorted(done[2:]) == [("slow", 503), ("slow", 503)]       # stopped at the limit, or refused waiting


def test_the_token_from_a_file_and_a_warning_for_the_command_line(store, tmp_path):
    secret = tmp_path / "token"
    secret.write_text("from-a-file\n")
    proc, base = start_server(store, "--token-file", str(secret), token=None)
    try:
        update = {"update": "DROP SILENT GRAPH <urn:x:none>"}
        assert httpx.post(base + "/sparql", data=update, headers=AUTH).status_code == 403
        assert httpx.post(base + "/sparql", data=update, headers={"authorization": "Bearer from-a-file"}).status_code == 204
    finally:
        stop_server(proc)
    proc, base = start_server(store, "--token", "on-the-command-line", token=None)
    try:
        log = next(store.parent.glob(f"serve-{base.rsplit(':', 1)[1]}.log")).read_text()
        assert "warning: a token given with --token is visible" in log
    finally:
        stop_server(proc)


def test_a_cross_product_update_is_stopped_and_a_run_meanwhile_stores_its_trajectory(server, store):
    """The update is worked out in a worker that is killed at --query-timeout (5 s here), with
    nothing written; the store's write lock is not held meanwhile, so a ``run --wait 5``
    started while it runs stores its trajectory."""
    from ..support.cli import run_cli

    graphs_before = httpx.get(server + "/api/graphs", timeout=30).json()
    cross = ("INSERT { GRAPH <urn:x:cross> { ?a ?b ?f } } WHERE { GRAPH ?w { ?a ?b ?c } GRAPH ?x { ?d ?e ?f } "
             "GRAPH ?y { ?g ?h ?i } GRAPH ?z { ?j ?k ?l } }")
    answer: dict[str, httpx.Response] = {}
    thread = threading.Thread(target=lambda: answer.setdefault("update", httpx.post(
        server + "/sparql", data={"update": cross}, headers=AUTH, timeout=120)))
    thread.start()
    time.sleep(1.0)              # the update is being worked out
    run = run_cli("--store", str(store), "--wait", "5", "run", "--scenario", "TORCH.1", "--assistant", "oracle",
                  "--format", "json")
    thread.join()
    assert run.returncode == 0, run.stderr
    r = answer["update"]
    assert r.status_code == 503 and "update stopped" in r.text, r.text
    ask = httpx.get(server + "/sparql", params={"query": "ASK { GRAPH <urn:x:cross> { ?s ?p ?o } }"}, timeout=30)
    assert ask.json()["boolean"] is False
    graphs_after = {g["graph"]: g["triples"] for g in httpx.get(server + "/api/graphs", timeout=30).json()}
    before = {g["graph"]: g["triples"] for g in graphs_before}
    new = set(graphs_after) - set(before)
    assert new and all("/trajectory/" in g for g in new)            # the run's trajectory, nothing else
    assert {g: n for g, n in graphs_after.items() if g in before} == before


def test_load_of_something_not_rdf_is_400(server, remote):
    _Remote.hits = []
    load = "LOAD <http://%s/page.html> INTO GRAPH <urn:x:loaded>" % remote
    r = httpx.post(server + "/sparql", content=load, headers={"content-type": "application/sparql-update", **AUTH},
                   timeout=60)
    assert r.status_code == 400, r.text
    assert _Remote.hits == ["/page.html"]
